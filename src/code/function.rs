//! One analyzed binary (`Analysis`) and its functions (`Function`): where each
//! sits, its loops and JCC-erratum spots, its hot share and hazard score, and
//! the same facts per microarchitecture model (`UarchFacts`). A leaf below the
//! analysis, the diff and the renderer, which all read these types.

use super::disasm::{JccSpot, Loop};
use super::elf::SymbolSource;
use super::placement::Placement;
use super::uarch::Uarch;
use serde::Serialize;

/// What one model says about one function: the window arithmetic with the
/// model's window, the spots as the model fuses them, and the hazards.
#[derive(Debug, Clone, Serialize)]
pub struct UarchFacts {
    pub uarch: Uarch,
    /// `address % window` with this model's window.
    pub window_offset: u64,
    pub windows: u64,
    pub extra_windows: u64,
    pub entry_near_window_end: bool,
    /// Tight loops touching more of this model's windows than their size needs.
    pub straddling_loops: usize,
    /// Branches (pairs fused by this model's table) crossing or ending on a
    /// 32-byte boundary. Hazards only where the model has the JCC erratum.
    pub jcc_spot_count: usize,
    /// 2 per straddling tight loop, 1 per spot where the erratum applies, 1
    /// for an entry near a window's end.
    pub hazard_score: u64,
}

/// One function: where it sits, its loops and its erratum spots.
#[derive(Debug, Clone, Serialize)]
pub struct Function {
    /// Demangled name.
    pub name: String,
    /// The symbol as written in the binary.
    pub symbol: String,
    pub section: String,
    #[serde(flatten)]
    pub placement: Placement,
    /// Entry in the last 16 bytes of its cache line / DSB window (the first
    /// model's). Never for a size-0 symbol (README, `code`).
    pub entry_near_line_end: bool,
    pub entry_near_window_end: bool,
    pub loops: Vec<Loop>,
    /// Instructions (or fused pairs) at a 32-byte boundary, as the first
    /// model fuses them.
    pub jcc_spot_count: usize,
    /// The spots themselves (the first model's); only with `--verbose`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jcc_spots: Vec<JccSpot>,
    /// Bytes of the symbol's range that did not decode as instructions.
    pub invalid_bytes: u64,
    /// Share of the profile's total cost, with `--hot`.
    pub hot_share: Option<f64>,
    /// The ranking key without a profile: the highest of the models' hazard scores.
    pub hazard_score: u64,
    /// One entry per model, in the report's column order.
    pub uarch: Vec<UarchFacts>,
}

impl Function {
    pub fn straddling_loops(&self) -> usize {
        self.loops.iter().filter(|l| l.straddles()).count()
    }
}

/// One binary, analyzed.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    pub path: String,
    /// "executable", "shared object or PIE", "relocatable object".
    pub kind: String,
    pub symbol_source: SymbolSource,
    /// Functions in address order.
    pub functions: Vec<Function>,
    pub warnings: Vec<String>,
}
