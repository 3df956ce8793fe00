//! Atomics by use, step 2c: `container_of`. A chain traced to a record whose
//! operand falls outside it (before it, or past its end) points into a bigger
//! record that holds one: `struct inode` inside `ext4_inode_info`, `struct sock`
//! at the start of `tcp_sock`. C can only take `container_of` to a type complete in
//! the unit, so the candidates are the unit's records that hold one (a member at
//! any depth, each element of an array; not through a pointer). A candidate counts
//! when the operand lands inside it on a scalar of its own size (or one byte of
//! one: `lock orb` on a flag). The site maps, inferred, to the members every such
//! candidate registers (`descend::registrations`); none in common, or none at all,
//! leave it unmapped. A record held in an array too long to list blocks the
//! inference for it. A pointer loaded from outside the record is read the same
//! way: the type it points to, when every candidate's pointer there agrees.
use super::builder::{element_count, expandable, Builder};
use super::descend::{registrations, Descent};
use super::table::Node;
use crate::structs::types::{LockUse, Mapping};
use std::collections::HashMap;

/// Which records hold which, one level at a time, built once per unit when first
/// needed: each held record's node by its name, and for each held node, the records
/// holding it (holder, offset, element count, element size).
#[derive(Default)]
pub(super) struct Holders {
    by_name: HashMap<String, Vec<usize>>,
    edges: HashMap<usize, Vec<(usize, u64, u64, u64)>>,
    /// What `container` said for a (type, offset, width) asked before: a unit's
    /// sites repeat the same `container_of` (an inode's count, a sock's refcnt).
    members: HashMap<(usize, i64, u64), Option<Found>>,
    /// The same for `container_pointer`, by (type, offset).
    pointers: HashMap<(usize, i64), Option<(usize, String)>>,
}

/// The members a `container_of` maps to, and how they were found.
type Found = (Vec<LockUse>, String);

/// Positions listed for one name at the most before the inference gives up.
const POSITIONS: usize = 1_000;

/// Records nested deeper than this are not looked into.
const DEPTH: u32 = 8;

impl Builder<'_, '_> {
    /// The members an operand `at` bytes from the start of a `ty` (outside it) and
    /// `size` bytes wide updates whichever of the unit's records holding a `ty` it
    /// is in (none: unmapped); with how they were found, for the findings.
    pub(super) fn container(
        &mut self,
        ty: usize,
        at: i64,
        size: u64,
        holders: &mut Option<Holders>,
    ) -> Option<Found> {
        if let Some(said) = holders
            .as_ref()
            .and_then(|h| h.members.get(&(ty, at, size)))
        {
            return said.clone();
        }
        let said = self.container_among(ty, at, size, holders, None);
        if let Some(h) = holders.as_mut() {
            h.members.insert((ty, at, size), said.clone());
        }
        said
    }

    /// The same among the candidates the function names, when the unit's as a
    /// whole disagree: the records its variables in scope point to (`named`, from
    /// `Builder::named`). `from_timer(led_cdev, t, blink_timer)` leaves a
    /// `led_cdev`, and of the unit's records holding a `timer_list` only
    /// `led_classdev` is one. Not cached: the answer is the function's.
    pub(super) fn container_named(
        &mut self,
        ty: usize,
        at: i64,
        size: u64,
        holders: &mut Option<Holders>,
        named: &[String],
    ) -> Option<Found> {
        if named.is_empty() {
            return None;
        }
        self.container_among(ty, at, size, holders, Some(named))
    }

    /// What every candidate (of `only`'s records, when given) says: the members
    /// registered under all of them.
    fn container_among(
        &mut self,
        ty: usize,
        at: i64,
        size: u64,
        holders: &mut Option<Holders>,
        only: Option<&[String]>,
    ) -> Option<Found> {
        let mut agreed: Option<Vec<LockUse>> = None;
        let (name, found) = self.landings(ty, at, size, holders, only, &mut |_, d| {
            let uses = registrations(d, Mapping::Inferred);
            let a = match agreed.take() {
                None => uses,
                Some(mut a) => {
                    a.retain(|u| uses.contains(u));
                    a
                }
            };
            let any = !a.is_empty();
            agreed = Some(a);
            any
        })?;
        let uses = agreed.filter(|a| !a.is_empty())?;
        let via = self.how(&name, &found, only.is_some());
        Some((uses, via))
    }

