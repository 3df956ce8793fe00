//! `compare`: an interleaved A/B experiment between two commands.
//!
//! This module owns the types, all of them facts (numbers, enums, names): the
//! options (with their defaults), the report, a metric's result, the causes of
//! an UNKNOWN, the notes and the progress. The loop that runs rounds and stops
//! adaptively is in `experiment`, the process-start correction in `overhead`,
//! the per-metric statistics in `analysis`, why an UNKNOWN is undecided in
//! `causes`; `render` is the only part that writes prose (terminal, Markdown,
//! HTML and the JSON document). Imports run one way: render → analysis →
//! causes → this module.

pub mod analysis;
pub mod causes;
pub mod experiment;
pub mod imported;
pub mod overhead;
pub mod render;
pub mod single;

use crate::run::command::CommandSpec;
use crate::run::counters::CounterKind;
use crate::run::environment::Environment;
use crate::run::metric::{Direction, HigherIsBetter, MetricSpec, Unit};
use crate::run::{RunRecord, Runner, RunnerOptions};
use crate::stats::bootstrap::Interval;
use crate::stats::descriptive::Summary;
use crate::stats::mann_whitney::MannWhitney;
use crate::stats::sequential::Look;
use crate::stats::shift::Shift;
use crate::stats::verdict::Verdict;
use crate::stats::welch::Welch;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::time::Duration;

pub use experiment::run;

/// Version of the JSON document written by `--json` (docs/json-schema.md).
pub const SCHEMA_VERSION: u32 = crate::doc::Schema::Compare.version();

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
    /// `--higher-is-better`: which metrics are throughputs (each metric's
    /// own direction is in its report row).
    pub higher_is_better: HigherIsBetter,
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
    /// `--no-aslr`: every run starts with `ADDR_NO_RANDOMIZE` (personality(2)),
    /// so in one fixed memory layout.
    pub no_aslr: bool,
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

impl Default for CompareOptions {
    /// The command line's defaults, for two empty commands named A and B.
    fn default() -> Self {
        let unnamed = |name: &str| CommandSpec {
            name: name.to_string(),
            text: String::new(),
            argv: Vec::new(),
            shell: false,
        };
        CompareOptions::for_commands([unnamed("A"), unnamed("B")])
    }
}

impl CompareOptions {
    /// The runner every compare measurement uses (the A/B loop and a command
    /// measured alone): these options' run settings, `counters`, and the runner's
    /// own stream of the seed.
    pub(crate) fn runner(&self, counters: Vec<CounterKind>) -> anyhow::Result<Runner> {
        let mut runner = Runner::new(
            RunnerOptions {
                pin: self.pin,
                timeout: self.timeout,
                env_jitter: self.env_jitter,
                prepare: self.prepare.clone(),
                counters,
                metrics: self.metrics.clone(),
                ignore_failure: self.ignore_failure,
                input: self.input.clone(),
            },
            ChaCha8Rng::seed_from_u64(self.seed ^ 0x6a09_e667_f3bc_c908),
        )?;
        runner.set_no_aslr(self.no_aslr);
        Ok(runner)
    }

