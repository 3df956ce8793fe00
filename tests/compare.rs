//! Integration tests of `ghostbench compare` on real commands: verdicts, metrics,
//! failures with partial results, Ctrl-C, counters and cachegrind.
//!
//! These assert behaviour, not speed: every verdict asserted here comes from a
//! metric the commands print (a fixed value, the seeded environment pad, or
//! placed.c's modelled cost), never from measured time, so it is the same on a
//! loaded machine. Where runs are timed (Ctrl-C, --max-time, failures) only
//! what holds whatever the timing is asserted; timing accuracy is measured in
//! benches/compare.sh.

mod common;

use common::{
    compile_c, fixture, ghostbench, measured_runs, read_json, require_tool, timing_lock,
    PLACED_COST,
};
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

fn metric<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("metric {name} missing in {report}"))
}

/// placed.c built with `cc -O2 -DWORK=<work>` into `dir`, or None (the test
/// [`common::skipped`]) without a C compiler.
fn placed(dir: &std::path::Path, work: u32) -> Option<std::path::PathBuf> {
    if !require_tool("cc") {
        return None;
    }
    let out = dir.join(format!("placed{work}"));
    let status = std::process::Command::new("cc")
        .args(["-O2", &format!("-DWORK={work}"), "-o"])
        .arg(&out)
        .arg(fixture("layout", "placed.c"))
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc failed on placed.c");
    Some(out)
}

/// A real program built to do twice the work, run end to end through the CLI,
/// is SLOWER with a CI around two. The metric is the cost the program prints
/// (modelled, not timed), so the verdict does not depend on the machine's
/// load; how close measured wall time comes to 2× (`sleep 0.02` vs
/// `sleep 0.01`, which a start-up counted twice would pull towards 1.5) is a
/// benchmark's business: benches/compare.sh part 4.
#[test]
fn a_program_doing_twice_the_work_is_slower_with_a_ci_around_two() {
    let dir = tempfile::tempdir().unwrap();
    let (Some(a), Some(b)) = (placed(dir.path(), 100), placed(dir.path(), 200)) else {
        return;
    };
    let json = dir.path().join("r.json");
    ghostbench()
        .arg("compare")
        .arg(a.display().to_string())
        .arg(b.display().to_string())
        .args(["--metric", PLACED_COST, "--quiet", "--json"])
        .arg(&json)
        .assert()
        .success()
        .stdout(predicates::str::contains("SLOWER"));
    let report = read_json(&json);
    let cost = metric(&report, "cost");
    assert_eq!(cost["verdict"], "SLOWER", "{cost}");
    // Each binary prints one exact cost: 20000·WORK times 1, 1.0133, 1.0267
    // or 1.04 by its hot function's placement. So the ratio is 2 up to that
    // 4% (exactly 2 where both land in the same quarter, as with gcc 12 here),
    // it is B's cost over A's, and the interval holds it.
    let (a_cost, b_cost) = (
        cost["a"]["median"].as_f64().unwrap(),
        cost["b"]["median"].as_f64().unwrap(),
    );
    assert!(
        (2_000_000.0..=2_080_000.0).contains(&a_cost)
            && (4_000_000.0..=4_160_000.0).contains(&b_cost),
        "{cost}"
    );
    let ratio = cost["ratio"].as_f64().unwrap();
    assert!((ratio - b_cost / a_cost).abs() < 1e-9, "{cost}");
    let (low, high) = (
        cost["ci_low"].as_f64().unwrap(),
        cost["ci_high"].as_f64().unwrap(),
    );
    assert!(
        low <= ratio && ratio <= high && low >= 2.0 / 1.04 && high <= 2.0 * 1.04,
        "CI [{low}, {high}] should hold {ratio} and lie within 4% of 2.0"
    );
    assert_eq!(report["schema"], "ghostbench.compare");
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["status"]["state"], "decided");
}

