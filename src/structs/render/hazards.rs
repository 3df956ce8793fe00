//! The words of `structs`' hazards: one sentence per finding (the table's
//! `finding` column, `--json`'s and SARIF's `message`), the evidence of one
//! struct's findings in full (`--hazards --struct NAME`), and the counts by kind
//! and severity a report ends with.

use crate::report::style::paint;
use crate::report::table::Table;
use crate::report::units::count;
use crate::structs::hazards::{Counts, Detail, FalseSharingLine, Hazard, Severity};
use crate::structs::types::{LockEvidence, Mapping, SiteRef};
use std::fmt::Write;

/// The finding in one sentence, its evidence abridged (the first sites, indices
/// and lines).
pub fn message(h: &Hazard, line: u64) -> String {
    let member = h.member.as_deref().unwrap_or("?");
    let size = h.size.unwrap_or(0);
    let offset = h.offset.unwrap_or(0);
    let mut text = match &h.detail {
        Detail::SplitLock {
            alignment,
            permitted,
        } => {
            let at_aligned = h.base_offsets.first() == Some(&0);
            let why = if *alignment == 1 {
                "packed: any address".to_string()
            } else {
                format!("{alignment}-byte aligned")
            };
            format!(
                "{member} ({size} bytes at offset {offset}) crosses a {line}-byte line for {} of the {permitted} base addresses `{}` permits ({why}){}",
                h.base_offsets.len(),
                h.struct_name,
                if at_aligned { ", even when it is line-aligned" } else { "" }
            )
        }
        Detail::SplitLockInArray {
            count,
            parent,
            parent_alignment,
        } => {
            let array = h.array.as_deref().unwrap_or("?");
            let container = h.container.as_deref().unwrap_or("?");
            let what = if *parent {
                format!("the parent `{container}`")
            } else {
                format!("the array `{array}`")
            };
            match h.indices.first() {
                Some(first) => format!(
                    "{array}[{first}].{member} crosses a {line}-byte line when {what} is {line}-byte aligned; elements {} of {count} cross",
                    list(&h.indices)
                ),
                None => format!(
                    "{array}[].{member} crosses a {line}-byte line for some elements when {what} sits at base offsets {} (mod {line}) its alignment of {parent_alignment} permits",
                    list(&h.base_offsets)
                ),
            }
        }
        Detail::Misaligned {
            type_name,
            dims,
            alignment,
        } => {
            let dims: String = dims.iter().map(|d| format!("[{d}]")).collect();
            format!(
                "{member} ({type_name}{dims}, {}) at offset {offset} is not {alignment}-byte aligned ({} past)",
                count(size, "byte"),
                count(offset % alignment.max(&1), "byte")
            )
        }
        Detail::FalseSharing { separate, written } => {
            false_sharing(&h.lines, *separate, *written, line)
        }
        Detail::ElementStraddle {
            straddling,
            period,
            arrays,
        } => {
            let arrays: Vec<String> = arrays
                .iter()
                .map(|u| match &u.parent {
                    Some(p) => format!("{p}.{}[{}]", u.name, u.count),
                    None => format!("{}[{}]", u.name, u.count),
                })
                .collect();
            format!(
                "{straddling} of every {period} elements ({:.1}%) of a {line}-byte-aligned array straddle a line: size {size} is not a divisor or multiple of {line}; arrays: {}",
                h.share.unwrap_or(0.0) * 100.0,
                arrays.join(", ")
            )
        }
        Detail::Holes {
            holes,
            sum_holes,
            padding,
            new_size,
        } => format!(
            "{} of {} in all and {} of padding; reordering saves {} ({size} → {new_size})",
            count(*holes, "hole"),
            count(*sum_holes, "byte"),
            count(*padding, "byte"),
            count(h.bytes.unwrap_or(0), "byte"),
        ),
    };
    if let Some(e) = &h.locked {
        text.push_str(&locked_text(h.by_use, e));
    }
    text
}

/// `0x11eb in account() (lock add)`
fn site(x: &SiteRef) -> String {
    let f = name_or(&x.function);
    match &x.via {
        Some(via) => format!("{:#x} in {f}() ({}; {via})", x.address, x.op),
        None => format!("{:#x} in {f}() ({})", x.address, x.op),
    }
}

fn name_or(function: &str) -> &str {
    if function.is_empty() {
        "?"
    } else {
        function
    }
}

/// `; locked at 0x11eb in account() (lock add), … (5 sites in 2 functions) [atomic by use]`
fn locked_text(by_use: bool, e: &LockEvidence) -> String {
    let sites: Vec<String> = e.sites.iter().map(site).collect();
    let mut text = format!(
        "; {}locked at {}",
        if e.inferred { "inferred: " } else { "" },
        sites.join(", ")
    );
    text.push_str(&more_sites(e));
    if by_use {
        text.push_str(" [atomic by use]");
    }
    text
}

