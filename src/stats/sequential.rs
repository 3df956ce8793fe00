//! Adaptive stopping for `compare`: run in rounds, look at the data now and
//! then, and stop as soon as every metric has a verdict, without inflating
//! the false-alarm rate.
//!
//! # Why peeking is normally a problem
//! Testing after every round at level α and stopping at the first
//! "significant" result raises the chance of a false FASTER/SLOWER far above
//! α: each look is another chance for noise to cross the line.
//!
//! # The design: a Bonferroni alpha-spending confidence sequence
//! - Looks happen only at geometrically spaced per-side sample sizes
//!   n_1 = min_runs (default 5), n_{k+1} = max(n_k + 1, ⌈1.4·n_k⌉), i.e.
//!   5, 7, 10, 14, 20, 28, 40, 56, 79, 111, … The schedule does not depend
//!   on the data.
//! - Look k spends α_k = α / (k(k + 1)). Since Σ_k 1/(k(k+1)) = 1, the
//!   spending over all looks, however many, sums to at most α.
//! - At each look the decision interval is the Hodges–Lehmann confidence
//!   interval at level 1 − α_k (with M metrics, 1 − α_k/M each) of the
//!   shift of ln b against ln a, turned into a ratio B/A by exp. The
//!   interval is distribution-free and exact (at least its nominal coverage)
//!   whenever B is A scaled by a constant, in particular in an A/A test.
//! - By the union bound, the probability that *any* interval of *any* look
//!   of *any* metric misses the true ratio is at most Σ_k Σ_m α_k/M = α.
//!   The intervals thus form a confidence sequence (Howard, Ramdas et al.
//!   2021): simultaneously valid over all looks. Stopping at a look, or at
//!   any data-dependent time, cannot make a false FASTER/SLOWER more likely
//!   than α, because such a verdict needs an interval that excludes the
//!   true ratio (1 in an A/A comparison).
//! - A look whose level is out of reach at that sample size (even the
//!   widest interval D_(1)..D_(N) of pairwise differences covers less than
//!   1 − α_k/M, e.g. tiny n with many metrics) is skipped without spending
//!   its α. Whether a look is reachable depends only on n, k and M, never on
//!   the data, so the schedule stays fixed in advance.
//! - When the run budget ends between looks, [`Sequential::finish`]
//!   evaluates once more at the next unspent α_k, which is still inside the
//!   sum.
//! - If a metric has a value ≤ 0 (logarithms impossible), the
//!   Hodges–Lehmann interval of the raw difference b − a is divided by
//!   median(a) and shifted by 1 (still exact for A/A); if median(a) ≤ 0 the
//!   verdict is UNKNOWN.
//!
//! The price is conservatism: the union bound is loose, so the measured A/A
//! false-alarm rate is well below α (see docs/methodology.md). The
//! simulations that measure it, and their tests, are in `sequential_sim`.

use super::descriptive::median;
use super::shift::{hodges_lehmann, lower_bound_rank};
use super::verdict::{decide, Verdict};
use rand::Rng;
use serde::Serialize;

/// Growth factor of the look schedule: small enough that a clear effect is
/// caught soon after it becomes decidable, large enough that the α spent per
/// look (which shrinks like 1/k²) stays useful up to a few hundred runs.
const LOOK_GROWTH: f64 = 1.4;

/// When to stop a `compare` run.
#[derive(Debug, Clone)]
pub struct StoppingRule {
    /// Total false-alarm budget over all looks and all metrics (0.05).
    pub alpha: f64,
    /// Equivalence margin as a fraction (0.01 = ±1%).
    pub margin: f64,
    /// Per-side sample size of the first look (5).
    pub min_runs: usize,
    /// Per metric, in the samples' order: whether larger values are better
    /// (throughput) instead of smaller. A metric past its end is
    /// lower-is-better.
    pub higher_is_better: Vec<bool>,
}

