//! Atomics by use, step 2f: a tagged pointer at a join point. The kernel's
//! `page_folio` gives the page itself on one way and, on the other, the integer
//! its `compound_head` holds less the tag bit: the ways disagree in type, though
//! both are a `struct page *`. A way that is a pointer loaded from a member less
//! 1 to 7, loaded from the type the other ways agree on (which point to the start
//! of one), is taken to point to the start of that type too. Inferred, with the
//! evidence saying so.

use super::builder::Builder;
use super::lock_uses::{evidence, Ctx, Frame};
use super::trace::{same, Traced};
use crate::structs::types::{Link, Mapping};

impl<'a> Builder<'a, '_> {
    /// A join whose ways disagree only through a tagged pointer (`page_folio`:
    /// the `struct page *` itself on one way, on the other the integer its
    /// `compound_head` holds less its tag bit): the ways that are a pointer loaded
    /// from a member less 1 to 7, loaded from the type (and offset) the other ways
    /// agree on, are taken to point to the start of that type too, when the other
    /// ways point to the start of one. Inferred, and only when
    /// every other way agrees and at least one is no such load.
    pub(super) fn tagged(
        &mut self,
        address: u64,
        ways: &[Vec<Link>],
        paths: &[Vec<Link>],
        displacement: i64,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> Option<Traced> {
        // Most joins that fail have no such way: nothing to trace again.
        if !ways.iter().any(|w| tag_load(w, paths, 0).is_some()) {
            return None;
        }
        let mut agreed: Option<Traced> = None;
        let mut tags = Vec::new();
        for way in ways {
            match tag_load(way, paths, 0) {
                Some(load) => tags.push(load),
                None => {
                    let t = self.trace(way, paths, displacement, frames, ctx).ok()?;
                    match &agreed {
                        None => agreed = Some(t),
                        Some(a) if same(a, &t) => {}
                        Some(_) => return None,
                    }
                }
            }
        }
        // The tag taken off leaves the start of a record: the other ways must
        // point to the start of one too.
        let mut a = agreed?;
        if tags.is_empty() || a.offset != 0 || a.unknown {
            return None;
        }
        let mut member = None;
        for &(from, d) in &tags {
            let inner = self.trace(from, paths, d, frames, ctx).ok()?;
            if !(inner.ty == a.ty && inner.offset == a.offset && !inner.unknown) {
                return None;
            }
            member.get_or_insert(inner.offset.wrapping_add(d));
        }
        let t = self.strip(a.ty);
        let name = self.holder_name(t);
        a.mapping = Mapping::Inferred;
        a.via = evidence([
            Some(format!(
                "a tagged pointer into {address:#x}: a `{name}` on {} way(s), on {} the pointer its member at {} holds less its tag, taken as a `{name}` too",
                ways.len() - tags.len(),
                tags.len(),
                member.unwrap_or(0)
            )),
            a.via.take(),
        ]);
        Some(a)
    }
}

/// A way's `Load` of a tagged pointer: the way's value is a pointer loaded from a
/// member less 1 to 7 (a tag bit taken off), with only copies of registers before
/// it, through the writer a `Sole`/`Reaching` names and one-way joins; the links
/// after the load (what it loaded from) and its displacement.
fn tag_load<'l>(way: &'l [Link], paths: &'l [Vec<Link>], depth: u32) -> Option<(&'l [Link], i64)> {
    if depth > 8 {
        return None;
    }
    for (k, link) in way.iter().enumerate() {
        match *link {
            Link::Register { index: false, .. } => {}
            Link::Load {
                offset,
                index: false,
                load_index: false,
                displacement,
                ..
            } if (-7..=-1).contains(&offset) => return Some((&way[k + 1..], displacement)),
            Link::Sole { way: w, .. } | Link::Reaching { way: w, .. } => {
                return tag_load(paths.get(w as usize)?, paths, depth + 1)
            }
            Link::Join {
                first, count: 1, ..
            } => return tag_load(paths.get(first as usize)?, paths, depth + 1),
            _ => return None,
        }
    }
    None
}
