//! The across-layouts effect of `layout`: runs nested in layout variants,
//! summarised per variant, then an analytic interval over the variants.
//!
//! Each build s is measured under matched layout variants i = 0..n (the same
//! seeds for every build). Per variant, a robust estimate m[s][i] (median or
//! min of that variant's runs) summarises the runs; the per-variant effect is
//! d[i] = log(m[B][i] / m[A][i]). The variants are the unit of replication:
//! layout moves a whole variant's runs together, and the run noise is already
//! inside each d[i], so nothing below resamples or re-counts the runs.
//!
//! The interval is Yuen's trimmed t over the d[i] (Tukey & McLaughlin 1963;
//! Yuen 1974; Wilcox, *Introduction to Robust Estimation*, 4th ed., §4.5):
//! trim g = ⌊0.2·n⌋ values from each end, take the trimmed mean, estimate its
//! standard error from the winsorized variance, and read Student's t with
//! n − 2g − 1 degrees of freedom. Why this one:
//! - It is analytic, so the bounds do not move with a bootstrap seed, and it
//!   holds at Bonferroni levels (α/8 with 8 variants is a tail of 3e-3, which
//!   a percentile bootstrap can only read off its most extreme replicates).
//! - It is robust to a wild variant. On a busy machine a variant's median is
//!   pulled far off when most of its few runs were slowed (3 of 5 runs at a
//!   15% wild-run rate happens to 1 variant in 40 per build); the plain t
//!   interval then widens to UNKNOWN, the trimmed one drops that variant.
//! - With fewer than 5 variants it trims nothing and is Student's t.
//!
//! The d[i] of an A/A comparison are symmetric about 0 (the builds are
//! exchangeable), and a real effect shifts them, so the trimmed mean
//! estimates the effect. docs/methodology.md §10 has the simulations.

use super::descriptive::{mean, median, sample_variance};
use super::distributions::student_t_quantile;
use super::verdict::{artifact, decide, Verdict};
use serde::Serialize;

/// The fraction trimmed from each end of the per-variant log ratios.
pub const TRIM: f64 = 0.2;

/// How one variant's runs are summarised into its estimate m[s][i].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Estimator {
    /// Robust to the long right tail of run times; the default.
    Median,
    /// The least-disturbed run: for very noisy machines and short runs.
    Min,
}

impl Estimator {
    /// The estimate of one variant's runs; NaN for no runs.
    pub fn of(self, runs: &[f64]) -> f64 {
        match self {
            Estimator::Median => median(runs),
            Estimator::Min => runs.iter().copied().fold(f64::NAN, f64::min),
        }
    }
}

/// The layout-controlled ratio B/A with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LayoutRatio {
    /// exp(trimmed mean over variants of log(m[B][i] / m[A][i])).
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
    /// Variants that entered (both builds had runs and positive estimates).
    pub variants: usize,
    /// Variants trimmed from each end (⌊0.2·variants⌋).
    pub trimmed: usize,
    /// Degrees of freedom of the t quantile (variants − 2·trimmed − 1).
    pub df: f64,
    /// Standard deviation over variants of log(m[B][i] / m[A][i]): the noise a
    /// single-layout comparison carries.
    pub log_ratio_sd: f64,
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

/// The per-variant log ratios log(m[B][i] / m[A][i]) of the variants where
/// both builds have runs and positive estimates. `None` if any run value is
/// not finite.
pub fn variant_log_ratios(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    estimator: Estimator,
) -> Option<Vec<f64>> {
    if a.iter().chain(b).flatten().any(|v| !v.is_finite()) {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .filter(|(x, y)| !x.is_empty() && !y.is_empty())
            .map(|(x, y)| (estimator.of(x), estimator.of(y)))
            .filter(|&(x, y)| x > 0.0 && y > 0.0)
            .map(|(x, y)| (y / x).ln())
            .collect(),
    )
}

