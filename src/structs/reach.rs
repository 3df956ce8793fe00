//! Atomics by use, step 1g: the one definition reaching an instruction. Where a
//! chain's walk back stops (a join with too many ways or ways that disagree, the
//! look-back spent), a forward pass over the whole function's control flow (its
//! `.cold` part included) says which instructions' writes of the register can
//! reach that point; when exactly one can, the value there is that instruction's
//! (a callee-saved register set before a run of calls and jumps, an argument
//! register copied once). Definitions: every instruction writing the register, a
//! call for the caller-saved ones (its value followed for `%rax` only: the callee's
//! return value, `Link::Returned`), the function's
//! entry; a conditional write (`cmov`) or an undecodable byte makes the value
//! unknown. Edges: jumps and conditional branches inside the function, and falling
//! through any instruction but an unconditional jump or a return (a call, `ud2` of
//! `WARN`, `int3` padding: more edges only add definitions). A jump into the
//! function from elsewhere (another chunk than its own `.cold` part) makes every
//! register unknown at its target; a function with an indirect jump, another
//! function jumping into its middle, or a chunk that is no whole function, gives
//! nothing. Limits as `sole`'s: code that alternatives patch in over bytes here
//! (`.altinstr_replacement`) is not seen.

use super::sole::Part;
use super::write::{dwarf_register, jump_target, Effect};
use iced_x86::{FlowControl, Instruction, OpKind, Register};
use std::cell::OnceCell;

/// No definition (a block not reached), as a set's padding.
const NONE: u32 = u32::MAX;
/// More definitions than a set holds, or an unknown one (first of a set).
const MANY: u32 = u32::MAX - 1;
/// The value the register had on entry to the function.
const ENTRY: u32 = u32::MAX - 2;

/// The definitions one register's value may come from, at most `WRITES`.
const WRITES: usize = 4;

/// The definitions that may reach, per register (by DWARF number): instruction
/// indices or `ENTRY`, sorted, padded with `NONE`; `[MANY, ..]`: unknown.
type Defs = [u32; WRITES];

/// No successor block.
const NO: u32 = u32::MAX;

const EMPTY: Defs = [NONE; WRITES];
const UNKNOWN: Defs = [MANY, NONE, NONE, NONE];

/// Where the value of a register at some instruction may come from: the write at
/// `code[at - 1]`, walked back from `at` (`register` there), for each write that
/// reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Source {
    /// The writing instruction; `ON_ENTRY` for the value on entry to the function.
    pub(super) writer: usize,
    /// Walk back from here (`writer + 1` for a write, `writer` for a `cmov`'s
    /// source register, before it runs).
    pub(super) at: usize,
    pub(super) register: Register,
}

/// `Source::writer` for the register's value on entry to the function.
pub(super) const ON_ENTRY: usize = usize::MAX;

/// The reaching definitions of a function, as the state at each block's start.
#[derive(Default)]
pub(super) struct Reaching {
    /// The first instruction index of each block, sorted (indices over the hot
    /// code, then the `.cold` part's after them).
    starts: Vec<usize>,
    /// Each block's successors, `NO` for none.
    next: Vec<[u32; 2]>,
    /// The blocks jumped to from other chunks (every register unknown there).
    unknown: Vec<usize>,
    /// Per register, the definitions at each block's start, worked out the first
    /// time a walk asks about that register.
    entry: [OnceCell<Vec<Defs>>; 16],
    effects: Vec<Effect>,
    /// Instructions of the hot part (the cold part's follow them).
    hot: usize,
}

