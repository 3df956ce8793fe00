//! Per-metric analysis of an A/B experiment: summaries, estimators, tests, the
//! verdict, and for an UNKNOWN the causes that kept it undecided. It returns
//! facts (`MetricReport`: numbers, verdicts, causes); `render` words them.
//!
//! The verdict comes from the sequential (anytime-valid) CI of the last look: it
//! is the one interval to quote. The bootstrap CI, Hodges–Lehmann shift and
//! p-values are descriptive, at the nominal level of one fixed-size test; the
//! reports show them only with `--verbose` and in the JSON, labelled so.

use super::causes::{self, Budget};
use super::{MetricInput, MetricReport, Note};
use crate::stats::bootstrap::{self, BootstrapMethod};
use crate::stats::descriptive::median;
use crate::stats::descriptive::summarize;
use crate::stats::mann_whitney::mann_whitney;
use crate::stats::multiple::holm;
use crate::stats::shift::{cliffs_delta, hodges_lehmann};
use crate::stats::welch::welch;

/// Bootstrap resamples for the reported ratio-of-medians CI.
const BOOTSTRAP_RESAMPLES: usize = 2000;
/// The most values drawn over all resamples (issue 23): past 100,000 values
/// a side the resamples drop below 2000, to no fewer than
/// [`BOOTSTRAP_MIN_RESAMPLES`], so a million a side takes seconds, not
/// minutes. The bootstrap interval is a cross-check of the verdict's own
/// interval, which does not depend on it.
const BOOTSTRAP_DRAWS: usize = 400_000_000;
/// The fewest resamples for the ratio-of-medians CI, however large the data.
const BOOTSTRAP_MIN_RESAMPLES: usize = 200;

/// Resamples for samples of `values` values in all: [`BOOTSTRAP_RESAMPLES`]
/// within [`BOOTSTRAP_DRAWS`], never fewer than [`BOOTSTRAP_MIN_RESAMPLES`].
fn bootstrap_resamples(values: usize) -> usize {
    (BOOTSTRAP_DRAWS / values.max(1)).clamp(BOOTSTRAP_MIN_RESAMPLES, BOOTSTRAP_RESAMPLES)
}

/// Analyze every metric, then adjust p-values across them (Holm). Without a
/// budget (data measured elsewhere) the causes speak of the runs at hand.
pub fn analyze(inputs: &[MetricInput], margin: f64, alpha: f64, seed: u64) -> Vec<MetricReport> {
    analyze_within(inputs, margin, alpha, seed, None)
}

/// [`analyze`] for an experiment that ran under `budget`.
pub fn analyze_within(
    inputs: &[MetricInput],
    margin: f64,
    alpha: f64,
    seed: u64,
    budget: Option<&Budget>,
) -> Vec<MetricReport> {
    let mut reports: Vec<MetricReport> = inputs
        .iter()
        .map(|input| MetricReport {
            causes: causes::causes(input, margin, budget),
            ..analyze_one(input, alpha, seed)
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

/// For every metric with values ≤ 0: how many, and whether its interval is
/// on the difference scale (A's median above 0) or missing.
pub fn non_positive(inputs: &[MetricInput]) -> Vec<Note> {
    inputs
        .iter()
        .filter_map(|input| {
            let count = |xs: &[f64]| xs.iter().filter(|&&x| x <= 0.0).count();
            let (a, b) = (count(input.a), count(input.b));
            (a + b > 0).then(|| Note::NonPositive {
                metric: input.name.to_string(),
                a,
                b,
                difference_scale: median(input.a) > 0.0,
            })
        })
        .collect()
}

fn analyze_one(input: &MetricInput, alpha: f64, seed: u64) -> MetricReport {
    let look = &input.look;
    let (a, b) = (input.a, input.b);
    MetricReport {
        name: input.name.to_string(),
        unit: input.unit,
        direction: input.direction,
        spawn_corrected: input.spawn_corrected,
        runs: [look.n_a, look.n_b],
        a: summarize(a),
        b: summarize(b),
        verdict: look.verdict,
        ratio: look.ratio,
        ci_low: look.low,
        ci_high: look.high,
        ci_level: 1.0 - alpha,
        look_alpha: look.alpha,
        looks: input.looks,
        causes: Vec::new(),
        bootstrap_ratio_of_medians: bootstrap::ratio_of_medians(
            a,
            b,
            0.95,
            bootstrap_resamples(a.len() + b.len()),
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

#[cfg(test)]
mod tests {

    #[test]
    fn bootstrap_resamples_shrink_only_for_large_samples() {
        assert_eq!(bootstrap_resamples(20), BOOTSTRAP_RESAMPLES);
        assert_eq!(bootstrap_resamples(200_000), BOOTSTRAP_RESAMPLES);
        assert_eq!(bootstrap_resamples(400_000), 1000);
        assert_eq!(bootstrap_resamples(2_000_000), BOOTSTRAP_MIN_RESAMPLES);
        assert_eq!(bootstrap_resamples(usize::MAX), BOOTSTRAP_MIN_RESAMPLES);
    }

    use super::*;
    use crate::run::metric::Unit;
    use crate::stats::sequential::Look;
    use crate::stats::verdict::Verdict;

    #[test]
    fn the_report_carries_the_looks_numbers_and_adjusts_p_values_across_metrics() {
        let a: Vec<f64> = (0..10).map(|i| 1.0 + 0.001 * i as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.2).collect();
        let look = Look {
            look: 2,
            n_a: 10,
            n_b: 10,
            alpha: 0.004,
            ratio: 1.2,
            low: 1.19,
            high: 1.21,
            verdict: Verdict::Slower,
        };
        let input = |name| MetricInput {
            name,
            unit: Unit::Seconds,
            direction: crate::run::metric::Direction::Lower,
            a: &a,
            b: &b,
            spawn_corrected: false,
            look: look.clone(),
            looks: 2,
        };
        let reports = analyze(&[input("wall"), input("user")], 0.01, 0.05, 1);
        let m = &reports[0];
        assert_eq!((m.verdict, m.runs, m.looks), (Verdict::Slower, [10, 10], 2));
        assert_eq!((m.ci_low, m.ci_high, m.look_alpha), (1.19, 1.21, 0.004));
        assert!(m.causes.is_empty());
        let (p, adjusted) = (m.welch.as_ref().unwrap().p, m.welch_p_holm.unwrap());
        assert!(
            adjusted >= p && adjusted <= (2.0 * p).min(1.0) + 1e-12,
            "{p} {adjusted}"
        );
    }
}
