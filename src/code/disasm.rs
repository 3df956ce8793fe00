//! Disassembly of one function with iced-x86: its loops (backward-branch
//! targets) and its JCC-erratum spots (near branches that cross or end on a
//! 32-byte boundary), one list per microarchitecture model since the models
//! fuse different pairs. Decoding only, once for all models; text is
//! formatted for the few spots that are listed.

use super::placement::{alignment, spans, Geometry};
use super::uarch::Model;
use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Formatter, GasFormatter, Instruction, Mnemonic,
};
use serde::Serialize;

/// The Skylake-family JCC erratum is about 32-byte boundaries, whatever
/// `--window` says: it is a property of the hardware, not a report setting.
pub const JCC_BOUNDARY: u64 = 32;

/// A loop: a header that at least one backward branch of the function jumps to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loop {
    /// Address of the header (the backward branches' target).
    pub header: u64,
    pub line_offset: u64,
    pub window_offset: u64,
    /// Largest power of two dividing the header address, capped at the line size.
    pub alignment: u64,
    /// Bytes from the header to the end of the last backward branch to it.
    pub body_bytes: u64,
    /// Cache lines and DSB windows the body touches.
    pub lines: u64,
    pub windows: u64,
    /// Windows touched beyond the minimum the body's size needs.
    pub extra_windows: u64,
    /// Backward branches to this header.
    pub back_edges: u32,
}

/// Loops up to this size are "tight": they run from the DSB or the loop
/// stream detector, so a needless extra window costs on every iteration.
/// Bigger loops straddle anyway and are not flagged.
pub const TIGHT_LOOP_BYTES: u64 = 128;

impl Loop {
    /// A tight loop that touches more windows than its size needs.
    pub fn straddles(&self) -> bool {
        self.extra_windows > 0 && self.body_bytes <= TIGHT_LOOP_BYTES
    }
}

/// Which kind of instruction an erratum spot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpotKind {
    Jcc,
    /// An instruction macro-fused with the jcc right after it (as the model's
    /// fusion table says); the pair counts.
    FusedJcc,
    Jmp,
    Call,
    Ret,
}

impl SpotKind {
    pub fn label(self) -> &'static str {
        match self {
            SpotKind::Jcc => "jcc",
            SpotKind::FusedJcc => "fused-jcc",
            SpotKind::Jmp => "jmp",
            SpotKind::Call => "call",
            SpotKind::Ret => "ret",
        }
    }
}

/// How an erratum spot meets the 32-byte boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Boundary {
    /// The instruction (or fused pair) has bytes on both sides of the boundary.
    Crosses,
    /// Its last byte is the last byte of a 32-byte block.
    Ends,
}

/// One instruction hit by the JCC erratum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JccSpot {
    /// Start of the instruction, or of the cmp/test for a fused pair.
    pub address: u64,
    /// Bytes, both instructions for a fused pair.
    pub length: u64,
    pub kind: SpotKind,
    pub boundary: Boundary,
    /// The instruction(s) in AT&T syntax; only filled in when listed (`--verbose`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// What disassembling one function found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub loops: Vec<Loop>,
    /// The erratum spots as each model (in the order given to [`scan`]) sees them.
    pub spots: Vec<Vec<JccSpot>>,
    /// Bytes that did not decode (data in the text section, or a wrong size).
    pub invalid_bytes: u64,
}

/// The near branches the erratum concerns. Far transfers (`ljmp`, `lcall`,
/// `lret`, `iret`) are never spots: they are microcoded, delivered from the
/// microcode sequencer rather than the uop cache, so the erratum's fix (not
/// caching the line) changes nothing for them (README, `code`: "Microarchitecture models").
fn spot_kind(instruction: &Instruction) -> Option<SpotKind> {
    if instruction.is_jcc_short_or_near() {
        return Some(SpotKind::Jcc);
    }
    if instruction.is_jmp_far()
        || instruction.is_jmp_far_indirect()
        || instruction.is_call_far()
        || instruction.is_call_far_indirect()
    {
        return None;
    }
    match instruction.flow_control() {
        FlowControl::UnconditionalBranch | FlowControl::IndirectBranch
            if instruction.mnemonic() == Mnemonic::Jmp =>
        {
            Some(SpotKind::Jmp)
        }
        FlowControl::Call | FlowControl::IndirectCall
            if instruction.mnemonic() == Mnemonic::Call =>
        {
            Some(SpotKind::Call)
        }
        FlowControl::Return if instruction.mnemonic() == Mnemonic::Ret => Some(SpotKind::Ret),
        _ => None,
    }
}

/// Classify [start, end) against the erratum's 32-byte boundaries.
pub fn boundary(start: u64, end: u64) -> Option<Boundary> {
    if end <= start || start / JCC_BOUNDARY == end / JCC_BOUNDARY {
        return None;
    }
    if start / JCC_BOUNDARY != (end - 1) / JCC_BOUNDARY {
        Some(Boundary::Crosses)
    } else {
        Some(Boundary::Ends)
    }
}

