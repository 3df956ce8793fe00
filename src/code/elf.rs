//! Reading the binary: checks that it is a complete x86-64 ELF file (with
//! one-line errors when it is not), and lists its function symbols, falling
//! back to the dynamic symbol table for stripped binaries.

use super::demangle::demangle;
use anyhow::{bail, Context, Result};
use memmap2::Mmap;
use object::{Object, ObjectSection, ObjectSymbol, SectionIndex, SymbolKind};
use serde::Serialize;
use std::fs::File;
use std::path::Path;

/// Which symbol table the functions came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolSource {
    /// `.symtab`: every function, local ones included.
    Symtab,
    /// `.dynsym` only: the binary is stripped, so only exported functions are known.
    Dynsym,
}

/// One function symbol, before any analysis.
#[derive(Debug, Clone)]
pub struct RawFunction {
    /// The symbol as written in the binary (mangled).
    pub symbol: String,
    /// Demangled for C++ and Rust; the symbol itself otherwise.
    pub name: String,
    pub address: u64,
    pub size: u64,
    /// Index into [`ElfImage::sections`].
    pub section: usize,
}

/// An executable section's address and bytes.
#[derive(Debug, Clone)]
pub struct CodeSection<'a> {
    pub name: String,
    pub address: u64,
    pub align: u64,
    /// Empty for sections without file contents (NOBITS).
    pub data: &'a [u8],
    index: SectionIndex,
}

/// The parsed facts about the file that the analysis needs.
#[derive(Debug)]
pub struct ElfImage<'a> {
    /// "executable", "shared object" or "relocatable object".
    pub kind: &'static str,
    pub sections: Vec<CodeSection<'a>>,
    pub functions: Vec<RawFunction>,
    pub symbol_source: SymbolSource,
    pub warnings: Vec<String>,
}

/// Map a file read-only. The map is what every borrowed slice points into.
pub fn map(path: &Path) -> Result<Mmap> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    // SAFETY: the map is read-only; a file changed underneath us while we read
    // it can give wrong numbers, never memory unsafety in safe code that only
    // reads bytes (we never hand out references across a remap).
    unsafe { Mmap::map(&file) }.with_context(|| format!("cannot map {}", path.display()))
}

const EM_X86_64: u16 = 62;

fn machine_name(machine: u16) -> String {
    let name = match machine {
        3 => "i386 (32-bit x86)",
        8 => "MIPS",
        20 => "PowerPC",
        21 => "PowerPC64",
        22 => "s390",
        40 => "ARM",
        62 => "x86-64",
        183 => "AArch64",
        243 => "RISC-V",
        258 => "LoongArch",
        _ => return format!("machine {machine}"),
    };
    format!("{name} (e_machine {machine})")
}

/// Check the ELF header by hand before `object` sees the file, so the common
/// bad inputs get a plain sentence instead of a parser's internal message.
pub fn check_header(data: &[u8]) -> Result<()> {
    if data.len() < 4 || &data[..4] != b"\x7fELF" {
        if data.is_empty() {
            bail!("not an ELF file: it is empty");
        }
        bail!("not an ELF file (no \\x7fELF magic at the start)");
    }
    if data.len() < 64 {
        bail!(
            "truncated ELF file: {} bytes, shorter than an ELF header",
            data.len()
        );
    }
    let class = data[4];
    let little = match data[5] {
        1 => true,
        2 => false,
        other => bail!("not a valid ELF file: unknown byte order {other}"),
    };
    let u16_at = |at: usize| {
        let b = [data[at], data[at + 1]];
        if little {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }
    };
    let machine = u16_at(18);
    if machine != EM_X86_64 || class != 2 {
        bail!(
            "not x86-64: the ELF file is for {}{}",
            machine_name(machine),
            if class == 1 { ", 32-bit" } else { "" }
        );
    }
    let u64_at = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&data[at..at + 8]);
        u64::from_le_bytes(b)
    };
    let len = data.len() as u64;
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36) as u64, u16_at(0x38) as u64);
    let (shoff, shentsize, shnum) = (u64_at(0x28), u16_at(0x3a) as u64, u16_at(0x3c) as u64);
    let end_of = |off: u64, size: u64, count: u64| off.saturating_add(size.saturating_mul(count));
    if phnum > 0 && end_of(phoff, phentsize, phnum) > len {
        bail!(
            "truncated ELF file: the program headers end at byte {} but the file has {len} bytes",
            end_of(phoff, phentsize, phnum)
        );
    }
    // shnum == 0 with a table means extended numbering: at least entry 0 exists.
    let shnum = if shoff != 0 && shnum == 0 { 1 } else { shnum };
    if shoff != 0 && end_of(shoff, shentsize, shnum) > len {
        bail!(
            "truncated ELF file: the section headers end at byte {} but the file has {len} bytes",
            end_of(shoff, shentsize, shnum)
        );
    }
    Ok(())
}

