//! The attributes of one DIE that type reading needs, read in one pass over its
//! abbreviation; the ones it does not keep are skipped unparsed, a run at a time.
//! Names stay unresolved (`Str`, defined here so that `table` and the builder
//! depend on this file and never the reverse), references become unit offsets,
//! and DWARF 2 `DW_OP_plus_uconst` member locations become plain offsets.

use super::Slice;
use anyhow::Result;
use gimli::{constants as dw, AttributeValue, Reader};

/// A name as DWARF stores it, resolved only when needed: most names of most units
/// belong to types already seen in another unit and are never read.
#[derive(Clone, Copy)]
pub(super) enum Str<'a> {
    Bytes(&'a [u8]),
    Attr(AttributeValue<Slice<'a>>),
}

#[derive(Default)]
pub(super) struct Attrs<'a> {
    pub name: Option<Str<'a>>,
    pub byte_size: Option<u64>,
    pub bit_size: Option<u64>,
    pub data_bit_offset: Option<u64>,
    pub bit_offset: Option<u64>,
    pub location: Option<u64>,
    pub ty: Option<u64>,
    pub alignment: Option<u64>,
    pub count: Option<u64>,
    pub upper_bound: Option<i64>,
    pub lower_bound: Option<i64>,
    pub declaration: bool,
    pub external: bool,
    pub sibling: Option<u64>,
    pub encoding: Option<u8>,
    pub decl_file: Option<u64>,
    pub decl_line: Option<u64>,
    pub prototyped: bool,
    /// An enumerator's value (`DW_AT_const_value`), signed only in `DW_FORM_sdata`.
    pub const_value: Option<i64>,
}

/// Where a subprogram's code lives and where a variable lives: kept raw, and read
/// only for subprograms and variables (the DIEs atomics by use look at), so the
/// attributes of every other DIE stay small.
#[derive(Default)]
pub(super) struct CodeAttrs<'a> {
    pub low_pc: Option<AttributeValue<Slice<'a>>>,
    pub high_pc: Option<AttributeValue<Slice<'a>>>,
    pub ranges: Option<AttributeValue<Slice<'a>>>,
    pub location: Option<AttributeValue<Slice<'a>>>,
    /// DW_AT_specification: the declaration a definition completes (GCC's
    /// definition of an `extern` global carries its location, the declaration its
    /// type).
    pub specification: Option<u64>,
}

pub(super) fn read_attrs<'a>(
    entries: &mut gimli::EntriesRaw<'_, '_, Slice<'a>>,
    abbrev: &gimli::Abbreviation,
) -> Result<Attrs<'a>> {
    read(entries, abbrev, None, false)
}

/// `read_attrs` plus where the record is declared (`decl_file`, `decl_line`),
/// which only records keep.
pub(super) fn read_record_attrs<'a>(
    entries: &mut gimli::EntriesRaw<'_, '_, Slice<'a>>,
    abbrev: &gimli::Abbreviation,
) -> Result<Attrs<'a>> {
    read(entries, abbrev, None, true)
}

/// `read_attrs` plus the code and location attributes.
pub(super) fn read_code_attrs<'a>(
    entries: &mut gimli::EntriesRaw<'_, '_, Slice<'a>>,
    abbrev: &gimli::Abbreviation,
) -> Result<(Attrs<'a>, CodeAttrs<'a>)> {
    let mut code = CodeAttrs::default();
    let a = read(entries, abbrev, Some(&mut code), false)?;
    Ok((a, code))
}

