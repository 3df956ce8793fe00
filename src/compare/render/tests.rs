//! The formats agree: every section label and every worded fact of the
//! terminal report appears in the Markdown, the HTML and (under its key) the
//! JSON, for reports built from fixed numbers on the scripted executor.

use super::{html, json, markdown, terminal};
use crate::compare::experiment::run_with;
use crate::compare::{CompareOptions, CompareReport, CounterRow, Note, SimulationReport, State};
use crate::report::escape;
use crate::run::cachegrind::Simulated;
use crate::run::command::CommandSpec;
use crate::run::counters::Availability;
use crate::run::executor::{mock_command, MockExecutor, Step};
use crate::stats::verdict::Verdict;
use serde_json::Value;
use std::time::Duration;

/// The labels the terminal report may carry, each with the JSON field that
/// holds the same fact (a JSON pointer). The counter and simulation tables
/// are also checked by their contents (counter names, estimated cycles).
pub(crate) const SECTIONS: &[(&str, &str)] = &[
    ("A = ", "/commands/0/name"),
    ("B = ", "/commands/1/name"),
    ("FAILED", "/status/message"),
    ("INTERRUPTED", "/status/message"),
    ("CI valid over all looks", "/metrics/0/looks"),
    ("CI at the data's size", "/metrics/0/looks"),
    ("to decide:", "/metrics/0/hint"),
    ("metric", "/metrics/0/name"),
    ("A median", "/metrics/0/a/median"),
    ("B median", "/metrics/0/b/median"),
    ("B/A", "/metrics/0/ratio"),
    ("change", "/metrics/0/ratio"),
    ("95% CI", "/metrics/0/ci_level"),
    ("verdict", "/metrics/0/verdict"),
    ("(process start subtracted)", "/metrics/0/spawn_corrected"),
    ("median", "/metrics/0/a/median"),
    ("mean", "/metrics/0/a/mean"),
    ("CV", "/metrics/0/a/cv"),
    ("MAD", "/metrics/0/a/mad"),
    ("range", "/metrics/0/a/max"),
    ("outliers", "/metrics/0/a/outliers_high"),
    ("process start:", "/spawn_overhead_s"),
    ("hardware counters unavailable:", "/counters/unavailable"),
    ("counter", "/counters"),
    ("simulated counters unavailable:", "/simulation/unavailable"),
    ("cachegrind", "/simulation/results/0/ir"),
    ("simulation: ", "/simulation/results/1/ir"),
    ("note:", "/notes/0"),
    ("warning:", "/environment/load_average"),
    ("settings:", "/settings/margin"),
    ("failed after", "/status/state"),
    ("stopped by --max-runs", "/stopped_by"),
    ("read from", "/analyze/files"),
];

/// Check one report: every label of [`SECTIONS`] the terminal report
/// carries is in the Markdown and the HTML, and its JSON field is there; so
/// are the words of every sentence, hint and note the JSON carries. Returns
/// the labels found.
pub(crate) fn formats_agree(report: &CompareReport) -> Vec<&'static str> {
    let text = terminal::render(report, false);
    let md = markdown::render(report);
    let page = html::compare(report);
    let doc: Value = serde_json::to_value(json::document(report)).unwrap();
    let mut found = Vec::new();
    for &(label, pointer) in SECTIONS {
        if !text.contains(label) {
            continue;
        }
        found.push(label);
        assert!(
            md.contains(&escape::markdown(label)),
            "{label:?} is in the terminal report but not in the Markdown:\n{md}"
        );
        assert!(
            page.contains(&escape::html(label)),
            "{label:?} is in the terminal report but not in the HTML:\n{page}"
        );
        assert!(
            doc.pointer(pointer).is_some_and(|v| !v.is_null()),
            "{label:?} is in the terminal report but {pointer} is not in the JSON"
        );
    }
    let mut words: Vec<String> = Vec::new();
    for m in doc["metrics"].as_array().unwrap() {
        words.push(m["sentence"].as_str().unwrap().to_string());
        if let Some(hint) = m["hint"].as_str() {
            words.extend(hint.split("; ").map(str::to_string));
        }
    }
    for note in doc["notes"].as_array().unwrap() {
        words.push(note.as_str().unwrap().to_string());
    }
    for row in doc["counters"]["rows"].as_array().unwrap() {
        words.push(row["name"].as_str().unwrap().to_string());
    }
    for sim in doc["simulation"]["results"]
        .as_array()
        .into_iter()
        .flatten()
    {
        words.push(sim["estimated_cycles"].to_string());
    }
    for w in &words {
        assert!(
            text.contains(w.as_str()),
            "{w:?} not in the terminal:\n{text}"
        );
        assert!(
            md.contains(&escape::markdown(w)),
            "{w:?} not in the Markdown:\n{md}"
        );
        assert!(
            page.contains(&escape::html(w)),
            "{w:?} not in the HTML:\n{page}"
        );
    }
    found
}

