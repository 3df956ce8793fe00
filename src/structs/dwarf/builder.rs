//! One unit's `Table` → `StructLayout`s and `ArrayUse`s: the `Builder`, its memoised
//! sizes, alignments and packing, and `build`, which lays out each record not seen in
//! another unit. Naming, identity, member layout and the atomics/locks walk are
//! further `impl Builder` blocks in their own files beside this one.

use super::attrs::Str;
use super::table::{resolve, MemberNode, Node, Qual, Record, Table};
use super::{Dwarf, Seen, Unit, UnitResult};
use crate::structs::types::ArrayUse;
use gimli::constants as dw;
use std::collections::HashMap;

/// How deep type chains (typedef → const → array → …) are followed before giving up.
pub(super) const MAX_DEPTH: u32 = 48;
const UNKNOWN: u64 = u64::MAX;

/// Computes sizes, alignments, names and atomics from a unit's table, with memos.
pub(super) struct Builder<'a, 'd> {
    pub(super) t: Table<'a>,
    pub(super) dwarf: &'d Dwarf<'a>,
    pub(super) unit: &'d Unit<'a>,
    size_memo: Vec<u64>,
    align_memo: Vec<u64>,
    /// 0 = not yet known, 1 = not packed, 2 = packed.
    packed_memo: Vec<u8>,
    /// 0 = not yet known, 1 = neither, 2 = atomic, 3 = lock.
    pub(super) sync_memo: Vec<u8>,
    /// The unit's line-table file names, each read the first time it is asked for.
    pub(super) files: HashMap<u64, Option<String>>,
    /// How many anonymous records deep `layout` is (they are laid out inline).
    pub(super) inline_depth: u32,
    /// pahole's natural alignment of each node, 0 = not yet known.
    pub(super) natural_memo: Vec<u64>,
    /// Where each 64-byte stretch of the unit's nodes starts (`idx`).
    buckets: Buckets,
}

/// log2 of the bytes of the unit one bucket of `Buckets` covers.
const BUCKET: u32 = 6;

/// The nodes by unit offset, bucketed: `starts[b]` is the first node at or after
/// `base + 64·b`, so finding a node scans about one node, where a binary search
/// over all of them took about 17 steps, each a likely cache miss.
struct Buckets {
    base: u64,
    starts: Vec<usize>,
}

impl Buckets {
    /// `offsets` rise strictly (the table is read in one forward pass).
    fn new(offsets: &[u64]) -> Buckets {
        let (Some(&base), Some(&last)) = (offsets.first(), offsets.last()) else {
            return Buckets {
                base: 0,
                starts: Vec::new(),
            };
        };
        let count = usize::try_from((last - base) >> BUCKET).map_or(0, |b| b + 2);
        let mut starts = Vec::with_capacity(count);
        for (k, &o) in offsets.iter().enumerate() {
            let bucket = (o.saturating_sub(base) >> BUCKET) as usize;
            while starts.len() <= bucket {
                starts.push(k);
            }
        }
        starts.push(offsets.len());
        Buckets { base, starts }
    }

    /// The index of `off` in `offsets` (those `new` was given).
    fn find(&self, offsets: &[u64], off: u64) -> Option<usize> {
        let bucket = usize::try_from(off.checked_sub(self.base)? >> BUCKET).ok()?;
        let (&lo, &hi) = (self.starts.get(bucket)?, self.starts.get(bucket + 1)?);
        let k = offsets.get(lo..hi)?.iter().position(|&o| o == off)?;
        Some(lo + k)
    }
}

impl<'a, 'd> Builder<'a, 'd> {
    pub(super) fn new(t: Table<'a>, dwarf: &'d Dwarf<'a>, unit: &'d Unit<'a>) -> Self {
        let n = t.nodes.len();
        let buckets = Buckets::new(&t.offsets);
        let mut b = Builder {
            t,
            dwarf,
            unit,
            size_memo: vec![UNKNOWN; n],
            align_memo: vec![UNKNOWN; n],
            packed_memo: vec![0; n],
            sync_memo: vec![0; n],
            files: HashMap::new(),
            inline_depth: 0,
            natural_memo: vec![0; n],
            buckets,
        };
        b.name_anonymous_records();
        b
    }