/// `, … (5 sites in 2 functions)` when the evidence lists fewer sites than it counts.
fn more_sites(e: &LockEvidence) -> String {
    if e.count > e.sites.len() {
        format!(", … ({} sites in {} functions)", e.count, e.functions)
    } else {
        String::new()
    }
}

fn list(indices: &[u64]) -> String {
    let shown: Vec<String> = indices.iter().take(8).map(|i| i.to_string()).collect();
    if indices.len() > 8 {
        format!("{}, … ({} in all)", shown.join(", "), indices.len())
    } else {
        shown.join(", ")
    }
}

/// `2 lines shared, 1 with atomics locked from different functions: line 0 (…); …`
fn false_sharing(lines: &[FalseSharingLine], separate: usize, written: usize, line: u64) -> String {
    let mut evidence = Vec::new();
    if separate > 0 {
        evidence.push(format!(
            "{separate} with atomics locked from different functions"
        ));
    }
    if written > 0 {
        evidence.push(format!(
            "{written} with an atomic beside a member written elsewhere"
        ));
    }
    let described: Vec<String> = lines.iter().take(6).map(|l| shared_line(l, line)).collect();
    format!(
        "{} shared{}: {}{}{}",
        count(lines.len() as u64, "line"),
        if evidence.is_empty() {
            String::new()
        } else {
            format!(", {}", evidence.join(", "))
        },
        described.join("; "),
        if lines.len() > 6 {
            format!("; … ({} lines in all)", lines.len())
        } else {
            String::new()
        },
        if written > 0 {
            " (plain writers are found only in functions that also lock something)"
        } else {
            ""
        }
    )
}

/// `line 0 (bytes 0–63): hits (offset 0), misses (offset 8) with config [...]`
fn shared_line(l: &FalseSharingLine, line: u64) -> String {
    let names: Vec<String> = l
        .atomics
        .iter()
        .zip(&l.atomic_offsets)
        .map(|(p, o)| format!("{p} (offset {o})"))
        .collect();
    let mut text = format!(
        "line {} (bytes {}–{}): {}",
        l.line,
        l.line * line,
        (l.line + 1) * line - 1,
        names.join(", ")
    );
    if !l.others.is_empty() {
        let shown: Vec<&str> = l.others.iter().take(4).map(String::as_str).collect();
        text.push_str(&format!(" with {}", shown.join(", ")));
        if l.others.len() > 4 {
            text.push_str(&format!(" and {} more", l.others.len() - 4));
        }
    }
    if let Some((a, b)) = &l.separate_writers {
        text.push_str(&format!(
            " [{a} and {b} are locked from different functions]"
        ));
    }
    if let Some(w) = &l.written_elsewhere {
        let sites: Vec<String> = w.writes.sites.iter().map(site).collect();
        text.push_str(&format!(
            " [{} is written where {} is not locked: {}{}]",
            w.member,
            w.atomic,
            sites.join(", "),
            more_sites(&w.writes)
        ));
    }
    text
}

fn severity(s: Severity, color: bool) -> String {
    match s {
        Severity::Error => paint("error", "31", color),
        Severity::Warning => paint("warning", "33", color),
        Severity::Note => "note".to_string(),
    }
}

/// The hazards as a table, worst first.
pub fn table(list: &[Hazard], line: u64, color: bool) -> String {
    if list.is_empty() {
        return "no hazards found\n".to_string();
    }
    let mut t = Table::new(&["severity", "hazard", "struct", "finding"]);
    for h in list {
        t.row(vec![
            severity(h.severity, color),
            h.kind.id().to_string(),
            h.struct_name.clone(),
            message(h, line),
        ]);
    }
    t.render()
}

/// What the list ends with: the counts of every hazard found, by kind and
/// severity, and how many of them `--top` left out of the list.
pub fn summary(counts: &Counts, left_out: usize) -> String {
    let mut out = String::new();
    if counts.total == 0 {
        return out;
    }
    let _ = writeln!(
        out,
        "\nsummary: {} in {} ({}, {}, {})",
        count(counts.total as u64, "hazard"),
        count(counts.structs as u64, "struct"),
        count(counts.error as u64, "error"),
        count(counts.warning as u64, "warning"),
        count(counts.note as u64, "note"),
    );
    let mut t = Table::new(&["hazard", "error", "warning", "note", "total"]);
    for k in counts.by_kind.iter().filter(|k| k.total > 0) {
        t.row(vec![
            k.kind.id().to_string(),
            k.error.to_string(),
            k.warning.to_string(),
            k.note.to_string(),
            k.total.to_string(),
        ]);
    }
    t.row(vec![
        "all".to_string(),
        counts.error.to_string(),
        counts.warning.to_string(),
        counts.note.to_string(),
        counts.total.to_string(),
    ]);
    out.push_str(&t.render());
    if left_out > 0 {
        let _ = writeln!(
            out,
            "listed: the worst {} of {}; --top N lists more, --struct NAME one struct's evidence",
            counts.total - left_out,
            counts.total
        );
    }
    out
}

