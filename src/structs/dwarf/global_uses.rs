//! Atomics by use, step 2 for RIP-relative and absolute `%gs:` operands: the lock
//! sites that land in one of the unit's global variables map to the record member
//! there, or, when no record is on the way down and the variable is named, to the
//! variable itself (`VariableSite`: its address, size, and whether it crosses a
//! line).

use super::builder::Builder;
use super::descend::registrations;
use super::lock_uses::{Loc, SiteIndex};
use super::{Outcome, UnitLocks};
use crate::structs::types::{Mapping, Unmapped, VariableSite};

impl Builder<'_, '_> {
    /// The RIP-relative sites that land in this unit's global variables: a record's
    /// member, or (no record on the way down, a name known) the variable itself.
    pub(super) fn global_uses(&mut self, index: &SiteIndex<'_>, out: &mut UnitLocks) {
        let globals = std::mem::take(&mut self.t.globals);
        for &(location, ty, name) in &globals {
            let Some(Loc::Addr(address)) = self.location_at(location, 0) else {
                continue;
            };
            let Some(t) = self.idx(ty) else { continue };
            let size = self.size(t, 0);
            if size == 0 {
                continue;
            }
            let hits: Vec<(u64, usize)> = index
                .targets_in(address, address.saturating_add(size))
                .to_vec();
            for (target, s) in hits {
                let site = &index.sites[s];
                let indexed = site.index.is_some();
                let mut variable = None;
                let mut stray = false;
                let found = self
                    .descend(t, target - address, indexed)
                    .map(|mut d| {
                        // A scaled index where the address is in no array: which
                        // element it reaches is not known.
                        stray = d.stray_index;
                        d.operand(site.size);
                        if d.in_no_record() {
                            variable = Some(d.path());
                        }
                        registrations(&d, Mapping::Exact)
                    })
                    .unwrap_or_default();
                if stray {
                    out.outcomes
                        .push((s, Outcome::Unmapped(Unmapped::StrayIndex)));
                } else if found.is_empty() {
                    let named = variable.and_then(|path| {
                        let base = match name {
                            Some(n) => self.text(n),
                            None => index.object_named(address)?,
                        };
                        let name = match path.starts_with('[') || path.is_empty() {
                            true => format!("{base}{path}"),
                            false => format!("{base}.{path}"),
                        };
                        Some(variable_site(
                            name,
                            target,
                            site.size,
                            if indexed { u64::from(site.scale) } else { 0 },
                        ))
                    });
                    match named {
                        Some(v) => {
                            out.outcomes.push((s, Outcome::Variable));
                            out.variables.push((s, v));
                        }
                        None => out
                            .outcomes
                            .push((s, Outcome::Unmapped(Unmapped::ScalarVariable))),
                    }
                } else {
                    out.outcomes.push((s, Outcome::Mapped(Mapping::Exact)));
                    let via = site
                        .segment
                        .then(|| "per-CPU data: a segment-relative address".to_string());
                    for mut u in found {
                        u.site = s;
                        u.via = via.clone();
                        out.uses.push(u);
                    }
                }
            }
        }
        self.t.globals = globals;
    }
}

/// What is known of a locked operand in a named variable at a fixed address;
/// `stride`: a scaled index adds a multiple of it (0: none), and the operand is
/// aligned, or crosses a line, when that holds for any element it reaches.
pub(super) fn variable_site(name: String, address: u64, size: u64, stride: u64) -> VariableSite {
    let crosses = |a: u64| size > 1 && a / 64 != (a.saturating_add(size - 1)) / 64;
    // The elements' offsets within a line repeat after at most 64 of them.
    let reach = if stride == 0 { 1 } else { 64 };
    let at = |k: u64| address.wrapping_add(k.wrapping_mul(stride));
    VariableSite {
        name,
        address,
        size,
        aligned: size > 0 && (0..reach).all(|k| at(k) % size == 0),
        crosses_line: (0..reach).any(|k| crosses(at(k))),
    }
}
