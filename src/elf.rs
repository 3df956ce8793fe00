//! Opening binaries, shared by `code` and `structs`: a read-only memory map, and
//! the ELF header checks that give the common bad inputs (empty, not ELF,
//! truncated) one plain sentence before a parser sees them.

use memmap2::Mmap;
use std::path::Path;

/// A read-only map of a file. Empty files cannot be mapped, so they are kept as `None`.
pub struct Mapped {
    map: Option<Mmap>,
}

impl Mapped {
    /// Map `path`, which must be a regular file: a FIFO, socket, device or
    /// directory is refused with its kind named by its metadata, before it
    /// is opened (a disk's block device is never opened), and again on what
    /// was opened (with `O_NONBLOCK`, so a FIFO put there in between cannot
    /// block).
    pub fn open(path: &Path) -> std::io::Result<Mapped> {
        use std::os::unix::fs::OpenOptionsExt;
        refuse_non_file(&std::fs::metadata(path)?)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)?;
        let metadata = file.metadata()?;
        refuse_non_file(&metadata)?;
        if metadata.len() == 0 {
            return Ok(Mapped { map: None });
        }
        // SAFETY: the map is read-only; a file truncated under us while we read it
        // could fault, which is the documented risk of every mmap-based reader (pahole,
        // gdb and objdump included). We never write through it.
        let map = unsafe { Mmap::map(&file) }?;
        Ok(Mapped { map: Some(map) })
    }

    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

/// A hash of the code of the ELF file at `path`: the name, address and
/// bytes of every executable section (FNV-1a, 64 bit). Two binaries with
/// equal hashes run the same instructions at the same addresses; None when
/// the file is not ELF or has no code.
pub fn code_hash(path: &Path) -> Option<u64> {
    use object::{Object, ObjectSection, SectionFlags};
    let mapped = Mapped::open(path).ok()?;
    check_header(mapped.bytes()).ok()?;
    let file = object::File::parse(mapped.bytes()).ok()?;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let mut any = false;
    for section in file.sections() {
        let executable = matches!(
            section.flags(),
            SectionFlags::Elf { sh_flags } if sh_flags & u64::from(object::elf::SHF_EXECINSTR) != 0
        );
        if !executable {
            continue;
        }
        let Ok(data) = section.data() else { continue };
        feed(section.name_bytes().unwrap_or(b""));
        feed(&section.address().to_le_bytes());
        feed(data);
        any = true;
    }
    any.then_some(hash)
}

/// The error for anything but a regular file, naming what it is.
fn refuse_non_file(metadata: &std::fs::Metadata) -> std::io::Result<()> {
    let Some(kind) = not_a_file(&metadata.file_type()) else {
        return Ok(());
    };
    let hint = if metadata.is_dir() {
        ""
    } else {
        " (copy it to a file first)"
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {kind}, not a regular file{hint}"),
    ))
}

/// What a file that is not a regular file is, in words ("a FIFO").
fn not_a_file(kind: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else {
        Some("not a regular file")
    }
}

/// Why bytes are not a usable ELF file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("not an ELF file: it is empty")]
    Empty,
    #[error("not an ELF file (no \\x7fELF magic at the start)")]
    NotElf,
    #[error("truncated ELF file: {0}")]
    Truncated(String),
    #[error("not a valid ELF file: {0}")]
    Invalid(String),
    /// The section header table is missing, zeroed or points at garbage, so
    /// no section (debug info, symbols, code) can be found: a broken file,
    /// not a stripped one or one built without -g.
    #[error("broken section header table: {0}")]
    Sections(String),
}

/// What the header says about the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// `e_machine`, e.g. 62 for x86-64.
    pub machine: u16,
    pub is_64: bool,
}

pub const EM_X86_64: u16 = 62;

