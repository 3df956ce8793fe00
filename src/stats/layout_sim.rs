//! Simulated `layout` experiments: the error rates and power that
//! docs/methodology.md §10 documents, and the tests that hold them.
//!
//! One experiment: two builds, `variants` matched layout variants, `runs`
//! runs per (build, variant). Each build gets an independent log offset per
//! variant (layout moves differently compiled code differently, sd
//! `layout_sd`); runs are lognormal around it (sd `run_sd`); and a busy
//! machine slows a share `wild_share` of the runs by a factor 1 + U(0,
//! `wild_max`) (another process took the core for part of the run). Both
//! analyses of `layout` then decide: across layouts (the verdict, ARTIFACT
//! included) and at the default layout alone (what a naive A/B reports).

use super::hierarchical::{decide_layout, Estimator};
use super::sequential::standard_normal;
use super::verdict::Verdict;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The shape of a simulated experiment.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    /// True ratio B/A of the code itself.
    pub true_ratio: f64,
    /// Standard deviation of each build's per-variant log offset.
    pub layout_sd: f64,
    /// Standard deviation of the per-run log noise.
    pub run_sd: f64,
    /// Share of runs a busy machine slows down.
    pub wild_share: f64,
    /// A slowed run takes 1 + U(0, wild_max) times as long.
    pub wild_max: f64,
    pub variants: usize,
    pub runs: usize,
    pub margin: f64,
    /// The family-wise level; every interval is at 1 − alpha / comparisons.
    pub alpha: f64,
    /// Comparisons the level is split over (Bonferroni), e.g. 4 metrics.
    pub comparisons: usize,
    /// Heavy tails: layout offsets and run noise are Student's t with this
    /// many degrees of freedom, scaled by `layout_sd` and `run_sd`; `None`:
    /// normal.
    pub tails: Option<f64>,
    /// A one-sided layout ghost: in ⌈variants × share⌉ layouts drawn at
    /// random, build B alone costs 1 + U(low, high) times more.
    pub ghost: Option<Ghost>,
    /// Values printed in whole units of a benchmark whose baseline value is
    /// U(`low`, `high`) units (drawn per experiment): one unit is
    /// 1/high–1/low of the value.
    pub whole_units: Option<(f64, f64)>,
    /// The default layout (variant 0) of build B alone costs this factor
    /// more: a placement ghost on top of the real ratio.
    pub default_ghost: Option<f64>,
    /// Host clock steps: each run's undisturbed value comes in steps.
    pub steps: Option<Steps>,
    /// How a cell's runs become its estimate.
    pub estimator: Estimator,
}

/// A busy KVM host's clock steps (issue 22 point 6): the guest runs at one of
/// a few clock frequencies `size` apart (3.7% measured on this machine under
/// 4 memory streams), so an undisturbed run's value comes in steps. A run
/// lands one step faster than usual with probability `lucky`, and one or two
/// steps slower (equally likely) with probability `slow`. With probability
/// `shared`, B's k-th run of a layout takes the step of A's k-th run, as
/// when the schedule runs them back to back (fitted: 60% of the undisturbed
/// back-to-back pairs of a busy demo share the step, 43% would by chance),
/// and with probability `wild_shared` it is slowed (by its own amount) or
/// not as A's k-th run was (fitted: 77% of the back-to-back B runs after a
/// slowed A run were slowed too, against 48% of all runs). With `shared`
/// 0 both builds' runs are independent.
#[derive(Debug, Clone, Copy)]
pub struct Steps {
    pub size: f64,
    pub lucky: f64,
    pub slow: f64,
    pub shared: f64,
    pub wild_shared: f64,
}

/// A one-sided layout ghost (issue 22): one build alone falls into a bad
/// layout now and then.
#[derive(Debug, Clone, Copy)]
pub struct Ghost {
    pub share: f64,
    pub low: f64,
    pub high: f64,
}

impl Ghost {
    /// The mean log cost a ghost adds over the layout distribution:
    /// share × E[log(1 + U(low, high))].
    pub fn mean_log(&self) -> f64 {
        // ∫ log(1 + u) du = (1 + u) log(1 + u) − u.
        let f = |u: f64| (1.0 + u) * (1.0 + u).ln() - u;
        self.share * (f(self.high) - f(self.low)) / (self.high - self.low)
    }
}

