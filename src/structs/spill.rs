//! Atomics by use, step 1e: a pointer reloaded from a stack spill slot
//! (`mov %r8,(%rsp)` … `call` … `mov (%rsp),%r8`) is the register that was stored
//! there. The store is looked for on straight-line code before the reload, in
//! functions whose stack addresses do not escape (no `lea k(%rsp)`, no copy of
//! `%rsp`): then only an `%rsp`-based store can write the slot, and a call cannot.
//! Anything else that may write the slot or move `%rsp` in between stops the
//! search, and the value stays a load (as before).

use super::write::falls_through;
use iced_x86::{
    FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind, Register,
};

/// Instructions looked back over from a reload for its store.
const SPAN: usize = 64;

/// Whether any instruction of `code` lets an address on the stack out: a `lea`
/// from `%rsp`, or `%rsp` read as a value other than by `add`/`sub`/`and` of a
/// constant to itself (push, pop, call and ret use it implicitly).
pub(super) fn stack_escapes(code: &[Instruction]) -> bool {
    code.iter().any(|i| {
        if i.mnemonic() == Mnemonic::Lea && i.memory_base() == Register::RSP {
            return true;
        }
        let adjusts = matches!(i.mnemonic(), Mnemonic::Add | Mnemonic::Sub | Mnemonic::And)
            && i.op0_kind() == OpKind::Register
            && i.op0_register() == Register::RSP
            && i.op1_kind() != OpKind::Register;
        !adjusts
            && (0..i.op_count()).any(|k| {
                i.op_kind(k) == OpKind::Register
                    && matches!(
                        i.op_register(k),
                        Register::RSP | Register::ESP | Register::SP
                    )
            })
    })
}

/// The store that put the 8 bytes at `k(%rsp)` read by `code[at]` there: its
/// index and the 64-bit register stored, when found on straight-line code before
/// `at` (`joins(p)`: control joins at `code[p]` from elsewhere) with nothing in
/// between that may write those bytes or change `%rsp`; `escapes`: the function's
/// stack addresses escape (`stack_escapes`), so no search.
pub(super) fn spilled(
    code: &[Instruction],
    at: usize,
    k: i64,
    escapes: bool,
    joins: impl Fn(usize) -> bool,
    factory: &mut InstructionInfoFactory,
) -> Option<(usize, Register)> {
    if escapes {
        return None;
    }
    let mut p = at;
    for _ in 0..SPAN {
        if p == 0 || joins(p) {
            return None;
        }
        p -= 1;
        let i = &code[p];
        if !falls_through(i) {
            return None;
        }
        let is_store = i.mnemonic() == Mnemonic::Mov
            && i.op_count() == 2
            && i.op0_kind() == OpKind::Memory
            && i.op1_kind() == OpKind::Register
            && i.op1_register().is_gpr64()
            && i.segment_prefix() == Register::None
            && i.memory_base() == Register::RSP
            && i.memory_index() == Register::None
            && i.memory_displacement64() as i64 == k;
        if is_store {
            return Some((p, i.op1_register()));
        }
        if i.flow_control() == FlowControl::Call {
            continue;
        }
        let info = factory.info(i);
        let moves_rsp = info.used_registers().iter().any(|u| {
            u.register().full_register() == Register::RSP
                && !matches!(u.access(), OpAccess::Read | OpAccess::CondRead)
        });
        if moves_rsp {
            return None;
        }
        let hits = info.used_memory().iter().any(|m| {
            let writes = !matches!(
                m.access(),
                OpAccess::Read | OpAccess::CondRead | OpAccess::NoMemAccess
            );
            if !writes || m.base() != Register::RSP {
                return false;
            }
            if m.index() != Register::None {
                return true;
            }
            let d = m.displacement() as i64;
            let size = m.memory_size().size() as i64;
            d < k.wrapping_add(8) && k < d.wrapping_add(size.max(1))
        });
        if hits {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structs::decode_at_0x1000 as decode;

    /// `spilled` for the reload that is the last instruction, with no joins.
    fn find(code: &[Instruction]) -> Option<(usize, Register)> {
        let k = code.last().unwrap().memory_displacement64() as i64;
        let escapes = stack_escapes(code);
        let mut factory = InstructionInfoFactory::new();
        spilled(code, code.len() - 1, k, escapes, |_| false, &mut factory)
    }

    const STORE: [u8; 4] = [0x4c, 0x89, 0x04, 0x24]; // mov %r8,(%rsp)
    const CALL: [u8; 5] = [0xe8, 0, 0, 0, 0]; // call
    const RELOAD: [u8; 4] = [0x4c, 0x8b, 0x04, 0x24]; // mov (%rsp),%r8

    fn code(between: &[u8]) -> Vec<Instruction> {
        let mut bytes = STORE.to_vec();
        bytes.extend_from_slice(between);
        bytes.extend_from_slice(&RELOAD);
        decode(&bytes)
    }

    #[test]
    fn a_reload_across_a_call_is_the_register_spilled_there() {
        assert_eq!(find(&code(&CALL)), Some((0, Register::R8)));
        // A store to another slot (8(%rsp)) does not touch it.
        let other = [0x48, 0x89, 0x5c, 0x24, 0x08]; // mov %rbx,0x8(%rsp)
        assert_eq!(find(&code(&other)), Some((0, Register::R8)));
    }

    #[test]
    fn a_slot_that_may_be_written_or_moved_is_no_spill() {
        // movq $0,(%rsp): the slot written in between.
        assert_eq!(find(&code(&[0x48, 0xc7, 0x04, 0x24, 0, 0, 0, 0])), None);
        // movb $1,0x7(%rsp): one byte of it.
        assert_eq!(find(&code(&[0xc6, 0x44, 0x24, 0x07, 0x01])), None);
        // push %rbx: %rsp moves, (%rsp) is another slot.
        assert_eq!(find(&code(&[0x53])), None);
        // lea 0x8(%rsp),%rdi: a stack address escapes, so a call may write it.
        let mut escaping = vec![0x48, 0x8d, 0x7c, 0x24, 0x08];
        escaping.extend_from_slice(&CALL);
        assert_eq!(find(&code(&escaping)), None);
        // mov %rsp,%rdi: the same.
        assert_eq!(find(&code(&[0x48, 0x89, 0xe7])), None);
        // No store before the reload.
        assert_eq!(find(&decode(&[CALL.as_slice(), &RELOAD].concat())), None);
    }

    #[test]
    fn a_join_between_store_and_reload_stops_the_search() {
        let code = code(&CALL);
        let mut factory = InstructionInfoFactory::new();
        // The reload is jumped to from elsewhere (index 2 is a join point).
        assert_eq!(spilled(&code, 2, 0, false, |p| p == 2, &mut factory), None);
    }
}
