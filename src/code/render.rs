//! The terminal report of `code`: a summary line, the ranked function table
//! (hot first with a profile, worst hazards first otherwise), the loops of the
//! listed functions, the erratum spots with `--verbose`, and the diff.

use crate::code::diff::Diff;
use crate::code::elf::SymbolSource;
use crate::code::{CodeReport, Function};
use crate::report::style::paint;
use crate::report::table::Table;
use crate::report::units::significant;
use std::fmt::Write;

fn hex(x: u64) -> String {
    format!("{x:#x}")
}

fn percent(share: Option<f64>) -> String {
    match share {
        Some(s) => format!("{}%", significant(s * 100.0)),
        None => "-".to_string(),
    }
}

/// Shorten long C++ names for the table; the JSON keeps them whole.
fn short(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        return name.to_string();
    }
    let kept: String = name.chars().take(width - 1).collect();
    format!("{kept}…")
}

fn taken(count: usize, limit: usize) -> usize {
    if limit == 0 {
        count
    } else {
        count.min(limit)
    }
}

pub fn render(report: &CodeReport, verbose: bool, limit: usize, color: bool) -> String {
    let mut out = String::new();
    let g = report.geometry;
    let _ = writeln!(
        out,
        "ghostbench code: {} ({}, {} functions from {}; line {} B, window {} B)",
        report.binary,
        report.kind,
        report.summary.functions,
        match report.symbol_source {
            SymbolSource::Symtab => ".symtab",
            SymbolSource::Dynsym => ".dynsym",
        },
        g.line,
        g.window
    );
    if let Some(p) = &report.profile {
        let _ = writeln!(
            out,
            "profile: {} ({}, {} total {}); {} of it is in this binary's functions",
            p.profile.path,
            match p.profile.format {
                crate::code::profile::ProfileFormat::Callgrind => "callgrind/cachegrind",
                crate::code::profile::ProfileFormat::PerfScript => "perf script",
            },
            significant(p.profile.total),
            p.profile.event,
            percent(Some(p.matched_share))
        );
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "{} loops ({} tight loops straddle a window needlessly); {} JCC-erratum spots in {} functions; {} entries in the last 16 bytes of a window",
        s.loops, s.straddling_loops, s.jcc_spots, s.functions_with_jcc_spots, s.entries_near_window_end
    );
    if let Some(diff) = &report.diff {
        let _ = writeln!(out);
        out.push_str(&render_diff(diff, report.profile.is_some(), limit, color));
        return out;
    }
    let _ = writeln!(out);
    out.push_str(&function_table(report, limit, color));
    let shown = &report.functions[..taken(report.functions.len(), limit)];
    let loops = loop_table(shown, limit, g);
    if !loops.is_empty() {
        let _ = writeln!(out);
        out.push_str(&loops);
    }
    if verbose {
        let spots = spot_list(shown);
        if !spots.is_empty() {
            let _ = writeln!(out);
            out.push_str(&spots);
        }
    }
    out
}

fn function_table(report: &CodeReport, limit: usize, color: bool) -> String {
    let g = report.geometry;
    let hot = report.profile.is_some();
    let mut header = vec![];
    if hot {
        header.push("hot");
    }
    let off_line = format!("off{}", g.line);
    let off_window = format!("off{}", g.window);
    header.extend([
        "function",
        "address",
        "size",
        off_line.as_str(),
        off_window.as_str(),
        "lines",
        "windows",
        "loops",
        "jcc",
        "flags",
    ]);
    let mut table = Table::new(&header);
    let shown = taken(report.functions.len(), limit);
    for f in &report.functions[..shown] {
        let mut row = vec![];
        if hot {
            row.push(percent(f.hot_share));
        }
        let mut flags = vec![];
        if f.entry_near_window_end {
            flags.push("entry-near-window-end");
        }
        if f.placement.size <= report.geometry.line && f.placement.extra_lines > 0 {
            flags.push("crosses-line");
        }
        if f.invalid_bytes > 0 {
            flags.push("undecodable-bytes");
        }
        let straddling = f.straddling_loops();
        row.extend([
            short(&f.name, 48),
            hex(f.placement.address),
            f.placement.size.to_string(),
            f.placement.line_offset.to_string(),
            f.placement.window_offset.to_string(),
            f.placement.lines.to_string(),
            f.placement.windows.to_string(),
            if straddling > 0 {
                paint(
                    &format!("{} ({straddling} straddle)", f.loops.len()),
                    "33",
                    color,
                )
            } else {
                f.loops.len().to_string()
            },
            if f.jcc_spot_count > 0 {
                paint(&f.jcc_spot_count.to_string(), "33", color)
            } else {
                "0".to_string()
            },
            flags.join(","),
        ]);
        table.row(row);
    }
    let mut out = table.render();
    if shown < report.functions.len() {
        let _ = writeln!(
            out,
            "… {} more functions (--limit 0 lists all; --json has all)",
            report.functions.len() - shown
        );
    }
    out
}

