//! Atomics by use, step 1f: a register with one writer in its function. Where a
//! chain's walk back stops (a join it cannot follow, the look-back spent), the value
//! a site reads in a register that only one instruction of the whole function
//! (with its `.cold` part) writes is that instruction's: compiled code reads a
//! register only after a definition on every way there, and no other definition
//! exists. It holds for the registers whose value on entry means nothing: the
//! callee-saved ones (`%rbx`, `%rbp`, `%r12`–`%r15`, which calls keep), where an
//! epilogue's `pop`/`leave` restoring the caller's value is no definition, and
//! `%rax`, `%r10`, `%r11`, which every call defines too (a call as `%rax`'s one
//! writer: the callee's return value, `Link::Returned`). A writer that reads the
//! register itself (`add $8,%r12`) needs another definition before it, so it is
//! none. A `.cold` part itself, and a function another function jumps into the
//! middle of, are left out. Limits: jumps from unnamed code (the kernel's
//! `.altinstr_replacement`, which only patches code in place) are not counted as
//! entries, and an inline `asm` whose output register its bytes in the function do
//! not write (an `ALTERNATIVE` with an empty original) would be a definition not
//! seen.

use super::write::{jump_target, write_of, Effect, Write};
use iced_x86::{FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpKind, Register};
use std::collections::HashMap;

/// The registers the rule applies to, and whether calls define them.
const REGISTERS: [(Register, bool); 9] = [
    (Register::RBX, false),
    (Register::RBP, false),
    (Register::R12, false),
    (Register::R13, false),
    (Register::R14, false),
    (Register::R15, false),
    (Register::RAX, true),
    (Register::R10, true),
    (Register::R11, true),
];

/// A function's `.cold` part (GCC moves its unlikely paths there; they jump back).
pub(super) struct Part {
    pub(super) address: u64,
    pub(super) end: u64,
    /// Its instructions (empty for the function's own part, passed separately).
    pub(super) code: Vec<Instruction>,
}

/// The functions of a binary as `sole` needs them: each one's `.cold` part (GCC's
/// `foo.cold`), whose writes count too, and the jumps from named code into other
/// functions (not from a `.cold` part, nor from unnamed code).
pub(super) struct Functions<'c> {
    cold: HashMap<&'c str, usize>,
    /// Their targets, sorted.
    pub(super) foreign: Vec<u64>,
}

impl<'c> Functions<'c> {
    /// From the chunks' function names (`name(k)` of chunk `k`, of `count`) and
    /// each chunk's jumps out of it.
    pub(super) fn new<'j>(
        name: impl Fn(usize) -> &'c str,
        count: usize,
        jumps: impl Iterator<Item = (usize, &'j [u64])>,
    ) -> Functions<'c> {
        let mut foreign: Vec<u64> = jumps
            .filter(|&(k, _)| !name(k).is_empty() && !name(k).ends_with(".cold"))
            .flat_map(|(_, j)| j.iter().copied())
            .collect();
        foreign.sort_unstable();
        foreign.dedup();
        let cold = (0..count)
            .filter(|&k| name(k).ends_with(".cold"))
            .map(|k| (name(k), k))
            .collect();
        Functions { cold, foreign }
    }

    /// The chunk holding the `.cold` part of function `name`.
    pub(super) fn cold_part(&self, name: &str) -> Option<usize> {
        self.cold.get(format!("{name}.cold").as_str()).copied()
    }
}

/// For each register of `REGISTERS`, the index of the one instruction of `code`
/// that writes it, when there is exactly one (and it does not read the register).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SoleWriters([Option<usize>; 9]);

