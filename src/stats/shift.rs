//! Rank-based effect sizes of B against A: the Hodges–Lehmann shift with its
//! distribution-free confidence interval (Hodges & Lehmann 1963; Bauer
//! 1972), and Cliff's delta (Cliff 1993).
//!
//! The Hodges–Lehmann estimate is the median of all n_a·n_b differences
//! b_j − a_i. Its confidence interval is a pair of order statistics of those
//! differences whose ranks come from the null distribution of the
//! Mann–Whitney U: it is exact (not approximately, but at least the stated
//! coverage) whenever A and B differ by a pure shift, and in particular when
//! they are exchangeable (an A/A comparison). That property is what the
//! sequential stopping rule relies on.

use super::descriptive::midpoint;
use super::distributions::normal_quantile;
use super::mann_whitney::{pooled_has_ties, u_null_sd, UNullDistribution, EXACT_MAX_N};
use serde::Serialize;

/// A location shift b − a with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shift {
    /// Median of all pairwise differences b_j − a_i.
    pub estimate: f64,
    /// Lower confidence bound; −inf when the confidence cannot be reached
    /// with these sample sizes.
    pub low: f64,
    /// Upper confidence bound; +inf when the confidence cannot be reached.
    pub high: f64,
    /// The requested confidence level (never silently lowered).
    pub confidence: f64,
}

/// Hodges–Lehmann estimate of the shift b − a with a two-sided
/// distribution-free confidence interval at level `confidence`.
///
/// The interval is [D_(k), D_(N−k+1)] over the N = n_a·n_b sorted pairwise
/// differences D, which is what R's `wilcox.test(b, a, conf.int = TRUE)`
/// returns in its exact branch:
/// - exact: no ties in the pooled sample and both n ≤ [`EXACT_MAX_N`]:
///   k = qwilcox(α/2, n_a, n_b), so the coverage is 1 − 2·P(U ≤ k − 1) ≥ 1 − α;
/// - otherwise the normal approximation of U with a continuity correction
///   (Hollander & Wolfe 1999, §4.3): k = ⌊N/2 + ½ − z_{1−α/2}·σ_U⌋ with the
///   untied σ_U. Ignoring the tie correction keeps the interval a little
///   wider (conservative) rather than guessing the ties at the unknown shift.
///
/// When even [D_(1), D_(N)] has less than the requested coverage (tiny
/// samples, very high confidence), the bounds are −inf and +inf.
///
/// `None` when a sample is empty, a value is not finite, or `confidence` is
/// not strictly between 0 and 1.
///
/// The N differences are never stored: each order statistic is selected
/// from the implicit sorted matrix of differences ([`PairwiseDifferences`]),
/// so memory is O(n_a + n_b) (two sorted copies) and time
/// O((n_a + n_b)·64) per order statistic: 1,000,000 values a side (10¹²
/// differences) take about a second and 32 MB.
pub fn hodges_lehmann(a: &[f64], b: &[f64], confidence: f64) -> Option<Shift> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let differences = PairwiseDifferences::new(a, b);
    let count = differences.count();
    let estimate = if count % 2 == 1 {
        differences.select(count / 2)
    } else {
        midpoint(
            differences.select(count / 2 - 1),
            differences.select(count / 2),
        )
    };
    let ties = pooled_has_ties(a, b);
    let (low, high) = match lower_bound_rank(a.len(), b.len(), confidence, ties) {
        Some(rank) => {
            let rank = rank as u64;
            let low = differences.select(rank - 1);
            let high = differences.select(count - rank);
            (low, high)
        }
        None => (f64::NEG_INFINITY, f64::INFINITY),
    };
    Some(Shift {
        estimate,
        low,
        high,
        confidence,
    })
}

/// The n_a·n_b differences b_j − a_i, as the matrix they form over sorted A
/// and sorted B, without storing it.
///
/// With A and B sorted ascending, b_j − a_i grows along j and shrinks along
/// i, also as computed in floating point (rounding to nearest is monotone),
/// so the number of differences ≤ t is counted in one O(n_a + n_b) walk
/// along the staircase between "≤ t" and "> t". The k-th smallest
/// difference is the smallest double t whose count reaches k: a bisection
/// over the 2⁶⁴ doubles in their total order, at most 64 counts, and
/// always a value that is one of the computed differences, so it equals
/// what sorting all N of them would give. (Johnson & Mizoguchi 1978 and
/// Monahan 1984 select in the same matrix with fewer steps and more code;
/// at 64 walks of n_a + n_b the plain bisection is fast enough.)
pub struct PairwiseDifferences {
    a: Vec<f64>,
    b: Vec<f64>,
}

