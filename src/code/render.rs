//! The terminal report of `code`: the model line (which microarchitecture
//! model(s) and why), a summary line per model, the ranked function table
//! (hot first with a profile, worst hazards first otherwise; a column group
//! per model), the loops of the listed functions, the erratum spots with
//! `--verbose`, and the diff.

use crate::code::diff::Diff;
use crate::code::elf::SymbolSource;
use crate::code::uarch::{Choice, Cpu, Why};
use crate::code::{CodeReport, Function, UarchReport};
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

fn cpu(cpu: &Cpu) -> String {
    format!(
        "{} family {} ({:#x}), model {} ({:#x}), from {}",
        cpu.vendor, cpu.family, cpu.family, cpu.model, cpu.model, cpu.source
    )
}

/// What a model says about the two hazards that differ between models.
fn traits(m: &UarchReport) -> String {
    format!(
        "{}: {}, {}-byte windows",
        m.model.name,
        if m.model.jcc_erratum {
            "JCC erratum applies"
        } else {
            "no JCC erratum"
        },
        m.geometry.window
    )
}

/// Why the model(s) of `choice` were chosen, in words.
pub fn why_words(choice: &Choice) -> String {
    match &choice.why {
        Why::Requested if choice.models.len() > 1 => {
            "named with --uarch; one column per model".to_string()
        }
        Why::Requested => "named with --uarch".to_string(),
        Why::Default => "the default when no model is chosen".to_string(),
        Why::Detected(c) => format!("detected: this machine's CPU is {}", cpu(c)),
        Why::Unknown { cpu: Some(c) } => format!(
            "this machine's CPU, {}, is not in the models' tables",
            cpu(c)
        ),
        Why::Unknown { cpu: None } => "this machine's CPU could not be identified".to_string(),
    }
}

/// The report's first line: the model(s) used and why.
pub fn uarch_line(report: &CodeReport) -> String {
    let names: Vec<&str> = report.models.iter().map(|m| m.model.name).collect();
    let why = why_words(&report.uarch);
    let traits: Vec<String> = report.models.iter().map(traits).collect();
    format!(
        "uarch: {} ({why}) — {}",
        names.join(", "),
        traits.join("; ")
    )
}

/// One model's totals, in words.
fn summary_line(m: &UarchReport, prefix: bool) -> String {
    let s = &m.summary;
    let name = if prefix {
        format!("{}: ", m.model.name)
    } else {
        String::new()
    };
    let spots = if m.model.jcc_erratum {
        format!(
            "{} JCC-erratum spots in {} functions",
            s.jcc_spots, s.functions_with_jcc_spots
        )
    } else {
        format!(
            "no JCC-erratum hazard (the erratum is Skylake-family only; if built for Skylake-family: {} spots in {} functions, not ranked)",
            s.jcc_spots, s.functions_with_jcc_spots
        )
    };
    format!(
        "{name}{} loops ({} tight loops straddle a {}-byte window needlessly); {spots}; {} entries in the last 16 bytes of a window",
        s.loops, s.straddling_loops, m.geometry.window, s.entries_near_window_end
    )
}

