//! Atomics by use, step 2d: what the value a call returned in `%rax`
//! (`Link::Returned`) points to, by the callee's DWARF return type. The function's
//! call sites (`DW_TAG_call_site` with `DW_AT_call_return_pc` and `DW_AT_call_origin`,
//! DWARF 5; GCC's DWARF 4 `DW_TAG_GNU_call_site` with `DW_AT_low_pc` and
//! `DW_AT_abstract_origin`) are read once per function the first time a chain
//! needs one, anywhere in its subtree; the call returning to the address names its
//! callee's subprogram DIE (a declaration, or a definition reached through
//! `DW_AT_specification`/`DW_AT_abstract_origin`), whose `DW_AT_type` is the return
//! type. A pointer to a record maps exactly; `void *`, an integer, a callee without
//! a return type or a call without an origin in the unit (an indirect call) say
//! nothing.

use super::builder::Builder;
use super::lock_uses::{unit_ref, Ctx, Frame};
use super::trace::Traced;
use crate::structs::types::{Mapping, Unmapped};
use gimli::{constants as dw, UnitOffset};

/// Subprogram DIEs followed from a call's origin to the one with a type.
const HOPS: usize = 4;

impl Builder<'_, '_> {
    /// What `%rax` points to after the call returning to `address`, plus `offset`
    /// (`index`: an index of unknown stride added), when the callee's return type
    /// is a pointer to a record; `stride`: an induction found after the call.
    pub(super) fn returned(
        &mut self,
        (address, offset, index): (u64, i64, bool),
        stride: Option<i64>,
        frames: &[Frame<'_>],
        ctx: &mut Ctx<'_>,
    ) -> Result<Traced, Unmapped> {
        let function = frames
            .first()
            .map(|f| f.offset)
            .ok_or(Unmapped::UntrackedBase)?;
        if ctx.calls.0 != Some(function) {
            ctx.calls = (
                Some(function),
                self.call_sites(function).unwrap_or_default(),
            );
        }
        let sites = &ctx.calls.1;
        let k = sites
            .binary_search_by_key(&address, |s| s.0)
            .map_err(|_| Unmapped::UntrackedBase)?;
        let (name, ty) = self.callee(sites[k].1).ok_or(Unmapped::UntrackedBase)?;
        let ty = ty.ok_or(Unmapped::NoCandidate)?;
        let Some(record) = self.pointee(ty) else {
            return Err(if self.integer_class(ty) {
                Unmapped::ScalarVariable
            } else {
                Unmapped::NoCandidate
            });
        };
        let spelled = self.name(ty, 0);
        let callee = name.map_or_else(|| "the callee".to_string(), |n| format!("`{n}`"));
        Ok(Traced {
            ty: record,
            offset,
            unknown: index,
            mapping: Mapping::Exact,
            stride,
            via: Some(format!(
                "the value {callee} returns (a `{spelled}`), from the call returning to \
                 {address:#x}"
            )),
        })
    }

    /// The call sites in the subtree of the DIE at `function`: return address and
    /// callee DIE offset, sorted (a call with either missing is left out).
    fn call_sites(&self, function: u64) -> gimli::Result<Vec<(u64, u64)>> {
        let mut out = Vec::new();
        let mut entries = self.unit.entries_raw(Some(UnitOffset(function as usize)))?;
        let mut depth = 0usize;
        while !entries.is_empty() {
            let Some(abbrev) = entries.read_abbreviation()? else {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
                continue;
            };
            let tag = abbrev.tag();
            if tag == dw::DW_TAG_call_site || tag == dw::DW_TAG_GNU_call_site {
                let (mut pc, mut origin) = (None, None);
                for spec in abbrev.attributes() {
                    let attr = entries.read_attribute(*spec)?;
                    match attr.name() {
                        dw::DW_AT_call_return_pc | dw::DW_AT_low_pc => {
                            pc = self.dwarf.attr_address(self.unit, attr.value())?;
                        }
                        dw::DW_AT_call_origin | dw::DW_AT_abstract_origin => {
                            origin = unit_ref(attr.value());
                        }
                        _ => {}
                    }
                }
                if let (Some(pc), Some(origin)) = (pc, origin) {
                    out.push((pc, origin));
                }
            } else {
                entries.skip_attributes(abbrev.attributes())?;
            }
            if abbrev.has_children() {
                depth += 1;
            } else if depth == 0 {
                break;
            }
        }
        out.sort_unstable();
        // Two call sites returning to one address say nothing there.
        let twice: Vec<u64> = out
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| w[0].0)
            .collect();
        out.retain(|s| twice.binary_search(&s.0).is_err());
        Ok(out)
    }

    /// The name and return type (None: void) of the subprogram DIE at `origin`,
    /// following `DW_AT_specification`/`DW_AT_abstract_origin` to the DIE that has
    /// the type; None when no subprogram is found.
    pub(super) fn callee(&self, origin: u64) -> Option<(Option<String>, Option<usize>)> {
        let mut at = origin;
        let mut name = None;
        for _ in 0..HOPS {
            let e = self.unit.entry(UnitOffset(at as usize)).ok()?;
            if e.tag() != dw::DW_TAG_subprogram {
                return None;
            }
            if name.is_none() {
                if let Ok(Some(v)) = e.attr_value(dw::DW_AT_name) {
                    name = self
                        .dwarf
                        .attr_string(self.unit, v)
                        .ok()
                        .map(|s| String::from_utf8_lossy(s.slice()).into_owned());
                }
            }
            if let Some(t) = e.attr_value(dw::DW_AT_type).ok().flatten() {
                return Some((name, Some(self.idx(unit_ref(t)?)?)));
            }
            let next = [dw::DW_AT_specification, dw::DW_AT_abstract_origin]
                .into_iter()
                .find_map(|a| e.attr_value(a).ok().flatten().and_then(unit_ref));
            match next {
                Some(n) => at = n,
                None => return Some((name, None)),
            }
        }
        None
    }
}
