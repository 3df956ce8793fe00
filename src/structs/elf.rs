//! Opening an ELF file and handing its DWARF sections to gimli: the memory map,
//! decompression of zlib/zstd sections, and the clear errors for input that is not
//! ELF, is truncated, or has no debug info.

pub use crate::elf::Mapped;
use crate::elf::{check_sections, HeaderError};
use gimli::{EndianSlice, RunTimeEndian, SectionId};
use object::{Object, ObjectSection};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Input problems the CLI maps to their own exit codes.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: cannot read: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not an ELF file")]
    NotElf { path: PathBuf },
    #[error("{path}: truncated or corrupt ELF: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    #[error("{path}: no debug info: build with -g")]
    NoDebugInfo { path: PathBuf },
}

/// Open and map `path`, with the error structs reports.
pub fn open(path: &Path) -> Result<Mapped, InputError> {
    Mapped::open(path).map_err(|source| InputError::Open {
        path: path.to_path_buf(),
        source,
    })
}

/// Parse `bytes` as ELF, with the not-ELF and truncated cases told apart.
pub fn parse<'a>(path: &Path, bytes: &'a [u8]) -> Result<object::File<'a>, InputError> {
    check_sections(bytes).map_err(|e| match e {
        HeaderError::Empty | HeaderError::NotElf => InputError::NotElf {
            path: path.to_path_buf(),
        },
        HeaderError::Truncated(detail) | HeaderError::Invalid(detail) => InputError::Corrupt {
            path: path.to_path_buf(),
            detail,
        },
        sections @ HeaderError::Sections(_) => InputError::Corrupt {
            path: path.to_path_buf(),
            detail: sections.to_string(),
        },
    })?;
    let file = object::File::parse(bytes).map_err(|e| InputError::Corrupt {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    // object reads section headers lazily; touch every section's bounds now so a
    // truncated file fails here with one clear message, not halfway through.
    for section in file.sections() {
        if section.kind() != object::SectionKind::UninitializedData {
            section.data().map_err(|e| InputError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("section {}: {e}", section.name().unwrap_or("<unnamed>")),
            })?;
        }
    }
    Ok(file)
}

/// The DWARF sections of one file, decompressed where needed.
pub struct Sections<'a> {
    data: Vec<(SectionId, Cow<'a, [u8]>)>,
    pub endian: RunTimeEndian,
}

impl<'a> Sections<'a> {
    /// Read the sections of `file`; `dwo` selects the `.dwo` section names.
    pub fn load(
        path: &Path,
        file: &object::File<'a>,
        dwo: bool,
    ) -> Result<Sections<'a>, InputError> {
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let mut data = Vec::new();
        for id in ALL_SECTIONS {
            let name = if dwo { id.dwo_name() } else { Some(id.name()) };
            let Some(name) = name else { continue };
            let Some(section) = file.section_by_name(name) else {
                continue;
            };
            let bytes = uncompressed(&section).map_err(|detail| InputError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("section {name}: {detail}"),
            })?;
            let bytes = if file.kind() == object::ObjectKind::Relocatable {
                Cow::Owned(relocate(path, file, &section, bytes.into_owned())?)
            } else {
                bytes
            };
            data.push((id, bytes));
        }
        Ok(Sections { data, endian })
    }

    pub fn get(&self, id: SectionId) -> &[u8] {
        self.data
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, d)| d.as_ref())
            .unwrap_or(&[])
    }

    pub fn has_debug_info(&self) -> bool {
        !self.get(SectionId::DebugInfo).is_empty()
    }

    /// A gimli view borrowing these sections.
    pub fn dwarf(&self) -> gimli::Dwarf<EndianSlice<'_, RunTimeEndian>> {
        let Ok(dwarf) = gimli::Dwarf::load(|id| -> Result<_, std::convert::Infallible> {
            Ok(EndianSlice::new(self.get(id), self.endian))
        });
        dwarf
    }
}

