//! Terminal output of `structs`: layouts that read like pahole's, the hazard list
//! (worst first, worded by `hazards`) and the suggested reorders. Computes nothing new.

use super::hazards;
use crate::report::style::paint;
use crate::report::table::Table;
use crate::report::units::count;
use crate::structs::suggest::Suggestion;
use crate::structs::types::{RecordKind, Spelling};
use crate::structs::{StructLayout, StructsReport};
use std::fmt::Write;

/// One struct as pahole 1.24 prints it, byte for byte (colour aside).
pub fn layout(s: &StructLayout, line: u64, color: bool) -> String {
    let mut p = Printer {
        out: String::new(),
        line: line.max(1),
        // pahole gives names two columns less when the outermost record is a union.
        name_width: if s.kind == RecordKind::Union { 19 } else { 21 },
        blank: false,
        color,
    };
    let _ = writeln!(p.out, "{} {} {{", s.kind.keyword(), s.name);
    p.body(s, 1, 0, &mut 0);
    // pahole prints no summary and no attributes for a union of its own.
    if s.kind == RecordKind::Union {
        p.out.push_str("};\n");
        return p.out;
    }
    p.summary(s);
    let _ = writeln!(p.out, "}}{};", record_attributes(s));
    p.out
}

/// pahole's ` __attribute__((…))` after a record's closing brace: packed wins over an
/// explicit alignment (pahole prints one of them).
fn record_attributes(s: &StructLayout) -> String {
    if s.text_packed {
        " __attribute__((__packed__))".to_string()
    } else if let Some(a) = s.explicit_alignment {
        format!(" __attribute__((__aligned__({a})))")
    } else {
        String::new()
    }
}

/// The state pahole threads through one struct's text: the width of the name column
/// and whether a blank line is owed before the next line (after `XXX` comments).
struct Printer {
    out: String,
    line: u64,
    name_width: i64,
    blank: bool,
    color: bool,
}

impl Printer {
    fn owed_blank(&mut self) {
        if self.blank {
            self.out.push('\n');
            self.blank = false;
        }
    }

