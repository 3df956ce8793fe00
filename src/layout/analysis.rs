//! The analysis of a `layout` experiment's runs: per metric and build, the
//! default-layout ratio, the across-layouts ratio, the layout noise, the
//! verdict (ARTIFACT included) and why an undecided one stayed undecided.
//! Facts only: `render::prose` words the verdict sentence and the hint.

use super::{
    Comparison, LayoutOptions, LayoutRun, MatrixRow, NoDefaultInterval, RatioInterval, Undecided,
    VariantValue,
};
use crate::run::metric::Unit;
use crate::stats::descriptive::{mean, median, sample_variance};
use crate::stats::fragility::WildRuns;
use crate::stats::hierarchical::{
    decide_layout, smallest_trustworthy_effect, spread_cv, Estimator, LayoutDecision, LayoutRatio,
};
use crate::stats::verdict::Verdict;

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
                    estimate: options.estimator.of(v, direction.higher_is_better()),
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
        fragility,
        wild,
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
    let placement_points = match (verdict, default_ratio, controlled) {
        (Verdict::Faster | Verdict::Slower, Some(d), Some(c))
            if d.estimate < c.low || d.estimate > c.high =>
        {
            Some(d.estimate - c.estimate)
        }
        _ => None,
    };
    let no_default_interval = default_ratio
        .is_none()
        .then(|| no_default_interval(a.first(), b.first()));
    let undecided = (verdict == Verdict::Unknown).then(|| {
        diagnose(
            options,
            (a, b),
            higher_is_better,
            controlled.map(|c| (c, wild)),
        )
    });
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
        fragility,
        placement_points,
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