impl Scenario {
    /// A quiet machine: layout noise 3% per build and variant, run noise 1%,
    /// 8 variants × 5 runs (round 1's scenario).
    pub fn quiet(true_ratio: f64) -> Self {
        Scenario {
            true_ratio,
            layout_sd: 0.03,
            run_sd: 0.01,
            wild_share: 0.0,
            wild_max: 0.0,
            variants: 8,
            runs: 5,
            margin: 0.01,
            alpha: 0.05,
            comparisons: 1,
            tails: None,
            ghost: None,
            whole_units: None,
            default_ghost: None,
            steps: None,
            estimator: Estimator::Median,
        }
    }

    /// A busy machine (issue 10): layout sd 0.4%, run sd 0.3%, 15% of runs
    /// slowed by up to 40%, 8 variants × 5 runs.
    pub fn busy(true_ratio: f64) -> Self {
        Scenario {
            true_ratio,
            layout_sd: 0.004,
            run_sd: 0.003,
            wild_share: 0.15,
            wild_max: 0.40,
            variants: 8,
            runs: 5,
            margin: 0.01,
            alpha: 0.05,
            comparisons: 1,
            tails: None,
            ghost: None,
            whole_units: None,
            default_ghost: None,
            steps: None,
            estimator: Estimator::Median,
        }
    }
}

/// One simulated experiment's verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdicts {
    /// The layout verdict: across layouts, or ARTIFACT.
    pub layout: Verdict,
    /// Across layouts alone.
    pub controlled: Verdict,
    /// The default layout (variant 0) alone.
    pub naive: Verdict,
    /// Whether the across-layouts interval contains the true ratio.
    pub covered: bool,
    /// Whether the default-layout interval contains variant 0's true ratio.
    pub default_covered: bool,
    /// A fragility finding in the direction of B being worse.
    pub fragile: bool,
    /// Either interval has zero width.
    pub zero_width: bool,
}

/// `count` simulated runs around exp(`log_centre`), drawn one after another:
/// each has lognormal noise of sd `run_sd`, and with probability `wild_share`
/// a busy machine's slow-down by 1 + U(0, `wild_max`).
pub fn noisy_runs(
    count: usize,
    log_centre: f64,
    run_sd: f64,
    wild_share: f64,
    wild_max: f64,
    rng: &mut ChaCha8Rng,
) -> Vec<f64> {
    (0..count)
        .map(|_| {
            let clean = (log_centre + run_sd * standard_normal(rng)).exp();
            if rng.random::<f64>() < wild_share {
                clean * (1.0 + wild_max * rng.random::<f64>())
            } else {
                clean
            }
        })
        .collect()
}

impl Scenario {
    /// Heavy tails (Student's t with 3 df) for layout offsets (scale 1%) and
    /// run noise (scale 0.5%), 8 variants × 5 runs, no wild runs.
    pub fn heavy(true_ratio: f64) -> Self {
        Scenario {
            layout_sd: 0.01,
            run_sd: 0.005,
            tails: Some(3.0),
            ..Scenario::quiet(true_ratio)
        }
    }

    /// Issue 22's one-sided ghost on the busy machine: 1 layout in 8 costs
    /// B +5–20%, 16 variants × 3 runs.
    pub fn ghost(true_ratio: f64) -> Self {
        Scenario {
            ghost: Some(Ghost {
                share: 0.125,
                low: 0.05,
                high: 0.20,
            }),
            variants: 16,
            runs: 3,
            ..Scenario::busy(true_ratio)
        }
    }

    /// The busy machine's values printed in whole units, one unit being
    /// 1–2% of the value, 8 variants × 5 runs.
    pub fn whole_units(true_ratio: f64) -> Self {
        Scenario {
            whole_units: Some((50.0, 100.0)),
            ..Scenario::busy(true_ratio)
        }
    }

    /// Issue 22's real 5% slowdown behind a default layout that shows +12%,
    /// on the busy machine, 8 variants × 5 runs.
    pub fn exaggerated() -> Self {
        Scenario {
            default_ghost: Some(1.12 / 1.05),
            ..Scenario::busy(1.05)
        }
    }

    /// The one-compiler demo's `crtp` under 4 memory streams on a 2-core
    /// KVM guest (issue 22 point 6, fitted to its runs): identical code
    /// (layout sd 0.2%), clock steps of 3.7% (1 run in 200 a step faster,
    /// 40% one or two slower), 70% of runs slowed by up to 100%, the best
    /// run of each cell (`--estimator min`), 8 variants × 20 runs, 8
    /// comparisons.
    pub fn stepped(true_ratio: f64) -> Self {
        Scenario {
            layout_sd: 0.002,
            run_sd: 0.001,
            wild_share: 0.70,
            wild_max: 1.0,
            steps: Some(Steps {
                size: 0.037,
                lucky: 0.005,
                slow: 0.40,
                shared: 0.0,
                wild_shared: 0.0,
            }),
            estimator: Estimator::Min,
            runs: 20,
            comparisons: 8,
            ..Scenario::quiet(true_ratio)
        }
    }

