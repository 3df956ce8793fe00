//! Atomics by use, step 2 (step 1, the decoding, is `structs::locked`): map each lock
//! site of one unit to the record member it updates. For a site inside one of the
//! unit's functions, the variables and parameters of its scopes (the subprogram,
//! lexical blocks, inlined subroutines, whose variables take their type from
//! DW_AT_abstract_origin; a lexical block with no ranges is part of the scope
//! holding it, so the inlined subroutines after it still claim their sites) are
//! searched for one whose location at the site's address
//! (DW_AT_location: an expression or a .debug_loc/.debug_loclists list) is the
//! operand's base register, or a register the base came from along the site's chain
//! (`trace`); the type found (a pointer to a record, or a record in memory) is then
//! descended at the displacement through nested records and arrays. An index
//! register means every element of the array the displacement falls in.
//! DW_OP_fbreg locals are at the frame base: a register, or under
//! DW_OP_call_frame_cfa the CFA read from the call frame information
//! (`structs::cfa`). An induction pointer (`structs::track`) maps only when its
//! stride is the element size of the array it runs over. RIP-relative and absolute
//! `%gs:` (per-CPU) operands are matched to the unit's global variables
//! (`global_uses`); a `%gs:` operand through a register is traced like any other,
//! its pointer being this CPU's copy. Two things are inferred from the types in scope, and said so:
//! an operand outside the record its chain reaches is in the unit's records holding
//! one, when they agree (`container`); an argument register unchanged since the
//! entry is its parameter. Unreadable location lists count as no location.

use super::builder::Builder;
use super::container::Holders;
use super::table::{Function, Node};
use super::{Outcome, Slice, UnitLocks};
use crate::structs::cfa::Cfa;
use crate::structs::types::{LockSite, Mapping, Unmapped};
use gimli::{constants as dw, AttributeValue, Operation, UnitOffset};
use std::collections::HashMap;

/// The lock sites a unit's pass looks up: all of them sorted by address, the ones
/// with a register operand (by address), and the RIP-relative ones (by target).
pub struct SiteIndex<'s> {
    pub sites: &'s [LockSite],
    scoped: Vec<usize>,
    by_target: Vec<(u64, usize)>,
    relocatable: bool,
    /// The CFA where chains reach %rsp/%rbp, by address (`structs::cfa`).
    cfa: &'s [Cfa],
    /// Global data symbols (start, size, name), sorted (`LockSites::objects`).
    objects: &'s [(u64, u64, String)],
    /// Local data symbols, sorted (`LockSites::statics`).
    statics: &'s [(u64, u64, String)],
}

impl<'s> SiteIndex<'s> {
    pub fn new(sites: &'s [LockSite], relocatable: bool) -> SiteIndex<'s> {
        let scoped = (0..sites.len())
            .filter(|&i| sites[i].target.is_none())
            .collect();
        let mut by_target: Vec<(u64, usize)> = if relocatable {
            Vec::new()
        } else {
            // A `%gs:`/`%fs:` operand with an absolute address is per-CPU data (the
            // kernel's per-CPU section starts at 0, where its variables' DW_OP_addr
            // say they are) or thread-local data (whose variables are no DW_OP_addr:
            // nothing matches): matched to the globals like the RIP-relative ones.
            (0..sites.len())
                .filter_map(|i| sites[i].target.map(|t| (t, i)))
                .collect()
        };
        by_target.sort_unstable();
        SiteIndex {
            sites,
            scoped,
            by_target,
            relocatable,
            cfa: &[],
            objects: &[],
            statics: &[],
        }
    }

    /// The data symbol covering `address` (start, size, name), when the address
    /// is no relocatable object's.
    pub(super) fn object_at(&self, address: u64) -> Option<&(u64, u64, String)> {
        if self.relocatable {
            return None;
        }
        covering(self.objects, address).or_else(|| covering(self.statics, address))
    }

    /// The name of the global data symbol that starts at `address`.
    pub(super) fn object_named(&self, address: u64) -> Option<String> {
        let k = self.objects.partition_point(|o| o.0 < address);
        let o = self.objects.get(k)?;
        (o.0 == address).then(|| o.2.clone())
    }

    /// The same, with the binary's global and local data symbols.
    pub fn with_objects(
        mut self,
        objects: &'s [(u64, u64, String)],
        statics: &'s [(u64, u64, String)],
    ) -> SiteIndex<'s> {
        self.objects = objects;
        self.statics = statics;
        self
    }