fn loop_table(functions: &[Function], limit: usize, g: crate::code::placement::Geometry) -> String {
    let mut rows: Vec<(&Function, &crate::code::disasm::Loop)> = functions
        .iter()
        .flat_map(|f| f.loops.iter().map(move |l| (f, l)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    // Straddling tight loops first; otherwise keep the function ranking.
    rows.sort_by_key(|(_, l)| !l.straddles());
    let off_line = format!("off{}", g.line);
    let off_window = format!("off{}", g.window);
    let mut table = Table::new(&[
        "loop header",
        "in function",
        &off_line,
        &off_window,
        "align",
        "body",
        "windows",
        "back edges",
    ]);
    let shown = taken(rows.len(), limit);
    for (f, l) in &rows[..shown] {
        table.row(vec![
            hex(l.header),
            short(&f.name, 40),
            l.line_offset.to_string(),
            l.window_offset.to_string(),
            l.alignment.to_string(),
            format!("{} B", l.body_bytes),
            if l.straddles() {
                format!("{} (+{})", l.windows, l.extra_windows)
            } else {
                l.windows.to_string()
            },
            l.back_edges.to_string(),
        ]);
    }
    let mut out = String::from("loops of the functions above (windows: +N = a tight loop touching N more than its body needs)\n");
    out.push_str(&table.render());
    if shown < rows.len() {
        let _ = writeln!(out, "… {} more loops", rows.len() - shown);
    }
    out
}

fn spot_list(functions: &[Function]) -> String {
    let mut table = Table::new(&[
        "address",
        "function",
        "kind",
        "boundary",
        "bytes",
        "instruction",
    ]);
    let mut any = false;
    for f in functions {
        for s in &f.jcc_spots {
            any = true;
            table.row(vec![
                hex(s.address),
                short(&f.name, 40),
                s.kind.label().to_string(),
                match s.boundary {
                    crate::code::disasm::Boundary::Crosses => "crosses 32".to_string(),
                    crate::code::disasm::Boundary::Ends => "ends on 32".to_string(),
                },
                s.length.to_string(),
                s.text.clone().unwrap_or_default(),
            ]);
        }
    }
    if !any {
        return String::new();
    }
    let mut out = String::from("JCC-erratum spots (32-byte boundary)\n");
    out.push_str(&table.render());
    out
}

fn render_diff(diff: &Diff, hot: bool, limit: usize, color: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "placement changes from {} to {}: {} of {} matched functions changed ({} only in the first, {} only in the second)",
        diff.old,
        diff.new,
        diff.changes.len(),
        diff.matched,
        diff.only_in_old,
        diff.only_in_new
    );
    if diff.changes.is_empty() {
        return out;
    }
    let mut header = vec![];
    if hot {
        header.push("hot");
    }
    header.extend([
        "function",
        "old address",
        "new address",
        "off64",
        "off32",
        "lines",
        "windows",
        "loops",
        "why",
    ]);
    let mut table = Table::new(&header);
    let shown = taken(diff.changes.len(), limit);
    for c in &diff.changes[..shown] {
        let mut row = vec![];
        if hot {
            row.push(percent(c.hot_share));
        }
        let arrow = |a: u64, b: u64| {
            if a == b {
                a.to_string()
            } else {
                format!("{a} → {b}")
            }
        };
        let why: Vec<&str> = c.reasons.iter().map(|r| r.label()).collect();
        let hazard = c
            .reasons
            .iter()
            .any(|r| *r != crate::code::diff::ChangeReason::OffsetMoved);
        row.extend([
            short(&c.name, 48),
            hex(c.old.address),
            hex(c.new.address),
            arrow(c.old.line_offset, c.new.line_offset),
            arrow(c.old.window_offset, c.new.window_offset),
            arrow(c.old.lines, c.new.lines),
            arrow(c.old.windows, c.new.windows),
            if c.loops.is_empty() {
                "-".to_string()
            } else {
                c.loops
                    .iter()
                    .map(|l| format!("@{}→{}", l.old_line_offset, l.new_line_offset))
                    .collect::<Vec<_>>()
                    .join(" ")
            },
            if hazard {
                paint(&why.join(", "), "33", color)
            } else {
                why.join(", ")
            },
        ]);
        table.row(row);
    }
    out.push_str(&table.render());
    if shown < diff.changes.len() {
        let _ = writeln!(
            out,
            "… {} more changes (--limit 0 lists all; --json has all)",
            diff.changes.len() - shown
        );
    }
    out
}
