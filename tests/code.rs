//! Integration tests of `ghostbench code` on binaries built at test time from
//! `tests/fixtures/code/`: exact placement, a cross-check with nm, `--diff`,
//! `--hot` with callgrind, the one-line errors for bad inputs, and the
//! microarchitecture models (`--uarch`: fusion per model on hand-assembled
//! pairs, detection from cpuinfo text, the first line naming the model).

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
    assert_eq!(report["schema_version"], 2);
    assert_eq!(report["uarch"]["models"], serde_json::json!(["generic"]));
    assert_eq!(report["uarch"]["why"]["by"], "requested");
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
    // `generic`: cmp/test fusion, the erratum reported, 32-byte windows.
    let report = analyze(&[s(&object), "--verbose", "--uarch", "generic"]);
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
    let report = analyze(&[s(&exe), "--verbose", "--uarch", "generic"]);
    let base = u(&function(&report, "f_aligned")["address"]);
    assert_eq!(base % 64, 0);
    check_placement(&report, base);

    // The terminal table: worst hazards first, spots listed with --verbose.
    let out = ghostbench()
        .args(["code", s(&exe), "--verbose", "--color", "never"])
        .args(["--uarch", "generic"])
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
    let report = analyze(&[
        s(&exe),
        "--functions",
        "^f_(loop|long)$",
        "--window",
        "16",
        "--uarch",
        "generic",
    ]);
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

/// The models in the order `--uarch` names them in the fusion tests.
const MODELS: [&str; 4] = ["skylake", "icelake", "zen", "generic"];

