//! The attributes of one DIE that type reading needs, read in one pass over its
//! abbreviation; the ones it does not keep are skipped unparsed. `Dies`, the table
//! pass's cursor, decodes the forms compilers write itself and hands any other DIE
//! to gimli (`read`), so both read every DIE alike (a unit test holds that).
//! Names stay unresolved (`Str`, defined here so that `table` and the builder
//! depend on this file and never the reverse), references become unit offsets,
//! and DWARF 2 `DW_OP_plus_uconst` member locations become plain offsets.

use super::{Slice, Unit};
use anyhow::Result;
use gimli::{constants as dw, AttributeValue, EndianSlice, Reader, RunTimeEndian, UnitOffset};

/// A name as DWARF stores it, resolved only when needed: most names of most units
/// belong to types already seen in another unit and are never read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Str<'a> {
    Bytes(&'a [u8]),
    Attr(AttributeValue<Slice<'a>>),
}

#[derive(Default, Debug, PartialEq)]
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
            name => keep(&mut a, name, attr.raw_value()),
        }
    }
    Ok(a)
}

/// Keep one attribute `read` wants (not a code attribute) from its value as the form
/// gives it. This is what `Attribute::value` then the readers here made of it: only
/// a member location in a block is read as an expression, and an encoding is a u8.
fn keep<'a>(a: &mut Attrs<'a>, name: gimli::DwAt, raw: AttributeValue<Slice<'a>>) {
    match name {
        dw::DW_AT_name => a.name = Some(Str::Attr(raw)),
        dw::DW_AT_byte_size => a.byte_size = raw.udata_value(),
        dw::DW_AT_bit_size => a.bit_size = raw.udata_value(),
        dw::DW_AT_data_bit_offset => a.data_bit_offset = raw.udata_value(),
        dw::DW_AT_bit_offset => a.bit_offset = raw.udata_value(),
        dw::DW_AT_data_member_location => {
            a.location = match raw {
                AttributeValue::Exprloc(expr) => plus_uconst(expr.0),
                AttributeValue::Block(block) => plus_uconst(block),
                _ => raw.udata_value(),
            }
        }
        dw::DW_AT_type => a.ty = unit_ref(raw),
        dw::DW_AT_sibling => a.sibling = unit_ref(raw),
        dw::DW_AT_alignment => a.alignment = raw.udata_value(),
        dw::DW_AT_count => a.count = raw.udata_value(),
        // data1..data8 are unsigned here (char buf[256] has upper bound 0xff).
        dw::DW_AT_upper_bound => a.upper_bound = bound(raw),
        dw::DW_AT_lower_bound => a.lower_bound = bound(raw),
        dw::DW_AT_const_value => a.const_value = bound(raw),
        dw::DW_AT_declaration => a.declaration = is_true(raw),
        dw::DW_AT_external => a.external = is_true(raw),
        dw::DW_AT_prototyped => a.prototyped = is_true(raw),
        dw::DW_AT_encoding => a.encoding = raw.u8_value(),
        dw::DW_AT_decl_file => a.decl_file = raw.udata_value(),
        dw::DW_AT_decl_line => a.decl_line = raw.udata_value(),
        _ => {}
    }
}

/// A reference inside the unit (`DW_FORM_ref*`); other forms are not followed.
fn unit_ref(value: AttributeValue<Slice<'_>>) -> Option<u64> {
    match value {
        AttributeValue::UnitRef(o) => Some(o.0 as u64),
        _ => None,
    }
}

