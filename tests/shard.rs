//! Integration tests of scale-out plans, shards and their merge
//! (docs/scale-out.md) on C fixtures compiled at test time: the plan's hash,
//! a shard's result file (complete, or failed with its cause), the merge of
//! 4 shards against the same plan run in one process, a merge across two CPU
//! models whose effects differ, and the one-line messages for missing,
//! failed, duplicate and foreign shards, and a plan's shards moving the heap
//! (the `heap` source's shim) exactly as the local run of the same seeds
//! (tests/fixtures/layout/heap_offset.c prints where an allocation lands).
//! The shards run here one after the other; the Slurm version is
//! tests/slurm.rs.
//!
//! The fixture is tests/fixtures/layout/placed.c: real builds and real
//! layouts, but the metric is a modelled cost that depends on where the
//! linker placed its hot function (0–4%) and on its work, exact per binary.
//! Verdicts are then reproducible on a loaded machine, so the merged and the
//! one-process verdicts can be asserted equal (with measured thread CPU time
//! they drifted apart under CI load: merged UNKNOWN, one process SAME). The
//! measured-time version of the same flow is benches/scale_out.sh. Plans are
//! 2 builds × 8 or 16 layouts × 2–5 rounds.
//!
//! The file is over 600 lines because most of its nine scenarios share one set of
//! shard results made once (`layout_only_shards`) and the plan helpers; split
//! across binaries they would each build and run the shards again.

mod common;

use assert_cmd::Command;
use common::{fixture, read_json, require_shuffle, require_tool, timing_lock, PLACED_COST};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn ghostbench(dir: &Path) -> Command {
    let mut command = common::ghostbench();
    command.current_dir(dir);
    command
}

fn builds(b_flags: &str) -> [String; 4] {
    let src = fixture("layout", "placed.c");
    let src = src.display();
    [
        "--build".into(),
        format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
        "--build".into(),
        format!("B=cc -O2 {b_flags} {{cflags}} {{ldflags}} {src} -o {{out}}"),
    ]
}

