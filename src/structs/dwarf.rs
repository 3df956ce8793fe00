//! Reading types from DWARF. Every compilation unit is read in one forward pass over
//! its DIEs (in parallel over units with rayon) into a compact table of type DIEs;
//! function bodies are skipped with DW_AT_sibling. Layouts are then built only for
//! structs not already seen in another unit, so the same header type read from 3 000
//! kernel units costs one hash lookup per unit after the first.
//!
//! Split DWARF: a skeleton unit is replaced by its unit from `BINARY.dwp` or from its
//! `.dwo` file (DW_AT_dwo_name relative to DW_AT_comp_dir, else next to the binary).

use super::elf::{self, InputError};
use super::{directory_of, ArrayUse, Member, RecordKind, StructLayout, SyncKind, SyncMember};
use anyhow::{Context, Result};
use gimli::{constants as dw, AttributeValue, EndianSlice, Reader, RunTimeEndian, UnitType};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
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

struct Shared<'a, 'p> {
    dir: PathBuf,
    package: Option<&'p gimli::DwarfPackage<Slice<'a>>>,
    seen: Seen,
}

#[derive(Default)]
struct UnitResult {
    structs: Vec<StructLayout>,
    uses: Vec<ArrayUse>,
    warnings: Vec<String>,
}

/// Read every struct of `path` (and its split DWARF).
pub fn read_binary(path: &Path) -> Result<Parsed> {
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
    let dwp_mapped = if dwp_path.is_file() {
        Some(elf::open(&dwp_path)?)
    } else {
        None
    };
    let dwp_file = match &dwp_mapped {
        Some(m) => Some(elf::parse(&dwp_path, m.bytes())?),
        None => None,
    };
    let dwp_sections = match &dwp_file {
        Some(f) => Some(elf::Sections::load(&dwp_path, f, true)?),
        None => None,
    };
    let package = match &dwp_sections {
        Some(s) => Some(
            gimli::DwarfPackage::load(
                |id| -> Result<_, gimli::Error> { Ok(EndianSlice::new(s.get(id), s.endian)) },
                EndianSlice::new(&[], s.endian),
            )
            .map_err(|e| corrupt(&dwp_path, format!("bad .dwp index: {e}")))?,
        ),
        None => None,
    };

    let mut headers = Vec::new();
    let mut iter = dwarf.units();
    loop {
        match iter.next() {
            Ok(Some(h)) => headers.push(h),
            Ok(None) => break,
            Err(e) => {
                return Err(corrupt(path, format!("bad unit header in .debug_info: {e}")).into())
            }
        }
    }
    let ctx = Shared {
        dir: directory_of(path),
        package: package.as_ref(),
        seen: Seen::new(),
    };
    let units = headers.len();
    let results: Vec<Result<UnitResult>> = headers
        .into_par_iter()
        .map(|header| {
            let offset = header
                .offset()
                .as_debug_info_offset()
                .map(|o| o.0)
                .unwrap_or(0);
            read_unit(&dwarf, header, &ctx).with_context(|| {
                format!(
                    "{}: truncated or corrupt DWARF in the unit at .debug_info+{offset:#x}",
                    path.display()
                )
            })
        })
        .collect();
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
            let key = (
                s.name.clone(),
                s.size,
                s.members
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
                    .collect::<Vec<_>>(),
            );
            if exact.insert(key) {
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

fn corrupt(path: &Path, detail: String) -> InputError {
    InputError::Corrupt {
        path: path.to_path_buf(),
        detail,
    }
}

fn read_unit<'a>(
    dwarf: &Dwarf<'a>,
    header: gimli::UnitHeader<Slice<'a>>,
    ctx: &Shared<'a, '_>,
) -> Result<UnitResult> {
    let unit = dwarf.unit(header)?;
    let skeleton = match unit.header.type_() {
        UnitType::Skeleton(_) => true,
        UnitType::Compilation => unit.dwo_id.is_some(),
        _ => false,
    };
    if !skeleton {
        return walk(dwarf, &unit, ctx);
    }
    let dwo_id = unit.dwo_id;
    if let (Some(package), Some(id)) = (ctx.package, dwo_id) {
        if let Some(split) = package.find_cu(id, dwarf)? {
            if let Some(h) = split.units().next()? {
                let mut u = split.unit(h)?;
                u.copy_relocated_attributes(&unit);
                return walk(&split, &u, ctx);
            }
        }
    }
    let name = match unit.dwo_name()? {
        Some(v) => dwarf.attr_string(&unit, v)?.to_string_lossy().into_owned(),
        None => return walk(dwarf, &unit, ctx),
    };
    let comp_dir = unit.comp_dir.map(|d| d.to_string_lossy().into_owned());
    let mut candidates = Vec::new();
    let as_path = PathBuf::from(&name);
    if as_path.is_absolute() {
        candidates.push(as_path.clone());
    } else if let Some(dir) = &comp_dir {
        candidates.push(Path::new(dir).join(&as_path));
    }
    if let Some(base) = as_path.file_name() {
        candidates.push(ctx.dir.join(base));
    }
    let Some(found) = candidates.iter().find(|p| p.is_file()) else {
        let mut r = UnitResult::default();
        r.warnings.push(format!(
            "split DWARF unit {name} not found (looked in {}); its types are missing",
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return Ok(r);
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
        return walk(&split, &u, ctx);
    }
    Ok(UnitResult::default())
}

/// A name as DWARF stores it, resolved only when needed: most names of most units
/// belong to types already seen in another unit and are never read.
#[derive(Clone, Copy)]
enum Str<'a> {
    Bytes(&'a [u8]),
    Attr(AttributeValue<Slice<'a>>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Qual {
    Const,
    Volatile,
    Restrict,
    Atomic,
}

struct MemberNode<'a> {
    name: Option<Str<'a>>,
    ty: Option<u64>,
    location: Option<u64>,
    bit_size: Option<u64>,
    data_bit_offset: Option<u64>,
    bit_offset4: Option<u64>,
    byte_size4: Option<u64>,
    alignment: Option<u64>,
    base: bool,
}

struct Record<'a> {
    kind: RecordKind,
    name: Option<Str<'a>>,
    scope: String,
    typedef_name: Option<Str<'a>>,
    size: Option<u64>,
    alignment: Option<u64>,
    declaration: bool,
    members: Vec<MemberNode<'a>>,
    decl_file: Option<u64>,
    decl_line: Option<u64>,
}

enum Node<'a> {
    Base {
        name: Str<'a>,
        size: u64,
        encoding: u8,
    },
    Pointer {
        size: u64,
        target: Option<u64>,
        reference: bool,
    },
    Qual {
        kind: Qual,
        target: Option<u64>,
    },
    Typedef {
        name: Str<'a>,
        target: Option<u64>,
        alignment: Option<u64>,
    },
    Array {
        elem: Option<u64>,
        dims: Vec<Option<u64>>,
    },
    Record(Box<Record<'a>>),
    Enum {
        name: Option<Str<'a>>,
        size: u64,
    },
    Function,
    Other {
        name: Option<Str<'a>>,
        size: u64,
    },
}

#[derive(Default)]
struct Attrs<'a> {
    name: Option<Str<'a>>,
    byte_size: Option<u64>,
    bit_size: Option<u64>,
    data_bit_offset: Option<u64>,
    bit_offset: Option<u64>,
    location: Option<u64>,
    ty: Option<u64>,
    alignment: Option<u64>,
    count: Option<u64>,
    upper_bound: Option<i64>,
    lower_bound: Option<i64>,
    declaration: bool,
    external: bool,
    sibling: Option<u64>,
    encoding: Option<u8>,
    decl_file: Option<u64>,
    decl_line: Option<u64>,
}

fn read_attrs<'a>(
    entries: &mut gimli::EntriesRaw<'_, '_, Slice<'a>>,
    abbrev: &gimli::Abbreviation,
) -> Result<Attrs<'a>> {
    let mut a = Attrs::default();
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec)?;
        match attr.name() {
            dw::DW_AT_name => a.name = Some(Str::Attr(attr.value())),
            dw::DW_AT_byte_size => a.byte_size = attr.udata_value(),
            dw::DW_AT_bit_size => a.bit_size = attr.udata_value(),
            dw::DW_AT_data_bit_offset => a.data_bit_offset = attr.udata_value(),
            dw::DW_AT_bit_offset => a.bit_offset = attr.udata_value(),
            dw::DW_AT_data_member_location => {
                a.location = match attr.value() {
                    AttributeValue::Exprloc(expr) => plus_uconst(expr.0),
                    _ => attr.udata_value(),
                }
            }
            dw::DW_AT_type => {
                if let AttributeValue::UnitRef(o) = attr.value() {
                    a.ty = Some(o.0 as u64)
                }
            }
            dw::DW_AT_sibling => {
                if let AttributeValue::UnitRef(o) = attr.value() {
                    a.sibling = Some(o.0 as u64)
                }
            }
            dw::DW_AT_alignment => a.alignment = attr.udata_value(),
            dw::DW_AT_count => a.count = attr.udata_value(),
            dw::DW_AT_upper_bound => {
                // data1..data8 are unsigned here (char buf[256] has upper bound 0xff).
                a.upper_bound = match attr.value() {
                    AttributeValue::Sdata(v) => Some(v),
                    _ => attr.udata_value().map(|v| v as i64),
                }
            }
            dw::DW_AT_lower_bound => {
                a.lower_bound = match attr.value() {
                    AttributeValue::Sdata(v) => Some(v),
                    _ => attr.udata_value().map(|v| v as i64),
                }
            }
            dw::DW_AT_declaration => {
                a.declaration = matches!(attr.value(), AttributeValue::Flag(true))
            }
            dw::DW_AT_external => a.external = matches!(attr.value(), AttributeValue::Flag(true)),
            dw::DW_AT_encoding => {
                if let AttributeValue::Encoding(e) = attr.value() {
                    a.encoding = Some(e.0)
                }
            }
            dw::DW_AT_decl_file => a.decl_file = attr.udata_value(),
            dw::DW_AT_decl_line => a.decl_line = attr.udata_value(),
            _ => {}
        }
    }
    Ok(a)
}

