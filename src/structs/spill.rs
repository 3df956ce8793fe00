//! Atomics by use, step 1e: a pointer reloaded from a stack spill slot
//! (`mov %r8,(%rsp)` … `call` … `mov (%rsp),%r8`) is the register that was stored
//! there. The store is looked for on straight-line code before the reload, in
//! functions whose stack addresses do not escape (no `lea k(%rsp)`, no copy of
//! `%rsp`): then only an `%rsp`-based store can write the slot, and a call cannot.
//! Anything else that may write the slot or move `%rsp` in between stops the
//! search, and the value stays a load (as before).

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
        if i.is_invalid()
            || matches!(
                i.flow_control(),
                FlowControl::UnconditionalBranch
                    | FlowControl::IndirectBranch
                    | FlowControl::Return
                    | FlowControl::Exception
                    | FlowControl::Interrupt
            )
        {
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