    /// The members of `s`, `indent` tabs deep, at `base` bytes into the outer struct.
    /// `cacheline` is the last line a marker was printed for: a struct shares it with
    /// the records inside it, a union gives each member its own copy.
    fn body(&mut self, s: &StructLayout, indent: usize, base: u64, shared: &mut u64) {
        let tabs = "\t".repeat(indent);
        // pahole's columns: 26 for the type at one tab, 8 less per further tab; the
        // offset comment starts 22 columns after the type's.
        let type_width = 26 - 8 * (indent as i64 - 1);
        let decl_width = (type_width + 1 + self.name_width).max(0) as usize;
        // Past the fourth tab pahole's type width goes negative, which printf reads as
        // that many columns left-justified.
        let type_width = type_width.unsigned_abs() as usize;
        let union_start = *shared;
        // The size of the last member that started at a new offset.
        let mut last_size = 0;
        for (k, m) in s.members.iter().enumerate() {
            let at = base + m.offset;
            let mut copy = union_start;
            let cacheline: &mut u64 = if s.kind == RecordKind::Union {
                &mut copy
            } else {
                &mut *shared
            };
            if let Some(last) = k.checked_sub(1).map(|p| &s.members[p]) {
                if s.kind != RecordKind::Union {
                    let previous = m.offset < last.offset
                        || (m.offset == last.offset
                            && last.bit_size.is_none()
                            && m.bit_size.is_some());
                    let next = m.offset > last.offset && m.offset - last.offset < last_size;
                    if previous || next {
                        if !self.blank {
                            self.out.push('\n');
                        }
                        let which = if previous { "previous" } else { "next" };
                        let _ = writeln!(
                            self.out,
                            "{tabs}/* Bitfield combined with {which} fields */"
                        );
                        self.blank = true;
                    }
                }
                if m.offset != last.offset {
                    last_size = m.size;
                }
            } else {
                last_size = m.size;
            }
            self.owed_blank();
            let cl = at / self.line;
            if cl > *cacheline {
                *cacheline = cl;
                let ago = at % self.line;
                let text = if ago == 0 {
                    format!(
                        "{tabs}/* --- cacheline {cl} boundary ({} bytes) --- */",
                        cl * self.line
                    )
                } else {
                    format!(
                        "{tabs}/* --- cacheline {cl} boundary ({} bytes) was {ago} byte{} ago --- */",
                        cl * self.line,
                        plural(ago)
                    )
                };
                let _ = writeln!(self.out, "{}", paint(&text, "2", self.color));
            }
            let aligned = match m.text.aligned {
                Some(a) => format!(" __attribute__((__aligned__({a})))"),
                None => String::new(),
            };
            let mut dims: String = match m.text.spelling {
                Spelling::Unknown => m.array.iter().map(|d| format!("[{d}]")).collect(),
                _ => m.text.dims.clone(),
            };
            // pahole's flexible array: the last member, with no elements, of a record
            // it does not start.
            if m.offset > 0 && k + 1 == s.members.len() && dims.starts_with("[0]") {
                dims.replace_range(..3, "[]");
            }
            let name = if m.base {
                "<ancestor>".to_string()
            } else {
                match m.bit_size {
                    Some(b) => format!("{}:{b}", m.name),
                    None => format!("{}{dims}", m.name),
                }
            };
            let position = match m.bit_offset {
                Some(bit) => format!("/* {at:>5}:{bit:>2} {:>2} */", m.size),
                None => format!("/* {at:>5} {:>5} */", m.size),
            };
            let text = match &m.text.spelling {
                Spelling::Inline {
                    layout: inner,
                    qualifier,
                    through,
                } => {
                    let _ = writeln!(self.out, "{tabs}{qualifier}{} {{", inner.kind.keyword());
                    self.body(inner, indent + 1, at, cacheline);
                    // A blank line owed inside the record is dropped at its end.
                    self.blank = false;
                    // An anonymous union named in a struct shows only the member's
                    // alignment, after its name.
                    let type_attr = if inner.kind == RecordKind::Union
                        && s.kind != RecordKind::Union
                        && !m.name.is_empty()
                        && m.text.aligned.is_some()
                    {
                        String::new()
                    } else {
                        record_attributes(inner)
                    };
                    // pahole leaves the member's own alignment off an unnamed union in a
                    // struct, and out of its column count when the record has an
                    // attribute of its own.
                    let member_attr = if s.kind == RecordKind::Union
                        || !m.name.is_empty()
                        || inner.kind != RecordKind::Union
                    {
                        aligned.as_str()
                    } else {
                        ""
                    };
                    let mut decl = format!("}}{type_attr}");
                    for part in [through.as_str(), name.as_str()] {
                        if !part.is_empty() {
                            decl.push(' ');
                            decl.push_str(part);
                        }
                    }
                    decl.push_str(member_attr);
                    decl.push(';');
                    let counted = if type_attr.is_empty() {
                        decl.len()
                    } else {
                        decl.len() - member_attr.len()
                    };
                    // The record itself lines its comment up with the members'; through a
                    // qualifier, pointer or array pahole leaves one space.
                    // Past the column pahole's printf width goes negative and pads on
                    // the other side: the same number of spaces.
                    let pad = if qualifier.is_empty() && through.is_empty() && dims.is_empty() {
                        ((decl_width + 1) as i64 - counted as i64)
                            .unsigned_abs()
                            .max(1) as usize
                    } else {
                        1
                    };
                    format!("{tabs}{decl}{:pad$}{position}", "")
                }
                Spelling::Enum { enumerators } => {
                    let _ = writeln!(self.out, "{tabs}enum {{");
                    let width = enumerators.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
                    for (n, v) in enumerators {
                        let _ = writeln!(self.out, "{tabs}\t{n:<width$} = {v},");
                    }
                    // The closing line lines its comment up as an inline record's does,
                    // a bitfield's `:N` left out of the count.
                    let decl = format!("}} {name}{aligned};");
                    let width = m.bit_size.map_or(0, |b| format!(":{b}").len());
                    let pad = ((decl_width + 1) as i64 - (decl.len() - width) as i64)
                        .unsigned_abs()
                        .max(1) as usize;
                    format!("{tabs}{decl}{:pad$}{position}", "")
                }
                spelling => {
                    let decl = match spelling {
                        Spelling::FnPointer { ret, params } => {
                            format!("{ret:<type_width$} (*{}){}({params});", m.name, aligned)
                        }
                        Spelling::Name(t) => format!("{t:<type_width$} {name}{aligned};"),
                        _ => format!("{:<type_width$} {name}{aligned};", m.type_name),
                    };
                    format!("{tabs}{decl:<decl_width$} {position}")
                }
            };
            let text = if m.sync.is_some() {
                paint(&text, "36", self.color)
            } else {
                text
            };
            let _ = writeln!(self.out, "{text}");
            let mut notes = Vec::new();
            if m.text.type_padding > 0 && s.kind != RecordKind::Union {
                notes.push(format!(
                    "{tabs}/* XXX last struct has {} byte{} of padding */",
                    m.text.type_padding,
                    plural(m.text.type_padding)
                ));
            }
            if m.bit_hole_after > 0 {
                notes.push(format!(
                    "{tabs}/* XXX {} bit{} hole, try to pack */",
                    m.bit_hole_after,
                    plural(m.bit_hole_after)
                ));
            }
            if m.hole_after > 0 {
                notes.push(format!(
                    "{tabs}/* XXX {} byte{} hole, try to pack */",
                    m.hole_after,
                    plural(m.hole_after)
                ));
            }
            if !notes.is_empty() {
                self.out.push('\n');
                for n in notes {
                    let _ = writeln!(self.out, "{}", paint(&n, "33", self.color));
                }
                self.blank = true;
            }
        }
    }