/// Parse the file and list its functions. `keep` filters by demangled name
/// before anything costly happens.
pub fn read<'a>(data: &'a [u8], keep: &dyn Fn(&str) -> bool) -> Result<ElfImage<'a>> {
    check_header(data)?;
    let file =
        object::File::parse(data).map_err(|e| anyhow::anyhow!("not a valid ELF file: {e}"))?;
    let kind = match file.kind() {
        object::ObjectKind::Executable => "executable",
        object::ObjectKind::Dynamic => "shared object or PIE",
        object::ObjectKind::Relocatable => "relocatable object",
        object::ObjectKind::Core => bail!("a core dump, not a program"),
        _ => "ELF file",
    };
    let len = data.len() as u64;
    let mut sections = Vec::new();
    let mut section_slot = std::collections::HashMap::new();
    for section in file.sections() {
        if let Some((offset, size)) = section.file_range() {
            if offset.saturating_add(size) > len {
                bail!(
                    "truncated ELF file: section {} ends at byte {} but the file has {len} bytes",
                    section.name().unwrap_or("?"),
                    offset.saturating_add(size)
                );
            }
        }
        if section.kind() != object::SectionKind::Text {
            continue;
        }
        let data = match section.file_range() {
            Some(_) => section.data().unwrap_or(&[]),
            None => &[],
        };
        section_slot.insert(section.index(), sections.len());
        sections.push(CodeSection {
            name: section.name().unwrap_or("?").to_string(),
            address: section.address(),
            align: section.align(),
            data,
            index: section.index(),
        });
    }

    let collect = |symbols: &mut dyn Iterator<Item = object::Symbol<'a, '_>>| {
        let mut out = Vec::new();
        for symbol in symbols {
            if symbol.kind() != SymbolKind::Text || symbol.is_undefined() {
                continue;
            }
            let Some(slot) = symbol.section_index().and_then(|i| section_slot.get(&i)) else {
                continue;
            };
            let Ok(raw) = symbol.name() else { continue };
            if raw.is_empty() {
                continue;
            }
            let name = demangle(raw);
            if !keep(&name) {
                continue;
            }
            out.push(RawFunction {
                symbol: raw.to_string(),
                name,
                address: symbol.address(),
                size: symbol.size(),
                section: *slot,
            });
        }
        out
    };

    let mut warnings = Vec::new();
    let has_symtab = file.section_by_name(".symtab").is_some();
    let mut functions = collect(&mut file.symbols());
    let mut symbol_source = SymbolSource::Symtab;
    if functions.is_empty() && !symtab_has_functions(&file) {
        let dynamic = collect(&mut file.dynamic_symbols());
        if dynamic.is_empty() && !dynsym_has_functions(&file) {
            bail!(
                "no function symbols at all: {} and .dynsym defines no functions",
                if has_symtab {
                    ".symtab has no functions"
                } else {
                    "the binary is stripped (no .symtab)"
                }
            );
        }
        warnings.push(format!(
            "{}: using the {} exported functions of .dynsym; local functions are not visible",
            if has_symtab {
                ".symtab has no functions"
            } else {
                "stripped binary (no .symtab)"
            },
            dynamic.len()
        ));
        functions = dynamic;
        symbol_source = SymbolSource::Dynsym;
    }
    functions.sort_by(|a, b| (a.address, &a.symbol).cmp(&(b.address, &b.symbol)));

    if kind == "relocatable object" {
        let weak: Vec<&str> = sections
            .iter()
            .filter(|s| {
                s.align < 64
                    && functions
                        .iter()
                        .any(|f| sections[f.section].index == s.index)
            })
            .map(|s| s.name.as_str())
            .collect();
        warnings.push(
            "relocatable object: addresses are offsets in their sections, so placement holds \
             only as far as each section's alignment"
                .to_string(),
        );
        if !weak.is_empty() {
            warnings.push(format!(
                "sections aligned below 64 bytes, whose functions may land elsewhere after linking: {}",
                weak.join(", ")
            ));
        }
    }
    Ok(ElfImage {
        kind,
        sections,
        functions,
        symbol_source,
        warnings,
    })
}

fn symtab_has_functions(file: &object::File) -> bool {
    file.symbols()
        .any(|s| s.kind() == SymbolKind::Text && !s.is_undefined())
}

fn dynsym_has_functions(file: &object::File) -> bool {
    file.dynamic_symbols()
        .any(|s| s.kind() == SymbolKind::Text && !s.is_undefined())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_errors_are_plain_sentences() {
        let text = check_header(b"hello world\n").unwrap_err().to_string();
        assert!(text.starts_with("not an ELF file"), "{text}");
        let short = check_header(b"\x7fELF\x02\x01").unwrap_err().to_string();
        assert!(short.starts_with("truncated ELF file"), "{short}");
        let mut header = vec![0u8; 64];
        header[..4].copy_from_slice(b"\x7fELF");
        header[4] = 2;
        header[5] = 1;
        header[18] = 183;
        let arm = check_header(&header).unwrap_err().to_string();
        assert!(arm.contains("AArch64"), "{arm}");
        header[18] = 62;
        header[0x28] = 0x40; // section headers at 64, 1 entry of 64 bytes: past the end
        header[0x3a] = 64;
        header[0x3c] = 1;
        let cut = check_header(&header).unwrap_err().to_string();
        assert!(
            cut.starts_with("truncated ELF file: the section headers"),
            "{cut}"
        );
    }
}