    /// Anonymous structs take the name of a typedef that names them.
    fn name_anonymous_records(&mut self) {
        for i in 0..self.t.nodes.len() {
            if let Node::Typedef {
                name,
                target: Some(target),
                ..
            } = self.t.nodes[i]
            {
                if let Some(j) = self.idx(target) {
                    if let Node::Record(r) = &mut self.t.nodes[j] {
                        if r.name.is_none() && r.typedef_name.is_none() {
                            r.typedef_name = Some(name);
                        }
                    }
                }
            }
        }
    }

    /// Lay out every record of the unit that no other unit has laid out, and collect
    /// the arrays of structs its records and variables declare.
    pub(super) fn build(mut self, seen: &Seen, aliases: bool, unit: usize) -> UnitResult {
        let mut out = UnitResult::default();
        if aliases {
            self.typedef_aliases(&mut out.aliases);
        }
        for i in 0..self.t.nodes.len() {
            let Node::Record(r) = &self.t.nodes[i] else {
                continue;
            };
            if r.declaration || r.size.is_none() || (r.name.is_none() && r.typedef_name.is_none()) {
                continue;
            }
            let id = self.identity(i);
            if !seen.claim(id, unit) {
                continue;
            }
            let layout = self.layout(i);
            self.array_uses(i, &layout, &mut out.uses);
            out.structs.push((id, layout));
        }
        self.variable_uses(&mut out.uses);
        out
    }

    /// `typedef union LZ4_stream_u LZ4_stream_t;`: (typedef name, record key), so
    /// `--struct` finds a record by a typedef of it.
    fn typedef_aliases(&mut self, out: &mut Vec<(String, String)>) {
        for i in 0..self.t.nodes.len() {
            let Node::Typedef { name, .. } = self.t.nodes[i] else {
                continue;
            };
            let r = self.strip(i);
            let Node::Record(rec) = &self.t.nodes[r] else {
                continue;
            };
            let (Some(size), false) = (rec.size, rec.declaration) else {
                continue;
            };
            let Some(record) = self.record_name(rec) else {
                continue;
            };
            let alias = self.text(name);
            if alias != record {
                out.push((alias, format!("{record}#{size}")));
            }
        }
    }

    /// Arrays of structs declared as variables.
    fn variable_uses(&mut self, uses: &mut Vec<ArrayUse>) {
        let variables = std::mem::take(&mut self.t.variables);
        for (name, ty, alignment) in variables {
            let Some(j) = self.idx(ty) else { continue };
            if let Some((element, count, elem_align)) = self.struct_array(j) {
                uses.push(ArrayUse {
                    element,
                    parent: None,
                    parent_alignment: elem_align.max(alignment.unwrap_or(1)),
                    name: self.text(name),
                    offset: 0,
                    count,
                });
            }
        }
    }

    /// The node of the DIE at unit offset `off`: a scan of its 64-byte bucket.
    pub(super) fn idx(&self, off: u64) -> Option<usize> {
        self.buckets.find(&self.t.offsets, off)
    }

    pub(super) fn target(&self, off: Option<u64>) -> Option<usize> {
        off.and_then(|o| self.idx(o))
    }

    pub(super) fn text(&self, s: Str<'a>) -> String {
        resolve(self.dwarf, self.unit, s)
    }

    pub(super) fn size(&mut self, i: usize, depth: u32) -> u64 {
        if self.size_memo[i] != UNKNOWN {
            return self.size_memo[i];
        }
        if depth > MAX_DEPTH {
            return 0;
        }
        let s = match &self.t.nodes[i] {
            Node::Base { size, .. } | Node::Pointer { size, .. } | Node::Other { size, .. } => {
                *size
            }
            Node::Enum { size, .. } => *size,
            Node::Qual { target, .. } | Node::Typedef { target, .. } => {
                match self.target(*target) {
                    Some(j) => self.size(j, depth + 1),
                    None => 0,
                }
            }
            Node::Array { elem, dims } => {
                let count = element_count(dims);
                match self.target(*elem) {
                    Some(j) => self.size(j, depth + 1).saturating_mul(count),
                    None => 0,
                }
            }
            Node::Record(r) => r.size.unwrap_or(0),
            Node::Function { .. } => 0,
        };
        self.size_memo[i] = s;
        s
    }

