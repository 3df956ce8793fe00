//! The across-layouts effect of `layout`: runs nested in layout variants,
//! summarised per variant, then an analytic interval over the variants.
//!
//! Each build s is measured under matched layout variants i = 0..n (the same
//! seeds for every build). Wild runs (a busy machine's: worse than another
//! run of the same binary in the same layout by more than run noise allows)
//! are set aside first (`fragility::set_aside_wild_runs`). Per variant, a
//! robust estimate m[s][i] (median or min of the kept runs) summarises the
//! runs; the per-variant effect is d[i] = log(m[B][i] / m[A][i]), or, for
//! `Estimator::Paired`, the median of the back-to-back pairs' log ratios
//! (`paired_log`). The
//! variants are the unit of replication: layout moves a whole variant's runs
//! together, and the run noise is already inside each d[i].
//!
//! The interval is Student's t over the d[i]: it targets the *mean* effect
//! over the layout distribution, which is what a user of the build gets.
//! Round 3 used Yuen's 20%-trimmed t here, which targets the typical layout
//! and trimmed away a one-sided ghost (one build slow in 1 layout of 8); a
//! layout effect is never trimmed now, only runs proven to be run-level
//! contamination, and layouts that stand out reproducibly are reported as
//! fragility (`fragility::fragile_layouts`). When the values are printed on
//! a coarse decimal step, the rounding bound is folded into every interval
//! (`resolution`), so no interval on varying data has zero width.
//! docs/methodology.md §10 has the simulations.

use super::descriptive::{mean, median, sample_variance};
use super::distributions::student_t_quantile;
use super::fragility::{
    fragile_layouts, lone_best_outliers, set_aside_wild_runs, unconfirmed_outliers,
    worse_than_best, Cleaned, Fragility, WildRuns,
};
use super::resolution::{decimal_step, material, rounding_half_width};
use super::verdict::{artifact, decide, Verdict};
use serde::Serialize;

/// The fraction trimmed from each end by Yuen's trimmed t (`trimmed_t`,
/// used for the per-CPU-model estimates of shards and the default layout).
pub const TRIM: f64 = 0.2;

/// How one variant's runs are summarised into its estimate m[s][i].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Estimator {
    /// Robust to the long right tail of run times; the default.
    Median,
    /// The least-disturbed run (the fastest for a cost, the highest for a
    /// higher-is-better metric): for very noisy machines and short runs. A
    /// layout whose difference rests on one cell's lone best run is left out
    /// (`fragility::lone_best_outliers`). Spelled `min` on the command line
    /// and in documents.
    Min,
    /// Per layout, the median of the ratios of back-to-back pairs: B's and
    /// A's k-th runs of a layout, which `layout` runs next to each other,
    /// leaving out pairs with a wild run. On a busy host whose speed moves
    /// in steps that last several runs, the two runs of a pair mostly share
    /// the step, so their ratio is exact where each cell's best run lands
    /// on a different step (issue 22 point 6; docs/methodology.md §10).
    /// A layout with no such pair falls back to `Min`'s ratio. A cell's own
    /// estimate (shown per layout) is its least-disturbed run, as `Min`'s.
    Paired,
}

impl Estimator {
    /// The estimate of one variant's runs; NaN for no runs.
    /// `higher_is_better` picks the least-disturbed run for `Min`: a busy
    /// machine only ever makes a cost higher and a throughput lower.
    pub fn of(self, runs: &[f64], higher_is_better: bool) -> f64 {
        match self {
            Estimator::Median => median(runs),
            Estimator::Min | Estimator::Paired if higher_is_better => {
                runs.iter().copied().fold(f64::NAN, f64::max)
            }
            Estimator::Min | Estimator::Paired => runs.iter().copied().fold(f64::NAN, f64::min),
        }
    }
}