impl Default for StoppingRule {
    fn default() -> Self {
        StoppingRule {
            alpha: 0.05,
            margin: 0.01,
            min_runs: 5,
            higher_is_better: Vec::new(),
        }
    }
}

/// One evaluation of one metric.
#[derive(Debug, Clone, Serialize)]
pub struct Look {
    /// Index k of the look whose α was spent (1-based); 0 for a standalone
    /// [`evaluate`].
    pub look: usize,
    pub n_a: usize,
    pub n_b: usize,
    /// Two-sided α of this interval (α_k / M in a sequential run).
    pub alpha: f64,
    /// Point estimate of B/A: exp of the Hodges–Lehmann shift of the logs.
    pub ratio: f64,
    /// Lower bound of the 1 − alpha interval of B/A.
    pub low: f64,
    /// Upper bound of the 1 − alpha interval of B/A.
    pub high: f64,
    pub verdict: Verdict,
}

/// The α spent by look `k` (1-based): α / (k(k + 1)). 0 for k = 0.
pub fn look_alpha(alpha: f64, k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    let k = k as f64;
    alpha / (k * (k + 1.0))
}

/// Per-side sample size of the look after one at size `size`.
pub fn following_look_size(size: usize) -> usize {
    let grown = (size as f64 * LOOK_GROWTH).ceil();
    // Saturate instead of overflowing for absurd sizes.
    let grown = if grown >= usize::MAX as f64 {
        usize::MAX
    } else {
        grown as usize
    };
    grown.max(size.saturating_add(1))
}

/// Evaluates one metric once at level 1 − `alpha` (a fixed-sample
/// comparison; `look` is 0). Never panics: empty or non-finite samples, an
/// invalid alpha, or a non-positive median(a) on the raw scale give UNKNOWN
/// with NaN numbers.
pub fn evaluate(a: &[f64], b: &[f64], alpha: f64, margin: f64, higher_is_better: bool) -> Look {
    let mut look = Look {
        look: 0,
        n_a: a.len(),
        n_b: b.len(),
        alpha,
        ratio: f64::NAN,
        low: f64::NAN,
        high: f64::NAN,
        verdict: Verdict::Unknown,
    };
    if !(alpha > 0.0 && alpha < 1.0) {
        return look;
    }
    let confidence = 1.0 - alpha;
    let all_positive = a.iter().chain(b).all(|&x| x > 0.0);
    let interval = if all_positive {
        let log_a: Vec<f64> = a.iter().map(|x| x.ln()).collect();
        let log_b: Vec<f64> = b.iter().map(|x| x.ln()).collect();
        hodges_lehmann(&log_a, &log_b, confidence)
            .map(|shift| (shift.estimate.exp(), shift.low.exp(), shift.high.exp()))
    } else {
        let baseline = median(a);
        if baseline > 0.0 && baseline.is_finite() {
            hodges_lehmann(a, b, confidence).map(|shift| {
                (
                    1.0 + shift.estimate / baseline,
                    1.0 + shift.low / baseline,
                    1.0 + shift.high / baseline,
                )
            })
        } else {
            None
        }
    };
    if let Some((ratio, low, high)) = interval {
        look.ratio = ratio;
        look.low = low;
        look.high = high;
        look.verdict = decide(low, high, margin, higher_is_better);
    }
    look
}

/// Whether every metric has a verdict other than UNKNOWN (an empty list is
/// not decided).
pub fn decided(looks: &[Look]) -> bool {
    !looks.is_empty() && looks.iter().all(|look| look.verdict != Verdict::Unknown)
}

/// State of one sequential experiment: which α has been spent and when the
/// next look is due.
#[derive(Debug, Clone)]
pub struct Sequential {
    rule: StoppingRule,
    /// Number of metrics M the α of each look is split over.
    metrics: usize,
    /// Number of looks whose α has been spent.
    looks_spent: usize,
    /// Per-side size at which the next look is due.
    next_size: usize,
    /// Per-side size and result of the latest evaluation, so that `finish`
    /// at the size of the last look does not spend α again.
    latest: Option<(usize, Vec<Look>)>,
}

