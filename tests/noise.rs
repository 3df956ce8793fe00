//! `ghostbench noise` end to end on fixtures with known sources of noise,
//! compiled at test time: stack.c (cost set by its stack address mod 4 KiB:
//! ASLR and the environment's size), heap.c (cost set by where its heap
//! lands and whether huge pages may back it: ASLR and heap huge pages),
//! quiet.c (neither). Shares rest on the modelled cost each prints, never on
//! measured time, so the attribution is exact up to the kernel's random
//! placements; the factors not tested say why, and bad input gets one line.

mod common;

use common::{compile_c, fixture, read_json, run_within, skipped};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(180);
const COST: &str = r"cost=regex:cost: (\d+)";
/// The attribution tests' arguments: 40 rounds, and a budget (below
/// `LIMIT`) that a loaded machine cannot end before them.
const ATTRIBUTION: [&str; 6] = ["-m", COST, "--rounds", "40", "--budget", "150s"];

/// `noise` on `program` in `dir` with `extra` arguments: exit code and JSON.
fn noise(dir: &Path, program: &Path, extra: &[&str]) -> (i32, Value, String) {
    let json = dir.join("noise.json");
    let mut args = vec![
        "noise",
        program.to_str().unwrap(),
        "--color",
        "never",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = run_within(dir, &args, LIMIT);
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let code = output.status.code().unwrap_or(-1);
    let report = if json.exists() {
        read_json(&json)
    } else {
        Value::Null
    };
    (code, report, text)
}

fn metric<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name}: {report}"))
}

/// Each tested factor's share and whether it is a source.
fn shares(metric: &Value) -> Vec<(String, f64, bool)> {
    metric["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["factor"].as_str().unwrap().to_string(),
                s["share"]["value"].as_f64().unwrap(),
                s["source"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn tested(report: &Value, factor: &str) -> bool {
    report["factors"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["factor"] == factor && f["tested"] == true)
}

/// The sources are exactly `want`, each with a large share; every other
/// tested factor has a small one; nothing is left unexplained.
fn assert_sources(report: &Value, want: &[&str], text: &str) {
    let cost = metric(report, "cost");
    assert_eq!(cost["decomposed"], true, "{text}");
    for (factor, share, source) in shares(cost) {
        if want.contains(&factor.as_str()) {
            assert!(source && share >= 0.25, "{factor} {share}: {text}");
        } else {
            assert!(!source && share.abs() < 0.25, "{factor} {share}: {text}");
        }
    }
    assert_eq!(cost["unexplained"]["value"], 0.0, "{text}");
    assert_eq!(
        cost["quiet_runs"], 2,
        "holding the sources leaves no noise: {text}"
    );
}

#[test]
fn a_stack_sensitive_benchmark_is_put_on_aslr_and_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile_c(&fixture("noise", "stack.c"), dir.path(), "stack") else {
        return;
    };
    let (code, report, text) = noise(dir.path(), &program, &ATTRIBUTION);
    assert_eq!(code, 0, "{text}");
    assert!(tested(&report, "aslr") && tested(&report, "env"), "{text}");
    assert_sources(&report, &["aslr", "env"], &text);
    let cost = metric(&report, "cost");
    assert_eq!(cost["quiet_held"], serde_json::json!(["aslr"]), "{text}");
    assert!(
        text.contains("Holding ASLR freezes one memory layout"),
        "{text}"
    );
    assert!(
        text.contains("The environment's size moves the stack"),
        "{text}"
    );
}

#[test]
fn a_heap_sensitive_benchmark_is_put_on_aslr_and_huge_pages() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile_c(&fixture("noise", "heap.c"), dir.path(), "heap") else {
        return;
    };
    let (code, report, text) = noise(dir.path(), &program, &ATTRIBUTION);
    assert_eq!(code, 0, "{text}");
    if !tested(&report, "heap") {
        let why = &report["factors"][3]["why"];
        skipped(&format!("heap huge pages on this machine ({why})"));
        return;
    }
    assert_sources(&report, &["aslr", "heap"], &text);
    let cost = metric(&report, "cost");
    assert_eq!(
        cost["quiet_held"],
        serde_json::json!(["aslr", "heap"]),
        "{text}"
    );
}

#[test]
fn a_benchmark_with_neither_has_no_noise_to_attribute() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile_c(&fixture("noise", "quiet.c"), dir.path(), "quiet") else {
        return;
    };
    let (code, report, text) = noise(dir.path(), &program, &["-m", COST, "--rounds", "3"]);
    assert_eq!(code, 0, "{text}");
    let cost = metric(&report, "cost");
    assert_eq!(cost["decomposed"], false, "{text}");
    assert!(
        cost["finding"]
            .as_str()
            .unwrap()
            .contains("no run-to-run noise to attribute"),
        "{text}"
    );
    // Every cell ran once a round, in the cells the design has.
    let cells = 1u64 << shares_tested(&report);
    assert_eq!(report["runs"].as_array().unwrap().len() as u64, 3 * cells);
}

