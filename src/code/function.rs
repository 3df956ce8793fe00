//! One analyzed binary (`Analysis`) and its functions (`Function`): where each
//! sits, its loops and JCC-erratum spots, its hot share and hazard score. A leaf
//! below the analysis, the diff and the renderer, which all read these types.

use super::disasm::{JccSpot, Loop};
use super::elf::SymbolSource;
use super::placement::Placement;
use serde::Serialize;

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
    /// Entry in the last 16 bytes of its cache line / DSB window.
    pub entry_near_line_end: bool,
    pub entry_near_window_end: bool,
    pub loops: Vec<Loop>,
    /// Instructions (or fused pairs) hit by the JCC erratum.
    pub jcc_spot_count: usize,
    /// The spots themselves; only with `--verbose`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jcc_spots: Vec<JccSpot>,
    /// Bytes of the symbol's range that did not decode as instructions.
    pub invalid_bytes: u64,
    /// Share of the profile's total cost, with `--hot`.
    pub hot_share: Option<f64>,
    /// The ranking key without a profile: 2 per tight loop that straddles a
    /// window needlessly, 1 per erratum spot, 1 for an entry near a window's end.
    pub hazard_score: u64,
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
