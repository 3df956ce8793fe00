//! Telling run-level contamination from layout-level effects in a layout
//! experiment: which runs a busy machine spoiled (set aside), and which
//! layouts make one build reproducibly slower or faster than its typical
//! layout (kept, and reported as fragility).
//!
//! The two differ in what repeats. A layout moves every run of one binary
//! alike, in every round; another process taking the core slows one run and
//! not the next. So a run is set aside only when it is worse than another run
//! of the same binary in the same layout by more than run noise allows, and a
//! layout whose effect stands out from the others is reported only when it
//! shows in every round that measured it. Nothing else is trimmed: the
//! across-layouts interval then targets the mean cost over layouts, which is
//! what a user of the build gets. docs/methodology.md §10.

use super::descriptive::median;
use serde::Serialize;

/// A run is wild when it is worse than its cell's best run by more than this
/// many robust standard deviations of the pooled run noise…
const WILD_SDS: f64 = 5.0;
/// …and by more than this (log scale, about 1%).
const WILD_FLOOR: f64 = 0.01;
/// A layout stands out when its log ratio is further than this many robust
/// standard deviations (1.4826 × MAD) of the log ratios from their median…
const FRAGILE_SDS: f64 = 5.0;
/// (…and further than the equivalence margin and two printing steps.) Fewer
/// layouts than this give no stable robust scale to stand out from (with 5,
/// Gaussian layout noise alone was called fragile in 7% of simulated
/// experiments), and are not assessed.
pub const FRAGILE_MIN_VARIANTS: usize = 8;

/// The runs of both builds with wild runs set aside.
#[derive(Debug, Clone, PartialEq)]
pub struct Cleaned {
    /// a[i], b[i]: variant i's runs that are kept.
    pub a: Vec<Vec<f64>>,
    pub b: Vec<Vec<f64>>,
    /// wild_a[i][k]: run k of variant i of A was set aside (same for B).
    pub wild_a: Vec<Vec<bool>>,
    pub wild_b: Vec<Vec<bool>>,
    pub wild: WildRuns,
}

/// What was set aside, for the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WildRuns {
    /// Runs set aside.
    pub runs: usize,
    /// Runs looked at.
    pub of: usize,
    /// The largest log distance of a run from its cell's best run.
    pub worst: f64,
    /// The log distance beyond which a run counts as wild.
    pub threshold: f64,
    /// Variant indexes holding wild runs.
    pub variants: Vec<usize>,
}

/// How much worse than the best of `runs` each run is (log scale, in order).
pub fn worse_than_best(runs: &[f64], higher_is_better: bool) -> Vec<f64> {
    let best = if higher_is_better {
        runs.iter().copied().fold(f64::NAN, f64::max)
    } else {
        runs.iter().copied().fold(f64::NAN, f64::min)
    };
    runs.iter()
        .map(|&v| {
            if higher_is_better {
                (best / v).ln()
            } else {
                (v / best).ln()
            }
        })
        .collect()
}

