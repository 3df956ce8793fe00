//! The headline effect size: the ratio of medians B/A with a seeded
//! bootstrap confidence interval, percentile or BCa (Efron 1987).
//!
//! Why the ratio of medians: "B takes 0.93× the time of A" is what people
//! want to read, and medians ignore the long right tail of run times. Why a
//! bootstrap: the ratio of two medians has no convenient closed-form
//! standard error. The two samples are resampled independently (they are two
//! independent groups of runs), and the RNG is a seeded ChaCha8 so that the
//! same data and seed always give the same interval, on every platform.

use super::descriptive::{median, midpoint, quantile_sorted};
use super::distributions::{normal_cdf, normal_quantile};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// How the bootstrap replicates are turned into an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BootstrapMethod {
    /// The α/2 and 1 − α/2 quantiles of the replicates. Simple and
    /// transformation-respecting; first-order accurate.
    Percentile,
    /// Bias-corrected and accelerated (Efron 1987): shifts the quantile levels
    /// to correct for median bias (z0) and for a standard error that changes
    /// with the parameter (acceleration, from the jackknife). Second-order
    /// accurate, which matters for the skewed ratio of medians.
    Bca,
}

/// An estimate with a two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
}

/// Ratio of medians median(b) / median(a) with a bootstrap confidence
/// interval at level `confidence`, from `resamples` replicates drawn with
/// `ChaCha8Rng::seed_from_u64(seed)`.
///
/// `None` when a sample has fewer than 2 values (a bootstrap of one value is
/// no evidence of anything), a value is not finite, median(a) ≤ 0 (the ratio
/// would not be a speed ratio), `resamples` is 0, or `confidence` is not
/// strictly between 0 and 1. A replicate whose median of A is 0 gives an
/// infinite ratio and is kept (it lands in the tail); 0/0 replicates are
/// dropped. Constant samples give the degenerate interval [r, r].
pub fn ratio_of_medians(
    a: &[f64],
    b: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
    method: BootstrapMethod,
) -> Option<Interval> {
    if a.len() < 2 || b.len() < 2 || resamples == 0 {
        return None;
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    if a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (median_a, median_b) = (median(a), median(b));
    if median_a <= 0.0 {
        return None;
    }
    let estimate = median_b / median_a;
    let mut replicates = bootstrap_ratios(a, b, resamples, seed);
    if replicates.is_empty() {
        return None;
    }
    replicates.sort_unstable_by(f64::total_cmp);
    let alpha = 1.0 - confidence;
    let (level_low, level_high) = match method {
        BootstrapMethod::Percentile => (alpha / 2.0, 1.0 - alpha / 2.0),
        BootstrapMethod::Bca => bca_levels(a, b, estimate, &replicates, alpha),
    };
    Some(Interval {
        estimate,
        low: quantile_sorted(&replicates, level_low),
        high: quantile_sorted(&replicates, level_high),
        confidence,
    })
}

/// `resamples` replicates of median(b*) / median(a*), NaN ones dropped.
fn bootstrap_ratios(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let sorted = |x: &[f64]| {
        let mut v = x.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        v
    };
    let (sorted_a, sorted_b) = (sorted(a), sorted(b));
    let mut counts_a = vec![0u32; a.len()];
    let mut counts_b = vec![0u32; b.len()];
    let mut replicates = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let median_a = resampled_median(&sorted_a, &mut counts_a, &mut rng);
        let median_b = resampled_median(&sorted_b, &mut counts_b, &mut rng);
        let ratio = median_b / median_a;
        if !ratio.is_nan() {
            replicates.push(ratio);
        }
    }
    replicates
}

