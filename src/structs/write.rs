//! Atomics by use, step 1b's vocabulary: what one decoded instruction does to a
//! register (`Write`: a copy, a constant added, a load from a member, a global's
//! address, a call's return value, …), for the walks back from a lock site (`structs::chain`); where a
//! jump goes; a register's DWARF number; the kernel's per-CPU offsets; which
//! registers an instruction writes (`Effect`, for `sole` and `reach`).

use iced_x86::{
    FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind, Register,
};

/// A 64-bit general register (not RIP, not none).
pub(super) fn full(r: Register) -> Option<Register> {
    (r != Register::None && r != Register::RIP && r.is_gpr64()).then_some(r)
}

/// What the instruction that last wrote a register did to it.
pub(super) enum Write {
    /// `mov from, reg`, `movsxd`, `cdqe`: the same value (for an index, the sign
    /// extension changes nothing of a non-negative one); true when 64 bits wide.
    Copy(Register, bool),
    /// `lea k(from), reg`
    Add(Register, i64),
    /// `add $k, reg` / `sub` / `inc` / `dec`: the register itself before, plus k.
    AddSelf(i64),
    /// `lea k(from, idx, s), reg`: plus an index of unknown stride.
    AddIndexed(Register, i64),
    /// `lea k(%rip), reg`
    Global(u64),
    /// `add from, reg`: two registers added, one a pointer, one an index.
    AddRegister(Register),
    /// `mov k(from[, idx, s]), reg`: a pointer loaded from memory.
    Load(Register, i64, bool),
    /// `mov k(%rip), reg`: a pointer loaded from a global.
    LoadGlobal(u64),
    /// `mov $k, reg` (64-bit): an absolute address (the kernel's code model).
    Constant(u64),
    /// `add k(,idx,s), reg` (`segment`: `add %gs:k, reg`): plus a value loaded
    /// from a table at k; the register itself before, plus that.
    AddLoaded { address: u64, segment: bool },
    /// `call f` writing `%rax`: the value the call returning to this address
    /// (the next instruction's) left there.
    Returned(u64),
    /// Anything else (a call's `%rdx`, arithmetic, a load of another size).
    Other,
}

/// Whether control can go on from `i` to the instruction after it: not after a
/// jump, an indirect jump, a return, `ud2`/`int3` or bytes that decode to nothing.
pub(super) fn falls_through(i: &Instruction) -> bool {
    !i.is_invalid()
        && !matches!(
            i.flow_control(),
            FlowControl::UnconditionalBranch
                | FlowControl::IndirectBranch
                | FlowControl::Return
                | FlowControl::Exception
                | FlowControl::Interrupt
        )
}

/// Whether `i` writes `register`. A call writes the return registers; others it
/// leaves as they were (the compiler reads them after it only if so).
pub(super) fn writes(
    i: &Instruction,
    register: Register,
    factory: &mut InstructionInfoFactory,
) -> bool {
    if i.flow_control() == FlowControl::Call {
        return matches!(register, Register::RAX | Register::RDX);
    }
    factory.info(i).used_registers().iter().any(|u| {
        u.register().full_register() == register
            && !matches!(u.access(), OpAccess::Read | OpAccess::CondRead)
    })
}

