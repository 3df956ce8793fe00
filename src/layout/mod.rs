//! `layout`: rebuild each side under many layouts and tell real effects from
//! layout artifacts (docs/architecture.md §5).
//!
//! This module owns the options and the result types (facts: numbers, enums,
//! names). Seeds → perturbations are in `variants`, templates, the cache and
//! parallel builds in `builds`, the work directory, sources and build jobs in
//! `plan`, the look loop and the run schedule in `experiment`, the verdicts
//! in `analysis`, `--explain` in `explain` and `profile`; scale-out plans
//! and shard results in `shard`, the merged facts in `merged`, running a plan
//! or one shard in `shard_run`; `render` is the only part that writes prose
//! (terminal, Markdown, HTML, JSON).

pub mod analysis;
pub mod builds;
pub mod cache;
pub mod emit;
pub mod experiment;
pub mod explain;
pub mod explanation;
pub mod heap;
pub mod identical;
pub mod launcher;
pub mod merged;
pub mod plan;
pub mod profile;
pub mod realign;
pub mod render;
pub mod rust;
pub mod shard;
pub mod shard_run;
pub mod variants;

use crate::run::environment::Environment;
use crate::run::metric::{Direction, HigherIsBetter, MetricSpec, Unit};
use crate::stats::fragility::Fragility;
use crate::stats::hierarchical::{Estimator, LayoutRatio};
use crate::stats::verdict::Verdict;
use builds::BuildResult;
use serde::Serialize;
use std::path::PathBuf;
use variants::{Source, SourceStatus, Variant};

pub use experiment::run;

/// Version of the JSON document written by `--json` (docs/json-schema.md).
pub const SCHEMA_VERSION: u32 = crate::doc::Schema::Layout.version();

/// The least number of matched variants (the default layout included) to analyze.
pub const MIN_VARIANTS: usize = 3;

/// What the experiment tells the caller as it goes.
#[derive(Debug, Clone)]
pub struct Progress {
    pub phase: Phase,
    pub done: usize,
    pub total: usize,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Build,
    Run,
    /// `--explain`: analyzing and profiling the default layouts.
    Explain,
}

/// One `--build NAME=TEMPLATE`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct BuildSpec {
    pub name: String,
    pub template: String,
}

/// Everything `layout` needs, one field per option.
#[derive(Debug, Clone)]
pub struct LayoutOptions {
    /// The first is the baseline.
    pub builds: Vec<BuildSpec>,
    pub run_template: String,
    pub metrics: Vec<MetricSpec>,
    /// `--higher-is-better`: which metrics are throughputs (each row's own
    /// direction is in [`MatrixRow::direction`]).
    pub higher_is_better: HigherIsBetter,
    /// Layout variants per build, including the default layout (seed 0): the
    /// fixed count, or with `max_layouts` the first batch.
    pub layouts: usize,
    /// `--layouts auto`: add batches (doubling the variants) until every
    /// comparison is decided or this many variants were measured.
    pub max_layouts: Option<usize>,
    pub rounds: usize,
    pub warmup: usize,
    pub sources: Vec<Source>,
    pub jobs: usize,
    /// A build (one template, one variant) running longer is killed and
    /// fails ([`BUILD_TIMEOUT`] by default).
    pub build_timeout: std::time::Duration,
    pub estimator: Estimator,
    pub margin: f64,
    pub alpha: f64,
    pub shell: bool,
    pub timeout: Option<std::time::Duration>,
    /// Stop after the first measured round that ends past this much running time.
    pub max_time: Option<std::time::Duration>,
    pub pin: Option<usize>,
    /// Ignore the build cache.
    pub rebuild: bool,
    /// Where `.ghostbench/work` lives (the current directory by default).
    pub work_root: PathBuf,
    pub seed: u64,
    pub command_line: Vec<String>,
    /// `--explain`: list up to this many moved functions per build (default
    /// layouts against the baseline's); `None` = no explanation.
    pub explain: Option<usize>,
    /// The microarchitecture model `--explain` judges placement by (its
    /// window size; the first model when several are named).
    pub uarch: crate::code::uarch::Choice,
    /// A plan's variants to run instead of seeds 0..layouts (`layout --plan`).
    pub planned: Option<Planned>,
}

/// The variants of a plan (`layout --plan`): one look at exactly these.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub variants: Vec<Variant>,
    /// A shard: every variant must build for every build (no minimum count,
    /// no default layout needed), else the shard fails; `false` for the
    /// plan's whole first wave in one process.
    pub shard: bool,
    /// The share of α the look at this wave spends (as `--layouts auto` at that look).
    pub alpha_share: f64,
}

