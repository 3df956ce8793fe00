//! Atomics by use, step 1: decode every function of the binary with iced-x86 and
//! collect the instructions that update memory atomically (`lock`-prefixed ones,
//! `xchg` with memory, `cmpxchg`, `cmpxchg8b`/`16b`, `xadd`) with their memory
//! operand. Functions are decoded in parallel (rayon); only those instructions are
//! kept, so a kernel's 30 MB of text costs one linear decode. `dwarf/` maps the
//! operands to members.

use super::types::{Derived, LockSite};
use iced_x86::{
    Decoder, DecoderOptions, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind,
    Register,
};
use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};
use rayon::prelude::*;

/// Every lock site of a binary, sorted by address, and the names of the functions
/// they are in.
#[derive(Debug, Clone, Default)]
pub struct LockSites {
    pub sites: Vec<LockSite>,
    pub functions: Vec<String>,
    /// An `ET_REL` object: code addresses are section offsets, RIP targets need
    /// relocations, so RIP-relative operands are not resolved.
    pub relocatable: bool,
}

/// A range of code to decode: one function, or a whole section without symbols.
struct Chunk<'a> {
    address: u64,
    bytes: &'a [u8],
    name: u32,
}

/// Decode `file`'s executable sections (x86-64 only; other machines give no sites).
pub fn scan(file: &object::File<'_>) -> LockSites {
    if file.architecture() != object::Architecture::X86_64 {
        return LockSites::default();
    }
    let mut functions: Vec<String> = Vec::new();
    let mut chunks: Vec<Chunk<'_>> = Vec::new();
    for section in file.sections() {
        if section.kind() != SectionKind::Text {
            continue;
        }
        let Ok(data) = section.data() else { continue };
        if data.is_empty() {
            continue;
        }
        let start = section.address();
        let mut symbols: Vec<(u64, u64, String)> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.section_index() == Some(section.index()))
            .filter_map(|s| {
                let name = s.name().ok()?;
                Some((s.address(), s.size(), demangle(name)))
            })
            .collect();
        symbols.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        symbols.dedup_by_key(|s| s.0);
        // Each symbol runs to the next one (or its size, or the section's end), so
        // code between symbols is decoded too.
        let end = start + data.len() as u64;
        let mut at = start;
        let mut i = 0;
        while at < end {
            let (name, next) = match symbols.get(i) {
                Some((a, _, n)) if *a <= at => {
                    i += 1;
                    let stop = symbols.get(i).map_or(end, |s| s.0.min(end));
                    (n.clone(), stop)
                }
                Some((a, _, _)) => (String::new(), (*a).min(end)),
                None => (String::new(), end),
            };
            if next > at {
                functions.push(name);
                let lo = (at - start) as usize;
                let hi = (next - start) as usize;
                chunks.push(Chunk {
                    address: at,
                    bytes: &data[lo..hi],
                    name: (functions.len() - 1) as u32,
                });
            }
            at = next.max(at + (next <= at) as u64);
        }
    }
    let mut sites: Vec<LockSite> = chunks
        .par_iter()
        .with_min_len(64)
        .flat_map_iter(decode)
        .collect();
    sites.sort_by_key(|s| s.address);
    sites.dedup_by_key(|s| s.address);
    LockSites {
        sites,
        functions,
        relocatable: file.kind() == object::ObjectKind::Relocatable,
    }
}

fn demangle(name: &str) -> String {
    if name.starts_with("_R") || name.starts_with("_ZN") {
        let d = rustc_demangle::try_demangle(name);
        if let Ok(d) = d {
            return format!("{d:#}");
        }
    }
    name.to_string()
}

/// Instructions looked back over for the one that computed a site's base register.
const WINDOW: usize = 8;

