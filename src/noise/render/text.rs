//! A `noise` report for the terminal and as Markdown: the summary line, the
//! stop block, per metric its finding, the table of shares and the runs
//! sentence, the factors not tested, the notes.

use super::{finding, notes, rows, runs_sentence, summary, title, untested, COLUMNS};
use crate::noise::{NoiseReport, State};
use crate::report::{escape, status, style::paint, table::Table};
use std::fmt::Write;

/// The terminal text.
pub fn terminal(report: &NoiseReport, color: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", paint(&title(report), "1", color));
    let _ = writeln!(out, "{}\n", summary(report));
    let interrupted = report.status.state == State::Interrupted;
    out.push_str(&status::stop_cause(&report.status, interrupted, true));
    for metric in &report.metrics {
        let _ = writeln!(out, "{}", finding(metric));
        if let Ok(a) = &metric.result {
            let mut table = Table::new(&COLUMNS);
            for row in rows(report, a) {
                table.row(row);
            }
            let _ = writeln!(out, "{}", table.render());
            let _ = writeln!(out, "{}", runs_sentence(report, a));
        }
        out.push('\n');
    }
    for line in untested(report).into_iter().chain(notes(report)) {
        let _ = writeln!(out, "note: {line}");
    }
    out
}

/// The Markdown document.
pub fn markdown(report: &NoiseReport) -> String {
    let mut out = format!("# {}\n\n", escape::markdown(&title(report)));
    let _ = writeln!(out, "{}\n", escape::markdown(&summary(report)));
    let interrupted = report.status.state == State::Interrupted;
    out.push_str(&status::markdown(&report.status, interrupted, true));
    for metric in &report.metrics {
        let _ = writeln!(out, "## {}\n", escape::markdown(&metric.name));
        let _ = writeln!(out, "{}\n", escape::markdown(&finding(metric)));
        if let Ok(a) = &metric.result {
            let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
            let _ = writeln!(out, "|{}", "---|".repeat(COLUMNS.len()));
            for row in rows(report, a) {
                let cells: Vec<String> = row.iter().map(|c| escape::markdown(c)).collect();
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
            let _ = writeln!(out, "\n{}\n", escape::markdown(&runs_sentence(report, a)));
        }
    }
    let lines: Vec<String> = untested(report).into_iter().chain(notes(report)).collect();
    if !lines.is_empty() {
        out.push_str("## Notes\n\n");
        for line in lines {
            let _ = writeln!(out, "- {}", escape::markdown(&line));
        }
    }
    out
}
