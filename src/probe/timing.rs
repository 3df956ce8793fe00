//! Clocks and small statistics for the probes: the per-probe time budget, a
//! batch timer, medians and a distribution-free confidence interval for a
//! median.
//!
//! The probes time batches of operations with the monotonic clock (vDSO
//! `clock_gettime`, ~20 ns) rather than `rdtsc`, because a guest's TSC may be
//! scaled or unstable and the batches are long enough that the clock's cost
//! is noise. Samples are taken in interleaved rounds (`sweep`, the loop the
//! probes share), so drift (another job, frequency changes) spreads over all
//! cells instead of biasing one.

use super::types::Note;
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

/// The order of a sweep's cells in each round.
#[derive(Debug, Clone, Copy)]
pub enum Order {
    /// Shuffled afresh each round: one `SplitMix` from `seed` for the whole
    /// sweep, each round shuffling the previous round's order.
    Shuffled { seed: u64 },
    /// In order on even rounds and reversed on odd ones, so of two cells
    /// neither always goes first (and runs warm).
    Alternating,
}

/// When a sweep stops at its time budget.
#[derive(Debug, Clone, Copy)]
pub struct Stop {
    /// Rounds always made, whatever the budget.
    pub after_rounds: u32,
    /// Stop when less than this fraction of the budget is left.
    pub below: f64,
    /// Look before every cell (a round may end part-way) or only before
    /// each round's first cell.
    pub every_cell: bool,
}

/// What a sweep measured: each cell's samples in the order they were taken,
/// and `Note::StoppedAfterRounds` when the budget ended it early.
#[derive(Debug)]
pub struct Sweep<T> {
    pub samples: Vec<Vec<T>>,
    pub stopped: Option<Note>,
}

/// Up to `rounds` interleaved rounds over `cells` cells: each round measures
/// every cell once (`measure(i)`, one sample of cell `i`) in the round's
/// `order`, so drift spreads over all cells instead of biasing one; it stops
/// early as `stop` says. The first failure of `measure` ends the sweep and is
/// returned.
pub fn try_sweep<T, E>(
    cells: usize,
    rounds: u32,
    order: Order,
    budget: &Budget,
    stop: Stop,
    mut measure: impl FnMut(usize) -> Result<T, E>,
) -> Result<Sweep<T>, E> {
    let mut samples: Vec<Vec<T>> = (0..cells).map(|_| Vec::new()).collect();
    let mut sequence: Vec<usize> = (0..cells).collect();
    let mut rng = match order {
        Order::Shuffled { seed } => Some(SplitMix::new(seed)),
        Order::Alternating => None,
    };
    for round in 0..rounds {
        match &mut rng {
            Some(rng) => rng.shuffle(&mut sequence),
            None if round % 2 == 0 => sequence.sort_unstable(),
            None => sequence.sort_unstable_by(|a, b| b.cmp(a)),
        }
        for (position, &i) in sequence.iter().enumerate() {
            let look = stop.every_cell || position == 0;
            if look && round >= stop.after_rounds && budget.below(stop.below) {
                let stopped = Some(Note::StoppedAfterRounds { rounds: round });
                return Ok(Sweep { samples, stopped });
            }
            samples[i].push(measure(i)?);
        }
    }
    Ok(Sweep {
        samples,
        stopped: None,
    })
}

/// `try_sweep` of a measurement that cannot fail.
pub fn sweep<T>(
    cells: usize,
    rounds: u32,
    order: Order,
    budget: &Budget,
    stop: Stop,
    mut measure: impl FnMut(usize) -> T,
) -> Sweep<T> {
    let swept = try_sweep(cells, rounds, order, budget, stop, |i| {
        Ok::<T, std::convert::Infallible>(measure(i))
    });
    match swept {
        Ok(sweep) => sweep,
        Err(never) => match never {},
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

    /// The order every seeded probe measured its cells in before the sweep
    /// was shared: one SplitMix, the previous round's order shuffled again.
    fn shuffled_by_hand(cells: usize, rounds: u32, seed: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..cells).collect();
        let mut rng = SplitMix::new(seed);
        let mut visits = Vec::new();
        for _ in 0..rounds {
            rng.shuffle(&mut order);
            visits.extend_from_slice(&order);
        }
        visits
    }

    const NEVER: Stop = Stop {
        after_rounds: 0,
        below: 0.0,
        every_cell: true,
    };

    #[test]
    fn a_shuffled_sweep_visits_cells_in_the_seeded_order_of_before() {
        let budget = Budget::new(Duration::from_secs(3600));
        let mut visits = Vec::new();
        let swept = sweep(7, 5, Order::Shuffled { seed: 42 }, &budget, NEVER, |i| {
            visits.push(i);
            i * 10
        });
        assert_eq!(visits, shuffled_by_hand(7, 5, 42));
        assert!(swept.stopped.is_none());
        for (i, s) in swept.samples.iter().enumerate() {
            assert_eq!(s, &vec![i * 10; 5]);
        }
    }

    #[test]
    fn an_alternating_sweep_reverses_every_other_round() {
        let budget = Budget::new(Duration::from_secs(3600));
        let mut visits = Vec::new();
        sweep(2, 4, Order::Alternating, &budget, NEVER, |i| visits.push(i));
        assert_eq!(visits, [0, 1, 1, 0, 0, 1, 1, 0]);
    }

    #[test]
    fn a_spent_budget_stops_after_the_rounds_always_made() {
        // A budget of 1 ns is spent by the time the sweep first looks.
        let spent = Budget::new(Duration::from_nanos(1));
        let per_cell = Stop {
            after_rounds: 1,
            below: 0.1,
            every_cell: true,
        };
        let swept = sweep(3, 9, Order::Shuffled { seed: 1 }, &spent, per_cell, |i| i);
        assert!(matches!(
            swept.stopped,
            Some(Note::StoppedAfterRounds { rounds: 1 })
        ));
        assert!(swept.samples.iter().all(|s| s.len() == 1));
        let per_round = Stop {
            after_rounds: 3,
            every_cell: false,
            ..per_cell
        };
        let swept = sweep(4, 9, Order::Alternating, &spent, per_round, |i| i);
        assert!(matches!(
            swept.stopped,
            Some(Note::StoppedAfterRounds { rounds: 3 })
        ));
        assert!(swept.samples.iter().all(|s| s.len() == 3));
    }

    #[test]
    fn a_failed_measurement_ends_the_sweep_with_its_error() {
        let budget = Budget::new(Duration::from_secs(3600));
        let mut calls = 0;
        let swept = try_sweep(3, 4, Order::Alternating, &budget, NEVER, |i| {
            calls += 1;
            if calls == 5 {
                Err(i)
            } else {
                Ok(())
            }
        });
        // Round 0 is 0, 1, 2; round 1 is 2, 1, 0: the fifth call is cell 1.
        assert_eq!(swept.unwrap_err(), 1);
        assert_eq!(calls, 5);
    }
}