impl Sequential {
    /// A new experiment with `metrics` metrics (at least 1 is assumed).
    pub fn new(rule: StoppingRule, metrics: usize) -> Self {
        let first = rule.min_runs.max(1);
        Sequential {
            rule,
            metrics: metrics.max(1),
            looks_spent: 0,
            next_size: first,
            latest: None,
        }
    }

    /// Whether `n_per_side` is one of the schedule's look sizes.
    pub fn is_look(&self, n_per_side: usize) -> bool {
        let mut size = self.rule.min_runs.max(1);
        while size < n_per_side {
            size = following_look_size(size);
        }
        size == n_per_side
    }

    /// Per-side size at which [`observe`](Self::observe) will next look.
    pub fn next_look_size(&self) -> usize {
        self.next_size
    }

    /// Number of looks whose α has been spent so far.
    pub fn looks_spent(&self) -> usize {
        self.looks_spent
    }

    /// Call after each completed round with one (A, B) pair of samples per
    /// metric. Returns one [`Look`] per metric when the smallest per-side
    /// count reaches the next look size, otherwise `None`. If the counts
    /// jumped past several look sizes, only one look is taken and the
    /// skipped sizes are dropped (their α stays unspent, which is safe).
    pub fn observe(&mut self, samples: &[(&[f64], &[f64])]) -> Option<Vec<Look>> {
        let n = smallest_side(samples)?;
        if n < self.next_size {
            return None;
        }
        while self.next_size <= n {
            self.next_size = following_look_size(self.next_size);
        }
        let metrics = self.metrics.max(samples.len());
        let alpha = look_alpha(self.rule.alpha, self.looks_spent + 1) / metrics as f64;
        // If this level cannot be reached at this n, whatever the data, the
        // look is skipped and its α kept for a later look.
        lower_bound_rank(n, n, 1.0 - alpha, false)?;
        Some(self.spend(samples, n, alpha))
    }

    /// Final evaluation when the run budget is exhausted: one more look at
    /// the next unspent α. If the last look was already taken at the current
    /// sample size, its result is returned without spending more α.
    pub fn finish(&mut self, samples: &[(&[f64], &[f64])]) -> Vec<Look> {
        let Some(n) = smallest_side(samples) else {
            return Vec::new();
        };
        if let Some((latest_n, looks)) = &self.latest {
            if *latest_n == n && looks.len() == samples.len() {
                return looks.clone();
            }
        }
        let metrics = self.metrics.max(samples.len());
        let alpha = look_alpha(self.rule.alpha, self.looks_spent + 1) / metrics as f64;
        self.spend(samples, n, alpha)
    }

    fn spend(&mut self, samples: &[(&[f64], &[f64])], n: usize, alpha: f64) -> Vec<Look> {
        self.looks_spent += 1;
        let looks: Vec<Look> = samples
            .iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let hib = self.rule.higher_is_better.get(i).copied().unwrap_or(false);
                let mut look = evaluate(a, b, alpha, self.rule.margin, hib);
                look.look = self.looks_spent;
                look
            })
            .collect();
        self.latest = Some((n, looks.clone()));
        looks
    }
}

/// min over metrics of min(n_a, n_b); `None` when there are no metrics.
fn smallest_side(samples: &[(&[f64], &[f64])]) -> Option<usize> {
    samples.iter().map(|(a, b)| a.len().min(b.len())).min()
}

