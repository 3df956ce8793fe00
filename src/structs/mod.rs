//! Data layout from DWARF (docs/architecture.md §7): the plain types every other part of `structs`
//! talks through (`StructLayout`, `Member`, `ArrayUse`, `Hazard`), and `analyze`, which
//! loads a binary, parses its units in parallel, deduplicates types and runs the hazard
//! and suggestion passes.

pub mod dwarf;
pub mod elf;
pub mod hazards;
pub mod layout;
pub mod render;
pub mod suggest;
pub mod sync;

use anyhow::Result;
use rayon::prelude::*;
use regex::Regex;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `struct`, `class` or `union`, as DWARF tags it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    Struct,
    Class,
    Union,
}

impl RecordKind {
    pub fn keyword(self) -> &'static str {
        match self {
            RecordKind::Struct => "struct",
            RecordKind::Class => "class",
            RecordKind::Union => "union",
        }
    }
}

/// What makes a member matter for concurrency hazards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncKind {
    /// `_Atomic`, `std::atomic<…>`, `std::atomic_flag`, Rust `Atomic*`, kernel `atomic_t`.
    Atomic,
    /// pthread mutexes and spinlocks, `std::mutex`, Rust `Mutex`, kernel spinlocks.
    Lock,
}

/// One data member (or base class) of a struct, in declaration order.
#[derive(Debug, Clone, Serialize)]
pub struct Member {
    /// Member name; empty for a base class or an anonymous struct/union member.
    pub name: String,
    /// The member's type as C would spell it, without array dimensions.
    pub type_name: String,
    /// Array dimensions, outermost first (`int a[2][3]` → `[2, 3]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub array: Vec<u64>,
    /// Byte offset; for a bitfield, the offset of its storage unit (as pahole prints it).
    pub offset: u64,
    /// Size in bytes; for a bitfield, the size of its storage unit type.
    pub size: u64,
    /// The member type's natural alignment (with any `alignas` on the member).
    pub alignment: u64,
    /// Bitfield: first bit inside the storage unit, counted from its start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bit_offset: Option<u64>,
    /// Bitfield: width in bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bit_size: Option<u64>,
    /// A base class (C++ inheritance).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub base: bool,
    /// An atomic or a lock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncKind>,
    /// Bytes of hole after this member.
    #[serde(skip_serializing_if = "is_zero")]
    pub hole_after: u64,
    /// Bits of hole after this member (bitfields).
    #[serde(skip_serializing_if = "is_zero")]
    pub bit_hole_after: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// An atomic or lock anywhere inside a struct, nested members and small arrays expanded.
#[derive(Debug, Clone, Serialize)]
pub struct SyncMember {
    /// Path from the struct, e.g. `stats.hits` or `locks[2]`.
    pub path: String,
    pub offset: u64,
    pub size: u64,
    pub kind: SyncKind,
    pub type_name: String,
}

/// pahole's summary numbers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub cachelines: u64,
    pub members: u64,
    pub sum_members: u64,
    pub holes: u64,
    pub sum_holes: u64,
    pub bit_holes: u64,
    pub sum_bit_holes: u64,
    pub padding: u64,
    pub bit_padding: u64,
    pub last_cacheline: u64,
}

/// One struct, class or union with its complete layout.
#[derive(Debug, Clone, Serialize)]
pub struct StructLayout {
    /// Qualified name (`ns::outer::inner<int>`), or the typedef name of an anonymous struct.
    pub name: String,
    pub kind: RecordKind,
    pub size: u64,
    /// Alignment the type permits: DW_AT_alignment, else 1 if packed, else the largest member's.
    pub alignment: u64,
    /// DW_AT_alignment (`alignas`, `__attribute__((aligned))`, Rust `#[repr(align)]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explicit_alignment: Option<u64>,
    /// Packed: some member sits below its natural alignment, or the size is not a
    /// multiple of the largest member alignment (DWARF has no packed attribute).
    pub packed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decl_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decl_line: Option<u64>,
    pub members: Vec<Member>,
    pub summary: Summary,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sync_members: Vec<SyncMember>,
}

impl StructLayout {
    /// `name#size`: the key array uses refer to.
    pub fn key(&self) -> String {
        format!("{}#{}", self.name, self.size)
    }
}