/// B's output is exactly 2× A's, with run-to-run noise taken from the (seeded)
/// environment jitter, so the true ratio is exactly 2.0 and the run is deterministic.
#[test]
fn a_known_two_fold_ratio_lies_inside_the_ci() {
    let _timing = timing_lock();
    for seed in ["1", "7"] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        ghostbench()
            .args([
                "compare",
                r#"echo "v $((10000 + ${#GHOSTBENCH_ENV_PAD}))""#,
                r#"echo "v $((2 * (10000 + ${#GHOSTBENCH_ENV_PAD})))""#,
                "--shell",
                "--metric",
                r"regex:v (?P<v>[0-9]+)",
                "--min-runs",
                "10",
                "--seed",
                seed,
                "--quiet",
                "--json",
            ])
            .arg(&json)
            .assert()
            .success();
        let report = read_json(&json);
        let m = &report["metrics"][0];
        assert_eq!(m["verdict"], "SLOWER");
        let (low, high) = (
            m["ci_low"].as_f64().unwrap(),
            m["ci_high"].as_f64().unwrap(),
        );
        assert!(
            low <= 2.0 && 2.0 <= high,
            "seed {seed}: CI [{low}, {high}] should contain 2.0"
        );
        assert!(
            high - low < 0.5,
            "seed {seed}: CI [{low}, {high}] is uselessly wide"
        );
    }
}

/// A printed value whose run-to-run noise is the seeded environment jitter:
/// 10000 plus the length of the pad ghostbench adds (0–4095 bytes), so it
/// varies per run like a measurement but the same way for the same --seed.
const PADDED: &str = r#"echo "v $((10000 + ${#GHOSTBENCH_ENV_PAD}))""#;

/// A/A: the same command printing a value with seeded noise is never FASTER
/// or SLOWER. The value is 100000 plus the environment pad's length (0–4095
/// bytes), so up to 4% of run-to-run noise, and a 5% margin is reached:
/// each seed is SAME at the first look (5 + 5 runs), as found by running
/// them. Printed, not timed, so each seed's run is the same on any machine.
#[test]
fn a_command_compared_with_itself_is_never_faster_or_slower() {
    for (seed, expected) in [("1", "SAME"), ("2", "SAME"), ("3", "SAME")] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let aa = r#"echo "v $((100000 + ${#GHOSTBENCH_ENV_PAD}))""#;
        ghostbench()
            .args([
                "compare",
                aa,
                aa,
                "--shell",
                "--metric",
                r"regex:v (?P<v>[0-9]+)",
                "--margin",
                "5",
                "--max-runs",
                "30",
                "--quiet",
                "--seed",
                seed,
                "--json",
            ])
            .arg(&json)
            .assert()
            .success();
        let report = read_json(&json);
        let verdict = &report["metrics"][0]["verdict"];
        assert!(
            verdict == "SAME" || verdict == "UNKNOWN",
            "seed {seed}: {verdict}"
        );
        assert_eq!(verdict, expected, "seed {seed}");
        assert_eq!(measured_runs(&report), 10, "seed {seed}");
    }
}

