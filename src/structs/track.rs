//! Atomics by use, step 1c: value tracking across a loop's back edges. A chain
//! walked back from a lock site stops where control joins from elsewhere; when
//! that join is a loop head that only its own back edges jump to, and the loop's
//! body changes the register only by adding constants that sum to the same
//! non-zero stride on every way round, the register is an induction pointer
//! (`lea 0xb(%rdi),%rax` … `lock addq $1,(%rax)`; `add $24,%rax`; `jne`): its
//! value is what it was before the loop plus k·stride, so the walk goes on before
//! the loop with an index of that stride. Calls and any other write to the register
//! in the body make it untracked, as before.

use iced_x86::{FlowControl, Instruction};

/// The stride a register advances by each time round the loop whose head is
/// `code[head]`, when every jump there (`sources`: the instruction indices
/// jumping to it, `usize::MAX` for one from another chunk) is a back edge within
/// `span` instructions and the body only adds constants to it; None otherwise.
/// `step(i)` says what `i` does to the register: None when it leaves it alone,
/// `Some(Some(k))` when it adds k, `Some(None)` for any other write (the caller,
/// `chain`, knows how instructions write registers).
pub(super) fn induction(
    code: &[Instruction],
    head: usize,
    sources: &[(u64, usize)],
    span: usize,
    mut step: impl FnMut(&Instruction) -> Option<Option<i64>>,
) -> Option<i64> {
    if head == 0 || sources.is_empty() {
        return None;
    }
    // The loop is entered by falling into its head from the code before it.
    let before = &code[head - 1];
    if before.is_invalid()
        || matches!(
            before.flow_control(),
            FlowControl::UnconditionalBranch
                | FlowControl::IndirectBranch
                | FlowControl::Return
                | FlowControl::Exception
                | FlowControl::Interrupt
        )
    {
        return None;
    }
    let mut stride = None;
    for &(_, from) in sources {
        if from == usize::MAX || from < head || from - head > span {
            return None;
        }
        let mut total = 0i64;
        for i in &code[head..=from] {
            match step(i) {
                None => {}
                Some(Some(k)) => total = total.wrapping_add(k),
                Some(None) => return None,
            }
        }
        if total == 0 || stride.is_some_and(|s| s != total) {
            return None;
        }
        stride = Some(total);
    }
    stride
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structs::decode_at_0x1000 as decode;
    use iced_x86::{Mnemonic, OpKind, Register};

    /// What `i` does to `r`, for these tests: `add $k`, anything else writing it
    /// (a `mov` to it, a call for %rax), or nothing.
    fn on(r: Register) -> impl FnMut(&Instruction) -> Option<Option<i64>> {
        move |i: &Instruction| {
            if i.mnemonic() == Mnemonic::Call {
                return (r == Register::RAX).then_some(None);
            }
            let to_r = i.op_count() >= 1
                && i.op0_kind() == OpKind::Register
                && i.op0_register().full_register() == r
                && i.mnemonic() != Mnemonic::Cmp;
            if !to_r {
                return None;
            }
            Some(
                (i.mnemonic() == Mnemonic::Add && i.op1_kind() != OpKind::Register)
                    .then(|| i.immediate(1) as i64),
            )
        }
    }

    #[test]
    fn a_pointer_advanced_by_a_constant_round_a_loop_is_an_induction() {
        // GCC -O2 for `for (i = 0; i < 12; i++) __sync_fetch_and_add(&t->recs[i].hits, 1)`
        // over 24-byte records: lea 0xb(%rdi),%rax; add $0x12b,%rdi;
        // [head] lock addq $1,(%rax); add $0x18,%rax; cmp %rdi,%rax; jne head; ret
        let code = decode(&[
            0x48, 0x8d, 0x47, 0x0b, 0x48, 0x81, 0xc7, 0x2b, 0x01, 0x00, 0x00, 0xf0, 0x48, 0x83,
            0x00, 0x01, 0x48, 0x83, 0xc0, 0x18, 0x48, 0x39, 0xf8, 0x75, 0xf2, 0xc3,
        ]);
        assert_eq!(code[2].ip(), 0x100b);
        assert_eq!(code[5].near_branch_target(), 0x100b);
        let back = [(0x100b, 5)];
        assert_eq!(induction(&code, 2, &back, 96, on(Register::RAX)), Some(24));
        // %rdi is not written in the body: no induction (the join leaves it alone).
        assert_eq!(induction(&code, 2, &back, 96, on(Register::RDI)), None);
        // A jump to the head from before it: not only back edges.
        let mixed = [(0x100b, 0), (0x100b, 5)];
        assert_eq!(induction(&code, 2, &mixed, 96, on(Register::RAX)), None);
        // A jump from another chunk.
        let outside = [(0x100b, usize::MAX)];
        assert_eq!(induction(&code, 2, &outside, 96, on(Register::RAX)), None);
    }

    #[test]
    fn a_register_the_body_loads_or_calls_over_is_no_induction() {
        // [head] lock addq $1,(%rax); mov 8(%rax),%rax; jmp head  (a list walk)
        let code = decode(&[
            0x90, 0xf0, 0x48, 0x83, 0x00, 0x01, 0x48, 0x8b, 0x40, 0x08, 0xeb, 0xf5,
        ]);
        assert_eq!(code[3].near_branch_target(), 0x1001);
        assert_eq!(
            induction(&code, 1, &[(0x1001, 3)], 96, on(Register::RAX)),
            None
        );
        // [head] lock addq $1,(%rax); call …; add $8,%rax; jmp head: the call
        // returns in %rax.
        let code = decode(&[
            0x90, 0xf0, 0x48, 0x83, 0x00, 0x01, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc0,
            0x08, 0xeb, 0xf0,
        ]);
        assert_eq!(code[4].near_branch_target(), 0x1001);
        assert_eq!(
            induction(&code, 1, &[(0x1001, 4)], 96, on(Register::RAX)),
            None
        );
    }
}