/// One standard normal variate by the Box–Muller transform (Box & Muller
/// 1958); 1 − U keeps the logarithm away from 0.
pub fn standard_normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_geometric_and_alpha_sums_below_alpha() {
        // n_1 = 5, n_{k+1} = max(n_k + 1, ceil(1.4 n_k)), by hand:
        // 5, 7, 9.8 -> 10, 14, 19.6 -> 20, 28, 39.2 -> 40, 56, 78.4 -> 79, 110.6 -> 111
        let mut sizes = vec![5];
        while sizes.len() < 10 {
            sizes.push(following_look_size(*sizes.last().unwrap()));
        }
        assert_eq!(sizes, [5, 7, 10, 14, 20, 28, 40, 56, 79, 111]);
        assert_eq!(following_look_size(1), 2);
        assert_eq!(following_look_size(2), 3);
        // Σ_{k=1..K} α/(k(k+1)) = α(1 − 1/(K+1)) (telescoping).
        let spent: f64 = (1..=1000).map(|k| look_alpha(0.05, k)).sum();
        assert!((spent - 0.05 * (1.0 - 1.0 / 1001.0)).abs() < 1e-12);
        assert_eq!(look_alpha(0.05, 1), 0.025);
        let sequential = Sequential::new(StoppingRule::default(), 1);
        assert!(sequential.is_look(5) && sequential.is_look(79));
        assert!(!sequential.is_look(4) && !sequential.is_look(6) && !sequential.is_look(80));
        assert_eq!(sequential.next_look_size(), 5);
    }

    #[test]
    fn observe_looks_only_at_schedule_sizes_and_splits_alpha() {
        let rule = StoppingRule::default();
        let mut sequential = Sequential::new(rule, 2);
        let a: Vec<f64> = (1..=20).map(|i| 10.0 + f64::from(i) * 0.01).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.5).collect();
        let mut looked_at = Vec::new();
        for n in 1..=20 {
            let samples = [(&a[..n], &b[..n]), (&a[..n], &a[..n])];
            if let Some(looks) = sequential.observe(&samples) {
                assert_eq!(looks.len(), 2);
                looked_at.push((n, looks[0].look, looks[0].alpha));
            }
        }
        // With M = 2 the first look needs 2/C(2n, n) ≤ 0.025/2: at n = 5
        // 2/252 = 0.0079 ≤ 0.0125, so all of 5, 7, 10, 14, 20 are looks,
        // spending 0.025/2, 0.05/6/2, 0.05/12/2, ...
        let sizes: Vec<usize> = looked_at.iter().map(|x| x.0).collect();
        assert_eq!(sizes, [5, 7, 10, 14, 20]);
        assert_eq!(looked_at[0].1, 1);
        assert!((looked_at[0].2 - 0.0125).abs() < 1e-15);
        assert!((looked_at[1].2 - 0.05 / 6.0 / 2.0).abs() < 1e-15);
        assert_eq!(sequential.looks_spent(), 5);
        assert_eq!(sequential.next_look_size(), 28);
        // finish at the size of the last look spends nothing more.
        let samples = [(&a[..], &b[..]), (&a[..], &a[..])];
        let final_looks = sequential.finish(&samples);
        assert_eq!(final_looks[0].look, 5);
        assert_eq!(final_looks[0].verdict, Verdict::Slower);
        assert_eq!(sequential.looks_spent(), 5);
    }

    #[test]
    fn each_metric_is_judged_in_its_own_direction() {
        // B is 2x A on both metrics: a cost (SLOWER) and a throughput (FASTER).
        let rule = StoppingRule {
            higher_is_better: vec![false, true],
            ..StoppingRule::default()
        };
        let mut sequential = Sequential::new(rule, 2);
        let a = [1.0, 1.1, 1.2, 1.3, 1.4];
        let b = [2.0, 2.2, 2.4, 2.6, 2.8];
        let looks = sequential.finish(&[(&a, &b), (&a, &b)]);
        let verdicts: Vec<Verdict> = looks.iter().map(|l| l.verdict).collect();
        assert_eq!(verdicts, [Verdict::Slower, Verdict::Faster]);
    }

    #[test]
    fn unreachable_first_look_does_not_spend_alpha() {
        // min_runs 3 and one metric: 2/C(6, 3) = 0.1 > 0.025, so the look at
        // n = 3 is skipped; n = 5 then gets look 1 (alpha 0.025).
        let rule = StoppingRule {
            min_runs: 3,
            ..StoppingRule::default()
        };
        let mut sequential = Sequential::new(rule, 1);
        let a = [1.0, 1.1, 1.2, 1.3, 1.4];
        let b = [2.0, 2.1, 2.2, 2.3, 2.4];
        assert!(sequential.observe(&[(&a[..3], &b[..3])]).is_none());
        assert_eq!(sequential.looks_spent(), 0);
        assert_eq!(sequential.next_look_size(), 5);
        assert!(sequential.observe(&[(&a[..4], &b[..4])]).is_none());
        let looks = sequential.observe(&[(&a[..], &b[..])]).unwrap();
        assert_eq!(looks[0].look, 1);
        assert_eq!(looks[0].alpha, 0.025);
    }

    #[test]
    fn finish_between_looks_uses_next_alpha() {
        let mut sequential = Sequential::new(StoppingRule::default(), 1);
        let a = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.03, 0.97];
        let b = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.02, 0.97];
        for n in 1..=8 {
            let _ = sequential.observe(&[(&a[..n], &b[..n])]);
        }
        // Looks at 5 and 7 were spent; n = 8 is between looks.
        assert_eq!(sequential.looks_spent(), 2);
        let looks = sequential.finish(&[(&a[..], &b[..])]);
        assert_eq!(looks[0].look, 3);
        assert!((looks[0].alpha - 0.05 / 12.0).abs() < 1e-15);
        assert_eq!(looks[0].n_a, 8);
    }

    #[test]
    fn evaluate_edge_cases_never_panic() {
        let unknown = |look: &Look| look.verdict == Verdict::Unknown;
        assert!(unknown(&evaluate(&[], &[1.0], 0.05, 0.01, false)));
        assert!(unknown(&evaluate(&[1.0], &[], 0.05, 0.01, false)));
        assert!(unknown(&evaluate(&[1.0], &[2.0], 0.05, 0.01, false)));
        assert!(unknown(&evaluate(
            &[1.0, f64::NAN],
            &[2.0, 3.0],
            0.05,
            0.01,
            false
        )));
        assert!(unknown(&evaluate(
            &[1.0, 2.0],
            &[2.0, 3.0],
            f64::NAN,
            0.01,
            false
        )));
        assert!(unknown(&evaluate(
            &[1.0, 2.0],
            &[2.0, 3.0],
            1.0,
            0.01,
            false
        )));
        // Zeros: raw scale relative to median(a) = 0 -> UNKNOWN.
        assert!(unknown(&evaluate(&[0.0; 6], &[0.0; 6], 0.05, 0.01, false)));
        // A zero in B with positive median(a): raw-scale ratio
        // 1 + HL(b − a) / median(a), with a = 10..=19, b = a − 10 (hand):
        // HL shift −10 exactly, so the ratio is 1 − 10/14.5.
        let a: Vec<f64> = (10..20).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| x - 10.0).collect();
        let look = evaluate(&a, &b, 0.05, 0.01, false);
        assert!((look.ratio - (1.0 - 10.0 / 14.5)).abs() < 1e-12);
        assert_eq!(look.verdict, Verdict::Faster);
        // Constant and equal: every difference is 0, the interval is [1, 1].
        let look = evaluate(&[2.0; 8], &[2.0; 8], 0.05, 0.01, false);
        assert_eq!((look.low, look.ratio, look.high), (1.0, 1.0, 1.0));
        assert_eq!(look.verdict, Verdict::Same);
        // Finish with no samples at all.
        let mut sequential = Sequential::new(StoppingRule::default(), 0);
        assert!(sequential.finish(&[]).is_empty());
        assert!(sequential.observe(&[]).is_none());
        assert!(!decided(&[]));
    }
}