/// The layout-controlled ratio B/A with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LayoutRatio {
    /// exp(mean over variants of log(m[B][i] / m[A][i])).
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
    /// Variants that entered (both builds had kept runs and positive estimates).
    pub variants: usize,
    /// Runs set aside as wild (both builds), out of `runs`.
    pub wild_runs: usize,
    pub runs: usize,
    /// Layouts left out because their outlying difference rested on a cell
    /// whose runs were all but one set aside (`fragility::unconfirmed_outliers`),
    /// or, for `Estimator::Min`, on one cell's lone best run
    /// (`fragility::lone_best_outliers`).
    pub unconfirmed: usize,
    /// Degrees of freedom of the t quantile (variants − 1).
    pub df: f64,
    /// Standard deviation over variants of log(m[B][i] / m[A][i]): the noise a
    /// single-layout comparison carries.
    pub log_ratio_sd: f64,
    /// The values' printing step, when it is coarse enough to matter.
    pub resolution: Option<Resolution>,
}

/// A coarse printing step and what it adds to an interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Resolution {
    /// The step every value is a whole multiple of (e.g. 1 for whole ns).
    pub step: f64,
    /// The step as a share of the baseline's typical value.
    pub relative: f64,
    /// The rounding bound on log(B/A) folded into the interval
    /// (q/(2·A) + q/(2·B)).
    pub half_width: f64,
}

/// A trimmed-t interval of a location on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrimmedT {
    pub trimmed_mean: f64,
    pub standard_error: f64,
    pub df: f64,
    pub trimmed: usize,
    pub low: f64,
    pub high: f64,
}

/// Yuen's trimmed-t interval for the γ-trimmed mean of `xs` at `confidence`
/// (two-sided). `None` with fewer than 2 values left after trimming plus one,
/// a non-finite value, or `confidence` outside (0, 1).
///
/// g = ⌊γ·n⌋, h = n − 2g; winsorized variance s²_w (divisor n − 1);
/// SE = √((n − 1)·s²_w / (h·(h − 1))); df = h − 1 (Yuen 1974).
pub fn trimmed_t(xs: &[f64], trim: f64, confidence: f64) -> Option<TrimmedT> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let parts = trimmed_parts(xs, trim)?;
    let standard_error = parts.squared_error.sqrt();
    let df = (parts.kept - 1) as f64;
    let t = student_t_quantile(0.5 + confidence / 2.0, df);
    if !t.is_finite() || !standard_error.is_finite() {
        return None;
    }
    Some(TrimmedT {
        trimmed_mean: parts.mean,
        standard_error,
        df,
        trimmed: parts.trimmed,
        low: parts.mean - t * standard_error,
        high: parts.mean + t * standard_error,
    })
}

/// The printing step of all `values` and its rounding bound on a ratio of
/// values near `a` and `b`, when it is material.
fn resolution_of(values: &[f64], a: f64, b: f64) -> Option<Resolution> {
    let step = decimal_step(values)?;
    let half_width = material(rounding_half_width(Some(step), a, b))?;
    Some(Resolution {
        step,
        relative: step / a,
        half_width,
    })
}

/// Everything the across-layouts analysis found, for the verdict and the
/// fragility finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Across {
    pub ratio: LayoutRatio,
    /// The runs with wild runs set aside.
    pub cleaned: Cleaned,
    /// The variant indexes that entered, and their log ratios (same order).
    pub variants: Vec<usize>,
    pub logs: Vec<f64>,
}