    /// [`Scenario::stepped`] as `layout` now schedules it: a layout's builds
    /// run back to back, so B's run shares A's clock step with probability
    /// 0.3 beyond chance and A's slowing with 0.56, and each layout's ratio is the median of its
    /// least-disturbed pairs (`--estimator paired`, the demo's).
    pub fn paired(true_ratio: f64) -> Self {
        let stepped = Scenario::stepped(true_ratio);
        Scenario {
            steps: stepped.steps.map(|st| Steps {
                shared: 0.3,
                wild_shared: 0.56,
                ..st
            }),
            estimator: Estimator::Paired,
            ..stepped
        }
    }

    /// The ratio the across-layouts interval targets: the mean over the
    /// layout distribution.
    pub fn target(&self) -> f64 {
        self.true_ratio * self.ghost.map_or(0.0, |g| g.mean_log()).exp()
    }
}

/// A standard draw of the noise: normal, or Student's t with `df`.
fn draw(tails: Option<f64>, rng: &mut ChaCha8Rng) -> f64 {
    let z = standard_normal(rng);
    match tails {
        None => z,
        Some(df) => {
            // t = Z / sqrt(χ²_k / k) with χ²_k a sum of k squared normals
            // (k whole; the scenarios use 3).
            let k = df.round().max(1.0) as usize;
            let chi: f64 = (0..k).map(|_| standard_normal(rng).powi(2)).sum();
            z / (chi / k as f64).sqrt()
        }
    }
}

/// Simulate one experiment with a seeded RNG.
pub fn simulate(s: &Scenario, seed: u64) -> Verdicts {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let scale = s
        .whole_units
        .map_or(1.0, |(low, high)| low + (high - low) * rng.random::<f64>());
    // Which layouts of B are ghosts.
    let mut ghosts = vec![0.0; s.variants];
    if let Some(g) = s.ghost {
        let count = ((s.variants as f64 * g.share).ceil() as usize).min(s.variants);
        let mut order: Vec<usize> = (0..s.variants).collect();
        for i in 0..count {
            let j = i + (rng.random::<f64>() * (s.variants - i) as f64) as usize;
            order.swap(i, j.min(s.variants - 1));
            ghosts[order[i]] = (1.0 + g.low + (g.high - g.low) * rng.random::<f64>()).ln();
        }
    }
    let mut offsets = [Vec::new(), Vec::new()];
    // A's clock step of run k in variant i, for B's runs that share it.
    let mut a_steps: Vec<Vec<i32>> = vec![Vec::new(); s.variants];
    let mut a_wild: Vec<Vec<bool>> = vec![Vec::new(); s.variants];
    // Shared steps draw the wild runs with the steps, pair by pair.
    let paired = s.steps.is_some_and(|st| st.shared > 0.0);
    let mut side = |centre: f64, build: usize, rng: &mut ChaCha8Rng| -> Vec<Vec<f64>> {
        (0..s.variants)
            .map(|i| {
                let ghost = if build == 1 {
                    ghosts[i]
                        + if i == 0 {
                            s.default_ghost.map_or(0.0, f64::ln)
                        } else {
                            0.0
                        }
                } else {
                    0.0
                };
                let offset = s.layout_sd * draw(s.tails, rng) + ghost;
                offsets[build].push(offset);
                let centre = (scale * centre).ln() + offset;
                let runs = match s.tails {
                    None if paired => noisy_runs(s.runs, centre, s.run_sd, 0.0, 0.0, rng),
                    None => noisy_runs(s.runs, centre, s.run_sd, s.wild_share, s.wild_max, rng),
                    Some(_) => (0..s.runs)
                        .map(|_| (centre + s.run_sd * draw(s.tails, rng)).exp())
                        .collect(),
                };
                let runs: Vec<f64> = match s.steps {
                    Some(st) => runs
                        .into_iter()
                        .enumerate()
                        .map(|(r, v)| {
                            let u = rng.random::<f64>();
                            let mut k = if u < st.lucky {
                                -1
                            } else if u < st.lucky + st.slow / 2.0 {
                                1
                            } else if u < st.lucky + st.slow {
                                2
                            } else {
                                0
                            };
                            // Drawn only when steps are shared, so the
                            // other scenarios' draws stay as documented.
                            let mut v = v;
                            if paired {
                                let mut wild = rng.random::<f64>() < s.wild_share;
                                if build == 0 {
                                    a_steps[i].push(k);
                                    a_wild[i].push(wild);
                                } else {
                                    if rng.random::<f64>() < st.shared {
                                        k = a_steps[i].get(r).copied().unwrap_or(k);
                                    }
                                    if rng.random::<f64>() < st.wild_shared {
                                        wild = a_wild[i].get(r).copied().unwrap_or(wild);
                                    }
                                }
                                if wild {
                                    v *= 1.0 + s.wild_max * rng.random::<f64>();
                                }
                            }
                            v * (1.0 + st.size).powi(k)
                        })
                        .collect(),
                    None => runs,
                };
                match s.whole_units {
                    Some(_) => runs.into_iter().map(|v| v.round().max(1.0)).collect(),
                    None => runs,
                }
            })
            .collect()
    };
    let a = side(1.0, 0, &mut rng);
    let b = side(s.true_ratio, 1, &mut rng);
    let confidence = 1.0 - s.alpha / s.comparisons.max(1) as f64;
    let d = decide_layout(
        &a,
        &b,
        s.estimator,
        (confidence, confidence),
        s.margin,
        false,
    );
    let truth_0 = s.true_ratio * (offsets[1][0] - offsets[0][0]).exp();
    let target = s.target();
    let zero = |lo: f64, hi: f64| lo == hi;
    Verdicts {
        layout: d.verdict,
        controlled: d.controlled_verdict,
        naive: d.default_verdict,
        covered: d
            .controlled
            .is_some_and(|c| c.low <= target && target <= c.high),
        default_covered: d
            .default_ratio
            .is_some_and(|(_, lo, hi)| lo <= truth_0 && truth_0 <= hi),
        fragile: d.fragility.is_some_and(|f| !f.worse.is_empty()),
        zero_width: d.controlled.is_some_and(|c| zero(c.low, c.high))
            || d.default_ratio.is_some_and(|(_, lo, hi)| zero(lo, hi)),
    }
}

