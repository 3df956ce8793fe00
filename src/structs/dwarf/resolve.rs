//! Atomics by use, step 2 for one site: its chain traced (`trace`) and the type
//! it reaches descended at the displacement to the members the operand updates;
//! outside the record, the record holding it (`container`, else narrowed to the
//! records the function's variables point to); when nothing maps, the variables
//! in the other registers that hold the base plus a constant at the site
//! (`LockSite::aliases`). Unmapped sites say why (`Unmapped`).

use super::builder::Builder;
use super::descend::registrations;
use super::lock_uses::{evidence, Ctx, Frame};
use super::trace::register_name;
use super::Outcome;
use crate::structs::types::{Link, LockSite, LockUse, Mapping, Unmapped};

impl<'a> Builder<'a, '_> {
    /// One site with the variables in scope (innermost frame last): its chain traced
    /// to a type (see `Link`), descended at the displacement; when that maps to
    /// nothing, a variable in another register holding the base plus a constant
    /// there (`LockSite::aliases`).
    pub(super) fn resolve(
        &mut self,
        site: &LockSite,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> (Outcome, Vec<LockUse>) {
        let said = self.resolve_chain(site, &site.chain, frames, ctx);
        if !matches!(said.0, Outcome::Unmapped(_)) {
            return said;
        }
        for &(register, plus, set) in &site.aliases {
            let chain = [Link::Register {
                address: site.address,
                register,
                offset: plus.wrapping_neg(),
                index: false,
            }];
            let (outcome, mut uses) = self.resolve_chain(site, &chain, frames, ctx);
            if let Outcome::Mapped(_) = outcome {
                let how = format!(
                    "{} holds the base {plus:+} (set at {set:#x})",
                    register_name(register)
                );
                for u in &mut uses {
                    u.via = evidence([Some(how.clone()), u.via.take()]);
                }
                return (outcome, uses);
            }
        }
        said
    }

    /// `resolve` for one chain.
    fn resolve_chain(
        &mut self,
        site: &LockSite,
        chain: &[Link],
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> (Outcome, Vec<LockUse>) {
        let no_variables = frames.iter().all(|f| f.vars.is_empty());
        let why = match self.trace(chain, &site.paths, site.displacement, frames, ctx) {
            Ok(t) => {
                let at = t.offset.wrapping_add(site.displacement);
                let unknown = t.unknown || site.index.is_some();
                match u64::try_from(at)
                    .ok()
                    .and_then(|at| Some((at, self.descend(t.ty, at, unknown)?)))
                {
                    // A scaled index from a displacement in no array: if the record
                    // holds an array that stride walks from there, the index is
                    // probably in it, and the member at the displacement is wrong.
                    Some((at, d))
                        if d.stray_index
                            && site.index.is_some()
                            && site.scale > 1
                            && self.inner_array_from(t.ty, at, u64::from(site.scale)) =>
                    {
                        Unmapped::StrayIndex
                    }
                    // An induction pointer whose stride is not the element size
                    // of the array it runs over: which elements it reaches is not
                    // known, so nothing is registered.
                    Some((_, d))
                        if t.stride.is_some_and(|s| {
                            d.unknown_array()
                                .map_or(true, |(_, size)| s.unsigned_abs() != size)
                        }) =>
                    {
                        Unmapped::UntrackedBase
                    }
                    Some((_, mut d)) => {
                        d.operand(site.size);
                        let mut uses = registrations(&d, t.mapping);
                        if !uses.is_empty() {
                            let induction = t.stride.and_then(|s| {
                                let (array, _) = d.unknown_array()?;
                                Some(format!("induction pointer over `{array}`, stride {s}"))
                            });
                            let per_cpu = site.segment.then(|| {
                                "per-CPU data: this CPU's copy, through a segment-relative \
                                 pointer"
                                    .to_string()
                            });
                            let via = evidence([per_cpu, induction, t.via]);
                            for u in &mut uses {
                                u.via = via.clone();
                            }
                            return (Outcome::Mapped(t.mapping), uses);
                        }
                        if d.unexpanded() {
                            Unmapped::LargeArray
                        } else {
                            Unmapped::ScalarVariable
                        }
                    }
                    // Outside the record: the record is inside a bigger one.
                    None if !unknown && t.stride.is_none() => {
                        let found = match self.container(t.ty, at, site.size, &mut ctx.holders) {
                            Some(found) => Some(found),
                            None => {
                                let named = self.named(frames, ctx);
                                self.container_named(t.ty, at, site.size, &mut ctx.holders, &named)
                            }
                        };
                        match found {
                            Some((mut uses, how)) => {
                                let via = evidence([Some(how), t.via]);
                                for u in &mut uses {
                                    u.via = via.clone();
                                }
                                return (Outcome::Mapped(Mapping::Inferred), uses);
                            }
                            None => Unmapped::NoCandidate,
                        }
                    }
                    None => Unmapped::NoCandidate,
                }
            }
            Err(why) => why,
        };
        let why = match why {
            _ if site.segment => Unmapped::Segment,
            Unmapped::UntrackedBase | Unmapped::NoCandidate if no_variables => Unmapped::NoDwarf,
            Unmapped::UntrackedBase | Unmapped::NoCandidate if matches!(site.base, Some(6 | 7)) => {
                Unmapped::Stack
            }
            w => w,
        };
        (Outcome::Unmapped(why), Vec::new())
    }
}
