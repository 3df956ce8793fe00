//! The `layout` report for the terminal and for Markdown: the templates, the
//! layout sources, failed builds and why the runs stopped, the builds ×
//! metrics matrix, each verdict with its sentence and what would decide it,
//! `--explain`'s section, the legend, the notes and the time. The words come
//! from `prose`; this file only lays them out.

use super::explain::{markdown_explain, render_explain};
use super::{label, prose, COLUMNS};
use crate::layout::{LayoutReport, State};
use crate::report::escape::{markdown as escape, markdown_code as code, visible};
use crate::report::status;
use crate::report::style::verdict as paint;
use crate::report::table::Table;
use std::fmt::Write;

/// Whether the stop block is for Ctrl-C, and whether results follow it.
fn stop_kind(report: &LayoutReport) -> (bool, bool) {
    (
        report.status.state == State::Interrupted,
        report.status.state != State::BuildFailed,
    )
}

/// The terminal report; `color` paints the verdict words.
pub fn render(report: &LayoutReport, color: bool) -> String {
    let report = &*prose::shown(report);
    let mut out = String::new();
    let s = &report.settings;
    let _ = writeln!(
        out,
        "ghostbench {}: {}",
        prose::verb(report),
        prose::headline(report)
    );
    for b in report.builds.iter().filter(|b| !b.template.is_empty()) {
        let _ = writeln!(out, "  {} = `{}`", b.name, b.template);
    }
    if !s.run_template.is_empty() {
        let _ = writeln!(out, "  run = `{}`", s.run_template);
    }
    for source in &report.sources {
        let _ = writeln!(out, "  {} {}", label::SOURCE, prose::source(source));
    }
    let _ = writeln!(out);
    for f in report.failed_builds() {
        let _ = writeln!(out, "{}\n  $ {}", prose::build_failed(report, f), f.command);
        for line in prose::build_output(f) {
            let _ = writeln!(out, "  | {line}");
        }
    }
    let (interrupted, results_follow) = stop_kind(report);
    out.push_str(&status::stop_cause(
        &report.status,
        interrupted,
        results_follow,
    ));
    if report.matrix.is_empty() {
        return out;
    }
    let mut table = Table::new(&COLUMNS);
    for row in &report.matrix {
        let mut cells = prose::cells(row).to_vec();
        if let Some(c) = &row.comparison {
            cells[7] = paint(c.verdict, color);
        }
        table.row(cells);
    }
    out.push_str(&table.render());
    let _ = writeln!(out);
    for row in &report.matrix {
        if let Some(c) = &row.comparison {
            let _ = writeln!(
                out,
                "{:<8} {}: {}",
                paint(c.verdict, color),
                prose::subject(row),
                prose::comparison_sentence(report, row, c)
            );
            if let Some(hint) = prose::comparison_hint(report, c) {
                let _ = writeln!(out, "         {}: {hint}", label::TO_DECIDE);
            }
        }
    }
    if let Some(explain) = &report.explain {
        let _ = writeln!(out);
        out.push_str(&render_explain(explain, &report.builds[0].name));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", prose::legend(report));
    for note in prose::notes(report) {
        let _ = writeln!(out, "{}: {note}", label::NOTE);
    }
    if let Some(time) = prose::time(report) {
        let _ = writeln!(out, "{time}");
    }
    out
}

/// The same report in Markdown, for a pull-request comment: the same
/// sections and labels as the terminal, the matrix as a table.
pub fn markdown(report: &LayoutReport) -> String {
    let report = &*prose::shown(report);
    let mut out = String::new();
    let s = &report.settings;
    let _ = writeln!(
        out,
        "### ghostbench {}: {}\n",
        escape(&prose::verb(report)),
        escape(&prose::headline(report))
    );
    let mut setup = Vec::new();
    for b in report.builds.iter().filter(|b| !b.template.is_empty()) {
        setup.push(format!("{} = {}", escape(&b.name), code(&b.template)));
    }
    if !s.run_template.is_empty() {
        setup.push(format!("run = {}", code(&s.run_template)));
    }
    for source in &report.sources {
        setup.push(format!(
            "{} {}",
            label::SOURCE,
            escape(&prose::source(source))
        ));
    }
    for line in &setup {
        let _ = writeln!(out, "- {line}");
    }
    if !setup.is_empty() {
        let _ = writeln!(out);
    }
    for f in report.failed_builds() {
        let _ = writeln!(
            out,
            "> {}\n>\n> ```\n> $ {}",
            escape(&prose::build_failed(report, f)),
            visible(&f.command).replace("```", "'''")
        );
        for line in prose::build_output(f) {
            let _ = writeln!(out, "> | {}", visible(line).replace("```", "'''"));
        }
        let _ = writeln!(out, "> ```\n");
    }
    let (interrupted, results_follow) = stop_kind(report);
    out.push_str(&status::markdown(
        &report.status,
        interrupted,
        results_follow,
    ));
    if report.matrix.is_empty() {
        return out;
    }
    let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
    let _ = writeln!(out, "|---|---|---:|---|---|---:|---:|---|");
    for row in &report.matrix {
        let mut cells: Vec<String> = prose::cells(row).iter().map(|c| escape(c)).collect();
        if row.comparison.is_some() {
            cells[7] = format!("**{}**", cells[7]);
        }
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(out);
    for row in &report.matrix {
        if let Some(c) = &row.comparison {
            let _ = writeln!(
                out,
                "- **{}** {}: {}",
                c.verdict,
                escape(&prose::subject(row)),
                escape(&prose::comparison_sentence(report, row, c))
            );
            if let Some(hint) = prose::comparison_hint(report, c) {
                let _ = writeln!(out, "  - {}: {}", label::TO_DECIDE, escape(&hint));
            }
        }
    }
    if let Some(explain) = &report.explain {
        let _ = writeln!(out);
        out.push_str(&markdown_explain(explain, &report.builds[0].name));
    }
    let _ = writeln!(out);
    for note in prose::notes(report) {
        let _ = writeln!(out, "> {}: {}\n", label::NOTE, escape(&note));
    }
    let mut footer = escape(&prose::legend(report));
    if let Some(time) = prose::time(report) {
        let _ = write!(footer, "<br>{}", escape(&time));
    }
    let _ = writeln!(out, "<sub>{footer}</sub>");
    out
}
