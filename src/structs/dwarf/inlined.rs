//! Atomics by use, step 2g: a pointer loaded from a member no record type
//! describes (a `void *`: `super_block.s_fs_info`) by an instruction of an inlined
//! function that returns a pointer to a record (`EXT4_SB(sb)`, which returns
//! `sb->s_fs_info` as a `struct ext4_sb_info *`): what that return type points
//! to, inferred (the load is taken as the value the function returns). Only the
//! innermost inlined function holding the load counts; one returning anything
//! else says nothing.

use super::builder::Builder;
use super::lock_uses::{unit_ref, Ctx, Frame};
use gimli::{constants as dw, UnitOffset};

impl Builder<'_, '_> {
    /// The record the value loaded at `load` points to, by the return type of the
    /// innermost inlined function holding it; with how it was found.
    pub(super) fn inlined_return(
        &mut self,
        load: u64,
        frames: &[Frame<'_>],
        ctx: &mut Ctx<'_>,
    ) -> Option<(usize, String)> {
        let function = frames.first()?.offset;
        if ctx.inlined.0 != Some(function) {
            ctx.inlined = (
                Some(function),
                self.inlined_ranges(function).unwrap_or_default(),
            );
        }
        let &(_, _, origin) = ctx
            .inlined
            .1
            .iter()
            .filter(|r| (r.0..r.1).contains(&load))
            .min_by_key(|r| r.1 - r.0)?;
        let (name, ty) = self.callee(origin)?;
        let ty = ty?;
        let record = self.pointee(ty)?;
        let spelled = self.name(ty, 0);
        let name = name.map_or_else(|| "an inlined function".to_string(), |n| format!("`{n}`"));
        Some((
            record,
            format!("loaded at {load:#x} as the value inlined {name} returns (a `{spelled}`)"),
        ))
    }

    /// The ranges of the inlined subroutines in the subtree of the DIE at
    /// `function`: (begin, end, abstract origin), one per range.
    fn inlined_ranges(&self, function: u64) -> gimli::Result<Vec<(u64, u64, u64)>> {
        let mut out = Vec::new();
        let mut cursor = self.unit.entries_at_offset(UnitOffset(function as usize))?;
        let mut depth = 0isize;
        let mut first = true;
        while let Some((delta, e)) = cursor.next_dfs()? {
            depth += delta;
            if !first && depth <= 0 {
                break;
            }
            first = false;
            if e.tag() != dw::DW_TAG_inlined_subroutine {
                continue;
            }
            let Some(origin) = e.attr_value(dw::DW_AT_abstract_origin)?.and_then(unit_ref) else {
                continue;
            };
            let mut ranges = self.dwarf.die_ranges(self.unit, e)?;
            while let Some(r) = ranges.next()? {
                out.push((r.begin, r.end, origin));
            }
        }
        Ok(out)
    }
}
