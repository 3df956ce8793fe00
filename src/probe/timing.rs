//! Clocks and small statistics for the probes: the per-probe time budget, a
//! batch timer, medians and a distribution-free confidence interval for a
//! median.
//!
//! The probes time batches of operations with the monotonic clock (vDSO
//! `clock_gettime`, ~20 ns) rather than `rdtsc`, because a guest's TSC may be
//! scaled or unstable and the batches are long enough that the clock's cost
//! is noise. Samples are taken in interleaved rounds, so drift (another job,
//! frequency changes) spreads over all cells instead of biasing one.

use std::time::{Duration, Instant};

/// Wall-time bound of one probe.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    start: Instant,
    limit: Duration,
}

impl Budget {
    pub fn new(limit: Duration) -> Budget {
        Budget {
            start: Instant::now(),
            limit,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    pub fn limit(&self) -> Duration {
        self.limit
    }

    pub fn remaining(&self) -> Duration {
        self.limit.saturating_sub(self.elapsed())
    }

    /// True when less than `fraction` of the budget is left.
    pub fn below(&self, fraction: f64) -> bool {
        self.remaining().as_secs_f64() < fraction * self.limit.as_secs_f64()
    }

    pub fn exhausted(&self) -> bool {
        self.remaining().is_zero()
    }
}

/// Nanoseconds per operation of `ops` operations done by `work`.
pub fn ns_per_op(ops: u64, work: impl FnOnce()) -> f64 {
    let start = Instant::now();
    work();
    start.elapsed().as_nanos() as f64 / ops.max(1) as f64
}

/// Median; NaN for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    crate::stats::descriptive::median(xs)
}

/// 95% confidence interval for the median from order statistics (the sign
/// test inverted, with the normal approximation to the binomial): the
/// values of rank n/2 ∓ 0.98·√n. Distribution-free, so it suits skewed
/// timing samples. With fewer than 6 values it is the sample range.
pub fn median_ci(xs: &[f64]) -> (f64, f64) {
    let mut sorted: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if sorted.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    if n < 6 {
        return (sorted[0], sorted[n - 1]);
    }
    let half_width = 0.98 * (n as f64).sqrt();
    let low = ((n as f64 / 2.0 - half_width).floor().max(0.0)) as usize;
    let high = ((n as f64 / 2.0 + half_width).ceil() as usize).min(n - 1);
    (sorted[low], sorted[high])
}

/// A fast deterministic generator for shuffles and pointer chains
/// (SplitMix64): probes need millions of random indices quickly, not
/// cryptographic quality.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by multiply-shift (bias < n/2^64).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// "16 KiB", "2 MiB", "1 GiB".
pub fn bytes(n: u64) -> String {
    const KIB: u64 = 1024;
    if n >= KIB * KIB * KIB && n % (KIB * KIB * KIB) == 0 {
        format!("{} GiB", n / (KIB * KIB * KIB))
    } else if n >= KIB * KIB && n % (KIB * KIB) == 0 {
        format!("{} MiB", n / (KIB * KIB))
    } else if n >= KIB && n % KIB == 0 {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} B")
    }
}

/// "61–63" for consecutive runs, "1, 3, 5" otherwise.
pub fn ranges(values: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let mut j = i;
        while j + 1 < values.len() && values[j + 1] == values[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}–{}", values[i], values[j])
        } else {
            values[i].to_string()
        });
        i = j + 1;
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_ci_brackets_the_median() {
        let xs: Vec<f64> = (1..=31).map(f64::from).collect();
        let (low, high) = median_ci(&xs);
        assert!(low < 16.0 && 16.0 < high, "[{low}, {high}]");
        assert_eq!(median_ci(&[3.0, 1.0]), (1.0, 3.0));
        assert!(median_ci(&[]).0.is_nan());
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<usize> = (0..100).collect();
        SplitMix::new(7).shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_ne!(v, sorted);
    }

    #[test]
    fn formats() {
        assert_eq!(bytes(16 * 1024), "16 KiB");
        assert_eq!(bytes(1 << 30), "1 GiB");
        assert_eq!(ranges(&[57, 58, 59, 63]), "57–59, 63");
        assert_eq!(ranges(&[]), "none");
    }
}