/// `layout … --plan-only DIR/P` with `extra` options; the plan's path.
fn plan(dir: &Path, build_args: &[String], extra: &[&str]) -> PathBuf {
    let out = ghostbench(dir)
        .arg("layout")
        .args(build_args)
        .args(["--metric", PLACED_COST])
        .args(extra)
        .args(["--plan-only", "P"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let stdout = String::from_utf8_lossy(&out);
    assert!(stdout.contains("plan written to"), "{stdout}");
    assert!(stdout.contains("--shard K/"), "{stdout}");
    assert!(stdout.contains("analyze "), "{stdout}");
    dir.join("P/plan.json")
}

fn run_shard(dir: &Path, plan: &Path, k: usize) -> std::process::Output {
    ghostbench(dir)
        .arg("layout")
        .arg("--plan")
        .arg(plan)
        .args(["--shard", &format!("{k}/4"), "--quiet", "--color", "never"])
        .output()
        .unwrap()
}

/// Merge `results` into `json`; the command's output.
fn analyze(dir: &Path, results: &Path, json: &Path) -> std::process::Output {
    ghostbench(dir)
        .arg("analyze")
        .arg(results)
        .args(["--color", "never", "--json"])
        .arg(json)
        .output()
        .unwrap()
}

fn b_comparison(report: &Value) -> &Value {
    report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["build"] == "B")
        .expect("row B")
        .get("comparison")
        .unwrap()
}

fn verdict(report: &Value) -> String {
    b_comparison(report)["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The layout-only fixture's plan and its 4 shard results, made once per
/// test binary (the tests below work on copies): (temp dir, plan dir).
fn layout_only_shards() -> Option<&'static (tempfile::TempDir, PathBuf)> {
    if !require_tool("cc") {
        return None;
    }
    static MADE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    Some(MADE.get_or_init(|| {
        let _lock = timing_lock();
        let dir = tempfile::tempdir().unwrap();
        // 16 variants in 4 shards: 8 per CPU model when two models are made
        // of them.
        let plan = plan(
            dir.path(),
            &builds("-DCOLD=64"),
            &[
                "--layouts",
                "16",
                "--shards",
                "4",
                "--rounds",
                "5",
                "--estimator",
                "min",
                "--margin",
                "1",
            ],
        );
        for k in 1..=4 {
            let out = run_shard(dir.path(), &plan, k);
            assert!(out.status.success(), "shard {k}: {out:?}");
        }
        let p = dir.path().join("P");
        (dir, p)
    }))
}

/// A copy of the layout-only plan directory in a fresh temp dir.
fn copy_of_shards() -> Option<(tempfile::TempDir, PathBuf)> {
    let (_, source) = layout_only_shards()?;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("P");
    std::fs::create_dir_all(p.join("results")).unwrap();
    std::fs::copy(source.join("plan.json"), p.join("plan.json")).unwrap();
    for k in 1..=4 {
        let name = format!("results/shard-{k}.json");
        std::fs::copy(source.join(&name), p.join(&name)).unwrap();
    }
    Some((dir, p))
}

fn edit(path: &Path, change: impl FnOnce(&mut Value)) {
    let mut doc = read_json(path);
    change(&mut doc);
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
}

#[test]
fn the_plan_hash_round_trips_and_a_changed_plan_is_refused() {
    if !require_tool("cc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(
        dir.path(),
        &builds("-DWORK=130"),
        &["--layouts", "8", "--rounds", "3"],
    );
    let doc = read_json(&plan);
    assert_eq!(doc["schema"], "ghostbench.plan");
    assert_eq!(doc["shards"], 4);
    assert_eq!(doc["variants_per_shard"], 2);
    assert_eq!(doc["variants"].as_array().unwrap().len(), 8);
    assert_eq!(
        doc["waves"],
        serde_json::json!([{"wave": 1, "shards": [1, 4]}])
    );
    assert_eq!(doc["hash"].as_str().unwrap().len(), 64);
    assert!(dir.path().join("P/results").is_dir());
    // Nothing was built.
    assert!(!dir.path().join(".ghostbench/work").exists());
    // Options the plan fixes cannot be given again.
    let out = ghostbench(dir.path())
        .args(["layout", "--plan", "P/plan.json", "--rounds", "9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rounds"));
    // A wrong N.
    let out = run_shard(dir.path(), &plan, 1);
    assert!(out.status.success(), "{out:?}");
    let out = ghostbench(dir.path())
        .args(["layout", "--plan", "P/plan.json", "--shard", "1/5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Tampered: one setting changed, the hash kept.
    edit(&plan, |doc| doc["rounds"] = 1.into());
    for args in [
        &["layout", "--plan", "P/plan.json", "--shard", "2/4"][..],
        &["layout", "--plan", "P/plan.json"][..],
        &["analyze", "P/results"][..],
    ] {
        let out = ghostbench(dir.path()).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("does not match its content"), "{stderr}");
    }
    assert!(!dir.path().join("P/results/shard-2.json").exists());
}

#[test]
fn a_shard_writes_a_complete_result_atomically() {
    let Some((_, p)) = layout_only_shards() else {
        return;
    };
    let plan = read_json(&p.join("plan.json"));
    let result = read_json(&p.join("results/shard-2.json"));
    assert_eq!(result["schema"], "ghostbench.shard");
    assert_eq!(result["plan_hash"], plan["hash"]);
    assert_eq!(
        (result["shard"].clone(), result["shards"].clone()),
        (2.into(), 4.into())
    );
    assert_eq!(result["wave"], 1);
    assert_eq!(result["seeds"], serde_json::json!([4, 5, 6, 7]));
    assert_eq!(result["status"], "ok");
    assert!(result["cause"].is_null());
    for field in [
        "host",
        "cpu_model",
        "kernel",
        "governor",
        "load_average",
        "logical_cpus",
    ] {
        assert!(result["machine"].get(field).is_some(), "machine.{field}");
    }
    assert!(result["machine"]["cpu_model"].is_string());
    assert!(result["started_unix"].as_f64().unwrap() > 1.6e9);
    assert!(result["elapsed_s"].as_f64().unwrap() > 0.0);
    let report = &result["report"];
    assert_eq!(report["schema"], "ghostbench.layout");
    assert_eq!(report["used_seeds"], serde_json::json!([4, 5, 6, 7]));
    // 2 builds × 4 variants × (1 warm-up + 5 rounds), every one recorded.
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * 4 * 6);
    assert!(runs
        .iter()
        .all(|r| (4..8).contains(&r["seed"].as_u64().unwrap())));
    // The variants are the plan's.
    let planned: Vec<&Value> = plan["variants"].as_array().unwrap()[4..8].iter().collect();
    let ran: Vec<&Value> = report["variants"].as_array().unwrap().iter().collect();
    assert_eq!(planned, ran);
    // No temporary file left beside it.
    let leftovers: Vec<String> = std::fs::read_dir(p.join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_failed_shard_writes_status_failed_with_its_cause() {
    // Seeds 2 and 3 must be two builds: that takes the shuffle source.
    if !require_tool("cc") || !require_shuffle() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "placed.c");
    // B's seed 3 fails to build (shard 2 owns seeds 2 and 3).
    let broken = format!(
        "B=case {{dir}} in */3) echo 'broken-variant: no such flag' >&2; exit 1;; esac; cc -O2 {{cflags}} {{ldflags}} {} -o {{out}}",
        src.display()
    );
    let a = format!(
        "A=cc -O2 {{cflags}} {{ldflags}} {} -o {{out}}",
        src.display()
    );
    let plan_path = plan(
        dir.path(),
        &["--build".into(), a.clone(), "--build".into(), broken],
        &["--shell", "--layouts", "8", "--rounds", "1"],
    );
    let out = run_shard(dir.path(), &plan_path, 2);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    let result = read_json(&dir.path().join("P/results/shard-2.json"));
    assert_eq!(result["status"], "failed");
    let cause = result["cause"].as_str().unwrap();
    assert!(cause.contains("build B seed 3 failed"), "{cause}");
    assert!(!cause.contains('\n'));
    // Shard 1's variants build: ok.
    assert!(run_shard(dir.path(), &plan_path, 1).status.success());

    // A run that exits non-zero: B's program aborts.
    let dir = tempfile::tempdir().unwrap();
    let crash = fixture("layout", "crash.c");
    let plan_path = plan(
        dir.path(),
        &[
            "--build".into(),
            a,
            "--build".into(),
            format!(
                "B=cc -O2 {{cflags}} {{ldflags}} {} -o {{out}}",
                crash.display()
            ),
        ],
        &["--layouts", "8", "--rounds", "1"],
    );
    let out = run_shard(dir.path(), &plan_path, 3);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let result = read_json(&dir.path().join("P/results/shard-3.json"));
    assert_eq!(result["status"], "failed");
    let cause = result["cause"].as_str().unwrap();
    assert!(cause.contains("B seed"), "{cause}");
    // The runs it got are kept.
    assert!(result["report"]["runs"].is_array());
}

/// Point 1 run locally: 4 shards one after another, merged, against the same
/// plan run in one process, for a layout-only change and 30% more work.
#[test]
fn four_merged_shards_give_the_one_process_verdict() {
    if !require_tool("cc") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("-DCOLD=64", "3", &["SAME", "ARTIFACT"][..]),
        ("-DWORK=130", "1", &["SLOWER"][..]),
    ];
    for (flags, margin, expected) in cases {
        let sub = dir.path().join(if expected.len() == 1 {
            "real"
        } else {
            "layout"
        });
        std::fs::create_dir_all(&sub).unwrap();
        let plan_path = plan(
            &sub,
            &builds(flags),
            &["--layouts", "8", "--rounds", "5", "--margin", margin],
        );
        for k in 1..=4 {
            let out = run_shard(&sub, &plan_path, k);
            assert!(out.status.success(), "{flags} shard {k}: {out:?}");
        }
        let merged_json = sub.join("merged.json");
        let out = analyze(&sub, &sub.join("P/results"), &merged_json);
        assert!(out.status.success(), "{out:?}");
        let merged = read_json(&merged_json);
        let one_json = sub.join("one.json");
        ghostbench(&sub)
            .args(["layout", "--plan", "P/plan.json", "--quiet", "--json"])
            .arg(&one_json)
            .assert()
            .success();
        let one = read_json(&one_json);
        let (m, o) = (verdict(&merged), verdict(&one));
        eprintln!("{flags}: merged {m}, one process {o}");
        assert!(expected.contains(&m.as_str()), "{flags}: merged {m}");
        assert!(expected.contains(&o.as_str()), "{flags}: one process {o}");
        // The cost is exact per binary, so the two runs must agree exactly.
        assert_eq!(m, o, "{flags}");
        // The merged report: 8 variants from 4 shards, each used.
        assert_eq!(merged["used_seeds"].as_array().unwrap().len(), 8);
        let shards = merged["shards"]["shards"].as_array().unwrap();
        assert_eq!(shards.len(), 4);
        assert!(shards
            .iter()
            .all(|s| s["used"] == true && s["status"] == "ok"));
        assert!(merged["shards"]["problems"].as_array().unwrap().is_empty());
        // One machine: no per-model section.
        assert!(merged["shards"]["models"].as_array().unwrap().is_empty());
        // Same settings as the one-process run.
        assert_eq!(
            merged["settings"]["confidence"],
            one["settings"]["confidence"]
        );
    }
}

/// Point 2: shards from two CPU models whose effects differ (+5% on one,
/// −5% on the other, made by scaling build B's values of real runs).
#[test]
fn an_effect_that_flips_between_cpu_models_is_flagged_not_averaged() {
    let Some((dir, p)) = copy_of_shards() else {
        return;
    };
    for (k, model, factor) in [
        (1, "Model X", 1.05),
        (2, "Model X", 1.05),
        (3, "Model Y", 0.95),
        (4, "Model Y", 0.95),
    ] {
        edit(&p.join(format!("results/shard-{k}.json")), |doc| {
            doc["machine"]["cpu_model"] = model.into();
            for run in doc["report"]["runs"].as_array_mut().unwrap() {
                if run["build"] == 1 {
                    for v in run["values"].as_array_mut().unwrap() {
                        let x = v["value"].as_f64().unwrap();
                        v["value"] = (x * factor).into();
                    }
                }
            }
        });
    }
    let json = dir.path().join("m.json");
    let out = analyze(dir.path(), &p.join("results"), &json);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{out:?}");
    let report = read_json(&json);
    let models = &report["shards"]["models"][0];
    let estimate = |name: &str| {
        models["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["cpu_model"] == name)
            .unwrap_or_else(|| panic!("no {name} in {models}"))["estimate"]
            .as_f64()
            .unwrap()
    };
    let (x, y) = (estimate("Model X"), estimate("Model Y"));
    eprintln!(
        "Model X {x:.4}, Model Y {y:.4}, interaction {}",
        models["interaction"]
    );
    assert!(x > 1.0 && y < 1.0, "X {x}, Y {y}");
    assert!((x / y - 1.05 / 0.95).abs() < 0.05, "X/Y {}", x / y);
    assert_eq!(models["flagged"], true, "{models}");
    assert!(models["interaction"]["p_value"].as_f64().unwrap() < 0.05);
    let c = b_comparison(&report);
    assert_ne!(c["verdict"], "SAME", "{c}");
    let per_model: Vec<&str> = models["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["verdict"].as_str().unwrap())
        .collect();
    // Each model decides its own direction, so no pooled verdict stands.
    assert_eq!(per_model, ["SLOWER", "FASTER"], "{models}");
    assert_eq!(c["verdict"], "UNKNOWN", "{c}");
    assert_eq!(c["undecided"]["cause"], "depends_on_machine", "{c}");
    let hint = c["hint"].as_str().unwrap();
    assert!(
        hint.contains("SLOWER on Model X (+") && hint.contains("FASTER on Model Y (−"),
        "{hint}"
    );
    assert!(stdout.contains("per CPU model: Model X"), "{stdout}");
    assert!(
        stdout.contains("the effect differs across models"),
        "{stdout}"
    );
}

/// Point 3: missing, failed, duplicate and foreign shards each give one line;
/// the analysis goes on with enough variants and refuses without.
#[test]
fn missing_failed_duplicate_and_foreign_shards_are_named() {
    let Some((dir, p)) = copy_of_shards() else {
        return;
    };
    let results = p.join("results");
    // Missing: shard 4.
    std::fs::remove_file(results.join("shard-4.json")).unwrap();
    // Failed: shard 3.
    edit(&results.join("shard-3.json"), |doc| {
        doc["status"] = "failed".into();
        doc["cause"] = "run B seed 9 failed (exit 1)".into();
    });
    // Duplicate: a second claim of shard 2, started later.
    let mut dup = read_json(&results.join("shard-2.json"));
    dup["started_unix"] = (dup["started_unix"].as_f64().unwrap() + 10.0).into();
    std::fs::write(results.join("shard-2-rerun.json"), dup.to_string()).unwrap();
    // Foreign: another plan's hash.
    let mut foreign = read_json(&results.join("shard-1.json"));
    foreign["plan_hash"] = "0".repeat(64).into();
    std::fs::write(results.join("shard-7.json"), foreign.to_string()).unwrap();

    let json = dir.path().join("m.json");
    let out = analyze(dir.path(), &results, &json);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<&str> = stdout.lines().collect();
    let one = |needle: &str| {
        let hits: Vec<&&str> = lines.iter().filter(|l| l.contains(needle)).collect();
        assert_eq!(hits.len(), 1, "{needle}: {hits:?}\n{stdout}");
    };
    one("missing shard 4 of wave 1");
    one("shard 3 failed");
    one("run B seed 9 failed (exit 1)");
    one("duplicate shard 2:");
    one("shard-2.json is ignored");
    one("foreign shard");
    one("shard-7.json");
    let report = read_json(&json);
    // Seeds 0–7 of shards 1 and 2 remain.
    assert_eq!(
        report["used_seeds"],
        serde_json::json!([0, 1, 2, 3, 4, 5, 6, 7])
    );
    let problems: Vec<&str> = report["shards"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["problem"].as_str().unwrap())
        .collect();
    for kind in ["missing", "failed", "duplicate", "foreign"] {
        assert!(problems.contains(&kind), "{problems:?}");
    }
    // The same lines are the JSON's notes.
    let notes = report["notes"].as_array().unwrap();
    assert!(notes
        .iter()
        .any(|n| n.as_str().unwrap().contains("missing shard 4")));

    // Shard 2 gone and shard 1 failed too: no variant left; refused in
    // one line, exit 7.
    for name in ["shard-2.json", "shard-2-rerun.json"] {
        std::fs::remove_file(results.join(name)).unwrap();
    }
    edit(&results.join("shard-1.json"), |doc| {
        doc["status"] = "failed".into();
        doc["cause"] = "interrupted".into();
    });
    let out = analyze(dir.path(), &results, &json);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("only 0 variants per build remain"),
        "{stderr}"
    );
    assert!(stderr.contains("shard 1 failed"), "{stderr}");
    assert!(stderr.contains("missing shards [2, 4]"), "{stderr}");
    assert!(stderr.contains("shard 3 failed"), "{stderr}");
}

/// A `--layouts auto` plan: the merge of wave 1 says when another wave is
/// needed and which shards it is; after that wave, no more is asked for.
#[test]
fn an_undecided_auto_plan_asks_for_the_next_wave() {
    if !require_tool("cc") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    // B's placement costs are permuted: the same as A's where the default
    // layout puts the hot function, different elsewhere, in both directions.
    // Against a margin of 0.01% the comparison stays UNKNOWN.
    let plan_path = plan(
        dir.path(),
        &builds("-DPERM=0,3,1,2"),
        &[
            "--layouts",
            "auto",
            "--max-layouts",
            "16",
            "--shards",
            "4",
            "--rounds",
            "2",
            "--margin",
            "0.01",
        ],
    );
    let doc = read_json(&plan_path);
    assert_eq!(
        doc["waves"],
        serde_json::json!([{"wave": 1, "shards": [1, 4]}, {"wave": 2, "shards": [5, 8]}])
    );
    assert_eq!(doc["shards"], 8);
    let shard = |k: usize| {
        ghostbench(dir.path())
            .arg("layout")
            .arg("--plan")
            .arg(&plan_path)
            .args(["--shard", &format!("{k}/8"), "--quiet"])
            .assert()
            .success();
    };
    for k in 1..=4 {
        shard(k);
    }
    let json = dir.path().join("m.json");
    let out = analyze(dir.path(), &dir.path().join("P/results"), &json);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{out:?}");
    let report = read_json(&json);
    assert_eq!(verdict(&report), "UNKNOWN", "{stdout}");
    assert_eq!(
        report["shards"]["next_wave"],
        serde_json::json!({"wave": 2, "shards": [5, 8], "undecided": 1})
    );
    assert!(
        stdout.contains(
            "another wave is needed: 1 comparison is undecided; run wave 2 (shards 5..=8)"
        ),
        "{stdout}"
    );
    // Wave 2 not started: no shard of it is missing.
    assert!(!stdout.contains("missing shard"), "{stdout}");
    for k in 5..=8 {
        shard(k);
    }
    let out = analyze(dir.path(), &dir.path().join("P/results"), &json);
    assert!(out.status.success());
    let report = read_json(&json);
    assert_eq!(report["used_seeds"].as_array().unwrap().len(), 16);
    assert_eq!(report["shards"]["wave"], 2);
    assert!(report["shards"]["next_wave"].is_null());
}

/// Ctrl-C during a shard's runs: its result is written, marked failed
/// ("interrupted"), with the runs it got, and it exits 130.
#[test]
fn an_interrupted_shard_writes_a_failed_result() {
    if !require_tool("cc") || !require_tool("sleep") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let plan_path = plan(
        dir.path(),
        &builds("-DWORK=130"),
        &[
            "--layouts",
            "8",
            "--rounds",
            "50",
            "--shell",
            "--run",
            "sleep 0.05; {out}",
        ],
    );
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ghostbench"))
        .current_dir(dir.path())
        .arg("layout")
        .arg("--plan")
        .arg(&plan_path)
        .args(["--shard", "1/4", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until its 4 builds (2 builds × 2 variants) exist, then a few runs
    // more, then Ctrl-C it.
    fn binaries(dir: &Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| {
                    let path = e.path();
                    if path.is_dir() {
                        binaries(&path)
                    } else {
                        usize::from(path.file_name().is_some_and(|n| n == "bench"))
                    }
                })
                .sum()
        })
    }
    let started = std::time::Instant::now();
    let work = dir.path().join(".ghostbench/work");
    while binaries(&work) < 4 && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(800));
    // SAFETY: kill(2) on the pid of the child this test started.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(sent, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let result = read_json(&dir.path().join("P/results/shard-1.json"));
    assert_eq!(result["status"], "failed");
    assert_eq!(result["cause"], "interrupted");
    assert!(!result["report"]["runs"].as_array().unwrap().is_empty());
}

/// The `offset` each measured run of heap_offset.c printed, by (build side,
/// seed), in a layout document's `runs`.
fn heap_offsets(report: &Value) -> Vec<(u64, u64, u64)> {
    let mut offsets: Vec<(u64, u64, u64)> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["warmup"] == false)
        .map(|r| {
            let value = r["values"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["name"] == "offset")
                .unwrap_or_else(|| panic!("no offset in {r}"));
            (
                r["side"].as_u64().unwrap(),
                r["seed"].as_u64().unwrap(),
                value["value"].as_f64().unwrap() as u64,
            )
        })
        .collect();
    offsets.sort_unstable();
    offsets
}

