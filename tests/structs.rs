//! Integration tests of `ghostbench structs`: agreement with pahole on C and C++
//! fixtures, a hand-checked hazard fixture, identical layouts across DWARF 4/5,
//! compressed sections, split DWARF (.dwo and .dwp) and a Rust binary, and the
//! clear errors for input without DWARF. Fixtures are compiled at test time.

mod common;

use assert_cmd::Command;
use common::{pahole, require_tool, skipped};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/structs");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// The hazard fixture is also the demo's embedded example, so it lives in assets/.
fn hazards_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/hazards.c")
}

/// Run a compiler (or other tool) in `dir`; panics with its stderr on failure.
fn sh(dir: &Path, program: &str, args: &[&str]) {
    let out = process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn report(binary: &Path, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    Command::cargo_bin("ghostbench")
        .unwrap()
        .arg("structs")
        .arg(binary)
        .args(extra)
        .args(["--color", "never", "--json"])
        .arg(&json)
        .assert()
        .success();
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn find<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["structs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| pahole::short(s["name"].as_str().unwrap()) == name)
        .unwrap_or_else(|| panic!("struct {name} missing"))
}

/// (size, [(offset, size)]) of a struct.
fn shape(report: &Value, name: &str) -> (u64, Vec<(u64, u64)>) {
    let s = pahole::from_json(find(report, name));
    (s.size.unwrap(), s.members)
}

fn pahole_text(binary: &Path, classes: Option<&str>) -> String {
    let mut cmd = process::Command::new("pahole");
    if let Some(c) = classes {
        cmd.args(["-C", c]);
    }
    let out = cmd.arg(binary).output().expect("pahole runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn agrees_with_pahole_on_c() {
    if !require_tool("pahole") || !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("layouts");
    sh(
        dir.path(),
        "gcc",
        &[
            "-g",
            "-o",
            bin.to_str().unwrap(),
            fixture("layouts.c").to_str().unwrap(),
        ],
    );
    let ours = report(&bin, &[]);
    let theirs = pahole::parse(&pahole_text(&bin, None));
    let result = pahole::compare(&theirs, ours["structs"].as_array().unwrap());
    for name in [
        "holes",
        "bits",
        "value",
        "with_anon",
        "nested",
        "aligned",
        "big",
    ] {
        assert!(
            theirs.iter().any(|p| p.name == name),
            "pahole printed no {name}"
        );
    }
    assert!(result.differ.is_empty(), "differ: {:#?}", result.differ);
    assert!(result.missing.is_empty(), "missing: {:?}", result.missing);
    assert!(
        result.pahole_errors.is_empty(),
        "{:?}",
        result.pahole_errors
    );
    assert_eq!(result.agree, theirs.len());
}

#[test]
fn agrees_with_pahole_on_cpp_templates_inheritance_bitfields() {
    if !require_tool("pahole") || !require_tool("g++") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("layouts");
    sh(
        dir.path(),
        "g++",
        &[
            "-g",
            "-o",
            bin.to_str().unwrap(),
            fixture("layouts.cpp").to_str().unwrap(),
        ],
    );
    let ours = report(&bin, &[]);
    let classes =
        "box<int>,box<double>,box<char>,base,pod_base,derived,pod_derived,two,flags,aligned";
    let theirs = pahole::parse(&pahole_text(&bin, Some(classes)));
    let result = pahole::compare(&theirs, ours["structs"].as_array().unwrap());
    assert!(result.differ.is_empty(), "differ: {:#?}", result.differ);
    assert!(result.missing.is_empty(), "missing: {:?}", result.missing);
    // Where pahole 1.24 is wrong, it says so itself ("BRAIN FART ALERT"):
    // - derived: the Itanium ABI puts `c` in base's tail padding (offset 12); pahole
    //   prints a 65532-byte hole before it.
    // - pod_derived, two: pahole leaves base-class bytes out of its member sum.
    // Their layouts are checked by hand below instead.
    let mut errors = result.pahole_errors.clone();
    errors.sort();
    for e in &errors {
        assert!(
            ["derived", "pod_derived", "two"].contains(&e.as_str()),
            "unexpected pahole error on {e}"
        );
    }
    assert_eq!(result.agree + errors.len(), theirs.len());
    assert_eq!(
        shape(&ours, "derived"),
        (24, vec![(0, 16), (12, 1), (16, 8)])
    );
    assert_eq!(
        shape(&ours, "pod_derived"),
        (24, vec![(0, 16), (16, 1), (20, 4)])
    );
    assert_eq!(shape(&ours, "two"), (32, vec![(0, 16), (16, 12), (28, 1)]));
    assert_eq!(find(&ours, "derived")["members"][0]["base"], true);
    // Templates keep their arguments; bitfields report storage units.
    assert_eq!(
        shape(&ours, "box<double>"),
        (24, vec![(0, 1), (8, 8), (16, 2)])
    );
    let flags = find(&ours, "flags");
    assert_eq!(flags["members"][1]["bit_offset"], 3);
    assert_eq!(flags["members"][1]["bit_size"], 7);
    assert_eq!(find(&ours, "aligned")["explicit_alignment"], 32);
}

fn hazards_binary(dir: &Path) -> PathBuf {
    let bin = dir.join("hazards");
    sh(
        dir,
        "gcc",
        &[
            "-g",
            "-o",
            bin.to_str().unwrap(),
            hazards_source().to_str().unwrap(),
            "-lpthread",
        ],
    );
    bin
}

fn hazards_of<'a>(report: &'a Value, kind: &str, name: &str) -> Vec<&'a Value> {
    report["hazards"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == kind && h["struct"] == name)
        .collect()
}

#[test]
fn hazard_fixture_reports_exact_indices_and_offsets() {
    if !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = hazards_binary(dir.path());
    let sarif = dir.path().join("h.sarif");
    let r = report(&bin, &["--hazards", "--sarif", sarif.to_str().unwrap()]);

    // slot is packed, 13 bytes; `count` (8 bytes) is at offset 5. table is 64-byte
    // aligned and its slots start at offset 4, so element i's count starts at
    // 4 + 13*i + 5 = 13*i + 9 and crosses a line when (13*i + 9) % 64 > 56:
    //   i=4: 61, i=9: 126 % 64 = 62, i=14: 191 % 64 = 63; the others land at
    //   9, 22, 35, 48, 10, 23, 36, 49, 11, 24, 37, 50, 12.
    let slot = hazards_of(&r, "split-lock-risk", "slot");
    let in_table = slot
        .iter()
        .find(|h| h["container"] == "table")
        .expect("split lock inside table.slots");
    assert_eq!(in_table["severity"], "error");
    assert_eq!(in_table["member"], "count");
    assert_eq!(in_table["offset"], 5);
    assert_eq!(in_table["array"], "slots");
    assert_eq!(in_table["array_offset"], 4);
    assert_eq!(in_table["indices"], serde_json::json!([4, 9, 14]));
    assert!(in_table["message"].as_str().unwrap().contains(
        "slots[4].count crosses a 64-byte line when the parent `table` is 64-byte aligned"
    ));
    // Alone, a packed slot may start anywhere: count crosses for bases 52..=58 (mod 64),
    // where (base + 5) % 64 + 8 > 64.
    let alone = slot
        .iter()
        .find(|h| h["container"].is_null())
        .expect("slot alone");
    assert_eq!(
        alone["base_offsets"],
        serde_json::json!([52, 53, 54, 55, 56, 57, 58])
    );
    // nodes[4] of the packed node: elements at 13*i never cross with 8-byte atomics
    // (none here), but table's own atomics at 61, 126, 191 cross even when aligned.
    let table = hazards_of(&r, "split-lock-risk", "table");
    let mut offsets: Vec<u64> = table
        .iter()
        .filter(|h| h["container"].is_null())
        .map(|h| h["offset"].as_u64().unwrap())
        .collect();
    offsets.sort();
    assert_eq!(offsets, vec![61, 126, 191]);

    // node: packed, `next` (8-byte pointer) at offset 1, `value` (int) at 9.
    let node = hazards_of(&r, "misaligned", "node");
    let next = node
        .iter()
        .find(|h| h["member"] == "next")
        .expect("next misaligned");
    assert_eq!(next["offset"], 1);
    assert_eq!(next["size"], 8);
    assert!(node
        .iter()
        .any(|h| h["member"] == "value" && h["offset"] == 9));

    // counters: hits (0) and misses (8) share line 0 with config (16).
    let fs = hazards_of(&r, "false-sharing", "counters");
    assert_eq!(fs.len(), 1);
    assert_eq!(fs[0]["line_index"], 0);
    assert_eq!(
        fs[0]["members"],
        serde_json::json!(["hits", "misses", "config"])
    );
    // locked: the mutex (0..39) shares line 0 with value (40).
    let lock = hazards_of(&r, "false-sharing", "locked");
    assert_eq!(lock[0]["members"], serde_json::json!(["lock", "value"]));

    // holey: holes of 7 (after a), 3 (after c), 7 (after e), 6 bytes padding, size 48.
    // By decreasing alignment: b, f (16) + d (4) + g (2) + a, c, e (3) = 25 → 32.
    let holey = find(&r, "holey");
    let holes: Vec<u64> = holey["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["hole_after"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(holes, vec![7, 0, 3, 0, 7, 0, 0]);
    assert_eq!(holey["summary"]["padding"], 6);
    let h = hazards_of(&r, "holes", "holey");
    assert_eq!(h[0]["bytes"], 16);
    assert_eq!(
        h[0]["message"],
        "3 holes of 17 bytes in all and 6 bytes of padding; reordering saves 16 bytes (48 → 32)"
    );
    assert!(
        fs[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("1 line shared"),
        "{}",
        fs[0]["message"]
    );

    // Without --hazards, the count under the layouts says whose hazards it counts.
    let out = Command::cargo_bin("ghostbench")
        .unwrap()
        .args(["structs", bin.to_str().unwrap(), "--struct", "holey"])
        .args(["--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("1 hazard in the struct above (0 errors, 0 warnings); --hazards lists them"),
        "{text}"
    );

    // Worst first: errors before warnings before notes.
    let severities: Vec<&str> = r["hazards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["severity"].as_str().unwrap())
        .collect();
    let rank = |s: &str| {
        ["error", "warning", "note"]
            .iter()
            .position(|x| *x == s)
            .unwrap()
    };
    assert!(severities.windows(2).all(|w| rank(w[0]) <= rank(w[1])));

    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), r["hazards"].as_array().unwrap().len());
    assert!(results.iter().any(|x| x["ruleId"] == "split-lock-risk"
        && x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("hazards.c")));
}

#[test]
fn pahole_fails_on_atomic_members_that_we_read() {
    if !require_tool("pahole") || !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = hazards_binary(dir.path());
    let ours = report(&bin, &[]);
    let theirs = pahole::parse(&pahole_text(&bin, None));
    let result = pahole::compare(&theirs, ours["structs"].as_array().unwrap());
    // pahole 1.24 prints "<ERROR(__class__fprintf…): 0 not found!>" for _Atomic members.
    for name in ["slot", "counters"] {
        if theirs.iter().any(|p| p.name == name) {
            assert!(
                result.pahole_errors.contains(&name.to_string()),
                "{name}: {result:?}"
            );
        }
    }
    assert!(result.differ.is_empty(), "differ: {:#?}", result.differ);
    assert_eq!(shape(&ours, "slot"), (13, vec![(0, 1), (1, 4), (5, 8)]));
    assert_eq!(
        shape(&ours, "counters"),
        (24, vec![(0, 8), (8, 8), (16, 8)])
    );
}

#[test]
fn dwarf_versions_compression_split_dwarf_and_rust_agree() {
    if !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = hazards_source();
    let src = src.to_str().unwrap();
    let mut builds: Vec<(String, PathBuf)> = Vec::new();
    for (name, flags) in [
        ("dwarf4", vec!["-gdwarf-4"]),
        ("dwarf5", vec!["-gdwarf-5"]),
        ("zlib", vec!["-g", "-gz=zlib"]),
        ("split5", vec!["-gdwarf-5", "-gsplit-dwarf"]),
        ("split4", vec!["-gdwarf-4", "-gsplit-dwarf"]),
    ] {
        let sub = d.join(name);
        std::fs::create_dir(&sub).unwrap();
        let out = sub.join("bin");
        let mut args = flags.clone();
        args.extend(["-o", out.to_str().unwrap(), src, "-lpthread"]);
        sh(&sub, "gcc", &args);
        builds.push((name.to_string(), out));
    }
    // -gsplit-dwarf really left the types in a .dwo.
    assert!(std::fs::read_dir(d.join("split5")).unwrap().any(|e| e
        .unwrap()
        .path()
        .extension()
        .is_some_and(|x| x == "dwo")));
    if require_tool("objcopy") {
        let out = d.join("zstd");
        let ok = process::Command::new("objcopy")
            .args([
                "--compress-debug-sections=zstd",
                builds[1].1.to_str().unwrap(),
                out.to_str().unwrap(),
            ])
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            builds.push(("zstd".into(), out));
        } else {
            skipped("objcopy built with zstd (--compress-debug-sections=zstd)");
        }
    }
    if require_tool("dwp") {
        // A .dwp package instead of .dwo files (binutils' dwp reads DWARF 4 split units).
        let sub = d.join("split4");
        sh(&sub, "dwp", &["-e", "bin", "-o", "bin.dwp"]);
        let dwp_dir = d.join("dwp");
        std::fs::create_dir(&dwp_dir).unwrap();
        std::fs::copy(sub.join("bin"), dwp_dir.join("bin")).unwrap();
        std::fs::copy(sub.join("bin.dwp"), dwp_dir.join("bin.dwp")).unwrap();
        builds.push(("dwp".into(), dwp_dir.join("bin")));
    }
    let names = ["slot", "table", "node", "counters", "holey", "locked"];
    let reference = report(&builds[0].1, &[]);
    let reference5 = report(&builds[1].1, &[]);
    for (label, bin) in &builds[1..] {
        let r = report(bin, &[]);
        assert!(r["warnings"].is_null(), "{label}: {}", r["warnings"]);
        for n in names {
            assert_eq!(shape(&r, n), shape(&reference, n), "{label}: {n}");
        }
        // GCC emits DW_TAG_atomic_type only for DWARF 5: under -gdwarf-4 a C11
        // `_Atomic` member is a plain integer in the debug info, so the atomic
        // hazards can only be compared between builds of the same DWARF version.
        let same_version = if label.contains('4') || label == "dwp" {
            &reference
        } else {
            &reference5
        };
        assert_eq!(
            r["hazards"].as_array().unwrap().len(),
            same_version["hazards"].as_array().unwrap().len(),
            "{label}"
        );
    }
    // A missing .dwo: what was read is reported, and the exit code says the
    // debug info is incomplete (4), never "no hazards found" with 0.
    let split = &builds.iter().find(|b| b.0 == "split5").unwrap().1;
    for e in std::fs::read_dir(split.parent().unwrap()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "dwo") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let out = Command::cargo_bin("ghostbench")
        .unwrap()
        .arg("structs")
        .arg(split)
        .args(["--color", "never"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".dwo") && stderr.contains("missing"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("not found"));

    if require_tool("rustc") {
        let bin = d.join("rust");
        sh(
            d,
            "rustc",
            &[
                "-g",
                "-o",
                bin.to_str().unwrap(),
                fixture("layouts.rs").to_str().unwrap(),
            ],
        );
        let r = report(&bin, &[]);
        for n in ["holey", "node", "counters"] {
            assert_eq!(shape(&r, n), shape(&reference5, n), "rust: {n}");
        }
        // Rust AtomicI64 members are atomics.
        let fs = r["hazards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| {
                h["kind"] == "false-sharing"
                    && pahole::short(h["struct"].as_str().unwrap()) == "counters"
            })
            .expect("rust counters false sharing");
        assert_eq!(
            fs["members"],
            serde_json::json!(["hits", "misses", "config"])
        );
    }
}

fn fails_with(path: &Path, code: i32, message: &str) {
    let out = Command::cargo_bin("ghostbench")
        .unwrap()
        .arg("structs")
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(message), "{stderr}");
    assert!(!stderr.contains("panicked"));
}

#[test]
fn unreadable_input_gets_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "just text\n").unwrap();
    fails_with(&text, 1, "not an ELF file");
    fails_with(&dir.path().join("missing"), 1, "cannot read");
    if !require_tool("gcc") {
        return;
    }
    let bin = hazards_binary(dir.path());
    let bytes = std::fs::read(&bin).unwrap();
    for cut in [20, 64, 1000, bytes.len() / 2, bytes.len() - 100] {
        let truncated = dir.path().join(format!("cut{cut}"));
        std::fs::write(&truncated, &bytes[..cut]).unwrap();
        fails_with(&truncated, 1, "truncated or corrupt ELF");
    }
    let plain = dir.path().join("plain");
    sh(
        dir.path(),
        "gcc",
        &[
            "-O1",
            "-o",
            plain.to_str().unwrap(),
            hazards_source().to_str().unwrap(),
            "-lpthread",
        ],
    );
    if require_tool("strip") {
        sh(
            dir.path(),
            "strip",
            &["--strip-debug", plain.to_str().unwrap()],
        );
    }
    fails_with(&plain, 4, "no debug info: build with -g");
}