impl PairwiseDifferences {
    /// Sorted copies of `a` and `b`; the values must be finite (NaN would
    /// break the order the walk relies on).
    pub fn new(a: &[f64], b: &[f64]) -> Self {
        let mut a = a.to_vec();
        let mut b = b.to_vec();
        a.sort_unstable_by(f64::total_cmp);
        b.sort_unstable_by(f64::total_cmp);
        Self { a, b }
    }

    /// N = n_a·n_b (saturating, which no slice in memory reaches).
    pub fn count(&self) -> u64 {
        (self.a.len() as u64).saturating_mul(self.b.len() as u64)
    }

    /// How many differences b_j − a_i are ≤ `t`.
    fn at_most(&self, t: f64) -> u64 {
        let n = self.a.len();
        // For each b_j (ascending), {i : b_j − a_i ≤ t} is a suffix of A
        // that only shrinks as b_j grows: `first` only moves right.
        let mut first = 0;
        let mut total = 0u64;
        for &y in &self.b {
            while first < n && y - self.a[first] > t {
                first += 1;
            }
            total += (n - first) as u64;
        }
        total
    }

    /// The difference of 0-based rank `index` (clamped to the last) in
    /// ascending order; NaN when there are none.
    pub fn select(&self, index: u64) -> f64 {
        let (Some(&a_min), Some(&a_max), Some(&b_min), Some(&b_max)) =
            (self.a.first(), self.a.last(), self.b.first(), self.b.last())
        else {
            return f64::NAN;
        };
        let wanted = index.min(self.count() - 1) + 1;
        // Every difference lies in [b_min − a_max, b_max − a_min]; the
        // largest one has count N ≥ wanted.
        let mut low = order_key(b_min - a_max);
        let mut high = order_key(b_max - a_min);
        while low < high {
            let middle = low + (high - low) / 2;
            if self.at_most(from_order_key(middle)) >= wanted {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        // −0 and +0 count alike; report the zero the subtraction gives.
        from_order_key(low) + 0.0
    }
}

/// A double's position in IEEE 754 total order as an unsigned integer:
/// x < y (for non-NaN values, −0 before +0) exactly when key(x) < key(y).
fn order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The inverse of [`order_key`].
fn from_order_key(key: u64) -> f64 {
    if key >> 63 == 1 {
        f64::from_bits(key & !(1 << 63))
    } else {
        f64::from_bits(!key)
    }
}

/// The 1-based rank k of the lower bound among the m·n sorted differences
/// (the upper bound has rank m·n − k + 1). `None` when no pair of order
/// statistics reaches `confidence`. `ties` selects the normal approximation,
/// as the exact distribution assumes distinct values.
pub fn lower_bound_rank(m: usize, n: usize, confidence: f64, ties: bool) -> Option<usize> {
    if m == 0 || n == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let alpha = 1.0 - confidence;
    let pairs = m.saturating_mul(n);
    if !ties && m <= EXACT_MAX_N && n <= EXACT_MAX_N {
        let null = UNullDistribution::new(m, n)?;
        let rank = null.quantile(alpha / 2.0)?;
        if rank >= 1 {
            return Some(rank);
        }
        // qwilcox gave 0: the extreme interval [D_(1), D_(N)] covers with
        // probability 1 − 2·P(U = 0); R would return it with a warning and
        // a lowered level, we only return it if it really reaches the level.
        return (2.0 * null.cdf(0) <= alpha * (1.0 + 1e-12)).then_some(1);
    }
    let z = normal_quantile(1.0 - alpha / 2.0);
    let sigma = u_null_sd(m, n, 0.0);
    let bound = (pairs as f64 / 2.0 + 0.5 - z * sigma).floor();
    if bound.is_finite() && bound >= 1.0 {
        Some((bound as usize).min(pairs.div_ceil(2)))
    } else {
        None
    }
}

/// Cliff's delta, P(b > a) − P(b < a) over all pairs, in [−1, 1]: positive
/// when B tends to be larger. It is the rank-based effect size that stays
/// meaningful for skewed run times (Cliff 1993); |δ| < 0.147 is often read
/// as negligible and > 0.474 as large (Romano et al. 2006). NaN when a
/// sample is empty or holds a NaN. O((n_a + n_b)·log n_a) by binary search
/// in sorted A.
pub fn cliffs_delta(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let mut sorted_a = a.to_vec();
    sorted_a.sort_unstable_by(f64::total_cmp);
    let mut b_larger = 0usize;
    let mut b_smaller = 0usize;
    for &value in b {
        let below = sorted_a.partition_point(|&x| x < value);
        let not_above = sorted_a.partition_point(|&x| x <= value);
        b_larger += below;
        b_smaller += sorted_a.len() - not_above;
    }
    (b_larger as f64 - b_smaller as f64) / (a.len() as f64 * b.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The independent oracle: every difference stored and sorted, as
    /// `hodges_lehmann` did before it selected in the implicit matrix.
    fn brute_force(a: &[f64], b: &[f64], confidence: f64) -> Option<Shift> {
        if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| !x.is_finite()) {
            return None;
        }
        let mut d: Vec<f64> = b
            .iter()
            .flat_map(|&y| a.iter().map(move |&x| y - x))
            .collect();
        d.sort_unstable_by(f64::total_cmp);
        let n = d.len();
        let estimate = if n % 2 == 1 {
            d[n / 2]
        } else {
            midpoint(d[n / 2 - 1], d[n / 2])
        };
        let (low, high) =
            match lower_bound_rank(a.len(), b.len(), confidence, pooled_has_ties(a, b)) {
                Some(k) => (d[k - 1], d[n - k]),
                None => (f64::NEG_INFINITY, f64::INFINITY),
            };
        Some(Shift {
            estimate,
            low,
            high,
            confidence,
        })
    }

    #[test]
    fn selection_matches_sorting_every_difference_on_seeded_data() {
        // 400 seeded cases: sizes 1..=120 a side (exact and normal
        // branches, odd and even N), continuous data, data rounded to
        // few distinct values (many tied differences), mixed signs and
        // magnitudes, and values whose differences overflow to ±inf.
        for seed in 0..400u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n_a = rng.random_range(1..=120);
            let n_b = rng.random_range(1..=120);
            let kind = seed % 4;
            let draw = |rng: &mut ChaCha8Rng| -> f64 {
                let x: f64 = rng.random_range(-1.0..1.0);
                match kind {
                    0 => 100.0 + x,
                    1 => (x * 4.0).round(),
                    2 => x * 10f64.powi(rng.random_range(-8..8)),
                    _ => x * f64::MAX,
                }
            };
            let a: Vec<f64> = (0..n_a).map(|_| draw(&mut rng)).collect();
            let b: Vec<f64> = (0..n_b).map(|_| draw(&mut rng) + 0.25).collect();
            for confidence in [0.5, 0.95, 0.999] {
                let fast = hodges_lehmann(&a, &b, confidence).unwrap();
                let slow = brute_force(&a, &b, confidence).unwrap();
                assert_eq!(
                    fast, slow,
                    "seed {seed}, n {n_a}×{n_b}, confidence {confidence}"
                );
            }
            let d = PairwiseDifferences::new(&a, &b);
            let mut all: Vec<f64> = b
                .iter()
                .flat_map(|&y| a.iter().map(move |&x| y - x))
                .collect();
            all.sort_unstable_by(f64::total_cmp);
            for index in [0, all.len() / 3, all.len() - 1] {
                assert_eq!(
                    d.select(index as u64),
                    all[index],
                    "seed {seed} index {index}"
                );
            }
        }
    }

    #[test]
    fn signed_zeros_and_ties_select_like_sorting() {
        let a = [0.0, -0.0, 1.0, 1.0];
        let b = [-0.0, 0.0, 1.0];
        let d = PairwiseDifferences::new(&a, &b);
        let mut all: Vec<f64> = b
            .iter()
            .flat_map(|&y| a.iter().map(move |&x| y - x))
            .collect();
        all.sort_unstable_by(f64::total_cmp);
        for (index, value) in all.iter().enumerate() {
            assert_eq!(d.select(index as u64), *value, "index {index}");
        }
        assert_eq!(d.select(1000), 1.0, "an index past the end is the largest");
        assert!(PairwiseDifferences::new(&[], &[1.0]).select(0).is_nan());
    }

    #[test]
    fn a_million_a_side_is_selected_from_two_sorted_copies() {
        // 10¹² differences, which sorting would need 8 TB for. The only
        // storage is the two sorted copies: O(n_a + n_b) by construction.
        // a = 0, 1, …, n−1 and b = a + 7: the differences are j − i + 7, an
        // integer triangle symmetric about 7, so the median is 7, and
        // D_(k) is the value v whose count of differences ≤ v first
        // reaches k.
        let n = 1_000_000usize;
        let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 7.0).collect();
        let d = PairwiseDifferences::new(&a, &b);
        assert_eq!(d.a.len() + d.b.len(), 2 * n);
        assert_eq!(d.a.capacity() + d.b.capacity(), 2 * n);
        assert_eq!(d.count(), 1_000_000_000_000);
        assert_eq!(d.select(0), 7.0 - (n as f64 - 1.0));
        assert_eq!(d.select(d.count() - 1), 7.0 + (n as f64 - 1.0));
        // Differences ≤ 7 − (n − 1) + t number (t+1)(t+2)/2: index 2 is
        // the first with t = 1.
        assert_eq!(d.select(2), 7.0 - (n as f64 - 2.0));
        let s = hodges_lehmann(&a, &b, 0.95).unwrap();
        assert_eq!(s.estimate, 7.0);
        assert!(
            s.low < 7.0 && s.high > 7.0 && s.high - 7.0 == 7.0 - s.low,
            "{s:?}"
        );
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    // Reference implementation for the expected values below, independent of
    // this code (Python 3, numpy 2.4.6): the null distribution of U is built
    // by enumerating every rank set of B, then R's qwilcox/conf.int rule.
    //
    //   from itertools import combinations
    //   import numpy as np
    //   def hl(a, b, conf):
    //       m, n = len(a), len(b)
    //       us = np.array([sum(r + 1 for r in s) - n * (n + 1) / 2
    //                      for s in combinations(range(m + n), n)])
    //       alpha = 1 - conf
    //       q = min(u for u in range(m * n + 1)
    //               if (us <= u).mean() >= alpha / 2)
    //       d = np.sort([y - x for x in a for y in b])
    //       return np.median(d), d[q - 1], d[m * n - q]

    #[test]
    fn exact_interval_matches_enumeration_on_r_example() {
        // Data of R's ?wilcox.test example (Hollander & Wolfe 1973, p. 69),
        // b = x, a = y. hl(y, x, 0.95) -> (0.305, -0.15, 0.76), q = 9.
        let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
        let y = [1.15, 0.88, 0.90, 0.74, 1.21];
        let s = hodges_lehmann(&y, &x, 0.95).unwrap();
        assert!(close(s.estimate, 0.305, 1e-12), "{s:?}");
        assert!(close(s.low, -0.15, 1e-12), "{s:?}");
        assert!(close(s.high, 0.76, 1e-12), "{s:?}");
        assert_eq!(s.confidence, 0.95);
    }

    #[test]
    fn exact_interval_matches_enumeration_small_samples() {
        // hl([10.1, 10.4, 9.8, 10.0, 10.3], [10.9, 11.2, 10.6, 11.5, 10.7], 0.9)
        // -> (0.8, 0.5, 1.2)   (q = qwilcox(0.05, 5, 5) = 5)
        let a = [10.1, 10.4, 9.8, 10.0, 10.3];
        let b = [10.9, 11.2, 10.6, 11.5, 10.7];
        let s = hodges_lehmann(&a, &b, 0.9).unwrap();
        assert!(close(s.estimate, 0.8, 1e-12), "{s:?}");
        assert!(close(s.low, 0.5, 1e-12), "{s:?}");
        assert!(close(s.high, 1.2, 1e-12), "{s:?}");
    }

    #[test]
    fn normal_approximation_interval_with_ties() {
        // Ties force the normal branch. Independent Python 3 / scipy 1.17.1:
        //   m, n = 8, 9; N = m * n
        //   z = scipy.stats.norm.ppf(0.975)
        //   k = floor(N / 2 + 0.5 - z * sqrt(m * n * (m + n + 1) / 12))  # = 16
        //   d = np.sort([y - x for x in a for y in b])
        //   (np.median(d), d[k - 1], d[N - k]) -> (2.0, 0.0, 3.0)
        let a = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0];
        let b = [3.0, 4.0, 4.0, 5.0, 5.0, 6.0, 6.0, 7.0, 2.0];
        assert_eq!(lower_bound_rank(8, 9, 0.95, true), Some(16));
        let s = hodges_lehmann(&a, &b, 0.95).unwrap();
        assert_eq!((s.estimate, s.low, s.high), (2.0, 0.0, 3.0));
    }

