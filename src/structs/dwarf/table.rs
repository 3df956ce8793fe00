//! One unit's DIEs → a compact table of its type DIEs (`Table`), in one forward pass:
//! records with their data members, the types members point to, and the unit's
//! variables. Function bodies are jumped over with DW_AT_sibling; names are kept
//! unresolved (`Str`) until a layout needs them.

use super::attrs::{Attrs, Dies, Str};
use super::{Dwarf, Slice, Unit};
use crate::structs::types::RecordKind;
use anyhow::Result;
use gimli::{constants as dw, AttributeValue, DwTag};
use std::ops::Range;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Qual {
    Const,
    Volatile,
    Restrict,
    Atomic,
}

pub(super) struct MemberNode<'a> {
    pub name: Option<Str<'a>>,
    pub ty: Option<u64>,
    pub location: Option<u64>,
    pub bit_size: Option<u64>,
    pub data_bit_offset: Option<u64>,
    /// DWARF 2/3 `DW_AT_bit_offset` (counted from the storage unit's high bit).
    pub bit_offset4: Option<u64>,
    /// DWARF 2/3 `DW_AT_byte_size` of a bitfield's storage unit.
    pub byte_size4: Option<u64>,
    pub alignment: Option<u64>,
    pub base: bool,
}

pub(super) struct Record<'a> {
    pub kind: RecordKind,
    pub name: Option<Str<'a>>,
    pub scope: String,
    pub typedef_name: Option<Str<'a>>,
    pub size: Option<u64>,
    pub alignment: Option<u64>,
    pub declaration: bool,
    /// Its data members and base classes: a range of `Table::members`.
    pub members: Range<usize>,
    pub decl_file: Option<u64>,
    pub decl_line: Option<u64>,
}

pub(super) enum Node<'a> {
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
        /// An anonymous enum's enumerators and values, which pahole prints inline;
        /// a named enum's are not read.
        enumerators: Vec<(Str<'a>, i64)>,
    },
    /// A function type: return type (None = void), parameter types, `...`, prototyped.
    Function {
        ret: Option<u64>,
        params: Vec<Option<u64>>,
        varargs: bool,
        prototyped: bool,
    },
    Other {
        name: Option<Str<'a>>,
        size: u64,
    },
}

/// A variable at namespace scope: its name, type and `alignas`.
pub(super) type Variable<'a> = (Str<'a>, u64, Option<u64>);

/// A subprogram with code (low_pc or ranges) at namespace scope: where its DIE is
/// and its raw pc attributes, for the lock sites it may hold.
pub(super) struct Function<'a> {
    pub offset: u64,
    pub low_pc: Option<AttributeValue<Slice<'a>>>,
    pub high_pc: Option<AttributeValue<Slice<'a>>>,
    pub ranges: Option<AttributeValue<Slice<'a>>>,
}

/// A variable at namespace scope with a location (a global): location, type, and
/// name (None for a definition that takes its name from a declaration).
pub(super) type Global<'a> = (AttributeValue<Slice<'a>>, u64, Option<Str<'a>>);

/// The type DIEs of one unit, in DIE order (so lookups are binary searches).
pub(super) struct Table<'a> {
    pub offsets: Vec<u64>,
    pub nodes: Vec<Node<'a>>,
    /// Every record's members, each record's in one run (`Record::members`): one
    /// allocation per unit rather than one per record.
    pub members: Vec<MemberNode<'a>>,
    pub variables: Vec<Variable<'a>>,
    pub functions: Vec<Function<'a>>,
    pub globals: Vec<Global<'a>>,
}

/// What the open parent DIE is, for the children read after it.
#[derive(Clone, Copy)]
enum Ctx {
    /// A unit or a namespace (its name's index in `TableReader::scopes`).
    Scope(Option<usize>),
    Record(usize),
    Array(usize),
    /// An anonymous enumeration type, for its enumerators.
    Enum(usize),
    Function(usize),
    Skip,
}

/// What to do after one DIE: open it as `Ctx` for its children, or jump to a sibling.
enum Step {
    Open(Ctx),
    Jump(u64),
}

