//! Atomics by use, step 2d: a register's value on entry to the function, by the
//! variables DWARF describes as that value. GCC gives a variable whose value is an
//! argument's after the register was reused as `DW_OP_entry_value(DW_OP_regN)`,
//! plus or minus a constant (`struct bpf_ringbuf_hdr *hdr = sample - 8` is
//! `entry_value(%rdi) - 8` in one of its ranges). An entry value is the same
//! everywhere in one call of the function, so any range of such a location says
//! what the register held on entry, whatever the range's addresses: a chain that
//! ends at `Link::Entry` maps, exactly, through the type of that variable, even
//! where the parameter itself is a `void *`. Where no instruction of the function
//! writes the register (`Link::Entry::kept`), a range giving the variable as that
//! register (`DW_OP_regN`, or `DW_OP_bregN k; DW_OP_stack_value`) says the same:
//! `hdr` in %rcx at the site and as `%rdi - 8` further on.

use super::builder::Builder;
use super::lock_uses::{Ctx, Frame};
use super::trace::{register_name, Held, Pick};
use super::Slice;
use gimli::{AttributeValue, Operation};

impl<'a> Builder<'a, '_> {
    /// What the variables of `frames` whose location is `register`'s entry value
    /// (plus a constant) say it points to, `want` bytes from it: the first whose
    /// record holds the operand, else the first (as `held` picks among variables
    /// in one register).
    pub(super) fn entry_held(
        &mut self,
        (register, kept): (u16, bool),
        want: i64,
        frames: &[Frame<'a>],
        ctx: &mut Ctx<'_>,
    ) -> Held {
        let mut pick = Pick::default();
        for frame in frames.iter().rev() {
            for v in &frame.vars {
                let Some(location) = v.location else { continue };
                let Some(k) = self.entry_offset(location, register, kept) else {
                    continue;
                };
                let Some(t) = self.var_type(v, &mut ctx.origins) else {
                    continue;
                };
                let Some(pointee) = self.pointee(t).or_else(|| self.loaded_pointer(t, ctx)) else {
                    pick.scalar();
                    continue;
                };
                // The variable is entry + k: the register on entry is at -k in it.
                let at = k.wrapping_neg();
                let via = Some(format!(
                    "a variable DWARF gives as {} on entry{}",
                    register_name(register),
                    match k {
                        0 => String::new(),
                        k if k < 0 => format!(" - {}", k.unsigned_abs()),
                        k => format!(" + {k}"),
                    }
                ));
                let inside = self.holds(pointee, at.wrapping_add(want));
                if let Some(h) = pick.offer(Held::Points(pointee, at, via), inside) {
                    return h;
                }
            }
        }
        pick.done()
    }

    /// `k` when one range of the location is `register`'s entry value plus `k`.
    fn entry_offset(
        &self,
        value: AttributeValue<Slice<'a>>,
        register: u16,
        kept: bool,
    ) -> Option<i64> {
        match value {
            AttributeValue::Exprloc(expr) => self.entry_plus(expr, register, kept),
            v => {
                let mut list = self.dwarf.attr_locations(self.unit, v).ok()??;
                while let Ok(Some(entry)) = list.next() {
                    if let Some(k) = self.entry_plus(entry.data, register, kept) {
                        return Some(k);
                    }
                }
                None
            }
        }
    }

    /// `DW_OP_entry_value(DW_OP_regN)`, then an optional constant added or taken
    /// away (`DW_OP_plus_uconst k`, or `DW_OP_lit`/`DW_OP_const` k and
    /// `DW_OP_plus`/`DW_OP_minus`), then `DW_OP_stack_value`: `k`. When `kept`,
    /// also `DW_OP_regN` (0) and `DW_OP_bregN k; DW_OP_stack_value` (`k`).
    fn entry_plus(
        &self,
        expr: gimli::Expression<Slice<'a>>,
        register: u16,
        kept: bool,
    ) -> Option<i64> {
        let encoding = self.unit.encoding();
        let mut bytes = expr.0;
        let expression = match Operation::parse(&mut bytes, encoding).ok()? {
            Operation::EntryValue { expression } => expression,
            Operation::Register { register: r } if kept && r.0 == register => {
                return gimli::Reader::is_empty(&bytes).then_some(0);
            }
            Operation::RegisterOffset {
                register: r,
                offset,
                ..
            } if kept && r.0 == register => {
                let next = Operation::parse(&mut bytes, encoding).ok()?;
                return (matches!(next, Operation::StackValue) && gimli::Reader::is_empty(&bytes))
                    .then_some(offset);
            }
            _ => return None,
        };
        let mut inner = expression;
        match Operation::parse(&mut inner, encoding).ok()? {
            Operation::Register { register: r } if r.0 == register => {}
            _ => return None,
        }
        if !gimli::Reader::is_empty(&inner) {
            return None;
        }
        let mut ops = Vec::with_capacity(3);
        while !gimli::Reader::is_empty(&bytes) {
            ops.push(Operation::parse(&mut bytes, encoding).ok()?);
            if ops.len() > 3 {
                return None;
            }
        }
        match ops.as_slice() {
            [Operation::StackValue] => Some(0),
            [Operation::PlusConstant { value }, Operation::StackValue] => {
                i64::try_from(*value).ok()
            }
            [Operation::UnsignedConstant { value }, op, Operation::StackValue] => {
                let k = i64::try_from(*value).ok()?;
                match op {
                    Operation::Plus => Some(k),
                    Operation::Minus => Some(k.wrapping_neg()),
                    _ => None,
                }
            }
            [Operation::SignedConstant { value }, op, Operation::StackValue] => match op {
                Operation::Plus => Some(*value),
                Operation::Minus => Some(value.wrapping_neg()),
                _ => None,
            },
            _ => None,
        }
    }
}
