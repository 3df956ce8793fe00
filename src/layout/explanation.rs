//! What `layout --explain` found, as facts: per build, the functions whose
//! placement differs from the baseline's default layout, the functions only one
//! side has, the profiles that ranked them and how much of the time the table
//! covers. `explain` fills these; the layout report carries them and
//! `render::explain` words them.

use crate::code::diff::ChangeReason;
use serde::Serialize;

/// How the moved functions are ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ranking {
    /// By the baseline's callgrind profile (share of its cost), then by `moved_bytes`.
    Profile,
    /// By `moved_bytes`, then by the number of reasons and by size.
    Placement,
}

/// The profile used to rank, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainProfile {
    pub path: String,
    /// The event ranked on (callgrind's Ir: instructions executed).
    pub event: String,
    pub total: f64,
    /// Share of the profile that landed in the baseline binary's functions.
    pub matched_share: f64,
}

/// One function whose placement differs from the baseline's.
#[derive(Debug, Clone, Serialize)]
pub struct MovedFunction {
    /// Demangled name (the match key).
    pub name: String,
    pub old_address: u64,
    pub new_address: u64,
    pub old_size: u64,
    pub new_size: u64,
    /// Entry offsets in the 64-byte line and 32-byte window, baseline → build.
    pub old_line_offset: u64,
    pub new_line_offset: u64,
    pub old_window_offset: u64,
    pub new_window_offset: u64,
    pub reasons: Vec<ChangeReason>,
    /// Loops matched by identity (`code::diff`: same offset from the entry, body
    /// size and back edges) whose header's offset in its line changed.
    pub loops_moved: usize,
    /// How far the code moved inside its cache lines: the circular distance
    /// (0–32 bytes) between old and new line offsets of the entry, plus that
    /// of every loop header. The ranking key without a profile.
    pub moved_bytes: u64,
    /// Share of the baseline profile's cost, when there is one.
    pub hot_share: Option<f64>,
}

/// Which default layout has a function the other lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Baseline,
    Build,
}

/// A function (by demangled name) that only one of the two default layouts
/// has: inlined away or outlined, renamed, new.
#[derive(Debug, Clone, Serialize)]
pub struct OneSided {
    pub name: String,
    pub side: Side,
    /// Bytes (the largest, if the name occurs more than once).
    pub size: u64,
    /// Share of that side's profile: the baseline's for `baseline`, the
    /// build's own for `build`. None when that side has no profile.
    pub share: Option<f64>,
}

/// How much of the profiles the comparison sees (facts behind "the table
/// covers 31% of the profile").
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    /// Share of the baseline's profile in the rows of `functions`.
    pub table_share: f64,
    /// Share of the baseline's profile in the functions both layouts have.
    pub matched_share: f64,
    /// Share of the baseline's profile in the functions only it has.
    pub only_in_baseline_share: f64,
    /// Share of the build's own profile in the functions only it has; None
    /// when that profile was not taken (no such function) or failed.
    pub only_in_build_share: Option<f64>,
}

/// One build's default layout against the baseline's.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainBuild {
    pub build: String,
    pub binary: String,
    /// Why this build could not be compared; the counts are then 0.
    pub error: Option<String>,
    /// Functions matched by demangled name.
    pub matched: usize,
    pub only_in_baseline: usize,
    pub only_in_build: usize,
    /// Matched functions whose placement differs.
    pub changed: usize,
    /// With a profile: changed functions it never saw run, left out of `functions`.
    pub changed_not_run: usize,
    /// The top `--explain-top` changes, ranked.
    pub functions: Vec<MovedFunction>,
    /// With the baseline's profile: how much of it (and of the build's) is where.
    pub coverage: Option<Coverage>,
    /// This build's own profile, taken when it has functions the baseline lacks.
    pub profile: Option<ExplainProfile>,
    /// Functions only one layout has, hottest first (of those that ran, when
    /// that side was profiled; else the largest first), at most `--explain-top`.
    pub one_sided: Vec<OneSided>,
}

/// The `explain` section of the layout report.
#[derive(Debug, Clone, Serialize)]
pub struct Explain {
    /// The model placement is judged by, and why (`--uarch`, or detected).
    pub uarch: crate::code::uarch::Choice,
    /// That model's window size in bytes.
    pub window: u64,
    pub baseline_binary: String,
    pub ranking: Ranking,
    pub profile: Option<ExplainProfile>,
    pub top: usize,
    /// One line each: why there is no profile, a binary that failed, etc.
    pub notes: Vec<String>,
    /// One per non-baseline build.
    pub builds: Vec<ExplainBuild>,
}