/// Read the type DIEs of `unit`.
pub(super) fn read_table<'a>(dwarf: &Dwarf<'a>, unit: &Unit<'a>) -> Result<Table<'a>> {
    let mut r = TableReader {
        dwarf,
        unit,
        t: Table {
            offsets: Vec::new(),
            nodes: Vec::new(),
            members: Vec::new(),
            variables: Vec::new(),
            functions: Vec::new(),
            globals: Vec::new(),
        },
        stack: Vec::new(),
        scopes: Vec::new(),
        open: Vec::new(),
        outermost: None,
        parked: Vec::new(),
        parked_records: Vec::new(),
        declared: Vec::new(),
        defined: Vec::new(),
    };
    let mut entries = Dies::new(unit)?;
    while !entries.is_empty() {
        let offset = entries.next_offset() as u64;
        let Some(abbrev) = entries.read_abbreviation()? else {
            if let Some(Ctx::Record(i)) = r.stack.pop() {
                r.close(i);
            }
            continue;
        };
        let parent = r.stack.last().copied();
        let next = if matches!(parent, Some(Ctx::Skip)) {
            entries.skip(abbrev)?;
            Ctx::Skip
        } else {
            match r.entry(&mut entries, abbrev, offset, parent)? {
                Step::Open(ctx) => ctx,
                Step::Jump(sibling) => {
                    entries.seek(sibling as usize)?;
                    continue;
                }
            }
        };
        if abbrev.has_children() {
            r.stack.push(next);
        } else if let Ctx::Record(i) = next {
            r.close(i);
        }
    }
    // Records left open by a unit that ends early keep the members read.
    while let Some(c) = r.stack.pop() {
        if let Ctx::Record(i) = c {
            r.close(i);
        }
    }
    // A definition whose type is its declaration's: a global too.
    r.declared.sort_unstable();
    for (location, spec) in std::mem::take(&mut r.defined) {
        if let Ok(k) = r.declared.binary_search_by_key(&spec, |d| d.0) {
            r.t.globals.push((location, r.declared[k].1, None));
        }
    }
    Ok(r.t)
}

struct TableReader<'a, 'd> {
    dwarf: &'d Dwarf<'a>,
    unit: &'d Unit<'a>,
    t: Table<'a>,
    /// One entry per open DIE with children.
    stack: Vec<Ctx>,
    /// The names of the namespaces met (`Ctx::Scope`).
    scopes: Vec<String>,
    /// The outermost open record: its members go straight to the table, in one run.
    outermost: Option<usize>,
    /// The members of the records open inside it, innermost last, each record's from
    /// the start its `Record::members` holds until `close` parks them.
    open: Vec<MemberNode<'a>>,
    /// The members of the records closed inside the outermost one, and those
    /// records: they move to the table after its members when it closes.
    parked: Vec<MemberNode<'a>>,
    parked_records: Vec<usize>,
    /// Namespace-scope variables with a type, by DIE offset (declarations among
    /// them), and definitions that take their type from one (DW_AT_specification).
    declared: Vec<(u64, u64)>,
    defined: Vec<(AttributeValue<Slice<'a>>, u64)>,
}

impl<'a> TableReader<'a, '_> {
    /// Read one DIE whose parent is not skipped.
    fn entry(
        &mut self,
        entries: &mut Dies<'a, '_>,
        abbrev: &gimli::Abbreviation,
        offset: u64,
        parent: Option<Ctx>,
    ) -> Result<Step> {
        let tag = abbrev.tag();
        let ctx = match tag {
            dw::DW_TAG_compile_unit
            | dw::DW_TAG_partial_unit
            | dw::DW_TAG_skeleton_unit
            | dw::DW_TAG_type_unit => {
                entries.skip(abbrev)?;
                Ctx::Scope(None)
            }
            dw::DW_TAG_namespace => {
                let a = entries.attrs(abbrev, false)?;
                self.scopes.push(
                    a.name
                        .map(|n| resolve(self.dwarf, self.unit, n))
                        .unwrap_or_else(|| "(anonymous namespace)".to_string()),
                );
                Ctx::Scope(Some(self.scopes.len() - 1))
            }
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type => {
                let a = entries.attrs(abbrev, true)?;
                Ctx::Record(self.record(tag, &a, offset))
            }
            dw::DW_TAG_member | dw::DW_TAG_inheritance => match parent {
                Some(Ctx::Record(r)) => {
                    let a = entries.attrs(abbrev, false)?;
                    self.member(r, tag, &a);
                    Ctx::Skip
                }
                _ => return self.other(entries, abbrev, offset),
            },
            dw::DW_TAG_variable => match parent {
                Some(Ctx::Scope(_)) => {
                    let (a, code) = entries.code_attrs(abbrev)?;
                    if let Some(ty) = a.ty {
                        self.declared.push((offset, ty));
                    }
                    match (code.location, a.ty, code.specification) {
                        (Some(location), Some(ty), _) => {
                            self.t.globals.push((location, ty, a.name))
                        }
                        (Some(location), None, Some(spec)) => self.defined.push((location, spec)),
                        _ => {}
                    }
                    if let (Some(name), Some(ty)) = (a.name, a.ty) {
                        self.t.variables.push((name, ty, a.alignment));
                    }
                    Ctx::Skip
                }
                _ => return self.other(entries, abbrev, offset),
            },
            dw::DW_TAG_base_type | dw::DW_TAG_unspecified_type => {
                let a = entries.attrs(abbrev, false)?;
                self.push(offset, scalar(tag, &a));
                Ctx::Skip
            }
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type
            | dw::DW_TAG_ptr_to_member_type => {
                let a = entries.attrs(abbrev, false)?;
                self.push(offset, pointer(tag, &a));
                Ctx::Skip
            }
            dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_atomic_type
            | dw::DW_TAG_immutable_type => {
                let a = entries.attrs(abbrev, false)?;
                self.push(offset, qualifier(tag, &a));
                Ctx::Skip
            }
            dw::DW_TAG_typedef => {
                let a = entries.attrs(abbrev, false)?;
                let node = Node::Typedef {
                    name: a.name.unwrap_or(Str::Bytes(b"?")),
                    target: a.ty,
                    alignment: a.alignment,
                };
                self.push(offset, node);
                Ctx::Skip
            }
            dw::DW_TAG_array_type => {
                let a = entries.attrs(abbrev, false)?;
                let node = Node::Array {
                    elem: a.ty,
                    dims: Vec::new(),
                };
                Ctx::Array(self.push(offset, node))
            }
            dw::DW_TAG_enumeration_type => {
                let a = entries.attrs(abbrev, false)?;
                let anonymous = a.name.is_none();
                let node = Node::Enum {
                    name: a.name,
                    size: a.byte_size.unwrap_or(4),
                    enumerators: Vec::new(),
                };
                let i = self.push(offset, node);
                if anonymous {
                    Ctx::Enum(i)
                } else {
                    Ctx::Skip
                }
            }
            dw::DW_TAG_enumerator => match parent {
                Some(Ctx::Enum(i)) => {
                    let a = entries.attrs(abbrev, false)?;
                    if let (Some(name), Node::Enum { enumerators, .. }) =
                        (a.name, &mut self.t.nodes[i])
                    {
                        enumerators.push((name, a.const_value.unwrap_or(0)));
                    }
                    Ctx::Skip
                }
                _ => return self.other(entries, abbrev, offset),
            },
            dw::DW_TAG_subrange_type => match parent {
                Some(Ctx::Array(i)) => {
                    let a = entries.attrs(abbrev, false)?;
                    self.dimension(i, &a);
                    Ctx::Skip
                }
                _ => return self.other(entries, abbrev, offset),
            },
            dw::DW_TAG_subroutine_type => {
                let a = entries.attrs(abbrev, false)?;
                let node = Node::Function {
                    ret: a.ty,
                    params: Vec::new(),
                    varargs: false,
                    prototyped: a.prototyped,
                };
                Ctx::Function(self.push(offset, node))
            }
            dw::DW_TAG_formal_parameter | dw::DW_TAG_unspecified_parameters => match parent {
                Some(Ctx::Function(i)) => {
                    let a = entries.attrs(abbrev, false)?;
                    if let Node::Function {
                        params, varargs, ..
                    } = &mut self.t.nodes[i]
                    {
                        if tag == dw::DW_TAG_formal_parameter {
                            params.push(a.ty);
                        } else {
                            *varargs = true;
                        }
                    }
                    Ctx::Skip
                }
                _ => return self.other(entries, abbrev, offset),
            },
            _ => return self.other(entries, abbrev, offset),
        };
        Ok(Step::Open(ctx))
    }