/// An array bound or a constant: signed only when the producer used `DW_FORM_sdata`.
fn bound(value: AttributeValue<Slice<'_>>) -> Option<i64> {
    match value {
        AttributeValue::Sdata(v) => Some(v),
        _ => value.udata_value().map(|v| v as i64),
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

/// A forward cursor over one unit's DIEs for the table pass. It reads the attributes
/// `Attrs` keeps and skips the others itself, for the forms compilers write; a DIE
/// with any other form (`DW_FORM_indirect`, section offsets in `data4` for DWARF 2/3
/// member locations, supplementary-file forms), or one it cannot decode, is read
/// again from its start by gimli (`read`), so every DIE reads exactly as gimli reads
/// it, errors included. Code attributes are always read by gimli.
pub(super) struct Dies<'a, 'u> {
    unit: &'u Unit<'a>,
    encoding: gimli::Encoding,
    input: Slice<'a>,
    /// The unit offset `input` started at, and its length then.
    start: usize,
    len: usize,
    /// The unit offset of the DIE being read.
    die: usize,
}

impl<'a, 'u> Dies<'a, 'u> {
    /// At the unit's first DIE.
    pub(super) fn new(unit: &'u Unit<'a>) -> Result<Self> {
        let start = unit.header.header_size();
        let mut dies = Dies {
            unit,
            encoding: unit.encoding(),
            input: EndianSlice::new(&[], RunTimeEndian::default()),
            start,
            len: 0,
            die: start,
        };
        dies.resume(start)?;
        Ok(dies)
    }

    /// Jump to the DIE at unit offset `offset` (an error when no DIE can be there).
    pub(super) fn seek(&mut self, offset: usize) -> Result<()> {
        self.input = self.unit.header.range_from(UnitOffset(offset)..)?;
        self.start = offset;
        self.len = self.input.len();
        Ok(())
    }

    /// Continue at `offset`, where gimli stopped reading: the unit's end too.
    fn resume(&mut self, offset: usize) -> Result<()> {
        if offset >= self.unit.header.length_including_self() {
            self.input = EndianSlice::new(&[], RunTimeEndian::default());
            self.start = offset;
            self.len = 0;
            return Ok(());
        }
        self.seek(offset)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// The unit offset of the next DIE.
    pub(super) fn next_offset(&self) -> usize {
        self.start + (self.len - self.input.len())
    }

    /// The next DIE's abbreviation, or None at a null entry (the end of a sibling
    /// list); its attributes must be read or skipped next.
    pub(super) fn read_abbreviation(&mut self) -> Result<Option<&'u gimli::Abbreviation>> {
        self.die = self.next_offset();
        let code = self.input.read_uleb128()?;
        if code == 0 {
            return Ok(None);
        }
        let abbrev = self
            .unit
            .abbreviations
            .get(code)
            .ok_or(gimli::Error::UnknownAbbreviation(code))?;
        Ok(Some(abbrev))
    }

    /// Skip the DIE's attributes.
    pub(super) fn skip(&mut self, abbrev: &gimli::Abbreviation) -> Result<()> {
        let mut input = self.input;
        for spec in abbrev.attributes() {
            if !skip_form(&mut input, self.encoding, spec.form()) {
                let mut entries = self.slow()?;
                entries.skip_attributes(abbrev.attributes())?;
                return self.resume(entries.next_offset().0);
            }
        }
        self.input = input;
        Ok(())
    }

    /// The DIE's attributes `read_attrs` keeps (and, with `decl`, its declaring
    /// file and line).
    pub(super) fn attrs(&mut self, abbrev: &gimli::Abbreviation, decl: bool) -> Result<Attrs<'a>> {
        let mut a = Attrs::default();
        let mut input = self.input;
        for spec in abbrev.attributes() {
            let name = spec.name();
            let done = if wanted(name, false, decl) {
                match value(&mut input, self.encoding, *spec) {
                    Some(raw) => {
                        keep(&mut a, name, raw);
                        true
                    }
                    None => false,
                }
            } else {
                skip_form(&mut input, self.encoding, spec.form())
            };
            if !done {
                let mut entries = self.slow()?;
                let a = read(&mut entries, abbrev, None, decl)?;
                self.resume(entries.next_offset().0)?;
                return Ok(a);
            }
        }
        self.input = input;
        Ok(a)
    }

    /// The DIE's attributes with its code attributes, read by gimli.
    pub(super) fn code_attrs(
        &mut self,
        abbrev: &gimli::Abbreviation,
    ) -> Result<(Attrs<'a>, CodeAttrs<'a>)> {
        let mut entries = self.slow()?;
        let mut code = CodeAttrs::default();
        let a = read(&mut entries, abbrev, Some(&mut code), false)?;
        self.resume(entries.next_offset().0)?;
        Ok((a, code))
    }

    /// gimli's reader at the current DIE's attributes.
    fn slow(&self) -> Result<gimli::EntriesRaw<'u, 'u, Slice<'a>>> {
        let mut entries = self
            .unit
            .header
            .entries_raw(&self.unit.abbreviations, Some(UnitOffset(self.die)))?;
        entries.read_abbreviation()?;
        Ok(entries)
    }
}

