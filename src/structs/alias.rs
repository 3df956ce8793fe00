//! Atomics by use, step 1h: the other registers that hold a lock site's base plus
//! a constant at the site. `lea 0x80(%rdi),%rdx` just before `lock xadd
//! %eax,0x80(%rdi)` (the kernel's `refcount_t` keeps the address for its
//! saturation path) leaves `%rdx` = `%rdi` + 0x80; a variable DWARF places in
//! `%rdx` there describes the operand when none describes `%rdi`
//! (`LockSite::aliases`, tried by `dwarf::lock_uses` when the chain maps to
//! nothing). Found on the straight-line code before the site: back to a join
//! point, a jump or return before it, the chunk's start, a write of the base, or
//! `LOOKBACK` instructions; a `lea k(%base),%r` or `mov %base,%r` counts when
//! nothing after it writes `%r` before the site.

use super::write::{dwarf_register, effect, falls_through, full, Effect};
use iced_x86::{Instruction, InstructionInfoFactory, Mnemonic, OpKind, Register};

/// Instructions looked back over from a site.
const LOOKBACK: usize = 24;

/// The registers that hold `base` plus a constant at `code[at]` (DWARF register,
/// constant, the address of the instruction that set it), nearest first;
/// `joins(k)`: control joins at `code[k]` from elsewhere; `effects`: what each
/// instruction writes, when worked out already (else each is looked up).
pub(super) fn aliases(
    code: &[Instruction],
    at: usize,
    base: Register,
    joins: impl Fn(usize) -> bool,
    (effects, factory): (&[Effect], &mut InstructionInfoFactory),
) -> Vec<(u16, i64, u64)> {
    let mut out = Vec::new();
    // The registers (a bit per DWARF number) written between the instruction
    // looked at and the site; a call writes the caller-saved ones.
    let mut written = 0u16;
    let mut k = at;
    for _ in 0..LOOKBACK {
        if k == 0 || joins(k) {
            break;
        }
        k -= 1;
        let i = &code[k];
        if !falls_through(i) {
            break;
        }
        let e = effects
            .get(k)
            .copied()
            .unwrap_or_else(|| effect(i, factory));
        if let Some((to, plus)) = copy_of(i, base) {
            if let Some(r) = dwarf_register(to).filter(|&r| r < 16) {
                if to != base && written & (1 << r) == 0 {
                    out.push((r, plus, i.ip()));
                }
            }
        }
        if e.unknown || e.writes(base) {
            break;
        }
        written |= e.defines | e.maybe;
    }
    out
}

/// `lea k(%base),%r` (no index) or `mov %base,%r`, 64 bits wide: (`%r`, k).
fn copy_of(i: &Instruction, base: Register) -> Option<(Register, i64)> {
    if i.op_count() != 2 || i.op0_kind() != OpKind::Register {
        return None;
    }
    let to = full(i.op0_register())?;
    match i.mnemonic() {
        Mnemonic::Lea if i.memory_base() == base && i.memory_index() == Register::None => {
            Some((to, i.memory_displacement64() as i64))
        }
        Mnemonic::Mov if i.op1_kind() == OpKind::Register && i.op1_register() == base => {
            Some((to, 0))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::{Decoder, DecoderOptions};

    fn decode(bytes: &[u8]) -> Vec<Instruction> {
        let mut d = Decoder::with_ip(64, bytes, 0x1000, DecoderOptions::NONE);
        let mut out = Vec::new();
        while d.can_decode() {
            out.push(d.decode());
        }
        out
    }

    #[test]
    fn a_lea_or_copy_of_the_base_not_written_since_is_an_alias() {
        // lea 0x80(%rdi),%rdx; mov $-1,%eax; lock xadd %eax,0x80(%rdi)
        let code = decode(&[
            0x48, 0x8d, 0x97, 0x80, 0x00, 0x00, 0x00, // lea 0x80(%rdi),%rdx
            0xb8, 0xff, 0xff, 0xff, 0xff, // mov $-1,%eax
            0xf0, 0x0f, 0xc1, 0x87, 0x80, 0x00, 0x00, 0x00, // lock xadd %eax,0x80(%rdi)
        ]);
        let mut f = InstructionInfoFactory::new();
        assert_eq!(
            aliases(&code, 2, Register::RDI, |_| false, (&[], &mut f)),
            vec![(1, 0x80, 0x1000)]
        );
        // mov %rdi,%rbx; lea -0x40(%rdi),%rdx; mov $1,%edx (rdx overwritten); site
        let code = decode(&[
            0x48, 0x89, 0xfb, // mov %rdi,%rbx
            0x48, 0x8d, 0x57, 0xc0, // lea -0x40(%rdi),%rdx
            0xba, 0x01, 0x00, 0x00, 0x00, // mov $1,%edx
            0xf0, 0x0f, 0xc1, 0x47, 0xc0, // lock xadd %eax,-0x40(%rdi)
        ]);
        assert_eq!(
            aliases(&code, 3, Register::RDI, |_| false, (&[], &mut f)),
            vec![(3, 0, 0x1000)]
        );
        // A join at the site's instruction: nothing before it counts.
        assert!(aliases(&code, 3, Register::RDI, |k| k == 3, (&[], &mut f)).is_empty());
        // The base written after the copy: the copy holds an older value.
        let code = decode(&[
            0x48, 0x89, 0xfb, // mov %rdi,%rbx
            0x48, 0x83, 0xc7, 0x08, // add $8,%rdi
            0xf0, 0xff, 0x07, // lock incl (%rdi)
        ]);
        assert!(aliases(&code, 2, Register::RDI, |_| false, (&[], &mut f)).is_empty());
    }
}
