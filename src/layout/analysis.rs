//! The analysis of a `layout` experiment's runs: per metric and build, the
//! default-layout ratio, the across-layouts ratio, the layout noise, the
//! verdict (ARTIFACT included) and why an undecided one stayed undecided.
//! Facts only: `render::prose` words the verdict sentence and the hint.

use super::{
    Comparison, LayoutOptions, LayoutRun, MatrixRow, NoDefaultInterval, RatioInterval, Undecided,
    VariantValue,
};
use crate::run::metric::Unit;
use crate::stats::descriptive::median;
use crate::stats::hierarchical::{
    decide_layout, layout_ratio, smallest_trustworthy_effect, spread_cv, LayoutDecision,
    LayoutRatio,
};
use crate::stats::verdict::{decide, Verdict};

/// The per-metric matrix: one row per build.
pub fn analyze(
    options: &LayoutOptions,
    metric_names: &[(String, Unit)],
    seeds: &[u64],
    runs: &[LayoutRun],
) -> Vec<MatrixRow> {
    analyze_at(options, metric_names, seeds, runs, options.alpha)
}

/// Metrics × candidate builds: the Bonferroni divisor.
pub fn comparisons(metrics: usize, builds: usize) -> usize {
    (metrics * builds.saturating_sub(1)).max(1)
}

/// [`analyze`] with the across-layouts intervals at family-wise level
/// `alpha` (what `--layouts auto` spends at one look) instead of
/// `options.alpha`. The default-layout intervals stay at `options.alpha`:
/// their data do not change between looks.
pub fn analyze_at(
    options: &LayoutOptions,
    metric_names: &[(String, Unit)],
    seeds: &[u64],
    runs: &[LayoutRun],
    alpha: f64,
) -> Vec<MatrixRow> {
    let comparisons = comparisons(metric_names.len(), options.builds.len());
    let confidence = 1.0 - alpha / comparisons as f64;
    let default_confidence = 1.0 - options.alpha / comparisons as f64;
    let mut rows = Vec::new();
    for (metric, unit) in metric_names {
        let direction = options.higher_is_better.direction(metric, *unit);
        // values[build][variant] = runs
        let values: Vec<Vec<Vec<f64>>> = (0..options.builds.len())
            .map(|b| {
                seeds
                    .iter()
                    .map(|&seed| {
                        runs.iter()
                            .filter(|r| r.build == b && r.seed == seed && !r.record.warmup)
                            .filter_map(|r| r.record.values.iter().find(|v| &v.name == metric))
                            .map(|v| v.value)
                            .collect()
                    })
                    .collect()
            })
            .collect();
        for (b, build) in options.builds.iter().enumerate() {
            let estimates: Vec<VariantValue> = seeds
                .iter()
                .zip(&values[b])
                .map(|(&seed, v)| VariantValue {
                    seed,
                    runs: v.len(),
                    estimate: options.estimator.of(v),
                })
                .collect();
            let spread = spread_cv(&estimates.iter().map(|e| e.estimate).collect::<Vec<_>>());
            let comparison = (b > 0).then(|| {
                compare(
                    options,
                    direction.higher_is_better(),
                    &values[0],
                    &values[b],
                    (default_confidence, confidence),
                )
            });
            rows.push(MatrixRow {
                build: build.name.clone(),
                metric: metric.clone(),
                unit: *unit,
                direction,
                default_value: estimates.first().map_or(f64::NAN, |e| e.estimate),
                spread_cv: spread,
                variants: estimates,
                comparison,
            });
        }
    }
    rows
}

/// One build against the baseline: default layout, controlled, verdict.
fn compare(
    options: &LayoutOptions,
    higher_is_better: bool,
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    (default_confidence, confidence): (f64, f64),
) -> Comparison {
    let LayoutDecision {
        default_ratio,
        default_verdict,
        controlled,
        controlled_verdict,
        artifact_share,
        verdict,
    } = decide_layout(
        a,
        b,
        options.estimator,
        (default_confidence, confidence),
        options.margin,
        higher_is_better,
    );
    let default_ratio = default_ratio.map(|(estimate, low, high)| RatioInterval {
        estimate,
        low,
        high,
    });
    let layout_noise = controlled.map_or(f64::NAN, |c| smallest_trustworthy_effect(c.log_ratio_sd));
    // "Reverses" only when the opposite direction is itself significant.
    let reverses = matches!(controlled_verdict, Verdict::Faster | Verdict::Slower)
        && matches!((default_ratio, controlled), (Some(d), Some(c)) if (d.estimate - 1.0) * (c.estimate - 1.0) < 0.0);
    let no_default_interval = default_ratio
        .is_none()
        .then(|| no_default_interval(a.first(), b.first()));
    let undecided = (verdict == Verdict::Unknown)
        .then(|| diagnose(options, higher_is_better, a, b, controlled, confidence));
    Comparison {
        default_ratio,
        default_verdict,
        controlled,
        controlled_verdict,
        layout_noise,
        verdict,
        artifact_share,
        reverses,
        undecided,
        no_default_interval,
    }
}