/// Why an UNKNOWN across layouts, from the data: too few runs; a busy
/// machine (10% or more of the runs set aside as wild); run noise within
/// layouts making most of the spread (more rounds); layout spread (more
/// layouts); or an estimate too close to the margin for any budget.
pub fn diagnose(
    options: &LayoutOptions,
    (a, b): (&[Vec<f64>], &[Vec<f64>]),
    higher_is_better: bool,
    controlled: Option<(LayoutRatio, WildRuns)>,
) -> Undecided {
    let Some((c, wild)) = controlled else {
        return Undecided::TooFewRuns;
    };
    let margin = options.margin;
    if wild.runs > 0 && wild.runs * 10 >= wild.of {
        return Undecided::RunOutliers {
            runs: wild.runs,
            of: wild.of,
            worst: wild.worst,
            variants: wild.variants,
        };
    }
    let (centre, half) = (c.estimate.ln(), (c.high.ln() - c.low.ln()) / 2.0);
    let edge = (1.0 + margin).ln();
    let room = (centre.abs() - edge).abs();
    // The share of the per-layout ratios' variance that run noise makes.
    let (share, runs_per_cell) = run_noise_share(options, (a, b), higher_is_better, c.log_ratio_sd);
    // The most layouts the hint may suggest; rounds get the same number of
    // runs, so neither remedy wins for its cap alone (when run noise is all
    // of the spread, a round and a layout shrink the interval alike, and
    // the round costs no build).
    let budget = options.max_layouts.unwrap_or(64).max(64) * 4;
    if share > 0.5 && room > 0.0 {
        // Run noise shrinks with rounds; the layout part does not.
        let per_cell = share * c.log_ratio_sd.powi(2);
        let layout_part = c.log_ratio_sd.powi(2) - per_cell;
        let target = (room / half).powi(2) * c.log_ratio_sd.powi(2) / 1.2;
        if target > layout_part {
            let factor = per_cell / (target - layout_part);
            // Rounds per cell, from the runs a cell has now (more than
            // --rounds after `--layouts auto` added rounds).
            let now = runs_per_cell.max(options.rounds as f64);
            let rounds = (now * factor).ceil();
            let cap = (budget as f64 * now / c.variants.max(1) as f64).max(16.0);
            if rounds.is_finite() && rounds <= cap {
                return Undecided::RunNoise {
                    share,
                    rounds: (rounds as usize).max(now.round() as usize + 1),
                };
            }
        }
    }
    // Layout spread: how many variants would shrink the interval enough.
    let needed = if room > 0.0 {
        (c.variants as f64 * (half / room).powi(2) * 1.2).ceil()
    } else {
        f64::INFINITY
    };
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

/// The share (0–1) of the variance of the per-layout log ratios that run
/// noise within layouts explains, and the mean runs a cell.
///
/// For a median: the pooled within-cell variance of the log runs, times π/2
/// (its efficiency under normal noise), divided by the runs a cell and
/// doubled for two builds, over the variance of the log ratios (0 when it
/// cannot be told).
///
/// For a min, var/n is no model: a busy machine slows runs one way, so a
/// cell's runs vary widely while its fastest run hardly moves. Each cell's
/// runs are split in two (alternate runs) and the halves' minima compared:
/// half the mean squared log difference is the variance of a min of half
/// the runs, an upper bound on that of the cell's min (doubled for two
/// builds).
///
/// For paired ratios, the same split on each layout's pairs.
fn run_noise_share(
    options: &LayoutOptions,
    (a, b): (&[Vec<f64>], &[Vec<f64>]),
    higher_is_better: bool,
    sd: f64,
) -> (f64, f64) {
    let (mut sum, mut df, mut runs, mut cells) = (0.0, 0usize, 0usize, 0usize);
    let (mut halves, mut split) = (0.0, 0usize);
    if options.estimator == Estimator::Paired {
        // Each layout's pairs split in two (alternate rounds) and the
        // halves' medians compared: half the mean squared difference is the
        // variance of a median of half the pairs, an upper bound on that of
        // the layout's (one pair holds both builds: no doubling).
        for (x, y) in a.iter().zip(b) {
            let logs: Vec<f64> = x
                .iter()
                .zip(y)
                .filter(|(u, v)| **u > 0.0 && **v > 0.0)
                .map(|(u, v)| (v / u).ln())
                .collect();
            if logs.len() < 2 {
                continue;
            }
            let half = |parity: usize| {
                median(
                    &logs
                        .iter()
                        .skip(parity)
                        .step_by(2)
                        .copied()
                        .collect::<Vec<_>>(),
                )
            };
            halves += (half(0) - half(1)).powi(2) / 2.0;
            split += 1;
            runs += 2 * logs.len();
            cells += 2;
        }
        if split == 0 || sd.is_nan() || sd <= 0.0 {
            return (0.0, 0.0);
        }
        let per_layout = halves / split as f64;
        return (
            (per_layout / sd.powi(2)).clamp(0.0, 1.0),
            runs as f64 / cells as f64,
        );
    }
    for cell in a.iter().chain(b) {
        let logs: Vec<f64> = cell.iter().filter(|v| **v > 0.0).map(|v| v.ln()).collect();
        if logs.len() < 2 {
            continue;
        }
        sum += sample_variance(&logs, mean(&logs)) * (logs.len() - 1) as f64;
        df += logs.len() - 1;
        runs += logs.len();
        cells += 1;
        // The best run of each half (`Estimator::Min`'s estimate).
        let least = |parity: usize| {
            let half = logs.iter().skip(parity).step_by(2);
            if higher_is_better {
                half.fold(f64::NEG_INFINITY, |m, v| m.max(*v))
            } else {
                half.fold(f64::INFINITY, |m, v| m.min(*v))
            }
        };
        halves += (least(0) - least(1)).powi(2) / 2.0;
        split += 1;
    }
    if df == 0 || cells == 0 || sd.is_nan() || sd <= 0.0 {
        return (0.0, 0.0);
    }
    let runs_per_cell = runs as f64 / cells as f64;
    let per_cell = match options.estimator {
        Estimator::Median => sum / df as f64 * std::f64::consts::FRAC_PI_2 / runs_per_cell * 2.0,
        Estimator::Min | Estimator::Paired => halves / split as f64 * 2.0,
    };
    ((per_cell / sd.powi(2)).clamp(0.0, 1.0), runs_per_cell)
}

#[cfg(test)]
mod tests;
