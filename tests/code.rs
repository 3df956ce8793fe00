//! Integration tests of `ghostbench code` on binaries built at test time from
//! `tests/fixtures/code/`: exact placement, a cross-check with nm, `--diff`,
//! `--hot` with callgrind, and the one-line errors for bad inputs.

mod common;

use common::{fixture, ghostbench, have, require_tool};
use serde_json::Value;
use std::path::Path;
use std::process;

/// Run a build command; panic with its output if it fails.
fn build(program: &str, args: &[&str]) {
    let out = process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `ghostbench code ARGS --json FILE`, which must succeed; returns the JSON.
fn analyze(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    ghostbench()
        .arg("code")
        .args(args)
        .args(["--color", "never", "--json"])
        .arg(&json)
        .assert()
        .success();
    let text = std::fs::read_to_string(&json).expect("JSON written");
    serde_json::from_str(&text).expect("valid JSON")
}

fn function<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("function {name} missing"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// (name, offset from the text base, size, off64, off32, lines, windows,
/// entry near window end, entry near line end, JCC spots) of placement.s.
type Expected = (&'static str, u64, u64, u64, u64, u64, u64, bool, bool, u64);
const EXPECTED: [Expected; 5] = [
    ("f_aligned", 0, 1, 0, 0, 1, 1, false, false, 0),
    ("f_loop", 116, 12, 52, 20, 1, 1, true, true, 1),
    ("f_cross", 156, 18, 28, 28, 1, 2, true, false, 0),
    ("f_fused", 220, 9, 28, 28, 1, 2, true, false, 1),
    ("f_long", 316, 11, 60, 28, 2, 2, true, true, 1),
];

fn check_placement(report: &Value, base: u64) {
    assert_eq!(report["schema"], "ghostbench.code");
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["symbol_source"], "symtab");
    assert_eq!(report["summary"]["functions"], 5);
    for (name, offset, size, off64, off32, lines, windows, near_w, near_l, spots) in EXPECTED {
        let f = function(report, name);
        let got = (
            u(&f["address"]),
            u(&f["size"]),
            u(&f["line_offset"]),
            u(&f["window_offset"]),
            u(&f["lines"]),
            u(&f["windows"]),
            f["entry_near_window_end"].as_bool().unwrap(),
            f["entry_near_line_end"].as_bool().unwrap(),
            u(&f["jcc_spot_count"]),
        );
        let want = (
            base + offset,
            size,
            off64,
            off32,
            lines,
            windows,
            near_w,
            near_l,
            spots,
        );
        assert_eq!(got, want, "{name}");
        assert_eq!(f["section"], ".text");
    }
    // Loops: f_loop's header at +5 (offset 57), body 6 bytes, one window;
    // f_cross's header at +2 (offset 30), body 10 bytes straddling 32.
    let l = &function(report, "f_loop")["loops"];
    assert_eq!(l.as_array().unwrap().len(), 1);
    let l = &l[0];
    assert_eq!(
        (
            u(&l["header"]),
            u(&l["line_offset"]),
            u(&l["window_offset"]),
            u(&l["alignment"]),
            u(&l["body_bytes"]),
            u(&l["windows"]),
            u(&l["extra_windows"]),
            u(&l["back_edges"])
        ),
        (base + 121, 57, 25, 1, 6, 1, 0, 1)
    );
    let l = &function(report, "f_cross")["loops"];
    assert_eq!(l.as_array().unwrap().len(), 1);
    let l = &l[0];
    assert_eq!(
        (
            u(&l["header"]),
            u(&l["line_offset"]),
            u(&l["window_offset"]),
            u(&l["alignment"]),
            u(&l["body_bytes"]),
            u(&l["windows"]),
            u(&l["extra_windows"])
        ),
        (base + 158, 30, 30, 2, 10, 2, 1)
    );
    for name in ["f_aligned", "f_fused", "f_long"] {
        assert!(function(report, name)["loops"]
            .as_array()
            .unwrap()
            .is_empty());
    }
    // Erratum spots (listed with --verbose): kind, start, length, boundary.
    let spot = |name: &str| function(report, name)["jcc_spots"][0].clone();
    let check = |name: &str, kind: &str, at: u64, len: u64, boundary: &str| {
        let sp = spot(name);
        assert_eq!(
            (
                sp["kind"].as_str().unwrap(),
                u(&sp["address"]),
                u(&sp["length"]),
                sp["boundary"].as_str().unwrap()
            ),
            (kind, base + at, len, boundary),
            "{name}: {sp}"
        );
    };
    check("f_loop", "ret", 127, 1, "ends");
    check("f_fused", "fused-jcc", 222, 4, "crosses");
    check("f_long", "jmp", 318, 5, "crosses");
    assert_eq!(report["summary"]["jcc_spots"], 3);
    assert_eq!(report["summary"]["straddling_loops"], 1);
}

#[test]
fn exact_placement_of_an_assembled_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let object = dir.path().join("placement.o");
    build(
        "cc",
        &["-c", s(&fixture("code", "placement.s")), "-o", s(&object)],
    );
    let report = analyze(&[s(&object), "--verbose"]);
    assert_eq!(report["kind"], "relocatable object");
    check_placement(&report, 0);

    // Linked, the text base is 64-byte aligned and every offset holds.
    let exe = dir.path().join("placement");
    build(
        "cc",
        &[
            "-nostdlib",
            "-static",
            "-no-pie",
            "-Wl,-e,f_aligned",
            s(&fixture("code", "placement.s")),
            "-o",
            s(&exe),
        ],
    );
    let report = analyze(&[s(&exe), "--verbose"]);
    let base = u(&function(&report, "f_aligned")["address"]);
    assert_eq!(base % 64, 0);
    check_placement(&report, base);

    // The terminal table: worst hazards first, spots listed with --verbose.
    let out = ghostbench()
        .args(["code", s(&exe), "--verbose", "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    let first_row = text
        .lines()
        .skip_while(|l| !l.starts_with("function"))
        .nth(1)
        .unwrap();
    assert!(first_row.starts_with("f_cross "), "{text}");
    assert!(
        text.contains("fused-jcc") && text.contains("crosses 32"),
        "{text}"
    );
    assert!(text.contains("cmp %esi,%edi; jne"), "{text}");

    // --functions filters by name; --line/--window change the arithmetic.
    let report = analyze(&[s(&exe), "--functions", "^f_(loop|long)$", "--window", "16"]);
    assert_eq!(report["summary"]["functions"], 2);
    let f = function(&report, "f_long");
    assert_eq!((u(&f["window_offset"]), u(&f["windows"])), (12, 2));
}

/// Symbols nm prints with a size: name → (address, size).
fn nm_sizes(binary: &Path) -> std::collections::HashMap<String, (u64, u64)> {
    let out = process::Command::new("nm")
        .args(["-S", "--defined-only", "--no-demangle"])
        .arg(binary)
        .output()
        .expect("nm runs");
    let mut map = std::collections::HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let [address, size, kind, name] = fields[..] {
            if matches!(kind, "T" | "t" | "W" | "w" | "i") {
                let parse = |x: &str| u64::from_str_radix(x, 16).unwrap();
                map.insert(name.to_string(), (parse(address), parse(size)));
            }
        }
    }
    map
}

#[test]
fn addresses_and_sizes_equal_nm_for_a_real_binary() {
    if !require_tool("nm") || !require_tool("c++") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("widget");
    build(
        "c++",
        &["-O2", s(&fixture("code", "widget.cpp")), "-o", s(&exe)],
    );
    let report = analyze(&[s(&exe)]);
    let nm = nm_sizes(&exe);
    let functions = report["functions"].as_array().unwrap();
    let mut checked = 0;
    for f in functions {
        let symbol = f["symbol"].as_str().unwrap();
        let (address, size) = (u(&f["address"]), u(&f["size"]));
        if size == 0 {
            continue; // nm -S prints no size for these
        }
        assert_eq!(nm.get(symbol), Some(&(address, size)), "{symbol}");
        checked += 1;
    }
    // And every sized text symbol of nm is one of ours.
    for (name, (address, _)) in &nm {
        assert!(
            functions
                .iter()
                .any(|f| f["symbol"] == name.as_str() && u(&f["address"]) == *address),
            "nm has {name} at {address:#x}, ghostbench does not"
        );
    }
    assert!(checked >= 5, "only {checked} functions checked");
    let names: Vec<&str> = functions
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    for demangled in [
        "(anonymous namespace)::helper(int)",
        "long ns::total<long>(std::vector<long, std::allocator<long> > const&)",
    ] {
        assert!(names.contains(&demangled), "{demangled} not in {names:?}");
    }
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("ns::Widget::area() const")),
        "{names:?}"
    );
}

