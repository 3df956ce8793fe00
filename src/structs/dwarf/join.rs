//! Atomics by use, step 2b at a join point (`Link::Join`): the value is what every
//! way in says, when they all say the same. At a loop's head a way in comes round
//! the loop and reaches the same join again (a list walked with `p = p->next`):
//! the ways that do not come round say what the value is, and it holds when the
//! ways that do, traced with the join taken as that value, say the same
//! (`Ctx::loops`); by induction over the trips round, it holds on every one.

use super::builder::Builder;
use super::lock_uses::{evidence, Ctx, Frame};
use super::trace::{same, strides, Traced};
use crate::structs::types::{Link, Unmapped};

impl<'a> Builder<'a, '_> {
    /// The value at a join point: what every way in says, when they all say the
    /// same (else, inferred, a tagged pointer: `tagged`); `at_join`: the register
    /// and offset of the level there, which names the join when a way comes round
    /// a loop to it; `stride`: an induction found after the join.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn join(
        &mut self,
        (address, at_join): (u64, Option<(u16, i64)>),
        (first, count): (u32, u32),
        stride: Option<i64>,
        paths: &[Vec<Link>],
        displacement: i64,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> Result<Traced, Unmapped> {
        let ways = paths
            .get(first as usize..first as usize + count as usize)
            .ok_or(Unmapped::UntrackedBase)?;
        // A join of one way is the code before it; a loop is solved where the
        // way round it meets another.
        let key = at_join
            .filter(|_| count > 1)
            .map(|(register, offset)| (address, register, offset));
        if let Some(key) = key {
            if ctx.loops.iter().any(|(k, _)| *k == key) {
                return self.again(key, stride, ctx);
            }
            ctx.loops.push((key, None));
        }
        let said = self.ways(
            address,
            ways,
            key.is_some(),
            paths,
            displacement,
            frames,
            ctx,
        );
        if key.is_some() {
            ctx.loops.pop();
        }
        let mut t = match said {
            Ok(t) => t,
            Err(e) => self
                .tagged(address, ways, paths, displacement, frames, ctx)
                .ok_or(e)?,
        };
        t.stride = strides(t.stride, stride)?;
        Ok(t)
    }

    /// The value at a join being traced that a way has come round a loop to
    /// (`Link::Again`): what the ways that do not come round agree on, once they
    /// have (`Ctx::loops`).
    pub(super) fn again(
        &mut self,
        key: (u64, u16, i64),
        stride: Option<i64>,
        ctx: &mut Ctx<'_>,
    ) -> Result<Traced, Unmapped> {
        let (_, said) = ctx
            .loops
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .ok_or(Unmapped::UntrackedBase)?;
        let (ty, offset, unknown, mapping, found) = said.ok_or(Unmapped::UntrackedBase)?;
        let stride = strides(found, stride)?;
        Ok(Traced {
            ty,
            offset,
            unknown,
            mapping,
            stride,
            via: None,
        })
    }

    /// What the ways into a join all say. `in_loop`: the join may be a loop's
    /// head (`Ctx::loops`' last is it), so the ways that fail are traced again
    /// with the value the others agree on.
    #[allow(clippy::too_many_arguments)]
    fn ways(
        &mut self,
        address: u64,
        ways: &[Vec<Link>],
        in_loop: bool,
        paths: &[Vec<Link>],
        displacement: i64,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> Result<Traced, Unmapped> {
        let agree = |a: &Traced, t: &Traced| same(a, t) && a.mapping == t.mapping;
        let mut agreed: Option<Traced> = None;
        let mut failed = Vec::new();
        let mut error = None;
        for (w, way) in ways.iter().enumerate() {
            match self.trace(way, paths, displacement, frames, ctx) {
                Ok(t) => match &agreed {
                    None => agreed = Some(t),
                    Some(a) if agree(a, &t) => {}
                    Some(_) => return Err(Unmapped::UntrackedBase),
                },
                Err(e) if in_loop => {
                    error.get_or_insert(e);
                    failed.push(w);
                }
                Err(e) => return Err(e),
            }
        }
        let count = ways.len();
        let mut t = agreed.ok_or(error.unwrap_or(Unmapped::UntrackedBase))?;
        if failed.is_empty() {
            let join = match count {
                1 => format!("the one way into {address:#x}"),
                n => format!("the same on all {n} ways into {address:#x}"),
            };
            t.via = evidence([Some(join), t.via]);
            return Ok(t);
        }
        // Round the loop: the failed ways again, with the join taken as `t`.
        let error = error.unwrap_or(Unmapped::UntrackedBase);
        if let Some(last) = ctx.loops.last_mut() {
            last.1 = Some((t.ty, t.offset, t.unknown, t.mapping, t.stride));
        }
        for &w in &failed {
            let again = self
                .trace(&ways[w], paths, displacement, frames, ctx)
                .map_err(|_| error)?;
            if !agree(&t, &again) {
                return Err(error);
            }
        }
        let join = format!(
            "the same on all {count} ways into {address:#x}, {} of them round a loop",
            failed.len()
        );
        t.via = evidence([Some(join), t.via]);
        Ok(t)
    }
}
