//! Atomics by use: a record type descended to the scalar at a byte offset (through
//! nested records and arrays, an index register standing for every element of the
//! first array met), and the members such a descent makes atomics of: the innermost
//! named record always, enclosing named records when the path to them is exact.

use super::builder::{element_count, expandable, Builder};
use super::table::Node;
use crate::structs::types::{LockUse, Mapping};
use std::ops::Range;

/// Steps of a type descent, for the member path.
pub(super) enum Seg {
    Field(String),
    /// `[i]`, or `[]` for the array an index register runs over.
    Index {
        index: u64,
        unknown: bool,
        count: u64,
        size: u64,
    },
}

/// A named record met on the way down: its key, where its path starts, its offset.
struct Anchor {
    key: String,
    seg: usize,
    at: u64,
}

pub(super) struct Descent {
    anchors: Vec<Anchor>,
    segs: Vec<Seg>,
    leaf_at: u64,
    pub(super) leaf_size: u64,
    /// Bytes into the scalar the offset fell (a byte-wide `lock orb` on bit 27 of a
    /// word: 3).
    pub(super) into: u64,
    /// The type of the scalar reached (a pointer, when a chain loads through it).
    pub(super) leaf_ty: usize,
    /// An unknown index was asked for, but no array was met on the way down: the
    /// scalar reached is where the displacement points, not where the index does.
    pub(super) stray_index: bool,
}

impl Builder<'_, '_> {
    /// The record a pointer type points to (typedefs and qualifiers stripped).
    pub(super) fn pointee(&self, ty: usize) -> Option<usize> {
        let r = self.pointee_any(ty)?;
        matches!(self.t.nodes[r], Node::Record(_)).then_some(r)
    }

    /// The type a pointer type points to, whatever it is (typedefs and qualifiers
    /// stripped); None for `void *` and for what is no pointer.
    pub(super) fn pointee_any(&self, ty: usize) -> Option<usize> {
        let p = self.strip(ty);
        let Node::Pointer { target, .. } = &self.t.nodes[p] else {
            return None;
        };
        Some(self.strip(self.target(*target)?))
    }

    /// Whether a value of type `ty` is passed in one general register (System V
    /// INTEGER class: a pointer, an integer or enum of up to 8 bytes).
    pub(super) fn integer_class(&mut self, ty: usize) -> bool {
        let t = self.strip(ty);
        match &self.t.nodes[t] {
            Node::Pointer { .. } | Node::Enum { .. } => true,
            // DW_ATE_float, complex_float, decimal_float go in vector registers.
            Node::Base { encoding, .. } => {
                !matches!(*encoding, 0x03 | 0x04 | 0x0f) && self.size(t, 0) <= 8
            }
            _ => false,
        }
    }

    /// Whether the descent to byte `offset` of `outer` passes through an `inner`
    /// record that starts at byte `start` of it: then a variable pointing into an
    /// `outer` describes the same word as one pointing into that `inner`, and says
    /// more about it.
    pub(super) fn refines(&mut self, outer: usize, offset: u64, inner: usize, start: u64) -> bool {
        // `descend`'s way down (the first member holding the offset), without its
        // member path: this runs for every variable that may say more.
        let inner = self.strip(inner);
        let Some(inner_size) = self.record_size(inner) else {
            return false;
        };
        let (mut cur, mut at, mut offset) = (outer, 0u64, offset);
        for depth in 0..32 {
            cur = self.strip(cur);
            if depth > 0 && at == start && self.same_record(cur, inner, inner_size) {
                return true;
            }
            if at > start {
                return false;
            }
            let (ty, loc) = match &self.t.nodes[cur] {
                Node::Record(r) => {
                    if offset >= r.size.unwrap_or(0) {
                        return false;
                    }
                    match self.member_holding(r.members.clone(), offset) {
                        Some((_, ty, loc)) => (ty, loc),
                        None => return false,
                    }
                }
                Node::Array { elem, dims } => {
                    let count = element_count(dims);
                    let Some(e) = self.target(*elem) else {
                        return false;
                    };
                    let size = self.size(e, 0);
                    if size == 0 || (count > 0 && offset / size >= count) {
                        return false;
                    }
                    (e, offset / size * size)
                }
                _ => return false,
            };
            at += loc;
            offset -= loc;
            cur = ty;
        }
        false
    }

    /// The first data member (no bitfield) of a record, its members at `members`
    /// of `Table::members`, that holds byte `offset`: its index there, its type
    /// and its place (`descend`'s and `refines`' way down).
    fn member_holding(
        &mut self,
        members: Range<usize>,
        offset: u64,
    ) -> Option<(usize, usize, u64)> {
        for k in members {
            let m = &self.t.members[k];
            let (Some(ty), None) = (self.target(m.ty), m.bit_size) else {
                continue;
            };
            let loc = m.location.unwrap_or(0);
            if loc <= offset && offset < loc.saturating_add(self.size(ty, 0)) {
                return Some((k, ty, loc));
            }
        }
        None
    }

