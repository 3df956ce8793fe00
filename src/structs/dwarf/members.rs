//! One record → its `StructLayout`: each member's type name, array dimensions, size,
//! alignment and atomic/lock kind, and where a bitfield sits (DWARF 4
//! `DW_AT_data_bit_offset` or DWARF 2/3 `DW_AT_bit_offset`, big- or little-endian).

use super::builder::Builder;
use super::table::{MemberNode, Node};
use crate::structs::types::{Member, StructLayout, SyncKind};
use gimli::Reader;

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
            decl_file,
            decl_line,
            members,
            summary: Default::default(),
            sync_members,
        }
    }

    /// Member `k` of record `i`.
    fn member(&mut self, i: usize, k: usize) -> Member {
        let m = &self.record(i).members[k];
        let (name, ty, bit_size, member_align, base) =
            (m.name, m.ty, m.bit_size, m.alignment, m.base);
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
        let place = self.place(&self.record(i).members[k], t.size);
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
        }
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
