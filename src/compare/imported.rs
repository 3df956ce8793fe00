//! What `analyze` found about data measured elsewhere, as facts: how the
//! runs were ordered, what a re-analysis changed, which layouts were left
//! out. `analyze` makes them; they travel in the notes of the `compare` and
//! `layout` reports (`Note::Imported`), whose renderers word them with
//! `compare::render::notes::imported`, so they live here, below both.

use crate::stats::hierarchical::Estimator;

/// Something the reader should know about the data and how they were
/// analyzed, as facts (`compare::render::notes::imported` words it).
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    /// Nothing shows that the baseline's and a candidate's runs were interleaved.
    Order(Interleaving),
    /// Runs that exited non-zero (hyperfine -i), analyzed like the others:
    /// per command, its text, the failed runs and all its runs.
    NonZeroExits {
        commands: Vec<(String, usize, usize)>,
    },
    /// Bonferroni over `comparisons` (metrics × candidates): every interval
    /// is at `confidence`. (With layouts, `layout`'s own note says it.)
    Bonferroni { comparisons: usize, confidence: f64 },
    /// A ghostbench report re-analyzed, with what changed.
    Reanalysis(Reanalysis),
    /// The re-analyzed layout run looked more than once (`--layouts auto`):
    /// its last look spent `share` of α, and so does the re-analysis.
    AlphaShare { share: f64 },
    /// Layouts left out because some name or metric has no value there.
    LayoutsLeftOut {
        left_out: Vec<String>,
        layouts: usize,
    },
    /// The layout taken as the default (seed 0): the one labelled `0`, else
    /// the first complete one in file order.
    DefaultLayout { label: String },
    /// A note of the re-analyzed report, as it was written.
    Carried(String),
    /// The stored document left out its `runs` runs, more than the `most`
    /// the store keeps of one result.
    RunsLeftOut { runs: usize, most: usize },
}

/// What a re-analysis of a ghostbench report used, against the original.
#[derive(Debug, Clone, PartialEq)]
pub struct Reanalysis {
    pub file: String,
    /// (now, in the report), as fractions.
    pub margin: (f64, f64),
    pub alpha: (f64, f64),
    /// (now, in the report), for a layout report.
    pub estimator: Option<(Estimator, Estimator)>,
    /// Some metric's direction is not the one the report held (`--higher-is-better`).
    pub higher_is_better: bool,
    /// For a compare report: how the interval was taken.
    pub interval: Option<Interval>,
}

/// How a re-analyzed compare report's interval was taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Interval {
    /// compare's looks replayed over the runs of A and B in their order.
    Replayed { runs: [usize; 2] },
    /// One interval at the data's size, as when `analyze` first analyzed it.
    Fixed,
}

/// Whether the runs of the baseline `a` and a candidate `b` were interleaved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interleaving {
    /// Every round holds runs of both.
    Interleaved,
    /// hyperfine: each command's runs one after the other.
    Blocks,
    /// No `round` column: nothing tells.
    Unknown { a: String, b: String },
    /// No round holds runs of both: the (first, last) round of each.
    Apart {
        a: String,
        b: String,
        a_rounds: Option<(usize, usize)>,
        b_rounds: Option<(usize, usize)>,
    },
    /// `shared` of the `rounds` rounds hold runs of both.
    Partly {
        a: String,
        b: String,
        shared: usize,
        rounds: usize,
    },
}

impl Interleaving {
    /// The `analyze` section's `interleaved`: None when the data cannot tell.
    pub fn interleaved(&self) -> Option<bool> {
        match self {
            Interleaving::Interleaved => Some(true),
            Interleaving::Unknown { .. } => None,
            _ => Some(false),
        }
    }

    /// The note to make, unless the runs were interleaved.
    pub fn note(&self) -> Option<Imported> {
        (*self != Interleaving::Interleaved).then(|| Imported::Order(self.clone()))
    }
}
