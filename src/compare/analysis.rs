//! Per-metric analysis of an A/B experiment: summaries, estimators, tests, the
//! verdict with the sentence that explains it, and for an UNKNOWN the causes
//! that kept it undecided (as facts; `report::hint` writes the sentences).
//!
//! The verdict comes from the sequential (anytime-valid) CI of the last look: it
//! is the one interval to quote. The bootstrap CI, Hodges–Lehmann shift and
//! p-values are descriptive, at the nominal level of one fixed-size test; the
//! reports show them only with `--verbose` and in the JSON, labelled so.

use super::Limit;
use crate::report::{format, hint};
use crate::run::metric::Unit;
use crate::stats::bootstrap::{self, BootstrapMethod, Interval};
use crate::stats::descriptive::{summarize, Summary};
use crate::stats::mann_whitney::{mann_whitney, MannWhitney};
use crate::stats::multiple::holm;
use crate::stats::projection::{looks_between, projected_interval, runs_to_decide};
use crate::stats::sequential::Look;
use crate::stats::shift::{cliffs_delta, hodges_lehmann, Shift};
use crate::stats::verdict::{decide, Verdict};
use crate::stats::welch::{welch, Welch};
use serde::Serialize;

/// Bootstrap resamples for the reported ratio-of-medians CI.
const BOOTSTRAP_RESAMPLES: usize = 2000;

/// More runs is a sane suggestion up to this many times the runs made; beyond
/// it the margin, not the budget, is what stands in the way.
const SANE_RUNS_FACTOR: usize = 10;

/// Forecasts look this far (times the runs made) for a deciding run count.
const FORECAST_RUNS_FACTOR: usize = 100;

/// A long tail: at least this share of a side's runs beyond Tukey's inner fence
/// on the worse side (and at least 2 runs).
const TAIL_SHARE: f64 = 0.1;

/// Everything reported about one metric.
#[derive(Debug, Clone, Serialize)]
pub struct MetricReport {
    pub name: String,
    pub unit: Unit,
    pub higher_is_better: bool,
    /// True when the process-start overhead was subtracted (wall only).
    pub spawn_corrected: bool,
    pub a: Option<Summary>,
    pub b: Option<Summary>,
    pub verdict: Verdict,
    /// Ratio B/A and its anytime-valid CI, the basis of the verdict.
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The confidence the CI holds with, over all looks together (1 − alpha).
    pub ci_level: f64,
    /// The alpha spent on this metric at the deciding look.
    pub look_alpha: f64,
    pub looks: usize,
    pub sentence: String,
    /// Why an UNKNOWN is undecided, as facts (empty for a verdict).
    pub causes: Vec<Cause>,
    /// What would resolve an UNKNOWN: the causes in words.
    pub hint: Option<String>,
    pub bootstrap_ratio_of_medians: Option<Interval>,
    pub hodges_lehmann_shift: Option<Shift>,
    pub cliffs_delta: f64,
    pub welch: Option<Welch>,
    pub mann_whitney: Option<MannWhitney>,
    /// Holm–Bonferroni adjusted p-values across the experiment's metrics.
    pub welch_p_holm: Option<f64>,
    pub mann_whitney_p_holm: Option<f64>,
}

/// The inputs for one metric.
pub struct MetricInput<'a> {
    pub name: &'a str,
    pub unit: Unit,
    pub a: &'a [f64],
    pub b: &'a [f64],
    pub spawn_corrected: bool,
    pub look: Look,
    pub looks: usize,
}

/// Why a metric is UNKNOWN: one fact with its numbers. A metric may have several
/// (outliers on both sides, more runs and a wider margin).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// Too few runs for a finite interval at the look's level.
    TooFewRuns { runs: usize },
    /// One side has runs beyond Tukey's outer fence (3·IQR, either side), or a
    /// long tail on the worse side (at least 10% of its runs, and 2, beyond the
    /// 1.5·IQR fence).
    RunOutliers {
        /// 0 = A, 1 = B.
        side: usize,
        runs: usize,
        far_out: usize,
        tail: usize,
        /// The outlier farthest from the side's median, relative to it (+0.41: 41% above).
        worst: f64,
    },
    /// About `runs` per command would likely decide it (a forecast from the
    /// interval's shrinkage along the look schedule).
    MoreRuns {
        runs: usize,
        runs_made: usize,
        /// The limit that stopped the experiment, when one did.
        stopped_by: Option<Limit>,
        /// A `--max-runs` that allows `runs`, when the current one does not.
        max_runs: Option<usize>,
        /// A `--max-time` (seconds) that allows `runs`, when the current one does not.
        max_time_s: Option<f64>,
    },
    /// Within the budget the run noise is too large for this margin: the margins
    /// under which the interval forecast at the budget's run count would decide.
    MarginWithinBudget {
        /// Runs per command the budget allows (the runs made, without a budget).
        budget_runs: usize,
        /// SAME needs a margin of at least this (fraction).
        same_margin: f64,
        /// FASTER/SLOWER (`direction`) needs a margin below this, when the
        /// interval excludes 1.
        direction_margin: Option<f64>,
        direction: Option<Verdict>,
        /// Runs per command this margin would need, when within 100× the runs made.
        runs_needed: Option<usize>,
    },
}

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

