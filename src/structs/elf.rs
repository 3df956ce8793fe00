//! Opening an ELF file and handing its DWARF sections to gimli: the memory map,
//! decompression of zlib/zstd sections, and the clear errors for input that is not
//! ELF, is truncated, or has no debug info.

use gimli::{EndianSlice, RunTimeEndian, SectionId};
use memmap2::Mmap;
use object::{Object, ObjectSection};
use std::borrow::Cow;
use std::fs::File;
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

/// A read-only map of a file. Empty files cannot be mapped, so they are kept as `None`.
pub struct Mapped {
    map: Option<Mmap>,
}

impl Mapped {
    pub fn open(path: &Path) -> Result<Mapped, InputError> {
        let open_error = |source| InputError::Open {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(open_error)?;
        let len = file.metadata().map_err(open_error)?.len();
        if len == 0 {
            return Ok(Mapped { map: None });
        }
        // SAFETY: the map is read-only; a file truncated under us while we read it
        // could fault, which is the documented risk of every mmap-based reader (pahole
        // and gdb included). We never write through it.
        let map = unsafe { Mmap::map(&file) }.map_err(open_error)?;
        Ok(Mapped { map: Some(map) })
    }

    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

/// Parse `bytes` as ELF, with the not-ELF and truncated cases told apart.
pub fn parse<'a>(path: &Path, bytes: &'a [u8]) -> Result<object::File<'a>, InputError> {
    if !bytes.starts_with(b"\x7fELF") {
        return Err(InputError::NotElf {
            path: path.to_path_buf(),
        });
    }
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
            let bytes = section
                .uncompressed_data()
                .map_err(|e| InputError::Corrupt {
                    path: path.to_path_buf(),
                    detail: format!("section {name}: {e}"),
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
