//! Integration tests of `ghostbench layout` and `ghostbench demo` on C/C++
//! fixtures compiled at test time: verdicts where the effect is large or the
//! property structural, build and run failures with partial JSON.
//!
//! Budgets are small (few layouts and rounds) to keep CI fast. No verdict
//! asserted here comes from measured time: tests that assert a verdict or a
//! ratio use the modelled cost that tests/fixtures/layout/placed.c prints
//! (exact per binary); tests that run on `user` time assert only what holds
//! whatever the time (run counts, states, errors, placement facts). The
//! demo's timed verdicts are checked by benches/demo.sh.

mod common;

use assert_cmd::Command;
use common::{
    fixture, measured_runs, read_json, require_any, require_shuffle, require_tool, timing_lock,
    PLACED_COST,
};
use serde_json::Value;
use std::path::Path;

/// `ghostbench` run inside a fresh temporary directory (its `.ghostbench/work` lives there).
fn ghostbench(dir: &Path) -> Command {
    let mut command = common::ghostbench();
    command.current_dir(dir);
    command
}

fn comparison<'a>(report: &'a Value, build: &str, metric: &str) -> &'a Value {
    report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["build"] == build && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {build}/{metric} in {}", report["matrix"]))
        .get("comparison")
        .unwrap()
}

fn have_cc() -> bool {
    require_tool("cc")
}

/// The note that a `regex:` metric matched several values reaches the layout
/// report too (terminal and JSON), once per metric.
#[test]
fn layout_notes_which_match_a_regex_metric_took() {
    if !have_cc() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("compare", "progress.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    let output = ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O1 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--run",
            "{out} 100",
            "--metric",
            r"regex:(?P<compress>[0-9.]+) MB/s, (?P<decompress>[0-9.]+) MB/s",
            "--layouts",
            "3",
            "--rounds",
            "2",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let stdout = String::from_utf8_lossy(&output);
    let report = read_json(&json);
    let runs = measured_runs(&report);
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.contains("matched several"))
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with(&format!(
            "metric compress: {runs} of {runs} runs matched several different values"
        )),
        "{notes:?}"
    );
    assert!(stdout.contains("metric decompress: "), "{stdout}");
    // The final figure (100), not a progress update, is every run's value.
    for run in report["runs"].as_array().unwrap() {
        assert_eq!(run["values"][0]["value"], 100.0, "{run}");
    }
    assert!(comparison(&report, "B", "decompress").is_object());
}

/// 30% more work is SLOWER with the true ratio in the interval, and the
/// report (JSON, HTML) has every part. The metric is placed.c's printed
/// modelled cost, so the ratio is known exactly and the verdict cannot flake.
#[test]
fn thirty_percent_more_work_is_slower_with_the_true_ratio_in_the_ci() {
    if !have_cc() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "placed.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    let html = dir.path().join("r.html");
    ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O2 -DWORK=130 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--metric",
            PLACED_COST,
            "--layouts",
            "8",
            "--rounds",
            "5",
            "--quiet",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .assert()
        .success()
        .stdout(predicates::str::contains("SLOWER"));
    let report = read_json(&json);
    assert_eq!(report["schema"], "ghostbench.layout");
    assert_eq!(report["status"]["state"], "finished");
    let c = comparison(&report, "B", "cost");
    assert_eq!(c["verdict"], "SLOWER", "{c}");
    let (low, high) = (
        c["controlled"]["low"].as_f64().unwrap(),
        c["controlled"]["high"].as_f64().unwrap(),
    );
    // 30% more modelled work. A and B of one seed are the same code with a
    // different constant, so the linker puts `hot` at the same offset in both
    // and the placement term cancels: the true ratio is 1.30 in every layout,
    // and the interval must hold it (1.300 [1.300, 1.300] when worked out).
    assert!(
        low <= 1.3 + 1e-6 && high >= 1.3 - 1e-6 && low > 1.25 && high < 1.35,
        "CI [{low}, {high}] misses the true ratio 1.30"
    );
    // Every source is listed with whether it was active.
    let sources: Vec<&str> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["align", "shift", "shuffle", "env", "heap"]);
    assert_eq!(report["used_seeds"].as_array().unwrap().len(), 8);

    // The HTML page: the verdict, then per metric the default-layout and
    // across-layouts intervals (two estimates), one point per layout and build,
    // and the per-layout lines.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<span class=\"verdict SLOWER\">SLOWER</span>"));
    assert!(page.contains(c["sentence"].as_str().unwrap()));
    let svgs: Vec<&str> = page.split("<svg").skip(1).collect();
    assert_eq!(svgs.len(), 3, "{page}");
    assert_eq!(svgs[0].matches("<circle").count(), 2);
    assert_eq!(svgs[1].matches("<circle").count(), 2 * 8);

    // A second run reuses every build.
    ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O2 -DWORK=130 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--metric",
            PLACED_COST,
            "--layouts",
            "8",
            "--rounds",
            "1",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success();
    let again = read_json(&json);
    // Nothing is compiled again: whole builds come from the cache, and
    // compiler templates only relink their cached objects.
    assert!(
        again["build_results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["reused"] == true
                || (b["compiles"] == 0 && b["compile_hits"].as_u64() > Some(0))),
        "{}",
        again["build_results"]
    );
}

