//! `compare`: an interleaved A/B experiment between two commands.
//!
//! This module owns the experiment's options and its result type. The loop that
//! runs rounds and stops adaptively is in `experiment`, the per-metric statistics
//! in `analysis`, why an UNKNOWN is undecided in `causes`, and the process-start
//! correction in `overhead`.

pub mod analysis;
pub mod causes;
pub mod experiment;
pub mod overhead;
pub mod render;

use crate::run::command::CommandSpec;
use crate::run::environment::Environment;
use crate::run::metric::MetricSpec;
use crate::run::RunRecord;
use crate::stats::verdict::Verdict;
use serde::Serialize;
use std::time::Duration;

pub use analysis::MetricReport;
pub use experiment::run;

/// Version of the JSON document written by `--json` (docs/json-schema.md).
pub const SCHEMA_VERSION: u32 = 1;

/// The order of the two commands inside each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// AB, BA, AB, …: over two rounds, ABBA, which cancels linear drift.
    Abba,
    /// A fresh random order each round.
    Random,
}

/// Everything `compare` needs, one field per option. Echoed into the report as
/// its `settings` (the commands, counters and simulation have sections of their own).
#[derive(Debug, Clone, Serialize)]
pub struct CompareOptions {
    #[serde(skip)]
    pub commands: [CommandSpec; 2],
    #[serde(serialize_with = "metric_labels")]
    pub metrics: Vec<MetricSpec>,
    pub higher_is_better: bool,
    pub margin: f64,
    pub alpha: f64,
    pub warmup: usize,
    pub min_runs: usize,
    pub max_runs: usize,
    #[serde(rename = "max_time_s", serialize_with = "seconds")]
    pub max_time: Duration,
    pub order: Order,
    pub env_jitter: bool,
    pub spawn_correction: bool,
    pub pin: Option<usize>,
    #[serde(serialize_with = "command_text")]
    pub prepare: Option<CommandSpec>,
    /// Run once before the first run, and once after the last.
    #[serde(serialize_with = "command_text")]
    pub setup: Option<CommandSpec>,
    #[serde(serialize_with = "command_text")]
    pub cleanup: Option<CommandSpec>,
    /// Non-zero exit codes are recorded, not failures.
    pub ignore_failure: bool,
    /// A file every run reads on stdin.
    pub input: Option<std::path::PathBuf>,
    #[serde(rename = "timeout_s", serialize_with = "optional_seconds")]
    pub timeout: Option<Duration>,
    #[serde(skip)]
    pub counters: bool,
    #[serde(skip)]
    pub simulate: bool,
    pub seed: u64,
    /// How the tool was invoked, for the record (the environment section has it).
    #[serde(skip)]
    pub command_line: Vec<String>,
}

impl CompareOptions {
    /// The command line's defaults for two commands: `wall`, ±1%, α = 0.05,
    /// 1 warm-up round, 5 to 100 runs in 60 s, ABBA order, env jitter and the
    /// process-start correction on, seed 1.
    pub fn for_commands(commands: [CommandSpec; 2]) -> Self {
        CompareOptions {
            commands,
            metrics: vec![MetricSpec::Wall],
            higher_is_better: false,
            margin: 0.01,
            alpha: 0.05,
            warmup: 1,
            min_runs: 5,
            max_runs: 100,
            max_time: Duration::from_secs(60),
            order: Order::Abba,
            env_jitter: true,
            spawn_correction: true,
            pin: None,
            prepare: None,
            setup: None,
            cleanup: None,
            ignore_failure: false,
            input: None,
            timeout: None,
            counters: false,
            simulate: false,
            seed: 1,
            command_line: Vec::new(),
        }
    }
}

fn metric_labels<S: serde::Serializer>(metrics: &[MetricSpec], out: S) -> Result<S::Ok, S::Error> {
    out.collect_seq(metrics.iter().map(MetricSpec::label))
}

fn seconds<S: serde::Serializer>(duration: &Duration, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_f64(duration.as_secs_f64())
}

fn optional_seconds<S: serde::Serializer>(
    duration: &Option<Duration>,
    out: S,
) -> Result<S::Ok, S::Error> {
    match duration {
        Some(d) => out.serialize_some(&d.as_secs_f64()),
        None => out.serialize_none(),
    }
}

fn command_text<S: serde::Serializer>(
    command: &Option<CommandSpec>,
    out: S,
) -> Result<S::Ok, S::Error> {
    match command {
        Some(c) => out.serialize_some(&c.text),
        None => out.serialize_none(),
    }
}

/// How the experiment ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Every metric reached a verdict.
    Decided,
    /// `--max-runs` or `--max-time` ran out first.
    BudgetExhausted,
    /// A run failed; the results so far are kept.
    Failed,
    /// Ctrl-C; the results so far are kept.
    Interrupted,
    /// `analyze` read the runs from files; nothing was run.
    Imported,
}

/// The budget limit that ended an experiment before every metric was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// `--max-runs` runs per command were made.
    MaxRuns,
    /// `--max-time` had passed at the end of a round.
    MaxTime,
}

impl Limit {
    /// The option that sets it, as typed.
    pub fn option(self) -> &'static str {
        match self {
            Limit::MaxRuns => "--max-runs",
            Limit::MaxTime => "--max-time",
        }
    }
}

/// How the experiment ended.
pub type Status = crate::run::Status<State>;

/// Hardware counters: per counter, the medians of both commands; or why there are none.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct CounterReport {
    pub requested: bool,
    pub unavailable: Option<String>,
    pub rows: Vec<CounterRow>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct CounterRow {
    pub name: String,
    pub median_a: f64,
    pub median_b: f64,
    pub ratio: f64,
}

/// `--simulate`: one cachegrind run per command, or why there is none.
#[derive(Debug, Clone, Serialize)]
pub struct SimulationReport {
    pub unavailable: Option<String>,
    pub results: Vec<Option<crate::run::cachegrind::Simulated>>,
    pub errors: Vec<Option<String>>,
}

/// The whole result of `compare`, as written to `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct CompareReport {
    pub schema: &'static str,
    pub schema_version: u32,
    pub commands: Vec<CommandSpec>,
    pub settings: CompareOptions,
    pub status: Status,
    /// With `budget_exhausted`: which limit stopped it (`max_time` when both ran out at once).
    pub stopped_by: Option<Limit>,
    pub environment: Environment,
    /// Median wall time of a no-op process start, subtracted from `wall` when applied.
    pub spawn_overhead_s: Option<f64>,
    pub spawn_correction_applied: bool,
    pub metrics: Vec<MetricReport>,
    pub counters: CounterReport,
    pub simulation: Option<SimulationReport>,
    pub notes: Vec<String>,
    pub elapsed_s: f64,
    pub runs: Vec<RunRecord>,
    /// Present when `analyze` read the runs from files instead of running them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analyze: Option<crate::run::Imported>,
}

impl CompareReport {
    /// The overall verdict when there is one metric, else None.
    pub fn single_verdict(&self) -> Option<Verdict> {
        match self.metrics.as_slice() {
            [only] => Some(only.verdict),
            _ => None,
        }
    }

    /// Runs per command that were measured (warm-ups excluded).
    pub fn measured_runs(&self, side: usize) -> usize {
        self.runs
            .iter()
            .filter(|r| r.build == side && !r.warmup)
            .count()
    }
}
