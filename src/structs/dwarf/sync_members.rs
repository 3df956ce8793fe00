//! Atomics and locks inside a record: a type's own kind (through typedefs and
//! qualifiers, by name via `structs::sync`), and every atomic or lock reachable
//! through nested members and small arrays, with its path and offset.

use super::builder::{element_count, expandable, Builder, MAX_DEPTH};
use super::table::{Node, Qual};
use crate::structs::sync::classify_name;
use crate::structs::types::{SyncKind, SyncMember};

/// Nesting followed into member records before giving up.
const MAX_NESTING: u32 = 6;
/// Atomics and locks listed per struct at most.
const MAX_LISTED: usize = 256;

impl Builder<'_, '_> {
    /// Atomic or lock, looking through typedefs and qualifiers.
    pub(super) fn sync(&mut self, i: usize, depth: u32) -> Option<SyncKind> {
        match self.sync_memo[i] {
            1 => return None,
            2 => return Some(SyncKind::Atomic),
            3 => return Some(SyncKind::Lock),
            _ => {}
        }
        if depth > MAX_DEPTH {
            return None;
        }
        let kind = match &self.t.nodes[i] {
            Node::Typedef { name, target, .. } => {
                let target = *target;
                match classify_name(&self.text(*name), "") {
                    Some(k) => Some(k),
                    None => self.target(target).and_then(|j| self.sync(j, depth + 1)),
                }
            }
            Node::Qual { kind, target } => {
                let (kind, target) = (*kind, *target);
                if kind == Qual::Atomic {
                    Some(SyncKind::Atomic)
                } else {
                    self.target(target).and_then(|j| self.sync(j, depth + 1))
                }
            }
            Node::Record(r) => match r.name {
                Some(n) => classify_name(&self.text(n), &r.scope),
                None => None,
            },
            _ => None,
        };
        self.sync_memo[i] = match kind {
            None => 1,
            Some(SyncKind::Atomic) => 2,
            Some(SyncKind::Lock) => 3,
        };
        kind
    }

    /// Every atomic and lock inside record `i`, with offsets from `base`.
    pub(super) fn sync_members(
        &mut self,
        i: usize,
        base: u64,
        prefix: &str,
        depth: u32,
        out: &mut Vec<SyncMember>,
    ) {
        if depth > MAX_NESTING || out.len() > MAX_LISTED {
            return;
        }
        let count = match &self.t.nodes[i] {
            Node::Record(r) => r.members.len(),
            _ => return,
        };
        for k in 0..count {
            let m = self.member_node(i, k);
            let (name, ty, location, bitfield) = (m.name, m.ty, m.location, m.bit_size.is_some());
            let name = name.map(|n| self.text(n));
            let Some(j) = self.target(ty) else { continue };
            if bitfield {
                continue;
            }
            let offset = base + location.unwrap_or(0);
            let path = match &name {
                Some(n) => format!("{prefix}{n}"),
                None => prefix.trim_end_matches('.').to_string(),
            };
            self.sync_leaf(j, offset, path, depth, out);
        }
    }

    /// The type at `j`, at `offset` and `path`: listed if it is an atomic or lock,
    /// else searched when it is a record or a small array that holds one.
    fn sync_leaf(
        &mut self,
        j: usize,
        offset: u64,
        path: String,
        depth: u32,
        out: &mut Vec<SyncMember>,
    ) {
        if let Some(kind) = self.sync(j, 0) {
            let size = self.size(j, 0);
            let type_name = self.name(j, 0);
            out.push(SyncMember {
                path,
                offset,
                size,
                kind,
                type_name,
                by_use: false,
                locked: None,
            });
            return;
        }
        let s = self.strip(j);
        match &self.t.nodes[s] {
            Node::Record(_) => {
                let prefix = if path.is_empty() {
                    String::new()
                } else {
                    format!("{path}.")
                };
                self.sync_members(s, offset, &prefix, depth + 1, out);
            }
            Node::Array { elem, dims } => {
                let count = element_count(dims);
                let Some(e) = self.target(*elem) else { return };
                if !expandable(count) || !self.contains_sync(e, 0) {
                    return;
                }
                let size = self.size(e, 0);
                for n in 0..count {
                    self.sync_leaf(e, offset + n * size, format!("{path}[{n}]"), depth + 1, out);
                }
            }
            _ => {}
        }
    }

    /// Whether type `i` is, or holds somewhere inside, an atomic or lock.
    fn contains_sync(&mut self, i: usize, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        if self.sync(i, 0).is_some() {
            return true;
        }
        let s = self.strip(i);
        let children: Vec<usize> = match &self.t.nodes[s] {
            Node::Record(r) => self
                .members_of(r)
                .iter()
                .filter_map(|m| m.ty)
                .filter_map(|o| self.idx(o))
                .collect(),
            Node::Array { elem, .. } => self.target(*elem).into_iter().collect(),
            _ => return false,
        };
        children
            .into_iter()
            .any(|c| self.contains_sync(c, depth + 1))
    }
}