/// Every finding of the listed structs with its evidence in full, one block each:
/// what `--hazards --struct NAME` adds below the table.
pub fn evidence(list: &[Hazard], line: u64) -> String {
    let mut out = String::new();
    for (k, h) in list.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n{}. {} {} in {}{}",
            k + 1,
            h.severity.id(),
            h.kind.id(),
            h.struct_name,
            match (&h.decl_file, h.decl_line) {
                (Some(f), Some(l)) if l > 0 => format!(" ({f}:{l})"),
                (Some(f), _) => format!(" ({f})"),
                _ => String::new(),
            }
        );
        let mut rows: Vec<(&str, String)> = Vec::new();
        if let Some(m) = &h.member {
            rows.push((
                "member",
                format!(
                    "{m}, {} at offset {}",
                    count(h.size.unwrap_or(0), "byte"),
                    h.offset.unwrap_or(0)
                ),
            ));
        }
        match &h.detail {
            Detail::SplitLock {
                alignment,
                permitted,
            } => rows.push((
                "alone",
                format!(
                    "aligned to {alignment}: crosses at {} of {permitted} base offsets (mod {line}): {}",
                    h.base_offsets.len(),
                    numbers(&h.base_offsets)
                ),
            )),
            Detail::SplitLockInArray {
                count: n,
                parent_alignment,
                ..
            } => {
                rows.push((
                    "array",
                    format!(
                        "{}.{}[{n}] at offset {} of {}, which is aligned to {parent_alignment}",
                        h.container.as_deref().unwrap_or("?"),
                        h.array.as_deref().unwrap_or("?"),
                        h.array_offset.unwrap_or(0),
                        h.container.as_deref().unwrap_or("?"),
                    ),
                ));
                if !h.indices.is_empty() {
                    rows.push((
                        "crossing",
                        format!(
                            "{} of {n} elements when line-aligned: {}",
                            h.indices.len(),
                            numbers(&h.indices)
                        ),
                    ));
                }
                if !h.base_offsets.is_empty() {
                    rows.push((
                        "bases",
                        format!(
                            "some element crosses at base offsets (mod {line}) {}",
                            numbers(&h.base_offsets)
                        ),
                    ));
                }
            }
            Detail::Misaligned { alignment, .. } => rows.push((
                "alignment",
                format!(
                    "needs {alignment}, is {} past",
                    count(h.offset.unwrap_or(0) % alignment.max(&1), "byte")
                ),
            )),
            Detail::FalseSharing { .. } => {
                for l in &h.lines {
                    rows.push(("line", shared_line(l, line)));
                }
            }
            Detail::ElementStraddle { arrays, .. } => {
                for u in arrays {
                    rows.push((
                        "array",
                        match &u.parent {
                            Some(p) => format!("{p}.{}[{}]", u.name, u.count),
                            None => format!("{}[{}]", u.name, u.count),
                        },
                    ));
                }
            }
            Detail::Holes { .. } => {}
        }
        if let Some(e) = &h.locked {
            let mapping = if e.inferred { "inferred" } else { "exact" };
            for x in &e.sites {
                let how = match x.mapping {
                    Mapping::Exact => "exact",
                    Mapping::Inferred => "inferred",
                };
                rows.push(("locked", format!("{}, {how}", site(x))));
            }
            rows.push((
                "sites",
                format!(
                    "{} in {} ({mapping}){}",
                    count(e.count as u64, "site"),
                    count(e.functions as u64, "function"),
                    if h.by_use { "; an atomic by use" } else { "" }
                ),
            ));
        }
        rows.push(("finding", message(h, line)));
        for (label, value) in rows {
            let _ = writeln!(out, "   {label:<10}{value}");
        }
    }
    out
}

/// Every number, comma-separated (the evidence view abridges nothing).
fn numbers(list: &[u64]) -> String {
    let all: Vec<String> = list.iter().map(u64::to_string).collect();
    all.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structs::hazards::{HazardKind, KindCount};

    #[test]
    fn summary_counts_every_kind_found_and_what_top_left_out() {
        let row = |kind, error, warning, note| KindCount {
            kind,
            total: error + warning + note,
            error,
            warning,
            note,
        };
        let counts = Counts {
            total: 6,
            error: 1,
            warning: 2,
            note: 3,
            structs: 4,
            by_kind: vec![
                row(HazardKind::SplitLockRisk, 1, 1, 0),
                row(HazardKind::Misaligned, 0, 1, 0),
                row(HazardKind::FalseSharing, 0, 0, 0),
                row(HazardKind::ElementStraddle, 0, 0, 0),
                row(HazardKind::Holes, 0, 0, 3),
            ],
        };
        let text = summary(&counts, 4);
        assert!(
            text.contains("summary: 6 hazards in 4 structs (1 error, 2 warnings, 3 notes)"),
            "{text}"
        );
        assert!(!text.contains("false-sharing"), "{text}");
        assert!(text.contains("listed: the worst 2 of 6"), "{text}");
        assert!(!summary(&counts, 0).contains("listed:"));
        assert_eq!(summary(&Counts::default(), 0), "");
    }
}