impl Default for LayoutOptions {
    /// The command line's defaults, with no builds: `--layouts auto` (a first
    /// batch of 8, up to 32), 5 rounds, 1 warm-up round, every source, the
    /// median estimator, ±1% and α = 0.05.
    fn default() -> Self {
        LayoutOptions {
            builds: Vec::new(),
            run_template: "{out}".into(),
            metrics: vec![MetricSpec::Wall],
            higher_is_better: HigherIsBetter::Off,
            layouts: 8,
            max_layouts: Some(32),
            rounds: 5,
            warmup: 1,
            sources: vec![
                Source::Align,
                Source::Shift,
                Source::Shuffle,
                Source::Env,
                Source::Heap,
            ],
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            build_timeout: BUILD_TIMEOUT,
            estimator: Estimator::Median,
            margin: 0.01,
            alpha: 0.05,
            shell: false,
            timeout: None,
            max_time: None,
            pin: None,
            rebuild: false,
            work_root: PathBuf::from("."),
            seed: 1,
            command_line: Vec::new(),
            explain: None,
            uarch: crate::code::uarch::Choice::default(),
            planned: None,
        }
    }
}

/// `--build-timeout`'s default: generous, one hour per build, so only a
/// build that hangs (a prompt for input, a deadlock) meets it.
pub const BUILD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

/// How the experiment ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Every build and run finished.
    Finished,
    /// `--max-time` ran out; the rounds completed are analyzed.
    BudgetExhausted,
    /// Too few variants built; nothing was run.
    BuildFailed,
    /// A run failed; the runs so far are analyzed.
    RunFailed,
    /// Ctrl-C; the runs so far are analyzed.
    Interrupted,
    /// `analyze` read the runs from files; nothing was run.
    Imported,
}

/// How the experiment ended.
pub type Status = crate::run::Status<State>;

/// The settings that shaped the result.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub run_template: String,
    pub metrics: Vec<String>,
    pub higher_is_better: HigherIsBetter,
    /// Variants built (all looks); the first batch before the experiment ends.
    pub layouts: usize,
    /// `--layouts auto`: the most variants it may add up to; absent for a fixed count.
    pub max_layouts: Option<usize>,
    pub rounds: usize,
    pub warmup: usize,
    pub jobs: usize,
    pub estimator: Estimator,
    pub margin: f64,
    pub alpha: f64,
    /// The confidence of every across-layouts interval of the last look, after
    /// Bonferroni over metrics × comparisons and, with `--layouts auto`, the
    /// share of α spent at that look.
    pub confidence: f64,
    /// `--max-time` in seconds, if given.
    pub max_time_s: Option<f64>,
    pub shell: bool,
    pub seed: u64,
    pub work_dir: String,
}

/// One variant's estimate of one build and metric.
#[derive(Debug, Clone, Serialize)]
pub struct VariantValue {
    pub seed: u64,
    pub runs: usize,
    pub estimate: f64,
}

/// A ratio B/A with its interval (the default-layout comparison).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RatioInterval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// A build against the baseline on one metric: numbers and verdicts only
/// (`render::prose` words them).
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Variant 0 alone: what a naive A/B would report.
    pub default_ratio: Option<RatioInterval>,
    pub default_verdict: Verdict,
    /// Across layouts (hierarchical bootstrap).
    pub controlled: Option<LayoutRatio>,
    pub controlled_verdict: Verdict,
    /// Layout noise: 95% of layout-only differences of a single-layout
    /// comparison stay below this (fraction); NaN without a controlled ratio.
    pub layout_noise: f64,
    /// The final verdict, ARTIFACT included.
    pub verdict: Verdict,
    /// For ARTIFACT: the share of the default-layout difference that disappears (fraction).
    pub artifact_share: Option<f64>,
    /// The across-layouts estimate is significant (FASTER/SLOWER) and points
    /// the other way than the default layout's: the difference reverses.
    pub reverses: bool,
    /// For UNKNOWN: why, from the data.
    pub undecided: Option<Undecided>,
    /// Layouts in which B stands apart from its typical ratio to A in every
    /// round: a one-sided layout ghost, reported whatever the verdict.
    pub fragility: Option<Fragility>,
    /// For a decided FASTER/SLOWER whose default-layout estimate lies outside
    /// the across-layouts interval: the default ratio minus the controlled
    /// estimate (ratio points), the part of the default layout's difference
    /// that is placement.
    pub placement_points: Option<f64>,
    /// Why the default layout has no interval (`default_ratio` is None), so
    /// its verdict is UNKNOWN and ARTIFACT cannot be called.
    pub no_default_interval: Option<NoDefaultInterval>,
}