/// Set aside the wild runs of both builds. A run is wild when it is worse
/// than its cell's best run by more than max(5 robust sd of the pooled run
/// noise, 1%, `floor`): the robust sd is 1.4826 × the median absolute log
/// distance of all runs from their cell's median, leaving out the one run of
/// an odd-sized cell that *is* its median (its distance is 0 by construction:
/// with 3 runs a cell, counting it deflates the scale so much that 9% of
/// plain Gaussian runs were set aside as wild). `floor` lets the caller
/// keep runs one printing step apart (see `resolution`). Measured from the
/// best run, because a busy machine only ever makes runs worse: when most of
/// a cell's few runs were slowed, its median is one of them.
pub fn set_aside_wild_runs(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    higher_is_better: bool,
    floor: f64,
) -> Cleaned {
    let mut distances = Vec::new();
    let mut of = 0;
    for runs in a.iter().chain(b) {
        let m = median(runs);
        let mut cell: Vec<f64> = runs.iter().map(|v| (v / m).ln().abs()).collect();
        of += cell.len();
        if cell.len() % 2 == 1 {
            // The median run itself: 0 by construction, not a measurement.
            if let Some(i) = cell.iter().position(|&d| d == 0.0) {
                cell.swap_remove(i);
            }
        }
        distances.extend(cell);
    }
    distances.retain(|d| d.is_finite());
    let scale = 1.4826 * median(&distances);
    let threshold = (WILD_SDS * scale).max(WILD_FLOOR).max(floor);
    let threshold = if threshold.is_finite() {
        threshold
    } else {
        WILD_FLOOR.max(floor)
    };
    let mut wild = WildRuns {
        of,
        threshold,
        ..WildRuns::default()
    };
    let mut side = |cells: &[Vec<f64>]| -> (Vec<Vec<f64>>, Vec<Vec<bool>>) {
        let mut kept = Vec::with_capacity(cells.len());
        let mut flags = Vec::with_capacity(cells.len());
        for (i, runs) in cells.iter().enumerate() {
            let worse = worse_than_best(runs, higher_is_better);
            let flag: Vec<bool> = worse.iter().map(|&d| d > threshold).collect();
            for (&d, &f) in worse.iter().zip(&flag) {
                if f {
                    wild.runs += 1;
                    wild.worst = wild.worst.max(d);
                    if !wild.variants.contains(&i) {
                        wild.variants.push(i);
                    }
                }
            }
            kept.push(
                runs.iter()
                    .zip(&flag)
                    .filter(|(_, &f)| !f)
                    .map(|(&v, _)| v)
                    .collect(),
            );
            flags.push(flag);
        }
        (kept, flags)
    };
    let (a_kept, wild_a) = side(a);
    let (b_kept, wild_b) = side(b);
    wild.variants.sort_unstable();
    Cleaned {
        a: a_kept,
        b: b_kept,
        wild_a,
        wild_b,
        wild,
    }
}

/// The median of `logs`, and how far from it a log ratio must lie to stand
/// out from the others: 5 robust sd (1.4826 × the median absolute
/// deviation), `floor`, and two printing steps (`rounding` is the log
/// half-width one step leaves), whichever is largest.
fn stand_out(logs: &[f64], floor: f64, rounding: f64) -> (f64, f64) {
    let centre = median(logs);
    let deviations: Vec<f64> = logs.iter().map(|d| (d - centre).abs()).collect();
    let edge = (FRAGILE_SDS * 1.4826 * median(&deviations))
        .max(floor)
        .max(2.0 * rounding);
    (centre, edge)
}

/// The positions (into `logs`) of the layouts to leave out because their
/// difference rests on runs no second run confirms: a cell that had 2 or more
/// runs but kept at most one (the others set aside as wild) may have lost its
/// only clean run too, when every run of it was slowed (a busy machine does
/// that to 1 cell in 300 at a 15% wild-run rate with 3 runs). Such a layout
/// is left out only when its log ratio also stands out from the others (by
/// more than 5 robust sd, 1% and two printing steps): an unconfirmed value
/// near the rest changes nothing, an unconfirmed outlier is not evidence of
/// a layout effect. With fewer than 3 layouts nothing is left out.
pub fn unconfirmed_outliers(
    cleaned: &Cleaned,
    raw: (&[Vec<f64>], &[Vec<f64>]),
    (variants, logs): (&[usize], &[f64]),
    rounding: f64,
) -> Vec<usize> {
    if logs.len() < 3 {
        return Vec::new();
    }
    let unconfirmed =
        |raw: &[Vec<f64>], kept: &[Vec<f64>], i: usize| raw[i].len() >= 2 && kept[i].len() < 2;
    let (centre, edge) = stand_out(logs, WILD_FLOOR, rounding);
    variants
        .iter()
        .zip(logs)
        .enumerate()
        .filter(|&(_, (&i, &d))| {
            (unconfirmed(raw.0, &cleaned.a, i) || unconfirmed(raw.1, &cleaned.b, i))
                && (d - centre).abs() > edge
        })
        .map(|(position, _)| position)
        .collect()
}

