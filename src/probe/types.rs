//! The vocabulary every probe and the driver share, as facts: the probe names
//! (`ProbeKind`), how one probe runs (`Settings`, `Faults`), and what it gives
//! back (`Outcome`: a `Status`, the `Failure` that stopped it if one did, its
//! `Note`s and its own details). A leaf: the six probes, the driver in
//! `isolate` and `render/` depend on it; it depends on nothing in the crate.
//! The sentences for failures and notes are written by `render::finding`.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The probes, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeKind {
    SplitLock,
    Misaligned,
    CodeAlign,
    Tlb,
    Alloc,
    Alias,
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 6] = [
        ProbeKind::SplitLock,
        ProbeKind::Misaligned,
        ProbeKind::CodeAlign,
        ProbeKind::Tlb,
        ProbeKind::Alloc,
        ProbeKind::Alias,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::SplitLock => "split-lock",
            ProbeKind::Misaligned => "misaligned",
            ProbeKind::CodeAlign => "code-align",
            ProbeKind::Tlb => "tlb",
            ProbeKind::Alloc => "alloc",
            ProbeKind::Alias => "alias",
        }
    }

    pub fn parse(name: &str) -> Option<ProbeKind> {
        ProbeKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for ProbeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Simulated missing features, for tests of the degraded paths on machines
/// that have every feature. Read from `GHOSTBENCH_PROBE_FAULTS`, a
/// comma-separated list of `sigbus` (the first split lock raises SIGBUS, as
/// under `split_lock_detect=fatal`), `stall` (the first split lock stalls
/// for 60 s, as one did for 20 s under a busy host here), `noexec` (mapping
/// memory executable fails with EACCES) and `nothp` (transparent huge pages
/// are off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    pub sigbus: bool,
    pub stall: bool,
    pub noexec: bool,
    pub nothp: bool,
}

/// The environment variable [`Faults`] is read from.
pub const FAULTS_VAR: &str = "GHOSTBENCH_PROBE_FAULTS";

impl Faults {
    pub fn from_env() -> Faults {
        Faults::parse(&std::env::var(FAULTS_VAR).unwrap_or_default())
    }

    pub fn parse(text: &str) -> Faults {
        let mut faults = Faults::default();
        for word in text.split(',').map(str::trim) {
            match word {
                "sigbus" => faults.sigbus = true,
                "stall" => faults.stall = true,
                "noexec" => faults.noexec = true,
                "nothp" => faults.nothp = true,
                _ => {}
            }
        }
        faults
    }
}

/// How one probe runs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Smaller sweeps and fewer repetitions (`--quick`).
    pub quick: bool,
    /// Wall-time bound for this probe; it stops measuring before this.
    pub budget: Duration,
    /// Whether the split-lock probe may execute split locks at all. Off
    /// after a SIGBUS, so the rerun still reports the aligned costs.
    pub split_locks: bool,
    /// Seed for shuffles and random pointer chains.
    pub seed: u64,
    pub faults: Faults,
}

/// Default per-probe bound.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(15);
/// Per-probe bound under `--quick`: five probes plus process starts stay under 3 s.
pub const QUICK_BUDGET: Duration = Duration::from_millis(500);

/// Whether a probe measured what it set out to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Every row was measured.
    Ok,
    /// Some rows could not be measured (a missing feature, the time bound);
    /// the notes say which and why.
    Partial,
    /// The feature the probe needs is missing here (e.g. no executable memory).
    Unavailable,
    /// The probe process crashed or overran its bound.
    Failed,
}

/// Why a probe measured nothing. Texts the operating system gave (`error`)
/// are carried as they came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "kebab-case")]
pub enum Failure {
    /// The probe process could not be started.
    CannotStart { exe: String, error: String },
    /// The probe process was killed after overrunning its bound by half.
    Overran { elapsed_s: f64, budget_s: f64 },
    /// Waiting for the probe process failed.
    CannotWait { error: String },
    /// Ctrl-C ended the probe process.
    Interrupted,
    /// The probe process died of a signal.
    Signal { signal: i32 },
    /// The probe process exited unsuccessfully; the last line of its stderr.
    Exited {
        code: Option<i32>,
        last_line: String,
    },
    /// The probe process answered for another probe.
    WrongProbe { answered: ProbeKind },
    /// The probe process's answer was not a probe result.
    Unreadable { error: String },
    /// code-align: mapping memory failed.
    MapFailed { error: String },
    /// code-align: the memory could not be made executable.
    NoExecutableMemory { error: String },
    /// misaligned: the two pages could not be allocated.
    NoPages,
    /// alloc: the node arenas could not be allocated.
    NoArenas,
    /// code-align: a copy of the function computed a wrong result.
    WrongCopy {
        offset: usize,
        got: u32,
        expected: u32,
    },
    /// alloc: walking a list summed to a wrong total.
    WrongSum { sum: u64, expected: u64 },
}

/// Something the reader of a probe's table must know: a missing feature, a
/// skipped row, an early stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "note", rename_all = "kebab-case")]
pub enum Note {
    /// The sweep stopped after `rounds` rounds at its time bound.
    StoppedAfterRounds { rounds: u32 },
    /// split-lock: the in-line sweep stopped when half the bound was spent.
    InLineSweepStopped,
    /// split-lock: `split_lock_detect=fatal`, so no split lock was executed.
    SplitLocksFatal,
    /// split-lock: the first split lock killed the probe (SIGBUS), so the
    /// rerun executed none.
    SplitLocksKilled,
    /// split-lock: the split locks had not finished `after_s` seconds after
    /// the first began, when the probe was killed at its bound; the in-line
    /// cells measured before are kept.
    SplitLockStalled { after_s: f64 },
    /// tlb: no transparent huge pages; `enabled` is the sysfs setting.
    NoTransparentHugePages { enabled: Option<String> },
    /// tlb: the sweep stopped before `bytes`, which would exceed the bound.
    StoppedBeforeSize { bytes: u64, budget_s: f64 },
    /// tlb: mapping a working set of `bytes` failed.
    MapFailed { bytes: u64, error: String },
    /// tlb: huge pages were asked for and accepted, but none were obtained.
    NoHugePagesObtained,
}

/// What one probe returns; the driver adds the timing fields.
#[derive(Debug, Clone)]
pub struct Outcome<D> {
    pub status: Status,
    /// Set when nothing was measured.
    pub failure: Option<Failure>,
    pub notes: Vec<Note>,
    pub details: D,
}

impl<D: Default> Outcome<D> {
    /// Nothing measured: `failure` says why.
    pub fn failed(status: Status, failure: Failure, notes: Vec<Note>) -> Outcome<D> {
        Outcome {
            status,
            failure: Some(failure),
            notes,
            details: D::default(),
        }
    }
}
