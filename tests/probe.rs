//! Integration tests of `ghostbench probe`: exact facts (crossing offsets,
//! the kernel's split-lock settings, node layouts, which rows exist), the
//! degraded paths (SIGBUS, no executable memory, no THP), and the JSON
//! shape. Nothing here asserts on a timing.

mod common;

use common::{ghostbench, read_json};
use serde_json::Value;
use std::path::Path;

fn probe<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["probe"] == name)
        .unwrap_or_else(|| panic!("probe {name} missing in {report}"))
}

fn rows(probe: &Value) -> &Vec<Value> {
    probe["rows"].as_array().expect("rows array")
}

/// Run `probe --quick` with extra args (and env), return (report, stdout).
fn run_quick(args: &[&str], faults: Option<&str>) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("probe.json");
    let mut cmd = ghostbench();
    cmd.args(["probe", "--quick", "--quiet", "--color", "never"])
        .args(args)
        .arg("--json")
        .arg(&json);
    if let Some(f) = faults {
        cmd.env("GHOSTBENCH_PROBE_FAULTS", f);
    } else {
        cmd.env_remove("GHOSTBENCH_PROBE_FAULTS");
    }
    let out = cmd.assert().success().get_output().stdout.clone();
    (read_json(&json), String::from_utf8(out).unwrap())
}

fn offsets(rows: &[Value], size: u64) -> Vec<u64> {
    rows.iter()
        .filter(|r| r["size"] == size && r["crosses_line"] == true)
        .map(|r| r["offset"].as_u64().unwrap())
        .collect()
}