fn shares_tested(report: &Value) -> usize {
    report["factors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["tested"] == true)
        .count()
}

#[test]
fn factors_that_cannot_apply_are_listed_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let (code, report, text) = noise(
        dir.path(),
        Path::new("true"),
        &["--shell", "--rounds", "2", "--skip", "pin"],
    );
    assert_eq!(code, 0, "{text}");
    let why = |factor: &str| {
        report["factors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["factor"] == factor)
            .unwrap()["not_tested"]["reason"]
            .clone()
    };
    assert_eq!(why("heap"), "shell", "{text}");
    assert_eq!(why("fresh"), "shell", "{text}");
    assert_eq!(why("pin"), "skipped", "{text}");
    assert!(
        text.contains("heap huge pages: not tested: the command runs through sh -c"),
        "{text}"
    );
}

#[test]
fn bad_input_gets_one_line_and_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, text) = noise(dir.path(), Path::new("./no-such-program"), &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("command not found"), "{text}");
    let (code, _, text) = noise(dir.path(), Path::new("true"), &["--rounds", "1"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--rounds 1: must be 2 to"), "{text}");
    let (code, _, text) = noise(dir.path(), Path::new("false"), &["--rounds", "2"]);
    assert_eq!(code, 3, "a failing command is a failed run: {text}");
    assert!(text.contains("FAILED"), "{text}");
}

/// The renderers agree: every share (value and interval, as the text
/// prints them) and the runs a plain and the quietest run need are in the
/// terminal text and the Markdown as the JSON has them.
#[test]
fn text_json_and_markdown_carry_the_same_shares_and_recommendation() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = compile_c(&fixture("noise", "stack.c"), dir.path(), "stack") else {
        return;
    };
    let md = dir.path().join("noise.md");
    let (code, report, text) = noise(
        dir.path(),
        &program,
        &[
            "-m",
            COST,
            "--rounds",
            "10",
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{text}");
    // Markdown escapes the intervals' brackets.
    let markdown = std::fs::read_to_string(&md)
        .unwrap()
        .replace("\\[", "[")
        .replace("\\]", "]");
    let percent = |x: f64| format!("{:.0}%", x * 100.0);
    let cost = metric(&report, "cost");
    assert_eq!(cost["decomposed"], true, "{text}");
    for s in cost["shares"].as_array().unwrap() {
        let e = &s["share"];
        let words = format!(
            "[{}, {}]",
            percent(e["low"].as_f64().unwrap()),
            percent(e["high"].as_f64().unwrap())
        );
        let value = percent(e["value"].as_f64().unwrap());
        for (name, out) in [("text", &text), ("markdown", &markdown)] {
            assert!(
                out.contains(&words) && out.contains(&value),
                "{name}: {s}\n{out}"
            );
        }
    }
    for key in ["default_runs", "quiet_runs"] {
        let runs = format!("about {} runs per command", cost[key]);
        assert!(text.contains(&runs), "{key}: {text}");
        assert!(markdown.contains(&runs), "{key}: {markdown}");
    }
}