/// The layout-controlled ratio: Yuen's trimmed t over the per-variant log
/// ratios, back on the ratio scale.
///
/// `a[i]` and `b[i]` are the runs of variant i of each build (matched seeds).
/// Variants where either side has no runs or a non-positive estimate are left
/// out. `None` with fewer than 2 usable variants, a non-finite value, or
/// `confidence` outside (0, 1).
pub fn layout_ratio(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    estimator: Estimator,
    confidence: f64,
) -> Option<LayoutRatio> {
    let logs = variant_log_ratios(a, b, estimator)?;
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let interval = trimmed_t(&logs, TRIM, confidence)?;
    let sd = sample_variance(&logs, mean(&logs)).sqrt();
    Some(LayoutRatio {
        estimate: interval.trimmed_mean.exp(),
        low: interval.low.exp(),
        high: interval.high.exp(),
        confidence,
        variants: n,
        trimmed: interval.trimmed,
        df: interval.df,
        log_ratio_sd: sd,
    })
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
/// of pulling the estimate.
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
    if se2 == 0.0 {
        let r = diff.exp();
        return Some((r, r, r));
    }
    let df = se2.powi(2)
        / (ta.squared_error.powi(2) / (ta.kept - 1) as f64
            + tb.squared_error.powi(2) / (tb.kept - 1) as f64);
    let t = student_t_quantile(0.5 + confidence / 2.0, df);
    if !t.is_finite() || !df.is_finite() {
        return None;
    }
    let half = t * se2.sqrt();
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
/// verdicts, and the layout verdict (ARTIFACT included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutDecision {
    /// Variant 0 alone: (estimate, low, high).
    pub default_ratio: Option<(f64, f64, f64)>,
    pub default_verdict: Verdict,
    pub controlled: Option<LayoutRatio>,
    pub controlled_verdict: Verdict,
    /// For ARTIFACT: the share of the default-layout difference that disappears.
    pub artifact_share: Option<f64>,
    pub verdict: Verdict,
}

/// Decide one build against the baseline: the default-layout interval of
/// variant 0's runs at `default_confidence`, the across-layouts interval at
/// `confidence`, each judged against ±`margin`, then the ARTIFACT rule.
/// `layout` and its simulations both decide here.
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
    let controlled = layout_ratio(a, b, estimator, confidence);
    let controlled_verdict = controlled.map_or(Verdict::Unknown, |r| {
        decide(r.low, r.high, margin, higher_is_better)
    });
    let artifact_share = artifact(
        default_ratio.map(|d| d.0),
        default_verdict,
        controlled.map(|c| c.estimate),
        controlled_verdict,
    );
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
mod tests {
    use super::*;

    fn close(x: f64, y: f64, tol: f64) -> bool {
        (x - y).abs() <= tol
    }