#[test]
fn typedef_names_select_their_record_and_suggest_offers_only_improvements() {
    if !common::require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("typedefs");
    sh(
        dir.path(),
        "gcc",
        &[
            "-g",
            "-o",
            bin.to_str().unwrap(),
            fixture("typedefs.c").to_str().unwrap(),
        ],
    );
    // `stream_t` is a typedef of `union stream_u`.
    let r = report(&bin, &["--struct", "stream_t"]);
    let names: Vec<&str> = r["structs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["stream_u"]);

    // internal_t is 16416 bytes in any order: no suggestion, and the report says so.
    let r = report(&bin, &["--struct", "internal_t|holey", "--suggest"]);
    let suggested: Vec<&str> = r["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["struct"].as_str().unwrap())
        .collect();
    assert_eq!(suggested, ["holey"]);
    assert_eq!(r["suggestions"][0]["new_size"], 16);
    assert_eq!(r["no_reorder"], serde_json::json!(["internal_t"]));
    let out = Command::cargo_bin("ghostbench")
        .unwrap()
        .args([
            "structs",
            "--struct",
            "internal_t",
            "--suggest",
            "--color",
            "never",
        ])
        .arg(&bin)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no reorder suggested for internal_t: none saves bytes or removes a hazard"),
        "{text}"
    );
}

/// The counts by kind and severity: in the text's summary, `--json`'s
/// `hazard_counts` and SARIF's run properties, checked against the hazards the
/// full report lists; `--top N` lists the worst N and still counts them all.
#[test]
fn hazard_summary_counts_what_is_listed_and_top_lists_the_worst() {
    if !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = hazards_binary(dir.path());
    let all = report(&bin, &["--hazards"]);
    let listed = all["hazards"].as_array().unwrap();
    let tally = |kind: Option<&str>, severity: Option<&str>| {
        listed
            .iter()
            .filter(|h| kind.map_or(true, |k| h["kind"] == k))
            .filter(|h| severity.map_or(true, |s| h["severity"] == s))
            .count() as u64
    };
    let counts = &all["hazard_counts"];
    assert_eq!(counts["total"], listed.len() as u64);
    assert_eq!(all["hazards_left_out"], 0);
    for s in ["error", "warning", "note"] {
        assert_eq!(counts[s], tally(None, Some(s)), "{s}");
    }
    let mut structs: Vec<&str> = listed
        .iter()
        .map(|h| h["struct"].as_str().unwrap())
        .collect();
    structs.sort();
    structs.dedup();
    assert_eq!(counts["structs"], structs.len() as u64);
    let kinds = counts["by_kind"].as_array().unwrap();
    assert_eq!(kinds.len(), 5, "every kind has a row");
    for row in kinds {
        let kind = row["kind"].as_str().unwrap();
        assert_eq!(row["total"], tally(Some(kind), None), "{kind}");
        for s in ["error", "warning", "note"] {
            assert_eq!(row[s], tally(Some(kind), Some(s)), "{kind} {s}");
        }
    }
    // The fixture's hazards, by hand (offsets as in the test above):
    // - split-lock-risk, 7 errors: slot's count in table.slots (elements 4, 9,
    //   14); table's own slots[4/9/14].count at 61, 126, 191, alone (3) and in
    //   the array `tables` (3); 1 warning: a packed slot alone.
    // - misaligned, 4 warnings: node.next (1), node.value (9), slot.id (1),
    //   slot.count (5).
    // - false-sharing, 4 notes: table (4 lines of counts), counters, locked,
    //   slot (count beside tag and id).
    // - element-straddle, 2 notes: 13-byte node and slot, in nodes[4] and
    //   table.slots[16]; holes, 1 note: holey.
    let expected = [
        ("split-lock-risk", [7, 1, 0]),
        ("misaligned", [0, 4, 0]),
        ("false-sharing", [0, 0, 4]),
        ("element-straddle", [0, 0, 2]),
        ("holes", [0, 0, 1]),
    ];
    for (row, (kind, [e, w, n])) in kinds.iter().zip(expected) {
        assert_eq!(row["kind"], kind);
        assert_eq!(
            [&row["error"], &row["warning"], &row["note"]],
            [e, w, n].map(|x: u64| serde_json::json!(x)).each_ref(),
            "{kind}"
        );
    }
    assert_eq!(
        [
            &counts["total"],
            &counts["error"],
            &counts["warning"],
            &counts["note"],
            &counts["structs"]
        ],
        [19, 7, 5, 7, 6]
            .map(|x: u64| serde_json::json!(x))
            .each_ref()
    );

    // --top 3: the worst three, the same counts, and how many were left out.
    let sarif = dir.path().join("top.sarif");
    let top = report(
        &bin,
        &[
            "--hazards",
            "--top",
            "3",
            "--sarif",
            sarif.to_str().unwrap(),
        ],
    );
    assert_eq!(top["hazard_counts"], all["hazard_counts"]);
    assert_eq!(top["hazards"].as_array().unwrap()[..], listed[..3]);
    assert_eq!(top["hazards_left_out"], listed.len() as u64 - 3);
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 3);
    assert_eq!(run["properties"]["hazardCounts"], all["hazard_counts"]);
    assert_eq!(run["properties"]["hazardsLeftOut"], top["hazards_left_out"]);

    // The text ends with the summary: the totals line and one row per kind found.
    let out = Command::cargo_bin("ghostbench")
        .unwrap()
        .args(["structs", bin.to_str().unwrap(), "--hazards", "--top", "3"])
        .args(["--color", "never"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let totals = format!(
        "summary: {} in {} ({}, {}, {})",
        plural(listed.len() as u64, "hazard"),
        plural(structs.len() as u64, "struct"),
        plural(tally(None, Some("error")), "error"),
        plural(tally(None, Some("warning")), "warning"),
        plural(tally(None, Some("note")), "note"),
    );
    assert!(text.contains(&totals), "{totals:?} not in:\n{text}");
    let summary = &text[text.find(&totals).unwrap()..];
    let misaligned = summary
        .lines()
        .find(|l| l.starts_with("misaligned"))
        .expect("a misaligned row");
    assert_eq!(
        misaligned.split_whitespace().collect::<Vec<_>>(),
        ["misaligned", "0", "4", "0", "4"]
    );
    assert!(summary.lines().any(|l| l.starts_with("all ")));
    assert!(
        summary.contains(&format!("listed: the worst 3 of {}", listed.len())),
        "{summary}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("error ")).count(),
        top["hazards"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["severity"] == "error")
            .count()
    );
}

/// `--hazards --struct NAME`: every finding of that struct with its evidence in
/// full, below the table and above the summary.
#[test]
fn hazards_of_one_struct_show_their_evidence() {
    if !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = hazards_binary(dir.path());
    let out = Command::cargo_bin("ghostbench")
        .unwrap()
        .args([
            "structs",
            bin.to_str().unwrap(),
            "--hazards",
            "--struct",
            "slot",
        ])
        .args(["--color", "never"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // slot's count (8 bytes at 5) inside table.slots (at 4, 16 elements of 13
    // bytes, table 64-byte aligned): elements 4, 9 and 14 cross (see above).
    for needle in [
        "error split-lock-risk in slot",
        "member    count, 8 bytes at offset 5",
        "array     table.slots[16] at offset 4 of table, which is aligned to 64",
        "crossing  3 of 16 elements when line-aligned: 4, 9, 14",
        // Alone, a packed slot crosses at bases 52..=58 (mod 64).
        "alone     aligned to 1: crosses at 7 of 64 base offsets (mod 64): 52, 53, 54, 55, 56, 57, 58",
    ] {
        assert!(text.contains(needle), "{needle:?} not in:\n{text}");
    }
    let evidence = text.find("1. ").expect("evidence blocks");
    let summary = text.find("summary: ").expect("a summary");
    assert!(evidence < summary, "{text}");
    // Without --struct, the list has no evidence blocks.
    let out = Command::cargo_bin("ghostbench")
        .unwrap()
        .args(["structs", bin.to_str().unwrap(), "--hazards"])
        .args(["--color", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("\n1. "), "{text}");
    assert!(text.contains("summary: "), "{text}");
}