/// Check the ELF identification and that the program and section header tables
/// lie inside the file, for 32- and 64-bit files of either byte order.
pub fn check_header(data: &[u8]) -> Result<Header, HeaderError> {
    if data.is_empty() {
        return Err(HeaderError::Empty);
    }
    if !data.starts_with(b"\x7fELF") {
        return Err(HeaderError::NotElf);
    }
    let is_64 = match data.get(4) {
        Some(1) => false,
        Some(2) => true,
        Some(other) => return Err(HeaderError::Invalid(format!("unknown class {other}"))),
        None => return Err(short(data)),
    };
    let little = match data.get(5) {
        Some(1) => true,
        Some(2) => false,
        Some(other) => return Err(HeaderError::Invalid(format!("unknown byte order {other}"))),
        None => return Err(short(data)),
    };
    let header_size = if is_64 { 64 } else { 52 };
    if data.len() < header_size {
        return Err(short(data));
    }
    let field = |at: usize, width: usize| {
        let bytes = &data[at..at + width];
        let fold = |acc: u64, b: &u8| (acc << 8) | u64::from(*b);
        if little {
            bytes.iter().rev().fold(0, fold)
        } else {
            bytes.iter().fold(0, fold)
        }
    };
    // (offset, entry size, count) of the program and section header tables.
    let (program, section) = if is_64 {
        (
            (field(0x20, 8), field(0x36, 2), field(0x38, 2)),
            (field(0x28, 8), field(0x3a, 2), field(0x3c, 2)),
        )
    } else {
        (
            (field(0x1c, 4), field(0x2a, 2), field(0x2c, 2)),
            (field(0x20, 4), field(0x2e, 2), field(0x30, 2)),
        )
    };
    let len = data.len() as u64;
    let end =
        |(offset, size, count): (u64, u64, u64)| offset.saturating_add(size.saturating_mul(count));
    if program.2 > 0 && end(program) > len {
        return Err(HeaderError::Truncated(format!(
            "the program headers end at byte {} but the file has {len} bytes",
            end(program)
        )));
    }
    // A count of 0 with a table means extended numbering: at least entry 0 exists.
    let section = if section.0 != 0 && section.2 == 0 {
        (section.0, section.1, 1)
    } else {
        section
    };
    if section.0 != 0 && end(section) > len {
        return Err(HeaderError::Truncated(format!(
            "the section headers end at byte {} but the file has {len} bytes",
            end(section)
        )));
    }
    Ok(Header {
        machine: field(18, 2) as u16,
        is_64,
    })
}

/// Check that the section header table (which [`check_header`] has found
/// inside the file) exists and makes sense: entries of the size the class
/// needs, at least one real section, and `e_shstrndx` naming a string table.
/// `code` and `structs` find everything through sections, so without this a
/// zeroed table or a broken `e_shoff`/`e_shnum` would read as "stripped" or
/// "no debug info".
pub fn check_sections(data: &[u8]) -> Result<(), HeaderError> {
    let header = check_header(data)?;
    let little = data[5] == 1;
    let field = |at: u64, width: usize| -> Option<u64> {
        let at = usize::try_from(at).ok()?;
        let bytes = data.get(at..at.checked_add(width)?)?;
        let fold = |acc: u64, b: &u8| (acc << 8) | u64::from(*b);
        Some(if little {
            bytes.iter().rev().fold(0, fold)
        } else {
            bytes.iter().fold(0, fold)
        })
    };
    let broken = |why: String| Err(HeaderError::Sections(why));
    // Offsets of e_shoff, e_shentsize, e_shnum, e_shstrndx and, inside an
    // entry, of sh_type, sh_size and sh_link.
    let (shoff, shentsize, shnum, shstrndx, entry_size, sh_size, sh_link) = if header.is_64 {
        (
            field(0x28, 8),
            field(0x3a, 2),
            field(0x3c, 2),
            field(0x3e, 2),
            64,
            (32, 8),
            40,
        )
    } else {
        (
            field(0x20, 4),
            field(0x2e, 2),
            field(0x30, 2),
            field(0x32, 2),
            40,
            (20, 4),
            24,
        )
    };
    let (Some(shoff), Some(shentsize), Some(shnum), Some(shstrndx)) =
        (shoff, shentsize, shnum, shstrndx)
    else {
        return Err(short(data));
    };
    if shoff == 0 {
        return broken(format!("there is none (e_shoff 0, e_shnum {shnum})"));
    }
    if shentsize != entry_size {
        return broken(format!(
            "entries of {shentsize} bytes (e_shentsize), not {entry_size}"
        ));
    }
    let entry = |index: u64, at: u64, width: usize| {
        field(
            shoff
                .saturating_add(index.saturating_mul(entry_size))
                .saturating_add(at),
            width,
        )
    };
    // Extended numbering keeps the count in entry 0's sh_size and the name
    // table's index in its sh_link.
    let count = match shnum {
        0 => entry(0, sh_size.0, sh_size.1).unwrap_or(0),
        n => n,
    };
    let names = match shstrndx {
        0xffff => entry(0, sh_link, 4).unwrap_or(0),
        n => n,
    };
    if count < 2 {
        return broken(format!("{count} entries (e_shnum {shnum}) at byte {shoff}"));
    }
    let end = shoff.saturating_add(count.saturating_mul(entry_size));
    if end > data.len() as u64 {
        return Err(HeaderError::Truncated(format!(
            "the section headers end at byte {end} but the file has {} bytes",
            data.len()
        )));
    }
    let sh_type = |index: u64| entry(index, 4, 4).unwrap_or(0);
    if (1..count).all(|i| sh_type(i) == 0) {
        return broken(format!(
            "all {count} entries at byte {shoff} are empty (zeroed or a wrong e_shoff)"
        ));
    }
    const SHT_STRTAB: u64 = 3;
    if names == 0 || names >= count || sh_type(names) != SHT_STRTAB {
        return broken(format!(
            "e_shstrndx {names} is not a string table among its {count} entries, so no section has a name (a wrong e_shoff or e_shstrndx)"
        ));
    }
    Ok(())
}