    /// Whether type `i` is no record, union or array (what a pointer to it points
    /// to is a plain word).
    pub(super) fn scalar_pointee(&mut self, i: usize) -> bool {
        let i = self.strip(i);
        matches!(
            self.t.nodes[i],
            Node::Base { .. } | Node::Pointer { .. } | Node::Enum { .. }
        )
    }

    /// A record's byte size (None for what is no record or has none).
    fn record_size(&self, i: usize) -> Option<u64> {
        match &self.t.nodes[i] {
            Node::Record(r) => r.size,
            _ => None,
        }
    }

    /// Whether `a` is record `b` (of `size` bytes): the same DIE, or a record of
    /// the same name and size.
    fn same_record(&self, a: usize, b: usize, size: u64) -> bool {
        if a == b {
            return true;
        }
        match (&self.t.nodes[a], &self.t.nodes[b]) {
            (Node::Record(x), Node::Record(y)) if x.size == Some(size) => self
                .record_name(x)
                .is_some_and(|n| Some(n) == self.record_name(y)),
            _ => false,
        }
    }

    /// Follow type `start` down to the scalar at byte `offset`: through record
    /// members (the one that contains the offset; in a union, one whose size fits
    /// best) and arrays (the element at the offset; with `unknown`, the first array
    /// met stands for all its elements).
    pub(super) fn descend(
        &mut self,
        start: usize,
        mut offset: u64,
        unknown: bool,
    ) -> Option<Descent> {
        let mut d = Descent {
            anchors: Vec::new(),
            segs: Vec::new(),
            leaf_at: 0,
            leaf_size: 0,
            into: 0,
            leaf_ty: start,
            stray_index: false,
        };
        let mut unknown_left = unknown;
        let mut at = 0u64;
        let mut cur = start;
        for _ in 0..32 {
            cur = self.strip(cur);
            match &self.t.nodes[cur] {
                Node::Record(r) => {
                    let size = r.size?;
                    if offset >= size {
                        return None;
                    }
                    if let Some(name) = self.record_name(r) {
                        d.anchors.push(Anchor {
                            key: format!("{name}#{size}"),
                            seg: d.segs.len(),
                            at,
                        });
                    }
                    let (k, ty, loc) = self.member_holding(r.members.clone(), offset)?;
                    let name = self.t.members[k].name.map(|n| self.text(n));
                    d.segs.push(Seg::Field(name.unwrap_or_default()));
                    at += loc;
                    offset -= loc;
                    cur = ty;
                }
                Node::Array { elem, dims } => {
                    let count = element_count(dims);
                    let e = self.target(*elem)?;
                    let size = self.size(e, 0);
                    if size == 0 {
                        return None;
                    }
                    let i = offset / size;
                    if count > 0 && i >= count {
                        return None;
                    }
                    d.segs.push(Seg::Index {
                        index: i,
                        unknown: unknown_left,
                        count,
                        size,
                    });
                    unknown_left = false;
                    at += i * size;
                    offset %= size;
                    cur = e;
                }
                _ => {
                    d.leaf_at = at + offset;
                    d.into = offset;
                    d.leaf_size = self.size(cur, 0);
                    d.leaf_ty = cur;
                    d.stray_index = unknown_left;
                    return Some(d);
                }
            }
        }
        None
    }
}

impl Builder<'_, '_> {
    /// Whether record type `start` holds, at `from` or beyond, an array whose
    /// elements are `stride` bytes and one of which an index scaled by `stride`
    /// from `from` lands on: then an index register over a displacement that met
    /// no array may be walking that array, not an array of `start`s.
    pub(super) fn inner_array_from(&mut self, start: usize, from: u64, stride: u64) -> bool {
        self.inner_array_in(start, 0, from, stride, 0)
    }

    fn inner_array_in(&mut self, ty: usize, at: u64, from: u64, stride: u64, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        let ty = self.strip(ty);
        let members: Vec<(usize, u64)> = match &self.t.nodes[ty] {
            Node::Record(r) => self
                .members_of(r)
                .iter()
                .filter(|m| m.bit_size.is_none())
                .filter_map(|m| Some((self.target(m.ty)?, m.location.unwrap_or(0))))
                .collect(),
            _ => return false,
        };
        for (mty, loc) in members {
            let mat = at + loc;
            let m = self.strip(mty);
            let (array_of, record) = match &self.t.nodes[m] {
                Node::Array { elem, .. } => (Some(*elem), false),
                Node::Record(_) => (None, true),
                _ => (None, false),
            };
            if let Some(e) = array_of.and_then(|elem| self.target(elem)) {
                let end = mat + self.size(m, 0);
                if self.size(e, 0) == stride && end > from && mat.abs_diff(from) % stride == 0 {
                    return true;
                }
            } else if record && self.inner_array_in(m, mat, from, stride, depth + 1) {
                return true;
            }
        }
        false
    }
}