/// A "layout-only change" written as the user's `-falign-functions=64
/// -falign-loops=64` before `{cflags}`: the align source's flags override
/// it, so at every seed B's code equals A's (issue 25 point 2). Before,
/// this test read SAME off those identical binaries; now the seeds are left
/// out and, with none left, the experiment refuses naming the flag. (Without
/// the align source the flag is real in placed.c's model: 64-byte alignment
/// pins `hot` to the cheapest quarter, so B is FASTER; that is no longer a
/// layout-only change to test SAME on.)
#[test]
fn an_alignment_flag_the_variants_override_is_named_not_measured() {
    if !have_cc() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "placed.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    let out = ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!(
                "B=cc -O2 -falign-functions=64 -falign-loops=64 {{cflags}} {{ldflags}} {src} -o {{out}}"
            ),
            "--metric",
            PLACED_COST,
            "--layouts",
            "5",
            "--rounds",
            "3",
            "--margin",
            "3",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .assert()
        .code(5);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("-falign-functions=64"), "{stderr}");
    let report = read_json(&json);
    assert_eq!(
        report["used_seeds"],
        serde_json::json!([0]),
        "{}",
        report["notes"]
    );
    assert!(report["runs"].as_array().unwrap().is_empty());
}

/// `--layouts auto` (the default): a layout-only difference (SAME) and a
/// real 30% one (SLOWER) are both decided without a hand-picked layout
/// count, and the report says how many layouts each needed. The metric is placed.c's modelled cost
/// (exact per binary), so both verdicts and the layouts needed are reproducible.
#[test]
fn layouts_auto_decides_a_layout_only_and_a_real_difference() {
    if !have_cc() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "placed.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    // The layout-only pair is B with a cold error path of 64 bytes
    // (placed.c's COLD): its code differs and every function moves by 64
    // bytes, but the work does not change. (It used to be the user's
    // `-falign-functions=64 -falign-loops=64` before `{cflags}`, which the
    // align source overrides, so those variants are now identical to A's
    // and left out: issue 25 point 2, see
    // an_alignment_flag_the_variants_override_is_named_not_measured.)
    // Worked out once with mold's shuffle: the default layouts cost the
    // same (64 bytes keep `hot` in its quarter), but shuffle orders B's one
    // more section differently, so B is 1.3–4% off A in some layouts; at
    // ±1% that takes 4 looks (8, 16, 32, 64 layouts) to decide SAME, ratio
    // 0.997 [0.992, 1.003]. 30% more work is SLOWER 1.300 at the first look
    // of 8 layouts. Both are exact: the cost has no run-to-run noise.
    let cases: [(&str, &str, &[u64]); 2] = [
        ("-DCOLD=64", "SAME", &[8, 16, 32, 64]),
        ("-DWORK=130", "SLOWER", &[8]),
    ];
    // The verdicts hold with any layout sources (without shuffle, COLD=64
    // leaves every ratio at exactly 1); the number of layouts auto needed
    // was worked out with mold's shuffle, so without it (or with ld.lld's
    // other order) that check is skipped, visibly.
    let shuffle = common::require_shuffle();
    for (flags, expected, needed) in cases {
        let out = ghostbench(dir.path())
            .args([
                "layout",
                "--build",
                &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
                "--build",
                &format!("B=cc -O2 {flags} {{cflags}} {{ldflags}} {src} -o {{out}}"),
                "--metric",
                PLACED_COST,
                "--margin",
                "1",
                "--max-layouts",
                "64",
                "--color",
                "never",
                "--quiet",
                "--json",
            ])
            .arg(&json)
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        let report = read_json(&json);
        let c = comparison(&report, "B", "cost");
        let verdict = c["verdict"].as_str().unwrap();
        assert_eq!(verdict, expected, "{flags}: {c}\n{stdout}");
        // No seed was left out as identical: B's code differs everywhere.
        assert!(!stdout.contains("identical code"), "{flags}: {stdout}");
        let with_mold =
            report["sources"].as_array().unwrap().iter().any(|s| {
                s["source"] == "shuffle" && s["detail"].as_str().unwrap().contains("mold")
            });
        if !shuffle || !with_mold {
            eprintln!("skipped: the layouts --layouts auto needed were worked out with mold");
            continue;
        }
        // How many layouts it needed: the looks, their sizes doubling from 8.
        let looks = report["looks"].as_array().unwrap();
        let sizes: Vec<u64> = looks
            .iter()
            .map(|l| l["layouts"].as_u64().unwrap())
            .collect();
        assert_eq!(sizes, needed, "{flags}");
        assert_eq!(looks[needed.len() - 1]["undecided"], 0);
        let last = *needed.last().unwrap();
        assert_eq!(report["used_seeds"].as_array().unwrap().len() as u64, last);
        assert_eq!(report["settings"]["max_layouts"], 64);
        let note = format!("--layouts auto: every comparison decided with {last} layouts");
        assert!(stdout.contains(&note), "{stdout}");
    }
}