/// The positions (into `logs`) of the layouts whose difference rests on one
/// run, when each cell's estimate is its best run (`Estimator::Min`). A cell's
/// best run may be one no other run comes near: a host that lowered the
/// clock for every run but one, a lucky gap in the scheduling. Such a layout
/// is left out when its log ratio stands out from the others (by the rule of
/// [`unconfirmed_outliers`]) and stops standing out once either cell's best
/// run, or both, is replaced by that cell's second best: the outlier is then
/// no evidence of a layout effect, only of that one run. A layout effect
/// moves every run of the binary, its second best as much as its best, so it
/// stays. The second best comes from the kept runs of `cleaned` (the best
/// run is never set aside). With fewer than 3 layouts nothing is left out.
pub fn lone_best_outliers(
    cleaned: &Cleaned,
    (variants, logs): (&[usize], &[f64]),
    rounding: f64,
    higher_is_better: bool,
) -> Vec<usize> {
    if logs.len() < 3 {
        return Vec::new();
    }
    let (centre, edge) = stand_out(logs, WILD_FLOOR, rounding);
    // A cell's best run and its second best (if it has one).
    let best_two = |runs: &[f64]| -> Option<(f64, Option<f64>)> {
        let mut sorted: Vec<f64> = runs.iter().copied().filter(|v| *v > 0.0).collect();
        sorted.sort_by(|x, y| x.total_cmp(y));
        if higher_is_better {
            sorted.reverse();
        }
        sorted.first().map(|&best| (best, sorted.get(1).copied()))
    };
    variants
        .iter()
        .zip(logs)
        .enumerate()
        .filter(|&(_, (&i, &d))| {
            if (d - centre).abs() <= edge {
                return false;
            }
            let (Some((x, x2)), Some((y, y2))) = (
                cleaned.a.get(i).and_then(|r| best_two(r)),
                cleaned.b.get(i).and_then(|r| best_two(r)),
            ) else {
                return false;
            };
            [(x2, Some(y)), (Some(x), y2), (x2, y2)]
                .iter()
                .filter_map(|&(ex, ey)| Some((ey? / ex?).ln()))
                .any(|alternative| (alternative - centre).abs() <= edge)
        })
        .map(|(position, _)| position)
        .collect()
}

/// One layout in which B stands apart from its typical ratio to A.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FragileLayout {
    /// The variant's index (0 is the default layout).
    pub variant: usize,
    /// Its ratio B/A.
    pub ratio: f64,
    /// Rounds in which the paired runs (B's and A's k-th run in this layout)
    /// showed at least half of the layout's difference, in its direction…
    pub reproduced: usize,
    /// …out of the rounds where neither run was set aside.
    pub rounds: usize,
}

/// Layouts in which B is reproducibly worse or better than in its typical
/// layout, judged against A in the same layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fragility {
    /// The typical ratio B/A (exp of the median log ratio over layouts).
    pub typical: f64,
    /// Layouts where B does worse than typical (slower for a cost).
    pub worse: Vec<FragileLayout>,
    /// Layouts where B does better than typical.
    pub better: Vec<FragileLayout>,
    /// Layouts compared.
    pub variants: usize,
}