    /// The summary comments after the members, in pahole's order.
    fn summary(&mut self, s: &StructLayout) {
        let out = &mut self.out;
        out.push('\n');
        self.blank = false;
        let sum = &s.summary;
        let _ = writeln!(
            out,
            "\t/* size: {}, cachelines: {}, members: {} */",
            s.size, sum.cachelines, sum.members
        );
        if sum.sum_holes > 0 || sum.sum_bit_holes > 0 {
            if sum.sum_members > 0 {
                let _ = write!(out, "\t/* sum members: {}", sum.sum_members);
                if sum.sum_holes > 0 {
                    let _ = write!(out, ", holes: {}, sum holes: {}", sum.holes, sum.sum_holes);
                }
                let _ = writeln!(out, " */");
            }
            if sum.sum_bitfield_bits > 0 {
                let _ = write!(
                    out,
                    "\t/* sum bitfield members: {} bits",
                    sum.sum_bitfield_bits
                );
                if sum.sum_bit_holes > 0 {
                    let _ = write!(
                        out,
                        ", bit holes: {}, sum bit holes: {} bits",
                        sum.bit_holes, sum.sum_bit_holes
                    );
                } else {
                    let _ = write!(out, " ({} bytes)", sum.sum_bitfield_bits / 8);
                }
                let _ = writeln!(out, " */");
            }
        }
        if sum.padding > 0 {
            let _ = writeln!(out, "\t/* padding: {} */", sum.padding);
        }
        let padded: Vec<u64> = s
            .members
            .iter()
            .map(|m| m.text.type_padding)
            .filter(|p| *p > 0 && s.kind != RecordKind::Union)
            .collect();
        if !padded.is_empty() {
            let _ = writeln!(
                out,
                "\t/* paddings: {}, sum paddings: {} */",
                padded.len(),
                padded.iter().sum::<u64>()
            );
        }
        if sum.bit_padding > 0 {
            let _ = writeln!(out, "\t/* bit_padding: {} bits */", sum.bit_padding);
        }
        // A member with its own alignment; a forced hole is the hole before it.
        let mut forced = 0;
        let mut holes = 0;
        let mut sum_holes = 0;
        for (k, m) in s.members.iter().enumerate() {
            if m.text.aligned.is_none() {
                continue;
            }
            forced += 1;
            let before = if k > 0 {
                s.members[k - 1].hole_after
            } else {
                0
            };
            if before > 0 {
                holes += 1;
                sum_holes += before;
            }
        }
        if forced > 0 {
            let _ = write!(out, "\t/* forced alignments: {forced}");
            if holes > 0 {
                let _ = write!(
                    out,
                    ", forced holes: {holes}, sum forced holes: {sum_holes}"
                );
            }
            let _ = writeln!(out, " */");
        }
        if sum.last_cacheline != self.line && s.size > 0 {
            let _ = writeln!(out, "\t/* last cacheline: {} bytes */", sum.last_cacheline);
        }
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub fn suggestion(s: &Suggestion) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "suggested order for {} (size {} → {}, alignment {}):",
        s.struct_name, s.old_size, s.new_size, s.alignment
    );
    let mut t = Table::new(&["offset", "size", "member", "type", ""]);
    for m in &s.members {
        t.row(vec![
            m.offset.to_string(),
            m.size.to_string(),
            m.name.clone(),
            m.type_name.clone(),
            if m.own_line {
                "own line".into()
            } else {
                String::new()
            },
        ]);
    }
    out.push_str(&t.render());
    for n in &s.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    out
}

