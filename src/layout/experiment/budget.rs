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
//! more runs to find its undisturbed ones, so the runs a cell has are
//! doubled). A comparison too close to the margin for any budget
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
            // Wild runs: double the runs a cell has.
            Some(Undecided::RunOutliers { .. }) => {
                let rounds = (2.0 * now).ceil() as usize;
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