#[test]
fn max_time_stops_after_a_measured_round_and_analyzes_it() {
    if !have_cc() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "work.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O2 -DWORK=130 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--metric",
            "user",
            "--layouts",
            "3",
            "--rounds",
            "50",
            "--max-time",
            "1ms",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success();
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "budget_exhausted");
    assert_eq!(report["settings"]["max_time_s"], 0.001);
    let measured = measured_runs(&report);
    assert_eq!(
        measured,
        2 * 3,
        "one measured round of 2 builds × 3 layouts"
    );
    let notes = report["notes"].to_string();
    assert!(notes.contains("after 1 of 50 rounds"), "{notes}");
    assert!(comparison(&report, "B", "user")["controlled"].is_object());
}

#[test]
fn a_variant_that_fails_to_build_is_left_out_and_reported() {
    // Seeds 2 and 3 must be two builds: that takes the shuffle source.
    if !have_cc() || !require_shuffle() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "work.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    // Seed 2 of B fails; the other 3 seeds go on.
    let broken = format!(
        "B=case {{dir}} in */2) echo 'broken-variant: no such flag' >&2; exit 1;; esac; cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"
    );
    ghostbench(dir.path())
        .args([
            "layout",
            "--shell",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &broken,
            "--metric",
            "user",
            "--layouts",
            "4",
            "--rounds",
            "1",
            "--warmup",
            "0",
            "--quiet",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success()
        .stdout(predicates::str::contains("build failed: B seed 2"))
        .stdout(predicates::str::contains("broken-variant: no such flag"));
    let report = read_json(&json);
    assert_eq!(report["used_seeds"], serde_json::json!([0, 1, 3]));
    let failed: Vec<&Value> = report["build_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["ok"] == false)
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["seed"], 2);

    // When every variant of B fails: a clear error naming the command, exit 4, a partial JSON.
    std::fs::remove_file(&json).unwrap();
    ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O2 --no-such-flag {{cflags}} {src} -o {{out}}"),
            "--layouts",
            "3",
            "--rounds",
            "1",
            "--quiet",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .assert()
        .code(5)
        .stdout(predicates::str::contains(
            "FAILED: the default layout (seed 0) did not build",
        ))
        .stdout(predicates::str::contains("--no-such-flag"));
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "build_failed");
    assert!(report["runs"].as_array().unwrap().is_empty());
}

#[test]
fn a_crashing_program_stops_with_a_clear_message_and_partial_json() {
    if !have_cc() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let (work, crash) = (fixture("layout", "work.c"), fixture("layout", "crash.c"));
    let json = dir.path().join("r.json");
    ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            &format!(
                "A=cc -O2 {{cflags}} {{ldflags}} {} -o {{out}}",
                work.display()
            ),
            "--build",
            &format!(
                "B=cc -O2 {{cflags}} {{ldflags}} {} -o {{out}}",
                crash.display()
            ),
            "--layouts",
            "3",
            "--rounds",
            "2",
            "--quiet",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .assert()
        .code(3)
        .stdout(predicates::str::contains("FAILED: B seed"))
        .stdout(predicates::str::contains("about to crash"));
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "run_failed");
    assert!(report["status"]["message"]
        .as_str()
        .unwrap()
        .contains("signal"));
}

