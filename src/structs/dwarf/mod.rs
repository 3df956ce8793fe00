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
//! `sync_members` (atomics and locks inside a record), `lock_uses`, `trace`, `join`,
//! `refine` and `descend` (lock sites → members), `read` (the parallel pass over
//! units and the merge of their results). This file owns the types they share.

mod attrs;
mod builder;
mod container;
mod descend;
mod entry;
mod global_uses;
mod identity;
mod inlined;
mod join;
mod load;
mod lock_uses;
mod members;
mod names;
mod read;
mod refine;
mod resolve;
mod returned;
mod sync_members;
mod table;
mod tagged;
mod trace;

pub use lock_uses::SiteIndex;
pub use names::unqualified;
pub use read::read_binary;

use crate::structs::types::{
    ArrayUse, LockStats, LockUse, Mapping, StructLayout, Unmapped, VariableSite,
};
use gimli::{EndianSlice, RunTimeEndian};
use std::collections::HashMap;
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
    /// The `.dwo` names of split units that were not found (their types are missing).
    pub missing_split_units: Vec<String>,
    /// Lock sites mapped to record members (one site may map at several levels).
    pub lock_uses: Vec<LockUse>,
    pub lock_stats: LockStats,
    /// Typedef names of records (typedef name, record key `name#size`), when asked for.
    pub aliases: Vec<(String, String)>,
}

/// For each struct identity, the lowest unit that has laid it out so far, sharded so
/// threads rarely wait. The copy of the lowest unit is the one kept, whatever order
/// the threads ran in, so the output does not depend on timing.
pub(super) struct Seen {
    shards: Vec<Mutex<HashMap<u64, usize>>>,
}

impl Seen {
    pub(super) fn new() -> Seen {
        Seen {
            shards: (0..64).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    /// True when `unit` is the lowest unit so far to offer `key` (it should lay it out).
    pub(super) fn claim(&self, key: u64, unit: usize) -> bool {
        let shard = &self.shards[(key % 64) as usize];
        let mut map = match shard.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        let lowest = map.entry(key).or_insert(unit);
        if unit <= *lowest {
            *lowest = unit;
            true
        } else {
            false
        }
    }

    /// Whether `unit` holds the copy of `key` that is kept (call after every claim).
    pub(super) fn kept(&self, key: u64, unit: usize) -> bool {
        let shard = &self.shards[(key % 64) as usize];
        let map = match shard.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        map.get(&key) == Some(&unit)
    }
}

/// What one unit contributes.
#[derive(Default)]
pub(super) struct UnitResult {
    /// Each layout with its identity (see `Seen`).
    pub(super) structs: Vec<(u64, StructLayout)>,
    pub(super) uses: Vec<ArrayUse>,
    pub(super) warnings: Vec<String>,
    pub(super) missing_split_units: Vec<String>,
    pub(super) locks: UnitLocks,
    pub(super) aliases: Vec<(String, String)>,
}

/// What became of one site in this unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Mapped(Mapping),
    /// Exactly a named global that is no record member (`UnitLocks::variables`).
    Variable,
    Unmapped(Unmapped),
}

/// One unit's mapped sites.
#[derive(Default)]
pub(super) struct UnitLocks {
    pub(super) uses: Vec<LockUse>,
    pub(super) outcomes: Vec<(usize, Outcome)>,
    /// The sites whose outcome is `Outcome::Variable`, with their variable.
    pub(super) variables: Vec<(usize, VariableSite)>,
}
