//! Atomics by use, step 1: decode every function of the binary with iced-x86 and
//! collect the instructions that update memory atomically (`lock`-prefixed ones,
//! and `xchg` with memory, locked without the prefix) with their memory operand;
//! a `cmpxchg` or `xadd` without `lock` takes no bus lock and is a plain store.
//! Functions are decoded in parallel (rayon); only those instructions are
//! kept, so a kernel's 30 MB of text costs one linear decode. `dwarf/` maps the
//! operands to members; `chain` walks back from each site to where its base
//! register's value came from. Functions with at least one lock site also give
//! their plain stores (`mov`, arithmetic with a memory destination, no lock),
//! mapped the same way, for false sharing's "member written elsewhere"; only
//! those functions, so the extra cost stays with the code already being mapped.
//! The file is over 600 lines because of its unit tests (bytes decoded from real
//! binaries, 230 lines); the code is under 400.

use super::cfa::{self, Cfa};
use super::chain::{chains, Chunk, PerCpu};
use super::sole::{Functions, Part};
use super::types::{all_links, Link, LockSite};
use super::write::{dwarf_register, jump_target};
use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic, OpKind, Register};
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
    /// The CFA at the addresses where a site's chain reaches `%rsp` or `%rbp`
    /// (`structs::cfa`), for locals the DWARF places at the frame base; sorted.
    pub cfa: Vec<Cfa>,
    /// The binary's global data symbols (start, size, name), sorted: where DWARF has
    /// no definition of a global in the unit that uses it (an `extern`, a per-CPU
    /// variable), the symbol at the address names the unit's declaration of it.
    pub objects: Vec<(u64, u64, String)>,
    /// Local data symbols, sorted: the name of a function's `static`.
    pub statics: Vec<(u64, u64, String)>,
}

