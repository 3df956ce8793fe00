//! Why an UNKNOWN `compare` metric is undecided, as facts with numbers: run
//! outliers, a forecast of the runs that would decide it (and which limit
//! stopped the run), and the margins that would decide it within the budget.
//! `render::hint` writes the sentences; docs/methodology.md §5 explains them.

use super::{Cause, Limit, MetricInput};
use crate::stats::descriptive::summarize;
use crate::stats::projection::{looks_between, projected_interval, runs_to_decide};
use crate::stats::sequential::Look;
use crate::stats::verdict::{decide, Verdict};

/// More runs is a sane suggestion up to this many times the runs made; beyond
/// it the margin, not the budget, is what stands in the way.
const SANE_RUNS_FACTOR: usize = 10;

/// Forecasts look this far (times the runs made) for a deciding run count.
const FORECAST_RUNS_FACTOR: usize = 100;

/// A long tail: at least this share of a side's runs beyond Tukey's inner fence
/// on the worse side (and at least 2 runs).
const TAIL_SHARE: f64 = 0.1;

/// What the budget allowed and how the time went, for the causes.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub stopped_by: Option<Limit>,
    pub max_runs: usize,
    pub max_time_s: f64,
    /// Time from the start of the experiment to its first measured round
    /// (setup, process-start calibration, warm-up).
    pub fixed_s: f64,
    /// Mean time of a measured round (one run of each command), if any ran.
    pub round_s: Option<f64>,
    pub pinned: bool,
}

impl Budget {
    /// Runs per command the limits allow (at least the runs made).
    pub fn runs_allowed(&self, runs_made: usize) -> usize {
        let by_time = match self.round_s {
            Some(r) if r > 0.0 => ((self.max_time_s - self.fixed_s) / r).max(0.0) as usize,
            _ => usize::MAX,
        };
        self.max_runs.min(by_time).max(runs_made)
    }

    /// A `--max-time` that would allow `runs` runs per command, with 15% to
    /// spare, rounded up to 10 s (under 2 min) or to whole minutes.
    pub fn time_for(&self, runs: usize) -> Option<f64> {
        let round = self.round_s.filter(|r| *r > 0.0)?;
        let seconds = 1.15 * (self.fixed_s + runs as f64 * round);
        Some(if seconds < 120.0 {
            (seconds / 10.0).ceil() * 10.0
        } else {
            (seconds / 60.0).ceil() * 60.0
        })
    }
}

/// Why an UNKNOWN is undecided, from the data, the look and the budget.
pub fn causes(input: &MetricInput, margin: f64, budget: Option<&Budget>) -> Vec<Cause> {
    let higher_is_better = input.direction.higher_is_better();
    let look = &input.look;
    let runs_made = look.n_a.min(look.n_b);
    if look.verdict != Verdict::Unknown || runs_made == 0 {
        return Vec::new();
    }
    let mut causes: Vec<Cause> = [input.a, input.b]
        .iter()
        .enumerate()
        .filter_map(|(side, xs)| outliers(side, xs, higher_is_better))
        .collect();
    if !(look.low.is_finite() && look.high.is_finite()) {
        causes.insert(0, Cause::TooFewRuns { runs: runs_made });
        return causes;
    }
    let forecast_limit = runs_made
        .saturating_mul(FORECAST_RUNS_FACTOR)
        .min(1_000_000);
    let needed = runs_to_decide(look, margin, higher_is_better, forecast_limit);
    let budget_runs = budget.map_or(runs_made, |b| b.runs_allowed(runs_made));
    let sane = needed.filter(|&n| n <= runs_made.saturating_mul(SANE_RUNS_FACTOR));
    if let Some(runs) = sane {
        causes.push(Cause::MoreRuns {
            runs,
            runs_made,
            stopped_by: budget.and_then(|b| b.stopped_by),
            max_runs: budget.filter(|b| runs > b.max_runs).map(|_| runs),
            max_time_s: budget
                .and_then(|b| b.time_for(runs))
                .filter(|&t| budget.is_some_and(|b| t > b.max_time_s)),
        });
    }
    if sane.is_none() || needed.is_some_and(|n| n > budget_runs) {
        if let Some(fact) = margin_within(look, budget_runs, needed, higher_is_better) {
            causes.push(fact);
        }
    }
    causes
}