/// DWARF 2 style member location: `DW_OP_plus_uconst N`.
fn plus_uconst(mut expr: Slice<'_>) -> Option<u64> {
    let op = expr.read_u8().ok()?;
    if op == dw::DW_OP_plus_uconst.0 {
        expr.read_uleb128().ok()
    } else {
        None
    }
}

#[derive(Clone)]
enum Ctx {
    Scope(Option<String>),
    Record(usize),
    Array(usize),
    Skip,
}

/// The type DIEs of one unit, in DIE order (so lookups are binary searches).
struct Table<'a> {
    offsets: Vec<u64>,
    nodes: Vec<Node<'a>>,
    variables: Vec<(Str<'a>, u64, Option<u64>)>,
}

fn walk<'a>(dwarf: &Dwarf<'a>, unit: &Unit<'a>, ctx: &Shared<'a, '_>) -> Result<UnitResult> {
    let table = read_table(dwarf, unit)?;
    Ok(Builder::new(table, dwarf, unit).build(&ctx.seen))
}

fn read_table<'a>(dwarf: &Dwarf<'a>, unit: &Unit<'a>) -> Result<Table<'a>> {
    let mut t = Table {
        offsets: Vec::new(),
        nodes: Vec::new(),
        variables: Vec::new(),
    };
    let mut stack: Vec<Ctx> = Vec::new();
    let mut entries = unit.entries_raw(None)?;
    while !entries.is_empty() {
        let offset = entries.next_offset().0 as u64;
        let Some(abbrev) = entries.read_abbreviation()? else {
            stack.pop();
            continue;
        };
        let parent = stack.last().cloned();
        let children = abbrev.has_children();
        if matches!(parent, Some(Ctx::Skip)) {
            entries.skip_attributes(abbrev.attributes())?;
            if children {
                stack.push(Ctx::Skip);
            }
            continue;
        }
        let tag = abbrev.tag();
        let push = |t: &mut Table<'a>, node: Node<'a>| {
            t.offsets.push(offset);
            t.nodes.push(node);
            t.nodes.len() - 1
        };
        let next_ctx = match tag {
            dw::DW_TAG_compile_unit
            | dw::DW_TAG_partial_unit
            | dw::DW_TAG_skeleton_unit
            | dw::DW_TAG_type_unit => {
                entries.skip_attributes(abbrev.attributes())?;
                Ctx::Scope(None)
            }
            dw::DW_TAG_namespace => {
                let a = read_attrs(&mut entries, abbrev)?;
                Ctx::Scope(Some(
                    a.name
                        .map(|n| resolve(dwarf, unit, n))
                        .unwrap_or_else(|| "(anonymous namespace)".to_string()),
                ))
            }
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type => {
                let a = read_attrs(&mut entries, abbrev)?;
                let kind = match tag {
                    dw::DW_TAG_class_type => RecordKind::Class,
                    dw::DW_TAG_union_type => RecordKind::Union,
                    _ => RecordKind::Struct,
                };
                let scope = scope_of(&stack, &t, dwarf, unit);
                let i = push(
                    &mut t,
                    Node::Record(Box::new(Record {
                        kind,
                        name: a.name,
                        scope,
                        typedef_name: None,
                        size: a.byte_size,
                        alignment: a.alignment,
                        declaration: a.declaration,
                        members: Vec::new(),
                        decl_file: a.decl_file,
                        decl_line: a.decl_line,
                    })),
                );
                Ctx::Record(i)
            }
            dw::DW_TAG_member | dw::DW_TAG_inheritance
                if matches!(parent, Some(Ctx::Record(_))) =>
            {
                let a = read_attrs(&mut entries, abbrev)?;
                let is_static = a.declaration
                    || (a.external && a.location.is_none() && a.data_bit_offset.is_none());
                if let (Some(Ctx::Record(r)), false) = (&parent, is_static) {
                    if let Node::Record(rec) = &mut t.nodes[*r] {
                        rec.members.push(MemberNode {
                            name: a.name,
                            ty: a.ty,
                            location: a.location,
                            bit_size: a.bit_size,
                            data_bit_offset: a.data_bit_offset,
                            bit_offset4: a.bit_offset,
                            byte_size4: if a.bit_size.is_some() {
                                a.byte_size
                            } else {
                                None
                            },
                            alignment: a.alignment,
                            base: tag == dw::DW_TAG_inheritance,
                        });
                    }
                }
                Ctx::Skip
            }
            dw::DW_TAG_variable if matches!(parent, Some(Ctx::Scope(_))) => {
                let a = read_attrs(&mut entries, abbrev)?;
                if let (Some(name), Some(ty)) = (a.name, a.ty) {
                    t.variables.push((name, ty, a.alignment));
                }
                Ctx::Skip
            }
            dw::DW_TAG_base_type | dw::DW_TAG_unspecified_type => {
                let a = read_attrs(&mut entries, abbrev)?;
                let node = if tag == dw::DW_TAG_base_type {
                    Node::Base {
                        name: a.name.unwrap_or(Str::Bytes(b"?")),
                        size: a.byte_size.unwrap_or(0),
                        encoding: a.encoding.unwrap_or(0),
                    }
                } else {
                    Node::Other {
                        name: a.name,
                        size: a.byte_size.unwrap_or(0),
                    }
                };
                push(&mut t, node);
                Ctx::Skip
            }
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type
            | dw::DW_TAG_ptr_to_member_type => {
                let a = read_attrs(&mut entries, abbrev)?;
                let default = if tag == dw::DW_TAG_ptr_to_member_type {
                    16
                } else {
                    8
                };
                let target = if tag == dw::DW_TAG_ptr_to_member_type {
                    None
                } else {
                    a.ty
                };
                push(
                    &mut t,
                    Node::Pointer {
                        size: a.byte_size.unwrap_or(default),
                        target,
                        reference: tag != dw::DW_TAG_pointer_type
                            && tag != dw::DW_TAG_ptr_to_member_type,
                    },
                );
                Ctx::Skip
            }
            dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_atomic_type
            | dw::DW_TAG_immutable_type => {
                let a = read_attrs(&mut entries, abbrev)?;
                let kind = match tag {
                    dw::DW_TAG_volatile_type => Qual::Volatile,
                    dw::DW_TAG_restrict_type => Qual::Restrict,
                    dw::DW_TAG_atomic_type => Qual::Atomic,
                    _ => Qual::Const,
                };
                push(&mut t, Node::Qual { kind, target: a.ty });
                Ctx::Skip
            }
            dw::DW_TAG_typedef => {
                let a = read_attrs(&mut entries, abbrev)?;
                push(
                    &mut t,
                    Node::Typedef {
                        name: a.name.unwrap_or(Str::Bytes(b"?")),
                        target: a.ty,
                        alignment: a.alignment,
                    },
                );
                Ctx::Skip
            }
            dw::DW_TAG_array_type => {
                let a = read_attrs(&mut entries, abbrev)?;
                let i = push(
                    &mut t,
                    Node::Array {
                        elem: a.ty,
                        dims: Vec::new(),
                    },
                );
                Ctx::Array(i)
            }
            dw::DW_TAG_subrange_type | dw::DW_TAG_enumeration_type
                if matches!(parent, Some(Ctx::Array(_))) || tag == dw::DW_TAG_enumeration_type =>
            {
                let a = read_attrs(&mut entries, abbrev)?;
                if tag == dw::DW_TAG_enumeration_type {
                    push(
                        &mut t,
                        Node::Enum {
                            name: a.name,
                            size: a.byte_size.unwrap_or(4),
                        },
                    );
                } else if let Some(Ctx::Array(i)) = parent {
                    let count = a.count.or_else(|| {
                        a.upper_bound
                            .map(|u| (u - a.lower_bound.unwrap_or(0) + 1).max(0) as u64)
                    });
                    if let Node::Array { dims, .. } = &mut t.nodes[i] {
                        dims.push(count);
                    }
                }
                Ctx::Skip
            }
            dw::DW_TAG_subroutine_type => {
                entries.skip_attributes(abbrev.attributes())?;
                push(&mut t, Node::Function);
                Ctx::Skip
            }
            _ => {
                // Function bodies and everything else: jump over the subtree when the
                // producer gave DW_AT_sibling, else skip it entry by entry.
                if children && tag == dw::DW_TAG_subprogram {
                    let a = read_attrs(&mut entries, abbrev)?;
                    if let Some(sibling) = a.sibling.filter(|s| *s > offset) {
                        entries = unit.entries_raw(Some(gimli::UnitOffset(sibling as usize)))?;
                        continue;
                    }
                } else {
                    entries.skip_attributes(abbrev.attributes())?;
                }
                Ctx::Skip
            }
        };
        if children {
            stack.push(next_ctx);
        }
    }
    Ok(t)
}

