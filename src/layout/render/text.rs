//! The reports of `layout`: the builds × metrics matrix for the terminal and
//! for Markdown (`--explain`'s section: report/explain.rs). They read
//! `LayoutReport` and compute nothing new.

use super::explain::{markdown_explain, render_explain};
use crate::compare::render::terminal::paint;
use crate::layout::{LayoutReport, MatrixRow, State};
use crate::report::escape::markdown_cell as escape;
use crate::report::table::Table;
use crate::report::units::{ratio, trimmed, value};
use std::fmt::Write;

fn percent(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", x * 100.0)
    } else {
        "n/a".into()
    }
}

fn interval(estimate: f64, low: f64, high: f64) -> String {
    format!("{} [{}, {}]", ratio(estimate), ratio(low), ratio(high))
}

pub(super) fn cells(row: &MatrixRow) -> (String, String, String) {
    match &row.comparison {
        None => ("baseline".into(), "baseline".into(), String::new()),
        Some(c) => (
            c.default_ratio
                .map_or("n/a".into(), |d| interval(d.estimate, d.low, d.high)),
            c.controlled
                .map_or("n/a".into(), |r| interval(r.estimate, r.low, r.high)),
            if c.smallest_trustworthy_effect.is_finite() {
                format!("±{}", percent(c.smallest_trustworthy_effect))
            } else {
                "n/a".into()
            },
        ),
    }
}

pub fn render(report: &LayoutReport, color: bool) -> String {
    let mut out = String::new();
    let s = &report.settings;
    let verb = match &report.analyze {
        Some(imported) => format!("analyze {}", crate::report::units::imported(imported)),
        None => "layout".to_string(),
    };
    let _ = writeln!(
        out,
        "ghostbench {verb}: {} builds × {} layouts × {} rounds; baseline {}",
        report.builds.len(),
        report.used_seeds.len(),
        s.rounds,
        report.builds[0].name
    );
    for b in report.builds.iter().filter(|b| !b.template.is_empty()) {
        let _ = writeln!(out, "  {} = `{}`", b.name, b.template);
    }
    if !s.run_template.is_empty() {
        let _ = writeln!(out, "  run = `{}`", s.run_template);
    }
    for source in &report.sources {
        let _ = writeln!(
            out,
            "  source {:<8} {:<4} {}",
            source.source.name(),
            if source.active { "on" } else { "off" },
            source.detail
        );
    }
    let _ = writeln!(out);
    for f in report.failed_builds() {
        let _ = writeln!(
            out,
            "build failed: {} seed {}: {}\n  $ {}",
            report.builds[f.build].name,
            f.seed,
            f.error.as_deref().unwrap_or("failed"),
            f.command
        );
        for line in f.output_tail.iter().rev().take(5).rev() {
            let _ = writeln!(out, "  | {line}");
        }
    }
    out.push_str(&crate::compare::render::terminal::stop_cause(
        &report.status,
        report.status.state == State::Interrupted,
        report.status.state != State::BuildFailed,
    ));
    if report.matrix.is_empty() {
        return out;
    }
    let mut table = Table::new(&[
        "build",
        "metric",
        "default",
        "B/A default layout",
        "B/A across layouts",
        "spread",
        "layout noise",
        "verdict",
    ]);
    for row in &report.matrix {
        let (default_ratio, controlled, trust) = cells(row);
        table.row(vec![
            row.build.clone(),
            row.metric.clone(),
            value(row.default_value, row.unit),
            default_ratio,
            controlled,
            percent(row.spread_cv),
            trust,
            row.comparison
                .as_ref()
                .map_or(String::new(), |c| paint(c.verdict, color)),
        ]);
    }
    out.push_str(&table.render());
    let _ = writeln!(out);
    for row in &report.matrix {
        if let Some(c) = &row.comparison {
            let _ = writeln!(
                out,
                "{:<8} {} {}: {}",
                paint(c.verdict, color),
                row.build,
                row.metric,
                c.sentence
            );
            if let Some(hint) = &c.hint {
                let _ = writeln!(out, "         to decide: {hint}");
            }
        }
    }
    if let Some(explain) = &report.explain {
        let _ = writeln!(out);
        out.push_str(&render_explain(explain, &report.builds[0].name));
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:.1}% intervals; margin ±{}%; per-variant estimate: {:?}; spread = CV across layouts; layout noise = how far layout alone moves a single-layout ratio (95%)",
        s.confidence * 100.0,
        trimmed(s.margin * 100.0),
        s.estimator
    );
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    if report.analyze.is_some() {
        return out;
    }
    let t = &report.timing;
    let explain = if report.explain.is_some() {
        format!(", explain {:.1} s", t.explain_s)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "time: builds {:.1} s, runs {:.1} s{explain}, total {:.1} s",
        t.build_s, t.run_s, t.total_s
    );
    out
}

/// A compact Markdown matrix for a pull-request comment.
pub fn markdown(report: &LayoutReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### ghostbench {}: {} builds × {} layouts, baseline `{}`\n",
        if report.analyze.is_some() {
            "analyze"
        } else {
            "layout"
        },
        report.builds.len(),
        report.used_seeds.len(),
        report.builds[0].name
    );
    if let Some(message) = &report.status.message {
        let _ = writeln!(
            out,
            "> **{:?}**: {}\n",
            report.status.state,
            escape(message)
        );
    }
    let _ = writeln!(
        out,
        "| build | metric | default | B/A default layout | B/A across layouts | spread | verdict |"
    );
    let _ = writeln!(out, "|---|---|---:|---|---|---:|---|");
    for row in &report.matrix {
        let (default_ratio, controlled, _) = cells(row);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            escape(&row.build),
            escape(&row.metric),
            value(row.default_value, row.unit),
            default_ratio,
            controlled,
            percent(row.spread_cv),
            row.comparison
                .as_ref()
                .map_or(String::new(), |c| format!("**{}**", c.verdict))
        );
    }
    let _ = writeln!(out);
    for row in &report.matrix {
        if let Some(c) = &row.comparison {
            let _ = writeln!(
                out,
                "- **{}** {} {}: {}",
                c.verdict,
                escape(&row.build),
                escape(&row.metric),
                escape(&c.sentence)
            );
        }
    }
    if let Some(explain) = &report.explain {
        let _ = writeln!(out);
        out.push_str(&markdown_explain(explain, &report.builds[0].name));
    }
    if let Some(imported) = &report.analyze {
        let _ = writeln!(out);
        for note in &report.notes {
            let _ = writeln!(out, "> {}\n", escape(note));
        }
        let _ = writeln!(
            out,
            "<sub>runs read from {}; {:.1}% intervals, margin ±{}%</sub>",
            escape(&crate::report::units::imported(imported)),
            report.settings.confidence * 100.0,
            trimmed(report.settings.margin * 100.0)
        );
    }
    out
}