/// Disassemble `bytes`, which start at `address`, and find loops (measured
/// with `g`) and erratum spots (one list per model, fused by its table). With
/// `with_text`, spots carry their disassembly.
pub fn scan(bytes: &[u8], address: u64, g: Geometry, models: &[&Model], with_text: bool) -> Scan {
    let mut decoder = Decoder::with_ip(64, bytes, address, DecoderOptions::NONE);
    let end = address + bytes.len() as u64;
    let mut instruction = Instruction::default();
    let mut previous = Instruction::default();
    let mut has_previous = false;
    let mut back_edges: Vec<(u64, u64)> = Vec::new();
    let mut out = Scan {
        spots: vec![Vec::new(); models.len()],
        ..Scan::default()
    };
    let mut formatter = with_text.then(GasFormatter::new);
    while decoder.can_decode() {
        decoder.decode_out(&mut instruction);
        if instruction.is_invalid() {
            out.invalid_bytes += instruction.len() as u64;
            has_previous = false;
            continue;
        }
        let ip = instruction.ip();
        let next = instruction.next_ip();
        let is_branch = instruction.is_jcc_short_or_near()
            || instruction.is_jmp_short_or_near()
            || instruction.is_loop()
            || instruction.is_loopcc()
            || matches!(instruction.mnemonic(), Mnemonic::Jrcxz | Mnemonic::Jecxz);
        if is_branch {
            let target = instruction.near_branch_target();
            if target <= ip && target >= address && target < end {
                back_edges.push((target, next));
            }
        }
        if let Some(kind) = spot_kind(&instruction) {
            let adjacent = kind == SpotKind::Jcc && has_previous && previous.next_ip() == ip;
            for (model, spots) in models.iter().zip(&mut out.spots) {
                let fused = adjacent && model.fuses(&previous, &instruction);
                let (start, kind) = if fused {
                    (previous.ip(), SpotKind::FusedJcc)
                } else {
                    (ip, kind)
                };
                if let Some(boundary) = boundary(start, next) {
                    let text = formatter.as_mut().map(|f| {
                        let mut text = String::new();
                        if fused {
                            f.format(&previous, &mut text);
                            text.push_str("; ");
                        }
                        f.format(&instruction, &mut text);
                        text
                    });
                    spots.push(JccSpot {
                        address: start,
                        length: next - start,
                        kind,
                        boundary,
                        text,
                    });
                }
            }
        }
        previous = instruction;
        has_previous = true;
    }
    back_edges.sort_unstable();
    for (header, latch_end) in back_edges {
        match out.loops.last_mut() {
            Some(last) if last.header == header => {
                last.body_bytes = last.body_bytes.max(latch_end - header);
                last.back_edges += 1;
            }
            _ => out.loops.push(Loop {
                header,
                line_offset: header % g.line,
                window_offset: header % g.window,
                alignment: alignment(header, g.line),
                body_bytes: latch_end - header,
                lines: 0,
                windows: 0,
                extra_windows: 0,
                back_edges: 1,
            }),
        }
    }
    for l in &mut out.loops {
        l.lines = spans(l.header, l.body_bytes, g.line);
        l.windows = spans(l.header, l.body_bytes, g.window);
        l.extra_windows = l.windows - l.body_bytes.div_ceil(g.window);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries() {
        assert_eq!(boundary(28, 30), None);
        assert_eq!(boundary(30, 32), Some(Boundary::Ends));
        assert_eq!(boundary(31, 33), Some(Boundary::Crosses));
        assert_eq!(boundary(32, 34), None);
    }

    #[test]
    fn finds_a_loop_and_a_fused_spot() {
        // 0x1c: mov ecx,100 (5) ; 0x21: dec ecx (2) ; 0x23: cmp ecx,eax (2) ; 0x25: jne 0x21 (2) ; 0x27: ret
        // Shifted so that the cmp+jne pair (0x3d..0x41) crosses 0x40.
        let code = [
            0xb9, 0x64, 0, 0, 0, 0xff, 0xc9, 0x39, 0xc1, 0x75, 0xfa, 0xc3,
        ];
        let base = 0x1000 + 0x38;
        let models = [&crate::code::uarch::GENERIC, &crate::code::uarch::ZEN];
        let scan = scan(&code, base, Geometry::default(), &models, true);
        assert_eq!(scan.loops.len(), 1);
        let l = &scan.loops[0];
        assert_eq!(l.header, base + 5);
        assert_eq!(l.body_bytes, 6);
        assert_eq!((l.line_offset, l.window_offset, l.windows), (0x3d, 0x1d, 2));
        assert_eq!(scan.spots.len(), 2);
        assert_eq!(scan.spots[0], scan.spots[1]);
        assert_eq!(scan.spots[0].len(), 1);
        let s = &scan.spots[0][0];
        assert_eq!(
            (s.address, s.length, s.kind),
            (base + 7, 4, SpotKind::FusedJcc)
        );
        assert_eq!(s.boundary, Boundary::Crosses);
        assert!(s.text.as_deref().unwrap().contains("cmp"), "{:?}", s.text);
    }
}