    pub(super) fn align(&mut self, i: usize, depth: u32) -> u64 {
        if self.align_memo[i] != UNKNOWN {
            return self.align_memo[i];
        }
        if depth > MAX_DEPTH {
            return 1;
        }
        let a = match &self.t.nodes[i] {
            Node::Base { size, encoding, .. } => {
                // Complex numbers align like one of their two parts.
                let s = if *encoding == dw::DW_ATE_complex_float.0 {
                    size / 2
                } else {
                    *size
                };
                natural(s)
            }
            Node::Pointer { size, .. } | Node::Other { size, .. } | Node::Enum { size, .. } => {
                natural(*size)
            }
            Node::Qual { kind, target } => {
                let (kind, target) = (*kind, *target);
                self.qualified_align(i, kind, target, depth)
            }
            Node::Typedef {
                target, alignment, ..
            } => {
                let (target, alignment) = (*target, *alignment);
                match (alignment, self.target(target)) {
                    (Some(a), _) => a.max(1),
                    (None, Some(j)) => self.align(j, depth + 1),
                    (None, None) => 1,
                }
            }
            Node::Array { elem, .. } => match self.target(*elem) {
                Some(j) => self.align(j, depth + 1),
                None => 1,
            },
            Node::Record(r) => {
                let explicit = r.alignment;
                let (natural, packed) = self.record_natural(i, depth);
                match explicit {
                    Some(a) => a.max(1),
                    None if packed => 1,
                    None => natural,
                }
            }
            Node::Function { .. } => 1,
        };
        self.align_memo[i] = a;
        a
    }

    /// A qualified type aligns like its target; `_Atomic` of a power-of-two size up to
    /// 16 bytes aligns to its size (as GCC and Clang lay it out).
    fn qualified_align(&mut self, i: usize, kind: Qual, target: Option<u64>, depth: u32) -> u64 {
        let inner = match self.target(target) {
            Some(j) => self.align(j, depth + 1),
            None => 1,
        };
        if kind != Qual::Atomic {
            return inner;
        }
        let size = self.size(i, depth + 1);
        if size.is_power_of_two() && size <= 16 {
            inner.max(size)
        } else {
            inner
        }
    }

    /// Largest member alignment, and whether the layout can only come from packing.
    fn record_natural(&mut self, i: usize, depth: u32) -> (u64, bool) {
        let (count, size) = match &self.t.nodes[i] {
            Node::Record(r) => (r.members.len(), r.size.unwrap_or(0)),
            _ => return (1, false),
        };
        let mut natural = 1;
        let mut packed = false;
        for k in 0..count {
            let m = self.member_node(i, k);
            let (ty, location, bitfield, member_align) =
                (m.ty, m.location, m.bit_size.is_some(), m.alignment);
            let a = match self.target(ty) {
                Some(j) => self.align(j, depth + 1),
                None => 1,
            }
            .max(member_align.unwrap_or(1));
            natural = natural.max(a);
            if !bitfield && location.unwrap_or(0) % a != 0 {
                packed = true;
            }
        }
        if size > 0 && size % natural != 0 {
            packed = true;
        }
        self.packed_memo[i] = if packed { 2 } else { 1 };
        (natural, packed)
    }

    pub(super) fn is_packed(&mut self, i: usize) -> bool {
        if self.packed_memo[i] == 0 {
            self.record_natural(i, 0);
        }
        self.packed_memo[i] == 2
    }