    /// The same, with the CFA at the addresses chains reach the stack at.
    pub fn with_cfa(mut self, cfa: &'s [Cfa]) -> SiteIndex<'s> {
        self.cfa = cfa;
        self
    }

    /// Register-operand sites in [begin, end).
    fn in_range(&self, begin: u64, end: u64) -> &[usize] {
        let lo = self
            .scoped
            .partition_point(|&i| self.sites[i].address < begin);
        let hi = self
            .scoped
            .partition_point(|&i| self.sites[i].address < end);
        &self.scoped[lo..hi.max(lo)]
    }

    /// RIP-relative sites whose target lies in [begin, end).
    pub(super) fn targets_in(&self, begin: u64, end: u64) -> &[(u64, usize)] {
        let lo = self.by_target.partition_point(|t| t.0 < begin);
        let hi = self.by_target.partition_point(|t| t.0 < end);
        &self.by_target[lo..hi.max(lo)]
    }
}

/// Where a variable's value or storage is at one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loc {
    /// The value is in the register (DW_OP_regN).
    Reg(u16),
    /// The value is register + k (DW_OP_bregN k; DW_OP_stack_value).
    RegPlus(u16, i64),
    /// The variable is in memory at register + k (DW_OP_bregN k).
    Memory(u16, i64),
    /// The variable is in memory at the frame base + k (DW_OP_fbreg k).
    Frame(i64),
    /// The variable is in memory at a fixed address (DW_OP_addr).
    Addr(u64),
}

pub(super) struct Var<'a> {
    ty: Option<u64>,
    origin: Option<u64>,
    pub(super) location: Option<AttributeValue<Slice<'a>>>,
    pub(super) param: bool,
}

pub(super) struct Frame<'a> {
    /// The scope's DIE offset.
    pub(super) offset: u64,
    pub(super) vars: Vec<Var<'a>>,
    /// A subprogram or an inlined subroutine (not a lexical block).
    pub(super) function: bool,
    /// The function returns a record or array, through a hidden pointer in %rdi.
    pub(super) returns_memory: bool,
    /// A subprogram's DW_AT_frame_base when it is a register or register + k
    /// (clang, rustc: DW_OP_reg7 / DW_OP_breg6 k), for DW_OP_fbreg variables; None
    /// for DW_OP_call_frame_cfa (GCC), which needs the call frame information.
    pub(super) frame_base: Option<(u16, i64)>,
    /// DW_AT_frame_base is DW_OP_call_frame_cfa: the CFA at the address, from
    /// the call frame information.
    pub(super) frame_base_cfa: bool,
}

/// What one unit's mapping caches: abstract origins' types, and its globals by
/// address (start, size, type), built when a chain first needs them.
#[derive(Default)]
pub(super) struct Ctx<'i> {
    pub(super) origins: HashMap<u64, Option<u64>>,
    pub(super) globals: Option<Vec<(u64, u64, usize)>>,
    /// Whether an argument register on entry is the declared parameter: GCC names
    /// the clones whose signature it changed (`.isra.0`, `.constprop.0`, left out by
    /// the decoder); LLVM (clang, rustc) rewrites internal functions' arguments
    /// (argument promotion) under the same name, so its units infer nothing.
    pub(super) entry_arguments: bool,
    /// The CFA at the addresses chains reach the stack at (`SiteIndex::cfa`).
    pub(super) cfa: &'i [Cfa],
    /// Global data symbols (`SiteIndex::objects`), and the unit's namespace-scope
    /// variables by name (declarations among them), built when first needed.
    pub(super) objects: &'i [(u64, u64, String)],
    pub(super) declared: Option<HashMap<String, u64>>,
    /// The unit's records by the records they hold (`container`), when first needed.
    pub(super) holders: Option<Holders>,
    /// The call sites of the function last asked about (`returned`): its DIE
    /// offset, and each call's return address and callee DIE offset, sorted.
    pub(super) calls: (Option<u64>, Vec<(u64, u64)>),
    /// The inlined subroutines of the function last asked about (`inlined`): its
    /// DIE offset, and each range with its abstract origin.
    pub(super) inlined: (Option<u64>, Vec<(u64, u64, u64)>),
    /// The level being traced is read for a pointer (a `Link::Load`'s next level):
    /// a variable there of type `T **` says the load reads a `T *`.
    pub(super) loaded: bool,
    /// The joins at loop heads being traced (`join`), innermost last.
    pub(super) loops: Vec<Loop>,
    /// A chain's rest is being traced for a record that refines a variable's
    /// (`refined`): straight back only, through joins of one way and the
    /// fall-backs, never a choice of ways.
    pub(super) refining: bool,
}