/// Why the default layout's runs gave no interval (facts; `render::prose`
/// words them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum NoDefaultInterval {
    /// Fewer than 2 measured runs of a build there (`a` of the baseline,
    /// `b` of the build): Yuen's interval needs 2 of each.
    TooFewRuns { a: usize, b: usize },
    /// A value there is 0 or below, so the ratio has no log scale.
    NonPositive,
    /// The runs were there, but the interval came out infinite or undefined.
    Undefined,
}

/// Why a comparison stayed UNKNOWN, from the data (facts; `render::prose`
/// words them as the "to decide" hint).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Undecided {
    /// Fewer than 2 variants with runs of both builds.
    TooFewRuns,
    /// Wild runs (a busy machine): at least 10% of the runs were set aside
    /// as run-level contamination.
    RunOutliers {
        runs: usize,
        of: usize,
        /// The largest log distance of a run from its variant's best run.
        worst: f64,
        /// Variant indexes holding wild runs.
        variants: Vec<usize>,
    },
    /// Layout spread: about this many layouts would likely decide.
    LayoutSpread { layouts: usize },
    /// Run noise within a layout is most of the spread of the per-layout
    /// ratios (`share` of its variance): about `rounds` rounds would likely
    /// decide, where more layouts would not help as much.
    RunNoise { share: f64, rounds: usize },
    /// Shards on different CPU models point opposite ways (FASTER on one,
    /// SLOWER on another): no pooled verdict stands for all of them.
    DependsOnMachine { models: Vec<MachineEffect> },
    /// The estimate sits too close to the margin for any layout budget: these
    /// margins (fractions) would decide SAME, or the direction.
    NearMargin {
        margin_for_same: f64,
        margin_for_effect: Option<f64>,
    },
}

/// One CPU model's effect, for [`Undecided::DependsOnMachine`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineEffect {
    pub cpu_model: String,
    /// Ratio B/A on that model.
    pub estimate: f64,
    pub verdict: Verdict,
}

/// One cell row of the matrix: a build on a metric.
#[derive(Debug, Clone)]
pub struct MatrixRow {
    pub build: String,
    pub metric: String,
    pub unit: Unit,
    /// Which way is better on this metric (a cost is always lower).
    pub direction: Direction,
    /// The estimate at the default layout (variant 0).
    pub default_value: f64,
    /// Coefficient of variation of the per-variant estimates.
    pub spread_cv: f64,
    pub variants: Vec<VariantValue>,
    /// None for the baseline.
    pub comparison: Option<Comparison>,
}

/// One look at the data: `--layouts auto` looks after every batch.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Look {
    /// Variants analyzed at this look.
    pub layouts: usize,
    /// The confidence of every across-layouts interval at this look.
    pub confidence: f64,
    /// Comparisons (metric × build) still UNKNOWN.
    pub undecided: usize,
    /// What was measured for this look: new layouts, or more rounds.
    pub added: Added,
}

/// What a look measured before it was taken. `--layouts auto` spends each
/// look where the noise is: more rounds on the layouts it has when run noise
/// within layouts made most of the spread of every undecided comparison,
/// more layouts otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Added {
    /// `layouts` new layouts (the first batch, or doubling).
    Layouts { layouts: usize },
    /// `rounds` more rounds on every layout measured so far.
    Rounds { rounds: usize },
}

/// One measured or warm-up run, with the build and variant it belongs to: the
/// document's type (`doc::LayoutRun`), which the experiment fills in directly.
pub use crate::doc::LayoutRun;

/// The machine's load while the runs ran: the 1-minute load average after
/// each round (issue 22: a busy machine is measured, and said, not only
/// stored).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MachineLoad {
    pub samples: Vec<f64>,
    /// Logical CPUs.
    pub cpus: usize,
}

impl MachineLoad {
    /// The mean of the samples; `None` without any.
    pub fn mean(&self) -> Option<f64> {
        (!self.samples.is_empty())
            .then(|| self.samples.iter().sum::<f64>() / self.samples.len() as f64)
    }

    /// The largest sample.
    pub fn max(&self) -> Option<f64> {
        self.samples.iter().copied().reduce(f64::max)
    }

    /// Busy: other work averaged more than half the CPUs (the mean load less
    /// the benchmark's own one).
    pub fn busy(&self) -> bool {
        self.mean()
            .is_some_and(|m| m - 1.0 > 0.5 * self.cpus.max(1) as f64)
    }
}

/// Where the time went.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Timing {
    pub build_s: f64,
    pub run_s: f64,
    /// `--explain` (analyses and the callgrind profile); 0 without it.
    pub explain_s: f64,
    pub total_s: f64,
}