#[test]
fn bad_usage_is_an_error_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    ghostbench(dir.path())
        .args(["layout", "--build", "A=true {out}"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("at least two --build"));
    ghostbench(dir.path())
        .args(["layout", "--build", "A=x", "--build", "nonsense"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("NAME=TEMPLATE"));
    ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            "A=x",
            "--build",
            "B=y",
            "--sources",
            "align,bogus",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "invalid value 'bogus' for '--sources <SOURCES>'",
        ));
}

#[test]
fn demo_builds_the_dispatch_benchmark_under_layouts() {
    if require_any(&["g++", "clang++", "g++-11"]).is_none() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("demo.json");
    let started = std::time::Instant::now();
    ghostbench(dir.path())
        .args(["demo", "--quiet", "--color", "never", "--json"])
        .arg(&json)
        .assert()
        .success()
        .stdout(predicates::str::contains("ghostbench layout:"))
        .stdout(predicates::str::contains("What it means:"))
        .stdout(predicates::str::contains(
            "split-lock-risk   slot      slots[4].count crosses a 64-byte line",
        ));
    eprintln!("demo took {:.1} s", started.elapsed().as_secs_f64());
    let report = read_json(&json);
    let metrics: Vec<&str> = report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    for m in ["virtual", "fnptr", "variant", "crtp"] {
        assert!(metrics.contains(&m), "metric {m} missing: {metrics:?}");
    }
    // The demo runs with --explain 5: one entry per non-baseline build.
    let explained = report["explain"]["builds"].as_array().unwrap();
    assert_eq!(
        explained.len(),
        report["builds"].as_array().unwrap().len() - 1,
        "{}",
        report["explain"]
    );
    assert!(explained
        .iter()
        .all(|b| b["functions"].as_array().unwrap().len() <= 5));
    // Every non-baseline build has a decided or undecided verdict for every
    // metric. Which verdict is timing (the demo measures real ns/call), so
    // the expected verdicts are checked by benches/demo.sh, not here.
    assert_verdict_per_metric(&report);
}

