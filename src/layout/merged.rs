//! The facts of a scale-out run that the layout report carries: the
//! machine a shard ran on, how it ended, and the merged report's `shards`
//! section (the shards, their problems, the per-CPU-model estimates and the
//! next wave). A leaf: `shard` reads and writes the files, `analyze` fills
//! the section, `render` words it.

use serde::{Deserialize, Serialize};

/// How a shard ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShardStatus {
    Ok,
    Failed,
}

/// The machine a shard ran on (from `run::environment::capture`, and the host name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub host: Option<String>,
    pub cpu_model: Option<String>,
    pub kernel: Option<String>,
    pub governor: Option<String>,
    pub load_average: Option<[f64; 3]>,
    pub logical_cpus: usize,
}

impl Machine {
    /// The facts of `environment` and this machine's host name.
    pub fn of(environment: &crate::run::environment::Environment) -> Machine {
        Machine {
            host: host_name(),
            cpu_model: environment.cpu_model.clone(),
            kernel: environment.kernel.clone(),
            governor: environment.governor.clone(),
            load_average: environment.load_average,
            logical_cpus: environment.logical_cpus,
        }
    }
}

/// The kernel's host name, `None` when unreadable.
fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

/// The merged report's `shards` section (`analyze DIR/results/`): facts;
/// `render::prose` words the problems and the per-model lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Merged {
    pub plan: String,
    pub plan_hash: String,
    /// The last wave that has results.
    pub wave: usize,
    /// Every shard result read and not foreign, the ones left out included.
    pub shards: Vec<MergedShard>,
    pub problems: Vec<ShardProblem>,
    /// With 2 or more CPU models: per comparison, the per-model estimates
    /// and the interaction test. Empty with one model.
    pub models: Vec<ModelComparison>,
    /// `--layouts auto` plans: the wave to run next, when one is needed.
    pub next_wave: Option<NextWave>,
}

/// One shard in the merged report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergedShard {
    pub shard: usize,
    pub file: String,
    pub machine: Machine,
    pub status: ShardStatus,
    /// Whether its runs entered the analysis.
    pub used: bool,
    pub variants: Vec<u64>,
}

/// Something wrong with the shard results (one line each in the report).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum ShardProblem {
    /// Shards of a wave that has results, without a result file.
    Missing { wave: usize, shards: Vec<usize> },
    /// A shard that wrote a failed result: its variants are left out.
    Failed {
        shard: usize,
        host: Option<String>,
        cause: String,
    },
    /// Two results claim the same shard: the later one (by start) is used.
    Duplicate {
        shard: usize,
        ignored: String,
        used: String,
    },
    /// A result of another plan, or that does not fit this one.
    Foreign { file: String, why: String },
    /// A file that is not a readable shard result.
    Unreadable { file: String, error: String },
    /// Shard 1 (seed 0, the default layout) did not enter: the default-layout
    /// column is the first remaining variant's.
    NoDefaultLayout { first_seed: u64 },
}

/// One comparison's estimates per CPU model, and whether they differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelComparison {
    pub build: String,
    pub metric: String,
    pub models: Vec<ModelEstimate>,
    /// The test of equal trimmed means of the per-variant log ratios across models.
    pub interaction: Option<crate::stats::interaction::Interaction>,
    /// p < 1 − confidence: the effect differs between the models.
    pub flagged: bool,
}

/// One CPU model's across-layouts estimate of one comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelEstimate {
    pub cpu_model: String,
    pub variants: usize,
    /// Ratio B/A (exp of the trimmed mean of the log ratios), with its interval.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub verdict: crate::stats::verdict::Verdict,
}

/// The wave of a `--layouts auto` plan to run next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NextWave {
    pub wave: usize,
    pub shards: [usize; 2],
    /// Comparisons still UNKNOWN.
    pub undecided: usize,
}