/// Decode `file`'s executable sections (x86-64 only; other machines give no sites).
pub fn scan(file: &object::File<'_>) -> LockSites {
    if file.architecture() != object::Architecture::X86_64 {
        return LockSites::default();
    }
    let mut functions: Vec<String> = Vec::new();
    let mut chunks: Vec<Chunk<'_>> = Vec::new();
    let symbol = |name: &str| {
        file.symbols()
            .find(|s| s.kind() == SymbolKind::Data && s.name() == Ok(name))
            .map(|s| s.address())
    };
    let per_cpu = PerCpu {
        offsets: symbol("__per_cpu_offset"),
        this_cpu_off: symbol("this_cpu_off"),
    };
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
                Some((a, size, n)) if *a <= at => {
                    i += 1;
                    let next = symbols.get(i).map_or(end, |s| s.0.min(end));
                    // A sized symbol ends at its size: what lies between it and
                    // the next symbol is decoded as a nameless chunk of its own,
                    // not walked as part of the function (after the kernel's last
                    // locking function, 2 MB of padding ran to the next symbol, and
                    // one thread spent 0.14 s decoding it for 8 sites' chains).
                    let sized = a.saturating_add(*size);
                    let stop = if *size > 0 && sized > at && sized < next {
                        sized
                    } else {
                        next
                    };
                    (n.clone(), stop)
                }
                Some((a, _, _)) => (String::new(), (*a).min(end)),
                None => (String::new(), end),
            };
            if next > at {
                let entry = !name.is_empty() && !name.contains('.') && name.len() < 4096;
                let whole = !name.is_empty() && !name.contains(".cold");
                functions.push(name);
                let lo = (at - start) as usize;
                let hi = (next - start) as usize;
                chunks.push(Chunk {
                    address: at,
                    bytes: &data[lo..hi],
                    name: (functions.len() - 1) as u32,
                    entry,
                    whole,
                    per_cpu,
                });
            }
            at = next.max(at + (next <= at) as u64);
        }
    }
    // Pass 1: the sites of every chunk, and the jumps that land outside their own
    // chunk (a `.cold` part jumping back into its function), which are branch
    // targets the chains of pass 2 must not walk back over.
    let found: Vec<(usize, Vec<LockSite>, Vec<u64>)> = chunks
        .par_iter()
        .enumerate()
        .with_min_len(64)
        .map(|(k, c)| {
            let (sites, outside) = decode(c);
            (k, sites, outside)
        })
        .filter(|f| !f.1.is_empty() || !f.2.is_empty())
        .collect();
    let mut outside: Vec<u64> = found.iter().flat_map(|f| f.2.iter().copied()).collect();
    outside.sort_unstable();
    outside.dedup();
    let name = |k: usize| functions[chunks[k].name as usize].as_str();
    let whole = Functions::new(name, chunks.len(), found.iter().map(|f| (f.0, &f.2[..])));
    // Pass 2: the chunks with sites again, whole, for each site's chain, with
    // their plain stores (only where something is locked: that DWARF is read anyway).
    let mut sites: Vec<LockSite> = found
        .into_par_iter()
        .filter(|f| !f.1.is_empty())
        .flat_map_iter(|(k, mut sites, _)| {
            let chunk = &chunks[k];
            let code = decoded(chunk);
            let part = whole.cold_part(name(k)).map(|c| Part {
                address: chunks[c].address,
                end: chunks[c].address + chunks[c].bytes.len() as u64,
                code: decoded(&chunks[c]),
            });
            sites.extend(code.iter().filter_map(|i| store(i, chunk.name)));
            sites.sort_by_key(|s| s.address);
            chains(
                chunk,
                &code,
                (part.as_ref(), &whole.foreign),
                sites,
                &outside,
            )
        })
        .collect();
    sites.sort_by_key(|s| s.address);
    sites.dedup_by_key(|s| s.address);
    let mut frame_addresses: Vec<u64> = sites
        .iter()
        .filter(|s| !s.plain)
        .flat_map(|s| all_links(&s.chain, &s.paths))
        .filter_map(|l| match *l {
            Link::Register {
                address,
                register: 6 | 7,
                ..
            } => Some(address),
            _ => None,
        })
        .collect();
    frame_addresses.sort_unstable();
    frame_addresses.dedup();
    // Local data symbols first, then global ones.
    let mut symbols: [Vec<(u64, u64, String)>; 2] = Default::default();
    for s in file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Data && s.size() > 0)
    {
        if let Ok(name) = s.name() {
            symbols[usize::from(s.is_global())].push((s.address(), s.size(), name.into()));
        }
    }
    symbols.iter_mut().for_each(|l| l.sort_unstable());
    let [statics, objects] = symbols;
    LockSites {
        objects,
        statics,
        cfa: cfa::at(file, &frame_addresses),
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

/// The lock sites of one chunk (without chains), and the targets of its jumps that
/// lie outside it.
fn decode(chunk: &Chunk<'_>) -> (Vec<LockSite>, Vec<u64>) {
    let mut decoder = Decoder::with_ip(64, chunk.bytes, chunk.address, DecoderOptions::NONE);
    let end = chunk.address + chunk.bytes.len() as u64;
    let mut instruction = Instruction::default();
    let mut out = Vec::new();
    let mut outside = Vec::new();
    while decoder.can_decode() {
        decoder.decode_out(&mut instruction);
        if instruction.is_invalid() {
            continue;
        }
        if let Some(t) = jump_target(&instruction) {
            if t < chunk.address || t >= end {
                outside.push(t);
            }
        }
        if let Some(site) = site(&instruction, chunk.name) {
            out.push(site);
        }
    }
    (out, outside)
}

/// Every instruction of `chunk`, for its chains and plain stores (pass 2).
fn decoded(chunk: &Chunk<'_>) -> Vec<Instruction> {
    Decoder::with_ip(64, chunk.bytes, chunk.address, DecoderOptions::NONE)
        .iter()
        .collect()
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

/// The instruction as a plain store to memory: a `mov`, `movnti`, SSE/AVX move or
/// integer arithmetic with a memory destination and no lock prefix. Stack
/// (`%rsp`-based) stores update no struct of interest and are skipped.
pub fn store(instruction: &Instruction, function: u32) -> Option<LockSite> {
    if instruction.has_lock_prefix() || instruction.op_count() == 0 {
        return None;
    }
    if instruction.op0_kind() != OpKind::Memory {
        return None;
    }
    let mnemonic = instruction.mnemonic();
    let plain = matches!(
        mnemonic,
        Mnemonic::Mov
            | Mnemonic::Movnti
            | Mnemonic::Movss
            | Mnemonic::Movsd
            | Mnemonic::Movd
            | Mnemonic::Movq
            | Mnemonic::Movups
            | Mnemonic::Movaps
            | Mnemonic::Movdqu
            | Mnemonic::Movdqa
            | Mnemonic::Vmovss
            | Mnemonic::Vmovsd
            | Mnemonic::Vmovd
            | Mnemonic::Vmovq
            | Mnemonic::Vmovups
            | Mnemonic::Vmovaps
            | Mnemonic::Vmovdqu
            | Mnemonic::Vmovdqa
            | Mnemonic::Add
            | Mnemonic::Sub
            | Mnemonic::Adc
            | Mnemonic::Sbb
            | Mnemonic::And
            | Mnemonic::Or
            | Mnemonic::Xor
            | Mnemonic::Inc
            | Mnemonic::Dec
            | Mnemonic::Neg
            | Mnemonic::Not
            | Mnemonic::Shl
            | Mnemonic::Shr
            | Mnemonic::Sar
            | Mnemonic::Cmpxchg
            | Mnemonic::Cmpxchg8b
            | Mnemonic::Cmpxchg16b
            | Mnemonic::Xadd
    );
    if !plain || matches!(instruction.memory_base(), Register::RSP | Register::ESP) {
        return None;
    }
    let mut s = operand(
        instruction,
        function,
        format!("{mnemonic:?}").to_lowercase(),
    );
    s.plain = true;
    Some(s)
}

pub fn site(instruction: &Instruction, function: u32) -> Option<LockSite> {
    let mnemonic = instruction.mnemonic();
    // Only `xchg` with memory locks without the prefix (Intel SDM, XCHG); a
    // `cmpxchg` or `xadd` without it (the kernel's `this_cpu_cmpxchg`) is a plain
    // read-modify-write that takes no bus lock, so it cannot be a split lock.
    let implicit = mnemonic == Mnemonic::Xchg;
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
    Some(operand(instruction, function, op))
}

/// The memory operand of `instruction` as a site named `op`.
fn operand(instruction: &Instruction, function: u32, op: String) -> LockSite {
    let base = instruction.memory_base();
    let rip = matches!(base, Register::RIP | Register::EIP);
    let target = if rip {
        Some(instruction.ip_rel_memory_address())
    } else if base == Register::None {
        // An absolute address, perhaps with a scaled index: an element of a
        // global array (`lock cmpxchg %rdi, inet_protos(,%rsi,8)`).
        Some(instruction.memory_displacement64())
    } else {
        None
    };
    let segment = matches!(instruction.segment_prefix(), Register::FS | Register::GS);
    LockSite {
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
        plain: false,
        chain: Vec::new(),
        paths: Vec::new(),
        aliases: Vec::new(),
    }
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
        // cmpxchg %ecx, (%rdi) and xadd %eax, (%rdi) without lock take no bus lock
        // (the kernel's this_cpu ops): plain stores, not sites; with lock, sites
        assert!(one(&[0x0f, 0xb1, 0x0f]).is_none());
        assert!(one(&[0x0f, 0xc1, 0x07]).is_none());
        let mut d = Decoder::with_ip(64, &[0x0f, 0xb1, 0x0f], 0x1000, DecoderOptions::NONE);
        assert_eq!(
            store(&d.decode(), 0).map(|s| s.op),
            Some("cmpxchg".to_string())
        );
        assert!(one(&[0xf0, 0x0f, 0xb1, 0x0f]).is_some());
        assert!(one(&[0xf0, 0x0f, 0xc1, 0x07]).is_some());
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

    /// The sites of `bytes` (one function at 0x1000, entry known) with their chains.
    fn walked(bytes: &[u8]) -> Vec<LockSite> {
        walked_with(bytes, PerCpu::default())
    }

    fn walked_with(bytes: &[u8], per_cpu: PerCpu) -> Vec<LockSite> {
        let chunk = Chunk {
            address: 0x1000,
            bytes,
            name: 0,
            entry: true,
            whole: true,
            per_cpu,
        };
        let (sites, outside) = decode(&chunk);
        chains(&chunk, &decoded(&chunk), (None, &[]), sites, &outside)
    }

    #[test]
    fn an_index_register_carrying_the_array_offset_adds_it() {
        // mov %rsi,%rax; lea 3(%rax),%rsi; lock orq $1,(%rdi,%rsi,8); ret
        let s = walked(&[
            0x48, 0x89, 0xf0, 0x48, 0x8d, 0x70, 0x03, 0xf0, 0x48, 0x83, 0x0c, 0xf7, 0x01, 0xc3,
        ]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].displacement, 24);
        // %rdi is untouched from the entry: the first argument.
        assert_eq!(
            s[0].chain,
            [
                Link::Register {
                    address: 0x1007,
                    register: 5,
                    offset: 0,
                    index: false
                },
                Link::Entry {
                    register: 5,
                    offset: 0,
                    index: false,
                    kept: true
                }
            ]
        );
    }

    #[test]
    fn a_base_loaded_from_memory_is_a_load_of_the_register_before() {
        // mov 8(%rdi),%rax; lock addq $1,8(%rax); ret
        let s = walked(&[
            0x48, 0x8b, 0x47, 0x08, 0xf0, 0x48, 0x83, 0x40, 0x08, 0x01, 0xc3,
        ]);
        assert_eq!(
            s[0].chain,
            [
                Link::Register {
                    address: 0x1004,
                    register: 0,
                    offset: 0,
                    index: false
                },
                Link::Load {
                    address: 0x1000,
                    offset: 0,
                    index: false,
                    displacement: 8,
                    load_index: false
                },
                Link::Register {
                    address: 0x1000,
                    register: 5,
                    offset: 0,
                    index: false
                },
                Link::Entry {
                    register: 5,
                    offset: 0,
                    index: false,
                    kept: true
                }
            ]
        );
    }

    #[test]
    fn a_loop_that_advances_the_base_by_a_stride_is_an_induction() {
        // lea 0x100(%rip),%rax; xor %ecx,%ecx; lea 0x40(%rax),%rdx;
        // 1: cmpq $0,(%rax); je 2f; mov %rcx,%rsi; xchg %rsi,(%rax);
        // 2: add $8,%rax; cmp %rdx,%rax; jne 1b; ret
        let s = walked(&[
            0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00, 0x31, 0xc9, 0x48, 0x8d, 0x50, 0x40, 0x48,
            0x83, 0x38, 0x00, 0x74, 0x06, 0x48, 0x89, 0xce, 0x48, 0x87, 0x30, 0x48, 0x83, 0xc0,
            0x08, 0x48, 0x39, 0xd0, 0x75, 0xeb, 0xc3,
        ]);
        // The loop head is a jump target whose body only adds 8 to %rax: an
        // induction, walked on before the loop to the global, with an index.
        assert_eq!(s.len(), 1);
        assert!(
            s[0].chain
                .iter()
                .any(|l| matches!(l, Link::Induction { stride: 8, .. })),
            "{:?}",
            s[0].chain
        );
        assert_eq!(
            s[0].chain.last(),
            Some(&Link::Global {
                address: 0x1007 + 0x100,
                offset: 0,
                index: true
            })
        );
    }

    #[test]
    fn a_loop_that_leaves_the_base_alone_is_walked_through() {
        // mov 8(%rdi),%rcx; 1: mov (%rcx),%rax; lock cmpxchg %rdx,(%rcx); jne 1b; ret
        let s = walked(&[
            0x48, 0x8b, 0x4f, 0x08, 0x48, 0x8b, 0x01, 0xf0, 0x48, 0x0f, 0xb1, 0x11, 0x75, 0xf6,
            0xc3,
        ]);
        assert!(matches!(
            s[0].chain[1],
            Link::Load {
                displacement: 8,
                ..
            }
        ));
        assert!(matches!(
            s[0].chain.last(),
            Some(Link::Entry { register: 5, .. })
        ));
    }

    #[test]
    fn a_per_cpu_pointer_stays_a_pointer_to_its_variable() {
        // per_cpu_ptr(&runqueues, cpu): mov $0x31980,%rax;
        // add __per_cpu_offset(,%rdx,8),%rax; lock incl 0x10(%rax); ret
        let code = [
            0x48, 0xc7, 0xc0, 0x80, 0x19, 0x03, 0x00, 0x48, 0x03, 0x04, 0xd5, 0x60, 0xcb, 0x39,
            0x82, 0xf0, 0xff, 0x40, 0x10, 0xc3,
        ];
        let kernel = PerCpu {
            offsets: Some(0xffff_ffff_8239_cb60),
            this_cpu_off: None,
        };
        let s = walked_with(&code, kernel);
        assert_eq!(
            s[0].chain.last(),
            Some(&Link::Global {
                address: 0x31980,
                offset: 0,
                index: false
            })
        );
        // Another table's entry added: no longer known to be the variable.
        let other = PerCpu {
            offsets: Some(0xffff_ffff_8239_0000),
            this_cpu_off: None,
        };
        let s = walked_with(&code, other);
        assert!(
            !s[0].chain.iter().any(|l| matches!(l, Link::Global { .. })),
            "{:?}",
            s[0].chain
        );
    }

    #[test]
    fn a_pointer_loaded_through_gs_is_a_load_of_that_per_cpu_variable() {
        // current: mov %gs:0x1fb80,%rax; xchg %esi,0x18(%rax); ret
        let s = walked(&[
            0x65, 0x48, 0x8b, 0x04, 0x25, 0x80, 0xfb, 0x01, 0x00, 0x87, 0x70, 0x18, 0xc3,
        ]);
        assert_eq!(s[0].displacement, 0x18);
        assert_eq!(
            &s[0].chain[1..],
            [
                Link::Load {
                    address: 0x1000,
                    offset: 0,
                    index: false,
                    displacement: 0,
                    load_index: false
                },
                Link::Global {
                    address: 0x1fb80,
                    offset: 0,
                    index: false
                }
            ]
        );
    }
}
