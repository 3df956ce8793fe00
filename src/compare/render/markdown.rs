//! `--markdown FILE`: the `compare` report fit for a pull-request comment,
//! with the terminal report's sections in its order: the commands, why it
//! stopped early, each verdict with its interval and what would decide it, the
//! table, each side's summary (folded), process start, counters, simulation,
//! notes, warnings, settings and how it ended. It quotes the verdict's interval
//! only; the descriptive p-values are in `--json`.

use super::cells::compare_cells;
use super::hint;
use super::prose::{self, label};
use crate::compare::{CompareReport, State};
use crate::report::escape::{markdown as escape, markdown_code as code};
use crate::report::status;
use std::fmt::Write;

pub fn render(report: &CompareReport) -> String {
    let report = &*prose::shown(report);
    let mut out = String::new();
    let [a, b] = prose::names(report);
    let verb = crate::compare::render::notes::title_verb("compare", report.analyze.as_ref());
    let _ = writeln!(out, "### ghostbench {verb}: {} vs {}\n", code(a), code(b));
    let _ = writeln!(out, "{}\n", commands(report));
    out.push_str(&status::markdown(
        &report.status,
        report.status.state == State::Interrupted,
        true,
    ));
    for m in &report.metrics {
        let sentence = prose::sentence(m, [a, b], report.settings.margin);
        let _ = writeln!(out, "- **{}** {}", m.verdict, escape(&sentence));
        let _ = writeln!(out, "  - {}", escape(&prose::validity(report, m)));
        for line in hint::lines(&m.causes, &hint::Context::of(report, m)) {
            let _ = writeln!(out, "  - {} {}", label::TO_DECIDE, escape(&line));
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| metric | A median | B median | B/A (HL) | change | {} | verdict |",
        prose::ci_header(report)
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|---|");
    for m in &report.metrics {
        let [name, a, b, ratio, change, ci] = compare_cells(m);
        let _ = writeln!(
            out,
            "| {} | {a} | {b} | {ratio} | {change} | {ci} | **{}** |",
            escape(&name),
            m.verdict,
        );
    }
    let _ = writeln!(out);
    out.push_str(&summaries(report));
    out.push_str(&footer(report));
    out
}

/// "A = fast `cmd`, B = …": every name escaped, every command a code span
/// that nothing in it can close.
fn commands(report: &CompareReport) -> String {
    let side = |letter: &str, i: usize| match prose::command_parts(letter, &report.commands[i]) {
        (Some(name), Some(text)) => format!("{} {}", escape(name), code(text)),
        (None, Some(text)) => code(text),
        (name, None) => escape(name.unwrap_or(letter)),
    };
    format!("A = {}, B = {}", side("A", 0), side("B", 1))
}

/// Each metric's per-side summaries, folded away under one `<details>`.
fn summaries(report: &CompareReport) -> String {
    let mut out = String::from("<details><summary>per-side summaries</summary>\n\n");
    for m in &report.metrics {
        let _ = writeln!(out, "**{}**\n", escape(&prose::metric_heading(m)));
        let _ = writeln!(out, "| {} |", prose::SUMMARY_HEADER.join(" | "));
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|---|");
        for (side, summary) in [(0, &m.a), (1, &m.b)] {
            let side = escape(&prose::side_label(report, side));
            match summary {
                Some(s) => {
                    let _ = writeln!(
                        out,
                        "| {side} | {} |",
                        prose::summary_cells(s, m.unit).join(" | ")
                    );
                }
                None => {
                    let _ = writeln!(out, "| {side} | 0 | no runs |  |  |  |  |  |");
                }
            }
        }
        let _ = writeln!(out);
    }
    out.push_str("</details>\n\n");
    out
}

/// Process start, counters, simulation, notes and warnings as a list, then
/// the settings and how it ended in small print.
fn footer(report: &CompareReport) -> String {
    let mut out = String::new();
    let items = prose::footer_items(report);
    for item in &items {
        let _ = writeln!(out, "- {}", escape(item));
    }
    if !items.is_empty() {
        let _ = writeln!(out);
    }
    if !report.counters.rows.is_empty() {
        let _ = writeln!(out, "| {} |", prose::COUNTER_HEADER.join(" | "));
        let _ = writeln!(out, "|---|---:|---:|---:|");
        for row in &report.counters.rows {
            let _ = writeln!(
                out,
                "| {} |",
                prose::counter_cells(row).map(|c| escape(&c)).join(" | ")
            );
        }
        let _ = writeln!(out);
    }
    if let Some(sim) = prose::simulation(report).filter(|s| !s.rows.is_empty()) {
        let _ = writeln!(out, "| {} |", prose::SIMULATION_HEADER.join(" | "));
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
        for row in &sim.rows {
            let _ = writeln!(out, "| {} |", row.clone().map(|c| escape(&c)).join(" | "));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "<sub>{} · {}</sub>",
        escape(&prose::settings(report)),
        escape(&prose::ending(report))
    );
    out
}
