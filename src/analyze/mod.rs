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

/// `analyze`'s notes on the data, as facts: they travel in the `compare` and
/// `layout` reports' notes (`Note::Imported`), so their types live there.
pub use crate::compare::imported::{Imported as Note, Interleaving, Interval, Reanalysis};
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