/// With a zero margin an A/A comparison cannot be SAME, and here it cannot be
/// FASTER or SLOWER either: each side prints 1000 + (its own run count mod 7),
/// so after any number of whole rounds (warm-up included) A and B hold the same
/// values, and the interval of identical samples holds 1 whatever the count.
/// So it stays UNKNOWN until --max-time (1 s; each run sleeps 10 ms, so about
/// 40 rounds idle, and --max-runs 100 is out of reach) stops it. Only the number of
/// rounds depends on time, and nothing asserted depends on that number. The
/// report must name that limit, never suggest a --max-runs below the one
/// given, and quote only the verdict's interval.
#[test]
fn a_run_stopped_by_max_time_names_max_time() {
    let _timing = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let side = |name: &str| {
        format!(
            "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; sleep 0.01; echo \"v $((1000 + n % 7))\"",
            c = dir.path().join(name).display()
        )
    };
    let output = ghostbench()
        .args([
            "compare",
            &side("a"),
            &side("b"),
            "--shell",
            "--metric",
            r"regex:v (?P<v>[0-9]+)",
            "--margin",
            "0",
            "--alpha",
            "0.001",
            "--min-runs",
            "2",
            "--max-time",
            "1s",
            "--quiet",
            "--color",
            "never",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "budget_exhausted", "{stdout}");
    assert_eq!(report["stopped_by"], "max_time", "{stdout}");
    assert!(stdout.contains("stopped by --max-time 1.000 s"), "{stdout}");
    let v = metric(&report, "v");
    assert_eq!(v["verdict"], "UNKNOWN", "{stdout}");
    // On a heavily loaded machine 1 s may end before the first look (after 2
    // rounds); when there was one, its interval holds 1 and has width.
    if let (Some(low), Some(high)) = (v["ci_low"].as_f64(), v["ci_high"].as_f64()) {
        assert!(low <= 1.0 && 1.0 <= high && low < high, "{v}");
    }
    let causes = v["causes"].as_array().unwrap();
    assert!(!causes.is_empty(), "{v}");
    for cause in causes {
        if cause["cause"] == "more_runs" {
            assert_eq!(cause["stopped_by"], "max_time", "{cause}");
            assert!(cause["max_runs"].is_null(), "{cause}");
        }
    }
    assert!(stdout.contains("to decide: "), "{stdout}");
    // No --max-runs value is suggested: --max-runs 100 was not the limit.
    // (Under heavy load 1 s may hold only a few rounds; then the hint says the
    // runs are too few for a finite interval and names both options, no value.)
    for (at, _) in stdout.match_indices("--max-runs ") {
        let next = stdout[at + "--max-runs ".len()..].chars().next();
        assert!(!next.is_some_and(|c| c.is_ascii_digit()), "{stdout}");
    }
    if !causes.iter().any(|c| c["cause"] == "too_few_runs") {
        assert!(!stdout.contains("--max-runs"), "{stdout}");
    }
    // One interval: the descriptive statistics stay in the JSON.
    for descriptive in ["Welch", "Mann–Whitney", "BCa", "p ="] {
        assert!(!stdout.contains(descriptive), "{descriptive} in {stdout}");
    }
    assert!(v["welch"]["p"].is_number() && v["bootstrap_ratio_of_medians"].is_object());
}

#[test]
fn verbose_adds_the_descriptive_statistics_labelled_as_such() {
    let _timing = timing_lock();
    let output = ghostbench()
        .args([
            "compare",
            "true",
            "true",
            "--min-runs",
            "5",
            "--max-runs",
            "5",
            "--quiet",
            "--color",
            "never",
            "--verbose",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let label = stdout
        .find("descriptive (not the verdict's interval")
        .unwrap_or_else(|| panic!("no label in {stdout}"));
    let welch = stdout.find("Welch t =").expect("Welch");
    assert!(
        label < welch && stdout.contains("BCa bootstrap"),
        "{stdout}"
    );
}

#[test]
fn one_named_group_regex_yields_one_metric_per_name() {
    let _timing = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    ghostbench()
        .args([
            "compare",
            "printf 'virtual 1.5\\nfnptr 2.5\\n'",
            "printf 'virtual 1.5\\nfnptr 5.0\\n'",
            "--metric",
            r"regex:(?m)^(?P<name>\w+) (?P<value>[0-9.]+)$",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success();
    let report = read_json(&json);
    let names: Vec<&str> = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["virtual", "fnptr"]);
    assert_eq!(metric(&report, "virtual")["verdict"], "SAME");
    assert_eq!(metric(&report, "fnptr")["verdict"], "SLOWER");
    // 2 up to rounding: the median ratio of printed values 2x apart.
    let ratio = metric(&report, "fnptr")["ratio"].as_f64().unwrap();
    assert!((ratio - 2.0).abs() < 1e-12, "ratio {ratio}");
    assert_eq!(
        metric(&report, "virtual")["a"]["median"].as_f64().unwrap(),
        1.5
    );
}

/// A compiled program that prints lz4-style `\r` progress on stderr and nothing
/// on stdout: the regex falls back to stderr, takes the last (final) figure by
/// default, makes one metric per named group, and the report notes once per
/// metric that the choice of match mattered.
#[test]
fn regex_metrics_read_the_final_figure_of_progress_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile_c(&fixture("compare", "progress.c"), dir.path(), "progress") else {
        return;
    };
    let _timing = timing_lock();
    let exe = exe.display();
    let pattern = r"(?P<compress>[0-9.]+) MB/s, (?P<decompress>[0-9.]+) MB/s";
    let run = |metric: &str, json: &std::path::Path| {
        ghostbench()
            .args([
                "compare",
                &format!("{exe} 100"),
                &format!("{exe} 200"),
                "--metric",
                metric,
                "--higher-is-better",
                "--max-runs",
                "6",
                "--json",
            ])
            .arg(json)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let json = dir.path().join("last.json");
    let stdout = String::from_utf8_lossy(&run(&format!("regex:{pattern}"), &json)).to_string();
    let report = read_json(&json);
    for (name, a, b) in [("compress", 100.0, 200.0), ("decompress", 400.0, 800.0)] {
        let m = metric(&report, name);
        assert_eq!(m["a"]["median"].as_f64().unwrap(), a, "{name}: {m}");
        assert_eq!(m["b"]["median"].as_f64().unwrap(), b, "{name}: {m}");
        assert_eq!(m["verdict"], "FASTER", "{name}");
    }
    let runs = measured_runs(&report);
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.contains("matched several different values"))
        .collect();
    assert_eq!(
        notes.len(),
        2,
        "one note per metric, not per run: {notes:?}"
    );
    assert!(
        notes[0].starts_with(&format!(
            "metric compress: {runs} of {runs} runs matched several different values (up to 6); \
             the last was taken (the default"
        )),
        "{notes:?}"
    );
    assert!(
        notes[0].ends_with("first 10, last 100, median 35"),
        "{notes:?}"
    );
    assert!(stdout.contains("note: metric decompress: "), "{stdout}");

    // The median of the six matches, read from stderr as asked.
    let json = dir.path().join("median.json");
    run(&format!("regex@median,stderr:{pattern}"), &json);
    let report = read_json(&json);
    assert_eq!(
        metric(&report, "compress")["a"]["median"].as_f64().unwrap(),
        35.0
    );
    assert!(report["notes"][0]
        .as_str()
        .unwrap()
        .contains("the median was taken, as asked"));
    assert_eq!(
        report["settings"]["metrics"][0],
        format!("regex@median,stderr:{pattern}")
    );

    // Asked to read stdout only, where the program prints nothing: a one-line cause, exit 3.
    let out = ghostbench()
        .args([
            "compare",
            &format!("{exe} 100"),
            &format!("{exe} 200"),
            "--metric",
            &format!("regex@stdout:{pattern}"),
            "--quiet",
        ])
        .assert()
        .code(3)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8_lossy(&out);
    assert!(out.contains("matched nothing in stdout"), "{out}");
}

#[test]
fn a_failing_command_stops_with_its_cause_and_keeps_earlier_runs() {
    let _timing = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let counter = dir.path().join("count");
    // B succeeds three times, then fails with a message on stderr.
    let b = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; if [ $n -gt 3 ]; then echo 'boom: disk on fire' >&2; exit 7; fi",
        c = counter.display()
    );
    let output = ghostbench()
        .args([
            "compare", "true", &b, "--shell", "--quiet", "--warmup", "0", "--json",
        ])
        .arg(&json)
        .assert()
        .code(3)
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("FAILED: B: command failed: exit code 7"),
        "{stdout}"
    );
    assert!(stdout.contains("boom: disk on fire"), "{stdout}");
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "failed");
    let b_runs = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["side"] == 1)
        .count();
    assert_eq!(b_runs, 3);
}

