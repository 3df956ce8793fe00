//! The CPU speed sentinel: a fixed register-only loop timed in this thread's
//! CPU time, sampled between benchmark runs.
//!
//! The load average says how many processes wanted a CPU; it cannot say
//! whether the CPU that did run was as fast as when the machine was quiet.
//! On a virtual machine whose vCPUs share physical cores (or a power budget)
//! with other work, a loop that touches no memory runs up to 1.5 times slower
//! in *CPU time* while others run (measured on the 2-vCPU test machine with
//! one `memcpy` stream on the other vCPU; BENCHMARKS.md, issue 22 point 6).
//! CPU time leaves out time-sharing, so such a slowdown is the core's, and
//! pinning cannot remove it. The layout experiment samples this after every
//! run and reports how often, and by how much, the CPU was slower than its
//! best.

use std::hint::black_box;

/// Iterations of the dependent multiply-add chain in one timed chunk (about
/// 25–60 µs at 1–3 GHz).
const ITERATIONS: u64 = 20_000;
/// Chunks per sample; the sample is the fastest.
const CHUNKS: usize = 8;

/// The sentinel's speed now: nanoseconds of thread CPU time per iteration of
/// a dependent 64-bit multiply-add chain, the best of 8 chunks (about 0.3 ms
/// in all). `None` where the thread CPU clock cannot be read or does not
/// advance.
pub fn cpu_speed_now() -> Option<f64> {
    let mut best = f64::INFINITY;
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..CHUNKS {
        let start = thread_cpu_ns()?;
        for _ in 0..ITERATIONS {
            // A dependent chain: each step needs the last, so the loop runs
            // at the core's latency, touching no memory.
            x = black_box(
                x.wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407),
            );
        }
        let stop = thread_cpu_ns()?;
        if stop > start {
            best = best.min((stop - start) as f64 / ITERATIONS as f64);
        }
    }
    black_box(x);
    best.is_finite().then_some(best)
}

/// This thread's CPU time in nanoseconds.
fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0 && ts.tv_sec >= 0 && ts.tv_nsec >= 0)
        .then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// How a set of sentinel samples compares with its fastest: the facts the
/// report words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slowdown {
    /// The fastest sample, ns per iteration.
    pub best_ns: f64,
    /// The median sample over the fastest.
    pub median: f64,
    /// The slowest sample over the fastest.
    pub max: f64,
    /// The share of samples more than [`SLOWER`] over the fastest.
    pub share_slowed: f64,
    pub samples: usize,
}

/// A sample this much over the fastest counts as slowed: above the
/// frequency steps of a busy host (about 4% on the test machine).
pub const SLOWER: f64 = 1.10;
/// The CPU itself counts as slowed during an experiment when at least this
/// share of the samples were.
pub const SLOWED_SHARE: f64 = 0.25;
/// Fewer samples than this say nothing.
pub const MIN_SAMPLES: usize = 8;

impl Slowdown {
    /// The summary of `samples` (ns per iteration); `None` with fewer than
    /// [`MIN_SAMPLES`] finite positive ones.
    pub fn of(samples: &[f64]) -> Option<Slowdown> {
        let mut v: Vec<f64> = samples
            .iter()
            .copied()
            .filter(|s| s.is_finite() && *s > 0.0)
            .collect();
        if v.len() < MIN_SAMPLES {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let best = v[0];
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let slowed = v.iter().filter(|s| **s > best * SLOWER).count();
        Some(Slowdown {
            best_ns: best,
            median: median / best,
            max: v[n - 1] / best,
            share_slowed: slowed as f64 / n as f64,
            samples: n,
        })
    }

    /// The CPU itself was slowed for a good share of the experiment.
    pub fn slowed(&self) -> bool {
        self.share_slowed >= SLOWED_SHARE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentinel_reads_a_positive_speed() {
        let s = cpu_speed_now().expect("thread CPU clock");
        assert!(s > 0.0 && s.is_finite());
    }

    #[test]
    fn the_summary_is_relative_to_the_fastest_sample() {
        // 8 samples: best 1.0; sorted 1.0 1.0 1.05 1.1 1.2 1.5 1.5 2.0;
        // median (1.1 + 1.2) / 2 = 1.15; over 1.10: 1.2 1.5 1.5 2.0 = 4 of 8.
        let s = Slowdown::of(&[1.5, 1.0, 2.0, 1.05, 1.2, 1.0, 1.1, 1.5]).unwrap();
        assert_eq!(s.best_ns, 1.0);
        assert!((s.median - 1.15).abs() < 1e-12);
        assert_eq!(s.max, 2.0);
        assert_eq!(s.share_slowed, 0.5);
        assert!(s.slowed());
        // A quiet machine: one stray sample in nine is not a slowed CPU.
        let q = Slowdown::of(&[1.0, 1.01, 1.0, 1.02, 1.0, 1.04, 1.0, 1.6, 1.01]).unwrap();
        assert!(!q.slowed());
        assert!((q.share_slowed - 1.0 / 9.0).abs() < 1e-12);
        // Too few, or not numbers.
        assert!(Slowdown::of(&[1.0; 7]).is_none());
        assert!(Slowdown::of(&[f64::NAN, 0.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).is_none());
    }
}