/// What the text shows of a report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    /// Only the hazards (`--hazards`), ending with their counts.
    pub hazards_only: bool,
    /// Below the hazards, each one's evidence in full (`--hazards --struct NAME`).
    pub evidence: bool,
}

/// The whole report: layouts (or only hazards), then suggestions.
pub fn render(report: &StructsReport, shown: Shown, color: bool) -> String {
    let mut out = String::new();
    for w in &report.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if shown.hazards_only {
        out.push_str(&hazards::table(&report.hazards, report.line, color));
        if shown.evidence {
            out.push_str(&hazards::evidence(&report.hazards, report.line));
        }
        out.push_str(&hazards::summary(
            &report.hazard_counts,
            report.hazards_left_out,
        ));
    } else {
        for s in &report.structs {
            out.push_str(&layout(s, report.line, color));
            out.push('\n');
        }
        let counts = &report.hazard_counts;
        if counts.total > 0 {
            let (errors, warnings) = (counts.error, counts.warning);
            let _ = writeln!(
                out,
                "{} in the {} above ({}, {}); --hazards lists them",
                count(counts.total as u64, "hazard"),
                if report.structs.len() == 1 {
                    "struct".to_string()
                } else {
                    format!("{} structs", report.structs.len())
                },
                count(errors as u64, "error"),
                count(warnings as u64, "warning"),
            );
        }
    }
    for s in &report.suggestions {
        out.push('\n');
        out.push_str(&suggestion(s));
    }
    out.push_str(&no_reorder(&report.no_reorder));
    out
}

/// The structs `--suggest` offers nothing for, and why.
fn no_reorder(names: &[String]) -> String {
    const LISTED: usize = 10;
    match names.len() {
        0 => String::new(),
        n if n <= LISTED => names
            .iter()
            .map(|s| {
                format!("\nno reorder suggested for {s}: none saves bytes or removes a hazard\n")
            })
            .collect(),
        n => format!(
            "\nno reorder suggested for {n} other structs: none saves bytes or removes a hazard\n"
        ),
    }
}
