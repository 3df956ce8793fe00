//! Machine probes (`ghostbench probe`): how much does *this* machine punish
//! misalignment? One module per probe; this file owns the result and report
//! types and the options; the entry point is `run` (in `isolate`).
//!
//! Every claim about layout hazards is hardware-specific (a split lock costs
//! ~1000× on one two-socket machine and ~120× in a KVM guest), so the probes measure
//! the machine in front of the user. Each probe is bounded in time by its
//! [`Settings::budget`] and reports *facts* (which offsets cross a line, how
//! the kernel handles split locks, whether huge pages were obtained) next to
//! its timings, so the facts can be tested exactly while timings are not. The
//! finding and notes under each table are worded by `render::finding`.
//!
//! The files, lowest first: `types` (the shared vocabulary), `timing`,
//! `kernel`, the six probes, `isolate` (each probe in a child process, and
//! the whole run), `render/` (text, Markdown, HTML, JSON).

pub mod alias;
pub mod alloc;
pub mod code_align;
pub mod isolate;
pub mod kernel;
pub mod misaligned;
pub mod render;
pub mod split_lock;
pub mod timing;
pub mod tlb;
pub mod types;

pub use isolate::{run, run_one};
pub use types::{
    Failure, Faults, Note, Outcome, ProbeKind, Settings, Status, DEFAULT_BUDGET, FAULTS_VAR,
    QUICK_BUDGET,
};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// One probe's outcome as facts: status, why it measured nothing (if so),
/// notes, timing and its own rows. Also the answer a child process prints
/// (as JSON) to its parent; the `--json` document is `render::json`'s.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeResult {
    pub status: Status,
    /// Set when nothing was measured.
    pub failure: Option<Failure>,
    pub notes: Vec<Note>,
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
    Alias(alias::Alias),
}

impl Details {
    pub fn kind(&self) -> ProbeKind {
        match self {
            Details::SplitLock(_) => ProbeKind::SplitLock,
            Details::Misaligned(_) => ProbeKind::Misaligned,
            Details::CodeAlign(_) => ProbeKind::CodeAlign,
            Details::Tlb(_) => ProbeKind::Tlb,
            Details::Alloc(_) => ProbeKind::Alloc,
            Details::Alias(_) => ProbeKind::Alias,
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
            ProbeKind::Alias => Details::Alias(Default::default()),
        }
    }
}

impl ProbeResult {
    pub fn kind(&self) -> ProbeKind {
        self.details.kind()
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
    /// The ghostbench executable to run each probe in (as `probe --child`);
    /// `None` runs them in this process, unprotected from SIGBUS or a crash.
    pub exe: Option<PathBuf>,
    pub command_line: Vec<String>,
}

impl Default for ProbeOptions {
    /// The CLI's defaults (every probe, full sweeps, seed 1), in this process.
    fn default() -> Self {
        ProbeOptions {
            only: ProbeKind::ALL.to_vec(),
            quick: false,
            budget: None,
            seed: 1,
            exe: None,
            command_line: Vec::new(),
        }
    }
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

/// What `run` tells the caller: probe `probe` (the `done`-th of `total`) starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub probe: ProbeKind,
    pub done: usize,
    pub total: usize,
}

/// The whole `probe` result, as facts; `render::json` writes it for `--json`
/// (docs/json-schema.md).
#[derive(Debug, Clone)]
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
    pub const SCHEMA: &'static str = crate::doc::Schema::Probe.name();
    pub const SCHEMA_VERSION: u32 = crate::doc::Schema::Probe.version();

    /// True when some probe crashed or overran its bound.
    pub fn any_failed(&self) -> bool {
        self.probes.iter().any(|p| p.status == Status::Failed)
    }
}