/// What instruction `i`, which writes `register`, did to it (see `Write`).
pub(super) fn write_of(i: &Instruction, register: Register) -> Write {
    if i.flow_control() == FlowControl::Call {
        return if register == Register::RAX {
            Write::Returned(i.next_ip())
        } else {
            Write::Other
        };
    }
    let to_register = i.op_count() >= 1
        && i.op0_kind() == OpKind::Register
        && i.op0_register().full_register() == register;
    if !to_register {
        return Write::Other;
    }
    let imm = || -> Option<i64> {
        (i.op_count() == 2
            && matches!(
                i.op1_kind(),
                OpKind::Immediate8
                    | OpKind::Immediate8to32
                    | OpKind::Immediate8to64
                    | OpKind::Immediate32
                    | OpKind::Immediate32to64
            ))
        .then(|| i.immediate(1) as i64)
    };
    let plain = i.segment_prefix() == Register::None;
    match i.mnemonic() {
        Mnemonic::Mov | Mnemonic::Movsxd
            if i.op_count() == 2 && i.op1_kind() == OpKind::Register =>
        {
            let from = i.op1_register().full_register();
            // A 64-bit copy, or a 32-bit one (mov zero-extends, movsxd sign-extends).
            if from.is_gpr64() && i.op1_register().size() >= 4 {
                Write::Copy(
                    from,
                    i.op1_register().size() == 8 && i.mnemonic() == Mnemonic::Mov,
                )
            } else {
                Write::Other
            }
        }
        Mnemonic::Cdqe => Write::Copy(Register::RAX, false),
        Mnemonic::Lea if plain => {
            let b = i.memory_base();
            let d = i.memory_displacement64() as i64;
            if b == Register::RIP {
                return Write::Global(i.ip_rel_memory_address());
            }
            match (full(b), full(i.memory_index())) {
                (Some(b), None) => Write::Add(b, d),
                (Some(b), Some(_)) => Write::AddIndexed(b, d),
                _ => Write::Other,
            }
        }
        // `mov %gs:k, reg`: a pointer loaded from the per-CPU variable at k (the
        // kernel's `current`), which the globals describe like any other.
        Mnemonic::Mov
            if i.segment_prefix() == Register::GS
                && i.op_count() == 2
                && i.op1_kind() == OpKind::Memory
                && i.op0_register().size() == 8
                && i.memory_base() == Register::None
                && i.memory_index() == Register::None =>
        {
            Write::LoadGlobal(i.memory_displacement64())
        }
        Mnemonic::Mov
            if plain
                && i.op_count() == 2
                && i.op1_kind() == OpKind::Memory
                && i.op0_register().size() == 8 =>
        {
            if i.memory_base() == Register::RIP {
                return Write::LoadGlobal(i.ip_rel_memory_address());
            }
            match full(i.memory_base()) {
                Some(b) => Write::Load(
                    b,
                    i.memory_displacement64() as i64,
                    i.memory_index() != Register::None,
                ),
                None => Write::Other,
            }
        }
        Mnemonic::Add
            if i.op0_register().size() == 8
                && i.op_count() == 2
                && i.op1_kind() == OpKind::Register
                && i.op1_register().is_gpr64() =>
        {
            Write::AddRegister(i.op1_register())
        }
        Mnemonic::Add
            if i.op0_register().size() == 8
                && i.op_count() == 2
                && i.op1_kind() == OpKind::Memory
                && i.memory_base() == Register::None =>
        {
            let segment = i.segment_prefix() == Register::GS;
            let indexed = i.memory_index() != Register::None;
            if (segment && !indexed) || (plain && indexed) {
                Write::AddLoaded {
                    address: i.memory_displacement64(),
                    segment,
                }
            } else {
                Write::Other
            }
        }
        Mnemonic::Mov
            if i.op_count() == 2
                && i.op0_register().size() == 8
                && matches!(i.op1_kind(), OpKind::Immediate32to64 | OpKind::Immediate64) =>
        {
            Write::Constant(i.immediate(1))
        }
        Mnemonic::Add if i.op0_register().size() == 8 => imm().map_or(Write::Other, Write::AddSelf),
        Mnemonic::Sub if i.op0_register().size() == 8 => {
            imm().map_or(Write::Other, |k| Write::AddSelf(k.wrapping_neg()))
        }
        Mnemonic::Inc if i.op_count() == 1 => Write::AddSelf(1),
        Mnemonic::Dec if i.op_count() == 1 => Write::AddSelf(-1),
        _ => Write::Other,
    }
}

/// The caller-saved registers (DWARF numbers): a call defines them.
const CALL_DEFINES: u16 = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 4) | (1 << 5) | 0x0f00;

