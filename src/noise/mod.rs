//! `ghostbench noise`: where one command's run-to-run noise comes from. The
//! options, the factors and why one could not be tested, and the report (facts
//! only: numbers, shares, causes; `render/` words them); the entry point is
//! `run` (in `experiment`).
//!
//! The design (docs/methodology.md §14): a replicated two-level factorial
//! over the factors that apply (ASLR, CPU pinning, environment-size jitter,
//! heap huge pages, a fresh copy of the binary per run), every cell once per
//! round in a fresh random order; the within-cell variance of the log metric
//! is taken apart into the factors' shares (`stats::factorial`). Files, lowest
//! first: `plan` (which factors apply, the settings of a cell), `experiment`
//! (the rounds), `analysis` (per metric: shares, mean shifts, the quietest
//! setting and the runs a `compare` would need), `render/`.

pub mod analysis;
pub mod experiment;
pub mod plan;
pub mod render;

pub use experiment::run;

use crate::run::command::CommandSpec;
use crate::run::environment::Environment;
use crate::run::metric::{MetricSpec, Unit};
use crate::run::RunRecord;
use crate::stats::factorial::{Decomposition, Estimate};
use serde::Serialize;
use std::time::Duration;

/// The default time bound of the measured rounds: with the warm-up and the
/// copies, a 150 ms benchmark ends in under a minute.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(45);
/// Rounds (one run of every cell each) below which nothing is decomposed:
/// a cell's variance needs two runs.
pub const MIN_ROUNDS: usize = 2;
/// The default most rounds.
pub const DEFAULT_MAX_ROUNDS: usize = 40;
/// A factor whose share is at least this (and whose interval excludes 0) is
/// a source of the noise, and the quietest setting holds it.
pub const SOURCE_SHARE: f64 = 0.10;
/// The precision the runs estimate is for: ±1%.
pub const PRECISION: f64 = 0.01;

/// What `noise` is asked to do.
#[derive(Debug, Clone)]
pub struct NoiseOptions {
    pub command: CommandSpec,
    pub metrics: Vec<MetricSpec>,
    /// Also analyse user + sys as one metric (`--metric user+sys`).
    pub user_plus_sys: bool,
    /// Time bound of the measured rounds (at least [`MIN_ROUNDS`] run).
    pub budget: Duration,
    pub max_rounds: usize,
    /// The CPU the pinned level uses (`--pin`); None: the last CPU allowed.
    pub pin: Option<usize>,
    pub timeout: Option<Duration>,
    /// Bootstrap resamples of the shares' intervals.
    pub resamples: usize,
    pub confidence: f64,
    pub seed: u64,
    /// Factors left out on request (`--skip`).
    pub skip: Vec<Factor>,
    pub command_line: Vec<String>,
}

impl Default for NoiseOptions {
    fn default() -> Self {
        NoiseOptions {
            command: CommandSpec {
                name: "command".into(),
                text: "true".into(),
                argv: vec!["true".into()],
                shell: false,
            },
            metrics: vec![MetricSpec::Wall],
            user_plus_sys: false,
            budget: DEFAULT_BUDGET,
            max_rounds: DEFAULT_MAX_ROUNDS,
            pin: None,
            timeout: None,
            resamples: 2000,
            confidence: 0.95,
            seed: 1,
            skip: Vec::new(),
            command_line: Vec::new(),
        }
    }
}

/// A factor of the design: each has a level at which it *varies* from run
/// to run (bit set in a cell's mask) and one at which it is *held*.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Factor {
    /// Varies: ASLR on. Held: `ADDR_NO_RANDOMIZE` (one fixed layout).
    Aslr,
    /// Varies: the scheduler places each run. Held: pinned to one CPU.
    Pin,
    /// Varies: a variable of random length (0–4095 bytes) moves the stack.
    /// Held: no such variable.
    Env,
    /// Varies: the heap on small pages (`glibc.malloc.hugetlb=0`). Held:
    /// transparent huge pages for the heap (`glibc.malloc.hugetlb=1`).
    Heap,
    /// Varies: a fresh copy of the binary every run (new page-cache pages
    /// for its code). Held: one copy for every run.
    Fresh,
}

impl Factor {
    pub const ALL: [Factor; 5] = [
        Factor::Aslr,
        Factor::Pin,
        Factor::Env,
        Factor::Heap,
        Factor::Fresh,
    ];

    /// The name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Factor::Aslr => "aslr",
            Factor::Pin => "pin",
            Factor::Env => "env",
            Factor::Heap => "heap",
            Factor::Fresh => "fresh",
        }
    }

    /// Whether a plain repeated run (what `compare` does by default) has
    /// this factor varying: ASLR on, unpinned, small heap pages; the
    /// environment and the binary's copy are the same in every run.
    pub fn varies_by_default(self) -> bool {
        matches!(self, Factor::Aslr | Factor::Pin | Factor::Heap)
    }
}

