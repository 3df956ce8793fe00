//! The round loop on a scripted executor: no process runs and no time
//! passes, so every outcome is exact.
use super::*;
use crate::run::command::CommandSpec;
use crate::run::executor::{mock_command, MockExecutor, Step};
use crate::run::RunError;

fn options() -> CompareOptions {
    let spec = |name: &str| CommandSpec {
        name: name.into(),
        text: name.into(),
        argv: vec![name.into()],
        shell: false,
    };
    CompareOptions {
        max_time: Duration::from_secs(3600),
        env_jitter: false,
        spawn_correction: false,
        ..CompareOptions::for_commands([spec("a"), spec("b")])
    }
}

/// A takes 10 ms and B `ratio` times as long, each with a ±0.2% wobble
/// that repeats every 5 runs.
fn steady(ratio: f64) -> impl FnMut(usize, &str) -> Step {
    move |call, name| {
        let wobble = 1.0 + 0.001 * ((call % 5) as f64 - 2.0);
        Step::Wall(0.010 * wobble * if name == "b" { ratio } else { 1.0 })
    }
}

fn experiment(options: &CompareOptions, mock: &mut MockExecutor) -> CompareReport {
    let commands = [mock_command("a"), mock_command("b")];
    let counters = Availability::Unavailable("mock".into());
    run_with(
        options,
        mock,
        &commands,
        (None, None),
        (None, &counters),
        &mut |_| {},
    )
}

#[test]
fn a_twenty_percent_slowdown_is_decided_at_the_first_look() {
    // The first look is at 5 runs a side; B's runs are 1.2× A's with
    // no overlap, so the exact interval of the ratio lies near 1.2.
    let mut mock = MockExecutor::new(steady(1.2));
    let report = experiment(&options(), &mut mock);
    assert_eq!(report.status.state, State::Decided);
    let m = &report.metrics[0];
    assert_eq!(m.verdict, Verdict::Slower, "{m:?}");
    // One warm-up round and 5 measured rounds, ABBA: a b, b a, a b, …
    assert_eq!(mock.calls.len(), 2 * 6);
    assert_eq!(mock.calls[2].0, "a");
    assert_eq!(mock.calls[4].0, "b");
    assert_eq!(report.runs.iter().filter(|r| !r.warmup).count(), 10);
    assert_eq!(m.looks, 1, "{m:?}");
    assert!(m.ci_low > 1.19 && m.ci_high < 1.21, "{m:?}");
}

#[test]
fn a_failure_mid_run_keeps_the_runs_before_it() {
    let mut steady = steady(1.0);
    let mut mock = MockExecutor::new(move |call, name| {
        if call == 7 {
            Step::Fail(RunError::Exit(3))
        } else {
            steady(call, name)
        }
    });
    let report = experiment(&options(), &mut mock);
    assert_eq!(report.status.state, State::Failed);
    let message = report.status.message.clone().unwrap();
    assert!(message.contains("exit code 3"), "{message}");
    assert_eq!(report.status.last_output.len(), 1);
    // Calls 0..7 succeeded: 2 warm-up and 5 measured runs are kept.
    assert_eq!(report.runs.len(), 7);
    assert_eq!(report.runs.iter().filter(|r| !r.warmup).count(), 5);
}

#[test]
fn a_timeout_stops_the_experiment_with_its_cause() {
    let mut steady = steady(1.0);
    let mut mock = MockExecutor::new(move |call, name| {
        if call == 3 {
            Step::Timeout
        } else {
            steady(call, name)
        }
    });
    let report = experiment(&options(), &mut mock);
    assert_eq!(report.status.state, State::Failed);
    assert!(report.status.message.clone().unwrap().contains("timed out"));
    assert_eq!(report.runs.len(), 3);
}

#[test]
fn ctrl_c_keeps_the_runs_and_the_partial_json_holds_them() {
    let mut steady = steady(1.1);
    let mut mock = MockExecutor::new(move |call, name| {
        if call == 9 {
            Step::Interrupt
        } else {
            steady(call, name)
        }
    });
    let mut o = options();
    o.cleanup = Some(o.commands[0].clone());
    let cleanup = mock_command("cleanup");
    let commands = [mock_command("a"), mock_command("b")];
    let counters = Availability::Unavailable("mock".into());
    let report = run_with(
        &o,
        &mut mock,
        &commands,
        (None, Some(&cleanup)),
        (None, &counters),
        &mut |_| {},
    );
    assert_eq!(report.status.state, State::Interrupted);
    assert_eq!(report.runs.len(), 9);
    // Cleanup is not run after Ctrl-C, and the report says so.
    assert!(mock.unmeasured.is_empty());
    assert!(report.notes.contains(&Note::CleanupSkipped));
    // What the CLI writes on Ctrl-C: the partial report as JSON.
    let json = crate::report::json::written(&crate::compare::render::json::document(&report));
    assert!(json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().starts_with("--cleanup skipped")));
    assert_eq!(json["status"]["state"], "interrupted");
    assert_eq!(json["runs"].as_array().unwrap().len(), 9);
}

#[test]
fn the_budget_that_stopped_the_run_is_named() {
    // A/A with a 3% wobble cannot be decided at margin 0.1% in 12 runs.
    let mut o = options();
    o.margin = 0.001;
    o.max_runs = 12;
    let mut mock = MockExecutor::new(|call, _| {
        Step::Wall(0.010 * (1.0 + 0.03 * ((call * 7 % 11) as f64 / 10.0 - 0.5)))
    });
    let report = experiment(&o, &mut mock);
    assert_eq!(report.status.state, State::BudgetExhausted);
    assert_eq!(report.stopped_by, Some(Limit::MaxRuns));
    assert_eq!(report.runs.iter().filter(|r| !r.warmup).count(), 24);
}

#[test]
fn a_run_cut_by_max_time_is_left_out_and_the_budget_named() {
    let mut steady = steady(1.1);
    let mut mock = MockExecutor::new(move |call, name| {
        if call == 9 {
            Step::Fail(RunError::OutOfTime)
        } else {
            steady(call, name)
        }
    });
    let commands = [mock_command("a"), mock_command("b")];
    let counters = Availability::Unavailable("mock".into());
    let report = run_with(
        &options(),
        &mut mock,
        &commands,
        (None, None),
        (None, &counters),
        &mut |_| {},
    );
    assert_eq!(report.status.state, State::BudgetExhausted);
    assert_eq!(report.stopped_by, Some(Limit::MaxTime));
    assert_eq!(report.runs.len(), 9);
}