/// The lock sites of one chunk.
fn decode(chunk: &Chunk<'_>) -> Vec<LockSite> {
    let mut decoder = Decoder::with_ip(64, chunk.bytes, chunk.address, DecoderOptions::NONE);
    let mut recent = [Instruction::default(); WINDOW];
    let mut n = 0usize;
    let mut factory: Option<InstructionInfoFactory> = None;
    let mut out = Vec::new();
    while decoder.can_decode() {
        let slot = n % WINDOW;
        decoder.decode_out(&mut recent[slot]);
        n += 1;
        let instruction = &recent[slot];
        if instruction.is_invalid() {
            continue;
        }
        if let Some(mut site) = site(instruction, chunk.name) {
            let base = instruction.memory_base();
            if site.base.is_some() {
                let factory = factory.get_or_insert_with(InstructionInfoFactory::new);
                let earlier = (1..WINDOW.min(n)).map(|back| &recent[(n - 1 - back) % WINDOW]);
                site.derived = derive(base, earlier, factory);
            }
            out.push(site);
        }
    }
    out
}

/// The instruction among `earlier` (newest first) that last wrote `register`, if
/// it is `lea register, [from + index*scale + d]` or `mov register, from`. A branch
/// target in between is not seen; the mapping checks `from`'s variable at the
/// `lea`'s own address, so a wrong guess finds no variable rather than a wrong one.
fn derive<'i>(
    register: Register,
    earlier: impl Iterator<Item = &'i Instruction>,
    factory: &mut InstructionInfoFactory,
) -> Option<Derived> {
    for i in earlier {
        if i.is_invalid() {
            return None;
        }
        let writes = factory.info(i).used_registers().iter().any(|u| {
            u.register().full_register() == register
                && matches!(
                    u.access(),
                    OpAccess::Write
                        | OpAccess::ReadWrite
                        | OpAccess::CondWrite
                        | OpAccess::ReadCondWrite
                )
        });
        if !writes {
            continue;
        }
        let to_register = i.op_count() == 2
            && i.op0_kind() == OpKind::Register
            && i.op0_register().full_register() == register;
        return match i.mnemonic() {
            Mnemonic::Lea if to_register && i.memory_base() != Register::RIP => Some(Derived {
                address: i.ip(),
                from: dwarf_register(i.memory_base())?,
                index: i.memory_index() != Register::None,
                displacement: i.memory_displacement64() as i64,
            }),
            Mnemonic::Mov
                if to_register
                    && i.op1_kind() == OpKind::Register
                    && i.op1_register().size() == 8 =>
            {
                Some(Derived {
                    address: i.ip(),
                    from: dwarf_register(i.op1_register())?,
                    index: false,
                    displacement: 0,
                })
            }
            _ => None,
        };
    }
    None
}

/// The instruction as a lock site, if it updates memory atomically.
/// `lock or $0, (%rsp)` / `lock add $0, -8(%rsp)`: the full-barrier idiom of GCC,
/// Linux (`smp_mb`) and SQLite, which updates nothing (adding or or-ing zero to the
/// stack) and so names no member.
fn is_fence(instruction: &Instruction) -> bool {
    instruction.has_lock_prefix()
        && matches!(instruction.mnemonic(), Mnemonic::Or | Mnemonic::Add)
        && matches!(instruction.memory_base(), Register::RSP | Register::ESP)
        && instruction.memory_index() == Register::None
        && (0..instruction.op_count()).any(|k| {
            matches!(
                instruction.op_kind(k),
                OpKind::Immediate8
                    | OpKind::Immediate8to16
                    | OpKind::Immediate8to32
                    | OpKind::Immediate8to64
                    | OpKind::Immediate16
                    | OpKind::Immediate32
                    | OpKind::Immediate32to64
            )
        })
        && instruction.immediate(instruction.op_count() - 1) == 0
}