    /// The type a pointer loaded `at` bytes from a `ty` (outside it) points to,
    /// when every record of the unit holding a `ty` that the 8-byte load lands in
    /// on a pointer says the same; with how it was found.
    pub(super) fn container_pointer(
        &mut self,
        ty: usize,
        at: i64,
        holders: &mut Option<Holders>,
    ) -> Option<(usize, String)> {
        if let Some(said) = holders.as_ref().and_then(|h| h.pointers.get(&(ty, at))) {
            return said.clone();
        }
        let said = self.pointer_among(ty, at, holders, None);
        if let Some(h) = holders.as_mut() {
            h.pointers.insert((ty, at), said.clone());
        }
        said
    }

    /// `container_pointer` among the candidates the function names (see
    /// `container_named`).
    pub(super) fn pointer_named(
        &mut self,
        ty: usize,
        at: i64,
        holders: &mut Option<Holders>,
        named: &[String],
    ) -> Option<(usize, String)> {
        if named.is_empty() {
            return None;
        }
        self.pointer_among(ty, at, holders, Some(named))
    }

    fn pointer_among(
        &mut self,
        ty: usize,
        at: i64,
        holders: &mut Option<Holders>,
        only: Option<&[String]>,
    ) -> Option<(usize, String)> {
        let mut agreed = None;
        self.landings(ty, at, 8, holders, only, &mut |b, d| {
            match (b.pointee_any(d.leaf_ty), agreed) {
                (Some(p), None) => agreed = Some(p),
                (Some(p), Some(a)) if a == p => {}
                _ => return false,
            }
            true
        })
        .and_then(|(name, found)| Some((agreed?, self.how(&name, &found, only.is_some()))))
    }

    /// The unit's records holding a `ty` that an operand `at` bytes from it and
    /// `size` bytes wide lands in on a scalar of its size (or one byte of one), each
    /// with the offset of the `ty` in it, each descent to the operand handed to
    /// `agree`; None when `ty` is no named record, is held in an array too long to
    /// list, or `agree` says no (the candidates disagree: no need to look on).
    /// `only`: the names of the records that may be candidates (all when None).
    fn landings(
        &mut self,
        ty: usize,
        at: i64,
        size: u64,
        holders: &mut Option<Holders>,
        only: Option<&[String]>,
        agree: &mut dyn FnMut(&mut Self, &Descent) -> bool,
    ) -> Option<(String, Vec<(usize, u64)>)> {
        let t = self.strip(ty);
        let Node::Record(r) = &self.t.nodes[t] else {
            return None;
        };
        let name = self.record_name(r)?;
        if holders.is_none() {
            *holders = Some(self.holders());
        }
        let candidates = holders.as_ref()?.positions(&name)?;
        let mut out = Vec::new();
        for (holder, offset) in candidates {
            let Ok(pos) = u64::try_from(at.wrapping_add(offset as i64)) else {
                continue;
            };
            if pos >= self.size(holder, 0) {
                continue;
            }
            if only.is_some_and(|only| !only.contains(&self.holder_name(holder))) {
                continue;
            }
            let Some(mut d) = self.descend(holder, pos, false) else {
                continue;
            };
            // The operand is the scalar, or one byte of it (`lock orb` on a flag).
            if !(size == 1 && d.into < d.leaf_size || d.into == 0 && d.leaf_size == size) {
                continue;
            }
            d.operand(size);
            if !agree(self, &d) {
                return None;
            }
            out.push((holder, offset));
        }
        Some((name, out))
    }

