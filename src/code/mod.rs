//! Code placement (`ghostbench code`, docs/architecture.md §6): where every function and loop
//! of an x86-64 ELF binary lands relative to cache lines and DSB windows, which
//! branches hit the JCC erratum, which functions a profile says are hot, and
//! what moved between two builds. This file holds the options, the progress
//! and the report; the entry point is `run` (in `analysis`).
//!
//! The modules, lowest first: `placement` (the arithmetic), `demangle`, `elf`
//! (reading and checking the file, symbols), `disasm` (loops and erratum spots),
//! `profile` (callgrind, cachegrind, perf script), `function` (an analyzed
//! binary and its functions), `diff` (placement changes, also used by
//! `layout --explain`), `analysis` (the run) and `render` (the terminal text).

pub mod analysis;
pub mod demangle;
pub mod diff;
pub mod disasm;
pub mod elf;
pub mod function;
pub mod placement;
pub mod profile;
pub mod render;

pub use analysis::{analyze, apply_profile, rank, run};
pub use function::{Analysis, Function};

use elf::SymbolSource;
use placement::Geometry;
use profile::Profile;
use regex::Regex;
use serde::Serialize;
use std::path::PathBuf;

/// Version of the JSON document written by `--json` (docs/json-schema.md).
pub const SCHEMA_VERSION: u32 = 1;

/// Everything `ghostbench code` needs to know, one field per CLI option.
#[derive(Debug, Clone)]
pub struct CodeOptions {
    pub binary: PathBuf,
    /// Only functions whose demangled name matches.
    pub functions: Option<Regex>,
    /// A profile to rank functions by.
    pub hot: Option<PathBuf>,
    /// A second build to compare placements with.
    pub diff: Option<PathBuf>,
    pub geometry: Geometry,
    /// List erratum spots and loops, with their disassembly.
    pub verbose: bool,
    /// Rows in the terminal tables (0 = all). The JSON always has everything.
    pub limit: usize,
    /// The command line recorded in the report.
    pub command_line: Vec<String>,
}

impl Default for CodeOptions {
    /// The CLI's defaults: every function, 64-byte lines, 32-byte windows, 40 rows.
    fn default() -> Self {
        CodeOptions {
            binary: PathBuf::new(),
            functions: None,
            hot: None,
            diff: None,
            geometry: Geometry::default(),
            verbose: false,
            limit: 40,
            command_line: Vec::new(),
        }
    }
}

/// What `run` tells the caller as it goes. Functions are disassembled on
/// several threads (and with `--diff` two binaries at once), so the callback
/// is called from them (`Fn + Sync`); `total` grows when the second binary's
/// symbols have been read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub done: usize,
    pub total: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Function ranges disassembled (`done` of `total`).
    Disassemble,
    /// Reading the `--hot` profile.
    Profile,
}

/// Totals over the analyzed functions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub functions: usize,
    pub loops: usize,
    /// Tight loops (body <= 128 B) touching more DSB windows than their size needs.
    pub straddling_loops: usize,
    pub jcc_spots: usize,
    pub functions_with_jcc_spots: usize,
    pub entries_near_window_end: usize,
}

impl Summary {
    pub fn of(functions: &[Function]) -> Summary {
        let mut s = Summary {
            functions: functions.len(),
            ..Summary::default()
        };
        for f in functions {
            s.loops += f.loops.len();
            s.straddling_loops += f.straddling_loops();
            s.jcc_spots += f.jcc_spot_count;
            s.functions_with_jcc_spots += usize::from(f.jcc_spot_count > 0);
            s.entries_near_window_end += usize::from(f.entry_near_window_end);
        }
        s
    }
}

/// The profile as reported: where it came from and how much of it matched.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileInfo {
    #[serde(flatten)]
    pub profile: Profile,
    /// Share of the profile's total that landed in this binary's functions.
    pub matched_share: f64,
}

/// The result of `ghostbench code`, as printed and as written by `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct CodeReport {
    pub schema: &'static str,
    pub schema_version: u32,
    pub binary: String,
    pub kind: String,
    pub symbol_source: SymbolSource,
    pub geometry: Geometry,
    pub function_filter: Option<String>,
    pub warnings: Vec<String>,
    pub summary: Summary,
    pub profile: Option<ProfileInfo>,
    /// Ranked: hottest first with a profile, else worst hazards first.
    pub functions: Vec<Function>,
    pub diff: Option<diff::Diff>,
    pub command_line: Vec<String>,
}