/// `ns::outer` for a DIE whose parents are namespaces and named records.
fn scope_of<'a>(stack: &[Ctx], t: &Table<'a>, dwarf: &Dwarf<'a>, unit: &Unit<'a>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in stack {
        match c {
            Ctx::Scope(Some(n)) => parts.push(n.clone()),
            Ctx::Record(i) => {
                if let Node::Record(r) = &t.nodes[*i] {
                    if let Some(n) = r.name {
                        parts.push(resolve(dwarf, unit, n));
                    }
                }
            }
            _ => {}
        }
    }
    parts.join("::")
}

/// The text of a name; names that cannot be read become `?`.
fn resolve<'a>(dwarf: &Dwarf<'a>, unit: &Unit<'a>, s: Str<'a>) -> String {
    let bytes = match s {
        Str::Bytes(b) => b,
        Str::Attr(v) => match dwarf.attr_string(unit, v) {
            Ok(r) => r.slice(),
            Err(_) => b"?",
        },
    };
    String::from_utf8_lossy(bytes).into_owned()
}

/// Feed a name's identity to a hasher without reading the string when it is an
/// offset into .debug_str (equal strings share one offset in a linked binary).
fn hash_str<H: Hasher>(s: Option<Str<'_>>, h: &mut H) {
    match s {
        None => h.write_u8(0),
        Some(Str::Bytes(b)) => {
            h.write_u8(1);
            h.write(b);
        }
        Some(Str::Attr(AttributeValue::String(b))) => {
            h.write_u8(1);
            h.write(b.slice());
        }
        Some(Str::Attr(AttributeValue::DebugStrRef(o))) => {
            h.write_u8(2);
            h.write_u64(o.0 as u64);
        }
        Some(Str::Attr(AttributeValue::DebugStrOffsetsIndex(o))) => {
            h.write_u8(3);
            h.write_u64(o.0 as u64);
        }
        Some(Str::Attr(AttributeValue::DebugLineStrRef(o))) => {
            h.write_u8(4);
            h.write_u64(o.0 as u64);
        }
        Some(Str::Attr(_)) => h.write_u8(5),
    }
}