#[test]
fn split_lock_crossing_offsets_and_kernel_settings_are_exact() {
    let (report, stdout) = run_quick(&["--only", "split-lock"], None);
    assert_eq!(report["schema"], "ghostbench.probe");
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["probes"].as_array().unwrap().len(), 1);
    let p = probe(&report, "split-lock");
    let rows = rows(p);
    assert_eq!(rows.len(), 128, "offsets 0-63 for 4 and 8 bytes");
    assert_eq!(offsets(rows, 4), vec![61, 62, 63]);
    assert_eq!(offsets(rows, 8), (57..64).collect::<Vec<u64>>());
    assert_eq!(p["crossing_offsets_4"], serde_json::json!([61, 62, 63]));
    assert_eq!(
        p["crossing_offsets_8"],
        serde_json::json!([57, 58, 59, 60, 61, 62, 63])
    );
    assert!(
        stdout.contains("crossing offsets 61–63 (4 B), 57–63 (8 B)"),
        "{stdout}"
    );

    // The mitigation line matches /proc.
    let proc_value = std::fs::read_to_string("/proc/sys/kernel/split_lock_mitigate")
        .ok()
        .map(|t| t.trim().to_string());
    match &proc_value {
        Some(v) => {
            assert!(
                stdout.contains(&format!("\nsplit_lock_mitigate: {v}\n")),
                "{stdout}"
            );
            assert_eq!(p["kernel"]["split_lock_mitigate"], v.as_str());
        }
        None => {
            assert!(stdout.contains("split_lock_mitigate: n/a"), "{stdout}");
            assert!(p["kernel"]["split_lock_mitigate"].is_null());
        }
    }
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let fatal = cmdline.contains("split_lock_detect=fatal");
    if fatal {
        assert_eq!(p["split_lock_ops"], 0);
        return;
    }
    if stdout.contains("split locks not timed") {
        // A busy host stalled the first split lock past the bound (20 s for
        // one was seen here): the checkpoint before it is what is kept.
        eprintln!("split locks stalled on this host: checking the partial result");
        assert_eq!(p["status"], "partial");
        assert!(p["failure"].is_null());
        assert!(rows
            .iter()
            .filter(|r| r["crosses_line"] == true)
            .all(|r| r["ns_per_op"].is_null()));
        return;
    }
    // Split locks are few, and every row was measured.
    let ops = p["split_lock_ops"].as_u64().unwrap();
    assert!((1..=500).contains(&ops), "{ops} split locks");
    assert_eq!(p["status"], "ok");
    assert!(rows.iter().all(|r| r["ns_per_op"].as_f64().is_some()));
    let crossing_ops: u64 = rows
        .iter()
        .filter(|r| r["crosses_line"] == true)
        .map(|r| r["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(crossing_ops + 1, ops, "the calibration lock plus the sweep");
}

#[test]
fn every_probe_reports_its_rows() {
    let (report, stdout) = run_quick(&[], None);
    let names: Vec<&str> = report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["probe"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "split-lock",
            "misaligned",
            "code-align",
            "tlb",
            "alloc",
            "alias"
        ]
    );
    for name in names {
        let p = probe(&report, name);
        assert!(!rows(p).is_empty(), "{name} has no rows: {p}");
        assert_ne!(p["status"], "failed", "{name}: {p}");
        assert!(!p["finding"].as_str().unwrap().is_empty());
        assert!(stdout.contains(&format!("== {name} ==")), "{stdout}");
    }
    assert_eq!(stdout.matches("\nfinding: ").count(), 6, "{stdout}");

    // alias: the multiples of 4 KiB are the aliased rows; the summary is
    // their median over the others', and the finding says which side of
    // 1.10× it fell (no timing is asserted).
    let a = probe(&report, "alias");
    let aliased: Vec<u64> = rows(a)
        .iter()
        .filter(|r| r["aliased"] == true)
        .map(|r| r["distance"].as_u64().unwrap())
        .collect();
    assert_eq!(aliased, [4096, 8192]);
    assert!(rows(a)
        .iter()
        .all(|r| (r["distance"].as_u64().unwrap() % 4096 == 0) == (r["aliased"] == true)));
    let ratio = a["ratio"].as_f64().unwrap();
    let expected = a["aliased_ns"].as_f64().unwrap() / a["unaliased_ns"].as_f64().unwrap();
    assert!((ratio - expected).abs() < 1e-9, "{a}");
    assert_eq!(a["penalty"], ratio >= 1.10, "{a}");
    let finding = a["finding"].as_str().unwrap();
    assert!(
        finding.starts_with(if ratio >= 1.10 {
            "this CPU pays for 4K aliasing"
        } else {
            "this CPU shows no 4K-aliasing penalty"
        }),
        "{finding}"
    );

    // misaligned: 64 line offsets and 7 page-crossing ones, per op.
    let m = rows(probe(&report, "misaligned"));
    assert_eq!(m.len(), 2 * (64 + 7));
    for op in ["load", "store"] {
        let crossing: Vec<u64> = m
            .iter()
            .filter(|r| r["op"] == op && r["crosses_line"] == true && r["crosses_page"] == false)
            .map(|r| r["offset"].as_u64().unwrap())
            .collect();
        assert_eq!(crossing, (57..64).collect::<Vec<u64>>());
        let page: Vec<u64> = m
            .iter()
            .filter(|r| r["op"] == op && r["crosses_page"] == true)
            .map(|r| r["page_offset"].as_u64().unwrap())
            .collect();
        assert_eq!(page, (4089..4096).collect::<Vec<u64>>());
    }

    // code-align: every offset 0-63 once, each with a CI around its median.
    let c = rows(probe(&report, "code-align"));
    let offs: Vec<u64> = c.iter().map(|r| r["offset"].as_u64().unwrap()).collect();
    assert_eq!(offs, (0..64).collect::<Vec<u64>>());
    for r in c {
        let (lo, mid, hi) = (
            r["ci_low"].as_f64().unwrap(),
            r["ns_per_call"].as_f64().unwrap(),
            r["ci_high"].as_f64().unwrap(),
        );
        assert!(lo <= mid && mid <= hi, "{r}");
        // The 14-byte function's loop (bytes 2-12) crosses a line at 52-61.
        let o = r["offset"].as_u64().unwrap();
        assert_eq!(r["loop_crosses_line"], (52..=61).contains(&o), "{r}");
    }

    // tlb: starts at 16 KiB, never beyond 64 MiB with --quick, THP reported.
    let t = probe(&report, "tlb");
    assert_eq!(rows(t)[0]["working_set_bytes"], 16 << 10);
    assert!(rows(t)
        .iter()
        .all(|r| r["working_set_bytes"].as_u64().unwrap() <= 64 << 20));
    assert!(
        stdout.contains("transparent huge pages: enabled"),
        "{stdout}"
    );
}

#[test]
fn alloc_node_layout_matches_the_c_compiler() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("packed_node");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/probe/packed_node.c");
    if !common::require_tool("cc") {
        return;
    }
    let built = std::process::Command::new("cc")
        .arg("-O2")
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .status();
    assert!(
        matches!(built, Ok(s) if s.success()),
        "cc failed on packed_node.c"
    );
    let out = std::process::Command::new(&exe).output().unwrap();
    let fields: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    let (report, _) = run_quick(&["--only", "alloc"], None);
    let rows = rows(probe(&report, "alloc"));
    let packed = rows.iter().find(|r| r["node"] == "packed").unwrap();
    let padded = rows.iter().find(|r| r["node"] == "padded").unwrap();
    assert_eq!(packed["node_bytes"], fields[0]);
    assert_eq!(packed["next_offset"], fields[1]);
    assert_eq!(padded["node_bytes"], fields[2]);
    assert_eq!(packed["next_misaligned"], fields[3]);
    assert_eq!(packed["next_straddles_line"], fields[4]);
    assert_eq!(packed["nodes"], 1 << 20);
    assert_eq!(padded["next_straddles_line"], 0);
    assert_eq!(padded["arena_align"], 64);
}