/// Whether `read` keeps attribute `name` (with the code attributes, with the
/// declaring file and line); the others are skipped unparsed, a run at a time.
fn wanted(name: gimli::DwAt, code: bool, decl: bool) -> bool {
    match name {
        dw::DW_AT_name
        | dw::DW_AT_byte_size
        | dw::DW_AT_bit_size
        | dw::DW_AT_data_bit_offset
        | dw::DW_AT_bit_offset
        | dw::DW_AT_data_member_location
        | dw::DW_AT_type
        | dw::DW_AT_sibling
        | dw::DW_AT_alignment
        | dw::DW_AT_count
        | dw::DW_AT_upper_bound
        | dw::DW_AT_lower_bound
        | dw::DW_AT_const_value
        | dw::DW_AT_declaration
        | dw::DW_AT_external
        | dw::DW_AT_prototyped
        | dw::DW_AT_encoding => true,
        dw::DW_AT_decl_file | dw::DW_AT_decl_line => decl,
        dw::DW_AT_specification
        | dw::DW_AT_low_pc
        | dw::DW_AT_high_pc
        | dw::DW_AT_ranges
        | dw::DW_AT_location => code,
        _ => false,
    }
}

fn read<'a>(
    entries: &mut gimli::EntriesRaw<'_, '_, Slice<'a>>,
    abbrev: &gimli::Abbreviation,
    mut code: Option<&mut CodeAttrs<'a>>,
    decl: bool,
) -> Result<Attrs<'a>> {
    let mut a = Attrs::default();
    let specs = abbrev.attributes();
    let with_code = code.is_some();
    let mut k = 0;
    while k < specs.len() {
        if !wanted(specs[k].name(), with_code, decl) {
            let start = k;
            while k < specs.len() && !wanted(specs[k].name(), with_code, decl) {
                k += 1;
            }
            entries.skip_attributes(&specs[start..k])?;
            continue;
        }
        let attr = entries.read_attribute(specs[k])?;
        k += 1;
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
            dw::DW_AT_type => a.ty = unit_ref(attr.value()),
            dw::DW_AT_sibling => a.sibling = unit_ref(attr.value()),
            dw::DW_AT_alignment => a.alignment = attr.udata_value(),
            dw::DW_AT_count => a.count = attr.udata_value(),
            // data1..data8 are unsigned here (char buf[256] has upper bound 0xff).
            dw::DW_AT_upper_bound => a.upper_bound = bound(&attr),
            dw::DW_AT_lower_bound => a.lower_bound = bound(&attr),
            dw::DW_AT_const_value => a.const_value = bound(&attr),
            dw::DW_AT_declaration => a.declaration = is_true(attr.value()),
            dw::DW_AT_external => a.external = is_true(attr.value()),
            dw::DW_AT_prototyped => a.prototyped = is_true(attr.value()),
            dw::DW_AT_encoding => {
                if let AttributeValue::Encoding(e) = attr.value() {
                    a.encoding = Some(e.0)
                }
            }
            dw::DW_AT_decl_file => a.decl_file = attr.udata_value(),
            dw::DW_AT_decl_line => a.decl_line = attr.udata_value(),
            dw::DW_AT_specification => {
                if let Some(c) = code.as_deref_mut() {
                    c.specification = unit_ref(attr.value());
                }
            }
            dw::DW_AT_low_pc | dw::DW_AT_high_pc | dw::DW_AT_ranges | dw::DW_AT_location => {
                if let Some(c) = code.as_deref_mut() {
                    let v = Some(attr.value());
                    match attr.name() {
                        dw::DW_AT_low_pc => c.low_pc = v,
                        dw::DW_AT_high_pc => c.high_pc = v,
                        dw::DW_AT_ranges => c.ranges = v,
                        _ => c.location = v,
                    }
                }
            }
            _ => {}
        }
    }
    Ok(a)
}

/// A reference inside the unit (`DW_FORM_ref*`); other forms are not followed.
fn unit_ref(value: AttributeValue<Slice<'_>>) -> Option<u64> {
    match value {
        AttributeValue::UnitRef(o) => Some(o.0 as u64),
        _ => None,
    }
}

/// An array bound or a constant: signed only when the producer used `DW_FORM_sdata`.
fn bound(attr: &gimli::Attribute<Slice<'_>>) -> Option<i64> {
    match attr.value() {
        AttributeValue::Sdata(v) => Some(v),
        _ => attr.udata_value().map(|v| v as i64),
    }
}

fn is_true(value: AttributeValue<Slice<'_>>) -> bool {
    matches!(value, AttributeValue::Flag(true))
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