    /// The evidence: which of the unit's records holding a `name` it was.
    /// `named`: the candidates were narrowed to the records variables in scope
    /// point to.
    fn how(&self, name: &str, found: &[(usize, u64)], named: bool) -> String {
        match found {
            [(holder, offset)] if named => {
                let holder = self.holder_name(*holder);
                format!("container_of: of the unit's records holding a `{name}` the operand lands in, `{holder}` (at {offset}) is the one a variable in scope points to")
            }
            [(holder, offset)] => {
                let holder = self.holder_name(*holder);
                format!("container_of: the unit's one record holding a `{name}` the operand lands in is `{holder}` (at {offset})")
            }
            many => {
                let mut names: Vec<String> = many.iter().map(|h| self.holder_name(h.0)).collect();
                names.sort();
                names.dedup();
                let more = names.len().saturating_sub(3);
                names.truncate(3);
                let tail = if more > 0 {
                    format!(", {more} more")
                } else {
                    String::new()
                };
                let among = if named {
                    " that variables in scope point to"
                } else {
                    ""
                };
                format!(
                    "container_of: the unit's {} records holding a `{name}` the operand lands in{among} agree ({}{tail})",
                    many.len(),
                    names.join(", ")
                )
            }
        }
    }

    pub(super) fn holder_name(&self, holder: usize) -> String {
        match &self.t.nodes[holder] {
            Node::Record(r) => self.record_name(r).unwrap_or_else(|| "?".into()),
            _ => "?".into(),
        }
    }

    /// The unit's defined records, one level of holding at a time.
    fn holders(&mut self) -> Holders {
        let mut out = Holders::default();
        for i in 0..self.t.nodes.len() {
            match &self.t.nodes[i] {
                Node::Record(r) if r.size.is_some() && !r.declaration => {}
                _ => continue,
            }
            for (ty, loc, count) in self.held_records(i) {
                let size = self.size(ty, 0);
                let edges = out.edges.entry(ty).or_default();
                if edges.is_empty() {
                    if let Node::Record(held) = &self.t.nodes[ty] {
                        if let Some(n) = self.record_name(held) {
                            out.by_name.entry(n).or_default().push(ty);
                        }
                    }
                }
                edges.push((i, loc, count, size));
            }
        }
        out
    }

    /// The record-typed members of record `rec` (typedefs stripped), with their
    /// offsets and how many there are (an array's element count, else 1).
    fn held_records(&self, rec: usize) -> Vec<(usize, u64, u64)> {
        let Node::Record(r) = &self.t.nodes[rec] else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for m in self.members_of(r).iter().filter(|m| m.bit_size.is_none()) {
            let Some(ty) = self.target(m.ty) else {
                continue;
            };
            let ty = self.strip(ty);
            let (ty, count) = match &self.t.nodes[ty] {
                Node::Array { elem, dims } => match self.target(*elem) {
                    Some(e) => (self.strip(e), element_count(dims)),
                    None => continue,
                },
                _ => (ty, 1),
            };
            if matches!(self.t.nodes[ty], Node::Record(_)) {
                out.push((ty, m.location.unwrap_or(0), count));
            }
        }
        out
    }
}

impl Holders {
    /// Every place a record named `name` is in a defined record of the unit (the
    /// record, the offset), through up to `DEPTH` levels, each element of an
    /// array; None when one of them is in an array too long to list.
    fn positions(&self, name: &str) -> Option<Vec<(usize, u64)>> {
        let mut out = Vec::new();
        let mut stack: Vec<(usize, u64, u32)> =
            self.by_name.get(name)?.iter().map(|&n| (n, 0, 0)).collect();
        while let Some((node, at, depth)) = stack.pop() {
            for &(holder, loc, count, size) in self.edges.get(&node).into_iter().flatten() {
                if count > 1 && (!expandable(count) || size == 0) {
                    return None;
                }
                for k in 0..count {
                    let o = at + loc + k * size;
                    out.push((holder, o));
                    if depth + 1 < DEPTH {
                        stack.push((holder, o, depth + 1));
                    }
                }
            }
            if out.len() > POSITIONS {
                return None;
            }
        }
        Some(out)
    }
}