/// Why the default layout's runs (`a0`, `b0`) gave no interval.
fn no_default_interval(a0: Option<&Vec<f64>>, b0: Option<&Vec<f64>>) -> NoDefaultInterval {
    let (a0, b0) = (
        a0.map_or(&[][..], Vec::as_slice),
        b0.map_or(&[][..], Vec::as_slice),
    );
    if a0.len() < 2 || b0.len() < 2 {
        NoDefaultInterval::TooFewRuns {
            a: a0.len(),
            b: b0.len(),
        }
    } else if a0.iter().chain(b0).any(|&v| v <= 0.0) {
        NoDefaultInterval::NonPositive
    } else {
        NoDefaultInterval::Undefined
    }
}

/// Why an UNKNOWN across layouts, from the data.
pub fn diagnose(
    options: &LayoutOptions,
    higher_is_better: bool,
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    controlled: Option<LayoutRatio>,
    confidence: f64,
) -> Undecided {
    let Some(c) = controlled else {
        return Undecided::TooFewRuns;
    };
    let margin = options.margin;
    // Wild runs: far from their variant's median, against the pooled run
    // noise of both builds.
    let hib = higher_is_better;
    let wild = wild_runs(a, b, hib);
    if wild.runs > 0 {
        let clean = |side: &[Vec<f64>]| -> Vec<Vec<f64>> {
            side.iter()
                .map(|runs| {
                    runs.iter()
                        .zip(worse_than_best(runs, hib))
                        .filter(|&(_, d)| d <= wild.threshold)
                        .map(|(&v, _)| v)
                        .collect()
                })
                .collect()
        };
        let decided_without = layout_ratio(&clean(a), &clean(b), options.estimator, confidence)
            .is_some_and(|r| decide(r.low, r.high, margin, false) != Verdict::Unknown);
        if decided_without {
            return Undecided::RunOutliers {
                runs: wild.runs,
                of: wild.of,
                worst: wild.worst,
                variants: wild.variants,
            };
        }
    }
    // Layout spread: how many variants would shrink the interval enough.
    let (centre, half) = (c.estimate.ln(), (c.high.ln() - c.low.ln()) / 2.0);
    let edge = (1.0 + margin).ln();
    let room = (centre.abs() - edge).abs();
    let needed = if room > 0.0 {
        (c.variants as f64 * (half / room).powi(2) * 1.2).ceil()
    } else {
        f64::INFINITY
    };
    let budget = options.max_layouts.unwrap_or(64).max(64) * 4;
    if needed.is_finite() && needed <= budget as f64 {
        return Undecided::LayoutSpread {
            layouts: (needed as usize).max(c.variants + 1),
        };
    }
    Undecided::NearMargin {
        margin_for_same: (c.high - 1.0).max(1.0 - c.low),
        margin_for_effect: if c.low > 1.0 {
            Some(c.low - 1.0)
        } else if c.high < 1.0 {
            Some(1.0 - c.high)
        } else {
            None
        },
    }
}

/// Runs far from their variant's median.
struct WildRuns {
    runs: usize,
    of: usize,
    /// The largest log distance from its variant's best run.
    worst: f64,
    /// The log distance beyond which a run counts as wild.
    threshold: f64,
    /// Seeds (variant indexes) holding wild runs.
    variants: Vec<usize>,
}

/// A run is wild when it is worse than its variant's best run by more than
/// 5 robust standard deviations of the pooled run noise (1.4826 × the median
/// absolute log distance of all runs from their variant's median) and more
/// than 1%. Measured from the best run, not the median, because a busy machine
/// only ever makes runs worse: when most of a variant's few runs were slowed,
/// its median is one of them.
fn wild_runs(a: &[Vec<f64>], b: &[Vec<f64>], higher_is_better: bool) -> WildRuns {
    let mut distances = Vec::new();
    for runs in a.iter().chain(b) {
        let m = median(runs);
        distances.extend(runs.iter().map(|v| (v / m).ln().abs()));
    }
    let of = distances.len();
    distances.retain(|d| d.is_finite());
    let scale = 1.4826 * median(&distances);
    let threshold = (5.0 * scale).max(0.01);
    let mut wild = WildRuns {
        runs: 0,
        of,
        worst: 0.0,
        threshold,
        variants: Vec::new(),
    };
    for side in [a, b] {
        for (i, runs) in side.iter().enumerate() {
            for d in worse_than_best(runs, higher_is_better) {
                if d > threshold {
                    wild.runs += 1;
                    wild.worst = wild.worst.max(d);
                    if !wild.variants.contains(&i) {
                        wild.variants.push(i);
                    }
                }
            }
        }
    }
    wild.variants.sort_unstable();
    wild
}

/// How much worse than the best of `runs` each run is (log scale, in order).
fn worse_than_best(runs: &[f64], higher_is_better: bool) -> impl Iterator<Item = f64> + '_ {
    let best = if higher_is_better {
        runs.iter().copied().fold(f64::NAN, f64::max)
    } else {
        runs.iter().copied().fold(f64::NAN, f64::min)
    };
    runs.iter().map(move |&v| {
        if higher_is_better {
            (best / v).ln()
        } else {
            (v / best).ln()
        }
    })
}

#[cfg(test)]
mod tests;
