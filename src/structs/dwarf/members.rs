//! One record → its `StructLayout`: each member's type name, array dimensions, size,
//! alignment and atomic/lock kind, and where a bitfield sits (DWARF 4
//! `DW_AT_data_bit_offset` or DWARF 2/3 `DW_AT_bit_offset`, big- or little-endian).

use super::builder::Builder;
use super::table::{MemberNode, Node, Qual};
use crate::structs::types::{Member, MemberText, Spelling, StructLayout, SyncKind};
use gimli::Reader;

/// How many anonymous records deep pahole-style inline layouts go.
const MAX_INLINE: u32 = 16;

/// What a member's type contributes to its `Member`.
struct MemberType {
    name: String,
    array: Vec<u64>,
    size: u64,
    alignment: u64,
    sync: Option<SyncKind>,
}

/// Where a member sits: byte offset, size and, for a bitfield, the first bit.
struct Place {
    offset: u64,
    size: u64,
    bit_offset: Option<u64>,
}

impl Builder<'_, '_> {
    /// The complete layout of record `i` (summary and holes are filled in later).
    pub(super) fn layout(&mut self, i: usize) -> StructLayout {
        let alignment = self.align(i, 0);
        let packed = self.is_packed(i);
        let r = self.record(i);
        let (kind, size, explicit, decl_file, decl_line, count) = (
            r.kind,
            r.size.unwrap_or(0),
            r.alignment,
            r.decl_file,
            r.decl_line,
            r.members.len(),
        );
        let name = self.record_name(r).unwrap_or_default();
        let members = (0..count).map(|k| self.member(i, k)).collect();
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
            text_packed: self.pahole_packed(i),
            decl_file,
            decl_line,
            members,
            summary: Default::default(),
            sync_members,
            writes: Vec::new(),
        }
    }

    /// Member `k` of record `i`.
    fn member(&mut self, i: usize, k: usize) -> Member {
        let m = self.member_node(i, k);
        let (name, ty, bit_size, member_align, base) =
            (m.name, m.ty, m.bit_size, m.alignment, m.base);
        let text = MemberText {
            spelling: self.spelling(ty),
            aligned: member_align,
            type_padding: self.target(ty).map_or(0, |j| self.struct_padding(j)),
            dims: self
                .target(ty)
                .map(|j| self.dims_text(j))
                .unwrap_or_default(),
        };
        let t = match self.target(ty) {
            Some(j) => self.member_type(j),
            None => MemberType {
                name: "void".to_string(),
                array: Vec::new(),
                size: 0,
                alignment: 1,
                sync: None,
            },
        };
        let place = self.place(self.member_node(i, k), t.size);
        Member {
            name: name.map(|n| self.text(n)).unwrap_or_default(),
            type_name: t.name,
            array: t.array,
            offset: place.offset,
            size: place.size,
            alignment: t.alignment.max(member_align.unwrap_or(1)),
            bit_offset: place.bit_offset,
            bit_size,
            base,
            sync: t.sync,
            hole_after: 0,
            bit_hole_after: 0,
            text,
        }
    }

    /// How pahole spells a member of type `ty`: anonymous records inline (also
    /// through a qualifier, a pointer or an array), pointers to functions as
    /// `ret (*name)(params)`, anything else by name.
    fn spelling(&mut self, ty: Option<u64>) -> Spelling {
        let Some(mut j) = self.target(ty) else {
            return Spelling::Name("void".into());
        };
        let mut qualifier = String::new();
        let mut through = String::new();
        // A member's own qualifiers come first, with no space after the type.
        for _ in 0..4 {
            let Node::Qual { kind, target } = &self.t.nodes[j] else {
                break;
            };
            let (kind, target) = (*kind, *target);
            let Some(t) = self.target(target) else { break };
            qualifier.push_str(match kind {
                Qual::Const => "const ",
                Qual::Volatile => "volatile ",
                Qual::Restrict => "restrict ",
                Qual::Atomic => "_Atomic ",
            });
            j = t;
        }
        match &self.t.nodes[j] {
            Node::Array { elem, .. } => match self.target(*elem) {
                Some(e) => {
                    if matches!(&self.t.nodes[e], Node::Record(r) if r.name.is_none()) {
                        j = e;
                    } else {
                        // A qualifier over a sized array is printed before the element's
                        // own (`const const u8`); over a flexible one pahole drops it.
                        let sized = matches!(&self.t.nodes[j], Node::Array { dims, .. }
                            if matches!(dims.first(), Some(Some(n)) if *n > 0));
                        let prefix = if sized { qualifier.as_str() } else { "" };
                        return Spelling::Name(format!("{prefix}{}", self.pahole_name(e, 0)));
                    }
                }
                None => return Spelling::Name("void".into()),
            },
            Node::Pointer {
                target,
                reference: false,
                ..
            } => match self.target(*target) {
                Some(f) if matches!(self.t.nodes[f], Node::Function { .. }) => {
                    let (ret, params) = self.signature(f, 0);
                    let ret = format!("{qualifier}{ret}");
                    return Spelling::FnPointer { ret, params };
                }
                Some(r) if matches!(&self.t.nodes[r], Node::Record(rec) if rec.name.is_none()) => {
                    through = "*".to_string();
                    j = r;
                }
                _ => return Spelling::Name(format!("{qualifier}{}", self.pahole_name(j, 0))),
            },
            _ => {}
        }
        match &self.t.nodes[j] {
            Node::Record(r) if r.name.is_none() && self.inline_depth < MAX_INLINE => {
                self.inline_depth += 1;
                let inner = self.layout(j);
                self.inline_depth -= 1;
                Spelling::Inline {
                    layout: Box::new(inner),
                    qualifier,
                    through,
                }
            }
            // pahole prints an anonymous enum's enumerators where it is used.
            Node::Enum {
                name: None,
                enumerators,
                ..
            } if !enumerators.is_empty() && qualifier.is_empty() && through.is_empty() => {
                let enumerators: Vec<(super::attrs::Str<'_>, i64)> = enumerators.clone();
                Spelling::Enum {
                    enumerators: enumerators
                        .into_iter()
                        .map(|(n, v)| (self.text(n), v))
                        .collect(),
                }
            }
            _ => Spelling::Name(format!("{qualifier}{}", self.pahole_name(j, 0))),
        }
    }

    /// pahole's natural alignment of type `i`: a scalar's size, a pointer's, the
    /// largest of a record's members (typedefs, qualifiers and arrays looked
    /// through); explicit alignments do not count.
    fn natural_alignment(&mut self, i: usize, depth: u32) -> u64 {
        if depth > super::builder::MAX_DEPTH {
            return 1;
        }
        let i = self.strip_all(i);
        if self.natural_memo[i] != 0 {
            return self.natural_memo[i];
        }
        let a = match &self.t.nodes[i] {
            Node::Base { size, .. } | Node::Pointer { size, .. } | Node::Enum { size, .. } => *size,
            Node::Array { elem, .. } => match self.target(*elem) {
                Some(e) => self.natural_alignment(e, depth + 1),
                None => 1,
            },
            // A record: its widest member (explicit alignments and packing aside).
            Node::Record(r) => {
                let tys: Vec<Option<u64>> = self.members_of(r).iter().map(|m| m.ty).collect();
                let mut best = 1;
                for ty in tys {
                    if let Some(t) = self.target(ty) {
                        best = best.max(self.natural_alignment(t, depth + 1));
                    }
                }
                best
            }
            _ => 1,
        };
        self.natural_memo[i] = a.max(1);
        a.max(1)
    }

    /// Typedefs and every qualifier stripped.
    fn strip_all(&self, mut i: usize) -> usize {
        for _ in 0..super::builder::MAX_DEPTH {
            match &self.t.nodes[i] {
                Node::Typedef { target, .. } | Node::Qual { target, .. } => {
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

    /// pahole's packed inference (`class__infer_packed_attributes`), the part a
    /// record's own members decide: a member off its natural alignment, a size that
    /// is no multiple of the largest natural member alignment, or `aligned(1)` on a
    /// record whose members want more. pahole first rules out a struct with holes or
    /// padding; `layout::summarize`, which counts them, applies that rule.
    fn pahole_packed(&mut self, i: usize) -> bool {
        let (kind, size, explicit) = {
            let r = self.record(i);
            (r.kind, r.size.unwrap_or(0), r.alignment)
        };
        if kind == crate::structs::types::RecordKind::Union {
            return false;
        }
        let members: Vec<Option<u64>> = self
            .members_of(self.record(i))
            .iter()
            .map(|m| m.ty)
            .collect();
        let mut largest = 1;
        for (k, ty) in members.iter().enumerate() {
            let Some(t) = self.target(*ty) else { continue };
            let natural = self.natural_alignment(t, 0);
            if natural == 1 {
                continue;
            }
            largest = largest.max(natural);
            let type_size = self.size(t, 0);
            let offset = self.place(self.member_node(i, k), type_size).offset;
            if offset % natural != 0 {
                return true;
            }
        }
        largest != 1 && (explicit == Some(1) || size % largest != 0)
    }

    /// `[2][3]` for an array member (`[]` where DWARF gives no bound), else empty.
    fn dims_text(&self, mut j: usize) -> String {
        if let Node::Qual {
            target: Some(t), ..
        } = &self.t.nodes[j]
        {
            if let Some(t) = self.idx(*t) {
                j = t;
            }
        }
        match &self.t.nodes[j] {
            Node::Array { dims, .. } => dims
                .iter()
                .map(|d| format!("[{}]", d.unwrap_or(0)))
                .collect(),
            _ => String::new(),
        }
    }

    /// Bytes of padding at the end of struct `j` (0 for anything else), as pahole
    /// counts them: the size less the end of the last member (a bitfield's storage
    /// unit counts whole).
    fn struct_padding(&mut self, j: usize) -> u64 {
        let (size, last) = match &self.t.nodes[j] {
            Node::Record(r) if r.kind != crate::structs::types::RecordKind::Union => {
                (r.size.unwrap_or(0), r.members.len().checked_sub(1))
            }
            _ => return 0,
        };
        let Some(k) = last else { return 0 };
        let ty = self.member_node(j, k).ty;
        let type_size = self.target(ty).map_or(0, |t| self.size(t, 0));
        let place = self.place(self.member_node(j, k), type_size);
        let end = (place.offset + place.size).min(size);
        size - end
    }

    /// The member type at `j`: an array is named by its element, with its dimensions.
    fn member_type(&mut self, j: usize) -> MemberType {
        let (name, array) = match &self.t.nodes[j] {
            Node::Array { elem, dims } => {
                let dims: Vec<u64> = dims.iter().map(|d| d.unwrap_or(0)).collect();
                let name = match self.target(*elem) {
                    Some(e) => self.name(e, 0),
                    None => "?".into(),
                };
                (name, dims)
            }
            _ => (self.name(j, 0), Vec::new()),
        };
        MemberType {
            name,
            array,
            size: self.size(j, 0),
            alignment: self.align(j, 0),
            sync: self.sync(j, 0),
        }
    }

    /// Offset and size of member `m`, whose type is `type_size` bytes. A bitfield is
    /// placed in its storage unit as pahole prints it.
    fn place(&self, m: &MemberNode<'_>, type_size: u64) -> Place {
        let loc = m.location.unwrap_or(0);
        let Some(bits) = m.bit_size else {
            return Place {
                offset: loc,
                size: type_size,
                bit_offset: None,
            };
        };
        let unit = m.byte_size4.unwrap_or(type_size).max(1);
        let absolute = match (m.data_bit_offset, m.bit_offset4) {
            (Some(d), _) => d,
            (None, Some(b)) => {
                if self.big_endian() {
                    loc * 8 + b
                } else {
                    (loc * 8 + unit * 8).saturating_sub(b + bits)
                }
            }
            (None, None) => loc * 8,
        };
        let offset = if m.data_bit_offset.is_some() {
            absolute / (unit * 8) * unit
        } else {
            loc
        };
        Place {
            offset,
            size: unit,
            bit_offset: Some(absolute - offset * 8),
        }
    }

    fn big_endian(&self) -> bool {
        gimli::Endianity::is_big_endian(gimli::Section::reader(&self.dwarf.debug_info).endian())
    }
}