impl Reaching {
    /// Computed over `code` (spanning `hot`) and its `.cold` part; `whole`: the
    /// chunk is a function; `foreign`: the targets of jumps from named code into
    /// other functions, sorted; `outside`: every jump target from another chunk.
    pub(super) fn of(
        code: &[Instruction],
        hot: &Part,
        cold: Option<&Part>,
        (whole, foreign, outside): (bool, &[u64], &[u64]),
        effects: &[Effect],
    ) -> Reaching {
        let none = Reaching::default();
        let cold_len = cold.map_or(0, |c| c.code.len());
        if !whole || code.is_empty() || effects.len() != code.len() + cold_len {
            return none;
        }
        let cold_code: &[Instruction] = cold.map_or(&[], |c| c.code.as_slice());
        let all: Vec<&Instruction> = code.iter().chain(cold_code).collect();
        let within = |a: u64, b: u64, t: u64| (a..b).contains(&t);
        let in_cold = |t: u64| cold.is_some_and(|c| within(c.address, c.end, t));
        let in_hot = |t: u64| within(hot.address, hot.end, t);
        // Another function jumping into this one's middle: nothing is known.
        let lo = foreign.partition_point(|&t| t <= hot.address);
        let hi = foreign.partition_point(|&t| t < hot.end);
        if lo < hi {
            return none;
        }
        if all
            .iter()
            .any(|i| i.flow_control() == FlowControl::IndirectBranch)
        {
            return none;
        }
        // The index of the instruction at address `t`, in either part.
        let index = |t: u64| -> Option<usize> {
            if in_hot(t) {
                code.binary_search_by_key(&t, |i| i.ip()).ok()
            } else if in_cold(t) {
                cold_code
                    .binary_search_by_key(&t, |i| i.ip())
                    .ok()
                    .map(|k| k + code.len())
            } else {
                None
            }
        };
        let n = all.len();
        let mut leader = vec![false; n];
        let mut unknown_entry = vec![false; n];
        leader[0] = true;
        if !code.is_empty() && code.len() < n {
            leader[code.len()] = true;
        }
        let mut own_targets = Vec::new();
        let mut hot_targets = Vec::new();
        for (k, i) in all.iter().enumerate() {
            if let Some(t) = jump_target(i) {
                match index(t) {
                    Some(j) => leader[j] = true,
                    // A jump into the middle of an instruction, as decoded here.
                    None if in_hot(t) || in_cold(t) => return none,
                    None => {}
                }
                if k >= code.len() {
                    own_targets.push(t);
                } else if in_cold(t) {
                    hot_targets.push(t);
                }
            }
            if (jump_target(i).is_some() || ends_block(i)) && k + 1 < n {
                leader[k + 1] = true;
            }
        }
        own_targets.sort_unstable();
        hot_targets.sort_unstable();
        // Another function jumping into the `.cold` part: nothing is known.
        if let Some(c) = cold {
            let lo = foreign.partition_point(|&t| t < c.address);
            let hi = foreign.partition_point(|&t| t < c.end);
            if foreign[lo..hi]
                .iter()
                .any(|t| hot_targets.binary_search(t).is_err())
            {
                return none;
            }
        }
        // Jumps from other chunks than the `.cold` part: an unknown value there.
        for &t in outside {
            if !(in_hot(t) || in_cold(t)) || own_targets.binary_search(&t).is_ok() {
                continue;
            }
            match index(t) {
                Some(j) => {
                    leader[j] = true;
                    unknown_entry[j] = true;
                }
                None => return none,
            }
        }
        let starts: Vec<usize> = (0..n).filter(|&k| leader[k]).collect();
        let block_of = |k: usize| starts.partition_point(|&s| s <= k) - 1;
        // Each block's successors (`NO`: none).
        let mut next = Vec::with_capacity(starts.len());
        for (b, _) in starts.iter().enumerate() {
            let last = starts.get(b + 1).map_or(n, |&s| s) - 1;
            let i = all[last];
            let mut to = [NO; 2];
            if let Some(j) = jump_target(i).and_then(index) {
                to[0] = block_of(j) as u32;
            }
            let falls = !matches!(
                i.flow_control(),
                FlowControl::UnconditionalBranch
                    | FlowControl::IndirectBranch
                    | FlowControl::Return
            );
            // The hot part's last instruction does not fall into the cold part.
            if falls && last + 1 < n && last + 1 != code.len() {
                to[1] = (b + 1) as u32;
            }
            next.push(to);
        }
        let unknown: Vec<usize> = (0..starts.len())
            .filter(|&b| unknown_entry[starts[b]])
            .collect();
        Reaching {
            starts,
            next,
            unknown,
            entry: Default::default(),
            effects: effects.to_vec(),
            hot: code.len(),
        }
    }

    /// The writes of `register` that reach `code[at]` (before it runs), each
    /// followed to its source, when all are instructions of the hot part that
    /// say where their value comes from (a call only for `%rax`), or the value
    /// on entry.
    pub(super) fn sources(
        &self,
        at: usize,
        register: Register,
        code: &[Instruction],
    ) -> Option<Vec<Source>> {
        let r = usize::from(dwarf_register(register)?);
        if at >= self.hot || self.starts.is_empty() {
            return None;
        }
        let b = self.starts.partition_point(|&s| s <= at) - 1;
        let mut defs = self.entry[r].get_or_init(|| self.flow(r))[b];
        for k in self.starts[b]..at {
            apply_one(&mut defs, k, self.effects[k], r);
        }
        let mut out = Vec::new();
        for &d in defs.iter().take_while(|&&d| d != NONE) {
            if d == ENTRY {
                // The value the register had on entry to the function.
                out.push(Source {
                    writer: ON_ENTRY,
                    at: ON_ENTRY,
                    register,
                });
                continue;
            }
            if d > ENTRY {
                return None;
            }
            let w = d as usize;
            let i = code.get(w)?;
            // A call's %rax is the callee's return value (`Link::Returned`); its
            // other registers say nothing.
            let call = i.flow_control() == FlowControl::Call;
            if (call && register != Register::RAX) || i.is_invalid() {
                return None;
            }
            let maybe = self.effects[w].maybe & (1 << r) != 0;
            out.push(if maybe {
                // `cmov src, reg`: the value it may move (the one before it is
                // among the other writes).
                let from = (i.op_count() == 2 && i.op1_kind() == OpKind::Register)
                    .then(|| i.op1_register().full_register())
                    .filter(|f| f.is_gpr64())?;
                Source {
                    writer: w,
                    at: w,
                    register: from,
                }
            } else {
                Source {
                    writer: w,
                    at: w + 1,
                    register,
                }
            });
        }
        (!out.is_empty()).then_some(out)
    }
}