/// Analyse every metric, then adjust p-values across them (Holm). Without a
/// budget (data measured elsewhere) the hints speak of the runs at hand.
pub fn analyse(
    inputs: &[MetricInput],
    names: [&str; 2],
    margin: f64,
    alpha: f64,
    higher_is_better: bool,
    seed: u64,
) -> Vec<MetricReport> {
    analyse_within(inputs, names, margin, alpha, higher_is_better, seed, None)
}

/// [`analyse`] for an experiment that ran under `budget`.
pub fn analyse_within(
    inputs: &[MetricInput],
    names: [&str; 2],
    margin: f64,
    alpha: f64,
    higher_is_better: bool,
    seed: u64,
    budget: Option<&Budget>,
) -> Vec<MetricReport> {
    let mut reports: Vec<MetricReport> = inputs
        .iter()
        .map(|input| {
            let mut report = analyse_one(input, names, margin, alpha, higher_is_better, seed);
            report.causes = causes(input, margin, higher_is_better, budget);
            report.hint = hint::compare(
                &report.causes,
                names,
                margin,
                &report.name,
                budget.is_some_and(|b| b.pinned),
            );
            report
        })
        .collect();
    let welch_p: Vec<f64> = reports
        .iter()
        .map(|r| r.welch.as_ref().map_or(1.0, |w| w.p))
        .collect();
    let mw_p: Vec<f64> = reports
        .iter()
        .map(|r| r.mann_whitney.as_ref().map_or(1.0, |m| m.p))
        .collect();
    for (i, (w, m)) in holm(&welch_p).into_iter().zip(holm(&mw_p)).enumerate() {
        reports[i].welch_p_holm = reports[i].welch.as_ref().map(|_| w);
        reports[i].mann_whitney_p_holm = reports[i].mann_whitney.as_ref().map(|_| m);
    }
    reports
}

fn analyse_one(
    input: &MetricInput,
    names: [&str; 2],
    margin: f64,
    alpha: f64,
    higher_is_better: bool,
    seed: u64,
) -> MetricReport {
    let look = &input.look;
    let (a, b) = (input.a, input.b);
    MetricReport {
        name: input.name.to_string(),
        unit: input.unit,
        higher_is_better,
        spawn_corrected: input.spawn_corrected,
        a: summarize(a),
        b: summarize(b),
        verdict: look.verdict,
        ratio: look.ratio,
        ci_low: look.low,
        ci_high: look.high,
        ci_level: 1.0 - alpha,
        look_alpha: look.alpha,
        looks: input.looks,
        sentence: sentence(input.name, names, look, margin, higher_is_better),
        causes: Vec::new(),
        hint: None,
        bootstrap_ratio_of_medians: bootstrap::ratio_of_medians(
            a,
            b,
            0.95,
            BOOTSTRAP_RESAMPLES,
            seed,
            BootstrapMethod::Bca,
        ),
        hodges_lehmann_shift: hodges_lehmann(a, b, 0.95),
        cliffs_delta: cliffs_delta(a, b),
        welch: welch(a, b),
        mann_whitney: mann_whitney(a, b),
        welch_p_holm: None,
        mann_whitney_p_holm: None,
    }
}

/// "B is 1.97× slower than A": the verdict sentence with its numbers.
pub fn sentence(
    metric: &str,
    [a, b]: [&str; 2],
    look: &Look,
    margin: f64,
    higher_is_better: bool,
) -> String {
    if look.n_a == 0 || look.n_b == 0 {
        return format!(
            "{a} vs {b} on {metric} is not decided: no measured runs ({} + {})",
            look.n_a, look.n_b
        );
    }
    let ci = format!(
        "ratio {} [{}, {}]",
        fmt_ratio(look.ratio),
        fmt_ratio(look.low),
        fmt_ratio(look.high)
    );
    let change = describe_change(look.ratio, higher_is_better);
    let margin_pct = format!("±{}%", format::trimmed(margin * 100.0));
    match look.verdict {
        Verdict::Faster | Verdict::Slower => format!("{b} is {change} than {a} on {metric}: {ci}"),
        Verdict::Same => format!("{a} and {b} are the same on {metric} within {margin_pct}: {ci}"),
        Verdict::Artifact => format!("{b} vs {a} on {metric} is a layout artifact: {ci}"),
        Verdict::Unknown => format!(
            "{a} vs {b} on {metric} is not decided: {ci} is not clear of the {margin_pct} margin"
        ),
    }
}

