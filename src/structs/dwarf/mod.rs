//! Reading types from DWARF: `read_binary` turns a binary (and its split DWARF) into
//! `StructLayout`s and `ArrayUse`s. Every compilation unit is read in one forward pass
//! over its DIEs (in parallel over units with rayon) into a compact table of type DIEs;
//! function bodies are skipped with DW_AT_sibling. Layouts are then built only for
//! structs not already seen in another unit, so the same header type read from 3 000
//! kernel units costs one hash lookup per unit after the first.
//!
//! Files: `load` (sections, .dwp, split DWARF), `attrs` + `table` (DIEs → type table),
//! `builder` (table → layouts: sizes, alignment, packing), `members` (member places and
//! bitfields), `names` (C spelling of types), `identity` (cross-unit dedup key),
//! `sync_members` (atomics and locks inside a record). This file owns the parallel pass
//! over units and the merge of their results.

mod attrs;
mod builder;
mod identity;
mod load;
mod members;
mod names;
mod sync_members;
mod table;

pub use names::unqualified;

use super::{directory_of, ArrayUse, StructLayout};
use anyhow::{Context, Result};
use gimli::{EndianSlice, RunTimeEndian};
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

type Slice<'a> = EndianSlice<'a, RunTimeEndian>;
type Dwarf<'a> = gimli::Dwarf<Slice<'a>>;
type Unit<'a> = gimli::Unit<Slice<'a>>;

/// Everything read from one binary, before hazards.
pub struct Parsed {
    pub structs: Vec<StructLayout>,
    pub uses: Vec<ArrayUse>,
    pub units: usize,
    pub warnings: Vec<String>,
}

/// Struct identities already turned into layouts, sharded so threads rarely wait.
struct Seen {
    shards: Vec<Mutex<HashSet<u64>>>,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            shards: (0..64).map(|_| Mutex::new(HashSet::new())).collect(),
        }
    }

    /// True the first time `key` is offered.
    fn first(&self, key: u64) -> bool {
        let shard = &self.shards[(key % 64) as usize];
        match shard.lock() {
            Ok(mut set) => set.insert(key),
            Err(poisoned) => poisoned.into_inner().insert(key),
        }
    }
}

/// What one unit contributes.
#[derive(Default)]
struct UnitResult {
    structs: Vec<StructLayout>,
    uses: Vec<ArrayUse>,
    warnings: Vec<String>,
}

/// Read every struct of `path` (and its split DWARF).
pub fn read_binary(path: &Path) -> Result<Parsed> {
    load::with_dwarf(path, |dwarf, package| {
        let headers = load::unit_headers(path, dwarf)?;
        let units = headers.len();
        let dir = directory_of(path);
        let seen = Seen::new();
        let results: Vec<Result<UnitResult>> = headers
            .into_par_iter()
            .map(|header| {
                let offset = header
                    .offset()
                    .as_debug_info_offset()
                    .map(|o| o.0)
                    .unwrap_or(0);
                read_unit(dwarf, header, package, &dir, &seen).with_context(|| {
                    format!(
                        "{}: truncated or corrupt DWARF in the unit at .debug_info+{offset:#x}",
                        path.display()
                    )
                })
            })
            .collect();
        merge(units, results)
    })
}

/// One unit's types, or the warning that its split DWARF is missing.
fn read_unit<'a>(
    dwarf: &Dwarf<'a>,
    header: gimli::UnitHeader<Slice<'a>>,
    package: Option<&load::Package<'a>>,
    dir: &Path,
    seen: &Seen,
) -> Result<UnitResult> {
    let read = load::with_unit(dwarf, header, package, dir, |dwarf, unit| {
        let table = table::read_table(dwarf, unit)?;
        Ok(builder::Builder::new(table, dwarf, unit).build(seen))
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

/// The units' results in unit order, duplicates dropped; the first error wins.
fn merge(units: usize, results: Vec<Result<UnitResult>>) -> Result<Parsed> {
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
    for result in results {
        let r = result?;
        for s in r.structs {
            if exact.insert(exact_key(&s)) {
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