/// The most a zlib-compressed debug section may claim to expand: DEFLATE
/// cannot expand more than 1032 times (RFC 1951's longest match from one
/// code), so a zlib header claiming more cannot be true and is refused
/// before any allocation. zstd has no such bound (a run of one byte
/// compresses without limit): a well-compressed zstd section of 2,000x is
/// real, and only [`MAX_SECTION`] applies to it.
pub const MAX_EXPANSION: u64 = 1032;
/// Slack for tiny sections, whose stream headers outweigh their data.
const EXPANSION_SLACK: u64 = 64 * 1024;
/// The largest decompressed debug section read, whatever its compression:
/// 4 GiB, beyond any single `.debug_*` section we have met; a claim past it
/// is refused before any allocation.
pub const MAX_SECTION: u64 = 4 << 30;

/// A section's bytes, decompressed when it is compressed (SHF_COMPRESSED or
/// `.zdebug`), with the size its compression header claims checked first:
/// the allocation is made from that claim, so an unchecked lie of 16 GiB cost
/// 16 GB of memory before failing.
pub fn uncompressed<'a>(section: &object::Section<'a, '_>) -> Result<Cow<'a, [u8]>, String> {
    let compressed = section.compressed_data().map_err(|e| e.to_string())?;
    let claimed = compressed.uncompressed_size;
    if compressed.format == object::CompressionFormat::Zlib {
        let limit = (compressed.data.len() as u64)
            .saturating_mul(MAX_EXPANSION)
            .saturating_add(EXPANSION_SLACK);
        if claimed > limit {
            return Err(format!(
                "its compression header claims {claimed} bytes from {} compressed bytes, more \
                 than the {MAX_EXPANSION} times as many that zlib can expand to (a corrupt or \
                 hostile header)",
                compressed.data.len()
            ));
        }
    }
    if compressed.format != object::CompressionFormat::None && claimed > MAX_SECTION {
        return Err(format!(
            "its compression header claims {claimed} bytes, more than the {} GiB ghostbench \
             reads of one section (a corrupt or hostile header, or a section too large to read)",
            MAX_SECTION >> 30
        ));
    }
    let claimed = compressed.uncompressed_size;
    let bytes = compressed.decompress().map_err(|e| e.to_string())?;
    if bytes.len() as u64 != claimed {
        return Err(format!(
            "its compression header claims {claimed} bytes but it holds {}",
            bytes.len()
        ));
    }
    Ok(bytes)
}

/// Apply a relocatable object's relocations to a debug section (in a `.o`, string and
/// cross-section offsets are stored as relocations against section symbols).
fn relocate<'a>(
    path: &Path,
    file: &object::File<'a>,
    section: &object::Section<'a, '_>,
    mut bytes: Vec<u8>,
) -> Result<Vec<u8>, InputError> {
    use object::ObjectSymbol;
    for (offset, reloc) in section.relocations() {
        let symbol_value = match reloc.target() {
            object::RelocationTarget::Symbol(index) => match file.symbol_by_index(index) {
                Ok(sym) => sym.address(),
                Err(_) => continue,
            },
            object::RelocationTarget::Section(_) => 0,
            _ => continue,
        };
        let value = (symbol_value as i64).wrapping_add(reloc.addend()) as u64;
        let at = offset as usize;
        let width = (reloc.size() / 8) as usize;
        let Some(slot) = bytes.get_mut(at..at + width) else {
            return Err(InputError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("relocation at {at:#x} lies outside its section"),
            });
        };
        match width {
            4 => slot.copy_from_slice(&(value as u32).to_le_bytes()),
            8 => slot.copy_from_slice(&value.to_le_bytes()),
            _ => {}
        }
    }
    Ok(bytes)
}

const ALL_SECTIONS: [SectionId; 14] = [
    SectionId::DebugAbbrev,
    SectionId::DebugAddr,
    SectionId::DebugCuIndex,
    SectionId::DebugInfo,
    SectionId::DebugLine,
    SectionId::DebugLineStr,
    SectionId::DebugLoc,
    SectionId::DebugLocLists,
    SectionId::DebugRanges,
    SectionId::DebugRngLists,
    SectionId::DebugStr,
    SectionId::DebugStrOffsets,
    SectionId::DebugTuIndex,
    SectionId::DebugTypes,
];