    #[test]
    fn trimmed_t_matches_an_independent_computation() {
        // Worked by hand (and with a separate Python script of the textbook
        // formulas, Wilcox 2017 §4.5.3): x = 1..10 with one wild value 40.
        // n = 10, g = 2, h = 6; trimmed mean of 3..8 = 5.5; winsorized
        // sample 3,3,3,4,5,6,7,8,8,8 has mean 5.5 and variance 42.5/9 =
        // 4.7222; SE = sqrt(9 · 4.7222 / 30) = 1.19024; t(0.975, 5) =
        // 2.570582 → [2.44040, 8.55960].
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 40.0];
        let r = trimmed_t(&xs, 0.2, 0.95).unwrap();
        assert_eq!(r.trimmed, 2);
        assert!(close(r.trimmed_mean, 5.5, 1e-12));
        assert!(
            close(r.standard_error, 1.190_238, 1e-5),
            "{}",
            r.standard_error
        );
        assert_eq!(r.df, 5.0);
        assert!(
            close(r.low, 2.440_40, 1e-4) && close(r.high, 8.559_60, 1e-4),
            "{r:?}"
        );
    }

    #[test]
    fn without_trimming_it_is_students_t() {
        // n = 4 → g = 0: the one-sample t interval. x = 1, 2, 3, 5: mean
        // 2.75, sd 1.70783, SE 0.853913, t(0.975, 3) = 3.182446; scipy
        // `stats.ttest_1samp([1, 2, 3, 5], 0).confidence_interval(0.95)` =
        // [0.0324691, 5.4675309].
        let r = trimmed_t(&[1.0, 2.0, 3.0, 5.0], 0.2, 0.95).unwrap();
        assert_eq!(r.trimmed, 0);
        assert!(
            close(r.low, 0.032_469_1, 1e-6) && close(r.high, 5.467_530_9, 1e-6),
            "{r:?}"
        );
    }

    #[test]
    fn identical_variants_give_the_exact_ratio() {
        let a = vec![vec![1.0, 1.0, 1.0]; 4];
        let b = vec![vec![2.0, 2.0, 2.0]; 4];
        let r = layout_ratio(&a, &b, Estimator::Median, 0.95).unwrap();
        assert!((r.estimate - 2.0).abs() < 1e-12);
        assert!((r.low - 2.0).abs() < 1e-12 && (r.high - 2.0).abs() < 1e-12);
        assert_eq!(r.variants, 4);
        assert_eq!(r.log_ratio_sd, 0.0);
    }

    #[test]
    fn one_wild_variant_among_eight_is_trimmed() {
        // Seven variants at +3% ± 0.1%, one whose runs were mostly slowed.
        let a: Vec<Vec<f64>> = (0..8).map(|_| vec![1.0; 3]).collect();
        let mut b: Vec<Vec<f64>> = (0..8)
            .map(|i| vec![1.03 * (1.0 + 0.001 * (i as f64 - 3.5) / 3.5); 3])
            .collect();
        b[5] = vec![1.4; 3];
        let r = layout_ratio(&a, &b, Estimator::Median, 0.99).unwrap();
        assert_eq!(r.trimmed, 1);
        assert!(r.low > 1.02 && r.high < 1.04, "{r:?}");
    }

    #[test]
    fn min_estimator_and_bad_input() {
        let a = vec![vec![1.0, 5.0], vec![1.0, 9.0], vec![1.0, 2.0]];
        let b = vec![vec![1.5, 5.0], vec![1.5, 9.0], vec![1.5, 2.0]];
        let r = layout_ratio(&a, &b, Estimator::Min, 0.95).unwrap();
        assert!((r.estimate - 1.5).abs() < 1e-12);
        assert!(layout_ratio(&a[..1], &b[..1], Estimator::Median, 0.95).is_none());
        assert!(layout_ratio(&a, &b, Estimator::Median, 1.0).is_none());
        let nan = vec![vec![f64::NAN, 1.0]; 3];
        assert!(layout_ratio(&nan, &b, Estimator::Median, 0.95).is_none());
        // Empty variants are skipped, not fatal.
        let mut gappy = a.clone();
        gappy[1].clear();
        let r = layout_ratio(&gappy, &b, Estimator::Median, 0.95).unwrap();
        assert_eq!(r.variants, 2);
    }

    #[test]
    fn default_ratio_is_yuen_on_logs() {
        // log a = 0, 0.01, 0.02; log b = 0.10, 0.12, 0.14: diff 0.11,
        // SE = sqrt(0.0001/3 + 0.0004/3) = 0.0129099, df =
        // (0.000166667)^2 / ((0.0000333)^2/2 + (0.000133)^2/2) = 2.941176,
        // t(0.975, 2.941176) = 3.21876 (scipy.stats.t.ppf) → log CI 0.11 ±
        // 0.0415540.
        let a: Vec<f64> = [0.0f64, 0.01, 0.02].iter().map(|l| l.exp()).collect();
        let b: Vec<f64> = [0.10f64, 0.12, 0.14].iter().map(|l| l.exp()).collect();
        let (r, lo, hi) = default_ratio(&a, &b, 0.95).unwrap();
        assert!(close(r.ln(), 0.11, 1e-12));
        assert!(close(lo.ln(), 0.11 - 0.041_554, 1e-5), "{}", lo.ln());
        assert!(close(hi.ln(), 0.11 + 0.041_554, 1e-5), "{}", hi.ln());
        assert!(default_ratio(&a[..1], &b, 0.95).is_none());
        assert!(default_ratio(&a, &[0.0, 1.0], 0.95).is_none());
        // Five runs: one wild run in A is trimmed. Reference: scipy 1.16
        // `stats.ttest_ind(log b, log a, trim=0.2, equal_var=False)
        // .confidence_interval(0.95)` = [0.0730329, 0.1337360], t = 9.49693,
        // df = 3.95799.
        let a: Vec<f64> = vec![1.00, 1.01, 1.02, 0.99, 1.35];
        let b: Vec<f64> = vec![1.10, 1.12, 1.14, 1.11, 1.13];
        let (_, lo, hi) = default_ratio(&a, &b, 0.95).unwrap();
        assert!(close(lo.ln(), 0.073_032_9, 1e-6), "{}", lo.ln());
        assert!(close(hi.ln(), 0.133_736_0, 1e-6), "{}", hi.ln());
        let (r, lo, hi) = default_ratio(&[1.0, 1.0], &[2.0, 2.0], 0.95).unwrap();
        assert!(close(r, 2.0, 1e-12) && lo == hi);
    }

    #[test]
    fn spread_and_trust() {
        assert!((spread_cv(&[1.0, 1.0, 1.0]) - 0.0).abs() < 1e-12);
        assert!(spread_cv(&[1.0]).is_nan());
        assert!((smallest_trustworthy_effect(0.05) - 0.1029).abs() < 1e-3);
    }
}