/// The layout-controlled ratio with what it was computed from: wild runs set
/// aside, per-variant estimates, Student's t over the per-variant log ratios
/// (the mean over layouts), widened by the rounding bound of a coarse
/// printing step.
///
/// `a[i]` and `b[i]` are the runs of variant i of each build (matched seeds).
/// Variants where either side has no kept runs or a non-positive estimate are
/// left out. `None` with fewer than 2 usable variants, a non-finite value, or
/// `confidence` outside (0, 1).
pub fn across_layouts(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    estimator: Estimator,
    confidence: f64,
    higher_is_better: bool,
) -> Option<Across> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    if a.iter().chain(b).flatten().any(|v| !v.is_finite()) {
        return None;
    }
    let all_a: Vec<f64> = a.iter().flatten().copied().collect();
    let all_b: Vec<f64> = b.iter().flatten().copied().collect();
    let (typical_a, typical_b) = (median(&all_a), median(&all_b));
    let values: Vec<f64> = all_a.iter().chain(&all_b).copied().collect();
    let resolution = resolution_of(&values, typical_a, typical_b);
    // Runs one or two printing steps apart are not wild.
    let floor = resolution.map_or(0.0, |r| {
        2.0 * r.step / typical_a.min(typical_b).max(f64::MIN_POSITIVE)
    });
    let cleaned = set_aside_wild_runs(a, b, higher_is_better, floor);
    let mut variants = Vec::new();
    let mut logs = Vec::new();
    for (i, (x, y)) in cleaned.a.iter().zip(&cleaned.b).enumerate() {
        if x.is_empty() || y.is_empty() {
            continue;
        }
        let (ex, ey) = (
            estimator.of(x, higher_is_better),
            estimator.of(y, higher_is_better),
        );
        if ex > 0.0 && ey > 0.0 {
            let paired = (estimator == Estimator::Paired)
                .then(|| {
                    paired_log(
                        &a[i],
                        &b[i],
                        (&cleaned.wild_a[i], &cleaned.wild_b[i]),
                        higher_is_better,
                    )
                })
                .flatten();
            variants.push(i);
            logs.push(paired.unwrap_or((ey / ex).ln()));
        }
    }
    let rounding = resolution.map_or(0.0, |r| r.half_width);
    let mut dropped = unconfirmed_outliers(&cleaned, (a, b), (&variants, &logs), rounding);
    if estimator == Estimator::Min {
        dropped.extend(lone_best_outliers(
            &cleaned,
            (&variants, &logs),
            rounding,
            higher_is_better,
        ));
        dropped.sort_unstable();
        dropped.dedup();
    }
    for &position in dropped.iter().rev() {
        variants.remove(position);
        logs.remove(position);
    }
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let centre = mean(&logs);
    let sd = sample_variance(&logs, centre).sqrt();
    let df = (n - 1) as f64;
    let t = student_t_quantile(0.5 + confidence / 2.0, df);
    if !t.is_finite() || !sd.is_finite() {
        return None;
    }
    let spread = t * sd / (n as f64).sqrt();
    let half = spread.hypot(rounding);
    let ratio = LayoutRatio {
        estimate: centre.exp(),
        low: (centre - half).exp(),
        high: (centre + half).exp(),
        confidence,
        variants: n,
        wild_runs: cleaned.wild.runs,
        runs: cleaned.wild.of,
        unconfirmed: dropped.len(),
        df,
        log_ratio_sd: sd,
        resolution,
    };
    Some(Across {
        ratio,
        cleaned,
        variants,
        logs,
    })
}

/// `Estimator::Paired`'s log ratio of one layout: over the pairs k (B's and
/// A's k-th runs, which the schedule runs back to back) where neither run
/// was set aside as wild and both are positive, the least-disturbed half,
/// ranked by the worse of the two runs' distances from their cell's best
/// run, and the median of their log(b[k] / a[k]). On a busy host most runs
/// are slowed by varying amounts, and a pair with one slowed run carries
/// that slowdown into its ratio; the undisturbed pairs' ratios sit on the
/// true one (BENCHMARKS.md, issue 22 point 6: on 45 back-to-back pairs a
/// layout, the median of all pairs missed by a clock step, 3.6%, where the
/// least-disturbed half did not). `None` when no pair is left.
pub fn paired_log(
    a: &[f64],
    b: &[f64],
    (wild_a, wild_b): (&[bool], &[bool]),
    higher_is_better: bool,
) -> Option<f64> {
    let kept = |k: usize, wild: &[bool]| !wild.get(k).copied().unwrap_or(true);
    let pairs: Vec<(usize, f64, f64)> = a
        .iter()
        .zip(b)
        .enumerate()
        .filter(|&(k, (&x, &y))| x > 0.0 && y > 0.0 && kept(k, wild_a) && kept(k, wild_b))
        .map(|(k, (&x, &y))| (k, x, y))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let xs: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let ys: Vec<f64> = pairs.iter().map(|p| p.2).collect();
    let (worse_x, worse_y) = (
        worse_than_best(&xs, higher_is_better),
        worse_than_best(&ys, higher_is_better),
    );
    let mut ranked: Vec<(f64, f64)> = worse_x
        .iter()
        .zip(&worse_y)
        .zip(&pairs)
        .map(|((dx, dy), &(_, x, y))| (dx.max(*dy), (y / x).ln()))
        .collect();
    // Stable: equally disturbed pairs keep their round order.
    ranked.sort_by(|p, q| p.0.total_cmp(&q.0));
    let half: Vec<f64> = ranked[..ranked.len().div_ceil(2)]
        .iter()
        .map(|p| p.1)
        .collect();
    Some(median(&half))
}

