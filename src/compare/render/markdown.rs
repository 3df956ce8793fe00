//! `--markdown FILE`: a compact report fit for a pull-request comment. It quotes
//! the verdict's interval only; the descriptive p-values are in `--json`.

use super::cells::compare_cells;
use crate::compare::{CompareReport, State};
use crate::report::escape::markdown_cell as escape;
use std::fmt::Write;

pub fn render(report: &CompareReport) -> String {
    let mut out = String::new();
    let [a, b] = [&report.commands[0], &report.commands[1]];
    let verb = if report.analyze.is_some() {
        "analyze"
    } else {
        "compare"
    };
    let _ = writeln!(out, "### ghostbench {verb}: `{}` vs `{}`\n", a.name, b.name);
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
        if let Some(hint) = &m.hint {
            let _ = writeln!(out, "  - to decide: {}", escape(hint));
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| metric | A median | B median | B/A | change | {:.0}% CI | verdict |",
        report.settings.alpha.mul_add(-100.0, 100.0)
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
    if let Some(imported) = &report.analyze {
        for note in &report.notes {
            let _ = writeln!(out, "> {}\n", escape(note));
        }
        let _ = writeln!(
            out,
            "<sub>{} + {} runs read from {}, margin ±{}%, {} CI{}</sub>",
            report.measured_runs(0),
            report.measured_runs(1),
            escape(&crate::report::units::imported(imported)),
            report.settings.margin * 100.0,
            if imported.interval == "sequential" {
                "anytime-valid"
            } else {
                "fixed-n"
            },
            if report.metrics.len() > 1 {
                ", Holm-adjusted p-values"
            } else {
                ""
            },
        );
        return out;
    }
    let _ = writeln!(
        out,
        "<sub>A: `{}` · B: `{}` · {} + {} runs, interleaved ({:?}), margin ±{}%, the CI is valid over all looks · {}</sub>",
        escape(&a.text),
        escape(&b.text),
        report.measured_runs(0),
        report.measured_runs(1),
        report.settings.order,
        crate::report::units::trimmed(report.settings.margin * 100.0),
        escape(report.environment.cpu_model.as_deref().unwrap_or("unknown CPU")),
    );
    out
}
