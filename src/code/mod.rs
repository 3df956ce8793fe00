//! Code placement (`ghostbench code`, docs/architecture.md §6): where every function and loop
//! of an x86-64 ELF binary lands relative to cache lines and DSB windows, which
//! branches hit the JCC erratum, which functions a profile says are hot, and
//! what moved between two builds, judged by one or more microarchitecture
//! models (`uarch`). This file holds the options, the progress and the report;
//! the entry point is `run` (in `analysis`).
//!
//! The modules, lowest first: `placement` (the arithmetic), `uarch` (the
//! models and CPU detection), `demangle`, `elf`
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
pub mod uarch;

pub use analysis::{analyze, apply_profile, first_loop, rank, run};
pub use function::{Analysis, Function, UarchFacts};

use elf::SymbolSource;
use placement::Geometry;
use profile::Profile;
use regex::Regex;
use serde::Serialize;
use std::path::PathBuf;
use uarch::{Choice, Model, Uarch};

/// Version of the JSON document written by `--json` (docs/json-schema.md).
/// 2: the `uarch` models (and per-function `uarch` facts).
pub const SCHEMA_VERSION: u32 = crate::doc::Schema::Code.version();

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
    /// Cache-line size in bytes.
    pub line: u64,
    /// A window size that overrides every model's (`--window`).
    pub window: Option<u64>,
    /// The models to judge by (one column each; the first one drives the
    /// table's placement columns and the diff), and why.
    pub uarch: Choice,
    /// List erratum spots and loops, with their disassembly.
    pub verbose: bool,
    /// Rows in the terminal tables (0 = all). The JSON always has everything.
    pub limit: usize,
    /// The command line recorded in the report.
    pub command_line: Vec<String>,
}

impl Default for CodeOptions {
    /// Every function, 64-byte lines, the `generic` model (32-byte windows),
    /// 40 rows. The CLI detects the model instead.
    fn default() -> Self {
        CodeOptions {
            binary: PathBuf::new(),
            functions: None,
            hot: None,
            diff: None,
            line: 64,
            window: None,
            uarch: Choice::default(),
            verbose: false,
            limit: 40,
            command_line: Vec::new(),
        }
    }
}

impl CodeOptions {
    /// Each model with the geometry it is judged by, in column order.
    pub fn models(&self) -> Vec<(&'static Model, Geometry)> {
        judged(&self.uarch.models, self.line, self.window)
    }
}

/// Each model with its geometry: `line`, and `window` if given, else the model's.
pub fn judged(models: &[Uarch], line: u64, window: Option<u64>) -> Vec<(&'static Model, Geometry)> {
    models
        .iter()
        .map(|u| {
            let m = u.model();
            (
                m,
                Geometry {
                    line,
                    window: window.unwrap_or(m.window),
                },
            )
        })
        .collect()
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

/// Totals over the analyzed functions, by one model.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub functions: usize,
    pub loops: usize,
    /// Tight loops (body <= 128 B) touching more DSB windows than their size needs.
    pub straddling_loops: usize,
    /// Branches (fused pairs by the model's table) crossing or ending on a
    /// 32-byte boundary: JCC-erratum spots on Skylake-family cores.
    pub jcc_spots: usize,
    pub functions_with_jcc_spots: usize,
    /// The spots that are hazards on this model: all of them where the JCC
    /// erratum applies, none elsewhere.
    pub jcc_hazards: usize,
    pub entries_near_window_end: usize,
}

impl Summary {
    /// The totals by the `index`-th model of the functions' `uarch` facts.
    pub fn of(functions: &[Function], index: usize, model: &Model) -> Summary {
        let mut s = Summary {
            functions: functions.len(),
            ..Summary::default()
        };
        for f in functions {
            s.loops += f.loops.len();
            let Some(u) = f.uarch.get(index) else {
                continue;
            };
            s.straddling_loops += u.straddling_loops;
            s.jcc_spots += u.jcc_spot_count;
            s.functions_with_jcc_spots += usize::from(u.jcc_spot_count > 0);
            s.entries_near_window_end += usize::from(u.entry_near_window_end);
        }
        if model.jcc_erratum {
            s.jcc_hazards = s.jcc_spots;
        }
        s
    }
}

/// One model of a report: its table's facts, the geometry used, its totals.
#[derive(Debug, Clone, Serialize)]
pub struct UarchReport {
    #[serde(flatten)]
    pub model: &'static Model,
    /// Line and window used (the window is the model's unless `--window` set it).
    pub geometry: Geometry,
    pub summary: Summary,
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
    /// The models and why they were chosen (the report's first line).
    pub uarch: Choice,
    /// One entry per model, in column order.
    pub models: Vec<UarchReport>,
    pub binary: String,
    pub kind: String,
    pub symbol_source: SymbolSource,
    /// The first model's geometry.
    pub geometry: Geometry,
    pub function_filter: Option<String>,
    pub warnings: Vec<String>,
    /// The first model's totals.
    pub summary: Summary,
    pub profile: Option<ProfileInfo>,
    /// Ranked: hottest first with a profile, else worst hazards first.
    pub functions: Vec<Function>,
    pub diff: Option<diff::Diff>,
    pub command_line: Vec<String>,
}