/// Why a factor was not part of the design, as a fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", content = "detail", rename_all = "kebab-case")]
pub enum NotTested {
    /// `--skip` named it.
    Skipped,
    /// kernel.randomize_va_space is 0: every run already has one layout.
    AslrOffMachineWide,
    /// personality(2) cannot set ADDR_NO_RANDOMIZE here (the cause).
    NoPersonality(String),
    /// Only one CPU is available: every run already runs on it.
    OneCpu,
    /// The command runs through `sh -c`: its program cannot be inspected or copied.
    Shell,
    /// The program is a script (`#!`): a copy would not copy its interpreter.
    Script,
    /// The program is not an ELF file ghostbench can read (the cause).
    NotElf(String),
    /// Statically linked: glibc's tunables are not read from a shared libc.
    Static,
    /// Not linked against glibc (`libc.so.6`).
    NotGlibc,
    /// The program brings its own allocator (which one).
    OwnAllocator(String),
    /// glibc older than 2.35 has no `glibc.malloc.hugetlb` tunable (its version).
    GlibcTooOld(String),
    /// Transparent huge pages are `always`: the kernel already backs the
    /// heap with huge pages, the tunable changes nothing.
    ThpAlways,
    /// Transparent huge pages are off (`never`) or not offered by the kernel.
    ThpOff,
    /// The program is larger than a copy per run should be (its size in bytes).
    TooLarge(u64),
}

/// One factor's place in the design.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FactorPlan {
    pub factor: Factor,
    /// None: tested (its bit is its index among the tested factors).
    pub not_tested: Option<NotTested>,
}

/// How the experiment ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Every round the budget allowed ran.
    Finished,
    /// A run failed; the rounds before it are analysed.
    Failed,
    /// Ctrl-C (or SIGTERM/SIGHUP); the rounds before it are analysed.
    Interrupted,
}

/// One measured run and the cell it ran in.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseRun {
    /// The cell's mask over the tested factors (bit set: that factor varied).
    pub cell: u32,
    #[serde(flatten)]
    pub record: RunRecord,
}

/// One factor's result on one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorResult {
    pub factor: Factor,
    /// Its share of the variance with every factor varying.
    pub share: Estimate,
    /// The mean of the metric with the factor held over the mean with it
    /// varying, minus 1 (geometric means over the other factors' cells).
    pub held_shift: f64,
    /// The ANOVA's p-value of that shift.
    pub held_shift_p: f64,
    /// A source: share ≥ [`SOURCE_SHARE`] with an interval above 0, in an
    /// attribution that is [`Attribution::explained`].
    pub source: bool,
}

/// A metric's noise taken apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribution {
    /// One per tested factor, in design order.
    pub factors: Vec<FactorResult>,
    pub decomposition: Decomposition,
    /// Whether holding every factor clearly removes noise: the interval of
    /// the unexplained share lies below 1. Without it no factor is a source
    /// (the shares are then ratios of noisy variances, however large).
    pub explained: bool,
    /// The cell a plain repeated run is in, its standard deviation of the
    /// log metric (≈ the coefficient of variation), and the runs per command
    /// a `compare` would need for ±[`PRECISION`] there.
    pub default_cell: u32,
    pub default_sd: f64,
    pub default_runs: Option<u64>,
    /// The default cell with every source held: the quietest setting.
    pub quiet_cell: u32,
    pub quiet_held: Vec<Factor>,
    pub quiet_sd: f64,
    pub quiet_runs: Option<u64>,
}

/// Why a metric's noise was not taken apart.
#[derive(Debug, Clone, PartialEq)]
pub enum Undecomposed {
    /// Fewer than [`MIN_ROUNDS`] complete rounds.
    TooFewRounds { complete: usize },
    /// A value ≤ 0 (or not finite) has no logarithm.
    NotPositive { value: f64 },
    /// Every run of every cell gave the same value: there is no noise.
    NoNoise { value: f64 },
    /// A run did not report this metric.
    Missing,
}

/// One metric's result.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricNoise {
    pub name: String,
    pub unit: Unit,
    pub result: Result<Attribution, Undecomposed>,
}

/// Everything `noise` found, as facts.
#[derive(Debug, Clone)]
pub struct NoiseReport {
    pub command: CommandSpec,
    pub factors: Vec<FactorPlan>,
    /// The CPU of the pinned level, when pinning is tested.
    pub pin_cpu: Option<usize>,
    /// The transparent-huge-page mode the kernel reported (`madvise`, …).
    pub thp_mode: Option<String>,
    pub budget_s: f64,
    pub elapsed_s: f64,
    /// Complete rounds (every cell once); only these are analysed.
    pub complete_rounds: usize,
    pub runs: Vec<NoiseRun>,
    pub metrics: Vec<MetricNoise>,
    pub status: crate::run::Status<State>,
    /// The runner's notes (processes left behind, several regex matches).
    pub notes: Vec<crate::run::Note>,
    pub seed: u64,
    pub environment: Environment,
}

impl NoiseReport {
    /// The tested factors, in design order (bit i of a cell = factor i).
    pub fn tested(&self) -> Vec<Factor> {
        self.factors
            .iter()
            .filter(|f| f.not_tested.is_none())
            .map(|f| f.factor)
            .collect()
    }
}

/// Progress of the rounds, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub round: usize,
    pub runs_done: usize,
    pub cells: usize,
}