/// The heap shift each variant of a layout document recorded, by seed.
fn heap_shifts(report: &Value) -> Vec<(u64, Value)> {
    report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["seed"].as_u64().unwrap(), v["heap"].clone()))
        .collect()
}

#[test]
fn a_shard_moves_the_heap_as_the_local_run_of_the_same_seed_does() {
    if !require_tool("cc") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "heap_offset.c");
    let args: Vec<String> = [
        "--build".to_string(),
        format!(
            "A=cc -O2 {{cflags}} {{ldflags}} {} -o {{out}}",
            src.display()
        ),
        "--build".to_string(),
        format!(
            "B=cc -O1 {{cflags}} {{ldflags}} {} -o {{out}}",
            src.display()
        ),
        "--sources".into(),
        "heap".into(),
        "--metric".into(),
        r"regex:(?m)^(?P<name>offset) (?P<value>\d+)$".into(),
        "--layouts".into(),
        "6".into(),
        "--rounds".into(),
        "1".into(),
        "--warmup".into(),
        "0".into(),
        "--quiet".into(),
        "--color".into(),
        "never".into(),
    ]
    .into();
    let local_json = dir.path().join("local.json");
    ghostbench(dir.path())
        .arg("layout")
        .args(&args)
        .arg("--json")
        .arg(&local_json)
        .assert()
        .success();
    let local = read_json(&local_json);
    ghostbench(dir.path())
        .arg("layout")
        .args(&args)
        .args(["--shards", "3", "--plan-only", "P"])
        .assert()
        .success();
    let plan_path = dir.path().join("P/plan.json");
    let plan = read_json(&plan_path);
    assert!(
        plan["sources"].as_array().unwrap().contains(&"heap".into()),
        "the plan does not carry the heap source: {}",
        plan["sources"]
    );
    let mut sharded = Vec::new();
    let mut shifts = Vec::new();
    for k in 1..=3 {
        let out = ghostbench(dir.path())
            .arg("layout")
            .arg("--plan")
            .arg(&plan_path)
            .args(["--shard", &format!("{k}/3"), "--quiet", "--color", "never"])
            .output()
            .unwrap();
        assert!(out.status.success(), "shard {k}: {out:?}");
        let result = read_json(&dir.path().join(format!("P/results/shard-{k}.json")));
        let report = &result["report"];
        let heap = report["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["source"] == "heap")
            .unwrap_or_else(|| panic!("shard {k}: no heap source"));
        assert_eq!(heap["active"], true, "shard {k}: {heap}");
        sharded.extend(heap_offsets(report));
        shifts.extend(heap_shifts(report));
    }
    sharded.sort_unstable();
    shifts.sort_by_key(|(seed, _)| *seed);
    let offsets = heap_offsets(&local);
    assert_eq!(offsets.len(), 12, "{offsets:?}");
    // The heap moved: without the shim every run prints one offset.
    let distinct: std::collections::BTreeSet<u64> = offsets.iter().map(|o| o.2).collect();
    assert!(distinct.len() >= 3, "the heap did not move: {offsets:?}");
    assert_eq!(sharded, offsets, "shards vs the local run");
    assert_eq!(shifts, heap_shifts(&local), "recorded heap shifts");
}
