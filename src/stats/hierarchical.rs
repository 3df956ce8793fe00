//! The layout-controlled effect of `layout` (DESIGN.md §3): a hierarchical
//! bootstrap over layout variants, then runs within variants.
//!
//! Each build s is measured under matched layout variants i = 0..n (the same
//! seeds for every build). Per variant, a robust estimate m[s][i] (median or
//! min of that variant's runs) summarises the runs; the effect of B against A
//! is the geometric mean over variants of m[B][i] / m[A][i], i.e. the mean of
//! the per-variant log ratios.
//!
//! Why hierarchical: the two sources of noise are nested. Layout moves a
//! whole variant's runs together (a systematic offset per binary); run noise
//! scatters runs around that offset. Resampling variants first carries the
//! layout uncertainty, which dominates; resampling runs inside each chosen
//! variant carries the run noise on top. Resampling runs alone (what a naive
//! A/B does) treats one layout's offset as if it were the effect.
//!
//! Why an expanded percentile interval: with few variants (8 is typical) the
//! plain percentile bootstrap of a mean is too narrow: it uses the plug-in
//! variance (divides by n, not n − 1) and normal rather than t tails. The
//! expanded percentile interval (Hesterberg 2015) widens the quantile levels
//! so that z = √(n/(n−1))·t(n−1): with 8 variants the nominal 95% interval
//! reads the 0.4% and 99.6% replicate quantiles. The simulations below check
//! the resulting false-alarm rate.