/// The default-layout ratio B/A of one variant's runs: Yuen's two-sample
/// trimmed t interval (Yuen 1974; Welch's interval on trimmed means, 20%
/// trimmed) on the log run values, back on the ratio scale (estimate =
/// ratio of the trimmed geometric means). Returns (estimate, low, high).
///
/// Why this one: with 3–5 runs per side at Bonferroni levels an exact rank
/// interval is infinite (3 v 3 runs cannot reach 95%, 5 v 5 cannot reach
/// 99.4%), and a percentile bootstrap of a ratio of medians covers ~91% at
/// nominal 95% with 3 runs. Yuen's interval holds its level under normal log
/// noise at any n ≥ 2 (with fewer than 5 runs it trims nothing and is
/// Welch's), and with 5 runs a single wild run per side is trimmed instead
/// of pulling the estimate. A coarse printing step's rounding bound is
/// folded in (in quadrature), so identical printed runs give an interval as
/// wide as the rounding, not zero.
pub fn default_ratio(a: &[f64], b: &[f64], confidence: f64) -> Option<(f64, f64, f64)> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    if a.iter().chain(b).any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    let (ta, tb) = (trimmed_parts(&la, TRIM)?, trimmed_parts(&lb, TRIM)?);
    let diff = tb.mean - ta.mean;
    let se2 = ta.squared_error + tb.squared_error;
    let values: Vec<f64> = a.iter().chain(b).copied().collect();
    let rounding = resolution_of(&values, median(a), median(b)).map_or(0.0, |r| r.half_width);
    if se2 == 0.0 {
        let r = diff.exp();
        return Some((r, (diff - rounding).exp(), (diff + rounding).exp()));
    }
    let df = se2.powi(2)
        / (ta.squared_error.powi(2) / (ta.kept - 1) as f64
            + tb.squared_error.powi(2) / (tb.kept - 1) as f64);
    let t = student_t_quantile(0.5 + confidence / 2.0, df);
    if !t.is_finite() || !df.is_finite() {
        return None;
    }
    let half = (t * se2.sqrt()).hypot(rounding);
    Some((diff.exp(), (diff - half).exp(), (diff + half).exp()))
}

/// A sample's trimmed mean and the squared standard error of it.
pub(super) struct Trimmed {
    pub(super) mean: f64,
    /// (n − 1)·s²_w / (h·(h − 1)).
    pub(super) squared_error: f64,
    /// Values left after trimming (h).
    pub(super) kept: usize,
    /// Values trimmed from each end (g).
    pub(super) trimmed: usize,
}

