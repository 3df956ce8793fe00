//! Where `--layouts auto` spends its next look, and what it did in the end.
//!
//! Each look after the first either builds more layouts (doubling, up to
//! `--max-layouts`) or runs more rounds on the layouts it has. Rounds shrink
//! only the run noise within layouts; layouts shrink only the spread between
//! them. So a look adds rounds when every comparison still undecided is
//! undecided because of its runs: run noise made most of the spread
//! (`Undecided::RunNoise`, which also says how many rounds a cell would
//! likely need), or a tenth or more of the runs were wild
//! (`Undecided::RunOutliers`: a busy machine; the cell's estimate needs
//! more runs to find its undisturbed ones, so the runs a cell has are at
//! least doubled, and raised until every cell likely keeps two undisturbed
//! runs, [`rounds_past_wild_runs`]). A comparison too close to the margin for any budget
//! (`Undecided::NearMargin`) does not choose; when every undecided one is,
//! the look adds layouts. Layouts otherwise. The
//! number of looks, and so α's split over them, is fixed before the first
//! run; what each look adds does not change the union bound.

use crate::layout::{Added, AutoOutcome, LayoutOptions, LayoutReport, Note, State, Undecided};
use crate::stats::verdict::Verdict;

/// What the next look measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextLook {
    /// Build layouts up to this many variants in all.
    Layouts(usize),
    /// Run this many more rounds on every layout so far.
    Rounds(usize),
    /// Nothing is left to add: `--max-layouts` is reached and more rounds
    /// would not decide.
    Stop,
}

/// The next look, from the last look's undecided comparisons.
pub fn next_look(options: &LayoutOptions, report: &LayoutReport) -> NextLook {
    let now = measured_rounds_per_cell(report);
    let mut wanted: Option<usize> = None;
    for comparison in report
        .matrix
        .iter()
        .filter_map(|row| row.comparison.as_ref())
    {
        if comparison.verdict != Verdict::Unknown {
            continue;
        }
        match comparison.undecided {
            Some(Undecided::RunNoise { rounds, .. }) => {
                wanted = Some(wanted.map_or(rounds, |w| w.max(rounds)));
            }
            // Wild runs: enough that every cell keeps undisturbed runs.
            Some(Undecided::RunOutliers { runs, of, .. }) => {
                let cells = report.used_seeds.len() * report.builds.len();
                let rounds = rounds_past_wild_runs(now, runs as f64 / of.max(1) as f64, cells);
                wanted = Some(wanted.map_or(rounds, |w| w.max(rounds)));
            }
            // Too close to the margin for either remedy: it does not choose.
            Some(Undecided::NearMargin { .. }) => {}
            // One comparison that more rounds would not decide: layouts.
            _ => {
                wanted = None;
                break;
            }
        }
    }
    if let Some(target) = wanted {
        let extra = (target as f64 - now).ceil().max(1.0) as usize;
        return NextLook::Rounds(extra.min(4 * options.rounds.max(1)));
    }
    let max = options.max_layouts.unwrap_or(options.layouts);
    let layouts = report.variants.len();
    if layouts >= max {
        NextLook::Stop
    } else {
        NextLook::Layouts((layouts * 2).min(max))
    }
}

/// The runs a cell needs when a share `wild` of runs is set aside as wild:
/// at least double what it has (`now`), and enough that all `cells` cells
/// keep at least two undisturbed runs in 19 experiments of 20 (a cell's best
/// run needs a second to confirm it, `fragility::lone_best_outliers`). With
/// runs spoiled independently, a cell of n runs keeps fewer than two with
/// probability wild^n + n·(1 − wild)·wild^(n−1); the smallest n that keeps
/// that under 0.05/cells (union bound). Under 4 memory streams on this
/// 2-core guest 70% of the demo's runs were disturbed: 24 cells need 25
/// runs, where doubling gave 10.
pub fn rounds_past_wild_runs(now: f64, wild: f64, cells: usize) -> usize {
    let doubled = (2.0 * now).ceil() as usize;
    if !(wild > 0.0 && wild < 1.0) {
        return doubled;
    }
    let bound = 0.05 / cells.max(1) as f64;
    let short = |n: usize| {
        let n = n as f64;
        wild.powf(n) + n * (1.0 - wild) * wild.powf(n - 1.0)
    };
    let needed = (2..=1000).find(|&n| short(n) <= bound).unwrap_or(1000);
    doubled.max(needed)
}

/// The mean measured runs a (build, layout) cell has had.
fn measured_rounds_per_cell(report: &LayoutReport) -> f64 {
    let cells = report.used_seeds.len() * report.builds.len();
    let runs = report
        .runs
        .iter()
        .filter(|r| !r.record.warmup && report.used_seeds.contains(&r.seed))
        .count();
    if cells == 0 {
        0.0
    } else {
        runs as f64 / cells as f64
    }
}

/// What `--layouts auto` did.
pub fn auto_outcome(report: &LayoutReport, options: &LayoutOptions) -> AutoOutcome {
    let layouts = report.used_seeds.len();
    let looks = report.looks.len();
    let undecided = report.looks.last().map_or(0, |l| l.undecided);
    let max_layouts = options.max_layouts.unwrap_or(options.layouts);
    if undecided == 0 {
        AutoOutcome::AllDecided { layouts, looks }
    } else if report.status.state != State::Finished {
        AutoOutcome::Stopped { layouts, looks }
    } else if report.variants.len() >= max_layouts {
        AutoOutcome::MaxLayoutsReached {
            max_layouts,
            undecided,
        }
    } else {
        AutoOutcome::LooksUsed {
            layouts,
            looks,
            undecided,
        }
    }
}

/// The note on looks that added rounds instead of layouts, if any did.
pub fn rounds_note(report: &LayoutReport) -> Option<Note> {
    let (looks, rounds) = report
        .looks
        .iter()
        .filter_map(|look| match look.added {
            Added::Rounds { rounds } => Some(rounds),
            Added::Layouts { .. } => None,
        })
        .fold((0, 0), |(looks, total), rounds| (looks + 1, total + rounds));
    (looks > 0).then(|| Note::AutoRounds {
        looks,
        rounds,
        per_cell: measured_rounds_per_cell(report),
    })
}

#[cfg(test)]
mod tests {
    use super::rounds_past_wild_runs;

    #[test]
    fn wild_runs_ask_for_runs_until_every_cell_keeps_two_clean_ones() {
        // P(fewer than 2 of n clean) = w^n + n(1−w)w^(n−1). w = 0.7, 24
        // cells, bound 0.05/24 = 0.00208 (by hand): n = 24 gives
        // 0.7^24 + 24·0.3·0.7^23 = 0.000192 + 0.00197 = 0.00216, over;
        // n = 25 gives 0.000134 + 0.00144 = 0.00157, under.
        assert_eq!(rounds_past_wild_runs(5.0, 0.7, 24), 25);
        // A few wild runs: doubling is already enough.
        assert_eq!(rounds_past_wild_runs(5.0, 0.1, 24), 10);
        // Nothing measured: doubling.
        assert_eq!(rounds_past_wild_runs(3.0, 0.0, 16), 6);
        assert_eq!(rounds_past_wild_runs(3.0, f64::NAN, 16), 6);
    }
}