/// A join at a loop's head being traced: its address with the register the level
/// is in there and its offset; once the ways that do not come round the loop
/// agree, what they say the value is (type, offset, unknown index, mapping,
/// stride).
pub(super) type Loop = (
    (u64, u16, i64),
    Option<(usize, i64, bool, Mapping, Option<i64>)>,
);

impl<'a> Builder<'a, '_> {
    /// Map the lock sites that fall in this unit's functions and globals.
    pub(super) fn lock_uses(&mut self, index: &SiteIndex<'_>) -> UnitLocks {
        let mut out = UnitLocks::default();
        if index.sites.is_empty() {
            return out;
        }
        let functions = std::mem::take(&mut self.t.functions);
        let mut ctx = Ctx {
            entry_arguments: self.producer_is_gcc(),
            cfa: index.cfa,
            objects: index.objects,
            ..Ctx::default()
        };
        for f in &functions {
            let sites = match self.function_sites(f, index) {
                Some(s) if !s.is_empty() => s,
                _ => continue,
            };
            let before = out.outcomes.len();
            let mut frames = Vec::new();
            let walked = self.walk(f.offset, &sites, index, &mut frames, &mut ctx, &mut out);
            // A function whose DIEs cannot be read: its other sites map to nothing.
            if walked.is_err() {
                let done: Vec<usize> = out.outcomes[before..].iter().map(|o| o.0).collect();
                for &s in sites.iter().filter(|s| !done.contains(s)) {
                    out.outcomes
                        .push((s, Outcome::Unmapped(Unmapped::NoCandidate)));
                }
            }
        }
        self.t.functions = functions;
        if !index.relocatable {
            self.global_uses(index, &mut out);
        }
        out
    }

    /// Whether the unit's DW_AT_producer is GCC (`GNU C17 12.2.0 …`).
    fn producer_is_gcc(&self) -> bool {
        let Ok(mut entries) = self.unit.entries_tree(None) else {
            return false;
        };
        let Ok(root) = entries.root() else {
            return false;
        };
        match root.entry().attr_value(dw::DW_AT_producer) {
            Ok(Some(v)) => self
                .dwarf
                .attr_string(self.unit, v)
                .map(|s| s.slice().starts_with(b"GNU "))
                .unwrap_or(false),
            _ => false,
        }
    }

    /// The register-operand sites inside function `f`'s ranges.
    fn function_sites(&self, f: &Function<'a>, index: &SiteIndex<'_>) -> Option<Vec<usize>> {
        let mut sites = Vec::new();
        if let Some(r) = f.ranges {
            let mut list = self.dwarf.attr_ranges(self.unit, r).ok()??;
            while let Ok(Some(range)) = list.next() {
                sites.extend_from_slice(index.in_range(range.begin, range.end));
            }
        } else {
            let low = self.dwarf.attr_address(self.unit, f.low_pc?).ok()??;
            let high = match f.high_pc? {
                AttributeValue::Udata(size) => low.wrapping_add(size),
                v => self.dwarf.attr_address(self.unit, v).ok()??,
            };
            sites.extend_from_slice(index.in_range(low, high));
        }
        Some(sites)
    }

    /// Walk the scope at `offset` (a subprogram, block or inlined subroutine) holding
    /// `sites`; sites no inner scope holds are resolved here with every variable of
    /// this scope and the enclosing ones.
    fn walk(
        &mut self,
        offset: u64,
        sites: &[usize],
        index: &SiteIndex<'_>,
        frames: &mut Vec<Frame<'a>>,
        ctx: &mut Ctx<'_>,
        out: &mut UnitLocks,
    ) -> gimli::Result<()> {
        if frames.len() > 64 {
            return Ok(());
        }
        let unit = self.unit;
        let mut tree = unit.entries_tree(Some(UnitOffset(offset as usize)))?;
        let root = tree.root()?;
        let function = matches!(
            root.entry().tag(),
            dw::DW_TAG_subprogram | dw::DW_TAG_inlined_subroutine
        );
        let returns_memory = match root.entry().attr_value(dw::DW_AT_type)?.and_then(unit_ref) {
            Some(t) => self.idx(t).map_or(true, |t| {
                let t = self.strip(t);
                !matches!(
                    self.t.nodes[t],
                    Node::Base { .. } | Node::Pointer { .. } | Node::Enum { .. }
                )
            }),
            None => false,
        };
        let (frame_base, frame_base_cfa) = match root.entry().attr_value(dw::DW_AT_frame_base)? {
            Some(AttributeValue::Exprloc(e)) => match self.parse_loc(e) {
                Some(Loc::Reg(r)) => (Some((r, 0)), false),
                Some(Loc::Memory(r, k)) => (Some((r, k)), false),
                _ => (None, e.0.slice() == [dw::DW_OP_call_frame_cfa.0]),
            },
            _ => (None, false),
        };
        // GCC may merge identical inline bodies and describe the one kept under
        // the other's name, called from its own declaration (`get_pid` for
        // `tty_kref_get`, pid.h:85 calling pid.h:85): that scope's variables name
        // the wrong record.
        let merged = root.entry().tag() == dw::DW_TAG_inlined_subroutine
            && self.calls_itself(root.entry(), frames)?;
        let mut frame = Frame {
            offset,
            vars: Vec::new(),
            function,
            returns_memory,
            frame_base,
            frame_base_cfa,
        };
        let mut claimed: Vec<usize> = Vec::new();
        let mut inner: Vec<(u64, Vec<usize>)> = Vec::new();
        // The scopes whose children are this scope's: itself, and the lexical
        // blocks with no ranges in it, whose variables' locations say where they
        // hold and whose own scopes with ranges claim sites like this one's.
        let mut scopes = vec![offset];
        while let Some(scope) = scopes.pop() {
            let mut tree = unit.entries_tree(Some(UnitOffset(scope as usize)))?;
            let root = tree.root()?;
            let mut children = root.children();
            while let Some(child) = children.next()? {
                let e = child.entry();
                match e.tag() {
                    dw::DW_TAG_formal_parameter | dw::DW_TAG_variable if !merged => {
                        frame.vars.push(Var {
                            ty: e.attr_value(dw::DW_AT_type)?.and_then(unit_ref),
                            origin: e.attr_value(dw::DW_AT_abstract_origin)?.and_then(unit_ref),
                            location: e.attr_value(dw::DW_AT_location)?,
                            param: e.tag() == dw::DW_TAG_formal_parameter,
                        });
                    }
                    dw::DW_TAG_lexical_block | dw::DW_TAG_inlined_subroutine => {
                        let mut held = Vec::new();
                        let mut any_range = false;
                        let mut ranges = self.dwarf.die_ranges(self.unit, e)?;
                        while let Some(r) = ranges.next()? {
                            any_range = true;
                            held.extend(
                                sites.iter().copied().filter(|&s| {
                                    (r.begin..r.end).contains(&index.sites[s].address)
                                }),
                            );
                        }
                        if !any_range && e.tag() == dw::DW_TAG_lexical_block {
                            scopes.push(e.offset().0 as u64);
                            continue;
                        }
                        held.retain(|s| !claimed.contains(s));
                        if !held.is_empty() {
                            claimed.extend_from_slice(&held);
                            inner.push((e.offset().0 as u64, held));
                        }
                    }
                    _ => {}
                }
            }
        }
        frames.push(frame);
        // Inner scopes after this scope's own variables are all known.
        let mut result = Ok(());
        for (offset, held) in inner {
            if let Err(e) = self.walk(offset, &held, index, frames, ctx, out) {
                result = Err(e);
            }
        }
        for &s in sites.iter().filter(|s| !claimed.contains(s)) {
            let (outcome, found) = self.resolve(&index.sites[s], frames, ctx);
            for mut u in found {
                u.site = s;
                out.uses.push(u);
            }
            out.outcomes.push((s, outcome));
        }
        frames.pop();
        result
    }

    /// Whether an inlined subroutine is called from its abstract origin's own
    /// declaration: same file and line (a merged inline body, see `walk`).
    /// Not when the function holding it is the same function (`aa_put_profile`
    /// inside `aa_put_profile`, GCC's split part inlined back): its variables are
    /// that function's own.
    fn calls_itself(
        &self,
        e: &gimli::DebuggingInformationEntry<'_, '_, Slice<'a>>,
        frames: &[Frame<'a>],
    ) -> gimli::Result<bool> {
        let number = |v: Option<AttributeValue<Slice<'a>>>| match v? {
            AttributeValue::FileIndex(i) => Some(i),
            v => v.udata_value(),
        };
        let (Some(file), Some(line)) = (
            number(e.attr_value(dw::DW_AT_call_file)?),
            number(e.attr_value(dw::DW_AT_call_line)?),
        ) else {
            return Ok(false);
        };
        let Some(origin) = e.attr_value(dw::DW_AT_abstract_origin)?.and_then(unit_ref) else {
            return Ok(false);
        };
        let o = self.unit.entry(UnitOffset(origin as usize))?;
        if number(o.attr_value(dw::DW_AT_decl_file)?) != Some(file)
            || number(o.attr_value(dw::DW_AT_decl_line)?) != Some(line)
        {
            return Ok(false);
        }
        let Some(holder) = frames.iter().rev().find(|f| f.function) else {
            return Ok(true);
        };
        let h = self.unit.entry(UnitOffset(holder.offset as usize))?;
        let holder_origin = match h.attr_value(dw::DW_AT_abstract_origin)?.and_then(unit_ref) {
            Some(a) => a,
            None => h
                .attr_value(dw::DW_AT_specification)?
                .and_then(unit_ref)
                .unwrap_or(holder.offset),
        };
        Ok(holder_origin != origin)
    }

    /// The type of a variable: its DW_AT_type, else its abstract origin's.
    pub(super) fn var_type(
        &self,
        v: &Var<'a>,
        origins: &mut HashMap<u64, Option<u64>>,
    ) -> Option<usize> {
        if let Some(t) = v.ty {
            return self.idx(t);
        }
        let mut at = v.origin?;
        for _ in 0..4 {
            if let Some(t) = origins.get(&at) {
                return t.and_then(|t| self.idx(t));
            }
            let e = self.unit.entry(UnitOffset(at as usize)).ok()?;
            let ty = e
                .attr_value(dw::DW_AT_type)
                .ok()
                .flatten()
                .and_then(unit_ref);
            if ty.is_some() {
                origins.insert(at, ty);
                return ty.and_then(|t| self.idx(t));
            }
            match e
                .attr_value(dw::DW_AT_abstract_origin)
                .ok()
                .flatten()
                .and_then(unit_ref)
            {
                Some(next) => at = next,
                None => {
                    origins.insert(at, None);
                    return None;
                }
            }
        }
        None
    }

    /// A variable's location at `pc`; an unreadable list is no location.
    pub(super) fn location_at(&self, value: AttributeValue<Slice<'a>>, pc: u64) -> Option<Loc> {
        match value {
            AttributeValue::Exprloc(expr) => self.parse_loc(expr),
            v => {
                let mut list = self.dwarf.attr_locations(self.unit, v).ok()??;
                while let Ok(Some(entry)) = list.next() {
                    if entry.range.begin <= pc && pc < entry.range.end {
                        return self.parse_loc(entry.data);
                    }
                }
                None
            }
        }
    }

    fn parse_loc(&self, expr: gimli::Expression<Slice<'a>>) -> Option<Loc> {
        let encoding = self.unit.encoding();
        let mut bytes = expr.0;
        let first = Operation::parse(&mut bytes, encoding).ok()?;
        let second = if gimli::Reader::is_empty(&bytes) {
            None
        } else {
            Operation::parse(&mut bytes, encoding).ok()
        };
        match (first, second) {
            (Operation::Register { register }, None) => Some(Loc::Reg(register.0)),
            (
                Operation::RegisterOffset {
                    register, offset, ..
                },
                Some(Operation::StackValue),
            ) => Some(Loc::RegPlus(register.0, offset)),
            (
                Operation::RegisterOffset {
                    register, offset, ..
                },
                None,
            ) => Some(Loc::Memory(register.0, offset)),
            (Operation::Address { address }, _) => Some(Loc::Addr(address)),
            (Operation::FrameOffset { offset }, None) => Some(Loc::Frame(offset)),
            (Operation::AddressIndex { index }, _) => {
                self.dwarf.address(self.unit, index).ok().map(Loc::Addr)
            }
            _ => None,
        }
    }
}

/// The data symbol in `symbols` (start, size, name; sorted) covering `address`.
pub(super) fn covering(
    symbols: &[(u64, u64, String)],
    address: u64,
) -> Option<&(u64, u64, String)> {
    let k = symbols.partition_point(|o| o.0 <= address).checked_sub(1)?;
    let o = &symbols[k];
    (address < o.0.saturating_add(o.1)).then_some(o)
}

/// A finding's evidence, its parts (how the base was found, outermost first)
/// joined by "; "; None when there is none.
pub(super) fn evidence<const N: usize>(parts: [Option<String>; N]) -> Option<String> {
    parts
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}; {b}"))
}

/// A reference inside the unit.
pub(super) fn unit_ref(value: AttributeValue<Slice<'_>>) -> Option<u64> {
    match value {
        AttributeValue::UnitRef(o) => Some(o.0 as u64),
        _ => None,
    }
}
