//! One struct per document kind the store keeps (`compare`, `layout`,
//! `baseline`), with the fields a reader needs: verdicts as
//! `stats::verdict::Verdict`, runs as `run::RunRecord`, states as [`State`].

use super::field::required;
use super::imported::Imported;
use super::settings::{CompareSettings, LayoutSettings};
use crate::run::command::CommandSpec;
use crate::run::environment::Environment;
use crate::run::{RunRecord, Status};
use crate::stats::verdict::Verdict;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// How an experiment ended: every verb's `status.state` (`compare`'s and
/// `baseline`'s first five, `layout`'s `finished`, `build_failed`, `run_failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Decided,
    Finished,
    BudgetExhausted,
    Failed,
    BuildFailed,
    RunFailed,
    Interrupted,
    Imported,
}

impl State {
    /// As written in the document.
    pub fn name(self) -> &'static str {
        match self {
            State::Decided => "decided",
            State::Finished => "finished",
            State::BudgetExhausted => "budget_exhausted",
            State::Failed => "failed",
            State::BuildFailed => "build_failed",
            State::RunFailed => "run_failed",
            State::Interrupted => "interrupted",
            State::Imported => "imported",
        }
    }

    /// Whether the experiment stopped before it finished (a failure or Ctrl-C).
    pub fn stopped(self) -> bool {
        matches!(
            self,
            State::Failed | State::BuildFailed | State::RunFailed | State::Interrupted
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `ghostbench.compare` document, as read back.
#[derive(Debug, Clone, Deserialize)]
pub struct Compare {
    pub schema_version: u32,
    /// A and B.
    pub commands: Vec<CommandSpec>,
    /// The options that shaped the result.
    pub settings: CompareSettings,
    pub status: Status<State>,
    /// Which limit stopped the runs, if one did.
    #[serde(default)]
    pub stopped_by: Option<Limit>,
    pub environment: Environment,
    /// The measured cost of starting a process, when measured.
    #[serde(default)]
    pub spawn_overhead_s: Option<f64>,
    #[serde(default)]
    pub spawn_correction_applied: bool,
    pub metrics: Vec<Metric>,
    /// The hardware-counter section, read whole by `analyze` into compare's
    /// own type (no reader here looks inside it).
    #[serde(default)]
    pub counters: Option<Value>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub elapsed_s: f64,
    pub runs: Vec<RunRecord>,
    #[serde(default)]
    pub analyze: Option<Imported>,
    /// Runs the store left out of a large result (`analyze` past
    /// `limits::MAX_STORED_RUNS`); absent when it kept them all.
    #[serde(default)]
    pub runs_left_out: Option<u64>,
}

/// The limit that stopped a compare before its verdicts were decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    MaxRuns,
    MaxTime,
}

/// Which way is better on a metric (`direction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Lower,
    Higher,
}

/// A row's stored direction: `direction`, or the older per-metric
/// `higher_is_better` when only that is there; `None` when neither is.
fn higher(direction: Option<Direction>, older: Option<bool>) -> Option<bool> {
    direction.map(|d| d == Direction::Higher).or(older)
}

/// One metric of a compare document.
#[derive(Debug, Clone, Deserialize)]
pub struct Metric {
    pub name: String,
    #[serde(default)]
    pub direction: Option<Direction>,
    /// `direction` = `higher`, kept for older readers (and read from older writers).
    #[serde(default)]
    pub higher_is_better: Option<bool>,
    pub verdict: Verdict,
    #[serde(deserialize_with = "required")]
    pub ratio: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub ci_low: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub ci_high: Option<f64>,
}

impl Metric {
    /// Whether the report held higher better on this metric, if it says.
    pub fn higher(&self) -> Option<bool> {
        higher(self.direction, self.higher_is_better)
    }
}

/// A `ghostbench.layout` document, as read back.
#[derive(Debug, Clone, Deserialize)]
pub struct Layout {
    pub schema_version: u32,
    /// The builds; the first is the baseline.
    pub builds: Vec<Build>,
    pub settings: LayoutSettings,
    pub status: Status<State>,
    pub environment: Environment,
    /// The seeds of the layouts measured, in order.
    pub used_seeds: Vec<u64>,
    pub matrix: Vec<Row>,
    pub runs: Vec<LayoutRun>,
    #[serde(default)]
    pub analyze: Option<Imported>,
    /// As [`Compare::runs_left_out`].
    #[serde(default)]
    pub runs_left_out: Option<u64>,
}

/// A build of a layout document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    pub name: String,
    pub template: String,
}

/// One run of a layout document: the build, the layout's seed, the run. The
/// experiment records its runs in this type too (`layout::LayoutRun`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LayoutRun {
    pub build: usize,
    pub seed: u64,
    #[serde(flatten)]
    pub record: RunRecord,
}

/// One row of a layout document's `matrix`: a metric of a build.
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    pub build: String,
    pub metric: String,
    #[serde(default)]
    pub direction: Option<Direction>,
    #[serde(default)]
    pub higher_is_better: Option<bool>,
    /// None for the baseline.
    #[serde(deserialize_with = "required")]
    pub comparison: Option<Comparison>,
}

impl Row {
    /// As [`Metric::higher`].
    pub fn higher(&self) -> Option<bool> {
        higher(self.direction, self.higher_is_better)
    }
}

/// A build against the baseline on one metric, across layouts.
#[derive(Debug, Clone, Deserialize)]
pub struct Comparison {
    pub verdict: Verdict,
    #[serde(deserialize_with = "required")]
    pub default_ratio: Option<Ratio>,
    #[serde(deserialize_with = "required")]
    pub controlled: Option<Ratio>,
    #[serde(deserialize_with = "required")]
    pub fragility: Option<Fragility>,
}

impl Comparison {
    /// The across-layouts interval when there is one, else the default layout's.
    pub fn interval(&self) -> Option<&Ratio> {
        self.controlled.as_ref().or(self.default_ratio.as_ref())
    }

    /// Whether the build is reproducibly worse than typical in some layouts.
    pub fn fragile(&self) -> bool {
        self.fragility.as_ref().is_some_and(|f| !f.worse.is_empty())
    }
}

/// A ratio B/A with its interval.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Ratio {
    #[serde(deserialize_with = "required")]
    pub estimate: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub low: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub high: Option<f64>,
}

/// Layouts in which a build stands apart from its typical ratio.
#[derive(Debug, Clone, Deserialize)]
pub struct Fragility {
    pub worse: Vec<Fragile>,
    pub better: Vec<Fragile>,
}

/// One such layout: its index into `used_seeds`.
#[derive(Debug, Clone, Deserialize)]
pub struct Fragile {
    pub variant: usize,
}

/// A `ghostbench.baseline` document (one command measured alone), as read back.
#[derive(Debug, Clone, Deserialize)]
pub struct Baseline {
    pub schema_version: u32,
    /// The one command.
    pub commands: Vec<CommandSpec>,
    pub settings: CompareSettings,
    pub status: Status<State>,
    pub environment: Environment,
    pub elapsed_s: f64,
    pub runs: Vec<RunRecord>,
}