/// Skip one attribute of `form`; false when the form is not one handled here or
/// the bytes run out (gimli then reads the DIE).
fn skip_form(input: &mut Slice<'_>, encoding: gimli::Encoding, form: gimli::DwForm) -> bool {
    let word = encoding.format.word_size() as usize;
    let fixed = match form {
        dw::DW_FORM_flag_present | dw::DW_FORM_implicit_const => 0,
        dw::DW_FORM_data1 | dw::DW_FORM_flag | dw::DW_FORM_ref1 | dw::DW_FORM_strx1 => 1,
        dw::DW_FORM_addrx1 => 1,
        dw::DW_FORM_data2 | dw::DW_FORM_ref2 | dw::DW_FORM_strx2 | dw::DW_FORM_addrx2 => 2,
        dw::DW_FORM_strx3 | dw::DW_FORM_addrx3 => 3,
        dw::DW_FORM_data4 | dw::DW_FORM_ref4 | dw::DW_FORM_strx4 | dw::DW_FORM_addrx4 => 4,
        dw::DW_FORM_data8 | dw::DW_FORM_ref8 | dw::DW_FORM_ref_sig8 => 8,
        dw::DW_FORM_data16 => 16,
        dw::DW_FORM_addr => encoding.address_size as usize,
        dw::DW_FORM_sec_offset | dw::DW_FORM_strp | dw::DW_FORM_line_strp => word,
        dw::DW_FORM_ref_addr if encoding.version == 2 => encoding.address_size as usize,
        dw::DW_FORM_ref_addr => word,
        dw::DW_FORM_udata
        | dw::DW_FORM_sdata
        | dw::DW_FORM_ref_udata
        | dw::DW_FORM_strx
        | dw::DW_FORM_addrx
        | dw::DW_FORM_loclistx
        | dw::DW_FORM_rnglistx => return input.skip_leb128().is_ok(),
        dw::DW_FORM_string => return input.read_null_terminated_slice().is_ok(),
        dw::DW_FORM_block1
        | dw::DW_FORM_block2
        | dw::DW_FORM_block4
        | dw::DW_FORM_block
        | dw::DW_FORM_exprloc => return block(input, form).is_some(),
        _ => return false,
    };
    input.skip(fixed).is_ok()
}

/// The value of one attribute as gimli's parser gives it, for the forms `read`'s
/// attributes come in; None for any other form (or too few bytes).
fn value<'a>(
    input: &mut Slice<'a>,
    encoding: gimli::Encoding,
    spec: gimli::AttributeSpecification,
) -> Option<AttributeValue<Slice<'a>>> {
    let form = spec.form();
    Some(match form {
        dw::DW_FORM_data1 => AttributeValue::Data1(input.read_u8().ok()?),
        dw::DW_FORM_data2 => AttributeValue::Data2(input.read_u16().ok()?),
        // DWARF 2/3 member locations in data4/data8 are section offsets to gimli.
        dw::DW_FORM_data4 | dw::DW_FORM_data8
            if encoding.version <= 3 && spec.name() == dw::DW_AT_data_member_location =>
        {
            return None
        }
        dw::DW_FORM_data4 => AttributeValue::Data4(input.read_u32().ok()?),
        dw::DW_FORM_data8 => AttributeValue::Data8(input.read_u64().ok()?),
        dw::DW_FORM_udata => AttributeValue::Udata(input.read_uleb128().ok()?),
        dw::DW_FORM_sdata => AttributeValue::Sdata(input.read_sleb128().ok()?),
        dw::DW_FORM_implicit_const => AttributeValue::Sdata(spec.implicit_const_value()?),
        dw::DW_FORM_flag => AttributeValue::Flag(input.read_u8().ok()? != 0),
        dw::DW_FORM_flag_present => AttributeValue::Flag(true),
        dw::DW_FORM_ref1 => unit_offset(input.read_u8().ok()? as u64)?,
        dw::DW_FORM_ref2 => unit_offset(input.read_u16().ok()? as u64)?,
        dw::DW_FORM_ref4 => unit_offset(input.read_u32().ok()? as u64)?,
        dw::DW_FORM_ref8 => unit_offset(input.read_u64().ok()?)?,
        dw::DW_FORM_ref_udata => unit_offset(input.read_uleb128().ok()?)?,
        dw::DW_FORM_strp => AttributeValue::DebugStrRef(gimli::DebugStrOffset(
            input.read_offset(encoding.format).ok()?,
        )),
        dw::DW_FORM_line_strp => AttributeValue::DebugLineStrRef(gimli::DebugLineStrOffset(
            input.read_offset(encoding.format).ok()?,
        )),
        dw::DW_FORM_string => AttributeValue::String(input.read_null_terminated_slice().ok()?),
        dw::DW_FORM_strx1 => str_index(input.read_u8().ok()? as u64)?,
        dw::DW_FORM_strx2 => str_index(input.read_u16().ok()? as u64)?,
        dw::DW_FORM_strx3 => str_index(input.read_uint(3).ok()?)?,
        dw::DW_FORM_strx4 => str_index(input.read_u32().ok()? as u64)?,
        dw::DW_FORM_strx => str_index(input.read_uleb128().ok()?)?,
        dw::DW_FORM_exprloc => AttributeValue::Exprloc(gimli::Expression(block(input, form)?)),
        dw::DW_FORM_block1 | dw::DW_FORM_block2 | dw::DW_FORM_block4 | dw::DW_FORM_block => {
            AttributeValue::Block(block(input, form)?)
        }
        _ => return None,
    })
}