use super::descriptive::{median, median_in_place, quantile_sorted};
use super::distributions::{normal_cdf, student_t_quantile};
use super::sequential::standard_normal;
use super::verdict::{decide, Verdict};
use super::{ratio_of_medians, BootstrapMethod};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// How one variant's runs are summarised into its estimate m[s][i].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

    fn in_place(self, runs: &mut [f64]) -> f64 {
        match self {
            Estimator::Median => median_in_place(runs),
            Estimator::Min => runs.iter().copied().fold(f64::NAN, f64::min),
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
    /// Variants that entered (both builds had runs and positive estimates).
    pub variants: usize,
    /// Standard deviation over variants of log(m[B][i] / m[A][i]): the noise a
    /// single-layout comparison carries.
    pub log_ratio_sd: f64,
}

/// Hierarchical bootstrap of the layout-controlled ratio.
///
/// `a[i]` and `b[i]` are the runs of variant i of each build (matched seeds).
/// Variants where either side has no runs or a non-positive estimate are left
/// out. `None` with fewer than 2 usable variants, a non-finite value,
/// `resamples` = 0 or `confidence` outside (0, 1).
pub fn layout_ratio(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    estimator: Estimator,
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<LayoutRatio> {
    if !(confidence > 0.0 && confidence < 1.0) || resamples == 0 {
        return None;
    }
    let pairs: Vec<(&[f64], &[f64])> = a
        .iter()
        .zip(b)
        .filter(|(x, y)| !x.is_empty() && !y.is_empty())
        .filter(|(x, y)| estimator.of(x) > 0.0 && estimator.of(y) > 0.0)
        .map(|(x, y)| (x.as_slice(), y.as_slice()))
        .collect();
    let n = pairs.len();
    if n < 2 {
        return None;
    }
    if pairs
        .iter()
        .any(|(x, y)| x.iter().chain(y.iter()).any(|v| !v.is_finite()))
    {
        return None;
    }
    let logs: Vec<f64> = pairs
        .iter()
        .map(|(x, y)| (estimator.of(y) / estimator.of(x)).ln())
        .collect();
    let mean = logs.iter().sum::<f64>() / n as f64;
    let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();

    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let longest = pairs
        .iter()
        .map(|(x, y)| x.len().max(y.len()))
        .max()
        .unwrap_or(0);
    let mut scratch = vec![0.0; longest];
    let mut replicates = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mut total = 0.0;
        for _ in 0..n {
            let (x, y) = pairs[rng.random_range(0..n)];
            let ex = resampled(x, estimator, &mut scratch, &mut rng);
            let ey = resampled(y, estimator, &mut scratch, &mut rng);
            total += (ey / ex).ln();
        }
        let replicate = total / n as f64;
        if replicate.is_finite() {
            replicates.push(replicate);
        }
    }
    if replicates.is_empty() {
        return None;
    }
    replicates.sort_unstable_by(f64::total_cmp);
    let tail = expanded_tail(1.0 - confidence, n);
    Some(LayoutRatio {
        estimate: mean.exp(),
        low: quantile_sorted(&replicates, tail).exp(),
        high: quantile_sorted(&replicates, 1.0 - tail).exp(),
        confidence,
        variants: n,
        log_ratio_sd: sd,
    })
}

/// The lower quantile level of the expanded percentile interval (Hesterberg
/// 2015): Φ(−√(n/(n−1))·t(1 − α/2, n − 1)).
pub fn expanded_tail(alpha: f64, variants: usize) -> f64 {
    if variants < 2 {
        return alpha / 2.0;
    }
    let n = variants as f64;
    let t = student_t_quantile(1.0 - alpha / 2.0, n - 1.0);
    let level = normal_cdf(-(n / (n - 1.0)).sqrt() * t);
    if level.is_finite() {
        level
    } else {
        alpha / 2.0
    }
}

fn resampled(runs: &[f64], estimator: Estimator, scratch: &mut [f64], rng: &mut ChaCha8Rng) -> f64 {
    let slots = &mut scratch[..runs.len()];
    for slot in slots.iter_mut() {
        *slot = runs[rng.random_range(0..runs.len())];
    }
    estimator.in_place(slots)
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
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    if mean <= 0.0 {
        return f64::NAN;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
    var.sqrt() / mean
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

/// One simulated `layout` experiment's verdicts: layout-controlled, and the
/// naive default-layout (variant 0) comparison on the same data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimulatedVerdicts {
    pub layout: Verdict,
    pub naive: Verdict,
}

/// The shape of a simulated experiment.
#[derive(Debug, Clone, Copy)]
pub struct LayoutSimulation {
    /// True ratio B/A of the code itself.
    pub true_ratio: f64,
    /// Standard deviation of the per-variant log offset of each build (layout noise).
    pub layout_sd: f64,
    /// Standard deviation of the per-run log noise.
    pub run_sd: f64,
    pub variants: usize,
    pub runs: usize,
    pub margin: f64,
    pub alpha: f64,
    pub resamples: usize,
}

/// Simulate one experiment: every build gets an independent random log offset
/// per variant (layout moves differently compiled code differently), runs are
/// lognormal around it; then both analyses decide.
pub fn simulate(setup: &LayoutSimulation, seed: u64) -> SimulatedVerdicts {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let side = |centre: f64, rng: &mut ChaCha8Rng| -> Vec<Vec<f64>> {
        (0..setup.variants)
            .map(|_| {
                let offset = setup.layout_sd * standard_normal(rng);
                (0..setup.runs)
                    .map(|_| (centre.ln() + offset + setup.run_sd * standard_normal(rng)).exp())
                    .collect()
            })
            .collect()
    };
    let a = side(1.0, &mut rng);
    let b = side(setup.true_ratio, &mut rng);
    let confidence = 1.0 - setup.alpha;
    let layout = layout_ratio(
        &a,
        &b,
        Estimator::Median,
        confidence,
        setup.resamples,
        seed ^ 0x5bd1,
    )
    .map_or(Verdict::Unknown, |r| {
        decide(r.low, r.high, setup.margin, false)
    });
    let naive = ratio_of_medians(
        &a[0],
        &b[0],
        confidence,
        setup.resamples,
        seed ^ 0x9e37,
        BootstrapMethod::Percentile,
    )
    .map_or(Verdict::Unknown, |r| {
        decide(r.low, r.high, setup.margin, false)
    });
    SimulatedVerdicts { layout, naive }
}

/// Share of `experiments` simulated experiments whose (layout, naive)
/// verdict is FASTER or SLOWER.
pub fn decisive_rates(setup: &LayoutSimulation, experiments: usize, seed: u64) -> (f64, f64) {
    let mut decisive = (0usize, 0usize);
    for e in 0..experiments {
        let v = simulate(setup, seed.wrapping_mul(1_000_003).wrapping_add(e as u64));
        let strong = |v: Verdict| matches!(v, Verdict::Faster | Verdict::Slower);
        decisive.0 += strong(v.layout) as usize;
        decisive.1 += strong(v.naive) as usize;
    }
    (
        decisive.0 as f64 / experiments as f64,
        decisive.1 as f64 / experiments as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(true_ratio: f64) -> LayoutSimulation {
        // Layout noise 3% per build and variant, run noise 1%: a typical tight
        // loop whose speed depends on where it lands.
        LayoutSimulation {
            true_ratio,
            layout_sd: 0.03,
            run_sd: 0.01,
            variants: 8,
            runs: 5,
            margin: 0.01,
            alpha: 0.05,
            resamples: 1000,
        }
    }

    #[test]
    fn layout_only_effects_rarely_give_a_verdict() {
        let (layout, naive) = decisive_rates(&setup(1.0), 1000, 1);
        println!(
            "layout-only: layout verdict FASTER/SLOWER in {:.1}%, naive variant-0 in {:.1}%",
            layout * 100.0,
            naive * 100.0
        );
        assert!(layout <= 0.06, "layout false alarms {layout}");
        // The naive comparison mistakes layout for an effect most of the time.
        assert!(naive > 0.3, "naive false alarms {naive}");
    }

    #[test]
    fn a_real_ten_percent_effect_is_found() {
        let (layout, _) = decisive_rates(&setup(1.10), 1000, 2);
        println!("real 10%: found in {:.1}%", layout * 100.0);
        assert!(layout >= 0.90, "power {layout}");
        let faster = (0..200)
            .filter(|&e| simulate(&setup(0.90), 7000 + e).layout == Verdict::Faster)
            .count();
        assert!(faster >= 180, "power for a 10% speedup {faster}/200");
    }

    #[test]
    fn identical_variants_give_the_exact_ratio() {
        let a = vec![vec![1.0, 1.0, 1.0]; 4];
        let b = vec![vec![2.0, 2.0, 2.0]; 4];
        let r = layout_ratio(&a, &b, Estimator::Median, 0.95, 200, 1).unwrap();
        assert!((r.estimate - 2.0).abs() < 1e-12);
        assert!((r.low - 2.0).abs() < 1e-12 && (r.high - 2.0).abs() < 1e-12);
        assert_eq!(r.variants, 4);
        assert_eq!(r.log_ratio_sd, 0.0);
    }

    #[test]
    fn min_estimator_and_bad_input() {
        let a = vec![vec![1.0, 5.0], vec![1.0, 9.0], vec![1.0, 2.0]];
        let b = vec![vec![1.5, 5.0], vec![1.5, 9.0], vec![1.5, 2.0]];
        let r = layout_ratio(&a, &b, Estimator::Min, 0.95, 200, 1).unwrap();
        assert!((r.estimate - 1.5).abs() < 1e-12);
        assert!(layout_ratio(&a[..1], &b[..1], Estimator::Median, 0.95, 200, 1).is_none());
        assert!(layout_ratio(&a, &b, Estimator::Median, 1.0, 200, 1).is_none());
        let nan = vec![vec![f64::NAN, 1.0]; 3];
        assert!(layout_ratio(&nan, &b, Estimator::Median, 0.95, 200, 1).is_none());
        // Empty variants are skipped, not fatal.
        let mut gappy = a.clone();
        gappy[1].clear();
        let r = layout_ratio(&gappy, &b, Estimator::Median, 0.95, 200, 1).unwrap();
        assert_eq!(r.variants, 2);
    }

    #[test]
    fn expanded_levels_and_spread() {
        // n = 8: sqrt(8/7) * t(0.975, 7) = 2.528 → Φ(−2.528) ≈ 0.00574.
        assert!((expanded_tail(0.05, 8) - 0.00574).abs() < 2e-4);
        assert!(expanded_tail(0.05, 1000) > 0.024);
        assert!((spread_cv(&[1.0, 1.0, 1.0]) - 0.0).abs() < 1e-12);
        assert!(spread_cv(&[1.0]).is_nan());
        assert!((smallest_trustworthy_effect(0.05) - 0.1029).abs() < 1e-3);
    }
}