#[test]
fn crashes_timeouts_and_missing_metrics_are_one_line_causes() {
    let _timing = timing_lock();
    let cases: [(&[&str], &str); 3] = [
        (
            &["compare", "true", "sh -c 'kill -SEGV $$'"],
            "killed by signal 11 (SIGSEGV)",
        ),
        (
            &["compare", "true", "sleep 5", "--timeout", "200ms"],
            "timed out",
        ),
        (
            &[
                "compare",
                "echo 1",
                "echo 2",
                "--metric",
                "regex:took ([0-9]+)",
            ],
            "matched nothing",
        ),
    ];
    for (args, cause) in cases {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let output = ghostbench()
            .args(args)
            .args(["--quiet", "--json"])
            .arg(&json)
            .assert()
            .code(3)
            .get_output()
            .clone();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains(cause), "{args:?}: {stdout}");
        assert_eq!(read_json(&json)["status"]["state"], "failed");
    }
}

#[test]
fn a_missing_program_or_cpu_is_an_error_before_any_run() {
    let _timing = timing_lock();
    ghostbench()
        .args([
            "compare",
            "true",
            "ghostbench-no-such-program --x",
            "--quiet",
        ])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "command not found on PATH: ghostbench-no-such-program",
        ));
    ghostbench()
        .args(["compare", "true", "echo 'unbalanced"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("unbalanced quotes"));
    ghostbench()
        .args(["compare", "true", "true", "--pin", "100000", "--quiet"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "--pin 100000: CPU 100000 is not available to this process",
        ));
}

