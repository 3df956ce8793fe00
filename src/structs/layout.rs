//! Holes, padding and cache-line counts of one struct, computed the way pahole does
//! (its `class__find_holes`), so the two tools agree number for number.

use super::types::{RecordKind, Spelling, StructLayout};

/// Fill `hole_after`/`bit_hole_after` of every member and the summary numbers, and
/// those of the anonymous structs and unions printed inside it.
pub fn summarize(s: &mut StructLayout, line: u64) {
    for m in &mut s.members {
        if let Spelling::Inline { layout, .. } = &mut m.text.spelling {
            summarize(layout, line);
        }
    }
    let size_bits = s.size * 8;
    let mut sum = s.summary.clone();
    sum.members = s.members.len() as u64;
    sum.cachelines = s.size.div_ceil(line);
    sum.last_cacheline = if s.size % line == 0 && s.size > 0 {
        line
    } else {
        s.size % line
    };
    sum.sum_members = s
        .members
        .iter()
        .filter(|m| m.bit_size.is_none())
        .map(|m| m.size)
        .sum();
    sum.sum_bitfield_bits = s.members.iter().filter_map(|m| m.bit_size).sum();
    if s.kind == RecordKind::Union {
        s.summary = sum;
        return;
    }
    let mut cur_bitfield_end = size_bits;
    let mut cur_bitfield_size = 0u64;
    let mut last_seen_bit = 0u64;
    let mut in_bitfield = false;
    let mut last: Option<usize> = None;
    for k in 0..s.members.len() {
        let m = &s.members[k];
        let bit_start = m.offset * 8 + m.bit_offset.unwrap_or(0);
        let bit_end = match m.bit_size {
            Some(b) => bit_start + b,
            None => bit_start + m.size * 8,
        };
        let mut bit_holes: i64 = 0;
        let mut byte_holes: i64 = 0;
        if in_bitfield {
            let bitfield_end = bit_start.min(cur_bitfield_end);
            bit_holes = bitfield_end as i64 - last_seen_bit as i64;
            last_seen_bit = bitfield_end;
        }
        if m.bit_size.is_some() {
            let aligned_start = m.offset * 8;
            if last_seen_bit < aligned_start && aligned_start <= bit_start {
                byte_holes = m.offset as i64 - (last_seen_bit / 8) as i64;
                last_seen_bit = aligned_start;
            }
            bit_holes += bit_start as i64 - last_seen_bit as i64;
        } else {
            byte_holes = (bit_start / 8) as i64 - (last_seen_bit / 8) as i64;
        }
        last_seen_bit = bit_end;
        if m.bit_size.is_some() {
            in_bitfield = true;
            let unit_bits = m.size * 8;
            if bit_end > cur_bitfield_end || unit_bits > cur_bitfield_size {
                cur_bitfield_size = unit_bits;
                cur_bitfield_end = m.offset * 8 + cur_bitfield_size;
                if bit_end > cur_bitfield_end {
                    cur_bitfield_end += cur_bitfield_size;
                }
            }
        } else {
            in_bitfield = false;
            cur_bitfield_size = 0;
            cur_bitfield_end = bit_end;
        }
        let byte_holes = byte_holes.max(0) as u64;
        let bit_holes = bit_holes.max(0) as u64;
        if let Some(l) = last {
            s.members[l].hole_after = byte_holes;
            s.members[l].bit_hole_after = bit_holes;
        }
        if bit_holes > 0 {
            sum.bit_holes += 1;
            sum.sum_bit_holes += bit_holes;
        }
        if byte_holes > 0 {
            sum.holes += 1;
            sum.sum_holes += byte_holes;
        }
        last = Some(k);
    }
    if in_bitfield {
        let bitfield_end = size_bits.min(cur_bitfield_end);
        sum.bit_padding = bitfield_end.saturating_sub(last_seen_bit);
        last_seen_bit = bitfield_end;
    }
    sum.padding = s.size.saturating_sub(last_seen_bit / 8);
    // pahole infers no packing for a struct with holes or padding.
    if sum.holes > 0 || sum.padding > 0 {
        s.text_packed = false;
    }
    s.summary = sum;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structs::types::{Member, Summary};

    fn member(offset: u64, size: u64, bits: Option<(u64, u64)>) -> Member {
        Member {
            name: "m".into(),
            type_name: "int".into(),
            array: vec![],
            offset,
            size,
            alignment: size.max(1),
            bit_offset: bits.map(|b| b.0),
            bit_size: bits.map(|b| b.1),
            base: false,
            sync: None,
            hole_after: 0,
            bit_hole_after: 0,
            text: Default::default(),
        }
    }

    fn layout(size: u64, members: Vec<Member>) -> StructLayout {
        StructLayout {
            name: "s".into(),
            kind: RecordKind::Struct,
            size,
            alignment: 8,
            explicit_alignment: None,
            packed: false,
            text_packed: false,
            decl_file: None,
            decl_line: None,
            members,
            summary: Summary::default(),
            sync_members: vec![],
            writes: vec![],
        }
    }

    #[test]
    fn byte_holes_and_padding() {
        // char a; long b; char c;  → 7-byte hole after a, 7 bytes padding.
        let mut s = layout(
            24,
            vec![member(0, 1, None), member(8, 8, None), member(16, 1, None)],
        );
        summarize(&mut s, 64);
        assert_eq!(s.members[0].hole_after, 7);
        assert_eq!(s.summary.holes, 1);
        assert_eq!(s.summary.sum_holes, 7);
        assert_eq!(s.summary.padding, 7);
        assert_eq!(s.summary.cachelines, 1);
    }

    #[test]
    fn bitfield_bit_hole() {
        // unsigned a:3; int b;  → 29-bit hole after a.
        let mut s = layout(8, vec![member(0, 4, Some((0, 3))), member(4, 4, None)]);
        summarize(&mut s, 64);
        assert_eq!(s.members[0].bit_hole_after, 29);
        assert_eq!(s.members[0].hole_after, 0);
        assert_eq!(s.summary.padding, 0);
    }
}