/// g = ⌊γ·n⌋, h = n − 2g; the winsorized variance s²_w has divisor n − 1.
/// `None` with h < 2 or a non-finite value.
pub(super) fn trimmed_parts(xs: &[f64], trim: f64) -> Option<Trimmed> {
    if xs.iter().any(|x| !x.is_finite()) || !(0.0..0.5).contains(&trim) {
        return None;
    }
    let n = xs.len();
    let g = (trim * n as f64).floor() as usize;
    let h = n.saturating_sub(2 * g);
    if h < 2 {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let winsorized: Vec<f64> = sorted
        .iter()
        .map(|&x| x.clamp(sorted[g], sorted[n - g - 1]))
        .collect();
    let var_w = sample_variance(&winsorized, mean(&winsorized));
    Some(Trimmed {
        mean: mean(&sorted[g..n - g]),
        squared_error: (n - 1) as f64 * var_w / (h * (h - 1)) as f64,
        kept: h,
        trimmed: g,
    })
}

/// Both of `layout`'s intervals for one build against the baseline, their
/// verdicts, the layout verdict (ARTIFACT included) and the fragile layouts.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutDecision {
    /// Variant 0 alone: (estimate, low, high).
    pub default_ratio: Option<(f64, f64, f64)>,
    pub default_verdict: Verdict,
    pub controlled: Option<LayoutRatio>,
    pub controlled_verdict: Verdict,
    /// For ARTIFACT: the share of the default-layout difference that disappears.
    pub artifact_share: Option<f64>,
    pub verdict: Verdict,
    /// Layouts where B stands apart reproducibly (8 or more layouts, 2 or
    /// more runs a cell).
    pub fragility: Option<Fragility>,
    /// The runs set aside as wild.
    pub wild: WildRuns,
}

/// Decide one build against the baseline: the default-layout interval of
/// variant 0's runs at `default_confidence`, the across-layouts interval at
/// `confidence`, each judged against ±`margin`, then the ARTIFACT rule and
/// the fragile layouts. `layout` and its simulations both decide here.
pub fn decide_layout(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    estimator: Estimator,
    (default_confidence, confidence): (f64, f64),
    margin: f64,
    higher_is_better: bool,
) -> LayoutDecision {
    let default_ratio = match (a.first(), b.first()) {
        (Some(a0), Some(b0)) => default_ratio(a0, b0, default_confidence),
        _ => None,
    };
    let default_verdict = default_ratio.map_or(Verdict::Unknown, |(_, low, high)| {
        decide(low, high, margin, higher_is_better)
    });
    let across = across_layouts(a, b, estimator, confidence, higher_is_better);
    let controlled = across.as_ref().map(|x| x.ratio);
    let controlled_verdict = controlled.map_or(Verdict::Unknown, |r| {
        decide(r.low, r.high, margin, higher_is_better)
    });
    let artifact_share = artifact(
        default_ratio.map(|d| d.0),
        default_verdict,
        controlled.map(|c| (c.estimate, c.low, c.high)),
        controlled_verdict,
    );
    let fragility = across.as_ref().and_then(|x| {
        let rounding = x.ratio.resolution.map_or(0.0, |r| r.half_width);
        fragile_layouts(
            &x.cleaned,
            (a, b),
            (&x.variants, &x.logs),
            (margin, rounding),
            higher_is_better,
        )
    });
    LayoutDecision {
        default_ratio,
        default_verdict,
        controlled,
        controlled_verdict,
        artifact_share,
        verdict: if artifact_share.is_some() {
            Verdict::Artifact
        } else {
            controlled_verdict
        },
        fragility,
        wild: across.map(|x| x.cleaned.wild).unwrap_or_default(),
    }
}

/// Coefficient of variation of per-variant estimates (sample sd / mean).
/// NaN with fewer than 2 finite values or a non-positive mean.
pub fn spread_cv(estimates: &[f64]) -> f64 {
    let xs: Vec<f64> = estimates
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(&xs);
    if m <= 0.0 {
        return f64::NAN;
    }
    sample_variance(&xs, m).sqrt() / m
}

/// The smallest change a single-layout comparison can trust: layout alone
/// moves log(B/A) with standard deviation `log_ratio_sd`, so 95% of
/// layout-only differences stay below exp(1.96·sd) − 1 (as a fraction).
pub fn smallest_trustworthy_effect(log_ratio_sd: f64) -> f64 {
    if log_ratio_sd.is_finite() {
        (1.959_963_984_540_054 * log_ratio_sd).exp() - 1.0
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests;
