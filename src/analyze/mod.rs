//! `analyze`: the verdicts of `compare` and `layout` on measurements made
//! elsewhere: a CSV of values, hyperfine's `--export-json`, or ghostbench's
//! own `--json` re-analyzed with other options.
//!
//! This module owns the types, all facts: the options (with their defaults),
//! the report (the verb's report and `analyze`'s notes on the data) and the
//! notes. `analysis::run` is the entry point: `input` reads the files
//! (format from the content; `json_count` bounds a JSON file before it is
//! parsed) into rows, `rows` groups them into runs and
//! tells whether they were interleaved, `compared` gives data without layouts
//! `compare`'s analysis, `layouts` gives data with layouts `layout`'s, and
//! `ghost` re-analyzes a ghostbench report, `shards` merges a plan's shard
//! results (`analyze DIR/results/`). The results are the report types
//! `compare` and `layout` produce, so the same renderers and the same JSON
//! schemas serve, with an `analyze` section saying where the runs came from;
//! `render` words `analyze`'s notes into them. Imports run one way: render →
//! analysis → ghost → layouts, compared → rows → input → json_count, this module.
//!
//! Without a `layout` column the data get `compare`'s two-sample analysis at
//! a fixed n: the exact Hodges–Lehmann interval of the log ratio at level
//! 1 − α (Bonferroni over metrics × candidates), not the anytime interval,
//! since nobody looked at these data before they were complete. With a
//! `layout` column they get `layout`'s analysis across layouts.

pub mod analysis;
pub mod baseline;
pub mod compared;
pub mod ghost;
pub mod input;
pub mod json_count;
pub mod layouts;
pub mod render;
pub mod rows;
pub mod shards;

use crate::compare::CompareReport;
use crate::layout::LayoutReport;
use crate::run::metric::HigherIsBetter;
use crate::stats::hierarchical::Estimator;
use std::path::PathBuf;

pub use analysis::run;

/// The equivalence margin when neither the option nor the input gives one.
pub const DEFAULT_MARGIN: f64 = 0.01;
/// The false-alarm rate when neither the option nor the input gives one.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// `analyze`'s options. `None` keeps the input's own setting (a ghostbench
/// report), or the default (1%, 0.05, median).
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzeOptions {
    /// Read as one data set, or one ghostbench report to re-analyze.
    pub files: Vec<PathBuf>,
    /// `--higher-is-better`: joined with a re-analyzed report's own directions.
    pub higher_is_better: HigherIsBetter,
    /// A fraction (0.01 = ±1%).
    pub margin: Option<f64>,
    pub alpha: Option<f64>,
    pub estimator: Option<Estimator>,
    /// Seeds the descriptive bootstrap.
    pub seed: u64,
    pub command_line: Vec<String>,
}

impl Default for AnalyzeOptions {
    /// The command line's defaults: the input's own settings, seed 1, no files.
    fn default() -> Self {
        AnalyzeOptions {
            files: Vec::new(),
            higher_is_better: HigherIsBetter::Off,
            margin: None,
            alpha: None,
            estimator: None,
            seed: 1,
            command_line: Vec::new(),
        }
    }
}

/// A verb's report on data `analyze` read, with `analyze`'s notes on the
/// data (facts; `render` words them into the report's notes).
#[derive(Debug, Clone)]
pub struct Analyzed<R> {
    pub report: R,
    pub notes: Vec<Note>,
}

/// What `analyze` found.
#[derive(Debug, Clone)]
pub enum AnalyzeReport {
    /// Two-sample comparisons, one report per candidate against the baseline.
    Compare(Vec<Analyzed<CompareReport>>),
    /// Across layouts, one matrix.
    Layout(Box<Analyzed<LayoutReport>>),
}

/// Something the reader should know about the data and how they were
/// analyzed, as facts; `render::note` words it.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
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
    pub fn note(&self) -> Option<Note> {
        (*self != Interleaving::Interleaved).then(|| Note::Order(self.clone()))
    }
}