/// The fragile layouts among `variants` (indexes into the cells) with log
/// ratios `logs` (same order), from the cleaned runs. A layout is fragile when
/// its log ratio lies further than 5 robust sd (1.4826 × MAD of the log
/// ratios), further than `margin`, and further than twice `rounding` (the
/// log half-width a printing step leaves; one step is not a finding) from
/// their median, and the difference reproduces in every round where neither
/// paired run was set aside (at least two such rounds: with one run a cell
/// nothing can be told apart). `None` with fewer than 8 layouts or no
/// fragile layout.
pub fn fragile_layouts(
    cleaned: &Cleaned,
    raw: (&[Vec<f64>], &[Vec<f64>]),
    (variants, logs): (&[usize], &[f64]),
    (margin, rounding): (f64, f64),
    higher_is_better: bool,
) -> Option<Fragility> {
    if logs.len() < FRAGILE_MIN_VARIANTS || logs.len() != variants.len() {
        return None;
    }
    let (centre, edge) = stand_out(logs, (1.0 + margin.max(0.0)).ln(), rounding);
    if !edge.is_finite() {
        return None;
    }
    let mut fragility = Fragility {
        typical: centre.exp(),
        worse: Vec::new(),
        better: Vec::new(),
        variants: logs.len(),
    };
    for (&i, &d) in variants.iter().zip(logs) {
        let deviation = d - centre;
        if deviation.abs() <= edge {
            continue;
        }
        let (ra, rb) = (&raw.0[i], &raw.1[i]);
        let (wa, wb) = (&cleaned.wild_a[i], &cleaned.wild_b[i]);
        let mut rounds = 0;
        let mut reproduced = 0;
        for k in 0..ra.len().min(rb.len()) {
            if wa[k] || wb[k] {
                continue;
            }
            rounds += 1;
            let paired = (rb[k] / ra[k]).ln() - centre;
            if paired * deviation > 0.0 && paired.abs() > deviation.abs() / 2.0 {
                reproduced += 1;
            }
        }
        if rounds < 2 || reproduced < rounds {
            continue;
        }
        let layout = FragileLayout {
            variant: i,
            ratio: d.exp(),
            reproduced,
            rounds,
        };
        // For a cost, a larger ratio is worse.
        if (deviation > 0.0) != higher_is_better {
            fragility.worse.push(layout);
        } else {
            fragility.better.push(layout);
        }
    }
    (!fragility.worse.is_empty() || !fragility.better.is_empty()).then_some(fragility)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_far_above_its_cells_best_is_set_aside_and_nothing_else() {
        // Pooled distances from the cell medians: 0.001 or 0 except the wild
        // run; robust sd ≈ 1.4826 × 0.001, so the 1% floor applies.
        let a = vec![vec![1.000, 1.001, 0.999]; 4];
        let mut b = vec![vec![1.000, 1.001, 0.999]; 4];
        b[2] = vec![1.000, 1.30, 1.25];
        let c = set_aside_wild_runs(&a, &b, false, 0.0);
        assert_eq!(c.wild.runs, 2);
        assert_eq!(c.wild.variants, vec![2]);
        assert_eq!(c.b[2], vec![1.000]);
        assert_eq!(c.wild_b[2], vec![false, true, true]);
        assert!((c.wild.threshold - 0.01).abs() < 1e-12);
        // A layout that moves every run alike keeps every run.
        let mut b = vec![vec![1.000, 1.001, 0.999]; 4];
        b[2] = vec![1.150, 1.151, 1.149];
        let c = set_aside_wild_runs(&a, &b, false, 0.0);
        assert_eq!(c.wild.runs, 0);
        assert_eq!(c.b[2].len(), 3);
        // For a throughput, the best run is the largest.
        let b = vec![vec![1.0, 0.7, 1.001]; 4];
        let c = set_aside_wild_runs(&a, &b, true, 0.0);
        assert_eq!(c.wild.runs, 4);
    }

    #[test]
    fn plain_gaussian_run_noise_is_not_set_aside_as_wild() {
        // 16 layouts × 3 runs a cell, lognormal run noise of sd 1%, no wild
        // run at all: with the median run's structural 0 counted in the
        // scale, 9.3% of runs were set aside (an independent NumPy
        // simulation gave the same 9.3%; without it, 0.08%).
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
        let (mut set_aside, mut runs) = (0, 0);
        for _ in 0..500 {
            let mut cell = || -> Vec<Vec<f64>> {
                (0..16)
                    .map(|_| {
                        (0..3)
                            .map(|_| {
                                (0.01 * crate::stats::sequential::standard_normal(&mut rng)).exp()
                            })
                            .collect()
                    })
                    .collect()
            };
            let (a, b) = (cell(), cell());
            let c = set_aside_wild_runs(&a, &b, false, 0.0);
            set_aside += c.wild.runs;
            runs += c.wild.of;
        }
        let share = set_aside as f64 / runs as f64;
        // Expected ≈ 0.1%; 48,000 runs make 0.5% a > 10-sigma bound.
        assert!(share < 0.005, "{share}");
    }

    /// The log ratios of the cells' medians, B over A.
    fn median_logs(c: &Cleaned) -> Vec<f64> {
        c.a.iter()
            .zip(&c.b)
            .map(|(x, y)| (median(y) / median(x)).ln())
            .collect()
    }

    fn cells(ratios: &[f64], runs: usize) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let a: Vec<Vec<f64>> = ratios.iter().map(|_| vec![1.0; runs]).collect();
        let b: Vec<Vec<f64>> = ratios
            .iter()
            .enumerate()
            .map(|(i, r)| {
                (0..runs)
                    .map(|k| r * (1.0 + 0.001 * ((i + k) % 3) as f64))
                    .collect()
            })
            .collect();
        (a, b)
    }

    #[test]
    fn a_reproducible_slow_layout_is_fragile_and_a_spread_is_not() {
        let mut ratios = vec![1.0; 12];
        ratios[3] = 1.15;
        ratios[9] = 1.08;
        let (a, b) = cells(&ratios, 3);
        let c = set_aside_wild_runs(&a, &b, false, 0.0);
        let logs = median_logs(&c);
        let variants: Vec<usize> = (0..12).collect();
        let f = fragile_layouts(&c, (&a, &b), (&variants, &logs), (0.01, 0.0), false).unwrap();
        assert_eq!(f.worse.len(), 2, "{f:?}");
        assert_eq!(f.worse[0].variant, 3);
        assert_eq!((f.worse[0].reproduced, f.worse[0].rounds), (3, 3));
        assert!((f.worse[0].ratio - 1.151).abs() < 2e-3);
        assert!(f.better.is_empty());
        // The same as a throughput: the layouts are better, not worse.
        let f = fragile_layouts(&c, (&a, &b), (&variants, &logs), (0.01, 0.0), true).unwrap();
        assert_eq!((f.worse.len(), f.better.len()), (0, 2));
        // Two printing steps of 5% each: the 8% layout is within them.
        let f = fragile_layouts(&c, (&a, &b), (&variants, &logs), (0.01, 0.05), false).unwrap();
        assert_eq!(f.worse.len(), 1);
        assert_eq!(f.worse[0].variant, 3);
        // A difference inside the margin is not a finding.
        let f = fragile_layouts(&c, (&a, &b), (&variants, &logs), (0.20, 0.0), false);
        assert!(f.is_none());
        // With one run a cell, run and layout cannot be told apart.
        let (a1, b1) = cells(&ratios, 1);
        let c1 = set_aside_wild_runs(&a1, &b1, false, 0.0);
        assert!(fragile_layouts(&c1, (&a1, &b1), (&variants, &logs), (0.01, 0.0), false).is_none());
        // Fewer than 8 layouts: not assessed.
        assert!(fragile_layouts(
            &c,
            (&a, &b),
            (&variants[..7], &logs[..7]),
            (0.01, 0.0),
            false
        )
        .is_none());
    }

    #[test]
    fn a_layout_that_does_not_reproduce_in_every_round_is_not_fragile() {
        // Run noise of ±5% (the wild threshold is 5 robust sd, about 45%);
        // layout 4 is +50% in rounds 0 and 2 but only +14% in round 1.
        let a: Vec<Vec<f64>> = vec![vec![1.0, 1.05, 0.95]; 10];
        let mut b = a.clone();
        b[4] = vec![1.5, 1.2, 1.5];
        let c = set_aside_wild_runs(&a, &b, false, 0.0);
        assert_eq!(c.wild.runs, 0);
        let logs = median_logs(&c);
        let variants: Vec<usize> = (0..10).collect();
        assert!(fragile_layouts(&c, (&a, &b), (&variants, &logs), (0.01, 0.0), false).is_none());
        // Round 1 at +45% too: reproduced in 3 of 3.
        b[4][1] = 1.45 * 1.05;
        let c = set_aside_wild_runs(&a, &b, false, 0.0);
        let logs = median_logs(&c);
        let f = fragile_layouts(&c, (&a, &b), (&variants, &logs), (0.01, 0.0), false).unwrap();
        assert_eq!((f.worse[0].variant, f.worse[0].reproduced), (4, 3));
    }
}
