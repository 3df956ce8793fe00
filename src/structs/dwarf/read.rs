//! The parallel pass over a binary's units (rayon) and the merge of their results:
//! each unit is read into a `Table` and built into layouts once per struct identity;
//! a unit whose split DWARF is missing becomes a warning.

use super::builder::Builder;
use super::load::{self, directory_of};
use super::table::read_table;
use super::{Dwarf, Parsed, Seen, Slice, UnitResult};
use crate::structs::types::StructLayout;
use anyhow::{Context, Result};
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Read every struct of `path` (and its split DWARF). `progress(done, total)` is
/// called from the reading threads after each unit.
pub fn read_binary(path: &Path, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Parsed> {
    load::with_dwarf(path, |dwarf, package| {
        let headers = load::unit_headers(path, dwarf)?;
        let units = headers.len();
        let dir = directory_of(path);
        let seen = Seen::new();
        let done = AtomicUsize::new(0);
        let results: Vec<Result<UnitResult>> = headers
            .into_par_iter()
            .enumerate()
            .map(|(index, header)| {
                let offset = header
                    .offset()
                    .as_debug_info_offset()
                    .map(|o| o.0)
                    .unwrap_or(0);
                let result =
                    read_unit(dwarf, header, package, &dir, &seen, index).with_context(|| {
                        format!(
                            "{}: truncated or corrupt DWARF in the unit at .debug_info+{offset:#x}",
                            path.display()
                        )
                    });
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, units);
                result
            })
            .collect();
        merge(units, results, &seen)
    })
}

/// One unit's types, or the warning that its split DWARF is missing.
fn read_unit<'a>(
    dwarf: &Dwarf<'a>,
    header: gimli::UnitHeader<Slice<'a>>,
    package: Option<&load::Package<'a>>,
    dir: &Path,
    seen: &Seen,
    index: usize,
) -> Result<UnitResult> {
    let read = load::with_unit(dwarf, header, package, dir, |dwarf, unit| {
        let table = read_table(dwarf, unit)?;
        Ok(Builder::new(table, dwarf, unit).build(seen, index))
    })?;
    Ok(match read {
        load::Read::Walked(r) => r,
        load::Read::Empty => UnitResult::default(),
        load::Read::MissingDwo { name, looked_in } => UnitResult {
            warnings: vec![format!(
                "split DWARF unit {name} not found (looked in {}); its types are missing",
                looked_in
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
            ..UnitResult::default()
        },
    })
}

/// The units' results in unit order, duplicates dropped (of equal identities, the
/// lowest unit's copy is kept); the first error wins.
fn merge(units: usize, results: Vec<Result<UnitResult>>, seen: &Seen) -> Result<Parsed> {
    let mut parsed = Parsed {
        structs: Vec::new(),
        uses: Vec::new(),
        units,
        warnings: Vec::new(),
    };
    let mut uses = HashSet::new();
    // Units hash names by string offset; a name stored inline in one unit and by
    // offset in another gets past that, so drop exact duplicates here.
    let mut exact = HashSet::new();
    for (index, result) in results.into_iter().enumerate() {
        let r = result?;
        for (id, s) in r.structs {
            if seen.kept(id, index) && exact.insert(exact_key(&s)) {
                parsed.structs.push(s);
            }
        }
        for u in r.uses {
            if uses.insert(u.clone()) {
                parsed.uses.push(u);
            }
        }
        parsed.warnings.extend(r.warnings);
    }
    Ok(parsed)
}

/// Name, size and every member's name, place and type: equal layouts, equal keys.
type ExactKey = (String, u64, Vec<(String, u64, u64, Option<u64>, String)>);

fn exact_key(s: &StructLayout) -> ExactKey {
    let members = s
        .members
        .iter()
        .map(|m| {
            (
                m.name.clone(),
                m.offset,
                m.size,
                m.bit_offset,
                m.type_name.clone(),
            )
        })
        .collect();
    (s.name.clone(), s.size, members)
}