pub fn site(instruction: &Instruction, function: u32) -> Option<LockSite> {
    let mnemonic = instruction.mnemonic();
    let implicit = matches!(
        mnemonic,
        Mnemonic::Xchg
            | Mnemonic::Cmpxchg
            | Mnemonic::Cmpxchg8b
            | Mnemonic::Cmpxchg16b
            | Mnemonic::Xadd
    );
    if !instruction.has_lock_prefix() && !implicit {
        return None;
    }
    if !(0..instruction.op_count()).any(|k| instruction.op_kind(k) == OpKind::Memory) {
        return None;
    }
    if is_fence(instruction) {
        return None;
    }
    let name = format!("{mnemonic:?}").to_lowercase();
    let op = if instruction.has_lock_prefix() {
        format!("lock {name}")
    } else {
        name
    };
    let base = instruction.memory_base();
    let rip = matches!(base, Register::RIP | Register::EIP);
    let target = if rip {
        Some(instruction.ip_rel_memory_address())
    } else if base == Register::None && instruction.memory_index() == Register::None {
        Some(instruction.memory_displacement64())
    } else {
        None
    };
    let segment = matches!(instruction.segment_prefix(), Register::FS | Register::GS);
    Some(LockSite {
        address: instruction.ip(),
        function,
        op,
        base: if rip { None } else { dwarf_register(base) },
        index: dwarf_register(instruction.memory_index()),
        scale: instruction.memory_index_scale(),
        displacement: if rip || target.is_some() {
            0
        } else {
            instruction.memory_displacement64() as i64
        },
        size: instruction.memory_size().size() as u64,
        target,
        segment,
        derived: None,
    })
}

/// The x86-64 DWARF register number of a 64-bit general register (System V psABI).
fn dwarf_register(r: Register) -> Option<u16> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8]) -> Option<LockSite> {
        let mut d = Decoder::with_ip(64, bytes, 0x1000, DecoderOptions::NONE);
        site(&d.decode(), 0)
    }

    #[test]
    fn finds_locked_and_implicitly_locked_updates() {
        // lock addq $1, 0xd(%rdi,%rax,8)
        let s = one(&[0xf0, 0x48, 0x83, 0x44, 0xc7, 0x0d, 0x01]).unwrap();
        assert_eq!(s.op, "lock add");
        assert_eq!(
            (s.base, s.index, s.scale, s.displacement, s.size),
            (Some(5), Some(0), 8, 13, 8)
        );
        // xchg %eax, (%rsi): implicitly locked
        let s = one(&[0x87, 0x06]).unwrap();
        assert_eq!((s.op.as_str(), s.base, s.size), ("xchg", Some(4), 4));
        // lock cmpxchg %ecx, 0x10(%rip): RIP-relative, resolved to the target address
        let s = one(&[0xf0, 0x0f, 0xb1, 0x0d, 0x10, 0x00, 0x00, 0x00]).unwrap();
        assert_eq!(s.target, Some(0x1000 + 8 + 0x10));
        assert_eq!(s.base, None);
        // add %eax, (%rdi) without lock: not a site; xchg between registers: not a site
        assert!(one(&[0x01, 0x07]).is_none());
        assert!(one(&[0x87, 0xc8]).is_none());
        // lock orq $0, (%rsp) and lock addl $0, -4(%rsp): fences, not updates;
        // lock orq $1, (%rsp) and lock addq $0, (%rdi) are updates
        assert!(one(&[0xf0, 0x48, 0x83, 0x0c, 0x24, 0x00]).is_none());
        assert!(one(&[0xf0, 0x83, 0x44, 0x24, 0xfc, 0x00]).is_none());
        assert!(one(&[0xf0, 0x48, 0x83, 0x0c, 0x24, 0x01]).is_some());
        assert!(one(&[0xf0, 0x48, 0x83, 0x07, 0x00]).is_some());
        // lock xadd %eax, %gs:(%rdx): a segment override
        let s = one(&[0x65, 0xf0, 0x0f, 0xc1, 0x02]).unwrap();
        assert!(s.segment);
        assert_eq!(s.op, "lock xadd");
    }
}
