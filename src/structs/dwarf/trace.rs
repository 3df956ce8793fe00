//! Atomics by use, step 2b: what the value a lock site's chain (`Link`s, built by
//! `structs::chain`) describes points to: a variable's type where one's location
//! is a register of it (of several there, the first whose type holds the
//! operand), the pointer type of the member a `Load` read it from, a global
//! variable (by address: one the unit defines, else the one the symbol table names
//! there if the unit declares it), or the register's value on entry (`entry`: a
//! variable DWARF gives as it, else, inferred, the parameter the ABI passes in
//! it). A level a `Load` reads a pointer from may be a `T **` variable: what it
//! loads is a `T *` (`Ctx::loaded`). At a join point (`Link::Join`, `join`) every
//! way in is traced, and the value is known only when all of them say the same
//! type, offset and mapping (at a loop's head, by hypothesis); or,
//! inferred, when they differ only by a tagged pointer (`page_folio`: the page,
//! or its `compound_head` less the tag bit). A reload from a stack slot is what
//! the slot's variable says, else what the register spilled there says
//! (`Link::Spilled`). Where the rest of a chain says nothing, the register's one
//! writer in the function says it (`Link::Sole`). A call's `%rax` is what its
//! callee's return type points to (`Link::Returned`, `returned`). A chain that
//! reaches none of these maps to nothing.

use super::builder::Builder;
use super::lock_uses::{covering, evidence, Ctx, Frame, Loc, Var};
use super::table::Node;
use crate::structs::types::{Link, Mapping, Unmapped};

/// What the variables say a register points to.
pub(super) enum Held {
    /// At byte `.1` (negative: before it) of type `.0`; `.2` says how, when the
    /// variable is a stack slot found through the CFA.
    Points(usize, i64, Option<String>),
    /// A variable is in the register, but it points to no record.
    Scalar,
    Nothing,
}

/// Of the variables that say where a register points: the first whose record
/// holds the operand, else the first; `Scalar` when only scalar ones spoke.
#[derive(Default)]
pub(super) struct Pick {
    scalar: bool,
    first: Option<Held>,
}

impl Pick {
    /// One variable's answer: handed back when it holds the operand (`inside`).
    pub(super) fn offer(&mut self, held: Held, inside: bool) -> Option<Held> {
        if inside {
            return Some(held);
        }
        self.first.get_or_insert(held);
        None
    }

    /// A variable there points to no record.
    pub(super) fn scalar(&mut self) {
        self.scalar = true;
    }

    pub(super) fn done(self) -> Held {
        match self.first {
            Some(h) => h,
            None if self.scalar => Held::Scalar,
            None => Held::Nothing,
        }
    }
}

/// A pointer value traced: to byte `offset` of a `ty` (any type `descend` starts
/// from), `unknown` when an index of unknown stride was added to it.
#[derive(Clone)]
pub(super) struct Traced {
    pub(super) ty: usize,
    pub(super) offset: i64,
    pub(super) unknown: bool,
    pub(super) mapping: Mapping,
    /// The index is an induction register's, advancing by this many bytes.
    pub(super) stride: Option<i64>,
    /// How a stack slot was found (the CFA), for the findings.
    pub(super) via: Option<String>,
}