    /// The command line's defaults for two commands: `wall`, ±1%, α = 0.05,
    /// 1 warm-up round, 5 to 100 runs in 60 s, ABBA order, env jitter and the
    /// process-start correction on, seed 1.
    pub fn for_commands(commands: [CommandSpec; 2]) -> Self {
        CompareOptions {
            commands,
            metrics: vec![MetricSpec::Wall],
            higher_is_better: HigherIsBetter::Off,
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
            no_aslr: false,
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

/// The whole result of `compare`: facts only. `render::json` turns it into
/// the `--json` document (docs/json-schema.md), the other renderers into text.
#[derive(Debug, Clone)]
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
    pub notes: Vec<Note>,
    pub elapsed_s: f64,
    pub runs: Vec<RunRecord>,
    /// Present when `analyze` read the runs from files instead of running them.
    pub analyze: Option<crate::doc::Imported>,
}

impl CompareReport {
    /// Runs per command that were measured (warm-ups excluded).
    pub fn measured_runs(&self, side: usize) -> usize {
        self.runs
            .iter()
            .filter(|r| r.build == side && !r.warmup)
            .count()
    }
}

/// Everything found about one metric: numbers, verdicts and causes.
#[derive(Debug, Clone)]
pub struct MetricReport {
    pub name: String,
    pub unit: Unit,
    /// Which way is better on this metric (a cost is always lower).
    pub direction: Direction,
    /// True when the process-start overhead was subtracted (wall only).
    pub spawn_corrected: bool,
    /// Measured runs of A and of B the verdict's interval was taken over.
    pub runs: [usize; 2],
    pub a: Option<Summary>,
    pub b: Option<Summary>,
    pub verdict: Verdict,
    /// Ratio B/A and its anytime-valid CI, the basis of the verdict.
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The confidence the CI holds with, over all looks together (1 − alpha).
    pub ci_level: f64,
    /// The alpha spent on this metric at the deciding look.
    pub look_alpha: f64,
    /// Sequential looks taken (0: one interval at the data's size).
    pub looks: usize,
    /// Why an UNKNOWN is undecided (empty for a verdict).
    pub causes: Vec<Cause>,
    pub bootstrap_ratio_of_medians: Option<Interval>,
    pub hodges_lehmann_shift: Option<Shift>,
    pub cliffs_delta: f64,
    pub welch: Option<Welch>,
    pub mann_whitney: Option<MannWhitney>,
    /// Holm–Bonferroni adjusted p-values across the experiment's metrics.
    pub welch_p_holm: Option<f64>,
    pub mann_whitney_p_holm: Option<f64>,
}

/// The inputs of the analysis of one metric: both sides' values and the look
/// that decides it.
pub struct MetricInput<'a> {
    pub name: &'a str,
    pub unit: Unit,
    pub direction: Direction,
    pub a: &'a [f64],
    pub b: &'a [f64],
    pub spawn_corrected: bool,
    pub look: Look,
    pub looks: usize,
}

/// Why a metric is UNKNOWN: one fact with its numbers. A metric may have several
/// (outliers on both sides, more runs and a wider margin). `causes` finds them,
/// `render::hint` words them (docs/methodology.md §5).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// Too few runs for a finite interval at the look's level.
    TooFewRuns { runs: usize },
    /// One side has runs beyond Tukey's outer fence (3·IQR, either side), or a
    /// long tail on the worse side (at least 10% of its runs, and 2, beyond the
    /// 1.5·IQR fence).
    RunOutliers {
        /// 0 = A, 1 = B.
        side: usize,
        runs: usize,
        far_out: usize,
        tail: usize,
        /// The outlier farthest from the side's median, relative to it (+0.41: 41% above).
        worst: f64,
    },
    /// About `runs` per command would likely decide it (a forecast from the
    /// interval's shrinkage along the look schedule).
    MoreRuns {
        runs: usize,
        runs_made: usize,
        /// The limit that stopped the experiment, when one did.
        stopped_by: Option<Limit>,
        /// A `--max-runs` that allows `runs`, when the current one does not.
        max_runs: Option<usize>,
        /// A `--max-time` (seconds) that allows `runs`, when the current one does not.
        max_time_s: Option<f64>,
    },
    /// Within the budget the run noise is too large for this margin: the margins
    /// under which the interval forecast at the budget's run count would decide.
    MarginWithinBudget {
        /// Runs per command the budget allows (the runs made, without a budget).
        budget_runs: usize,
        /// SAME needs a margin of at least this (fraction).
        same_margin: f64,
        /// FASTER/SLOWER (`direction`) needs a margin below this, when the
        /// interval excludes 1.
        direction_margin: Option<f64>,
        direction: Option<Verdict>,
        /// Runs per command this margin would need, when within 100× the runs made.
        runs_needed: Option<usize>,
    },
}