/// The median of one resample of `sorted`, drawn as a count per rank: the k-th
/// smallest resampled value is `sorted` at the k-th smallest drawn rank, so a
/// counting pass finds it without selecting over floats. For the same draws it
/// gives exactly the median of the resampled sorted values (resampling a
/// permutation of the sample is the same bootstrap), at a fraction of the cost.
fn resampled_median(sorted: &[f64], counts: &mut [u32], rng: &mut ChaCha8Rng) -> f64 {
    let n = sorted.len();
    counts.fill(0);
    for _ in 0..n {
        counts[rng.random_range(0..n)] += 1;
    }
    let (lower_rank, upper_rank) = ((n - 1) / 2, n / 2);
    let mut seen = 0usize;
    let mut lower = f64::NAN;
    for (value, &count) in sorted.iter().zip(counts.iter()) {
        let before = seen;
        seen += count as usize;
        if before <= lower_rank && lower_rank < seen {
            lower = *value;
        }
        if upper_rank < seen {
            return if n % 2 == 1 {
                *value
            } else {
                midpoint(lower, *value)
            };
        }
    }
    f64::NAN
}

/// BCa quantile levels (Efron 1987; Efron & Tibshirani 1993, §14.3).
///
/// z0 = Φ⁻¹(share of replicates below the estimate, ties counted half): the
/// bootstrap median is discrete, so many replicates equal the estimate and
/// counting them all on one side would bias z0.
///
/// The acceleration comes from the two-sample jackknife: leave one value out
/// of A (B intact), then one out of B (A intact), and combine the empirical
/// influence values of both strata as in Davison & Hinkley (1997, §3.2):
/// a = Σ_s n_s⁻³ Σ_i L_si³ / (6 (Σ_s n_s⁻² Σ_i L_si²)^{3/2}),
/// L_si = (n_s − 1)(mean_jackknife_s − θ_(s,i)).
fn bca_levels(a: &[f64], b: &[f64], estimate: f64, sorted: &[f64], alpha: f64) -> (f64, f64) {
    let percentile = (alpha / 2.0, 1.0 - alpha / 2.0);
    let count = sorted.len() as f64;
    let below = sorted.partition_point(|&r| r < estimate) as f64;
    let not_above = sorted.partition_point(|&r| r <= estimate) as f64;
    // Keep the share strictly inside (0, 1) so z0 stays finite.
    let share = ((below + 0.5 * (not_above - below)) / count).clamp(0.5 / count, 1.0 - 0.5 / count);
    let z0 = normal_quantile(share);
    let acceleration = jackknife_acceleration(a, b);
    let adjust = |level: f64| {
        let z = normal_quantile(level);
        let shifted = z0 + z;
        let denominator = 1.0 - acceleration * shifted;
        if denominator <= 0.0 {
            return f64::NAN;
        }
        normal_cdf(z0 + shifted / denominator)
    };
    let (low, high) = (adjust(percentile.0), adjust(percentile.1));
    if low.is_finite() && high.is_finite() && low <= high {
        (low, high)
    } else {
        // A degenerate correction (extreme acceleration) would otherwise give
        // a NaN interval; the percentile interval is the safe fallback.
        percentile
    }
}

/// Two-sample jackknife acceleration for the ratio of medians; 0 when the
/// influence values are all 0 (e.g. constant data).
fn jackknife_acceleration(a: &[f64], b: &[f64]) -> f64 {
    let mut sorted_a = a.to_vec();
    let mut sorted_b = b.to_vec();
    sorted_a.sort_unstable_by(f64::total_cmp);
    sorted_b.sort_unstable_by(f64::total_cmp);
    let median_a = quantile_sorted(&sorted_a, 0.5);
    let median_b = quantile_sorted(&sorted_b, 0.5);
    let leave_one_out_a: Vec<f64> = (0..sorted_a.len())
        .map(|i| median_b / median_without(&sorted_a, i))
        .collect();
    let leave_one_out_b: Vec<f64> = (0..sorted_b.len())
        .map(|j| median_without(&sorted_b, j) / median_a)
        .collect();
    let mut cubes = 0.0;
    let mut squares = 0.0;
    for values in [&leave_one_out_a, &leave_one_out_b] {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let (mut cube_sum, mut square_sum) = (0.0, 0.0);
        for &value in values.iter() {
            let influence = (n - 1.0) * (mean - value);
            cube_sum += influence.powi(3);
            square_sum += influence.powi(2);
        }
        cubes += cube_sum / n.powi(3);
        squares += square_sum / n.powi(2);
    }
    let acceleration = cubes / (6.0 * squares.powf(1.5));
    if acceleration.is_finite() {
        acceleration
    } else {
        0.0
    }
}