/// (function, K = offset of the pair, bytes of the pair, spots by skylake,
/// icelake, zen, generic) in fusion.s. The pair runs from K to 34 and crosses
/// 32 while the jcc alone (32-33) does not, so a spot exists exactly when the
/// model fuses the pair:
/// - skylake, icelake: Intel 64 and IA-32 Architectures Optimization Reference
///   Manual §3.4.2.2, table "Macro-Fusible Instructions" (Sandy Bridge and
///   later): add/sub fuse with jz/jnz, inc/dec with jz/jnz, and cmp does not
///   fuse with js/jns (nor jo/jp);
/// - zen: AMD Software Optimization Guide for Family 17h (pub. 55723),
///   "Branch Fusion": only cmp and test fuse, with any jcc;
/// - generic: ghostbench's rule before models (cmp/test with any jcc);
/// - every model: no fusion with a memory operand and an immediate (Agner Fog,
///   "The microarchitecture of Intel, AMD and VIA CPUs", macro-op fusion).
type FusionCase = (&'static str, u64, u64, [u64; 4]);
const FUSION: [FusionCase; 6] = [
    ("f_sub_jne", 29, 5, [1, 1, 0, 0]),
    ("f_add_jz", 30, 4, [1, 1, 0, 0]),
    ("f_inc_jne", 30, 4, [1, 1, 0, 0]),
    ("f_cmp_js", 30, 4, [0, 0, 1, 1]),
    ("f_cmp_jne", 30, 4, [1, 1, 1, 1]),
    ("f_cmp_mem_imm_je", 29, 5, [0, 0, 0, 0]),
];

/// Whether the model has the JCC erratum (Intel's whitepaper 341810: Skylake
/// family only; `generic` reports it everywhere, as before models).
const ERRATUM: [bool; 4] = [true, false, false, true];

fn assemble_fusion(dir: &Path) -> std::path::PathBuf {
    let object = dir.join("fusion.o");
    build(
        "cc",
        &["-c", s(&fixture("code", "fusion.s")), "-o", s(&object)],
    );
    object
}

#[test]
fn each_model_counts_a_pair_at_a_boundary_exactly_as_its_fusion_table_says() {
    let dir = tempfile::tempdir().unwrap();
    let object = assemble_fusion(dir.path());
    // All four models at once: one `uarch` entry per model, in the order named.
    let report = analyze(&[s(&object), "--uarch", &MODELS.join(",")]);
    assert_eq!(report["uarch"]["models"], serde_json::json!(MODELS));
    let mut spots = [0u64; 4];
    let mut hazards = [0u64; 4];
    for (name, _, _, want) in FUSION {
        let f = function(&report, name);
        for (i, model) in MODELS.iter().enumerate() {
            let facts = &f["uarch"][i];
            assert_eq!(facts["uarch"], *model);
            assert_eq!(u(&facts["jcc_spot_count"]), want[i], "{name} on {model}");
            // A spot is a hazard only where the erratum applies; the entry
            // (offset 29 or 30) is near the end of a 32-byte window only.
            let near = u(&report["models"][i]["geometry"]["window"]) == 32;
            let score = if ERRATUM[i] { want[i] } else { 0 } + u64::from(near);
            assert_eq!(u(&facts["hazard_score"]), score, "{name} on {model}");
            spots[i] += want[i];
            hazards[i] += if ERRATUM[i] { want[i] } else { 0 };
        }
    }
    for (i, model) in MODELS.iter().enumerate() {
        let m = &report["models"][i];
        assert_eq!(m["name"], *model);
        assert_eq!(m["jcc_erratum"], ERRATUM[i]);
        // f_far's near jmp (ends on 96) is the one spot beyond the table's.
        assert_eq!(u(&m["summary"]["jcc_spots"]), spots[i] + 1, "{model}");
        let want_hazards = if ERRATUM[i] { hazards[i] + 1 } else { 0 };
        assert_eq!(u(&m["summary"]["jcc_hazards"]), want_hazards, "{model}");
    }

    // One model at a time, with the spots listed: the fused pair as one spot
    // from the first instruction to the end of the jcc, crossing 32.
    for (i, model) in MODELS.iter().enumerate() {
        let report = analyze(&[s(&object), "--uarch", model, "--verbose"]);
        assert_eq!(report["summary"]["functions"], 8);
        for (name, k, bytes, want) in FUSION {
            let f = function(&report, name);
            let base = u(&f["address"]) - k;
            assert_eq!(base % 64, 0, "{name}");
            assert_eq!(u(&f["jcc_spot_count"]), want[i], "{name} on {model}");
            if want[i] == 1 {
                let sp = &f["jcc_spots"][0];
                assert_eq!(
                    (
                        sp["kind"].as_str().unwrap(),
                        u(&sp["address"]),
                        u(&sp["length"]),
                        sp["boundary"].as_str().unwrap()
                    ),
                    ("fused-jcc", base + k, bytes, "crosses"),
                    "{name} on {model}"
                );
            }
        }
    }
}

#[test]
fn far_transfers_are_never_spots_and_size_0_symbols_get_no_entry_flags() {
    let dir = tempfile::tempdir().unwrap();
    let object = assemble_fusion(dir.path());
    for model in MODELS {
        let report = analyze(&[s(&object), "--uarch", model, "--verbose"]);
        // ljmp ending on 32 and lcall ending on 64 are not spots; the near
        // jmp *(%rdi) ending on 96 is.
        let far = function(&report, "f_far");
        let base = u(&far["address"]) - 30;
        assert_eq!(u(&far["jcc_spot_count"]), 1, "{model}");
        let sp = &far["jcc_spots"][0];
        assert_eq!(
            (sp["kind"].as_str().unwrap(), u(&sp["address"])),
            ("jmp", base + 94),
            "{model}"
        );
        // Offset 60: in the last 16 bytes of its line and of any window, but
        // a size-0 symbol has no known bytes, so no flag.
        let zero = function(&report, "f_unsized");
        assert_eq!(u(&zero["size"]), 0);
        assert_eq!(u(&zero["line_offset"]), 60);
        assert_eq!(zero["entry_near_line_end"], false, "{model}");
        assert_eq!(zero["entry_near_window_end"], false, "{model}");
        assert_eq!(zero["uarch"][0]["entry_near_window_end"], false);
    }
}

/// `/proc/cpuinfo` text of one processor.
fn cpuinfo(dir: &Path, vendor: &str, family: u32, model: u32, name: &str) -> std::path::PathBuf {
    let path = dir.join(format!("cpuinfo-{family}-{model}"));
    std::fs::write(
        &path,
        format!("processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: {name}\nstepping\t: 1\n\nprocessor\t: 1\nvendor_id\t: {vendor}\n"),
    )
    .unwrap();
    path
}

/// `ghostbench code ARGS` with `GHOSTBENCH_CPUINFO` set (when given): stdout.
fn text_report(args: &[&str], cpuinfo: Option<&Path>) -> String {
    let mut cmd = ghostbench();
    cmd.arg("code").args(args).args(["--color", "never"]);
    if let Some(path) = cpuinfo {
        cmd.env("GHOSTBENCH_CPUINFO", path);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn the_detected_model_decides_whether_erratum_spots_are_hazards() {
    let dir = tempfile::tempdir().unwrap();
    let object = assemble_fusion(dir.path());
    // An AMD EPYC (family 25 = 19h, Zen 3): zen, said in the first line, and
    // no erratum hazard listed (no jcc column, no spot list, none ranked).
    let epyc = cpuinfo(dir.path(), "AuthenticAMD", 25, 1, "AMD EPYC");
    let text = text_report(&[s(&object), "--verbose"], Some(&epyc));
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("uarch: zen (detected: ")
            && first.contains("AuthenticAMD family 25 (0x19), model 1 (0x1)")
            && first.contains("no JCC erratum, 64-byte windows"),
        "{text}"
    );
    assert!(text.contains("no JCC-erratum hazard"), "{text}");
    assert!(!text.contains("JCC-erratum spots ("), "{text}");
    let header = text.lines().find(|l| l.starts_with("function")).unwrap();
    assert!(!header.contains("jcc"), "{header}");
    // The Markdown report's first line says the same.
    let md = dir.path().join("r.md");
    let mut cmd = ghostbench();
    cmd.args(["code", s(&object), "--markdown", s(&md)])
        .env("GHOSTBENCH_CPUINFO", &epyc)
        .assert()
        .success();
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert_eq!(markdown.lines().next(), Some(first), "{markdown}");
    // And the JSON: why, and no hazards.
    let json = dir.path().join("r.json");
    ghostbench()
        .args(["code", s(&object), "--json", s(&json)])
        .env("GHOSTBENCH_CPUINFO", &epyc)
        .assert()
        .success();
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["uarch"]["models"], serde_json::json!(["zen"]));
    assert_eq!(report["uarch"]["why"]["by"], "detected");
    assert_eq!(report["uarch"]["why"]["family"], 25);
    assert_eq!(report["summary"]["jcc_hazards"], 0);
    assert!(u(&report["summary"]["jcc_spots"]) > 0);

    // The same machine, --uarch skylake: the spots are listed as hazards
    // (the four pairs Intel fuses, and f_far's near jmp).
    let text = text_report(
        &[s(&object), "--verbose", "--uarch", "skylake"],
        Some(&epyc),
    );
    assert!(
        text.starts_with("uarch: skylake (named with --uarch)"),
        "{text}"
    );
    assert!(
        text.contains("5 JCC-erratum spots in 5 functions"),
        "{text}"
    );
    assert!(
        text.contains("JCC-erratum spots (skylake, 32-byte boundary)"),
        "{text}"
    );
    assert!(text.contains("sub $1,%eax; jne"), "{text}");

    // A Cascade Lake Xeon (family 6, model 85) is detected as skylake.
    let xeon = cpuinfo(dir.path(), "GenuineIntel", 6, 85, "Intel Xeon");
    let text = text_report(&[s(&object)], Some(&xeon));
    assert!(text.starts_with("uarch: skylake (detected: "), "{text}");
    assert!(
        text.contains("5 JCC-erratum spots in 5 functions"),
        "{text}"
    );
    // A CPU the tables do not know falls back to generic, and says so.
    let haswell = cpuinfo(dir.path(), "GenuineIntel", 6, 63, "Intel Core i7");
    let text = text_report(&[s(&object)], Some(&haswell));
    assert!(
        text.starts_with("uarch: generic (this machine's CPU, GenuineIntel family 6"),
        "{text}"
    );
}

#[test]
fn on_this_machine_the_first_line_names_the_detected_model_consistently() {
    let dir = tempfile::tempdir().unwrap();
    let object = assemble_fusion(dir.path());
    let json = dir.path().join("r.json");
    let out = ghostbench()
        .args(["code", s(&object), "--color", "never", "--json", s(&json)])
        .env_remove("GHOSTBENCH_CPUINFO")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let model = report["uarch"]["models"][0].as_str().unwrap().to_string();
    assert!(text.starts_with(&format!("uarch: {model} (")), "{text}");
    let why = &report["uarch"]["why"];
    // The vendor, family and model the report used are /proc/cpuinfo's,
    // parsed here independently.
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
        let field = |key: &str| {
            info.lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(key))
                .map(|l| l.split_once(':').unwrap().1.trim().to_string())
        };
        let cpu = if why["by"] == "detected" {
            why
        } else {
            &why["cpu"]
        };
        if let (Some(vendor), Some(family)) = (field("vendor_id"), field("cpu family")) {
            assert_eq!(cpu["vendor"], vendor.as_str(), "{why}");
            assert_eq!(cpu["family"].to_string(), family, "{why}");
        }
    }
    // Whatever was chosen, the erratum is ranked exactly when the model has it.
    let erratum = report["models"][0]["jcc_erratum"].as_bool().unwrap();
    assert_eq!(text.contains("JCC-erratum spots in"), erratum, "{text}");
    assert_eq!(text.contains("no JCC-erratum hazard"), !erratum, "{text}");
}