#[test]
fn diff_lists_functions_moved_by_alignment_flags() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("default"), dir.path().join("aligned"));
    build("cc", &["-O2", s(&fixture("code", "hot.c")), "-o", s(&a)]);
    build(
        "cc",
        &[
            "-O2",
            "-falign-functions=64",
            "-falign-loops=64",
            s(&fixture("code", "hot.c")),
            "-o",
            s(&b),
        ],
    );
    let before = analyze(&[s(&a)]);
    let after = analyze(&[s(&b)]);
    let report = analyze(&[s(&a), "--diff", s(&b)]);
    let diff = &report["diff"];
    let changes = diff["changes"].as_array().unwrap();
    assert!(!changes.is_empty());
    // Exactly the functions whose offset differs are listed as moved, with
    // their old and new offsets.
    let ours = [
        "hot_loop",
        "cold_once",
        "sum_array",
        "small_a",
        "small_b",
        "small_c",
        "count_bits",
        "main",
    ];
    let mut moved = 0;
    for name in ours {
        let (old, new) = (function(&before, name), function(&after, name));
        assert_eq!(
            u(&new["line_offset"]),
            0,
            "{name} is 64-aligned in the aligned build"
        );
        let change = changes.iter().find(|c| c["name"] == name);
        let offset_moved = old["line_offset"] != new["line_offset"];
        if offset_moved {
            moved += 1;
            let c = change.unwrap_or_else(|| panic!("{name} moved but is not listed"));
            assert!(c["reasons"]
                .as_array()
                .unwrap()
                .contains(&"offset-moved".into()));
            assert_eq!(c["old"]["line_offset"], old["line_offset"], "{name}");
            assert_eq!(c["new"]["line_offset"], 0, "{name}");
            assert_eq!(c["old"]["address"], old["address"], "{name}");
            assert_eq!(c["new"]["address"], new["address"], "{name}");
        }
    }
    assert!(
        moved >= 2,
        "default -O2 placed at most one of our functions off a line start"
    );
    assert_eq!(diff["only_in_old"], 0);
    assert_eq!(diff["only_in_new"], 0);

    let out = ghostbench()
        .args(["code", s(&a), "--diff", s(&b), "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("placement changes from"), "{text}");
    assert!(
        text.contains("offset moved") && text.contains(" → 0"),
        "{text}"
    );
}

#[test]
fn hot_ranks_the_callgrind_hot_function_first() {
    if !require_tool("valgrind") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("hot");
    build(
        "cc",
        &["-O2", "-g", s(&fixture("code", "hot.c")), "-o", s(&exe)],
    );
    let profile = dir.path().join("callgrind.out");
    let status = process::Command::new("valgrind")
        .args(["--tool=callgrind", "-q"])
        .arg(format!("--callgrind-out-file={}", s(&profile)))
        .arg(&exe)
        .arg("3000000")
        .stdout(process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let report = analyze(&[s(&exe), "--hot", s(&profile)]);
    let first = &report["functions"][0];
    assert_eq!(first["name"], "hot_loop", "{first}");
    assert!(first["hot_share"].as_f64().unwrap() > 0.5, "{first}");
    assert_eq!(report["profile"]["event"], "Ir");
    assert_eq!(report["profile"]["format"], "callgrind");
    let out = ghostbench()
        .args(["code", s(&exe), "--hot", s(&profile), "--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let first_row = text
        .lines()
        .skip_while(|l| !l.starts_with("hot "))
        .nth(1)
        .unwrap();
    assert!(first_row.contains("hot_loop"), "{text}");
}

/// Run `code` on a bad input: exit 1 and one line of error on stderr.
fn one_line_error(binary: &Path) -> String {
    let out = ghostbench().args(["code", s(binary)]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn bad_inputs_get_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "just some text\n").unwrap();
    let err = one_line_error(&text);
    assert!(
        err.starts_with("error: ") && err.contains("not an ELF file"),
        "{err}"
    );

    let exe = dir.path().join("hot");
    build("cc", &["-O2", s(&fixture("code", "hot.c")), "-o", s(&exe)]);
    let bytes = std::fs::read(&exe).unwrap();
    let truncated = dir.path().join("truncated");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let err = one_line_error(&truncated);
    assert!(err.contains("truncated ELF file"), "{err}");

    // An AArch64 object: a real one from clang when it is installed, else an
    // x86-64 object with e_machine set to EM_AARCH64 (183).
    let object = dir.path().join("hot.o");
    build(
        "cc",
        &["-c", s(&fixture("code", "hot.c")), "-o", s(&object)],
    );
    let arm = dir.path().join("arm.o");
    let clang = ["clang", "clang-19"].into_iter().find(|c| have(c));
    let built = clang.is_some_and(|clang| {
        process::Command::new(clang)
            .args([
                "--target=aarch64-linux-gnu",
                "-ffreestanding",
                "-c",
                "-x",
                "c",
                "-",
            ])
            .arg("-o")
            .arg(&arm)
            .stdin(process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    });
    if !built {
        let mut bytes = std::fs::read(&object).unwrap();
        bytes[18] = 183;
        bytes[19] = 0;
        std::fs::write(&arm, bytes).unwrap();
    }
    let err = one_line_error(&arm);
    assert!(
        err.contains("not x86-64") && err.contains("AArch64"),
        "{err}"
    );

    // A stripped executable exports no functions: nothing to fall back to.
    let stripped = dir.path().join("stripped");
    build("strip", &["-o", s(&stripped), s(&exe)]);
    let err = one_line_error(&stripped);
    assert!(err.contains("no function symbols at all"), "{err}");
}

#[test]
fn a_stripped_library_falls_back_to_dynamic_symbols_and_warns() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libhot.so");
    build(
        "cc",
        &[
            "-O2",
            "-shared",
            "-fPIC",
            s(&fixture("code", "hot.c")),
            "-o",
            s(&lib),
        ],
    );
    let full = analyze(&[s(&lib)]);
    let stripped = dir.path().join("libhot-stripped.so");
    build("strip", &["-o", s(&stripped), s(&lib)]);
    let out = ghostbench()
        .args(["code", s(&stripped), "--color", "never"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("warning: stripped binary (no .symtab): using the")
            && err.contains(".dynsym"),
        "{err}"
    );
    let report = analyze(&[s(&stripped)]);
    assert_eq!(report["symbol_source"], "dynsym");
    let f = function(&report, "hot_loop");
    assert_eq!(f["address"], function(&full, "hot_loop")["address"]);
    assert_eq!(f["size"], function(&full, "hot_loop")["size"]);
    assert!(report["warnings"][0].as_str().unwrap().contains("stripped"));
}