    /// Member `k` of record `i`.
    pub(super) fn member_node(&self, i: usize, k: usize) -> &MemberNode<'a> {
        &self.t.members[self.record(i).members.start + k]
    }

    /// The members of record `r`.
    pub(super) fn members_of(&self, r: &Record<'a>) -> &[MemberNode<'a>] {
        &self.t.members[r.members.clone()]
    }

    /// The record at `i`, which the caller has just matched as one.
    pub(super) fn record(&self, i: usize) -> &Record<'a> {
        match &self.t.nodes[i] {
            Node::Record(r) => r,
            // Only called with indices that were just matched as records.
            _ => unreachable!("index does not name a record"),
        }
    }

    /// Strip typedefs and non-atomic qualifiers.
    pub(super) fn strip(&self, mut i: usize) -> usize {
        for _ in 0..MAX_DEPTH {
            match &self.t.nodes[i] {
                Node::Typedef { target, .. } => match self.target(*target) {
                    Some(j) => i = j,
                    None => return i,
                },
                Node::Qual { kind, target } if *kind != Qual::Atomic => {
                    match self.target(*target) {
                        Some(j) => i = j,
                        None => return i,
                    }
                }
                _ => return i,
            }
        }
        i
    }

    /// If `i` is an array of a named struct: its key, element count and alignment.
    fn struct_array(&mut self, i: usize) -> Option<(String, u64, u64)> {
        let s = self.strip(i);
        let Node::Array { elem, dims } = &self.t.nodes[s] else {
            return None;
        };
        let count = element_count(dims);
        let e = self.strip(self.target(*elem)?);
        let Node::Record(r) = &self.t.nodes[e] else {
            return None;
        };
        let name = self.record_name(r)?;
        let size = r.size?;
        if count < 2 || size == 0 {
            return None;
        }
        let align = self.align(e, 0);
        Some((format!("{name}#{size}"), count, align))
    }

    /// Arrays of structs among the members of record `i` (laid out as `layout`).
    fn array_uses(
        &mut self,
        i: usize,
        layout: &crate::structs::types::StructLayout,
        uses: &mut Vec<ArrayUse>,
    ) {
        let tys: Vec<(Option<u64>, bool)> = self
            .members_of(self.record(i))
            .iter()
            .map(|m| (m.ty, m.bit_size.is_some()))
            .collect();
        for (k, (ty, bitfield)) in tys.into_iter().enumerate() {
            if bitfield {
                continue;
            }
            let Some(j) = self.target(ty) else { continue };
            if let Some((element, count, _)) = self.struct_array(j) {
                let m = &layout.members[k];
                uses.push(ArrayUse {
                    element,
                    parent: Some(layout.name.clone()),
                    parent_alignment: layout.alignment,
                    name: m.name.clone(),
                    offset: m.offset,
                    count,
                });
            }
        }
    }
}

/// All dimensions multiplied; an unknown dimension (a flexible array) counts as 0.
pub(super) fn element_count(dims: &[Option<u64>]) -> u64 {
    dims.iter().map(|d| d.unwrap_or(0)).product()
}

/// Arrays longer than this are not expanded element by element (typed atomics and
/// atomics by use alike).
const MAX_EXPANDED: u64 = 64;

/// Whether an array of `count` elements (0: unknown length) is expanded element by
/// element.
pub(super) fn expandable(count: u64) -> bool {
    count > 0 && count <= MAX_EXPANDED
}

/// The natural alignment of a scalar of `size` bytes on the usual ABIs.
fn natural(size: u64) -> u64 {
    if size == 0 {
        return 1;
    }
    let pow2 = 1u64 << size.trailing_zeros();
    pow2.min(16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_find_what_a_binary_search_finds() {
        // Dense runs, a bucket with none, one DIE per bucket boundary, a long gap.
        let offsets: Vec<u64> = vec![11, 12, 13, 40, 63, 64, 65, 127, 128, 300, 301, 5000];
        let buckets = Buckets::new(&offsets);
        for off in 0..5100 {
            let want = offsets.binary_search(&off).ok();
            assert_eq!(buckets.find(&offsets, off), want, "offset {off}");
        }
        assert_eq!(buckets.find(&offsets, u64::MAX), None);
        let none = Buckets::new(&[]);
        assert_eq!(none.find(&[], 11), None);
    }

    #[test]
    fn natural_alignment() {
        assert_eq!(natural(8), 8);
        assert_eq!(natural(12), 4);
        assert_eq!(natural(32), 16);
        assert_eq!(natural(0), 1);
    }

    #[test]
    fn element_count_multiplies_dimensions() {
        assert_eq!(element_count(&[Some(2), Some(3)]), 6);
        assert_eq!(element_count(&[Some(4), None]), 0);
        assert_eq!(element_count(&[]), 1);
    }

    #[test]
    fn arrays_up_to_64_known_elements_are_expanded() {
        assert!(expandable(1) && expandable(64));
        assert!(!expandable(0) && !expandable(65));
    }
}