fn short(data: &[u8]) -> HeaderError {
    HeaderError::Truncated(format!("{} bytes, shorter than an ELF header", data.len()))
}

/// "AArch64 (e_machine 183)", for errors about the wrong target.
pub fn machine_name(machine: u16) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn header(is_64: bool, little: bool) -> Vec<u8> {
        let mut bytes = vec![0u8; if is_64 { 64 } else { 52 }];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = if is_64 { 2 } else { 1 };
        bytes[5] = if little { 1 } else { 2 };
        bytes
    }

    #[test]
    fn bad_inputs_are_told_apart() {
        assert_eq!(check_header(b""), Err(HeaderError::Empty));
        assert_eq!(check_header(b"hello world\n"), Err(HeaderError::NotElf));
        let short = check_header(b"\x7fELF\x02\x01").unwrap_err().to_string();
        assert_eq!(
            short,
            "truncated ELF file: 6 bytes, shorter than an ELF header"
        );
        let mut odd = header(true, true);
        odd[4] = 9;
        assert!(matches!(check_header(&odd), Err(HeaderError::Invalid(_))));
    }

    #[test]
    fn reads_machine_and_table_bounds_in_every_class_and_byte_order() {
        // 64-bit little-endian AArch64: e_machine 183 at byte 18.
        let mut arm = header(true, true);
        arm[18] = 183;
        let parsed = check_header(&arm).unwrap();
        assert_eq!((parsed.machine, parsed.is_64), (183, true));
        assert_eq!(machine_name(parsed.machine), "AArch64 (e_machine 183)");

        // Section headers at 64, one entry of 64 bytes: past the end of a 64-byte file.
        arm[0x28] = 0x40;
        arm[0x3a] = 64;
        arm[0x3c] = 1;
        let cut = check_header(&arm).unwrap_err().to_string();
        assert_eq!(
            cut,
            "truncated ELF file: the section headers end at byte 128 but the file has 64 bytes"
        );

        // 32-bit big-endian PowerPC (20) with program headers at 52, 2 × 32 bytes.
        let mut ppc = header(false, false);
        ppc[19] = 20;
        ppc[0x1f] = 52;
        ppc[0x2b] = 32;
        ppc[0x2d] = 2;
        let cut = check_header(&ppc).unwrap_err().to_string();
        assert!(cut.contains("program headers end at byte 116"), "{cut}");
        ppc.resize(116, 0);
        let parsed = check_header(&ppc).unwrap();
        assert_eq!((parsed.machine, parsed.is_64), (20, false));
    }
}
