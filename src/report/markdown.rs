//! `--markdown FILE`: a compact report fit for a pull-request comment.

use super::format::{compare_cells, p_value};
use crate::compare::{CompareReport, State};
use std::fmt::Write;

pub fn render(report: &CompareReport) -> String {
    let mut out = String::new();
    let [a, b] = [&report.commands[0], &report.commands[1]];
    let _ = writeln!(
        out,
        "### ghostbench compare: `{}` vs `{}`\n",
        a.name, b.name
    );
    if let Some(message) = &report.status.message {
        let _ = writeln!(
            out,
            "> **{}**: {}\n",
            if report.status.state == State::Interrupted {
                "Interrupted"
            } else {
                "Failed"
            },
            escape(message)
        );
    }
    for m in &report.metrics {
        let _ = writeln!(out, "- **{}** {}", m.verdict, escape(&m.sentence));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "| metric | A median | B median | B/A | change | {:.0}% CI | verdict | Welch p | Mann–Whitney p |", report.settings.alpha.mul_add(-100.0, 100.0));
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|---|---:|---:|");
    for m in &report.metrics {
        let [name, a, b, ratio, change, ci] = compare_cells(m);
        let _ = writeln!(
            out,
            "| {} | {a} | {b} | {ratio} | {change} | {ci} | **{}** | {} | {} |",
            escape(&name),
            m.verdict,
            m.welch_p_holm
                .or(m.welch.as_ref().map(|w| w.p))
                .map_or("n/a".into(), |p| p_value(p)
                    .trim_start_matches("= ")
                    .to_string()),
            m.mann_whitney_p_holm
                .or(m.mann_whitney.as_ref().map(|w| w.p))
                .map_or("n/a".into(), |p| p_value(p)
                    .trim_start_matches("= ")
                    .to_string()),
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "<sub>A: `{}` · B: `{}` · {} + {} runs, interleaved ({:?}), margin ±{}%, anytime-valid CI{} · {}</sub>",
        escape(&a.text),
        escape(&b.text),
        report.measured_runs(0),
        report.measured_runs(1),
        report.settings.order,
        report.settings.margin * 100.0,
        if report.metrics.len() > 1 { ", Holm-adjusted p-values" } else { "" },
        escape(report.environment.cpu_model.as_deref().unwrap_or("unknown CPU")),
    );
    out
}

/// Keep table cells intact: pipes and newlines would break the row.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