/// Something the reader should know about how the result came about, as
/// facts; `render::prose::note` words it, in every format and in the JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// What the runner saw (matches taken, processes left behind, `--max-time`).
    Run(crate::run::Note),
    /// What `analyze` found about the data it read.
    Imported(imported::Imported),
    /// `--cleanup` was not run: Ctrl-C interrupted the experiment.
    CleanupSkipped,
    /// `--cleanup` failed, with the runner's cause.
    CleanupFailed { cause: String },
    /// The process start (`overhead_s`) is over `max_share` of a run, so wall
    /// is not corrected for it.
    SpawnNotCorrected { overhead_s: f64, max_share: f64 },
    /// Every run had an environment variable of random length (`run::JITTER_VARIABLE`,
    /// 0 to `max_bytes` bytes), recorded per run.
    EnvironmentJitter { max_bytes: usize },
    /// `--no-aslr`: every run had ASLR off, so one memory layout.
    AslrOff,
    /// A is a stored baseline (`--baseline NAME`): which one, and how its
    /// side was measured. The JSON document carries it as `baseline` too.
    Baseline(BaselineUse),
    /// `--higher-is-better` was given, and some metrics it did not turn around.
    Unapplied(Unapplied),
    /// A metric with values ≤ 0 (`a` runs of A, `b` of B), where a ratio B/A
    /// has no log scale: with A's median above 0 the interval is of the
    /// difference B − A relative to it; else there is none (UNKNOWN).
    NonPositive {
        metric: String,
        a: usize,
        b: usize,
        difference_scale: bool,
    },
}

/// The metrics `--higher-is-better` did not turn around: costs (time,
/// memory, counters; always lower-is-better) and names no metric has.
#[derive(Debug, Clone, PartialEq)]
pub struct Unapplied {
    pub costs: Vec<String>,
    pub unknown: Vec<String>,
}

impl Unapplied {
    /// The fact, when there is one: `--higher-is-better` as given, on the
    /// experiment's metrics.
    pub fn of(flag: &HigherIsBetter, metrics: &[(String, Unit)]) -> Option<Unapplied> {
        let (costs, unknown) = flag.unapplied(metrics);
        (!costs.is_empty() || !unknown.is_empty()).then_some(Unapplied { costs, unknown })
    }
}

/// `compare --baseline NAME` or `analyze --baseline NAME`: the stored
/// baseline that is side A, and which mode measured it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineUse {
    pub name: String,
    /// The result that saved it, when, and on which commit.
    pub experiment: i64,
    pub saved_unix: i64,
    pub commit: Option<String>,
    #[serde(flatten)]
    pub mode: BaselineMode,
}

/// How a baseline's side was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum BaselineMode {
    /// Its command run again now, interleaved with the candidate's in one
    /// experiment: `program` is what ran as its program (the saved copy, or
    /// the original while it still has the saved hash; None for `--shell`).
    Interleaved { program: Option<String> },
    /// Its stored runs against runs made in another session (`why` not
    /// interleaved): the margin is widened by the drift allowed between
    /// sessions, `(1 + margin)(1 + drift) − 1`, which is `margin`; `drift`
    /// is the documented allowance, or the largest drift of the baseline's
    /// own command over the `sessions` stored since it was saved.
    Stored {
        why: Fallback,
        drift: f64,
        sessions: usize,
        margin: f64,
    },
}

/// Why a baseline's side could not be run again now.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cause", content = "path", rename_all = "snake_case")]
pub enum Fallback {
    /// The candidate's values were imported (`analyze --baseline`).
    Imported,
    /// The baseline was saved without what re-running it needs (by an older
    /// ghostbench, or its program could not be copied).
    NotKept,
    /// The saved copy of its program is gone.
    CopyGone(String),
    /// The saved copy of its program no longer has its hash.
    CopyChanged(String),
    /// A file its command names is gone.
    FileGone(String),
    /// A file its command names changed since it was saved.
    FileChanged(String),
}

/// What the loop tells the caller as it goes (for a progress bar).
#[derive(Debug, Clone)]
pub struct Progress {
    pub runs_done: usize,
    pub runs_max: usize,
    pub elapsed: Duration,
    pub max_time: Duration,
    /// Still in the warm-up rounds.
    pub warmup: bool,
    /// The latest look's verdict and ratio per metric, once there is one.
    pub looks: Vec<(String, Verdict, f64)>,
}