#[test]
fn missing_features_get_a_clear_line_and_the_other_probes_still_run() {
    let (report, stdout) = run_quick(
        &["--only", "split-lock,code-align,tlb,alloc"],
        Some("sigbus,noexec,nothp"),
    );
    // SIGBUS at the first split lock: rerun without split locks.
    let s = probe(&report, "split-lock");
    assert_eq!(s["status"], "partial");
    assert_eq!(s["split_lock_ops"], 0);
    assert!(stdout.contains("killed the probe with SIGBUS"), "{stdout}");
    let r = rows(s);
    assert_eq!(r.len(), 128);
    assert!(r
        .iter()
        .all(|r| r["ns_per_op"].is_null() == (r["crosses_line"] == true)));
    assert_eq!(offsets(r, 8), (57..64).collect::<Vec<u64>>());

    // No executable memory.
    let c = probe(&report, "code-align");
    assert_eq!(c["status"], "unavailable");
    assert!(rows(c).is_empty());
    assert!(
        stdout.contains("no permission for executable memory"),
        "{stdout}"
    );

    // No THP: only 4 KiB rows.
    let t = probe(&report, "tlb");
    assert!(!rows(t).is_empty());
    assert!(rows(t).iter().all(|r| r["pages"] == "small"));
    assert!(stdout.contains("no transparent huge pages"), "{stdout}");

    // The other probe is untouched.
    assert_eq!(probe(&report, "alloc")["status"], "ok");
}

#[test]
fn a_split_lock_that_stalls_past_the_bound_keeps_the_in_line_costs_and_says_so() {
    // Under a busy host one split lock took 20 s here: the child is killed
    // at its bound, and the parent keeps the checkpoint it printed before
    // the first split lock. Not a failure: the report exits 0.
    let (report, stdout) = run_quick(&["--only", "split-lock"], Some("stall"));
    let s = probe(&report, "split-lock");
    assert_eq!(s["status"], "partial", "{s}");
    assert!(s["failure"].is_null(), "{s}");
    assert!(stdout.contains("split locks not timed"), "{stdout}");
    let r = rows(s);
    assert_eq!(r.len(), 128);
    // No split lock was timed; the in-line cells were (all of them unless
    // the sweep's own half-bound stopped it: that is not asserted).
    assert!(r
        .iter()
        .filter(|r| r["crosses_line"] == true)
        .all(|r| r["ns_per_op"].is_null()));
    assert!(r.iter().any(|r| r["ns_per_op"].as_f64().is_some()), "{s}");
}

#[test]
fn unknown_probe_names_are_usage_errors() {
    ghostbench()
        .args(["probe", "--only", "split-lock,bogus"])
        .assert()
        .code(2);
}

#[test]
fn markdown_and_html_reports_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let (md, html, json) = (
        dir.path().join("probe.md"),
        dir.path().join("probe.html"),
        dir.path().join("probe.json"),
    );
    ghostbench()
        .args([
            "probe",
            "--quick",
            "--quiet",
            "--only",
            "split-lock,alloc",
            "--markdown",
        ])
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let text = std::fs::read_to_string(md).unwrap();
    assert!(text.starts_with("## ghostbench probe"));
    assert!(text.contains("== alloc =="));

    // One sweep plot (split-lock: a point per measured cell, plus two legend
    // markers) and the alloc table.
    let page = std::fs::read_to_string(html).unwrap();
    let report = read_json(&json);
    let measured = rows(probe(&report, "split-lock"))
        .iter()
        .filter(|r| r["ns_per_op"].is_number())
        .count();
    let svgs: Vec<&str> = page.split("<svg").skip(1).collect();
    assert_eq!(svgs.len(), 1, "{page}");
    assert_eq!(svgs[0].matches("<circle").count(), measured + 2);
    assert!(page.contains("<th>next straddles a line</th>"), "{page}");
}

#[test]
fn demo_ends_with_the_quick_probe() {
    let out = ghostbench()
        .args(["demo", "--quiet", "--color", "never"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("ghostbench probe --quick"), "{text}");
    for name in ["split-lock", "misaligned", "code-align", "tlb", "alloc"] {
        assert!(text.contains(&format!("== {name} ==")), "{text}");
    }
}
