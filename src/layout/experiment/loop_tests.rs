//! The look loop on a scripted executor and scripted builds: no compiler
//! or process runs and no time passes, so every outcome is exact.
use super::*;
use crate::layout::{BuildSpec, Estimator, Undecided};
use crate::run::executor::{mock_command, MockExecutor, Step};
use crate::run::RunError;

fn options() -> LayoutOptions {
    let spec = |name: &str| BuildSpec {
        name: name.into(),
        template: String::new(),
    };
    LayoutOptions {
        builds: vec![spec("A"), spec("B")],
        rounds: 3,
        warmup: 0,
        ..LayoutOptions::default()
    }
}

/// Scripted builds: every variant builds, except `failing` seeds of B.
fn builds(failing: &'static [u64]) -> Box<BuildFn<'static>> {
    builds_of(&["A", "B"], failing)
}

/// Scripted builds of these names (the first is the baseline).
fn builds_of(names: &'static [&'static str], failing: &'static [u64]) -> Box<BuildFn<'static>> {
    Box::new(move |batch: &[Variant], _: &mut dyn FnMut(&Progress)| {
        let mut results = Vec::new();
        let mut pairs = Vec::new();
        for (b, name) in names.iter().enumerate() {
            for v in batch {
                let ok = !(b == 1 && failing.contains(&v.seed));
                results.push(BuildResult {
                    build: b,
                    seed: v.seed,
                    ok,
                    reused: false,
                    seconds: 0.0,
                    command: format!("build {name} {}", v.seed),
                    error: (!ok).then(|| "no such flag".to_string()),
                    output_tail: Vec::new(),
                    launched: Default::default(),
                    code_hash: None,
                });
            }
        }
        let seeds: Vec<u64> = batch
            .iter()
            .map(|v| v.seed)
            .filter(|s| !failing.contains(s))
            .collect();
        for (b, name) in names.iter().enumerate() {
            for &seed in &seeds {
                pairs.push((b, seed, mock_command(&format!("{name} seed {seed}"))));
            }
        }
        Ok(Batch {
            results,
            seeds,
            pairs,
            build_s: 0.0,
            identical: Vec::new(),
        })
    })
}

/// B/A per variant: 1 at the default layout, ±3% alternating over
/// variants 1–7, exactly 1 from variant 8 on. A takes 10 ms.
fn runs(_call: usize, name: &str) -> Step {
    let seed: u64 = name.rsplit(' ').next().unwrap().parse().unwrap();
    let d: f64 = match seed {
        1..=7 if seed % 2 == 1 => 0.03,
        1..=7 => -0.03,
        _ => 0.0,
    };
    Step::Wall(0.010 * if name.starts_with('B') { d.exp() } else { 1.0 })
}

fn experiment(
    options: &LayoutOptions,
    mock: &mut MockExecutor,
    failing: &'static [u64],
) -> LayoutReport {
    let mut report = fresh::new_report(options, Path::new("/mock"), Vec::new());
    look_loop(
        options,
        mock,
        (true, false, false),
        &mut *builds(failing),
        &mut report,
        &mut |_| {},
    )
    .unwrap();
    report
}

#[test]
fn auto_adds_layouts_until_the_verdict_at_the_third_look() {
    // Look 1 (8 layouts): trimmed log ratios −3, −3, 0, +3, +3, +3 (%),
    // an interval far wider than ±1%: UNKNOWN. Look 2 (16): trimming 3
    // per side leaves nine 0s and one +3%; winsorized sd 1.34%, SE
    // 0.548%, t(0.99583, 9) ≈ 3.4: ±1.8%, UNKNOWN. Look 3 (32): trimming
    // 6 per side drops every ±3%: [1, 1], SAME.
    let options = options();
    let mut mock = MockExecutor::new(runs);
    let report = experiment(&options, &mut mock, &[]);
    let sizes: Vec<usize> = report.looks.iter().map(|l| l.layouts).collect();
    assert_eq!(sizes, [8, 16, 32]);
    assert_eq!(
        report.looks.iter().map(|l| l.undecided).collect::<Vec<_>>(),
        [1, 1, 0]
    );
    let c = report.matrix[1].comparison.as_ref().unwrap();
    assert_eq!(c.verdict, Verdict::Same, "{c:?}");
    // α spent: 1/2, 1/6 and the remaining 1/3 of 0.05.
    let levels: Vec<f64> = report.looks.iter().map(|l| l.confidence).collect();
    for (level, expected) in levels
        .iter()
        .zip([1.0 - 0.025, 1.0 - 0.05 / 6.0, 1.0 - 0.05 / 3.0])
    {
        assert!((level - expected).abs() < 1e-12, "{levels:?}");
    }
    assert_eq!(mock.calls.len(), 2 * 32 * 3);
    assert_eq!(report.status.state, State::Finished);
    // Each run of a cell is the same: no run noise, so every look adds layouts.
    let added: Vec<Added> = report.looks.iter().map(|l| l.added).collect();
    assert_eq!(
        added,
        [8, 8, 16].map(|layouts| Added::Layouts { layouts }),
        "{added:?}"
    );
}

/// No layout effect at all, and every run spread ±1.75% (a deterministic
/// scramble of the call number): the spread of the per-layout ratios is
/// all run noise.
fn noisy_runs(call: usize, _name: &str) -> Step {
    let u = (call.wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0;
    Step::Wall(0.010 * (0.035 * (u - 0.5)).exp())
}

#[test]
fn auto_adds_rounds_when_run_noise_makes_the_spread_and_says_so() {
    let options = options();
    let mut mock = MockExecutor::new(noisy_runs);
    let report = experiment(&options, &mut mock, &[]);
    let added: Vec<Added> = report.looks.iter().map(|l| l.added).collect();
    assert_eq!(added[0], Added::Layouts { layouts: 8 });
    let Added::Rounds { rounds } = added[1] else {
        panic!(
            "the second look should add rounds: {added:?} {:?}",
            report.matrix[1].comparison
        );
    };
    // The same 8 layouts, each run `rounds` more times, with round numbers
    // that go on from the first look's.
    assert_eq!(report.looks[1].layouts, 8);
    let measured = 2 * 8 * 3 + 2 * 8 * rounds;
    assert!(mock.calls.len() >= measured, "{}", mock.calls.len());
    let last_round = report.runs[..measured].iter().map(|r| r.record.round).max();
    assert_eq!(last_round, Some(3 + rounds - 1));
    let c = report.matrix[1].comparison.as_ref().unwrap();
    assert_eq!(c.verdict, Verdict::Same, "{c:?} {added:?}");
    let note = budget::rounds_note(&report).expect("a note on the rounds");
    let Note::AutoRounds { looks, .. } = note else {
        panic!("{note:?}")
    };
    assert_eq!(
        looks,
        added
            .iter()
            .filter(|a| matches!(a, Added::Rounds { .. }))
            .count()
    );
}

/// No layout effect; runs spread ±0.1%, and 35% of them (by a scramble of
/// the call number) 5–39% slower, as a busy machine makes them: with the
/// min estimator, a cell whose few runs were all slowed makes the spread
/// between layouts, and more runs a cell remove it.
fn busy_runs(call: usize, _name: &str) -> Step {
    let scramble = call.wrapping_mul(2_654_435_761);
    let u = (scramble % 1000) as f64 / 1000.0;
    let w = (scramble / 1000) % 100;
    let slow = if w < 35 { 1.05 + 0.01 * w as f64 } else { 1.0 };
    Step::Wall(0.010 * (0.002 * (u - 0.5)).exp() * slow)
}

#[test]
fn auto_adds_rounds_when_a_busy_machine_slows_runs_one_way() {
    let options = LayoutOptions {
        estimator: Estimator::Min,
        ..options()
    };
    let mut mock = MockExecutor::new(busy_runs);
    let report = experiment(&options, &mut mock, &[]);
    let first = report.looks.first().expect("a look");
    assert_eq!(first.layouts, 8);
    let added: Vec<Added> = report.looks.iter().map(|l| l.added).collect();
    // The first look is undecided for its run noise (the 1/n model asks
    // for more rounds than the old cap of 8 × --rounds allowed, and as many
    // runs as the layouts it would otherwise build), so the next look adds
    // rounds on the 8 layouts instead of building 8 more.
    assert!(report.looks.len() > 1, "{added:?}");
    assert!(matches!(added[1], Added::Rounds { .. }), "{added:?}");
    assert_eq!(report.looks[1].layouts, 8);
    let c = report.matrix[1].comparison.as_ref().unwrap();
    assert_eq!(c.verdict, Verdict::Same, "{c:?} {added:?}");
}

#[test]
fn a_look_after_wild_runs_doubles_the_runs_a_cell_has() {
    let options = LayoutOptions {
        max_layouts: None,
        ..options()
    };
    let mut mock = MockExecutor::new(runs);
    let mut report = experiment(&options, &mut mock, &[]);
    let c = report.matrix[1].comparison.as_mut().unwrap();
    c.verdict = Verdict::Unknown;
    c.undecided = Some(Undecided::RunOutliers {
        runs: 10,
        of: 48,
        worst: 0.4,
        variants: vec![1, 2],
    });
    // 3 runs a cell now: 3 more make 6.
    assert_eq!(
        budget::next_look(&options, &report),
        budget::NextLook::Rounds(3)
    );
    // Run noise elsewhere asking for more rounds: the larger wins.
    report.matrix[0].comparison = report.matrix[1].comparison.clone();
    report.matrix[0].comparison.as_mut().unwrap().undecided = Some(Undecided::RunNoise {
        share: 0.9,
        rounds: 8,
    });
    assert_eq!(
        budget::next_look(&options, &report),
        budget::NextLook::Rounds(5)
    );
    // One too close to the margin for any budget does not choose.
    report.matrix[0].comparison.as_mut().unwrap().undecided = Some(Undecided::NearMargin {
        margin_for_same: 0.02,
        margin_for_effect: None,
    });
    assert_eq!(
        budget::next_look(&options, &report),
        budget::NextLook::Rounds(3)
    );
    // One comparison that only layouts would decide: layouts.
    report.matrix[0].comparison.as_mut().unwrap().undecided =
        Some(Undecided::LayoutSpread { layouts: 40 });
    assert_eq!(budget::next_look(&options, &report), budget::NextLook::Stop);
}

#[test]
fn a_rounds_look_runs_only_the_builds_still_undecided() {
    // B is 20% slower, plain to see; C is A again under ±1.5% run noise.
    let spec = |name: &str| BuildSpec {
        name: name.into(),
        template: String::new(),
    };
    let options = LayoutOptions {
        builds: vec![spec("A"), spec("B"), spec("C")],
        ..options()
    };
    let mut mock = MockExecutor::new(|call, name| {
        let Step::Wall(noisy) = noisy_runs(call, name) else {
            unreachable!()
        };
        match name.chars().next() {
            Some('B') => Step::Wall(0.012),
            Some('C') => Step::Wall(noisy),
            _ => Step::Wall(0.010),
        }
    });
    let mut report = fresh::new_report(&options, Path::new("/mock"), Vec::new());
    look_loop(
        &options,
        &mut mock,
        (true, false, false),
        &mut *builds_of(&["A", "B", "C"], &[]),
        &mut report,
        &mut |_| {},
    )
    .unwrap();
    let added: Vec<Added> = report.looks.iter().map(|l| l.added).collect();
    let Some(Added::Rounds { rounds }) = added.get(1).copied() else {
        panic!("the second look should add rounds: {added:?}");
    };
    let first_look = 3 * 8 * 3;
    let later: Vec<usize> = report.runs[first_look..].iter().map(|r| r.build).collect();
    assert!(!later.contains(&1), "B was decided, yet ran again");
    assert!(later.iter().filter(|b| **b == 2).count() >= 8 * rounds);
    assert!(later.contains(&0));
    let verdicts: Vec<Verdict> = report
        .matrix
        .iter()
        .filter_map(|r| r.comparison.as_ref().map(|c| c.verdict))
        .collect();
    // B's verdict stands on the runs of the first look.
    assert_eq!(verdicts[0], Verdict::Slower, "{added:?}");
}

#[test]
fn a_fixed_count_looks_once() {
    let options = LayoutOptions {
        max_layouts: None,
        ..options()
    };
    let mut mock = MockExecutor::new(runs);
    let report = experiment(&options, &mut mock, &[]);
    assert_eq!(report.looks.len(), 1);
    assert_eq!(report.looks[0].confidence, 0.95);
    assert_eq!(mock.calls.len(), 2 * 8 * 3);
}

#[test]
fn a_failure_mid_run_keeps_the_runs_before_it_and_analyzes_them() {
    let mut mock = MockExecutor::new(|call, name| {
        if call == 20 {
            Step::Fail(RunError::Signal(libc::SIGSEGV))
        } else {
            runs(call, name)
        }
    });
    let report = experiment(&options(), &mut mock, &[]);
    assert_eq!(report.status.state, State::RunFailed);
    assert!(report.status.message.clone().unwrap().contains("SIGSEGV"));
    assert_eq!(report.runs.len(), 20);
    assert_eq!(report.looks.len(), 1);
    assert_eq!(report.matrix.len(), 2);
}

#[test]
fn a_timeout_is_a_run_failure_with_its_cause() {
    let mut mock = MockExecutor::new(|call, name| {
        if call == 5 {
            Step::Timeout
        } else {
            runs(call, name)
        }
    });
    let report = experiment(&options(), &mut mock, &[]);
    assert_eq!(report.status.state, State::RunFailed);
    assert!(report.status.message.clone().unwrap().contains("timed out"));
    assert_eq!(report.runs.len(), 5);
}

#[test]
fn ctrl_c_keeps_the_runs_and_the_partial_json_holds_them() {
    let mut mock = MockExecutor::new(|call, name| {
        if call == 30 {
            Step::Interrupt
        } else {
            runs(call, name)
        }
    });
    let report = experiment(&options(), &mut mock, &[]);
    assert_eq!(report.status.state, State::Interrupted);
    assert_eq!(report.runs.len(), 30);
    let json = crate::report::json::written(&crate::layout::render::json::document(&report));
    assert_eq!(json["status"]["state"], "interrupted");
    assert_eq!(json["runs"].as_array().unwrap().len(), 30);
}

#[test]
fn a_failed_build_drops_its_seed_for_every_build() {
    let mut mock = MockExecutor::new(runs);
    let options = LayoutOptions {
        max_layouts: None,
        ..options()
    };
    let report = experiment(&options, &mut mock, &[2, 5]);
    assert_eq!(report.used_seeds, [0, 1, 3, 4, 6, 7]);
    assert!(mock
        .calls
        .iter()
        .all(|(name, ..)| !name.ends_with(" 2") && !name.ends_with(" 5")));
    assert_eq!(report.build_results.iter().filter(|r| !r.ok).count(), 2);
}

#[test]
fn a_run_cut_by_max_time_ends_the_batch_and_keeps_the_completed_runs() {
    let mut mock = MockExecutor::new(|call, name| {
        if call == 30 {
            Step::Fail(RunError::OutOfTime)
        } else {
            runs(call, name)
        }
    });
    let report = experiment(&options(), &mut mock, &[]);
    assert_eq!(report.status.state, State::BudgetExhausted);
    assert_eq!(report.status.message, None);
    assert_eq!(report.runs.len(), 30);
    assert!(report
        .notes
        .iter()
        .any(|n| matches!(n, Note::MaxTimeInBatch { .. })));
}
