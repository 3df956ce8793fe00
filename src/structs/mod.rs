//! Data layout from DWARF (docs/architecture.md §7): `ghostbench structs`'s
//! options and report, and its entry point `run` (in `analysis`), which loads a
//! binary, parses its units in parallel, deduplicates types and runs the hazard
//! and suggestion passes.
//!
//! The files, lowest first: `types` (the layout types everything talks through),
//! `elf` (opening the input), `sync` (which type names are atomics and locks),
//! `chain`, `track`, `cfa` and `locked` (lock sites decoded from the code, where
//! their base registers came from, through loops' induction pointers and the
//! call frame information's CFA), `dwarf/` (DWARF → layouts, and lock
//! sites → members), `by_use` (mapped members become atomics), `layout` (pahole's
//! summary numbers), `suggest` and `hazards` (the passes), `analysis` (the run),
//! `render/` (text, the hazards' words, JSON, SARIF).

mod alias;
pub mod analysis;
pub mod by_use;
pub mod cfa;
mod chain;
pub mod dwarf;
pub mod elf;
pub mod hazards;
pub mod layout;
pub mod locked;
mod reach;
pub mod render;
mod sole;
mod spill;
pub mod suggest;
pub mod sync;
mod track;
pub mod types;
mod write;

/// `bytes` decoded as x86-64 at 0x1000: the unit tests of the lock-site
/// walks (sole, spill, track) read their instructions so.
#[cfg(test)]
fn decode_at_0x1000(bytes: &[u8]) -> Vec<iced_x86::Instruction> {
    iced_x86::Decoder::with_ip(64, bytes, 0x1000, iced_x86::DecoderOptions::NONE)
        .iter()
        .collect()
}

pub use analysis::run;
pub use types::{ArrayUse, Member, RecordKind, StructLayout, Summary, SyncKind, SyncMember};

use serde::Serialize;
use std::path::PathBuf;

/// Version of the JSON document written by `--json` (docs/json-schema.md).
pub const SCHEMA_VERSION: u32 = crate::doc::Schema::Structs.version();

/// Options of one analysis (one-to-one with the CLI's flags that change it).
#[derive(Debug, Clone)]
pub struct StructsOptions {
    pub binary: PathBuf,
    /// Exact name (qualified or not) or an anchored regex.
    pub filter: Option<String>,
    /// Cache-line size in bytes (a power of two, at least 8).
    pub line: u64,
    /// Also compute a cache-aware member order for each selected struct.
    pub suggest: bool,
    /// List only the worst N hazards (`--top N`); every hazard is still counted.
    pub top: Option<usize>,
}

impl Default for StructsOptions {
    /// The CLI's defaults: every struct, 64-byte lines, no suggestions.
    fn default() -> Self {
        StructsOptions {
            binary: PathBuf::new(),
            filter: None,
            line: 64,
            suggest: false,
            top: None,
        }
    }
}

/// What `run` tells the caller as it goes. Units are read on several threads,
/// so the callback is called from them (`Fn + Sync`), in no fixed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub done: usize,
    pub total: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Compilation units read (`done` of `total`).
    Units,
    /// Hazards and suggestions for `total` selected structs.
    Hazards,
}

/// The whole result: layouts, hazards and suggestions.
#[derive(Debug, Clone, Serialize)]
pub struct StructsReport {
    pub schema: &'static str,
    pub schema_version: u32,
    pub binary: String,
    pub line: u64,
    /// Compilation units read (skeletons resolved to their .dwo/.dwp).
    pub units: usize,
    /// Notes about input that was read partially (a missing .dwo, for example).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The `.dwo` files of split units that were found nowhere: their types
    /// are not in this report, so it cannot say there are no hazards (the
    /// CLI exits NO_DEBUG_INFO).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_split_units: Vec<String>,
    /// Lock sites found by decoding the code, and how they mapped to members.
    pub lock_sites: types::LockStats,
    pub structs: Vec<StructLayout>,
    /// Every hazard, worst first (the worst `top` of them with `--top`). Written
    /// with its words by `render::json`, which is why it is not serialized here.
    #[serde(skip)]
    pub hazards: Vec<hazards::Hazard>,
    /// Every hazard found, by kind and severity, whatever `--top` left out.
    pub hazard_counts: hazards::Counts,
    /// How many hazards `--top` left out of `hazards` (0 without it).
    pub hazards_left_out: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<suggest::Suggestion>,
    /// With `suggest`: the selected structs no reorder improves (saves no bytes,
    /// removes no hazard), so none is offered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub no_reorder: Vec<String>,
}