/// Ctrl-C stops the run and writes what was measured. The signal is sent once
/// the commands have started at least six times (one warm-up run each, then
/// two rounds), so at least five runs have finished whatever the machine's
/// load; --min-runs 1000 puts the first look, and so any verdict, out of reach.
#[test]
fn ctrl_c_writes_partial_results() {
    let _timing = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let started = dir.path().join("started");
    let command = format!("echo . >> {}; sleep 0.05", started.display());
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ghostbench"))
        .args([
            "compare",
            &command,
            &command,
            "--shell",
            "--min-runs",
            "1000",
            "--max-runs",
            "1000",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let starts = || {
        std::fs::read_to_string(&started)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while starts() < 6 {
        if std::time::Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} starts in 120 s, or ghostbench ended early", starts());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: signalling our own child, which has not been waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert_eq!(status.code(), Some(130), "{stdout}");
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "interrupted");
    assert_eq!(report["status"]["message"], "interrupted by Ctrl-C");
    let runs = report["runs"].as_array().unwrap().len();
    assert!((5..2002).contains(&runs), "{runs} runs");
    assert_eq!(report["metrics"][0]["verdict"], "UNKNOWN");
}

#[test]
fn environment_jitter_is_on_by_default_and_recorded() {
    let _timing = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    ghostbench()
        .args([
            "compare",
            "true",
            "true",
            "--quiet",
            "--max-runs",
            "10",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success();
    let report = read_json(&json);
    let pads: Vec<u64> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["env_pad_bytes"].as_u64().unwrap())
        .collect();
    assert!(pads.iter().all(|&p| p < 4096));
    assert!(
        pads.windows(2).any(|w| w[0] != w[1]),
        "lengths should vary: {pads:?}"
    );

    ghostbench()
        .args([
            "compare",
            "true",
            "true",
            "--quiet",
            "--max-runs",
            "5",
            "--no-env-jitter",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success();
    let report = read_json(&json);
    assert!(report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["env_pad_bytes"].is_null()));
    assert!(report["environment"]["logical_cpus"].as_u64().unwrap() >= 1);
}

#[test]
fn counters_report_values_exactly_when_this_machine_can_count() {
    let _timing = timing_lock();
    let output = ghostbench()
        .args([
            "compare",
            "true",
            "true",
            "--counters",
            "--quiet",
            "--max-runs",
            "5",
            "--color",
            "never",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let unavailable = stdout
        .lines()
        .filter(|l| l.starts_with("hardware counters unavailable: "))
        .count();
    let table = stdout
        .lines()
        .any(|l| l.starts_with("counter ") || l.starts_with("cycles"));
    // Which of the two this machine must give is decided here, by opening the
    // counters the same way, not by accepting whichever came out.
    match ghostbench::run::counters::availability() {
        ghostbench::run::counters::Availability::Available(kinds) => {
            assert!(!kinds.is_empty());
            assert!(table && unavailable == 0, "{stdout}");
        }
        ghostbench::run::counters::Availability::Unavailable(why) => {
            assert!(!table && unavailable == 1, "{stdout}");
            assert!(stdout.contains(&why), "{why} not in {stdout}");
        }
    }
}

#[test]
fn simulate_gives_identical_instruction_counts_for_the_same_command() {
    let _timing = timing_lock();
    if !require_tool("valgrind") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    ghostbench()
        .args([
            "compare",
            "true",
            "true",
            "--simulate",
            "--quiet",
            "--max-runs",
            "5",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success()
        .stdout(predicates::str::contains("identical instruction counts"));
    let report = read_json(&json);
    let results = report["simulation"]["results"].as_array().unwrap();
    let ir: Vec<u64> = results.iter().map(|r| r["ir"].as_u64().unwrap()).collect();
    assert!(ir[0] > 0);
    assert_eq!(ir[0], ir[1]);
}

/// The rendered reports carry the verdict. B prints twice A's value with the
/// seeded noise of [`PADDED`], so it is SLOWER on any machine (a printed
/// metric, not time).
#[test]
fn markdown_and_html_reports_carry_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (md, html, json) = (
        dir.path().join("r.md"),
        dir.path().join("r.html"),
        dir.path().join("r.json"),
    );
    ghostbench()
        .args([
            "compare",
            PADDED,
            r#"echo "v $((2 * (10000 + ${#GHOSTBENCH_ENV_PAD})))""#,
            "--shell",
            "--metric",
            r"regex:v (?P<v>[0-9]+)",
            "--seed",
            "1",
            "-n",
            "ten<ms>",
            "-n",
            "twenty",
            "--quiet",
            "--markdown",
        ])
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("| v |"), "{text}");
    assert!(text.contains("**SLOWER**"), "{text}");

    let page = std::fs::read_to_string(&html).unwrap();
    let report = read_json(&json);
    assert!(page.starts_with("<!DOCTYPE html>"));
    // Self-contained: nothing to fetch, no scripts.
    for fetch in ["<script", "src=", "href=", "@import", "url("] {
        assert!(!page.contains(fetch), "{fetch} in {page}");
    }
    assert!(page.contains("<span class=\"verdict SLOWER\">SLOWER</span>"));
    let sentence = report["metrics"][0]["sentence"].as_str().unwrap();
    assert!(
        page.contains(&sentence.replace('<', "&lt;").replace('>', "&gt;")),
        "{sentence}"
    );
    assert!(page.contains("ten&lt;ms&gt;") && !page.contains("ten<ms>"));
    // The ratio's CI, the distribution, the run order: one point per measured run
    // in the distribution.
    let svgs: Vec<&str> = page.split("<svg").skip(1).collect();
    assert_eq!(svgs.len(), 3, "{page}");
    let measured = measured_runs(&report);
    assert_eq!(svgs[1].matches("<circle").count(), measured);
}

#[test]
fn setup_cleanup_input_and_ignore_failure_work_like_hyperfines() {
    let _timing = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let (state, input, json) = (
        dir.path().join("state"),
        dir.path().join("input.txt"),
        dir.path().join("r.json"),
    );
    std::fs::write(&input, "0123456789\n").unwrap();
    // --setup makes the file both commands read, --cleanup removes it; every run
    // reads the whole --input (11 bytes) on stdin, so the file is rewound each time;
    // B exits 1 every time, which -i records instead of stopping.
    let read = format!("cat {}; wc -c", state.display());
    ghostbench()
        .args([
            "compare",
            "--shell",
            "--quiet",
            "--min-runs",
            "3",
            "--max-runs",
            "3",
        ])
        .arg(&read)
        .arg(format!("{read}; exit 1"))
        .arg("--setup")
        .arg(format!("echo ready > {}", state.display()))
        .arg("--cleanup")
        .arg(format!("rm {}", state.display()))
        .arg("--input")
        .arg(&input)
        .args(["-i", "--metric", r"regex:(?m)^ready\n(\d+)$"])
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    assert!(!state.exists(), "--cleanup did not run");
    let report = read_json(&json);
    let runs = report["runs"].as_array().unwrap();
    assert!(runs.len() >= 6);
    for run in runs {
        assert_eq!(run["values"][0]["value"], 11.0, "{run}");
        let expected = if run["side"] == 1 { 1 } else { 0 };
        assert_eq!(run["exit_code"], expected, "{run}");
    }
    assert_eq!(report["settings"]["ignore_failure"], true);

    // A failing --setup stops before any run, with exit code 3 and its cause.
    let out = ghostbench()
        .args([
            "compare", "true", "true", "--quiet", "--setup", "false", "--json",
        ])
        .arg(&json)
        .assert()
        .code(3);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("FAILED: --setup: command failed: exit code 1"),
        "{stdout}"
    );
    assert_eq!(read_json(&json)["runs"].as_array().unwrap().len(), 0);
}

/// Issue 22 item 4 through `compare`: the commands print a user time
/// (`user`, a cost by its name) and a throughput (`ops`); B uses 23% less
/// time and does 30% more work. With `--higher-is-better` both are FASTER,
/// each metric carries its direction, and the note says `user` was left
/// lower-is-better. The values are printed, so the verdicts are exact.
#[test]
fn higher_is_better_turns_the_throughput_and_leaves_user_time_a_cost() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = ghostbench()
        .args([
            "compare",
            "echo user 100 ops 1000",
            "echo user 77 ops 1300",
            "--metric",
            r"regex:user (?P<user>[0-9]+) ops (?P<ops>[0-9]+)",
            "--higher-is-better",
            "--min-runs",
            "3",
            "--max-runs",
            "6",
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
    let stdout = String::from_utf8(output).unwrap();
    let report = read_json(&json);
    for (name, direction) in [("user", "lower"), ("ops", "higher")] {
        let m = metric(&report, name);
        assert_eq!(m["verdict"], "FASTER", "{name}: {m}");
        assert_eq!(m["direction"], direction, "{name}");
    }
    assert_eq!(report["settings"]["higher_is_better"], true);
    assert!(
        stdout.contains("--higher-is-better does not apply to user"),
        "{stdout}"
    );
    assert!(stdout.contains("higher is better on ops"), "{stdout}");
}

/// The cost values of every measured run (both sides) in a compare report.
fn run_costs(report: &Value) -> Vec<f64> {
    report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["warmup"] == false)
        .map(|r| {
            r["values"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["name"] == "cost")
                .unwrap()["value"]
                .as_f64()
                .unwrap()
        })
        .collect()
}

/// `--no-aslr` starts every run in one memory layout: the noise fixture
/// whose printed cost is its stack address's cache line within the page
/// prints one value in every run (the environment held too), where with
/// ASLR on (machine-wide) it prints several; the settings say it was on,
/// and the text and JSON notes say that it froze one layout.
#[test]
fn no_aslr_runs_every_run_in_one_layout_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stack) = compile_c(&fixture("noise", "stack.c"), dir.path(), "stack") else {
        return;
    };
    let stack = stack.display().to_string();
    let run = |extra: &[&str]| {
        let json = dir.path().join("r.json");
        let output = ghostbench()
            .args(["compare", &stack, &stack, "--quiet", "--color", "never"])
            .args(["--metric", "cost=regex:cost: (\\d+)", "--no-env-jitter"])
            .args(["--min-runs", "12", "--max-runs", "12", "--json"])
            .arg(&json)
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.code().is_some_and(|c| c != 2), "{text}");
        (read_json(&json), text)
    };
    let (report, text) = run(&["--no-aslr"]);
    let costs = run_costs(&report);
    assert_eq!(costs.len(), 24, "{text}");
    assert!(costs.iter().all(|&c| c == costs[0]), "{costs:?}");
    assert_eq!(report["settings"]["no_aslr"], true);
    assert!(text.contains("ASLR off"), "{text}");
    let froze = "freezing ASLR freezes one layout";
    assert!(text.contains(froze), "{text}");
    assert!(
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains(froze)),
        "{}",
        report["notes"]
    );
    let aslr_on =
        std::fs::read_to_string("/proc/sys/kernel/randomize_va_space").map(|v| v.trim() != "0");
    if aslr_on.unwrap_or(false) {
        // 24 runs in two halves of a page: all alike by chance with p = 2^-23.
        let (report, text) = run(&[]);
        assert_eq!(report["settings"]["no_aslr"], false);
        assert!(!text.contains(froze), "{text}");
        let costs = run_costs(&report);
        assert!(costs.iter().any(|&c| c != costs[0]), "{costs:?}");
    }
}