/// "1.97× slower" or "4.8% faster", from the ratio B/A.
fn describe_change(ratio: f64, higher_is_better: bool) -> String {
    let better = if higher_is_better {
        ratio > 1.0
    } else {
        ratio < 1.0
    };
    let word = if better { "faster" } else { "slower" };
    let factor = if ratio >= 1.0 { ratio } else { 1.0 / ratio };
    if factor >= 1.5 {
        format!("{factor:.2}× {word}")
    } else {
        format!("{:.1}% {word}", (factor - 1.0) * 100.0)
    }
}

/// Why an UNKNOWN is undecided, from the data, the look and the budget.
pub fn causes(
    input: &MetricInput,
    margin: f64,
    higher_is_better: bool,
    budget: Option<&Budget>,
) -> Vec<Cause> {
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

pub fn fmt_ratio(r: f64) -> String {
    if r.is_nan() {
        "n/a".to_string()
    } else if r.is_finite() {
        format!("{r:.3}")
    } else if r > 0.0 {
        "∞".to_string()
    } else {
        "0".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn sentences_state_direction_and_size() {
        let s = sentence(
            "wall",
            ["A", "B"],
            &look(1.97, 1.95, 1.99, Verdict::Slower),
            0.01,
            false,
        );
        assert_eq!(
            s,
            "B is 1.97× slower than A on wall: ratio 1.970 [1.950, 1.990]"
        );
        let s = sentence(
            "wall",
            ["A", "B"],
            &look(0.952, 0.94, 0.96, Verdict::Faster),
            0.01,
            false,
        );
        assert!(s.starts_with("B is 5.0% faster than A"), "{s}");
        let s = sentence(
            "ops",
            ["A", "B"],
            &look(1.05, 1.04, 1.06, Verdict::Faster),
            0.01,
            true,
        );
        assert!(s.starts_with("B is 5.0% faster"), "{s}");
        let s = sentence(
            "wall",
            ["A", "B"],
            &look(1.0, 0.995, 1.004, Verdict::Same),
            0.01,
            false,
        );
        assert!(s.contains("same on wall within ±1%"), "{s}");
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
        assert!(causes(&same, 0.01, false, Some(&budget(None))).is_empty());
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
            false,
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
        let found = causes(&input(&a, &b, l.clone()), 0.01, false, None);
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
        let found = causes(&input(&a, &b, l), 0.01, true, None);
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
        let found = causes(
            &input(&a, &b, l),
            0.01,
            false,
            Some(&budget(Some(Limit::MaxTime))),
        );
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
        let text = hint::compare(&found, ["A", "B"], 0.01, "wall", false).unwrap();
        assert!(
            text.contains("--max-time stopped the run at 28: try --max-time"),
            "{text}"
        );
        assert!(!text.contains("--max-runs"), "{text}");
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
        let found = causes(&input(&a, &b, l), 0.01, false, Some(&roomy));
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
        let found = causes(
            &input(&a, &b, l),
            0.01,
            false,
            Some(&budget(Some(Limit::MaxRuns))),
        );
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
        let text = hint::compare(&found, ["A", "B"], 0.01, "wall", false).unwrap();
        assert!(text.contains("--margin 2.5 would call it SAME"), "{text}");
    }

    #[test]
    fn no_finite_interval_asks_for_runs() {
        let (a, b) = (calm(1.0), calm(1.0));
        let mut l = look(1.0, f64::NAN, f64::NAN, Verdict::Unknown);
        l.n_a = 3;
        l.n_b = 3;
        let found = causes(&input(&a, &b, l), 0.01, false, None);
        assert_eq!(found[0], Cause::TooFewRuns { runs: 3 });
    }

    #[test]
    fn no_runs_on_a_side_is_said_not_printed_as_numbers() {
        let mut l = look(f64::NAN, f64::NAN, f64::NAN, Verdict::Unknown);
        l.n_a = 0;
        l.n_b = 0;
        let s = sentence("wall", ["A", "B"], &l, 0.01, false);
        assert_eq!(s, "A vs B on wall is not decided: no measured runs (0 + 0)");
        let input = input(&[], &[], l);
        assert!(causes(&input, 0.01, false, None).is_empty());
        assert_eq!(fmt_ratio(f64::NAN), "n/a");
    }
}