impl Reaching {
    /// The definitions of register `r` at each block's start: the function's
    /// entry at the first, unknown where other chunks jump, and at every other
    /// the union over the blocks flowing into it, to a fixed point.
    fn flow(&self, r: usize) -> Vec<Defs> {
        let blocks = self.starts.len();
        let mut entry = vec![EMPTY; blocks];
        let mut queued = vec![false; blocks];
        entry[0] = [ENTRY, NONE, NONE, NONE];
        let mut work = vec![0usize];
        queued[0] = true;
        for &b in &self.unknown {
            entry[b] = UNKNOWN;
            if !queued[b] {
                queued[b] = true;
                work.push(b);
            }
        }
        let end = self.effects.len();
        while let Some(b) = work.pop() {
            queued[b] = false;
            let last = self.starts.get(b + 1).map_or(end, |&s| s);
            let mut defs = entry[b];
            for k in self.starts[b]..last {
                apply_one(&mut defs, k, self.effects[k], r);
            }
            for s in self.next[b] {
                let s = s as usize;
                if s < blocks && union(&mut entry[s], &defs) && !queued[s] {
                    queued[s] = true;
                    work.push(s);
                }
            }
        }
        entry
    }
}

/// Whether control may not fall through `i` to the next instruction, or goes
/// elsewhere too (a block ends after it).
fn ends_block(i: &Instruction) -> bool {
    matches!(
        i.flow_control(),
        FlowControl::UnconditionalBranch
            | FlowControl::ConditionalBranch
            | FlowControl::IndirectBranch
            | FlowControl::Return
    )
}

/// Register `r`'s definitions after instruction `k` with effect `e`: a write
/// replaces them, a conditional one adds itself.
fn apply_one(defs: &mut Defs, k: usize, e: Effect, r: usize) {
    if e.unknown {
        *defs = UNKNOWN;
    } else if e.maybe & (1 << r) != 0 {
        let mut one = EMPTY;
        one[0] = k as u32;
        union(defs, &one);
    } else if e.defines & (1 << r) != 0 {
        *defs = EMPTY;
        defs[0] = k as u32;
    }
}