/// The shares of outcomes over many simulated experiments.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rates {
    pub experiments: usize,
    /// Layout verdict FASTER or SLOWER.
    pub decisive: f64,
    /// Layout verdict in the true direction (FASTER for a ratio < 1).
    pub found: f64,
    pub same: f64,
    pub artifact: f64,
    pub unknown: f64,
    /// Default-layout verdict FASTER or SLOWER.
    pub naive_decisive: f64,
    pub coverage: f64,
    pub default_coverage: f64,
    /// A fragility finding (B worse in some layouts).
    pub fragile: f64,
    /// An interval of zero width.
    pub zero_width: f64,
}

/// Run `experiments` seeded experiments of one scenario.
pub fn rates(s: &Scenario, experiments: usize, seed: u64) -> Rates {
    let mut r = Rates {
        experiments,
        ..Rates::default()
    };
    let truth = if s.true_ratio < 1.0 {
        Verdict::Faster
    } else {
        Verdict::Slower
    };
    for e in 0..experiments {
        let v = simulate(s, seed.wrapping_mul(1_000_003).wrapping_add(e as u64));
        let strong = matches!(v.layout, Verdict::Faster | Verdict::Slower);
        r.decisive += strong as u8 as f64;
        r.found += (v.layout == truth) as u8 as f64;
        r.same += (v.layout == Verdict::Same) as u8 as f64;
        r.artifact += (v.layout == Verdict::Artifact) as u8 as f64;
        r.unknown += (v.layout == Verdict::Unknown) as u8 as f64;
        r.naive_decisive += matches!(v.naive, Verdict::Faster | Verdict::Slower) as u8 as f64;
        r.coverage += v.covered as u8 as f64;
        r.default_coverage += v.default_covered as u8 as f64;
        r.fragile += v.fragile as u8 as f64;
        r.zero_width += v.zero_width as u8 as f64;
    }
    let n = experiments.max(1) as f64;
    for x in [
        &mut r.decisive,
        &mut r.found,
        &mut r.same,
        &mut r.artifact,
        &mut r.unknown,
        &mut r.naive_decisive,
        &mut r.coverage,
        &mut r.default_coverage,
        &mut r.fragile,
        &mut r.zero_width,
    ] {
        *x /= n;
    }
    r
}

#[cfg(test)]
mod tests;
