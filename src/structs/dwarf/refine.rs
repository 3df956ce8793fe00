//! Atomics by use, step 2b for a variable that says what a register points to: what
//! the rest of its level's chain says, when that is a record holding the variable's
//! record where the operand is (the caller's `struct files_struct *` behind the
//! inlined `atomic_inc`'s `atomic_t *v`), or a record whose word there is a plain
//! one the size of what a variable pointing to a plain word points to (`set_bit`'s
//! `unsigned long *addr` into `cpumap.alloc_map`).

use super::builder::Builder;
use super::lock_uses::{Ctx, Frame};
use super::trace::Traced;
use crate::structs::types::{Link, Mapping};

impl<'a> Builder<'a, '_> {
    /// A value a variable describes (`t`), or what the rest of its level's chain
    /// traces to, when that is a record holding `t`'s at the same place: the
    /// caller's `struct files_struct *` behind the inlined `atomic_inc`'s
    /// `atomic_t *v` says more about the same word. The rest is traced straight
    /// back only (`Ctx::refining`): through joins of one way and the fall-backs
    /// (the register's one writer, the writes that reach a point), never a choice
    /// of ways; through every join it would cost a third more CPU on vmlinux for
    /// 118 more specific names.
    pub(super) fn refined(
        &mut self,
        t: Traced,
        rest: &[Link],
        paths: &[Vec<Link>],
        displacement: i64,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> Traced {
        if rest.is_empty() || t.unknown || t.stride.is_some() {
            return t;
        }
        // The rest straight back only: no join's ways, no fall-backs.
        let was = std::mem::replace(&mut ctx.refining, true);
        let o = self.trace(rest, paths, displacement, frames, ctx);
        ctx.refining = was;
        let Ok(o) = o else {
            return t;
        };
        if o.mapping != Mapping::Exact || o.unknown || o.stride.is_some() || o.ty == t.ty {
            return t;
        }
        let at = u64::try_from(o.offset.wrapping_add(displacement)).ok();
        let start = u64::try_from(o.offset.wrapping_sub(t.offset)).ok();
        match at.zip(start) {
            Some((at, start)) if self.refines(o.ty, at, t.ty, start) => o,
            // A variable pointing to a plain word (`set_bit`'s `unsigned long
            // *addr`): the record the rest names, when the word there is a plain
            // one of the same size (`cpumask.bits[]`).
            Some(_) if self.scalar_pointee(t.ty) && self.plain_word_in(&o, t.ty, displacement) => o,
            _ => t,
        }
    }

    /// Whether the record `o` says the value points to holds, where the operand
    /// is (`displacement` past it), a plain word of the size of type `word`: what
    /// a pointer to a plain word points to, named by its record.
    pub(super) fn plain_word_in(&mut self, o: &Traced, word: usize, displacement: i64) -> bool {
        let Ok(at) = u64::try_from(o.offset.wrapping_add(displacement)) else {
            return false;
        };
        if self.scalar_pointee(o.ty) {
            return false;
        }
        match self.descend(o.ty, at, false) {
            Some(d) => {
                self.scalar_pointee(d.leaf_ty) && self.size(d.leaf_ty, 0) == self.size(word, 0)
            }
            None => false,
        }
    }
}