fn options() -> CompareOptions {
    let spec = |name: &str, text: &str| CommandSpec {
        name: name.into(),
        text: text.into(),
        argv: vec![text.into()],
        shell: false,
    };
    CompareOptions {
        max_time: Duration::from_secs(3600),
        max_runs: 12,
        margin: 0.001,
        counters: true,
        simulate: true,
        ..CompareOptions::for_commands([spec("a<old>", "./old"), spec("B", "./new")])
    }
}

/// A/A with a 3% wobble and one far-out run of B: UNKNOWN at ±0.1% with
/// causes; `fail_at` ends it with a failure at that call.
fn report(fail_at: Option<usize>) -> CompareReport {
    let mut mock = MockExecutor::new(move |call, name| {
        if Some(call) == fail_at {
            return Step::Fail(crate::run::RunError::Exit(3));
        }
        let far = if call == 9 && name == "B" { 1.5 } else { 1.0 };
        Step::Wall(0.010 * far * (1.0 + 0.03 * ((call * 7 % 11) as f64 / 10.0 - 0.5)))
    });
    let commands = [mock_command("a<old>"), mock_command("B")];
    let counters = Availability::Unavailable("no PMU | here".into());
    let mut report = run_with(
        &options(),
        &mut mock,
        &commands,
        (None, None),
        (Some(0.0005), &counters),
        &mut |_| {},
    );
    report.environment.load_average = Some([9.0, 9.0, 9.0]);
    report.environment.logical_cpus = 2;
    report.notes.push(Note::CleanupFailed {
        cause: "rm: <x> not found".into(),
    });
    report.notes.push(Note::Run(crate::run::Note::LeftBehind {
        runs: 2,
        of: 13,
        commands: vec!["B".into()],
        killed: 3,
        survived: 1,
    }));
    report
}

#[test]
fn a_failed_experiment_says_the_same_in_every_format() {
    let report = report(Some(13));
    assert_eq!(report.status.state, State::Failed);
    assert_eq!(report.metrics[0].verdict, Verdict::Unknown);
    assert!(!report.metrics[0].causes.is_empty());
    let mut report = report;
    report.simulation = Some(SimulationReport {
        unavailable: Some("valgrind not found".into()),
        results: Vec::new(),
        errors: Vec::new(),
    });
    let found = formats_agree(&report);
    for label in [
        "FAILED",
        "to decide:",
        "process start:",
        "hardware counters unavailable:",
        "simulated counters unavailable:",
        "note:",
        "warning:",
        "settings:",
        "failed after",
        "mean",
    ] {
        assert!(found.contains(&label), "{label:?} not checked: {found:?}");
    }
}

#[test]
fn a_finished_experiment_with_counters_and_simulation_agrees_too() {
    let mut report = report(None);
    assert_eq!(report.status.state, State::BudgetExhausted);
    report.counters.unavailable = None;
    report.counters.rows = vec![CounterRow {
        name: "cycles".into(),
        median_a: 1.0e7,
        median_b: 1.1e7,
        ratio: 1.1,
    }];
    let sim = |ir| Simulated {
        ir,
        i1_misses: 10,
        ill_misses: 1,
        dr: 100,
        d1r_misses: 5,
        dlr_misses: 1,
        dw: 50,
        d1w_misses: 2,
        dlw_misses: 1,
        estimated_cycles: ir + 100,
    };
    report.simulation = Some(SimulationReport {
        unavailable: None,
        results: vec![Some(sim(1000)), Some(sim(1000))],
        errors: vec![None, None],
    });
    let found = formats_agree(&report);
    for label in [
        "stopped by --max-runs",
        "counter",
        "cachegrind",
        "simulation: ",
        "(process start subtracted)",
        "CI valid over all looks",
    ] {
        assert!(found.contains(&label), "{label:?} not checked: {found:?}");
    }
}

#[test]
fn an_interrupted_experiment_is_labelled_so_everywhere() {
    let mut mock = MockExecutor::new(|call, _| {
        if call == 5 {
            Step::Interrupt
        } else {
            Step::Wall(0.01)
        }
    });
    let commands = [mock_command("A"), mock_command("B")];
    let counters = Availability::Unavailable("not requested".into());
    let report = run_with(
        &CompareOptions {
            env_jitter: false,
            ..options()
        },
        &mut mock,
        &commands,
        (None, None),
        (None, &counters),
        &mut |_| {},
    );
    assert_eq!(report.status.state, State::Interrupted);
    let found = formats_agree(&report);
    assert!(found.contains(&"INTERRUPTED"), "{found:?}");
}