    fn push(&mut self, offset: u64, node: Node<'a>) -> usize {
        self.t.offsets.push(offset);
        self.t.nodes.push(node);
        self.t.nodes.len() - 1
    }

    /// A struct, class or union, named inside its enclosing namespaces and records.
    fn record(&mut self, tag: DwTag, a: &Attrs<'a>, offset: u64) -> usize {
        let kind = match tag {
            dw::DW_TAG_class_type => RecordKind::Class,
            dw::DW_TAG_union_type => RecordKind::Union,
            _ => RecordKind::Struct,
        };
        let scope = self.scope();
        let i = self.t.nodes.len();
        let start = match self.outermost {
            None => {
                self.outermost = Some(i);
                self.t.members.len()
            }
            Some(_) => self.open.len(),
        };
        self.push(
            offset,
            Node::Record(Box::new(Record {
                kind,
                name: a.name,
                scope,
                typedef_name: None,
                size: a.byte_size,
                alignment: a.alignment,
                declaration: a.declaration,
                members: start..start,
                decl_file: a.decl_file,
                decl_line: a.decl_line,
            })),
        )
    }

    /// A data member or base class of record `r`; static members are left out.
    fn member(&mut self, r: usize, tag: DwTag, a: &Attrs<'a>) {
        let is_static =
            a.declaration || (a.external && a.location.is_none() && a.data_bit_offset.is_none());
        if is_static {
            return;
        }
        if let Node::Record(rec) = &mut self.t.nodes[r] {
            rec.members.end += 1;
            let to = if self.outermost == Some(r) {
                &mut self.t.members
            } else {
                &mut self.open
            };
            to.push(MemberNode {
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

    /// Record `i`'s children are read. The outermost record's members are in the
    /// table already, and the members parked inside it follow them; an inner
    /// record's members are parked (so the outermost record's stay in one run).
    fn close(&mut self, i: usize) {
        if self.outermost == Some(i) {
            self.outermost = None;
            let at = self.t.members.len();
            self.t.members.append(&mut self.parked);
            for r in std::mem::take(&mut self.parked_records) {
                if let Node::Record(rec) = &mut self.t.nodes[r] {
                    rec.members = rec.members.start + at..rec.members.end + at;
                }
            }
        } else if let Node::Record(rec) = &mut self.t.nodes[i] {
            let start = rec.members.start.min(self.open.len());
            let at = self.parked.len();
            self.parked.extend(self.open.drain(start..));
            rec.members = at..self.parked.len();
            self.parked_records.push(i);
        }
    }

    /// One dimension of array `i`: DW_AT_count, else upper − lower + 1.
    fn dimension(&mut self, i: usize, a: &Attrs<'a>) {
        let count = a.count.or_else(|| {
            a.upper_bound
                .map(|u| (u - a.lower_bound.unwrap_or(0) + 1).max(0) as u64)
        });
        if let Node::Array { dims, .. } = &mut self.t.nodes[i] {
            dims.push(count);
        }
    }

    /// Function bodies and everything else: jump over the subtree when the producer
    /// gave DW_AT_sibling, else skip it entry by entry.
    fn other(
        &mut self,
        entries: &mut Dies<'a, '_>,
        abbrev: &gimli::Abbreviation,
        offset: u64,
    ) -> Result<Step> {
        // Subprograms without children hold no variables to map lock sites with.
        if abbrev.has_children() && abbrev.tag() == dw::DW_TAG_subprogram {
            let (a, code) = entries.code_attrs(abbrev)?;
            if code.low_pc.is_some() || code.ranges.is_some() {
                self.t.functions.push(Function {
                    offset,
                    low_pc: code.low_pc,
                    high_pc: code.high_pc,
                    ranges: code.ranges,
                });
            }
            if let Some(sibling) = a.sibling.filter(|s| *s > offset) {
                return Ok(Step::Jump(sibling));
            }
        } else {
            entries.skip(abbrev)?;
        }
        Ok(Step::Open(Ctx::Skip))
    }

    /// `ns::outer` for a DIE whose parents are namespaces and named records.
    fn scope(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for c in &self.stack {
            match c {
                Ctx::Scope(Some(n)) => parts.push(self.scopes[*n].clone()),
                Ctx::Record(i) => {
                    if let Node::Record(r) = &self.t.nodes[*i] {
                        if let Some(n) = r.name {
                            parts.push(resolve(self.dwarf, self.unit, n));
                        }
                    }
                }
                _ => {}
            }
        }
        parts.join("::")
    }
}

/// A base type, or `DW_TAG_unspecified_type` (`void`, `decltype(nullptr)`).
fn scalar<'a>(tag: DwTag, a: &Attrs<'a>) -> Node<'a> {
    if tag == dw::DW_TAG_base_type {
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
    }
}

/// Pointers and references; a pointer to member is two words and points nowhere.
fn pointer<'a>(tag: DwTag, a: &Attrs<'a>) -> Node<'a> {
    let to_member = tag == dw::DW_TAG_ptr_to_member_type;
    Node::Pointer {
        size: a.byte_size.unwrap_or(if to_member { 16 } else { 8 }),
        target: if to_member { None } else { a.ty },
        reference: tag != dw::DW_TAG_pointer_type && !to_member,
    }
}

/// `const`, `volatile`, `restrict`, `_Atomic` (D's `immutable` reads as `const`).
fn qualifier<'a>(tag: DwTag, a: &Attrs<'a>) -> Node<'a> {
    let kind = match tag {
        dw::DW_TAG_volatile_type => Qual::Volatile,
        dw::DW_TAG_restrict_type => Qual::Restrict,
        dw::DW_TAG_atomic_type => Qual::Atomic,
        _ => Qual::Const,
    };
    Node::Qual { kind, target: a.ty }
}

/// The text of a name; names that cannot be read become `?`.
pub(super) fn resolve<'a>(dwarf: &Dwarf<'a>, unit: &Unit<'a>, s: Str<'a>) -> String {
    let bytes = match s {
        Str::Bytes(b) => b,
        Str::Attr(v) => match dwarf.attr_string(unit, v) {
            Ok(r) => r.slice(),
            Err(_) => b"?",
        },
    };
    String::from_utf8_lossy(bytes).into_owned()
}
