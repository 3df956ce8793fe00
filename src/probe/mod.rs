//! Machine probes (`ghostbench probe`): how much does *this* machine punish
//! misalignment? One module per probe; this file owns the shared result
//! types, the probe names, the per-probe settings and the in-process driver.
//!
//! Every claim about layout hazards is hardware-specific (a split lock costs
//! ~1000× on one two-socket machine and ~120× in a KVM guest), so the probes measure
//! the machine in front of the user. Each probe is bounded in time by its
//! [`Settings::budget`] and reports *facts* (which offsets cross a line, how
//! the kernel handles split locks, whether huge pages were obtained) next to
//! its timings, so the facts can be tested exactly while timings are not.
//!
//! [`isolate`] runs each probe in a child process so that a kernel that kills
//! split lockers (SIGBUS), a crash, or an overrun affects only that probe.

pub mod alloc;
pub mod code_align;
pub mod isolate;
pub mod kernel;
pub mod misaligned;
pub mod render;
pub mod split_lock;
pub mod timing;
pub mod tlb;

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
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 5] = [
        ProbeKind::SplitLock,
        ProbeKind::Misaligned,
        ProbeKind::CodeAlign,
        ProbeKind::Tlb,
        ProbeKind::Alloc,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::SplitLock => "split-lock",
            ProbeKind::Misaligned => "misaligned",
            ProbeKind::CodeAlign => "code-align",
            ProbeKind::Tlb => "tlb",
            ProbeKind::Alloc => "alloc",
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
/// under `split_lock_detect=fatal`), `noexec` (mapping memory executable
/// fails with EACCES) and `nothp` (transparent huge pages are off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    pub sigbus: bool,
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

/// One probe's outcome: status, finding, notes, and its own rows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeResult {
    pub status: Status,
    /// The one-line finding printed under the table.
    pub finding: String,
    /// Clear lines about missing features, skipped rows and early stops.
    pub notes: Vec<String>,
    pub elapsed_s: f64,
    pub budget_s: f64,
    #[serde(flatten)]
    pub details: Details,
}

/// The probe-specific part; `probe` in JSON names the variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "probe", rename_all = "kebab-case")]
pub enum Details {
    SplitLock(split_lock::SplitLock),
    Misaligned(misaligned::Misaligned),
    CodeAlign(code_align::CodeAlign),
    Tlb(tlb::Tlb),
    Alloc(alloc::Alloc),
}

impl Details {
    pub fn kind(&self) -> ProbeKind {
        match self {
            Details::SplitLock(_) => ProbeKind::SplitLock,
            Details::Misaligned(_) => ProbeKind::Misaligned,
            Details::CodeAlign(_) => ProbeKind::CodeAlign,
            Details::Tlb(_) => ProbeKind::Tlb,
            Details::Alloc(_) => ProbeKind::Alloc,
        }
    }

    /// Empty details for a probe that produced nothing (it crashed).
    pub fn empty(kind: ProbeKind) -> Details {
        match kind {
            ProbeKind::SplitLock => Details::SplitLock(Default::default()),
            ProbeKind::Misaligned => Details::Misaligned(Default::default()),
            ProbeKind::CodeAlign => Details::CodeAlign(Default::default()),
            ProbeKind::Tlb => Details::Tlb(Default::default()),
            ProbeKind::Alloc => Details::Alloc(Default::default()),
        }
    }
}

impl ProbeResult {
    pub fn kind(&self) -> ProbeKind {
        self.details.kind()
    }
}

/// What a probe module returns; the driver adds the timing fields.
pub struct Outcome {
    pub status: Status,
    pub finding: String,
    pub notes: Vec<String>,
    pub details: Details,
}

/// Run one probe in this process.
pub fn run_one(kind: ProbeKind, settings: &Settings) -> ProbeResult {
    let clock = timing::Budget::new(settings.budget);
    let outcome = match kind {
        ProbeKind::SplitLock => split_lock::run(settings, &clock),
        ProbeKind::Misaligned => misaligned::run(settings, &clock),
        ProbeKind::CodeAlign => code_align::run(settings, &clock),
        ProbeKind::Tlb => tlb::run(settings, &clock),
        ProbeKind::Alloc => alloc::run(settings, &clock),
    };
    ProbeResult {
        status: outcome.status,
        finding: outcome.finding,
        notes: outcome.notes,
        elapsed_s: clock.elapsed().as_secs_f64(),
        budget_s: settings.budget.as_secs_f64(),
        details: outcome.details,
    }
}

/// Options of a whole `probe` run.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The probes to run, in [`ProbeKind::ALL`] order.
    pub only: Vec<ProbeKind>,
    pub quick: bool,
    /// Per-probe bound; `None` takes the default for the mode.
    pub budget: Option<Duration>,
    pub seed: u64,
    pub command_line: Vec<String>,
}

impl ProbeOptions {
    pub fn budget(&self) -> Duration {
        self.budget.unwrap_or(if self.quick {
            QUICK_BUDGET
        } else {
            DEFAULT_BUDGET
        })
    }

    pub fn settings(&self) -> Settings {
        Settings {
            quick: self.quick,
            budget: self.budget(),
            split_locks: true,
            seed: self.seed,
            faults: Faults::from_env(),
        }
    }
}

/// The whole `probe` result: what `--json` writes (docs/json-schema.md).
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    pub schema: &'static str,
    pub schema_version: u32,
    pub quick: bool,
    pub budget_per_probe_s: f64,
    pub elapsed_s: f64,
    pub environment: crate::run::environment::Environment,
    pub probes: Vec<ProbeResult>,
}

impl ProbeReport {
    pub const SCHEMA: &'static str = "ghostbench.probe";
    pub const SCHEMA_VERSION: u32 = 1;

    /// True when some probe crashed or overran its bound.
    pub fn any_failed(&self) -> bool {
        self.probes.iter().any(|p| p.status == Status::Failed)
    }
}