/// What one instruction does to the registers (by DWARF number): which it defines,
/// and which it may or may not define (`cmov`); `unknown`: it could not be decoded.
#[derive(Clone, Copy, Default)]
pub(super) struct Effect {
    pub(super) defines: u16,
    pub(super) maybe: u16,
    pub(super) unknown: bool,
}

impl Effect {
    /// Whether the instruction writes `register` (surely or maybe; a call: the
    /// caller-saved ones).
    pub(super) fn writes(&self, register: Register) -> bool {
        dwarf_register(register).is_some_and(|r| (self.defines | self.maybe) & (1 << r) != 0)
    }

    /// Whether the instruction may or may not write `register` (a `cmov`).
    pub(super) fn maybe_writes(&self, register: Register) -> bool {
        dwarf_register(register).is_some_and(|r| self.maybe & (1 << r) != 0)
    }
}

/// The effect of each instruction of `code` and then of `cold`'s, with one
/// instruction information lookup each (`sole` and `reach` share them).
pub(super) fn effects(
    code: &[Instruction],
    cold: &[Instruction],
    factory: &mut InstructionInfoFactory,
) -> Vec<Effect> {
    code.iter()
        .chain(cold)
        .map(|i| effect(i, factory))
        .collect()
}

/// What `i` defines (see `Effect`).
pub(super) fn effect(i: &Instruction, factory: &mut InstructionInfoFactory) -> Effect {
    if i.is_invalid() {
        return Effect {
            unknown: true,
            ..Effect::default()
        };
    }
    if i.flow_control() == FlowControl::Call {
        return Effect {
            defines: CALL_DEFINES,
            ..Effect::default()
        };
    }
    let mut e = Effect::default();
    for u in factory.info(i).used_registers() {
        let full = u.register().full_register();
        let Some(r) = full.is_gpr64().then(|| dwarf_register(full)).flatten() else {
            continue;
        };
        match u.access() {
            OpAccess::Write | OpAccess::ReadWrite => e.defines |= 1 << r,
            OpAccess::CondWrite | OpAccess::ReadCondWrite => e.maybe |= 1 << r,
            _ => {}
        }
    }
    e
}

/// Where a direct jump or conditional branch goes (calls return to the next
/// instruction, so their targets are function entries, not join points).
pub(super) fn jump_target(i: &Instruction) -> Option<u64> {
    match i.flow_control() {
        FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch
            if matches!(
                i.op0_kind(),
                OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
            ) =>
        {
            Some(i.near_branch_target())
        }
        _ => None,
    }
}

/// The x86-64 DWARF register number of a 64-bit general register (System V psABI).
pub(super) fn dwarf_register(r: Register) -> Option<u16> {
    Some(match r {
        Register::RAX => 0,
        Register::RDX => 1,
        Register::RCX => 2,
        Register::RBX => 3,
        Register::RSI => 4,
        Register::RDI => 5,
        Register::RBP => 6,
        Register::RSP => 7,
        Register::R8 => 8,
        Register::R9 => 9,
        Register::R10 => 10,
        Register::R11 => 11,
        Register::R12 => 12,
        Register::R13 => 13,
        Register::R14 => 14,
        Register::R15 => 15,
        _ => return None,
    })
}

/// The Linux kernel's per-CPU offsets, from the symbol table: `per_cpu_ptr(&v, cpu)`
/// is `mov $v,%rax; add __per_cpu_offset(,%rdx,8),%rax` and `this_cpu_ptr(&v)` is
/// `add %gs:this_cpu_off,%rax`: the value stays a pointer to `v` (one CPU's copy,
/// laid out the same), so the walk goes on through the add.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PerCpu {
    /// The address of `__per_cpu_offset` (an array indexed by CPU).
    pub(super) offsets: Option<u64>,
    /// The per-CPU address of `this_cpu_off` (read through `%gs:`).
    pub(super) this_cpu_off: Option<u64>,
}