/// The margins under which the interval forecast at `budget_runs` would decide.
fn margin_within(
    look: &Look,
    budget_runs: usize,
    runs_needed: Option<usize>,
    higher_is_better: bool,
) -> Option<Cause> {
    let runs_made = look.n_a.min(look.n_b);
    let steps = looks_between(runs_made, budget_runs);
    let (low, high) = projected_interval(look, budget_runs, steps)?;
    let direction = match decide(low, high, 0.0, higher_is_better) {
        v @ (Verdict::Faster | Verdict::Slower) => Some(v),
        _ => None,
    };
    let direction_margin = direction.map(|_| if low > 1.0 { low - 1.0 } else { 1.0 - high });
    Some(Cause::MarginWithinBudget {
        budget_runs,
        same_margin: (1.0 - low).max(high - 1.0),
        direction_margin,
        direction,
        runs_needed,
    })
}

/// Far-out runs or a long tail on the worse side of one command's runs (at least 5).
fn outliers(side: usize, xs: &[f64], higher_is_better: bool) -> Option<Cause> {
    let s = summarize(xs).filter(|s| s.n >= 5)?;
    let iqr = s.q3 - s.q1;
    if !(iqr > 0.0 && s.median != 0.0) {
        return None;
    }
    let (inner_low, inner_high) = (s.q1 - 1.5 * iqr, s.q3 + 1.5 * iqr);
    let tail = if higher_is_better {
        s.outliers_low
    } else {
        s.outliers_high
    };
    let long_tail = tail >= 2 && tail as f64 >= TAIL_SHARE * s.n as f64;
    if s.outliers_severe == 0 && !long_tail {
        return None;
    }
    let worst = xs
        .iter()
        .filter(|&&x| x < inner_low || x > inner_high)
        .map(|x| (x - s.median) / s.median.abs())
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))?;
    Some(Cause::RunOutliers {
        side,
        runs: s.n,
        far_out: s.outliers_severe,
        tail: if long_tail { tail } else { 0 },
        worst,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::metric::{Direction, Unit};

    fn look(ratio: f64, low: f64, high: f64, verdict: Verdict) -> Look {
        Look {
            look: 3,
            n_a: 20,
            n_b: 20,
            alpha: 0.004,
            ratio,
            low,
            high,
            verdict,
        }
    }

    /// 20 evenly spread values around `centre` (±0.5%), no outliers.
    fn calm(centre: f64) -> Vec<f64> {
        (0..20)
            .map(|i| centre * (1.0 + 0.0005 * ((i * 7 % 20) as f64 - 9.5)))
            .collect()
    }

    fn input<'a>(a: &'a [f64], b: &'a [f64], look: Look) -> MetricInput<'a> {
        MetricInput {
            name: "wall",
            unit: Unit::Seconds,
            direction: Direction::Lower,
            a,
            b,
            spawn_corrected: false,
            look,
            looks: 3,
        }
    }

    /// 60 s and 100 runs, 2 s before the first round, 2 s a round: time allows 29 rounds.
    fn budget(stopped_by: Option<Limit>) -> Budget {
        Budget {
            stopped_by,
            max_runs: 100,
            max_time_s: 60.0,
            fixed_s: 2.0,
            round_s: Some(2.0),
            pinned: false,
        }
    }

    #[test]
    fn a_decided_metric_has_no_causes() {
        let (a, b) = (calm(1.0), calm(1.0));
        let same = input(&a, &b, look(1.0, 0.995, 1.004, Verdict::Same));
        assert!(causes(&same, 0.01, Some(&budget(None))).is_empty());
    }

    #[test]
    fn far_out_runs_are_counted_with_how_far() {
        let a = calm(1.0);
        let mut b = calm(1.0);
        b[3] = 1.41;
        b[11] = 1.3;
        let causes = causes(
            &input(&a, &b, look(1.0, 0.99, 1.02, Verdict::Unknown)),
            0.01,
            None,
        );
        match &causes[0] {
            Cause::RunOutliers {
                side: 1,
                runs: 20,
                far_out: 2,
                worst,
                ..
            } => assert!((worst - 0.41).abs() < 0.005, "{worst}"),
            other => panic!("{other:?}"),
        }
        assert!(!causes[1..]
            .iter()
            .any(|c| matches!(c, Cause::RunOutliers { .. })));
    }

    #[test]
    fn a_long_slow_tail_counts_but_a_fast_one_does_not_for_times() {
        let a = calm(1.0);
        let mut b = calm(1.0);
        // Three of 20 runs at +1.4%: beyond 1.5 IQR (the IQR is about 0.5%), within 3 IQR.
        for i in [2, 9, 15] {
            b[i] = 1.014;
        }
        let l = look(1.0, 0.99, 1.02, Verdict::Unknown);
        let found = causes(&input(&a, &b, l.clone()), 0.01, None);
        assert!(
            matches!(
                found[0],
                Cause::RunOutliers {
                    side: 1,
                    far_out: 0,
                    tail: 3,
                    ..
                }
            ),
            "{found:?}"
        );
        // For a throughput, high values are the good side: no tail to blame.
        let throughput = MetricInput {
            direction: Direction::Higher,
            ..input(&a, &b, l)
        };
        let found = causes(&throughput, 0.01, None);
        assert!(
            !found.iter().any(|c| matches!(c, Cause::RunOutliers { .. })),
            "{found:?}"
        );
    }

    #[test]
    fn the_limit_that_stopped_is_the_one_raised() {
        // The lz4 case: --max-time stopped the run at 28 runs while --max-runs was 100.
        let (a, b) = (calm(1.0), calm(1.03));
        let mut l = look(1.03, 1.005, 1.055, Verdict::Unknown);
        l.n_a = 28;
        l.n_b = 28;
        let found = causes(&input(&a, &b, l), 0.01, Some(&budget(Some(Limit::MaxTime))));
        let Some(Cause::MoreRuns {
            runs,
            runs_made: 28,
            stopped_by: Some(Limit::MaxTime),
            max_runs: None,
            max_time_s: Some(t),
        }) = found.first().cloned()
        else {
            panic!("{found:?}")
        };
        assert!((40..=100).contains(&runs), "{runs}");
        assert!(
            t > 60.0 && t >= 1.15 * (2.0 + 2.0 * runs as f64) - 1e-9,
            "{t}"
        );
        // With these runs, the margins that decide: SAME from about 5.5%, SLOWER under 0.5%.
        assert!(
            matches!(
                found[1],
                Cause::MarginWithinBudget {
                    budget_runs: 29,
                    ..
                }
            ),
            "{found:?}"
        );
    }

    #[test]
    fn max_runs_stopping_asks_for_more_runs_and_time_only_if_needed() {
        let (a, b) = (calm(1.0), calm(1.03));
        let mut l = look(1.03, 1.005, 1.055, Verdict::Unknown);
        l.n_a = 20;
        l.n_b = 20;
        let mut roomy = budget(Some(Limit::MaxRuns));
        roomy.max_runs = 20;
        roomy.max_time_s = 3600.0;
        let found = causes(&input(&a, &b, l), 0.01, Some(&roomy));
        assert!(
            matches!(
                found[0],
                Cause::MoreRuns {
                    stopped_by: Some(Limit::MaxRuns),
                    max_runs: Some(_),
                    max_time_s: None,
                    ..
                }
            ),
            "{found:?}"
        );
    }

    #[test]
    fn an_effect_on_the_margin_gets_the_margin_that_decides() {
        // 1% slower with a ±1.5% interval at 100 runs, --max-runs spent: no run count helps.
        let (a, b) = (calm(1.0), calm(1.01));
        let mut l = look(1.01, 0.995, 1.025, Verdict::Unknown);
        l.n_a = 100;
        l.n_b = 100;
        let found = causes(&input(&a, &b, l), 0.01, Some(&budget(Some(Limit::MaxRuns))));
        let [Cause::MarginWithinBudget {
            budget_runs: 100,
            same_margin,
            direction_margin: None,
            direction: None,
            runs_needed: None,
        }] = found.as_slice()
        else {
            panic!("{found:?}")
        };
        assert!((same_margin - 0.025).abs() < 1e-9, "{same_margin}");
    }

    #[test]
    fn no_finite_interval_asks_for_runs() {
        let (a, b) = (calm(1.0), calm(1.0));
        let mut l = look(1.0, f64::NAN, f64::NAN, Verdict::Unknown);
        l.n_a = 3;
        l.n_b = 3;
        let found = causes(&input(&a, &b, l), 0.01, None);
        assert_eq!(found[0], Cause::TooFewRuns { runs: 3 });
    }

    #[test]
    fn no_runs_no_causes() {
        let mut l = look(f64::NAN, f64::NAN, f64::NAN, Verdict::Unknown);
        l.n_a = 0;
        l.n_b = 0;
        assert!(causes(&input(&[], &[], l), 0.01, None).is_empty());
    }
}