/// Something the reader should know about how the result came about, as
/// facts (`render::prose::note` words it, in every format and in the JSON).
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// What the runner saw (matches taken, processes left behind, `--max-time`).
    Run(crate::run::Note),
    /// What `analyze` found about the data it read.
    Imported(crate::compare::imported::Imported),
    /// Builds taken from the cache (identical inputs) instead of built again.
    BuildsReused {
        reused: usize,
        builds: usize,
        cache: String,
    },
    /// Variants whose code came out identical across builds (left out) or
    /// within a build, with the flag that made them so.
    Identical(identical::Identical),
    /// Variants left out for every build because a build failed; the first failure.
    VariantsLeftOut {
        left_out: usize,
        variants: usize,
        build: String,
        seed: u64,
        error: Option<String>,
    },
    /// What `--layouts auto` did.
    Auto(AutoOutcome),
    /// `--layouts auto` spent `looks` looks on `rounds` more rounds on the
    /// layouts it had (run noise within layouts dominated), for `per_cell`
    /// measured runs a cell on average.
    AutoRounds {
        looks: usize,
        rounds: usize,
        per_cell: f64,
    },
    /// Every run had the environment jitter of `run::JITTER_VARIABLE`.
    EnvironmentJitter,
    /// The heap source was on, and `probe`'s 4K-aliasing probe measured
    /// this CPU: a load 4 KiB after a recent store took `ratio` times as
    /// long as one elsewhere; `penalty` when that counts (≥ 1.10×).
    FourKAliasing { ratio: f64, penalty: bool },
    /// `--higher-is-better` was given, and some metrics it did not turn around.
    Unapplied(crate::compare::Unapplied),
    /// `runs` of the `of` measured runs of `metric` (wall, user, sys or rss)
    /// were 0, below its resolution; a layout whose estimate is 0 has no
    /// log ratio and is left out of the across-layouts interval.
    ZeroValues {
        metric: String,
        runs: usize,
        of: usize,
    },
    /// Bonferroni over `comparisons` (metrics × builds): every interval is at
    /// `confidence`; `split_over_looks` when α was split over the looks too.
    Bonferroni {
        comparisons: usize,
        confidence: f64,
        split_over_looks: bool,
    },
    /// `--explain` was skipped: Ctrl-C interrupted the runs.
    ExplainSkipped,
    /// `--max-time` ran out inside a batch: after `rounds_done` of `rounds`
    /// measured rounds of its `layouts` layouts.
    MaxTimeInBatch {
        max_time_s: f64,
        rounds_done: usize,
        rounds: usize,
        layouts: usize,
    },
    /// `--max-time` ran out between looks, after `layouts` layouts with
    /// `undecided` comparisons undecided.
    MaxTimeBetweenLooks {
        max_time_s: f64,
        layouts: usize,
        undecided: usize,
    },
}

/// How `--layouts auto` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoOutcome {
    /// Every comparison was decided with `layouts` layouts in `looks` looks.
    AllDecided { layouts: usize, looks: usize },
    /// `--max-layouts` was reached with `undecided` comparisons undecided.
    MaxLayoutsReached {
        max_layouts: usize,
        undecided: usize,
    },
    /// A failure, Ctrl-C or `--max-time` stopped it after `layouts` layouts.
    Stopped { layouts: usize, looks: usize },
    /// Every look was taken (some added rounds, not layouts) with
    /// `undecided` comparisons undecided, before `--max-layouts`.
    LooksUsed {
        layouts: usize,
        looks: usize,
        undecided: usize,
    },
}

/// The whole result of `layout`: facts only. `render::json` turns it into
/// the `--json` document, the other renderers into text.
#[derive(Debug, Clone)]
pub struct LayoutReport {
    pub schema: &'static str,
    pub schema_version: u32,
    pub builds: Vec<BuildSpec>,
    pub settings: Settings,
    pub sources: Vec<SourceStatus>,
    pub variants: Vec<Variant>,
    /// Seeds that built for every build and entered the analysis.
    pub used_seeds: Vec<u64>,
    pub build_results: Vec<BuildResult>,
    pub status: Status,
    pub environment: Environment,
    pub matrix: Vec<MatrixRow>,
    /// Every look at the data; the matrix is the last one's.
    pub looks: Vec<Look>,
    pub notes: Vec<Note>,
    pub timing: Timing,
    /// The load during the runs (empty for imported runs).
    pub load: MachineLoad,
    pub runs: Vec<LayoutRun>,
    /// With `--explain`: the functions whose placement differs between the
    /// builds' default layouts. Absent without `--explain`.
    pub explain: Option<explanation::Explain>,
    /// Present when `analyze` read the runs from files instead of running them.
    pub analyze: Option<crate::doc::Imported>,
    /// Present when `analyze` merged the shard results of a plan.
    pub shards: Option<merged::Merged>,
}

impl LayoutReport {
    /// Build results that failed.
    pub fn failed_builds(&self) -> impl Iterator<Item = &BuildResult> {
        self.build_results.iter().filter(|b| !b.ok)
    }
}