    #[test]
    fn unreachable_confidence_gives_infinite_bounds() {
        // n = 2 per side: P(U = 0) = 1/6, so the widest interval covers only
        // 2/3 and 95% cannot be reached.
        let s = hodges_lehmann(&[1.0, 2.0], &[3.0, 4.0], 0.95).unwrap();
        assert_eq!(s.estimate, 2.0);
        assert_eq!((s.low, s.high), (f64::NEG_INFINITY, f64::INFINITY));
        assert_eq!(s.confidence, 0.95);
        // n = 4 per side: 2/70 ≤ 0.05, so [D_(1), D_(16)] is returned.
        assert_eq!(lower_bound_rank(4, 4, 0.95, false), Some(1));
        // n = 1 per side can never give a finite interval.
        let single = hodges_lehmann(&[1.0], &[2.0], 0.5).unwrap();
        assert_eq!(single.estimate, 1.0);
        assert_eq!(single.low, f64::NEG_INFINITY);
    }

    #[test]
    fn edge_cases() {
        assert!(hodges_lehmann(&[], &[1.0], 0.95).is_none());
        assert!(hodges_lehmann(&[1.0, f64::NAN], &[1.0], 0.95).is_none());
        assert!(hodges_lehmann(&[1.0], &[1.0], 1.0).is_none());
        assert!(hodges_lehmann(&[1.0], &[1.0], f64::NAN).is_none());
        let constant = hodges_lehmann(&[2.0; 10], &[2.0; 10], 0.95).unwrap();
        assert_eq!(
            (constant.estimate, constant.low, constant.high),
            (0.0, 0.0, 0.0)
        );
        let zeros = hodges_lehmann(&[0.0; 3], &[0.0, 1.0, 2.0], 0.5).unwrap();
        assert_eq!(zeros.estimate, 1.0);
    }

