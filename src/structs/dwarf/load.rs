//! Getting at the DWARF of a binary: its mapped sections, its `.dwp` package if one
//! lies beside it, its unit headers, and split DWARF (a skeleton unit replaced by its
//! unit from the package or from its `.dwo` file, found via DW_AT_comp_dir or next to
//! the binary). The files are owned here; callers get borrowed views in a closure.

use super::{Dwarf, Slice, Unit};
use crate::structs::elf::{self, InputError};
use anyhow::Result;
use gimli::{EndianSlice, UnitType};
use std::path::{Path, PathBuf};

pub(super) type Package<'a> = gimli::DwarfPackage<Slice<'a>>;

/// Map `path` (and `path.dwp` if it exists) and call `f` with its DWARF and package.
/// A binary without .debug_info is `InputError::NoDebugInfo`.
pub(super) fn with_dwarf<R>(
    path: &Path,
    f: impl for<'a> FnOnce(&Dwarf<'a>, Option<&Package<'a>>) -> Result<R>,
) -> Result<R> {
    let mapped = elf::open(path)?;
    let file = elf::parse(path, mapped.bytes())?;
    let sections = elf::Sections::load(path, &file, false)?;
    if !sections.has_debug_info() {
        return Err(InputError::NoDebugInfo {
            path: path.to_path_buf(),
        }
        .into());
    }
    let dwarf = sections.dwarf();

    // A .dwp package next to the binary holds every split unit.
    let dwp_path = PathBuf::from(format!("{}.dwp", path.display()));
    if !dwp_path.is_file() {
        return f(&dwarf, None);
    }
    let dwp_mapped = elf::open(&dwp_path)?;
    let dwp_file = elf::parse(&dwp_path, dwp_mapped.bytes())?;
    let dwp_sections = elf::Sections::load(&dwp_path, &dwp_file, true)?;
    let package = gimli::DwarfPackage::load(
        |id| -> Result<_, gimli::Error> {
            Ok(EndianSlice::new(dwp_sections.get(id), dwp_sections.endian))
        },
        EndianSlice::new(&[], dwp_sections.endian),
    )
    .map_err(|e| corrupt(&dwp_path, format!("bad .dwp index: {e}")))?;
    f(&dwarf, Some(&package))
}

/// Every unit header of .debug_info, in order.
pub(super) fn unit_headers<'a>(
    path: &Path,
    dwarf: &Dwarf<'a>,
) -> Result<Vec<gimli::UnitHeader<Slice<'a>>>> {
    let mut headers = Vec::new();
    let mut iter = dwarf.units();
    loop {
        match iter.next() {
            Ok(Some(h)) => headers.push(h),
            Ok(None) => return Ok(headers),
            Err(e) => {
                return Err(corrupt(path, format!("bad unit header in .debug_info: {e}")).into())
            }
        }
    }
}

pub(super) fn corrupt(path: &Path, detail: String) -> InputError {
    InputError::Corrupt {
        path: path.to_path_buf(),
        detail,
    }
}

/// How a unit was read.
pub(super) enum Read<R> {
    /// `f` ran on the unit, or on the split unit that replaced its skeleton.
    Walked(R),
    /// A skeleton whose `.dwo` file is in none of the places looked in.
    MissingDwo {
        name: String,
        looked_in: Vec<PathBuf>,
    },
    /// A `.dwo` file without the unit the skeleton names.
    Empty,
}

/// Call `f` with the unit of `header`, or with the split unit that replaces it when it
/// is a skeleton: from `package`, else from its `.dwo` (looked for as DW_AT_dwo_name
/// if absolute, else under DW_AT_comp_dir, then by file name in `dir`).
pub(super) fn with_unit<'a, R>(
    dwarf: &Dwarf<'a>,
    header: gimli::UnitHeader<Slice<'a>>,
    package: Option<&Package<'a>>,
    dir: &Path,
    f: impl for<'b> FnOnce(&Dwarf<'b>, &Unit<'b>) -> Result<R>,
) -> Result<Read<R>> {
    let unit = dwarf.unit(header)?;
    let skeleton = match unit.header.type_() {
        UnitType::Skeleton(_) => true,
        UnitType::Compilation => unit.dwo_id.is_some(),
        _ => false,
    };
    if !skeleton {
        return f(dwarf, &unit).map(Read::Walked);
    }
    let dwo_id = unit.dwo_id;
    if let (Some(package), Some(id)) = (package, dwo_id) {
        if let Some(split) = package.find_cu(id, dwarf)? {
            if let Some(h) = split.units().next()? {
                let mut u = split.unit(h)?;
                u.copy_relocated_attributes(&unit);
                return f(&split, &u).map(Read::Walked);
            }
        }
    }
    let name = match unit.dwo_name()? {
        Some(v) => dwarf.attr_string(&unit, v)?.to_string_lossy().into_owned(),
        None => return f(dwarf, &unit).map(Read::Walked),
    };
    let candidates = dwo_candidates(&name, unit.comp_dir.map(|d| d.to_string_lossy()), dir);
    let Some(found) = candidates.iter().find(|p| p.is_file()) else {
        return Ok(Read::MissingDwo {
            name,
            looked_in: candidates,
        });
    };
    let mapped = elf::open(found)?;
    let file = elf::parse(found, mapped.bytes())?;
    let sections = elf::Sections::load(found, &file, true)?;
    let mut split = sections.dwarf();
    split.make_dwo(dwarf);
    let mut iter = split.units();
    while let Some(h) = iter.next()? {
        let mut u = split.unit(h)?;
        if dwo_id.is_some() && u.dwo_id.is_some() && u.dwo_id != dwo_id {
            continue;
        }
        u.copy_relocated_attributes(&unit);
        return f(&split, &u).map(Read::Walked);
    }
    Ok(Read::Empty)
}

/// Where a `.dwo` named `name` may be, in the order to try.
fn dwo_candidates(
    name: &str,
    comp_dir: Option<std::borrow::Cow<'_, str>>,
    dir: &Path,
) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    let as_path = PathBuf::from(name);
    if as_path.is_absolute() {
        candidates.push(as_path.clone());
    } else if let Some(comp_dir) = comp_dir {
        candidates.push(Path::new(comp_dir.as_ref()).join(&as_path));
    }
    if let Some(base) = as_path.file_name() {
        candidates.push(dir.join(base));
    }
    candidates
}

/// The directory holding `path`, for resolving `.dwo` files.
pub(super) fn directory_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dwo_looked_for_under_comp_dir_then_beside_the_binary() {
        let c = dwo_candidates("obj/a.dwo", Some("/build".into()), Path::new("/bin"));
        assert_eq!(
            c,
            vec![
                PathBuf::from("/build/obj/a.dwo"),
                PathBuf::from("/bin/a.dwo")
            ]
        );
        let c = dwo_candidates("/abs/b.dwo", Some("/build".into()), Path::new("/bin"));
        assert_eq!(
            c,
            vec![PathBuf::from("/abs/b.dwo"), PathBuf::from("/bin/b.dwo")]
        );
        let c = dwo_candidates("c.dwo", None, Path::new("."));
        assert_eq!(c, vec![PathBuf::from("./c.dwo")]);
    }
}
