//! Atomics by use, step 1d: the canonical frame address (CFA) where a lock site's
//! chain reaches the stack pointer or the frame pointer, read from the call frame
//! information (`.debug_frame`, then `.eh_frame`; gimli reads both). GCC describes
//! a function's locals as `DW_OP_fbreg k` with the frame base `DW_OP_call_frame_cfa`,
//! so a stack operand (`lock addq $1,-0x125(%rbp)`) names a local only once the CFA
//! at that address is known as a register plus a constant (`%rbp+16`). Only the
//! addresses asked for are unwound, in one pass over the frame descriptions; a
//! relocatable object (whose frame information needs relocations) gives none.

use gimli::{
    BaseAddresses, CfaRule, CieOrFde, DebugFrame, EhFrame, EndianSlice, RunTimeEndian,
    UnwindContext, UnwindSection,
};
use object::{Object, ObjectSection};

/// The CFA at an address: DWARF register `register` plus `offset`, and the section
/// that said so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cfa {
    pub address: u64,
    pub register: u16,
    pub offset: i64,
    pub from_eh_frame: bool,
}

/// The CFA at each of `addresses` (sorted, deduplicated) that the call frame
/// information of `file` describes as a register plus a constant; sorted.
pub fn at(file: &object::File<'_>, addresses: &[u64]) -> Vec<Cfa> {
    let mut out: Vec<Cfa> = Vec::new();
    if addresses.is_empty() || file.kind() == object::ObjectKind::Relocatable {
        return out;
    }
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let text = file.section_by_name(".text").map_or(0, |s| s.address());
    if let Some(data) = file
        .section_by_name(".debug_frame")
        .and_then(|s| s.uncompressed_data().ok())
    {
        let section = DebugFrame::new(&data, endian);
        let bases = BaseAddresses::default().set_text(text);
        unwind(&section, &bases, addresses, false, &mut out);
    }
    if let Some(s) = file.section_by_name(".eh_frame") {
        if let Ok(data) = s.uncompressed_data() {
            let section = EhFrame::new(&data, endian);
            let bases = BaseAddresses::default()
                .set_eh_frame(s.address())
                .set_text(text);
            unwind(&section, &bases, addresses, true, &mut out);
        }
    }
    out.sort_by_key(|c| (c.address, c.from_eh_frame));
    out.dedup_by_key(|c| c.address);
    out
}

/// One section's frame descriptions: the rows at the addresses they cover.
fn unwind<'d, S: UnwindSection<EndianSlice<'d, RunTimeEndian>>>(
    section: &S,
    bases: &BaseAddresses,
    addresses: &[u64],
    from_eh_frame: bool,
    out: &mut Vec<Cfa>,
) {
    let mut ctx = UnwindContext::new();
    let mut entries = section.entries(bases);
    // A malformed entry ends the section's walk: what was read stays.
    while let Ok(Some(entry)) = entries.next() {
        let CieOrFde::Fde(partial) = entry else {
            continue;
        };
        let Ok(fde) = partial.parse(S::cie_from_offset) else {
            continue;
        };
        let start = fde.initial_address();
        let end = start.wrapping_add(fde.len());
        let lo = addresses.partition_point(|&a| a < start);
        let hi = addresses.partition_point(|&a| a < end);
        for &address in &addresses[lo..hi.max(lo)] {
            let Ok(row) = fde.unwind_info_for_address(section, bases, &mut ctx, address) else {
                continue;
            };
            if let CfaRule::RegisterAndOffset { register, offset } = *row.cfa() {
                out.push(Cfa {
                    address,
                    register: register.0,
                    offset,
                    from_eh_frame,
                });
            }
        }
    }
}
