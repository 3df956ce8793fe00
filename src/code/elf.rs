//! Reading the binary: checks that it is a complete x86-64 ELF file (with
//! one-line errors when it is not), and lists its function symbols, falling
//! back to the dynamic symbol table for stripped binaries.

use super::demangle::demangle;
use crate::elf::{machine_name, EM_X86_64};
use anyhow::{bail, Result};
use object::{Object, ObjectSection, ObjectSymbol, SectionIndex, SymbolKind};
use serde::Serialize;

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

/// Parse the file and list its functions. `keep` filters by demangled name
/// before anything costly happens.
pub fn read<'a>(data: &'a [u8], keep: &dyn Fn(&str) -> bool) -> Result<ElfImage<'a>> {
    let header = crate::elf::check_header(data)?;
    if header.machine != EM_X86_64 || !header.is_64 {
        bail!(
            "not x86-64: the ELF file is for {}{}",
            machine_name(header.machine),
            if header.is_64 { "" } else { ", 32-bit" }
        );
    }
    crate::elf::check_sections(data)?;
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
    fn other_targets_and_bad_headers_are_plain_sentences() {
        let text = read(b"hello world\n", &|_| true).unwrap_err().to_string();
        assert!(text.starts_with("not an ELF file"), "{text}");
        let mut header = vec![0u8; 64];
        header[..4].copy_from_slice(b"\x7fELF");
        header[4] = 2;
        header[5] = 1;
        header[18] = 183;
        let arm = read(&header, &|_| true).unwrap_err().to_string();
        assert_eq!(
            arm,
            "not x86-64: the ELF file is for AArch64 (e_machine 183)"
        );
        header[4] = 1;
        header[18] = 3;
        let i386 = read(&header[..52], &|_| true).unwrap_err().to_string();
        assert!(
            i386.ends_with("i386 (32-bit x86) (e_machine 3), 32-bit"),
            "{i386}"
        );
    }
}