impl<'a> Builder<'a, '_> {
    /// What the value a chain describes points to (see `Link`): a variable's type
    /// where one's location is a register of it, the pointer type of the member a
    /// `Load` read it from, a global, or (inferred) the parameter an argument
    /// register held on entry.
    /// `displacement`: where the operand (a site's, or a load's) is from this
    /// level's value, which picks among variables in the same register.
    pub(super) fn trace(
        &mut self,
        links: &[Link],
        paths: &[Vec<Link>],
        displacement: i64,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> Result<Traced, Unmapped> {
        let mut scalar = false;
        let mut stride = None;
        for (k, link) in links.iter().enumerate() {
            match *link {
                Link::Induction { stride: s, .. } => stride = Some(s),
                Link::Register {
                    address,
                    register,
                    offset,
                    index,
                } => match self.held(
                    address,
                    register,
                    offset.wrapping_add(displacement),
                    frames,
                    ctx,
                ) {
                    Held::Points(ty, at, via) => {
                        let t = Traced {
                            ty,
                            offset: at.wrapping_add(offset),
                            unknown: index,
                            mapping: Mapping::Exact,
                            stride,
                            via,
                        };
                        let rest = &links[k + 1..];
                        return Ok(self.refined(t, rest, paths, displacement, frames, ctx));
                    }
                    Held::Scalar => scalar = true,
                    Held::Nothing => {}
                },
                Link::Load {
                    address,
                    offset,
                    index,
                    displacement,
                    load_index,
                } => {
                    // The next level is read for a pointer: a `T **` there says what.
                    let was = std::mem::replace(&mut ctx.loaded, true);
                    let inner = self.trace(&links[k + 1..], paths, displacement, frames, ctx);
                    ctx.loaded = was;
                    let inner = inner?;
                    let at = inner.offset.wrapping_add(displacement);
                    let unknown = inner.unknown || load_index;
                    let inside = u64::try_from(at)
                        .ok()
                        .and_then(|at| self.descend(inner.ty, at, unknown));
                    let (ty, mapping, via) = match inside {
                        Some(d) => {
                            if d.leaf_size != 8 || d.into != 0 {
                                return Err(Unmapped::NoCandidate);
                            }
                            match self.pointee_any(d.leaf_ty) {
                                Some(ty) => (ty, inner.mapping, None),
                                // A `void *`: what an inlined function returned it as.
                                None => {
                                    let (ty, how) = self
                                        .inlined_return(address, frames, ctx)
                                        .ok_or(Unmapped::ScalarVariable)?;
                                    (ty, Mapping::Inferred, Some(how))
                                }
                            }
                        }
                        // Loaded from outside the record: from the record holding it.
                        None if !unknown && inner.stride.is_none() => {
                            let (ty, how) =
                                match self.container_pointer(inner.ty, at, &mut ctx.holders) {
                                    Some(found) => found,
                                    None => {
                                        let named = self.named(frames, ctx);
                                        self.pointer_named(inner.ty, at, &mut ctx.holders, &named)
                                            .ok_or(Unmapped::NoCandidate)?
                                    }
                                };
                            (ty, Mapping::Inferred, Some(how))
                        }
                        None => return Err(Unmapped::NoCandidate),
                    };
                    return Ok(Traced {
                        ty,
                        offset,
                        unknown: index,
                        mapping,
                        stride,
                        via,
                    });
                }
                Link::Global {
                    address,
                    offset,
                    index,
                } => {
                    let (ty, at) = self
                        .global_at(address, ctx)
                        .ok_or(Unmapped::UnknownAddress)?;
                    return Ok(Traced {
                        ty,
                        offset: at.wrapping_add(offset),
                        unknown: index,
                        mapping: Mapping::Exact,
                        stride,
                        via: None,
                    });
                }
                // Refining goes straight back only: through a join of one way
                // (the code before it; a loop round it leaves the register
                // alone), never a choice of ways.
                Link::Again { .. } if ctx.refining => {
                    return Err(Unmapped::UntrackedBase);
                }
                Link::Join { count, .. } if ctx.refining && count != 1 => {
                    return Err(Unmapped::UntrackedBase);
                }
                Link::Spilled { way } | Link::Sole { way, .. } | Link::Reaching { way, .. } => {
                    // The slot's memory first (a variable there), then the
                    // register spilled to it; the rest of the chain first, then
                    // the register's one writer in the function.
                    let rest = self.trace(&links[k + 1..], paths, displacement, frames, ctx);
                    let t = match (rest, paths.get(way as usize)) {
                        // The rest says a scalar (a spilled `unsigned long *`): the
                        // way may say which record's word it is.
                        (Ok(t), Some(other)) if self.scalar_pointee(t.ty) => {
                            match self.trace(other, paths, displacement, frames, ctx) {
                                Ok(o)
                                    if o.mapping == Mapping::Exact
                                        && !o.unknown
                                        && self.plain_word_in(&o, t.ty, displacement) =>
                                {
                                    Ok(o)
                                }
                                _ => Ok(t),
                            }
                        }
                        (Ok(t), _) => Ok(t),
                        (Err(e), Some(other)) => {
                            let mut t = self
                                .trace(other, paths, displacement, frames, ctx)
                                .map_err(|_| e)?;
                            let said = match *link {
                                Link::Sole { address, .. } => {
                                    Some(format!("the register's one writer, at {address:#x}"))
                                }
                                Link::Reaching { address, .. } => Some(format!(
                                    "the writes of the register that reach {address:#x}"
                                )),
                                _ => None,
                            };
                            t.via = evidence([said, t.via]);
                            Ok(t)
                        }
                        (Err(e), None) => Err(e),
                    };
                    let mut t = t.map_err(|e| if scalar { Unmapped::ScalarVariable } else { e })?;
                    t.stride = strides(t.stride, stride)?;
                    return Ok(t);
                }
                Link::Join {
                    address,
                    first,
                    count,
                } => {
                    // The register the level is in at the join, for a loop round it.
                    let at_join = match k.checked_sub(1).map(|p| &links[p]) {
                        Some(&Link::Register {
                            address: a,
                            register,
                            offset,
                            index: false,
                        }) if a == address => Some((register, offset)),
                        _ => None,
                    };
                    // A variable in a register on the way here that points to no
                    // record says more than a join that cannot be traced.
                    return self
                        .join(
                            (address, at_join),
                            (first, count),
                            stride,
                            paths,
                            displacement,
                            frames,
                            ctx,
                        )
                        .map_err(|e| if scalar { Unmapped::ScalarVariable } else { e });
                }
                Link::Again {
                    address,
                    register,
                    offset,
                } => {
                    // Round a loop: the value the join being traced is taken as.
                    return self
                        .again((address, register, offset), stride, ctx)
                        .map_err(|e| if scalar { Unmapped::ScalarVariable } else { e });
                }
                Link::Returned {
                    address,
                    offset,
                    index,
                } => {
                    // What the callee returned, by its DWARF return type.
                    return self
                        .returned((address, offset, index), stride, frames, ctx)
                        .map_err(|e| if scalar { Unmapped::ScalarVariable } else { e });
                }
                Link::Entry {
                    register,
                    offset,
                    index,
                    kept,
                } => {
                    // The parameter the ABI passes in it (inferred) when its record
                    // holds the operand; else a variable DWARF gives as the
                    // register's entry value (exact), read only then: it walks
                    // every location list in scope.
                    let want = offset.wrapping_add(displacement);
                    let argument = self.argument(register, frames, ctx);
                    let (ty, at, mapping, via) = match argument {
                        Some(ty) if self.holds(ty, want) => (ty, 0, Mapping::Inferred, None),
                        _ => match (
                            self.entry_held((register, kept), want, frames, ctx),
                            argument,
                        ) {
                            (Held::Points(ty, at, via), _)
                                if self.holds(ty, at.wrapping_add(want)) =>
                            {
                                (ty, at, Mapping::Exact, via)
                            }
                            (_, Some(ty)) => (ty, 0, Mapping::Inferred, None),
                            (Held::Points(ty, at, via), None) => (ty, at, Mapping::Exact, via),
                            (Held::Scalar, None) => return Err(Unmapped::ScalarVariable),
                            (Held::Nothing, None) => return Err(Unmapped::NoCandidate),
                        },
                    };
                    return Ok(Traced {
                        ty,
                        offset: at.wrapping_add(offset),
                        unknown: index,
                        mapping,
                        stride,
                        via,
                    });
                }
            }
        }
        Err(if scalar {
            Unmapped::ScalarVariable
        } else {
            Unmapped::UntrackedBase
        })
    }

    /// What the variable whose location at `pc` is `register` (innermost scope
    /// first) says the register points to. Where several variables are in it (a
    /// `struct timer_list *t` and the `struct foo *f` that `from_timer` made of it,
    /// at `t` minus an offset), the first whose type holds the operand, `want`
    /// bytes from the register, wins; else the first.
    fn held(
        &mut self,
        pc: u64,
        register: u16,
        want: i64,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> Held {
        let mut pick = Pick::default();
        let mut holder: Option<(usize, i64, Option<String>)> = None;
        // DW_OP_fbreg k is in memory at the frame base (a register + b) + k; with
        // DW_OP_call_frame_cfa, the CFA at `pc` from the call frame information.
        let top = frames.first();
        let cfa = top
            .filter(|f| f.frame_base.is_none() && f.frame_base_cfa)
            .and_then(|_| {
                let k = ctx.cfa.binary_search_by_key(&pc, |c| c.address).ok()?;
                Some(ctx.cfa[k])
            });
        let base = top
            .and_then(|f| f.frame_base)
            .or(cfa.map(|c| (c.register, c.offset)));
        for frame in frames.iter().rev() {
            for v in &frame.vars {
                let Some(location) = v.location else { continue };
                let Some(mut loc) = self.location_at(location, pc) else {
                    continue;
                };
                let mut via = None;
                if let (Loc::Frame(k), Some((r, b))) = (loc, base) {
                    loc = Loc::Memory(r, b.wrapping_add(k));
                    if let Some(c) = cfa {
                        via = Some(format!(
                            "stack slot at DW_OP_fbreg {k}, CFA {}{:+} from {}",
                            register_name(c.register),
                            c.offset,
                            if c.from_eh_frame {
                                ".eh_frame"
                            } else {
                                ".debug_frame"
                            }
                        ));
                    }
                }
                let (value, k) = match loc {
                    Loc::Reg(r) if r == register => (true, 0),
                    Loc::RegPlus(r, k) if r == register => (true, k),
                    Loc::Memory(r, k) if r == register => (false, k),
                    _ => continue,
                };
                let Some(t) = self.var_type(v, &mut ctx.origins) else {
                    continue;
                };
                let (ty, at) = if !value {
                    // The register points at the variable itself, `k` bytes below it.
                    (t, k.wrapping_neg())
                } else {
                    // The register is the variable's value minus `k`.
                    // (A `T **` in a level read for a pointer: the `T *`.)
                    match self.pointee(t).or_else(|| self.loaded_pointer(t, ctx)) {
                        Some(pointee) => (pointee, k.wrapping_neg()),
                        None => {
                            pick.scalar();
                            continue;
                        }
                    }
                };
                let inside = self.holds(ty, at.wrapping_add(want));
                if !inside {
                    pick.offer(Held::Points(ty, at, via), false);
                    continue;
                }
                // An outer variable whose record holds the inner one's where the
                // operand is says more (`files_struct.count.counter`, not the
                // inlined `atomic_inc`'s `atomic_t.counter`).
                let refined = match &holder {
                    None => true,
                    Some((inner, inner_at, _)) => {
                        let (inner, start) = (*inner, at.wrapping_sub(*inner_at));
                        u64::try_from(at.wrapping_add(want))
                            .ok()
                            .zip(u64::try_from(start).ok())
                            .is_some_and(|(at, start)| self.refines(ty, at, inner, start))
                    }
                };
                if refined {
                    holder = Some((ty, at, via));
                }
            }
        }
        match holder {
            Some((ty, at, via)) => Held::Points(ty, at, via),
            None => pick.done(),
        }
    }

    /// For a pointer to a pointer (`T **`) in a level read for a pointer
    /// (`Ctx::loaded`): the `T *` it points to, which the load reads.
    pub(super) fn loaded_pointer(&self, ty: usize, ctx: &Ctx<'_>) -> Option<usize> {
        let r = self.pointee_any(ty).filter(|_| ctx.loaded)?;
        matches!(self.t.nodes[r], Node::Pointer { .. }).then_some(r)
    }

    /// Whether byte `at` of a `ty` is inside it.
    pub(super) fn holds(&mut self, ty: usize, at: i64) -> bool {
        at >= 0 && (at as u64) < self.size(ty, 0)
    }

    /// The global variable holding `address`: its type and the offset inside it.
    fn global_at(&mut self, address: u64, ctx: &mut Ctx<'_>) -> Option<(usize, i64)> {
        if ctx.globals.is_none() {
            let globals = std::mem::take(&mut self.t.globals);
            let mut list = Vec::new();
            for (location, ty, _) in &globals {
                let Some(Loc::Addr(start)) = self.location_at(*location, 0) else {
                    continue;
                };
                let Some(t) = self.idx(*ty) else { continue };
                let size = self.size(t, 0);
                if size > 0 {
                    list.push((start, size, t));
                }
            }
            self.t.globals = globals;
            list.sort_unstable();
            ctx.globals = Some(list);
        }
        let list = ctx.globals.as_deref()?;
        if let Some(k) = list.partition_point(|g| g.0 <= address).checked_sub(1) {
            let (start, size, ty) = list[k];
            if address < start.saturating_add(size) {
                return Some((ty, (address - start) as i64));
            }
        }
        self.declared_at(address, ctx)
    }

    /// The global at `address` by the symbol table: the global symbol covering it,
    /// and this unit's namespace-scope variable of that name (an `extern` or
    /// `DECLARE_PER_CPU` declaration: the code here can only name the global one).
    fn declared_at(&mut self, address: u64, ctx: &mut Ctx<'_>) -> Option<(usize, i64)> {
        let (start, _, name) = covering(ctx.objects, address)?;
        if ctx.declared.is_none() {
            let map = self
                .t
                .variables
                .iter()
                .map(|&(n, ty, _)| (self.text(n), ty))
                .collect();
            ctx.declared = Some(map);
        }
        let ty = self.idx(*ctx.declared.as_ref()?.get(name.as_str())?)?;
        let at = address - start;
        (at < self.size(ty, 0)).then_some((ty, at as i64))
    }

    /// The record an argument register points to on entry to the function: the
    /// parameter the System V ABI passes in it, when every parameter before it (and
    /// it) takes one general register and the function returns no record (whose
    /// hidden pointer would take %rdi).
    fn argument(
        &mut self,
        register: u16,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> Option<usize> {
        const ORDER: [u16; 6] = [5, 4, 1, 2, 8, 9];
        if !ctx.entry_arguments {
            return None;
        }
        let position = ORDER.iter().position(|&r| r == register)?;
        let top = frames.first().filter(|f| f.function && !f.returns_memory)?;
        let params: Vec<&Var<'a>> = top.vars.iter().filter(|v| v.param).collect();
        let mut ty = None;
        for v in params.get(..=position)? {
            let t = self.var_type(v, &mut ctx.origins)?;
            if !self.integer_class(t) {
                return None;
            }
            ty = Some(t);
        }
        let ty = ty?;
        self.pointee(ty).or_else(|| self.loaded_pointer(ty, ctx))
    }

    /// The names of the records the variables in scope point to (or are): the
    /// candidates a `container_of` the unit leaves open is narrowed to
    /// (`container_named`).
    pub(super) fn named(&mut self, frames: &[Frame<'a>], ctx: &mut Ctx<'_>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for v in frames.iter().flat_map(|f| &f.vars) {
            let Some(t) = self.var_type(v, &mut ctx.origins) else {
                continue;
            };
            let r = self.pointee(t).unwrap_or_else(|| self.strip(t));
            if let Node::Record(rec) = &self.t.nodes[r] {
                if let Some(n) = self.record_name(rec) {
                    if !out.contains(&n) {
                        out.push(n);
                    }
                }
            }
        }
        out
    }
}

/// Whether two traced values are the same pointer (whatever the mapping says).
/// The stride of a value whose chain met an induction before a join or a
/// fall-back (`b`) and one after it (`a`): one of them at most, else which index
/// the value carries is not known.
pub(super) fn strides(a: Option<i64>, b: Option<i64>) -> Result<Option<i64>, Unmapped> {
    match (a, b) {
        (Some(_), Some(_)) => Err(Unmapped::UntrackedBase),
        (a, b) => Ok(a.or(b)),
    }
}

pub(super) fn same(a: &Traced, t: &Traced) -> bool {
    a.ty == t.ty && a.offset == t.offset && a.unknown == t.unknown && a.stride == t.stride
}

/// The AT&T name of an x86-64 DWARF register (System V psABI numbering).
pub(super) fn register_name(r: u16) -> String {
    const NAMES: [&str; 17] = [
        "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12",
        "r13", "r14", "r15", "rip",
    ];
    match NAMES.get(usize::from(r)) {
        Some(n) => format!("%{n}"),
        None => format!("r{r}"),
    }
}