/// FxHash with a final avalanche: fast for the short keys of struct identities.
#[derive(Default)]
struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(word));
        }
        let mut word = [0u8; 8];
        let rest = chunks.remainder();
        word[..rest.len()].copy_from_slice(rest);
        self.write_u64(u64::from_le_bytes(word) ^ (rest.len() as u64) << 56);
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }

    fn finish(&self) -> u64 {
        // splitmix64's finaliser
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The last `::` component of a qualified name, ignoring `::` inside template arguments.
pub fn unqualified(name: &str) -> &str {
    let mut depth = 0i32;
    let bytes = name.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth -= 1,
            b':' if depth == 0 && i + 1 < bytes.len() && bytes[i + 1] == b':' => {
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    &name[start..]
}

const MAX_DEPTH: u32 = 48;
const UNKNOWN: u64 = u64::MAX;

/// Computes sizes, alignments, names and atomics from a unit's table, with memos.
struct Builder<'a, 'd> {
    t: Table<'a>,
    dwarf: &'d Dwarf<'a>,
    unit: &'d Unit<'a>,
    size_memo: Vec<u64>,
    align_memo: Vec<u64>,
    packed_memo: Vec<u8>,
    sync_memo: Vec<u8>,
    files: Option<HashMap<u64, String>>,
}

impl<'a, 'd> Builder<'a, 'd> {
    fn new(t: Table<'a>, dwarf: &'d Dwarf<'a>, unit: &'d Unit<'a>) -> Self {
        let n = t.nodes.len();
        let mut b = Builder {
            t,
            dwarf,
            unit,
            size_memo: vec![UNKNOWN; n],
            align_memo: vec![UNKNOWN; n],
            packed_memo: vec![0; n],
            sync_memo: vec![0; n],
            files: None,
        };
        // Anonymous structs take the name of a typedef that names them.
        for i in 0..n {
            if let Node::Typedef {
                name,
                target: Some(target),
                ..
            } = b.t.nodes[i]
            {
                if let Some(j) = b.idx(target) {
                    if let Node::Record(r) = &mut b.t.nodes[j] {
                        if r.name.is_none() && r.typedef_name.is_none() {
                            r.typedef_name = Some(name);
                        }
                    }
                }
            }
        }
        b
    }

    fn idx(&self, off: u64) -> Option<usize> {
        self.t.offsets.binary_search(&off).ok()
    }

    fn target(&self, off: Option<u64>) -> Option<usize> {
        off.and_then(|o| self.idx(o))
    }

    fn size(&mut self, i: usize, depth: u32) -> u64 {
        if self.size_memo[i] != UNKNOWN {
            return self.size_memo[i];
        }
        if depth > MAX_DEPTH {
            return 0;
        }
        let s = match &self.t.nodes[i] {
            Node::Base { size, .. } | Node::Pointer { size, .. } | Node::Other { size, .. } => {
                *size
            }
            Node::Enum { size, .. } => *size,
            Node::Qual { target, .. } | Node::Typedef { target, .. } => {
                match self.target(*target) {
                    Some(j) => self.size(j, depth + 1),
                    None => 0,
                }
            }
            Node::Array { elem, dims } => {
                let count: u64 = dims.iter().map(|d| d.unwrap_or(0)).product();
                match self.target(*elem) {
                    Some(j) => self.size(j, depth + 1).saturating_mul(count),
                    None => 0,
                }
            }
            Node::Record(r) => r.size.unwrap_or(0),
            Node::Function => 0,
        };
        self.size_memo[i] = s;
        s
    }

    fn align(&mut self, i: usize, depth: u32) -> u64 {
        if self.align_memo[i] != UNKNOWN {
            return self.align_memo[i];
        }
        if depth > MAX_DEPTH {
            return 1;
        }
        let a = match &self.t.nodes[i] {
            Node::Base { size, encoding, .. } => {
                // Complex numbers align like one of their two parts.
                let s = if *encoding == dw::DW_ATE_complex_float.0 {
                    size / 2
                } else {
                    *size
                };
                natural(s)
            }
            Node::Pointer { size, .. } | Node::Other { size, .. } | Node::Enum { size, .. } => {
                natural(*size)
            }
            Node::Qual { kind, target } => {
                let (kind, target) = (*kind, *target);
                let inner = match self.target(target) {
                    Some(j) => self.align(j, depth + 1),
                    None => 1,
                };
                if kind == Qual::Atomic {
                    let size = self.size(i, depth + 1);
                    if size.is_power_of_two() && size <= 16 {
                        inner.max(size)
                    } else {
                        inner
                    }
                } else {
                    inner
                }
            }
            Node::Typedef {
                target, alignment, ..
            } => {
                let (target, alignment) = (*target, *alignment);
                match (alignment, self.target(target)) {
                    (Some(a), _) => a.max(1),
                    (None, Some(j)) => self.align(j, depth + 1),
                    (None, None) => 1,
                }
            }
            Node::Array { elem, .. } => match self.target(*elem) {
                Some(j) => self.align(j, depth + 1),
                None => 1,
            },
            Node::Record(_) => {
                let (natural, packed) = self.record_natural(i, depth);
                let explicit = match &self.t.nodes[i] {
                    Node::Record(r) => r.alignment,
                    _ => None,
                };
                match explicit {
                    Some(a) => a.max(1),
                    None if packed => 1,
                    None => natural,
                }
            }
            Node::Function => 1,
        };
        self.align_memo[i] = a;
        a
    }

    /// Largest member alignment, and whether the layout can only come from packing.
    fn record_natural(&mut self, i: usize, depth: u32) -> (u64, bool) {
        let (count, size) = match &self.t.nodes[i] {
            Node::Record(r) => (r.members.len(), r.size.unwrap_or(0)),
            _ => return (1, false),
        };
        let mut natural = 1;
        let mut packed = false;
        for k in 0..count {
            let (ty, location, bitfield, member_align) = match &self.t.nodes[i] {
                Node::Record(r) => {
                    let m = &r.members[k];
                    (m.ty, m.location, m.bit_size.is_some(), m.alignment)
                }
                _ => unreachable_record(),
            };
            let a = match self.target(ty) {
                Some(j) => self.align(j, depth + 1),
                None => 1,
            }
            .max(member_align.unwrap_or(1));
            natural = natural.max(a);
            if !bitfield && location.unwrap_or(0) % a != 0 {
                packed = true;
            }
        }
        if size > 0 && size % natural != 0 {
            packed = true;
        }
        self.packed_memo[i] = if packed { 2 } else { 1 };
        (natural, packed)
    }

    fn is_packed(&mut self, i: usize) -> bool {
        if self.packed_memo[i] == 0 {
            self.record_natural(i, 0);
        }
        self.packed_memo[i] == 2
    }

    fn text(&self, s: Str<'a>) -> String {
        resolve(self.dwarf, self.unit, s)
    }

    fn record_name(&self, r: &Record<'a>) -> Option<String> {
        let base = r.name.or(r.typedef_name)?;
        let base = self.text(base);
        Some(if r.scope.is_empty() || r.name.is_none() {
            base
        } else {
            format!("{}::{base}", r.scope)
        })
    }

    /// The type as C would spell it.
    fn name(&mut self, i: usize, depth: u32) -> String {
        if depth > MAX_DEPTH {
            return "?".to_string();
        }
        match &self.t.nodes[i] {
            Node::Base { name, .. } => self.text(*name),
            Node::Other { name, .. } => name.map(|n| self.text(n)).unwrap_or_else(|| "void".into()),
            Node::Enum { name, .. } => match name {
                Some(n) => format!("enum {}", self.text(*n)),
                None => "enum {...}".to_string(),
            },
            Node::Typedef { name, .. } => self.text(*name),
            Node::Function => "fn()".to_string(),
            Node::Record(r) => match (r.name, self.record_name(r)) {
                (Some(_), Some(n)) => format!("{} {n}", r.kind.keyword()),
                (None, Some(n)) => n,
                _ => format!("{} {{...}}", r.kind.keyword()),
            },
            Node::Pointer {
                target, reference, ..
            } => {
                let star = if *reference { "&" } else { "*" };
                match self.target(*target) {
                    Some(j) => format!("{} {star}", self.name(j, depth + 1)),
                    None => format!("void {star}"),
                }
            }
            Node::Qual { kind, target } => {
                let word = match kind {
                    Qual::Const => "const",
                    Qual::Volatile => "volatile",
                    Qual::Restrict => "restrict",
                    Qual::Atomic => "_Atomic",
                };
                let inner = match self.target(*target) {
                    Some(j) => self.name(j, depth + 1),
                    None => "void".to_string(),
                };
                format!("{word} {inner}")
            }
            Node::Array { elem, dims } => {
                let dims: String = dims
                    .iter()
                    .map(|d| format!("[{}]", d.unwrap_or(0)))
                    .collect();
                let inner = match self.target(*elem) {
                    Some(j) => self.name(j, depth + 1),
                    None => "?".to_string(),
                };
                format!("{inner}{dims}")
            }
        }
    }

    /// Atomic or lock, looking through typedefs and qualifiers.
    fn sync(&mut self, i: usize, depth: u32) -> Option<SyncKind> {
        match self.sync_memo[i] {
            1 => return None,
            2 => return Some(SyncKind::Atomic),
            3 => return Some(SyncKind::Lock),
            _ => {}
        }
        if depth > MAX_DEPTH {
            return None;
        }
        let kind = match &self.t.nodes[i] {
            Node::Typedef { name, target, .. } => {
                let target = *target;
                match classify_name(&self.text(*name), "") {
                    Some(k) => Some(k),
                    None => self.target(target).and_then(|j| self.sync(j, depth + 1)),
                }
            }
            Node::Qual { kind, target } => {
                let (kind, target) = (*kind, *target);
                if kind == Qual::Atomic {
                    Some(SyncKind::Atomic)
                } else {
                    self.target(target).and_then(|j| self.sync(j, depth + 1))
                }
            }
            Node::Record(r) => match r.name {
                Some(n) => classify_name(&self.text(n), &r.scope),
                None => None,
            },
            _ => None,
        };
        self.sync_memo[i] = match kind {
            None => 1,
            Some(SyncKind::Atomic) => 2,
            Some(SyncKind::Lock) => 3,
        };
        kind
    }

    /// Strip typedefs and non-atomic qualifiers.
    fn strip(&self, mut i: usize) -> usize {
        for _ in 0..MAX_DEPTH {
            match &self.t.nodes[i] {
                Node::Typedef { target, .. } => match self.target(*target) {
                    Some(j) => i = j,
                    None => return i,
                },
                Node::Qual { kind, target } if *kind != Qual::Atomic => {
                    match self.target(*target) {
                        Some(j) => i = j,
                        None => return i,
                    }
                }
                _ => return i,
            }
        }
        i
    }

    /// Every atomic and lock inside record `i`, with offsets from `base`.
    fn sync_members(
        &mut self,
        i: usize,
        base: u64,
        prefix: &str,
        depth: u32,
        out: &mut Vec<SyncMember>,
    ) {
        if depth > 6 || out.len() > 256 {
            return;
        }
        let count = match &self.t.nodes[i] {
            Node::Record(r) => r.members.len(),
            _ => return,
        };
        for k in 0..count {
            let (name, ty, location, bitfield) = match &self.t.nodes[i] {
                Node::Record(r) => {
                    let m = &r.members[k];
                    (
                        m.name.map(|n| self.text(n)),
                        m.ty,
                        m.location,
                        m.bit_size.is_some(),
                    )
                }
                _ => return,
            };
            let Some(j) = self.target(ty) else { continue };
            if bitfield {
                continue;
            }
            let offset = base + location.unwrap_or(0);
            let path = match &name {
                Some(n) => format!("{prefix}{n}"),
                None => prefix.trim_end_matches('.').to_string(),
            };
            self.sync_leaf(j, offset, path, depth, out);
        }
    }

    fn sync_leaf(
        &mut self,
        j: usize,
        offset: u64,
        path: String,
        depth: u32,
        out: &mut Vec<SyncMember>,
    ) {
        if let Some(kind) = self.sync(j, 0) {
            let size = self.size(j, 0);
            let type_name = self.name(j, 0);
            out.push(SyncMember {
                path,
                offset,
                size,
                kind,
                type_name,
            });
            return;
        }
        let s = self.strip(j);
        match &self.t.nodes[s] {
            Node::Record(_) => {
                let prefix = if path.is_empty() {
                    String::new()
                } else {
                    format!("{path}.")
                };
                self.sync_members(s, offset, &prefix, depth + 1, out);
            }
            Node::Array { elem, dims } => {
                let count: u64 = dims.iter().map(|d| d.unwrap_or(0)).product();
                let Some(e) = self.target(*elem) else { return };
                if count == 0 || count > 64 || !self.contains_sync(e, 0) {
                    return;
                }
                let size = self.size(e, 0);
                for n in 0..count {
                    self.sync_leaf(e, offset + n * size, format!("{path}[{n}]"), depth + 1, out);
                }
            }
            _ => {}
        }
    }

    fn contains_sync(&mut self, i: usize, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        if self.sync(i, 0).is_some() {
            return true;
        }
        let s = self.strip(i);
        let children: Vec<usize> = match &self.t.nodes[s] {
            Node::Record(r) => r
                .members
                .iter()
                .filter_map(|m| m.ty)
                .filter_map(|o| self.idx(o))
                .collect(),
            Node::Array { elem, .. } => self.target(*elem).into_iter().collect(),
            _ => return false,
        };
        children
            .into_iter()
            .any(|c| self.contains_sync(c, depth + 1))
    }

    fn file_name(&mut self, index: u64) -> Option<String> {
        if self.files.is_none() {
            let mut files = HashMap::new();
            if let Some(program) = &self.unit.line_program {
                let header = program.header();
                let mut k = 0u64;
                for file in header.file_names() {
                    let _ = file;
                    k += 1;
                }
                let first = if header.version() >= 5 { 0 } else { 1 };
                for n in first..first + k {
                    if let Some(file) = header.file(n) {
                        let name = self
                            .dwarf
                            .attr_string(self.unit, file.path_name())
                            .ok()
                            .map(|s| String::from_utf8_lossy(s.slice()).into_owned());
                        let dir = file
                            .directory(header)
                            .and_then(|d| self.dwarf.attr_string(self.unit, d).ok())
                            .map(|s| String::from_utf8_lossy(s.slice()).into_owned());
                        if let Some(name) = name {
                            let full = match dir {
                                Some(d) if !name.starts_with('/') && !d.is_empty() => {
                                    format!("{d}/{name}")
                                }
                                _ => name,
                            };
                            files.insert(n, full);
                        }
                    }
                }
            }
            self.files = Some(files);
        }
        self.files.as_ref().and_then(|f| f.get(&index).cloned())
    }

    fn identity(&mut self, i: usize) -> u64 {
        let mut h = FastHasher::default();
        let count = match &self.t.nodes[i] {
            Node::Record(r) => {
                hash_str(r.name, &mut h);
                hash_str(r.typedef_name, &mut h);
                r.scope.hash(&mut h);
                r.size.hash(&mut h);
                (r.kind as u8).hash(&mut h);
                r.members.len()
            }
            _ => 0,
        };
        for k in 0..count {
            let (ty, key) = match &self.t.nodes[i] {
                Node::Record(r) => {
                    let m = &r.members[k];
                    hash_str(m.name, &mut h);
                    (
                        m.ty,
                        (
                            m.location,
                            m.data_bit_offset,
                            m.bit_offset4,
                            m.bit_size,
                            m.base,
                        ),
                    )
                }
                _ => break,
            };
            key.hash(&mut h);
            if let Some(j) = self.target(ty) {
                self.size(j, 0).hash(&mut h);
            }
        }
        h.finish()
    }

    fn build(mut self, seen: &Seen) -> UnitResult {
        let mut out = UnitResult::default();
        for i in 0..self.t.nodes.len() {
            let Node::Record(r) = &self.t.nodes[i] else {
                continue;
            };
            if r.declaration || r.size.is_none() || (r.name.is_none() && r.typedef_name.is_none()) {
                continue;
            }
            let id = self.identity(i);
            if !seen.first(id) {
                continue;
            }
            let layout = self.layout(i);
            self.array_uses(i, &layout, &mut out.uses);
            out.structs.push(layout);
        }
        // Arrays of structs declared as variables.
        let variables = std::mem::take(&mut self.t.variables);
        for (name, ty, alignment) in variables {
            let Some(j) = self.idx(ty) else { continue };
            if let Some((element, count, elem_align)) = self.struct_array(j) {
                out.uses.push(ArrayUse {
                    element,
                    parent: None,
                    parent_alignment: elem_align.max(alignment.unwrap_or(1)),
                    name: self.text(name),
                    offset: 0,
                    count,
                });
            }
        }
        out
    }

    /// If `i` is an array of a named struct: its key, element count and alignment.
    fn struct_array(&mut self, i: usize) -> Option<(String, u64, u64)> {
        let s = self.strip(i);
        let Node::Array { elem, dims } = &self.t.nodes[s] else {
            return None;
        };
        let count: u64 = dims.iter().map(|d| d.unwrap_or(0)).product();
        let e = self.strip(self.target(*elem)?);
        let Node::Record(r) = &self.t.nodes[e] else {
            return None;
        };
        let name = self.record_name(r)?;
        let size = r.size?;
        if count < 2 || size == 0 {
            return None;
        }
        let align = self.align(e, 0);
        Some((format!("{name}#{size}"), count, align))
    }

    fn array_uses(&mut self, i: usize, layout: &StructLayout, uses: &mut Vec<ArrayUse>) {
        let tys: Vec<(Option<u64>, bool)> = match &self.t.nodes[i] {
            Node::Record(r) => r
                .members
                .iter()
                .map(|m| (m.ty, m.bit_size.is_some()))
                .collect(),
            _ => return,
        };
        for (k, (ty, bitfield)) in tys.into_iter().enumerate() {
            if bitfield {
                continue;
            }
            let Some(j) = self.target(ty) else { continue };
            if let Some((element, count, _)) = self.struct_array(j) {
                let m = &layout.members[k];
                uses.push(ArrayUse {
                    element,
                    parent: Some(layout.name.clone()),
                    parent_alignment: layout.alignment,
                    name: m.name.clone(),
                    offset: m.offset,
                    count,
                });
            }
        }
    }

    fn layout(&mut self, i: usize) -> StructLayout {
        let alignment = self.align(i, 0);
        let packed = self.is_packed(i);
        let (kind, name, size, explicit, decl_file, decl_line, count) = match &self.t.nodes[i] {
            Node::Record(r) => (
                r.kind,
                self.record_name(r).unwrap_or_default(),
                r.size.unwrap_or(0),
                r.alignment,
                r.decl_file,
                r.decl_line,
                r.members.len(),
            ),
            _ => unreachable_record(),
        };
        let mut members = Vec::with_capacity(count);
        for k in 0..count {
            let (m_name, ty, location, bit_size, dbo, bo4, bs4, m_align, base) =
                match &self.t.nodes[i] {
                    Node::Record(r) => {
                        let m = &r.members[k];
                        (
                            m.name,
                            m.ty,
                            m.location,
                            m.bit_size,
                            m.data_bit_offset,
                            m.bit_offset4,
                            m.byte_size4,
                            m.alignment,
                            m.base,
                        )
                    }
                    _ => unreachable_record(),
                };
            let j = self.target(ty);
            let (type_name, array, tsize, talign, sync) = match j {
                Some(j) => {
                    let s = self.strip(j);
                    let (type_name, array) = match &self.t.nodes[j] {
                        Node::Array { elem, dims } => {
                            let dims: Vec<u64> = dims.iter().map(|d| d.unwrap_or(0)).collect();
                            let e = *elem;
                            let name = match self.target(e) {
                                Some(e) => self.name(e, 0),
                                None => "?".into(),
                            };
                            (name, dims)
                        }
                        _ => (self.name(j, 0), Vec::new()),
                    };
                    let _ = s;
                    (
                        type_name,
                        array,
                        self.size(j, 0),
                        self.align(j, 0),
                        self.sync(j, 0),
                    )
                }
                None => ("void".to_string(), Vec::new(), 0, 1, None),
            };
            let loc = location.unwrap_or(0);
            let (offset, size, bit_offset) = match bit_size {
                Some(bits) => {
                    let unit = bs4.unwrap_or(tsize).max(1);
                    let absolute = match (dbo, bo4) {
                        (Some(d), _) => d,
                        (None, Some(b)) => {
                            if gimli::Endianity::is_big_endian(
                                gimli::Section::reader(&self.dwarf.debug_info).endian(),
                            ) {
                                loc * 8 + b
                            } else {
                                (loc * 8 + unit * 8).saturating_sub(b + bits)
                            }
                        }
                        (None, None) => loc * 8,
                    };
                    let offset = if dbo.is_some() {
                        absolute / (unit * 8) * unit
                    } else {
                        loc
                    };
                    (offset, unit, Some(absolute - offset * 8))
                }
                None => (loc, tsize, None),
            };
            members.push(Member {
                name: m_name.map(|n| self.text(n)).unwrap_or_default(),
                type_name,
                array,
                offset,
                size,
                alignment: talign.max(m_align.unwrap_or(1)),
                bit_offset,
                bit_size,
                base,
                sync,
                hole_after: 0,
                bit_hole_after: 0,
            });
        }
        let mut sync_members = Vec::new();
        self.sync_members(i, 0, "", 0, &mut sync_members);
        let decl_file = decl_file.and_then(|f| self.file_name(f));
        StructLayout {
            name,
            kind,
            size,
            alignment,
            explicit_alignment: explicit,
            packed,
            decl_file,
            decl_line,
            members,
            summary: Default::default(),
            sync_members,
        }
    }
}

fn unreachable_record() -> ! {
    // Only called with indices that were just matched as records.
    unreachable!("index does not name a record")
}

/// The natural alignment of a scalar of `size` bytes on the usual ABIs.
fn natural(size: u64) -> u64 {
    if size == 0 {
        return 1;
    }
    let pow2 = 1u64 << size.trailing_zeros();
    pow2.min(16)
}

/// Atomics and locks by name: C/kernel typedefs, C++ std classes, Rust std types.
fn classify_name(name: &str, scope: &str) -> Option<SyncKind> {
    const ATOMIC_TYPEDEFS: [&str; 4] = ["atomic_t", "atomic64_t", "atomic_long_t", "atomic_flag"];
    const LOCK_TYPEDEFS: [&str; 7] = [
        "pthread_mutex_t",
        "pthread_spinlock_t",
        "pthread_rwlock_t",
        "spinlock_t",
        "raw_spinlock_t",
        "rwlock_t",
        "arch_spinlock_t",
    ];
    if scope.is_empty() {
        if ATOMIC_TYPEDEFS.contains(&name) {
            return Some(SyncKind::Atomic);
        }
        if LOCK_TYPEDEFS.contains(&name) || ["mutex", "spinlock", "raw_spinlock"].contains(&name) {
            return Some(SyncKind::Lock);
        }
        return None;
    }
    let std_cpp = scope == "std" || scope.starts_with("std::__");
    if std_cpp {
        if name.starts_with("atomic<")
            || name.starts_with("__atomic_base<")
            || name.starts_with("__atomic_float<")
            || name == "atomic_flag"
            || name == "__atomic_flag_base"
        {
            return Some(SyncKind::Atomic);
        }
        if [
            "mutex",
            "recursive_mutex",
            "timed_mutex",
            "shared_mutex",
            "__mutex_base",
        ]
        .contains(&name)
        {
            return Some(SyncKind::Lock);
        }
    }
    // Rust: core::sync::atomic::AtomicU64, std::sync::mutex::Mutex<T>, …
    if scope.contains("sync") {
        if scope.contains("atomic") && name.starts_with("Atomic") {
            return Some(SyncKind::Atomic);
        }
        if name.starts_with("Mutex<") || name.starts_with("RwLock<") {
            return Some(SyncKind::Lock);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unqualified_names_ignore_template_scopes() {
        assert_eq!(unqualified("ns::foo<std::string>"), "foo<std::string>");
        assert_eq!(unqualified("plain"), "plain");
        assert_eq!(unqualified("a::b::c"), "c");
    }

    #[test]
    fn classifies_sync_types() {
        assert_eq!(classify_name("atomic<long>", "std"), Some(SyncKind::Atomic));
        assert_eq!(classify_name("pthread_mutex_t", ""), Some(SyncKind::Lock));
        assert_eq!(
            classify_name("AtomicU64", "core::sync::atomic"),
            Some(SyncKind::Atomic)
        );
        assert_eq!(
            classify_name("Mutex<u64>", "std::sync::poison::mutex"),
            Some(SyncKind::Lock)
        );
        assert_eq!(classify_name("vector<int>", "std"), None);
    }

    #[test]
    fn natural_alignment() {
        assert_eq!(natural(8), 8);
        assert_eq!(natural(12), 4);
        assert_eq!(natural(32), 16);
        assert_eq!(natural(0), 1);
    }
}