impl Descent {
    /// The array an unknown index stands for, spelled from the named record that
    /// holds it (`table.recs[]`), and its element size.
    pub(super) fn unknown_array(&self) -> Option<(String, u64)> {
        let u = self
            .segs
            .iter()
            .position(|s| matches!(s, Seg::Index { unknown: true, .. }))?;
        let Seg::Index { size, .. } = self.segs[u] else {
            return None;
        };
        // An array that is no record's member (a variable): spelled from itself.
        let Some(a) = self.anchors.iter().rev().find(|a| a.seg <= u) else {
            return Some((path(&self.segs[..=u], None), size));
        };
        let name = a.key.rsplit_once('#').map_or(a.key.as_str(), |k| k.0);
        let p = path(&self.segs[a.seg..=u], None);
        Some((format!("{name}.{p}"), size))
    }

    /// Whether an unknown index runs over an array too long (or of unknown length)
    /// to expand element by element: `registrations` then leaves it out.
    pub(super) fn unexpanded(&self) -> bool {
        self.segs
            .iter()
            .any(|s| matches!(s, Seg::Index { unknown: true, count, .. } if !expandable(*count)))
    }

    /// The bytes an operand of `size` updates, from the offset on, inside the scalar:
    /// the place registered (a split lock is the operand's, not the member's).
    /// Whether the descent met no named record: the scalar reached is the variable
    /// itself, an element of an array of scalars, or a member of an anonymous one.
    pub(super) fn in_no_record(&self) -> bool {
        self.anchors.is_empty()
    }

    /// The path from the type descended to the scalar (`[3]`, `a.b`, `[]` for an
    /// unknown index; empty for the type itself).
    pub(super) fn path(&self) -> String {
        path(&self.segs, None)
    }

    pub(super) fn operand(&mut self, size: u64) {
        let left = self.leaf_size.saturating_sub(self.into);
        if size > 0 {
            self.leaf_size = left.min(size);
        } else {
            self.leaf_size = left;
        }
    }
}

/// The members a descent registers: the innermost named record always (an array of
/// scalars an index register runs over is expanded element by element), and every
/// enclosing named record whose path to the leaf has no unknown index.
pub(super) fn registrations(d: &Descent, mapping: Mapping) -> Vec<LockUse> {
    let mut out = Vec::new();
    let last = d.anchors.len().saturating_sub(1);
    for (k, a) in d.anchors.iter().enumerate() {
        let segs = &d.segs[a.seg..];
        let unknown = segs
            .iter()
            .position(|s| matches!(s, Seg::Index { unknown: true, .. }));
        let offset = d.leaf_at - a.at;
        match unknown {
            None => out.push(LockUse {
                record: a.key.clone(),
                path: path(segs, None),
                offset,
                size: d.leaf_size,
                site: 0,
                mapping,
                via: None,
            }),
            Some(u) if k == last => {
                let Seg::Index {
                    index, count, size, ..
                } = segs[u]
                else {
                    continue;
                };
                if !expandable(count) {
                    continue;
                }
                let first = offset - index * size;
                for i in 0..count {
                    out.push(LockUse {
                        record: a.key.clone(),
                        path: path(segs, Some((u, i))),
                        offset: first + i * size,
                        size: d.leaf_size,
                        site: 0,
                        mapping,
                        via: None,
                    });
                }
            }
            Some(_) => {}
        }
    }
    out
}

/// `a.b[3].c`, with the segment `(k, i)` spelled as index `i`, and an unknown
/// index no `replace` names as `[]`.
fn path(segs: &[Seg], replace: Option<(usize, u64)>) -> String {
    let mut p = String::new();
    for (k, s) in segs.iter().enumerate() {
        match s {
            Seg::Field(name) => {
                if name.is_empty() {
                    continue;
                }
                if !p.is_empty() {
                    p.push('.');
                }
                p.push_str(name);
            }
            Seg::Index { index, unknown, .. } => match replace {
                Some((at, i)) if at == k => p.push_str(&format!("[{i}]")),
                _ if *unknown => p.push_str("[]"),
                _ => p.push_str(&format!("[{index}]")),
            },
        }
    }
    p
}