impl SoleWriters {
    /// Computed over a whole function: `code` (spanning `hot`) and its `.cold` part,
    /// whose writes count too. `whole`: the chunk is a function (see the file's
    /// header); a jump from another function into this one's middle (`foreign`:
    /// the targets of jumps from named code into other functions, sorted) makes
    /// nothing known. `effects`: what each instruction of `code` and then of the
    /// `.cold` part writes (`reach::effects`).
    pub(super) fn of(
        code: &[Instruction],
        hot: &Part,
        cold: Option<&Part>,
        (whole, foreign): (bool, &[u64]),
        effects: &[Effect],
        factory: &mut InstructionInfoFactory,
    ) -> SoleWriters {
        let mut out = SoleWriters::default();
        let cold_len = cold.map_or(0, |c| c.code.len());
        if !whole || code.is_empty() || effects.len() != code.len() + cold_len {
            return out;
        }
        let inside = |t: u64| {
            (hot.address..hot.end).contains(&t)
                || cold.is_some_and(|c| (c.address..c.end).contains(&t))
        };
        let lo = foreign.partition_point(|&t| t <= hot.address);
        let hi = foreign.partition_point(|&t| t < hot.end);
        if lo < hi {
            return out;
        }
        let mut count = [0u32; 9];
        let parts = [Some(code), cold.map(|c| c.code.as_slice())];
        for (p, part) in parts.iter().enumerate() {
            let Some(part) = part else { continue };
            let effects = &effects[if p == 0 { 0 } else { code.len() }..];
            for (k, i) in part.iter().enumerate() {
                if i.is_invalid() {
                    continue;
                }
                let call = i.flow_control() == FlowControl::Call;
                let e = effects[k];
                let mut restore = None;
                for (r, (register, by_calls)) in REGISTERS.iter().enumerate() {
                    let written = if call {
                        *by_calls
                    } else {
                        e.writes(*register)
                            && !*restore.get_or_insert_with(|| restores(part, k, &inside))
                    };
                    if written {
                        count[r] += 1;
                        // A call's value is followed for %rax only (the callee's
                        // return value); a writer in the `.cold` part is no
                        // instruction of `code`.
                        let returned = *register == Register::RAX;
                        out.0[r] = (p == 0 && (!call || returned)).then_some(k);
                    }
                }
            }
        }
        for r in 0..REGISTERS.len() {
            let Some(k) = out.0[r] else { continue };
            let own = matches!(
                write_of(&code[k], REGISTERS[r].0),
                Write::AddSelf(_) | Write::AddRegister(_) | Write::AddLoaded { .. }
            ) || reads(&code[k], REGISTERS[r].0, factory);
            if count[r] != 1 || own {
                out.0[r] = None;
            }
        }
        out
    }

    /// The one writer of `register`, when the rule gives one.
    pub(super) fn of_register(&self, register: Register) -> Option<usize> {
        let r = REGISTERS.iter().position(|x| x.0 == register)?;
        self.0[r]
    }
}

/// Whether `code[k]` is an epilogue's `pop`/`leave`: only more pops and stack
/// adjustments follow it up to a `ret` or a jump out of the function (a tail call,
/// the return thunk; `inside`: an address of the function).
fn restores(code: &[Instruction], k: usize, inside: &impl Fn(u64) -> bool) -> bool {
    if !matches!(code[k].mnemonic(), Mnemonic::Pop | Mnemonic::Leave) {
        return false;
    }
    for i in &code[k + 1..] {
        match i.mnemonic() {
            Mnemonic::Pop => {}
            Mnemonic::Add | Mnemonic::Lea
                if i.op0_kind() == OpKind::Register && i.op0_register() == Register::RSP => {}
            Mnemonic::Ret => return true,
            Mnemonic::Jmp => return jump_target(i).is_some_and(|t| !inside(t)),
            _ => return false,
        }
    }
    false
}

