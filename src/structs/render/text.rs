//! Terminal output of `structs`: layouts that read like pahole's, the hazard list
//! (worst first) and the suggested reorders. Computes nothing new.

use crate::report::style::paint;
use crate::report::table::Table;
use crate::structs::hazards::{Hazard, Severity};
use crate::structs::layout::boundary_before;
use crate::structs::suggest::Suggestion;
use crate::structs::{StructLayout, StructsReport};
use std::fmt::Write;

/// One struct as pahole prints it.
pub fn layout(s: &StructLayout, line: u64, color: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} {} {{", s.kind.keyword(), s.name);
    let mut current = 0;
    for m in &s.members {
        if let Some((n, ago)) = boundary_before(&mut current, m.offset, line) {
            let text = if ago == 0 {
                format!(
                    "\t/* --- cacheline {n} boundary ({} bytes) --- */",
                    n * line
                )
            } else {
                format!(
                    "\t/* --- cacheline {n} boundary ({} bytes) was {ago} bytes ago --- */",
                    n * line
                )
            };
            let _ = writeln!(out, "{}", paint(&text, "2", color));
        }
        let dims: String = m.array.iter().map(|d| format!("[{d}]")).collect();
        let name = if m.base {
            "<ancestor>".to_string()
        } else {
            match m.bit_size {
                Some(b) => format!("{}:{b}", m.name),
                None => format!("{}{dims}", m.name),
            }
        };
        let decl = format!("{:<26} {name};", m.type_name);
        let position = match m.bit_offset {
            Some(bit) => format!("/* {:>5}:{:>2} {:>5} */", m.offset, bit, m.size),
            None => format!("/* {:>5} {:>5} */", m.offset, m.size),
        };
        let mut text = format!("\t{decl:<48} {position}");
        if m.sync.is_some() {
            text = paint(&text, "36", color);
        }
        let _ = writeln!(out, "{text}");
        if m.bit_hole_after > 0 {
            let t = format!(
                "\t/* XXX {} bit{} hole, try to pack */",
                m.bit_hole_after,
                plural(m.bit_hole_after)
            );
            let _ = writeln!(out, "{}", paint(&t, "33", color));
        }
        if m.hole_after > 0 {
            let t = format!(
                "\n\t/* XXX {} byte{} hole, try to pack */\n",
                m.hole_after,
                plural(m.hole_after)
            );
            let _ = writeln!(out, "{}", paint(&t, "33", color));
        }
    }
    let sum = &s.summary;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "\t/* size: {}, cachelines: {}, members: {} */",
        s.size, sum.cachelines, sum.members
    );
    if sum.holes > 0 || sum.sum_members > 0 {
        let _ = write!(out, "\t/* sum members: {}", sum.sum_members);
        if sum.holes > 0 {
            let _ = write!(out, ", holes: {}, sum holes: {}", sum.holes, sum.sum_holes);
        }
        let _ = writeln!(out, " */");
    }
    if sum.bit_holes > 0 {
        let _ = writeln!(
            out,
            "\t/* bit holes: {}, sum bit holes: {} bits */",
            sum.bit_holes, sum.sum_bit_holes
        );
    }
    if sum.padding > 0 {
        let _ = writeln!(out, "\t/* padding: {} */", sum.padding);
    }
    if sum.bit_padding > 0 {
        let _ = writeln!(out, "\t/* bit_padding: {} bits */", sum.bit_padding);
    }
    if sum.last_cacheline != line && s.size > 0 {
        let _ = writeln!(out, "\t/* last cacheline: {} bytes */", sum.last_cacheline);
    }
    let mut attrs = Vec::new();
    if s.packed {
        attrs.push("__packed__".to_string());
    }
    if let Some(a) = s.explicit_alignment {
        attrs.push(format!("__aligned__({a})"));
    }
    if attrs.is_empty() {
        let _ = writeln!(out, "}};");
    } else {
        let _ = writeln!(out, "}} __attribute__(({}));", attrs.join(", "));
    }
    out
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The hazards as a table, worst first.
pub fn hazards(list: &[Hazard], color: bool) -> String {
    if list.is_empty() {
        return "no hazards found\n".to_string();
    }
    let mut t = Table::new(&["severity", "hazard", "struct", "finding"]);
    for h in list {
        let sev = match h.severity {
            Severity::Error => paint("error", "31", color),
            Severity::Warning => paint("warning", "33", color),
            Severity::Note => "note".to_string(),
        };
        t.row(vec![
            sev,
            h.kind.id().to_string(),
            h.struct_name.clone(),
            h.message.clone(),
        ]);
    }
    t.render()
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

/// The whole report: layouts (or only hazards), then suggestions.
pub fn render(report: &StructsReport, hazards_only: bool, color: bool) -> String {
    let mut out = String::new();
    for w in &report.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if hazards_only {
        out.push_str(&hazards(&report.hazards, color));
    } else {
        for s in &report.structs {
            out.push_str(&layout(s, report.line, color));
            out.push('\n');
        }
        if !report.hazards.is_empty() {
            let errors = report
                .hazards
                .iter()
                .filter(|h| h.severity == Severity::Error)
                .count();
            let warnings = report
                .hazards
                .iter()
                .filter(|h| h.severity == Severity::Warning)
                .count();
            let _ = writeln!(
                out,
                "{} hazards ({errors} errors, {warnings} warnings); --hazards lists them",
                report.hazards.len()
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