/// Every comparison row of a demo report carries one of the verdicts, with an
/// interval that contains its estimate; one row per non-baseline build and metric.
fn assert_verdict_per_metric(report: &Value) {
    let builds = report["builds"].as_array().unwrap().len();
    let rows: Vec<&Value> = report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["comparison"].is_null())
        .collect();
    assert_eq!(rows.len(), (builds - 1) * 4, "{}", report["matrix"]);
    for r in rows {
        let c = &r["comparison"];
        let verdict = c["verdict"].as_str().unwrap();
        assert!(
            ["FASTER", "SLOWER", "SAME", "ARTIFACT", "UNKNOWN"].contains(&verdict),
            "{r}"
        );
        assert!(c["sentence"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
        let (low, est, high) = (
            c["controlled"]["low"].as_f64().unwrap(),
            c["controlled"]["estimate"].as_f64().unwrap(),
            c["controlled"]["high"].as_f64().unwrap(),
        );
        assert!(0.0 < low && low <= est && est <= high, "{r}");
    }
}

/// `demo --max-compilers 1`: the baseline, `final` (devirtualised) and `cold`
/// (a layout-only change) are built and compared on every dispatch metric.
#[test]
fn demo_with_one_compiler_builds_final_and_cold_and_compares_every_metric() {
    if require_any(&["g++", "clang++"]).is_none() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("demo.json");
    let started = std::time::Instant::now();
    ghostbench(dir.path())
        .args([
            "demo",
            "--max-compilers",
            "1",
            "--quiet",
            "--color",
            "never",
        ])
        .arg("--json")
        .arg(&json)
        .assert()
        .success()
        .stdout(predicates::str::contains("-DFINAL_DISPATCH"))
        .stdout(predicates::str::contains("-DCOLD_PATH="))
        .stdout(predicates::str::contains("What it means:"));
    let took = started.elapsed().as_secs_f64();
    eprintln!("demo --max-compilers 1 took {took:.1} s");
    let report = read_json(&json);
    let builds: Vec<&str> = report["builds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(&builds[1..], ["final", "cold"], "{builds:?}");
    let verdicts: Vec<(String, String, String)> = report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["comparison"].is_null())
        .map(|r| {
            (
                r["build"].as_str().unwrap().to_string(),
                r["metric"].as_str().unwrap().to_string(),
                r["comparison"]["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    eprintln!("verdicts: {verdicts:?}");
    // Each of the two changed builds is compared on each of the 4 dispatch
    // metrics. The verdicts themselves (`final` `virtual` FASTER, `cold` never
    // FASTER/SLOWER, at least one ARTIFACT) come from measured ns/call, so
    // benches/demo.sh checks them over several seeds and BENCHMARKS.md has the
    // figures; here only what holds whatever the load.
    for build in ["final", "cold"] {
        for metric in ["virtual", "fnptr", "variant", "crtp"] {
            assert!(
                verdicts.iter().any(|(b, m, _)| b == build && m == metric),
                "no verdict for {metric} under {build}: {verdicts:?}"
            );
        }
    }
    assert_verdict_per_metric(&report);
}

/// The address of a defined text symbol, from `nm` (the oracle for `--explain`).
fn nm_address(binary: &Path, symbol: &str) -> u64 {
    let out = std::process::Command::new("nm")
        .arg(binary)
        .output()
        .expect("nm runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(symbol))
        .unwrap_or_else(|| panic!("nm lists no {symbol} in {}", binary.display()));
    u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
}

#[test]
fn explain_names_the_hot_function_that_alignment_moved() {
    if !have_cc() {
        return;
    }
    if !require_tool("nm") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "hot.c");
    let json = dir.path().join("r.json");
    let md = dir.path().join("r.md");
    let a = format!("cc -O2 {{cflags}} {{ldflags}} {} -o {{out}}", src.display());
    let b = format!(
        "cc -O2 -falign-functions=64 -falign-loops=64 {{cflags}} {{ldflags}} {} -o {{out}}",
        src.display()
    );
    // The oracle: the same two default-layout builds, made here and read with nm.
    let oracle = |flags: &[&str], out: &str| -> u64 {
        let out = dir.path().join(out);
        let status = std::process::Command::new("cc")
            .arg("-O2")
            .args(flags)
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        nm_address(&out, "hot_loop")
    };
    let old = oracle(&[], "oracle_a");
    let new = oracle(&["-falign-functions=64", "-falign-loops=64"], "oracle_b");
    assert_eq!(new % 64, 0, "-falign-functions=64 puts hot_loop on a line");

    ghostbench(dir.path())
        .args([
            "layout",
            "--build",
            &format!("A={a}"),
            "--build",
            &format!("B={b}"),
            // Not align: it would override B's own -falign-functions=64.
            "--sources",
            "shift,env",
            "--metric",
            "user",
            "--layouts",
            "3",
            "--rounds",
            "2",
            "--explain",
            "--uarch",
            "skylake",
            "--quiet",
            "--color",
            "never",
            "--markdown",
        ])
        .arg(&md)
        .arg("--json")
        .arg(&json)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Code placement of the default layouts against A's",
        ))
        .stdout(predicates::str::contains("hot_loop"))
        .stdout(predicates::str::contains(
            "placement judged by the skylake model (named with --uarch), 32-byte windows",
        ));
    let report = read_json(&json);
    let explain = &report["explain"];
    assert_eq!(explain["top"], 10, "{explain}");
    // Judged by the model named: skylake's 32-byte windows.
    assert_eq!(explain["uarch"]["models"][0], "skylake", "{explain}");
    assert_eq!(explain["window"], 32, "{explain}");
    let builds = explain["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 1, "{explain}");
    let b = &builds[0];
    assert_eq!(b["build"], "B");
    assert!(b["error"].is_null(), "{b}");
    // Same compiler, same source: every function matches by name.
    assert_eq!(b["only_in_baseline"], 0, "{b}");
    assert_eq!(b["only_in_build"], 0, "{b}");
    assert!(b["matched"].as_u64().unwrap() >= 4, "{b}");
    let moved = b["functions"].as_array().unwrap();
    let hot = moved
        .iter()
        .find(|f| f["name"] == "hot_loop")
        .unwrap_or_else(|| panic!("hot_loop not among the moved functions: {b}"));
    assert_eq!(hot["old_address"], old, "{hot}");
    assert_eq!(hot["new_address"], new, "{hot}");
    assert_eq!(hot["old_line_offset"], old % 64, "{hot}");
    assert_eq!(hot["new_line_offset"], new % 64, "{hot}");
    assert_eq!(hot["old_window_offset"], old % 32, "{hot}");
    assert_eq!(hot["new_window_offset"], new % 32, "{hot}");
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(markdown.contains("| `hot_loop` |"), "{markdown}");

    if require_tool("valgrind") {
        // callgrind ranks: hot_loop runs nearly every instruction of the program.
        assert_eq!(explain["ranking"], "profile", "{explain}");
        assert_eq!(moved[0]["name"], "hot_loop", "{b}");
        assert!(hot["hot_share"].as_f64().unwrap() > 0.5, "{hot}");
        assert_eq!(explain["profile"]["event"], "Ir", "{explain}");
    } else {
        assert_eq!(explain["ranking"], "placement", "{explain}");
        assert!(
            explain["notes"][0]
                .as_str()
                .unwrap()
                .contains("valgrind not found"),
            "{explain}"
        );
    }
}

/// An inlining change: `decode` is always_inline in `force` (its work lands in
/// main) and noinline in `noforce` (its own symbol, nearly every instruction).
/// Whichever build is the baseline, --explain names decode as the hot function
/// only noforce has, with its share of noforce's profile, and says how little
/// of that time the matched table covers.
#[test]
fn explain_names_the_hot_function_an_inlining_change_left_on_one_side() {
    if !have_cc() {
        return;
    }
    // --explain needs a callgrind profile for shares.
    if !require_tool("valgrind") {
        return;
    }
    let _lock = timing_lock();
    let src = fixture("layout", "inline.c");
    let build = |name: &str| {
        let force = if name == "force" { "-DFORCE " } else { "" };
        format!(
            "{name}=cc -O2 {force}{{cflags}} {{ldflags}} {} -o {{out}}",
            src.display()
        )
    };
    for (baseline, other) in [("force", "noforce"), ("noforce", "force")] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let html = dir.path().join("r.html");
        let md = dir.path().join("r.md");
        let output = ghostbench(dir.path())
            .args([
                "layout",
                "--build",
                &build(baseline),
                "--build",
                &build(other),
                "--metric",
                "user",
                "--layouts",
                "3",
                "--rounds",
                "1",
                "--explain",
                "--color",
                "never",
                "--json",
            ])
            .arg(&json)
            .arg("--html")
            .arg(&html)
            .arg("--markdown")
            .arg(&md)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let stdout = String::from_utf8_lossy(&output);
        let report = read_json(&json);
        let explain = &report["explain"];
        assert_eq!(explain["ranking"], "profile", "{explain}");
        let b = &explain["builds"][0];
        let side = if baseline == "noforce" {
            "baseline"
        } else {
            "build"
        };
        let decode = &b["one_sided"][0];
        assert_eq!(decode["name"], "decode", "{baseline}: {b}");
        assert_eq!(decode["side"], side, "{baseline}: {b}");
        // decode's loop is nearly every instruction the program runs.
        let share = decode["share"].as_f64().unwrap();
        assert!(share > 0.9, "{baseline}: {decode}");
        let coverage = &b["coverage"];
        let one_sided = if side == "baseline" {
            coverage["only_in_baseline_share"].as_f64().unwrap()
        } else {
            assert!(b["profile"]["total"].as_f64().unwrap() > 0.0, "{b}");
            coverage["only_in_build_share"].as_f64().unwrap()
        };
        assert_eq!(one_sided, share, "{baseline}: {coverage}");
        let table = coverage["table_share"].as_f64().unwrap();
        let matched = coverage["matched_share"].as_f64().unwrap();
        assert!(
            (0.0..=1.0).contains(&table) && table <= matched + 1e-12,
            "{coverage}"
        );
        if baseline == "noforce" {
            // In noforce's profile the matched functions (main) hold almost nothing.
            assert!(matched < 0.05, "{coverage}");
        }
        let named = format!("decode (noforce only, {:.1}%)", share * 100.0);
        let covers = format!(
            "the table covers {:.1}% of {baseline}'s profile",
            table * 100.0
        );
        for (what, text) in [
            ("terminal", stdout.to_string()),
            // Markdown escapes `<` as `&lt;` (it renders as `<`).
            (
                "markdown",
                std::fs::read_to_string(&md).unwrap().replace("&lt;", "<"),
            ),
            (
                "html",
                std::fs::read_to_string(&html)
                    .unwrap()
                    .replace("&#39;", "'")
                    .replace("&lt;", "<"),
            ),
        ] {
            assert!(text.contains(&named), "{baseline}, {what}: {text}");
            assert!(
                text.contains(&covers) || (table < 0.0005 && text.contains("covers <0.1%")),
                "{baseline}, {what}: {text}"
            );
            assert!(
                text.contains("the table misses hot code"),
                "{baseline}, {what}"
            );
        }
    }
}

#[test]
fn explain_fails_soft_when_a_default_binary_is_not_elf() {
    if !have_cc() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "hot.c");
    let json = dir.path().join("r.json");
    // B's "build" is a shell script: it runs, but there is no code to compare.
    ghostbench(dir.path())
        .args([
            "layout",
            "--shell",
            "--build",
            &format!(
                "A=cc -O2 {{cflags}} {{ldflags}} {} -o {{out}}",
                src.display()
            ),
            "--build",
            "B=printf '#!/bin/sh\\nexit 0\\n' > {out} && chmod +x {out} && : {cflags}",
            "--sources",
            "align",
            "--metric",
            "user",
            "--layouts",
            "3",
            "--rounds",
            "1",
            "--warmup",
            "0",
            "--explain",
            "3",
            "--quiet",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success()
        .stdout(predicates::str::contains("B: not compared: cannot analyze"));
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "finished");
    assert_eq!(report["explain"]["top"], 3);
    let b = &report["explain"]["builds"][0];
    assert!(
        b["error"].as_str().unwrap().contains("cannot analyze"),
        "{b}"
    );
    assert!(b["functions"].as_array().unwrap().is_empty());
    // The matrix is still there.
    assert!(!report["matrix"].as_array().unwrap().is_empty());
}

/// Issue 22 item 4 through `layout`: placed.c's modelled cost read as
/// `cycles` (a cost by its name) and a throughput `ops` = 2·10¹²/cost. B does
/// 30% less work (WORK 70 against 100), so it costs 30% less and does 1/0.7
/// as much: with `--higher-is-better` both rows are FASTER and carry their
/// direction. No number here is a measured time.
#[test]
fn higher_is_better_turns_only_the_throughput_across_layouts() {
    if !have_cc() {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "placed.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    let out = ghostbench(dir.path())
        .args([
            "layout",
            "--shell",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O2 -DWORK=70 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--run",
            "{out} | awk '/^cost/ { print \"cycles\", $2; printf \"ops %d\\n\", 2e12 / $2 }'",
            "--metric",
            r"regex:cycles (?P<cycles>[0-9]+)",
            "--metric",
            r"regex:ops (?P<ops>[0-9]+)",
            "--higher-is-better",
            "--layouts",
            "3",
            "--rounds",
            "2",
            "--quiet",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let stdout = String::from_utf8(out).unwrap();
    let report = read_json(&json);
    for (metric, direction) in [("cycles", "lower"), ("ops", "higher")] {
        let c = comparison(&report, "B", metric);
        assert_eq!(c["verdict"], "FASTER", "{metric}: {c}");
        let row = report["matrix"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["build"] == "B" && r["metric"] == metric)
            .unwrap();
        assert_eq!(row["direction"], direction, "{metric}");
    }
    assert!(
        stdout.contains("--higher-is-better does not apply to cycles"),
        "{stdout}"
    );
}

/// A measured value of 0 stops the experiment with a one-line cause naming
/// the metric (exit 3, the runs so far kept), instead of a layout silently
/// dropped from the analysis.
#[test]
fn a_metric_value_of_0_stops_with_the_metric_named() {
    if !have_cc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "placed.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    let out = ghostbench(dir.path())
        .args([
            "layout",
            "--shell",
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O2 -DWORK=70 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--run",
            "{out} >/dev/null; echo cost 0",
            "--metric",
            PLACED_COST,
            "--layouts",
            "3",
            "--rounds",
            "2",
            "--quiet",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .assert()
        .code(3)
        .get_output()
        .stdout
        .clone();
    let stdout = String::from_utf8(out).unwrap();
    let cause = "metric \"cost\" is 0 in this run: layout compares ratios B/A across layouts, which need values above 0";
    assert!(stdout.contains(cause), "{stdout}");
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "run_failed");
    assert!(report["status"]["message"]
        .as_str()
        .unwrap()
        .contains(cause));
}