/// An array of a struct that the binary declares: a member of another struct, or a variable.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Hash)]
pub struct ArrayUse {
    /// Key of the element struct (`name#size`).
    pub element: String,
    /// The containing struct's name, or None for a variable.
    pub parent: Option<String>,
    /// Alignment the container permits (the parent struct's, or the variable's).
    pub parent_alignment: u64,
    /// Member or variable name.
    pub name: String,
    /// Byte offset of the array inside the parent (0 for a variable).
    pub offset: u64,
    /// Number of elements (all dimensions multiplied).
    pub count: u64,
}

/// Options of one analysis (one-to-one with the CLI's flags).
#[derive(Debug, Clone)]
pub struct StructsOptions {
    pub binary: PathBuf,
    /// Exact name (qualified or not) or an anchored regex.
    pub filter: Option<String>,
    /// Cache-line size in bytes (a power of two).
    pub line: u64,
    pub suggest: bool,
}

/// The whole result: layouts, hazards and suggestions.
#[derive(Debug, Clone, Serialize)]
pub struct StructsReport {
    pub schema: &'static str,
    pub schema_version: u32,
    pub binary: String,
    pub line: u64,
    /// Compilation units read (skeletons resolved to their .dwo/.dwp).
    pub units: usize,
    /// Notes about input that was read partially (a missing .dwo, for example).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub structs: Vec<StructLayout>,
    /// Every hazard, worst first.
    pub hazards: Vec<hazards::Hazard>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<suggest::Suggestion>,
}

/// Compile a `--struct` filter: an exact name, or an anchored regex.
pub fn name_filter(filter: Option<&str>) -> Result<Option<(String, Option<Regex>)>> {
    let Some(text) = filter else { return Ok(None) };
    let regex = Regex::new(&format!("^(?:{text})$")).ok();
    Ok(Some((text.to_string(), regex)))
}

fn matches(filter: &Option<(String, Option<Regex>)>, name: &str) -> bool {
    match filter {
        None => true,
        Some((exact, regex)) => {
            let short = dwarf::unqualified(name);
            name == exact
                || short == exact
                || regex
                    .as_ref()
                    .is_some_and(|r| r.is_match(name) || r.is_match(short))
        }
    }
}

/// Load `options.binary`, read every struct, find hazards and (with `suggest`) reorders.
pub fn analyze(options: &StructsOptions) -> Result<StructsReport> {
    if !options.line.is_power_of_two() || options.line < 8 {
        anyhow::bail!(
            "--line must be a power of two of at least 8, got {}",
            options.line
        );
    }
    let filter = name_filter(options.filter.as_deref())?;
    let parsed = dwarf::read_binary(&options.binary)?;
    let mut structs = parsed.structs;
    structs
        .par_iter_mut()
        .for_each(|s| layout::summarize(s, options.line));
    structs.sort_by(|a, b| a.name.cmp(&b.name).then(a.size.cmp(&b.size)));

    let mut uses: HashMap<&str, Vec<&ArrayUse>> = HashMap::new();
    for u in &parsed.uses {
        uses.entry(u.element.as_str()).or_default().push(u);
    }
    let selected: Vec<&StructLayout> = structs
        .iter()
        .filter(|s| matches(&filter, &s.name))
        .collect();
    let mut found: Vec<hazards::Hazard> = selected
        .par_iter()
        .flat_map_iter(|s| {
            let key = s.key();
            let empty = Vec::new();
            let u = uses.get(key.as_str()).unwrap_or(&empty);
            hazards::find(s, u, options.line)
        })
        .collect();
    hazards::rank(&mut found);
    let suggestions = if options.suggest {
        selected
            .iter()
            .filter_map(|s| suggest::suggest(s, options.line))
            .collect()
    } else {
        Vec::new()
    };
    let selected_structs = if filter.is_some() {
        selected.into_iter().cloned().collect()
    } else {
        drop(selected);
        structs
    };
    Ok(StructsReport {
        schema: "ghostbench.structs",
        schema_version: 1,
        binary: options.binary.display().to_string(),
        line: options.line,
        units: parsed.units,
        warnings: parsed.warnings,
        structs: selected_structs,
        hazards: found,
        suggestions,
    })
}

/// The directory holding `path`, for resolving `.dwo` files.
pub(crate) fn directory_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}