    #[test]
    fn cliffs_delta_hand_example() {
        // a = [1, 2, 3], b = [2, 3, 4, 5]: of the 12 pairs, b > a in 9
        // (b=2: 1; b=3: 2; b=4: 3; b=5: 3), b < a in 1 (b=2 < a=3), tied in 2.
        // delta = (9 - 1) / 12 = 2/3.
        assert!(close(
            cliffs_delta(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0]),
            2.0 / 3.0,
            1e-15
        ));
        assert_eq!(cliffs_delta(&[1.0, 2.0], &[5.0, 6.0]), 1.0);
        assert_eq!(cliffs_delta(&[5.0, 6.0], &[1.0, 2.0]), -1.0);
        assert_eq!(cliffs_delta(&[3.0; 4], &[3.0; 2]), 0.0);
        assert!(cliffs_delta(&[], &[1.0]).is_nan());
        assert!(cliffs_delta(&[f64::NAN], &[1.0]).is_nan());
    }

    /// Share of `replications` seeded shift experiments (B = A + 0.3, normal
    /// data, `n` per side) whose 95% interval contains the true shift 0.3.
    fn coverage(n: usize, replications: u64) -> f64 {
        use super::super::sequential::standard_normal;
        use rand::SeedableRng;
        use rand_chacha::ChaCha8Rng;
        use rayon::prelude::*;
        let covered = (0..replications)
            .into_par_iter()
            .filter(|&seed| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let a: Vec<f64> = (0..n).map(|_| standard_normal(&mut rng)).collect();
                let b: Vec<f64> = (0..n).map(|_| 0.3 + standard_normal(&mut rng)).collect();
                let s = hodges_lehmann(&a, &b, 0.95).unwrap();
                s.low <= 0.3 && 0.3 <= s.high
            })
            .count();
        covered as f64 / replications as f64
    }

    #[test]
    fn interval_covers_the_true_shift() {
        // Exact branch (n = 12) and normal branch (n = 80), 2000 seeded
        // replications each (seeds 0..2000). The exact interval's coverage is
        // at least 95% by construction; the binomial standard error of the
        // estimate is about 0.5 points.
        let exact = coverage(12, 2000);
        let normal = coverage(80, 2000);
        println!(
            "Hodges–Lehmann 95% CI coverage: exact branch (n=12) {:.1}%, normal branch (n=80) {:.1}%",
            exact * 100.0,
            normal * 100.0
        );
        assert!(exact >= 0.94, "exact coverage {exact}");
        assert!(normal >= 0.94, "normal coverage {normal}");
    }

    #[test]
    fn large_samples_stay_fast() {
        // 2000 × 2000 = 4M differences; the normal branch is used.
        let a: Vec<f64> = (0..2000).map(|i| f64::from(i) * 0.5).collect();
        let b: Vec<f64> = (0..2000).map(|i| f64::from(i) * 0.5 + 0.25 + 3.0).collect();
        let s = hodges_lehmann(&a, &b, 0.95).unwrap();
        assert!(close(s.estimate, 3.25, 1e-12), "{s:?}");
        assert!(s.low < 3.25 && s.high > 3.25);
    }
}