/// Whether `i` reads `register` (beyond writing it).
fn reads(i: &Instruction, register: Register, factory: &mut InstructionInfoFactory) -> bool {
    use iced_x86::OpAccess;
    factory.info(i).used_registers().iter().any(|u| {
        u.register().full_register() == register
            && matches!(
                u.access(),
                OpAccess::Read | OpAccess::CondRead | OpAccess::ReadWrite | OpAccess::ReadCondWrite
            )
    }) || factory
        .info(i)
        .used_memory()
        .iter()
        .any(|m| m.base().full_register() == register || m.index().full_register() == register)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structs::decode_at_0x1000 as decode;

    fn sole(bytes: &[u8], whole: bool) -> SoleWriters {
        let code = decode(bytes);
        let hot = Part {
            address: 0x1000,
            end: 0x1000 + bytes.len() as u64,
            code: Vec::new(),
        };
        let mut factory = InstructionInfoFactory::new();
        let effects = crate::structs::write::effects(&code, &[], &mut factory);
        SoleWriters::of(&code, &hot, None, (whole, &[]), &effects, &mut factory)
    }

    // push %r12; lea 0x28(%rdi),%r12; call 0; lock btsq $1,(%r12); pop %r12; ret
    const ONE: [u8; 24] = [
        0x41, 0x54, 0x4c, 0x8d, 0x67, 0x28, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x49, 0x0f, 0xba,
        0x2c, 0x24, 0x01, 0x41, 0x5c, 0xc3, 0x90, 0x90, 0x90,
    ];

    #[test]
    fn a_callee_saved_register_written_once_has_that_writer() {
        let s = sole(&ONE, true);
        // The lea (instruction 1); the epilogue's pop is no definition.
        assert_eq!(s.of_register(Register::R12), Some(1));
        // Not written at all: nothing.
        assert_eq!(s.of_register(Register::RBX), None);
        // The call (instruction 2) is %rax's one writer: its return value.
        assert_eq!(s.of_register(Register::RAX), Some(2));
        // %r10 the call defines too, but it returns nothing there.
        assert_eq!(s.of_register(Register::R10), None);
        // A chunk entered elsewhere than at its start: nothing is known.
        assert_eq!(sole(&ONE, false).of_register(Register::R12), None);
    }

    #[test]
    fn a_second_writer_or_a_writer_reading_the_register_is_none() {
        // push %r12; lea 0x28(%rdi),%r12; mov %rsi,%r12; pop %r12; ret
        let two = [
            0x41, 0x54, 0x4c, 0x8d, 0x67, 0x28, 0x49, 0x89, 0xf4, 0x41, 0x5c, 0xc3,
        ];
        assert_eq!(sole(&two, true).of_register(Register::R12), None);
        // push %r12; add $8,%r12; pop %r12; ret: it needs a value before.
        let own = [0x41, 0x54, 0x49, 0x83, 0xc4, 0x08, 0x41, 0x5c, 0xc3];
        assert_eq!(sole(&own, true).of_register(Register::R12), None);
        // A pop in the middle (something follows it): a definition.
        // push %r12; lea 0x28(%rdi),%r12; pop %r12; lock incl (%r12); ret
        let mid = [
            0x41, 0x54, 0x4c, 0x8d, 0x67, 0x28, 0x41, 0x5c, 0xf0, 0x41, 0xff, 0x04, 0x24, 0xc3,
        ];
        assert_eq!(sole(&mid, true).of_register(Register::R12), None);
    }

    #[test]
    fn a_walk_that_spends_its_look_back_falls_back_on_the_one_writer() {
        use crate::structs::chain::{chains, Chunk, PerCpu};
        use crate::structs::locked::site;
        use crate::structs::types::Link;
        // push %r12; lea 0x28(%rdi),%r12; 30 × nop; lock incl (%r12); pop %r12; ret
        let mut bytes = vec![0x41, 0x54, 0x4c, 0x8d, 0x67, 0x28];
        bytes.extend([0x90; 30]);
        bytes.extend([0xf0, 0x41, 0xff, 0x04, 0x24, 0x41, 0x5c, 0xc3]);
        let chunk = Chunk {
            address: 0x1000,
            bytes: &bytes,
            name: 0,
            entry: true,
            whole: true,
            per_cpu: PerCpu::default(),
        };
        let code = decode(&bytes);
        let sites: Vec<_> = code.iter().filter_map(|i| site(i, 0)).collect();
        let found = chains(&chunk, &code, (None, &[]), sites, &[]);
        let s = &found[0];
        // The walk back stops after 24 instructions; the chain says where the one
        // writer is, and that way goes on to %rdi (+0x28) at the lea.
        let Some(&Link::Sole { address, way }) = s.chain.get(1) else {
            panic!("{:?}", s.chain);
        };
        assert_eq!(address, 0x1002);
        assert!(matches!(
            s.paths[way as usize].first(),
            Some(&Link::Register {
                address: 0x1002,
                register: 5,
                offset: 0x28,
                ..
            })
        ));
        // Not a whole function (a `.cold` part): no such link.
        let cold = Chunk {
            whole: false,
            ..chunk
        };
        let sites: Vec<_> = code.iter().filter_map(|i| site(i, 0)).collect();
        let found = chains(&cold, &code, (None, &[]), sites, &[]);
        assert!(!found[0]
            .chain
            .iter()
            .any(|l| matches!(l, Link::Sole { .. })));
    }
}