fn unit_offset<'a>(offset: u64) -> Option<AttributeValue<Slice<'a>>> {
    Some(AttributeValue::UnitRef(UnitOffset(
        usize::try_from(offset).ok()?,
    )))
}

fn str_index<'a>(index: u64) -> Option<AttributeValue<Slice<'a>>> {
    Some(AttributeValue::DebugStrOffsetsIndex(
        gimli::DebugStrOffsetsIndex(usize::try_from(index).ok()?),
    ))
}

/// A block's bytes: its length (1, 2, 4 bytes or ULEB128 by form), then the bytes.
fn block<'a>(input: &mut Slice<'a>, form: gimli::DwForm) -> Option<Slice<'a>> {
    let len = match form {
        dw::DW_FORM_block1 => input.read_u8().ok()? as usize,
        dw::DW_FORM_block2 => input.read_u16().ok()? as usize,
        dw::DW_FORM_block4 => input.read_u32().ok()? as usize,
        _ => usize::try_from(input.read_uleb128().ok()?).ok()?,
    };
    input.split(len).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimli::write::{self, AttributeValue as W, Expression};

    /// One unit of `version` whose DIEs carry the attributes `Attrs` keeps in the
    /// forms gimli's writer gives them (inline and `.debug_str` names, data1..8,
    /// udata, negative sdata, flags, unit references, member locations as constants,
    /// `DW_OP_plus_uconst` expressions and blocks), beside attributes that are skipped.
    fn sections(version: u16) -> write::Sections<write::EndianVec<gimli::LittleEndian>> {
        let encoding = gimli::Encoding {
            format: gimli::Format::Dwarf32,
            version,
            address_size: 8,
        };
        let mut dwarf = write::Dwarf::new();
        let id = dwarf
            .units
            .add(write::Unit::new(encoding, write::LineProgram::none()));
        let strp = dwarf.strings.add("from_debug_str");
        let unit = dwarf.units.get_mut(id);
        let root = unit.root();
        let record = unit.add(root, dw::DW_TAG_structure_type);
        let e = unit.get_mut(record);
        e.set_sibling(true);
        e.set(dw::DW_AT_name, W::StringRef(strp));
        e.set(dw::DW_AT_byte_size, W::Data2(300));
        e.set(dw::DW_AT_decl_file, W::Data1(3));
        e.set(dw::DW_AT_decl_line, W::Udata(1234));
        e.set(dw::DW_AT_producer, W::String(b"skipped".to_vec()));
        e.set(dw::DW_AT_alignment, W::Data8(64));
        let locations = [
            W::Data1(8),
            W::Data4(16),
            W::Data8(24),
            W::Udata(40),
            W::Sdata(-1),
            W::Exprloc(Expression::raw(vec![dw::DW_OP_plus_uconst.0, 0x90, 0x01])),
            W::Block(vec![dw::DW_OP_plus_uconst.0, 7]),
            W::Block(vec![dw::DW_OP_lit0.0]),
        ];
        for (k, location) in locations.into_iter().enumerate() {
            let m = unit.add(record, dw::DW_TAG_member);
            let e = unit.get_mut(m);
            e.set(dw::DW_AT_name, W::String(format!("m{k}").into_bytes()));
            e.set(dw::DW_AT_type, W::UnitRef(record));
            e.set(dw::DW_AT_data_member_location, location);
            e.set(dw::DW_AT_decl_column, W::Udata(k as u64));
            e.set(dw::DW_AT_bit_size, W::Data1(3));
            e.set(dw::DW_AT_bit_offset, W::Data2(5));
            e.set(dw::DW_AT_data_bit_offset, W::Udata(77));
            e.set(dw::DW_AT_external, W::Flag(k % 2 == 0));
            e.set(dw::DW_AT_declaration, W::FlagPresent);
            e.set(dw::DW_AT_artificial, W::FlagPresent);
        }
        let array = unit.add(root, dw::DW_TAG_array_type);
        unit.get_mut(array).set(dw::DW_AT_type, W::UnitRef(record));
        for (upper, lower) in [(W::Data1(0xff), W::Sdata(-2)), (W::Sdata(-5), W::Udata(1))] {
            let range = unit.add(array, dw::DW_TAG_subrange_type);
            let e = unit.get_mut(range);
            e.set(dw::DW_AT_upper_bound, upper);
            e.set(dw::DW_AT_lower_bound, lower);
            e.set(dw::DW_AT_count, W::Data4(9));
        }
        let base = unit.add(root, dw::DW_TAG_base_type);
        let e = unit.get_mut(base);
        e.set(dw::DW_AT_name, W::String(b"int".to_vec()));
        e.set(dw::DW_AT_encoding, W::Encoding(dw::DW_ATE_signed));
        e.set(dw::DW_AT_byte_size, W::Data1(4));
        e.set(dw::DW_AT_location, W::Block(vec![1, 2, 3]));
        let en = unit.add(root, dw::DW_TAG_enumerator);
        let e = unit.get_mut(en);
        e.set(dw::DW_AT_const_value, W::Sdata(-9));
        e.set(dw::DW_AT_prototyped, W::Flag(true));
        let mut out = write::Sections::new(write::EndianVec::new(gimli::LittleEndian));
        dwarf.write(&mut out).unwrap();
        out
    }

    #[test]
    fn dies_read_every_die_as_gimli_does() {
        for version in [2, 3, 4, 5] {
            let written = sections(version);
            let dwarf = gimli::Dwarf::load(|id| -> Result<_, gimli::Error> {
                let bytes = written.get(id).map_or(&[][..], |s| s.slice());
                Ok(EndianSlice::new(bytes, RunTimeEndian::Little))
            })
            .unwrap();
            let header = dwarf.units().next().unwrap().unwrap();
            let unit = dwarf.unit(header).unwrap();
            let mut dies = Dies::new(&unit).unwrap();
            let mut read_dies = 0;
            let mut fast_reads = 0;
            while !dies.is_empty() {
                let offset = dies.next_offset();
                let Some(abbrev) = dies.read_abbreviation().unwrap() else {
                    continue;
                };
                for decl in [false, true] {
                    let mut skipped = Dies::new(&unit).unwrap();
                    skipped.seek(offset).unwrap();
                    let mut again = Dies::new(&unit).unwrap();
                    again.seek(offset).unwrap();
                    again.read_abbreviation().unwrap();
                    let fast = again.attrs(abbrev, decl).unwrap();
                    // gimli's fallback resumes `again` after the DIE.
                    if again.start == offset {
                        fast_reads += 1;
                    }
                    let mut entries = unit.entries_raw(Some(UnitOffset(offset))).unwrap();
                    entries.read_abbreviation().unwrap();
                    let slow = read(&mut entries, abbrev, None, decl).unwrap();
                    assert_eq!(fast, slow, "DWARF {version}, DIE at {offset:#x}");
                    assert_eq!(again.next_offset(), entries.next_offset().0);
                    skipped.read_abbreviation().unwrap();
                    skipped.skip(abbrev).unwrap();
                    assert_eq!(skipped.next_offset(), entries.next_offset().0);
                }
                dies.skip(abbrev).unwrap();
                read_dies += 1;
            }
            assert_eq!(read_dies, 15, "DWARF {version}");
            // Only DWARF 2/3 member locations in data4/data8 go to gimli.
            let slow_members = if version <= 3 { 2 } else { 0 };
            assert_eq!(fast_reads, 2 * (15 - slow_members), "DWARF {version}");
        }
    }
}
