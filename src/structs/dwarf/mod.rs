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
//! `sync_members` (atomics and locks inside a record), `lock_uses` and `descend`
//! (lock sites → members), `read` (the parallel pass over
//! units and the merge of their results). This file owns the types they share.

mod attrs;
mod builder;
mod descend;
mod identity;
mod load;
mod lock_uses;
mod members;
mod names;
mod read;
mod sync_members;
mod table;

pub use lock_uses::SiteIndex;
pub use names::unqualified;
pub use read::read_binary;

use crate::structs::types::{ArrayUse, LockStats, LockUse, Mapping, StructLayout, Unmapped};
use gimli::{EndianSlice, RunTimeEndian};
use std::collections::HashSet;
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
    /// Lock sites mapped to record members (one site may map at several levels).
    pub lock_uses: Vec<LockUse>,
    pub lock_stats: LockStats,
}

/// Struct identities already turned into layouts, sharded so threads rarely wait.
pub(super) struct Seen {
    shards: Vec<Mutex<HashSet<u64>>>,
}

impl Seen {
    pub(super) fn new() -> Seen {
        Seen {
            shards: (0..64).map(|_| Mutex::new(HashSet::new())).collect(),
        }
    }

    /// True the first time `key` is offered.
    pub(super) fn first(&self, key: u64) -> bool {
        let shard = &self.shards[(key % 64) as usize];
        match shard.lock() {
            Ok(mut set) => set.insert(key),
            Err(poisoned) => poisoned.into_inner().insert(key),
        }
    }
}

/// What one unit contributes.
#[derive(Default)]
pub(super) struct UnitResult {
    pub(super) structs: Vec<StructLayout>,
    pub(super) uses: Vec<ArrayUse>,
    pub(super) warnings: Vec<String>,
    pub(super) locks: UnitLocks,
}

/// What became of one site in this unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Mapped(Mapping),
    Unmapped(Unmapped),
}

/// One unit's mapped sites.
#[derive(Default)]
pub(super) struct UnitLocks {
    pub(super) uses: Vec<LockUse>,
    pub(super) outcomes: Vec<(usize, Outcome)>,
}