/// `into` ∪ `from`, `UNKNOWN` past `WRITES` definitions; whether `into` changed.
fn union(into: &mut Defs, from: &Defs) -> bool {
    if into[0] == MANY {
        return false;
    }
    if from[0] == MANY {
        *into = UNKNOWN;
        return true;
    }
    let mut out = *into;
    let mut n = out.iter().take_while(|&&d| d != NONE).count();
    for &d in from.iter().take_while(|&&d| d != NONE) {
        if out[..n].contains(&d) {
            continue;
        }
        if n == WRITES {
            *into = UNKNOWN;
            return true;
        }
        out[n] = d;
        n += 1;
    }
    out[..n].sort_unstable();
    let changed = out != *into;
    *into = out;
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structs::decode_at_0x1000 as decode;
    use iced_x86::InstructionInfoFactory;

    // lea 0x28(%rdi),%rbx; 4 × (test; je L); call; L: lock incl (%rbx);
    // mov 0x8(%rdi),%rbx; lock incl (%rbx); cmovne %rdi,%rbx; lock incl (%rbx); ret
    const JOINED: [u8; 44] = [
        0x48, 0x8d, 0x5f, 0x28, 0x85, 0xf6, 0x74, 0x12, 0x85, 0xd2, 0x74, 0x0e, 0x85, 0xc9, 0x74,
        0x0a, 0x45, 0x85, 0xc0, 0x74, 0x05, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xf0, 0xff, 0x03, 0x48,
        0x8b, 0x5f, 0x08, 0xf0, 0xff, 0x03, 0x48, 0x0f, 0x45, 0xdf, 0xf0, 0xff, 0x03, 0xc3,
    ];

    /// The reaching definitions of `code`, one function at 0x1000.
    fn reaching(code: &[Instruction], whole: bool, outside: &[u64]) -> Reaching {
        let hot = Part {
            address: 0x1000,
            end: code.last().map_or(0x1000, |i| i.next_ip()),
            code: Vec::new(),
        };
        let mut factory = InstructionInfoFactory::new();
        let effects = crate::structs::write::effects(code, &[], &mut factory);
        Reaching::of(code, &hot, None, (whole, &[], outside), &effects)
    }

    fn write(writer: usize, register: Register) -> Source {
        Source {
            writer,
            at: writer + 1,
            register,
        }
    }

    #[test]
    fn a_register_written_before_a_call_and_a_join_of_five_ways_has_that_write() {
        let code = decode(&JOINED);
        assert_eq!(code[10].ip(), 0x101a);
        let r = reaching(&code, true, &[]);
        // At the first lock: only the lea reaches %rbx, over the call (which
        // keeps it) and the five ways in.
        assert_eq!(
            r.sources(10, Register::RBX, &code),
            Some(vec![write(0, Register::RBX)])
        );
        // At the second: the load after it replaced it.
        assert_eq!(
            r.sources(12, Register::RBX, &code),
            Some(vec![write(11, Register::RBX)])
        );
        // After the cmov: the load, or the cmov's source %rdi before it.
        let moved = Source {
            writer: 13,
            at: 13,
            register: Register::RDI,
        };
        assert_eq!(
            r.sources(14, Register::RBX, &code),
            Some(vec![write(11, Register::RBX), moved])
        );
    }

    #[test]
    fn a_call_for_all_but_rax_or_a_jump_from_elsewhere_says_nothing() {
        let code = decode(&JOINED);
        let r = reaching(&code, true, &[]);
        // %rax: the call's return value or the value on entry, both said.
        let entry = Source {
            writer: ON_ENTRY,
            at: ON_ENTRY,
            register: Register::RAX,
        };
        let mut rax = r.sources(10, Register::RAX, &code).expect("two writes");
        rax.sort_by_key(|s| s.writer);
        assert_eq!(rax, vec![write(9, Register::RAX), entry]);
        // %rdi: the call (which may change it) or the value on entry: nothing.
        assert_eq!(r.sources(10, Register::RDI, &code), None);
        // Another chunk jumps to the first lock: %rbx may be anything there.
        let r = reaching(&code, true, &[0x101a]);
        assert_eq!(r.sources(10, Register::RBX, &code), None);
        // The same after the write that follows it.
        assert_eq!(
            r.sources(12, Register::RBX, &code),
            Some(vec![write(11, Register::RBX)])
        );
        // Not a whole function: nothing.
        assert_eq!(
            reaching(&code, false, &[]).sources(10, Register::RBX, &code),
            None
        );
    }

    #[test]
    fn the_walk_falls_back_on_the_write_that_reaches_a_join_of_too_many_ways() {
        use crate::structs::chain::{chains, Chunk, PerCpu};
        use crate::structs::locked::site;
        use crate::structs::types::Link;
        let chunk = Chunk {
            address: 0x1000,
            bytes: &JOINED,
            name: 0,
            entry: true,
            whole: true,
            per_cpu: PerCpu::default(),
        };
        let code = decode(&JOINED);
        let sites: Vec<_> = code.iter().filter_map(|i| site(i, 0)).collect();
        let found = chains(&chunk, &code, (None, &[]), sites, &[]);
        let s = &found[0];
        assert_eq!(s.address, 0x101a);
        // Five ways into 0x101a are more than a join follows, and %rbx has two
        // writers (no `sole`): the one write reaching the lock is the lea, whose
        // way goes on to %rdi + 0x28.
        let Some(&Link::Reaching { address, way }) = s.chain.last() else {
            panic!("{:?}", s.chain);
        };
        assert_eq!(address, 0x101a);
        assert!(matches!(
            s.paths[way as usize].first(),
            Some(&Link::Register {
                address: 0x1000,
                register: 5,
                offset: 0x28,
                index: false,
            })
        ));
        assert!(!s.chain.iter().any(|l| matches!(l, Link::Sole { .. })));
    }

    #[test]
    fn a_call_reaching_rax_is_its_return_value_and_says_nothing_of_rdx() {
        // test %edi,%edi; je L1; call f; jmp L2; L1: call g; L2: lock incl (%rax); ret
        let bytes = [
            0x85, 0xff, 0x74, 0x07, 0xe8, 0x0b, 0x00, 0x00, 0x00, 0xeb, 0x05, 0xe8, 0x00, 0x00,
            0x00, 0x00, 0xf0, 0xff, 0x00, 0xc3,
        ];
        let code = decode(&bytes);
        assert_eq!(code[5].ip(), 0x1010);
        let r = reaching(&code, true, &[]);
        // Both calls reach the lock's %rax: each is walked back from after it.
        assert_eq!(
            r.sources(5, Register::RAX, &code),
            Some(vec![write(2, Register::RAX), write(4, Register::RAX)])
        );
        // %rdx, which a call also defines, says nothing.
        assert_eq!(r.sources(5, Register::RDX, &code), None);
    }
}
