//! The Mann–Whitney U test (Mann & Whitney 1947) and the exact null
//! distribution of U that both the test and the Hodges–Lehmann confidence
//! interval (`shift.rs`) are built on.
//!
//! Why a rank test next to Welch: run times are skewed and have long right
//! tails (interrupts, migrations, page faults). A rank test does not care
//! how far out a slow run lies, only that it is slower, so a few bad runs
//! cannot manufacture or hide a difference.
//!
//! The p-value matches R's `wilcox.test(b, a, correct = TRUE)` and scipy's
//! `mannwhitneyu(b, a, use_continuity=True)`: exact (from the permutation
//! distribution) when there are no ties and both samples have at most
//! [`EXACT_MAX_N`] values, otherwise the normal approximation with the tie
//! correction of the variance and a continuity correction of 0.5.

use super::distributions::normal_sf;
use serde::Serialize;

/// Largest per-sample size for which the exact null distribution is used.
/// R uses the same cut-off (`n < 50`); at 50 the normal approximation is
/// already accurate to about three decimals, and C(100, 50) ≈ 1e29 still
/// fits the exact integer counts below.
pub const EXACT_MAX_N: usize = 50;

/// Result of the Mann–Whitney test of B against A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// U of B: the number of pairs (a_i, b_j) with b_j > a_i, plus half the
    /// number of tied pairs. Ranges over [0, n_a·n_b]; n_a·n_b/2 means "no
    /// tendency either way".
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` comes from the exact permutation distribution.
    pub exact: bool,
}

/// Mann–Whitney test of `b` (candidate) against `a` (baseline).
///
/// `None` when either sample is empty or holds a non-finite value. When every
/// value in both samples is equal the statistic sits exactly at its null
/// mean and `p` is 1 (R would report NaN).
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let ranks = RankSummary::new(a, b);
    let (m, n) = (a.len(), b.len());
    let pairs = (m * n) as f64;
    let u = ranks.u_of_b;
    if !ranks.has_ties && m <= EXACT_MAX_N && n <= EXACT_MAX_N {
        if let Some(null) = UNullDistribution::new(m, n) {
            // U is an integer without ties. Two-sided p doubles the tail
            // beyond the larger of U and n·m − U (the distribution is
            // symmetric), as R's pwilcox-based code and scipy do.
            let larger = u.max(pairs - u).round() as usize;
            let p = (2.0 * null.sf(larger)).min(1.0);
            return Some(MannWhitney { u, p, exact: true });
        }
    }
    let sigma = u_null_sd(m, n, ranks.tie_term);
    let p = if sigma > 0.0 {
        let z = ((u - pairs / 2.0).abs() - 0.5) / sigma;
        (2.0 * normal_sf(z)).min(1.0)
    } else {
        1.0
    };
    Some(MannWhitney { u, p, exact: false })
}

/// Standard deviation of U under the null, with the tie correction
/// sqrt(m·n/12 · ((N + 1) − Σ(t³ − t) / (N(N − 1)))), N = m + n, where t runs
/// over the sizes of the groups of tied values in the pooled sample.
pub fn u_null_sd(m: usize, n: usize, tie_term: f64) -> f64 {
    let (m, n) = (m as f64, n as f64);
    let total = m + n;
    let correction = if total > 1.0 {
        tie_term / (total * (total - 1.0))
    } else {
        0.0
    };
    let variance = m * n / 12.0 * ((total + 1.0) - correction);
    variance.max(0.0).sqrt()
}

/// Rank information of the pooled sample that the test needs.
pub(super) struct RankSummary {
    /// U of B (mid-ranks for ties).
    pub u_of_b: f64,
    /// Whether any value occurs more than once in the pooled sample.
    pub has_ties: bool,
    /// Σ(t³ − t) over groups of tied values.
    pub tie_term: f64,
}

impl RankSummary {
    /// Ranks the pooled sample once (O(N log N)); assumes no NaN.
    pub fn new(a: &[f64], b: &[f64]) -> Self {
        let mut pooled: Vec<(f64, bool)> = a
            .iter()
            .map(|&x| (x, false))
            .chain(b.iter().map(|&x| (x, true)))
            .collect();
        pooled.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        let mut rank_sum_b = 0.0;
        let mut tie_term = 0.0;
        let mut has_ties = false;
        let mut start = 0;
        while start < pooled.len() {
            let mut end = start + 1;
            // `==` rather than total_cmp so that -0.0 and 0.0 count as a tie.
            while end < pooled.len() && pooled[end].0 == pooled[start].0 {
                end += 1;
            }
            let group = (end - start) as f64;
            // Ranks start..end are 1-based start+1 ..= end; their mean:
            let mid_rank = (start + 1 + end) as f64 / 2.0;
            let from_b = pooled[start..end].iter().filter(|v| v.1).count() as f64;
            rank_sum_b += from_b * mid_rank;
            if end - start > 1 {
                has_ties = true;
                tie_term += group * group * group - group;
            }
            start = end;
        }
        let n_b = b.len() as f64;
        RankSummary {
            u_of_b: rank_sum_b - n_b * (n_b + 1.0) / 2.0,
            has_ties,
            tie_term,
        }
    }
}

/// Whether the pooled sample of `a` and `b` contains a repeated value.
pub(super) fn pooled_has_ties(a: &[f64], b: &[f64]) -> bool {
    let mut pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    pooled.sort_unstable_by(f64::total_cmp);
    pooled.windows(2).any(|w| w[0] == w[1])
}

/// Exact null distribution of U for sample sizes (m, n) without ties: every
/// one of the C(m+n, m) assignments of ranks to the two samples is equally
/// likely under exchangeability.
///
/// The counts are the coefficients of the Gaussian binomial coefficient
/// [m+n choose m]_q, built as Π_{i=1..k} (1 − q^{l+i}) / (1 − q^i) with
/// k = min(m, n), l = max(m, n). Each step is exact integer arithmetic in
/// i128, so tails far below 1e-16 are still right; the cost is O(k²·l).
#[derive(Debug, Clone)]
pub struct UNullDistribution {
    pairs: usize,
    /// `cdf[u]` = P(U ≤ u), u = 0..=m·n.
    cdf: Vec<f64>,
}

impl UNullDistribution {
    /// `None` when a size is 0 or exceeds [`EXACT_MAX_N`] (the counts would
    /// overflow and the normal approximation is good there anyway).
    pub fn new(m: usize, n: usize) -> Option<Self> {
        if m == 0 || n == 0 || m > EXACT_MAX_N || n > EXACT_MAX_N {
            return None;
        }
        let (small, large) = (m.min(n), m.max(n));
        let pairs = m * n;
        // Room for the intermediate polynomial, which reaches degree
        // i·large + i before the division brings it back to i·large.
        let mut counts = vec![0i128; pairs + small + large + 1];
        counts[0] = 1;
        for i in 1..=small {
            let shift = large + i;
            let degree = (i - 1) * large + shift;
            for k in (shift..=degree).rev() {
                counts[k] -= counts[k - shift];
            }
            for k in i..=degree {
                counts[k] += counts[k - i];
            }
        }
        let total: i128 = counts[..=pairs].iter().sum();
        if total <= 0 {
            return None;
        }
        let mut cumulative = 0i128;
        let cdf = counts[..=pairs]
            .iter()
            .map(|&count| {
                cumulative += count;
                cumulative as f64 / total as f64
            })
            .collect();
        Some(UNullDistribution { pairs, cdf })
    }

    /// P(U ≤ u).
    pub fn cdf(&self, u: usize) -> f64 {
        self.cdf[u.min(self.pairs)]
    }

    /// P(U ≥ u), computed through the symmetry P(U ≥ u) = P(U ≤ m·n − u) so
    /// that small upper tails are not lost to 1 − cdf cancellation.
    pub fn sf(&self, u: usize) -> f64 {
        if u > self.pairs {
            0.0
        } else {
            self.cdf[self.pairs - u]
        }
    }

    /// R's `qwilcox(p, m, n)`: the smallest u with P(U ≤ u) ≥ p. `None` for
    /// p outside [0, 1].
    pub fn quantile(&self, p: f64) -> Option<usize> {
        if !(0.0..=1.0).contains(&p) {
            return None;
        }
        // A relative tolerance so that p computed as e.g. 0.05 / 2 does not
        // miss an atom it equals mathematically.
        let target = p * (1.0 - 1e-12);
        Some(self.cdf.partition_point(|&c| c < target).min(self.pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, relative: f64) -> bool {
        (a - b).abs() <= relative * b.abs()
    }

    #[test]
    fn exact_case_matches_scipy_docs_example() {
        // scipy 1.17.1 documentation example for mannwhitneyu:
        // males = [19, 22, 16, 29, 24], females = [20, 11, 17, 12]
        // mannwhitneyu(males, females, method="exact") -> U1 = 17.0,
        // p = 0.1111111111111111. B = males, A = females.
        let females = [20.0, 11.0, 17.0, 12.0];
        let males = [19.0, 22.0, 16.0, 29.0, 24.0];
        let r = mann_whitney(&females, &males).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 17.0);
        assert!(close(r.p, 0.1111111111111111, 1e-12), "p = {}", r.p);
        // Swapping gives U = 20 - 17 = 3 and the same two-sided p.
        let swapped = mann_whitney(&males, &females).unwrap();
        assert_eq!(swapped.u, 3.0);
        assert!(close(swapped.p, r.p, 1e-12));
    }

    #[test]
    fn exact_case_matches_r_documentation_example() {
        // R's ?wilcox.test example (Hollander & Wolfe 1973, p. 69):
        // wilcox.test(x, y, alternative = "g") -> W = 35, p-value = 0.1272;
        // two-sided, scipy 1.17.1 mannwhitneyu(x, y, method="exact")
        // -> statistic 35.0, pvalue 0.2544122544122544.
        let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
        let y = [1.15, 0.88, 0.90, 0.74, 1.21];
        let r = mann_whitney(&y, &x).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 35.0);
        assert!(close(r.p, 0.2544122544122544, 1e-12));
    }

    #[test]
    fn exact_case_at_larger_sizes_matches_scipy() {
        // scipy 1.17.1, mannwhitneyu(b, a, method="exact"):
        // a = [0, 1, ..., 19], b = [5.25 + 0.7 i for i in 0..30]
        // -> statistic = 448.0, pvalue = 0.0028955545016454034
        let a: Vec<f64> = (0..20).map(f64::from).collect();
        let b: Vec<f64> = (0..30).map(|i| 5.25 + 0.7 * f64::from(i)).collect();
        let r = mann_whitney(&a, &b).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 448.0);
        assert!(close(r.p, 0.0028955545016454034, 1e-10), "p = {}", r.p);
        // a = [0, ..., 49], b = a + 12.5 (the largest exact size)
        // -> statistic = 1797.0, pvalue = 0.0001247113436578445
        let a: Vec<f64> = (0..50).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 12.5).collect();
        let r = mann_whitney(&a, &b).unwrap();
        assert!(r.exact);
        assert_eq!(r.u, 1797.0);
        assert!(close(r.p, 0.0001247113436578445, 1e-10), "p = {}", r.p);
    }

    #[test]
    fn approximate_case_with_ties_matches_scipy() {
        // scipy 1.17.1:
        // mannwhitneyu(b, a, method="asymptotic", use_continuity=True)
        // with a = [1, 2, 2, 3, 3, 3, 4, 5], b = [3, 4, 4, 5, 5, 6, 6, 7, 2]
        // -> statistic = 58.5, pvalue = 0.03175895714806371
        let a = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0];
        let b = [3.0, 4.0, 4.0, 5.0, 5.0, 6.0, 6.0, 7.0, 2.0];
        let r = mann_whitney(&a, &b).unwrap();
        assert!(!r.exact);
        assert_eq!(r.u, 58.5);
        assert!(close(r.p, 0.03175895714806371, 1e-9), "p = {}", r.p);
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        // scipy 1.17.1: mannwhitneyu(b, a, method="asymptotic") with
        // a = [0, 1, ..., 59], b = [10.5, 11.5, ..., 69.5] (no ties)
        // -> statistic = 2375.0, pvalue = 0.0025668879435241754
        let a: Vec<f64> = (0..60).map(f64::from).collect();
        let b: Vec<f64> = (0..60).map(|i| f64::from(i) + 10.5).collect();
        let r = mann_whitney(&a, &b).unwrap();
        assert!(!r.exact);
        assert_eq!(r.u, 2375.0);
        assert!(close(r.p, 0.0025668879435241754, 1e-9), "p = {}", r.p);
    }

    #[test]
    fn exact_distribution_small_case_by_enumeration() {
        // Hand enumeration for m = 2, n = 2: the 6 rank sets of the first
        // sample give U = 0, 1, 2, 2, 3, 4, so P(U ≤ u) = 1/6, 2/6, 4/6, 5/6, 1.
        let d = UNullDistribution::new(2, 2).unwrap();
        let want = [1.0 / 6.0, 2.0 / 6.0, 4.0 / 6.0, 5.0 / 6.0, 1.0];
        for (u, w) in want.iter().enumerate() {
            assert!(close(d.cdf(u), *w, 1e-15));
        }
        assert!(close(d.sf(4), 1.0 / 6.0, 1e-15));
        // R: qwilcox(0.025, 5, 5) = 3 (P(U <= 2) = 4/252 < 0.025 <= 7/252).
        let five = UNullDistribution::new(5, 5).unwrap();
        assert_eq!(five.quantile(0.025), Some(3));
        assert!(close(five.cdf(0), 1.0 / 252.0, 1e-15));
        // The largest supported size stays normalised and symmetric.
        let big = UNullDistribution::new(50, 50).unwrap();
        assert!(close(big.cdf(2500), 1.0, 1e-15));
        assert!(close(big.cdf(1249), big.sf(1251), 1e-12));
        assert!(UNullDistribution::new(51, 3).is_none());
        assert!(UNullDistribution::new(0, 3).is_none());
    }

    #[test]
    fn edge_cases() {
        assert!(mann_whitney(&[], &[1.0]).is_none());
        assert!(mann_whitney(&[1.0, f64::NAN], &[1.0]).is_none());
        let single = mann_whitney(&[1.0], &[2.0]).unwrap();
        assert_eq!(single.u, 1.0);
        assert_eq!(single.p, 1.0);
        let constant = mann_whitney(&[3.0; 4], &[3.0; 6]).unwrap();
        assert_eq!(constant.u, 12.0);
        assert_eq!(constant.p, 1.0);
        let zeros = mann_whitney(&[0.0, -0.0], &[0.0]).unwrap();
        assert_eq!(zeros.u, 1.0);
        assert!(pooled_has_ties(&[1.0, 2.0], &[2.0]));
        assert!(!pooled_has_ties(&[1.0, 2.0], &[3.0]));
    }
}