/// Median of `sorted` with the element at `skip` removed, in O(1).
fn median_without(sorted: &[f64], skip: usize) -> f64 {
    let remaining = sorted.len() - 1;
    let at = |index: usize| {
        if index < skip {
            sorted[index]
        } else {
            sorted[index + 1]
        }
    };
    if remaining % 2 == 1 {
        at(remaining / 2)
    } else {
        (at(remaining / 2 - 1) + at(remaining / 2)) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// The rank-counting median equals the median of the resampled values for
    /// the same draws, bit for bit, for odd and even n and with ties.
    #[test]
    fn rank_counting_median_equals_the_resampled_values_median() {
        use super::super::descriptive::median_in_place;
        for (seed, sample) in [
            (1u64, vec![3.0, 1.0, 2.0, 5.0, 4.0]),
            (2, vec![0.5, 0.25, 0.125, 1.0, 2.0, 0.75]),
            (3, vec![1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 1.0, 9.0]),
            (
                4,
                (0..101).map(|i| ((i * 37) % 101) as f64 * 0.01).collect(),
            ),
        ] {
            let mut sorted = sample.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            let mut counts = vec![0u32; sample.len()];
            let mut by_rank = ChaCha8Rng::seed_from_u64(seed);
            let mut by_value = ChaCha8Rng::seed_from_u64(seed);
            for _ in 0..200 {
                let fast = resampled_median(&sorted, &mut counts, &mut by_rank);
                let mut values: Vec<f64> = (0..sample.len())
                    .map(|_| sorted[by_value.random_range(0..sample.len())])
                    .collect();
                assert_eq!(fast.to_bits(), median_in_place(&mut values).to_bits());
            }
        }
    }

    /// Lognormal sample with median `median` and coefficient of variation
    /// `cv`, via Box–Muller.
    fn lognormal(rng: &mut ChaCha8Rng, n: usize, median: f64, cv: f64) -> Vec<f64> {
        let sigma = (1.0 + cv * cv).ln().sqrt();
        (0..n)
            .map(|_| {
                let u1: f64 = 1.0 - rng.random::<f64>();
                let u2: f64 = rng.random::<f64>();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                median * (sigma * z).exp()
            })
            .collect()
    }

    fn coverage(method: BootstrapMethod) -> f64 {
        // 400 replications, n = 40 per side, lognormal with CV 10%, true
        // ratio of medians 1.1 (medians 1.0 and 1.1), 1000 resamples each.
        let replications = 400u64;
        let covered = (0..replications)
            .into_par_iter()
            .filter(|&replication| {
                let mut rng = ChaCha8Rng::seed_from_u64(0xB007 + replication);
                let a = lognormal(&mut rng, 40, 1.0, 0.10);
                let b = lognormal(&mut rng, 40, 1.1, 0.10);
                let interval = ratio_of_medians(&a, &b, 0.95, 1000, replication, method).unwrap();
                interval.low <= 1.1 && 1.1 <= interval.high
            })
            .count();
        covered as f64 / replications as f64
    }

    #[test]
    fn percentile_interval_covers_true_ratio() {
        let rate = coverage(BootstrapMethod::Percentile);
        println!("bootstrap percentile 95% CI coverage of the true ratio: {:.1}% (400 seeded replications)", rate * 100.0);
        assert!(rate >= 0.93, "coverage {rate}");
    }

    #[test]
    fn bca_interval_covers_true_ratio() {
        let rate = coverage(BootstrapMethod::Bca);
        println!(
            "bootstrap BCa 95% CI coverage of the true ratio: {:.1}% (400 seeded replications)",
            rate * 100.0
        );
        assert!(rate >= 0.93, "coverage {rate}");
    }

    #[test]
    fn deterministic_for_a_fixed_seed() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let a = lognormal(&mut rng, 25, 2.0, 0.05);
        let b = lognormal(&mut rng, 30, 1.9, 0.05);
        for method in [BootstrapMethod::Percentile, BootstrapMethod::Bca] {
            let first = ratio_of_medians(&a, &b, 0.95, 2000, 42, method).unwrap();
            let second = ratio_of_medians(&a, &b, 0.95, 2000, 42, method).unwrap();
            assert_eq!(first, second);
            let other_seed = ratio_of_medians(&a, &b, 0.95, 2000, 43, method).unwrap();
            assert_eq!(first.estimate, other_seed.estimate);
            assert!(first.low <= first.estimate && first.estimate <= first.high);
        }
    }

    #[test]
    fn estimate_is_ratio_of_medians() {
        // Hand computed: median(a) = 2, median(b) = 3.
        let interval = ratio_of_medians(
            &[1.0, 2.0, 3.0],
            &[2.0, 3.0, 4.0, 100.0, 3.0],
            0.9,
            100,
            1,
            BootstrapMethod::Percentile,
        )
        .unwrap();
        assert_eq!(interval.estimate, 1.5);
        assert_eq!(interval.confidence, 0.9);
    }

    #[test]
    fn bca_levels_match_scipy() {
        // scipy 1.17.1, scipy.stats._resampling._bca_interval (the BCa core of
        // scipy.stats.bootstrap, Efron & Tibshirani 1993 §14.3) with
        // statistic median(y)/median(x), data (a, b) below, alpha = 0.05 per
        // tail and the fixed replicates theta_b below returns
        // alpha_1 = 0.11209218809442484, alpha_2 = 0.9812445980221577,
        // a_hat = 0.00416566468146509.
        let a = [1.00, 1.03, 0.98, 1.10, 1.01, 0.97, 1.25, 1.02];
        let b = [1.08, 1.12, 1.05, 1.30, 1.07, 1.11, 1.09];
        let theta_b = [
            1.00, 1.02, 1.04, 1.05, 1.06, 1.065, 1.07, 1.08, 1.09, 1.10, 1.12, 1.15,
        ];
        let estimate = median(&b) / median(&a);
        assert!((jackknife_acceleration(&a, &b) - 0.00416566468146509).abs() < 1e-12);
        let (low, high) = bca_levels(&a, &b, estimate, &theta_b, 0.10);
        assert!((low - 0.11209218809442484).abs() < 1e-9, "{low}");
        assert!((high - 0.9812445980221577).abs() < 1e-9, "{high}");
    }

    #[test]
    fn median_without_matches_brute_force() {
        let sorted = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
        for length in 2..=sorted.len() {
            let data = &sorted[..length];
            for skip in 0..length {
                let rest: Vec<f64> = data
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != skip)
                    .map(|(_, v)| *v)
                    .collect();
                assert_eq!(median_without(data, skip), median(&rest));
            }
        }
    }

    #[test]
    fn edge_cases() {
        let p = BootstrapMethod::Percentile;
        assert!(ratio_of_medians(&[], &[1.0, 2.0], 0.95, 100, 0, p).is_none());
        assert!(ratio_of_medians(&[1.0], &[1.0, 2.0], 0.95, 100, 0, p).is_none());
        assert!(ratio_of_medians(&[1.0, f64::NAN], &[1.0, 2.0], 0.95, 100, 0, p).is_none());
        assert!(ratio_of_medians(&[0.0, 0.0], &[1.0, 2.0], 0.95, 100, 0, p).is_none());
        assert!(ratio_of_medians(&[1.0, 2.0], &[1.0, 2.0], 0.95, 0, 0, p).is_none());
        assert!(ratio_of_medians(&[1.0, 2.0], &[1.0, 2.0], 1.0, 10, 0, p).is_none());
        for method in [BootstrapMethod::Percentile, BootstrapMethod::Bca] {
            let constant = ratio_of_medians(&[2.0; 5], &[3.0; 5], 0.95, 200, 0, method).unwrap();
            assert_eq!(
                (constant.low, constant.estimate, constant.high),
                (1.5, 1.5, 1.5)
            );
            // A zero in A can make a replicate's median 0: infinite ratios
            // sort into the upper tail instead of poisoning the interval.
            let zeros =
                ratio_of_medians(&[0.0, 0.0, 1.0, 2.0], &[1.0, 1.0], 0.95, 500, 3, method).unwrap();
            assert!(!zeros.low.is_nan() && !zeros.high.is_nan());
        }
    }
}