pub fn render(report: &CodeReport, verbose: bool, limit: usize, color: bool) -> String {
    let mut out = String::new();
    let g = report.geometry;
    let _ = writeln!(out, "{}", uarch_line(report));
    let windows: Vec<String> = report
        .models
        .iter()
        .map(|m| format!("{} B", m.geometry.window))
        .collect();
    let mut windows = windows;
    windows.dedup();
    let _ = writeln!(
        out,
        "ghostbench code: {} ({}, {} functions from {}; line {} B, window {})",
        report.binary,
        report.kind,
        report.summary.functions,
        match report.symbol_source {
            SymbolSource::Symtab => ".symtab",
            SymbolSource::Dynsym => ".dynsym",
        },
        g.line,
        windows.join(" / ")
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
    let several = report.models.len() > 1;
    for m in &report.models {
        let _ = writeln!(out, "{}", summary_line(m, several));
    }
    if let Some(diff) = &report.diff {
        let _ = writeln!(out);
        out.push_str(&render_diff(
            diff,
            report.profile.is_some(),
            limit,
            color,
            g,
        ));
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
        let spots = spot_list(shown, &report.models[0]);
        if !spots.is_empty() {
            let _ = writeln!(out);
            out.push_str(&spots);
        }
    }
    out
}

/// The Markdown report: the model line as a paragraph (the document's first
/// line), then the terminal report without it as a code block.
pub fn markdown(report: &CodeReport, verbose: bool, limit: usize) -> String {
    let text = render(report, verbose, limit, false);
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    format!(
        "{}\n\n{}",
        crate::report::escape::markdown(first),
        crate::report::escape::markdown_block(rest, "")
    )
}

fn function_table(report: &CodeReport, limit: usize, color: bool) -> String {
    let g = report.geometry;
    let hot = report.profile.is_some();
    let several = report.models.len() > 1;
    let mut header: Vec<String> = vec![];
    if hot {
        header.push("hot".into());
    }
    header.extend(
        [
            "function",
            "address",
            "size",
            &format!("off{}", g.line),
            "lines",
            "loops",
        ]
        .map(String::from),
    );
    // One column group per model; named after the model when there are several.
    let label = |m: &UarchReport, column: &str| {
        if several {
            format!("{} {column}", m.model.name)
        } else {
            column.to_string()
        }
    };
    // A window as large as the line has the line's offset: one column says it.
    let own_offset = |m: &UarchReport| m.geometry.window != g.line;
    for m in &report.models {
        if own_offset(m) {
            header.push(label(m, &format!("off{}", m.geometry.window)));
        }
        header.push(label(m, "windows"));
        if several {
            header.push(label(m, "straddle"));
        }
        if m.model.jcc_erratum {
            header.push(label(m, "jcc"));
        }
    }
    header.push("flags".into());
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header_refs);
    let shown = taken(report.functions.len(), limit);
    for f in &report.functions[..shown] {
        let mut row = vec![];
        if hot {
            row.push(percent(f.hot_share));
        }
        let mut flags = vec![];
        for (m, u) in report.models.iter().zip(&f.uarch) {
            if u.entry_near_window_end {
                flags.push(if several {
                    format!("entry-near-window-end({})", m.model.name)
                } else {
                    "entry-near-window-end".to_string()
                });
            }
        }
        if f.placement.size <= report.geometry.line && f.placement.extra_lines > 0 {
            flags.push("crosses-line".into());
        }
        if f.invalid_bytes > 0 {
            flags.push("undecodable-bytes".into());
        }
        let straddling = f.uarch.first().map_or(0, |u| u.straddling_loops);
        row.extend([
            short(&f.name, 48),
            hex(f.placement.address),
            f.placement.size.to_string(),
            f.placement.line_offset.to_string(),
            f.placement.lines.to_string(),
            if straddling > 0 && !several {
                paint(
                    &format!("{} ({straddling} straddle)", f.loops.len()),
                    "33",
                    color,
                )
            } else {
                f.loops.len().to_string()
            },
        ]);
        for (m, u) in report.models.iter().zip(&f.uarch) {
            if own_offset(m) {
                row.push(u.window_offset.to_string());
            }
            row.push(u.windows.to_string());
            if several {
                row.push(if u.straddling_loops > 0 {
                    paint(&u.straddling_loops.to_string(), "33", color)
                } else {
                    "0".to_string()
                });
            }
            if m.model.jcc_erratum {
                row.push(if u.jcc_spot_count > 0 {
                    paint(&u.jcc_spot_count.to_string(), "33", color)
                } else {
                    "0".to_string()
                });
            }
        }
        row.push(flags.join(","));
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
    let own_offset = g.window != g.line;
    let mut header = vec!["loop header", "in function", &off_line];
    if own_offset {
        header.push(&off_window);
    }
    header.extend(["align", "body", "windows", "back edges"]);
    let mut table = Table::new(&header);
    let shown = taken(rows.len(), limit);
    for (f, l) in &rows[..shown] {
        let mut row = vec![hex(l.header), short(&f.name, 40), l.line_offset.to_string()];
        if own_offset {
            row.push(l.window_offset.to_string());
        }
        row.extend([
            l.alignment.to_string(),
            format!("{} B", l.body_bytes),
            if l.straddles() {
                format!("{} (+{})", l.windows, l.extra_windows)
            } else {
                l.windows.to_string()
            },
            l.back_edges.to_string(),
        ]);
        table.row(row);
    }
    let mut out = String::from("loops of the functions above (windows: +N = a tight loop touching N more than its body needs)\n");
    out.push_str(&table.render());
    if shown < rows.len() {
        let _ = writeln!(out, "… {} more loops", rows.len() - shown);
    }
    out
}

/// The first model's spots: hazards where it has the erratum, otherwise the
/// branches that would be spots if built for Skylake-family.
fn spot_list(functions: &[Function], model: &UarchReport) -> String {
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
    let mut out = if model.model.jcc_erratum {
        format!(
            "JCC-erratum spots ({}, 32-byte boundary)\n",
            model.model.name
        )
    } else {
        format!(
            "32-byte-boundary branches: not hazards on {} (no JCC erratum), spots if built for Skylake-family\n",
            model.model.name
        )
    };
    out.push_str(&table.render());
    out
}

/// The diff's first lines: how many functions changed, and how, counted by kind.
fn diff_summary(diff: &Diff) -> String {
    let s = &diff.summary;
    let mut out = format!(
        "placement changes from {} to {}: {} of {} matched functions changed ({} only in the first, {} only in the second)\n",
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
    let _ = writeln!(
        out,
        "  {} with other code ({} larger, {} smaller, {} the same size with other loops); {} the same code, placed elsewhere",
        s.code_changed,
        s.grew,
        s.shrank,
        s.code_changed - s.grew - s.shrank,
        s.moved_only
    );
    let _ = writeln!(
        out,
        "  new hazards: {} more lines or windows than their size needs; {} a loop that lost its alignment, {} a tight loop newly straddling a window",
        match s.new_straddle {
            1 => "1 function touches".to_string(),
            n => format!("{n} functions touch"),
        },
        s.loop_lost_alignment,
        s.loop_new_straddle
    );
    let _ = writeln!(
        out,
        "  loops are the same loop when at the same offset in their function with the same body; loops of changed code are counted, not compared"
    );
    match s.hot {
        Some(hot) => {
            let _ = writeln!(
                out,
                "  {hot} of the changed functions have a share of the profile: hottest first"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "  largest size changes first (--hot PROFILE puts the hot ones first)"
            );
        }
    }
    out
}

/// The loops column: counts, and how many are the same loop in both builds.
fn loops_cell(c: &crate::code::diff::PlacementChange) -> String {
    let counts = if c.old_loop_count == c.new_loop_count {
        c.old_loop_count.to_string()
    } else {
        format!("{} → {}", c.old_loop_count, c.new_loop_count)
    };
    let most = c.old_loop_count.max(c.new_loop_count);
    if most == 0 {
        "-".to_string()
    } else if c.matched_loops < most {
        format!("{counts} ({} same)", c.matched_loops)
    } else if !c.loops.is_empty() {
        format!("{counts} ({} moved)", c.loops.len())
    } else {
        counts
    }
}

/// The reasons, loop reasons with how many loops.
fn why_cell(c: &crate::code::diff::PlacementChange) -> Vec<String> {
    use crate::code::diff::ChangeReason;
    c.reasons
        .iter()
        .map(|r| {
            let loops = match r {
                ChangeReason::LoopLostAlignment => {
                    c.loops.iter().filter(|l| l.lost_alignment).count()
                }
                ChangeReason::LoopNewStraddle => c.loops.iter().filter(|l| l.new_straddle).count(),
                _ => 0,
            };
            match r {
                ChangeReason::CodeChanged => format!("code changed ({:+} B)", c.size_delta()),
                _ if loops > 1 => format!("{} ×{loops}", r.label()),
                _ => r.label().to_string(),
            }
        })
        .collect()
}

fn render_diff(
    diff: &Diff,
    hot: bool,
    limit: usize,
    color: bool,
    g: crate::code::placement::Geometry,
) -> String {
    let mut out = diff_summary(diff);
    if diff.changes.is_empty() {
        return out;
    }
    let _ = writeln!(out);
    let mut header = vec![];
    if hot {
        header.push("hot");
    }
    let off_line = format!("off{}", g.line);
    let off_window = format!("off{}", g.window);
    let own_offset = g.window != g.line;
    header.extend(["function", "size", off_line.as_str()]);
    if own_offset {
        header.push(off_window.as_str());
    }
    header.push("lines");
    if own_offset {
        header.push("windows");
    }
    header.extend(["loops", "why"]);
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
        let hazard = c.reasons.iter().any(|r| {
            !matches!(
                r,
                crate::code::diff::ChangeReason::OffsetMoved
                    | crate::code::diff::ChangeReason::CodeChanged
            )
        });
        let why = why_cell(c).join(", ");
        row.extend([
            short(&c.name, 48),
            arrow(c.old.size, c.new.size),
            arrow(c.old.line_offset, c.new.line_offset),
        ]);
        if own_offset {
            row.push(arrow(c.old.window_offset, c.new.window_offset));
        }
        row.push(arrow(c.old.lines, c.new.lines));
        if own_offset {
            row.push(arrow(c.old.windows, c.new.windows));
        }
        row.extend([
            loops_cell(c),
            if hazard {
                paint(&why, "33", color)
            } else {
                why
            },
        ]);
        table.row(row);
    }
    out.push_str(&table.render());
    if shown < diff.changes.len() {
        let _ = writeln!(
            out,
            "… {} more changes (--limit 0 lists all; --json has all, with addresses and every moved loop)",
            diff.changes.len() - shown
        );
    }
    out
}

#[cfg(test)]
mod tests;
