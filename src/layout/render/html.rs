//! The `layout` page of `--html`: the same sections under the same labels as
//! the terminal report (templates, layout sources, failed builds, why the
//! runs stopped, the verdicts with what would decide them, the matrix and its
//! legend, `--explain`, the notes, the time), and per metric the intervals
//! against the margin and the spread of each build over its layouts.

use super::{label, prose, COLUMNS};
use crate::layout::{LayoutReport, MatrixRow, State};
use crate::report::escape::html as escape;
use crate::report::html::{badge, figure, notes, page, table};
use crate::report::status;
use crate::report::svg::{self, Interval, Series};
use std::fmt::Write;

/// The `layout` page: the report's sections, then per metric each build's
/// ratio at the default layout and across layouts against the margin, and
/// the spread of the per-layout estimates.
pub fn layout(report: &LayoutReport) -> String {
    let report = &*prose::shown(report);
    let mut body = format!("<p>{}", escape(&prose::headline(report)));
    if let Some(files) = &report.analyze {
        let _ = write!(
            body,
            "<br>Runs read from {}.",
            escape(&crate::report::units::imported(
                &files.files,
                &files.format.text()
            ))
        );
    }
    body.push_str("</p>\n<p>");
    for b in report.builds.iter().filter(|b| !b.template.is_empty()) {
        let _ = write!(
            body,
            "{} = <code>{}</code><br>",
            escape(&b.name),
            escape(&b.template)
        );
    }
    if !report.settings.run_template.is_empty() {
        let _ = write!(
            body,
            "run = <code>{}</code>",
            escape(&report.settings.run_template)
        );
    }
    body.push_str("</p>\n");
    if !report.sources.is_empty() {
        body.push_str("<ul class=\"note\">\n");
        for source in &report.sources {
            let _ = writeln!(
                body,
                "<li>{} <code>{}</code></li>",
                label::SOURCE,
                escape(&prose::source(source))
            );
        }
        body.push_str("</ul>\n");
    }
    for f in report.failed_builds() {
        let mut output = format!("$ {}", f.command);
        for line in prose::build_output(f) {
            let _ = write!(output, "\n| {line}");
        }
        let _ = writeln!(
            body,
            "<div class=\"failed\"><b>{}</b><pre>{}</pre></div>",
            escape(&prose::build_failed(report, f)),
            escape(&output)
        );
    }
    body.push_str(&status::html(
        &report.status,
        report.status.state == State::Interrupted,
        report.status.state != State::BuildFailed,
    ));
    for row in &report.matrix {
        if let Some(c) = &row.comparison {
            let _ = writeln!(
                body,
                "<p>{} {}: {}</p>",
                badge(c.verdict),
                escape(&prose::subject(row)),
                escape(&prose::comparison_sentence(report, row, c))
            );
            if let Some(hint) = prose::comparison_hint(report, c) {
                let _ = writeln!(
                    body,
                    "<p class=\"note\">{}: {}</p>",
                    label::TO_DECIDE,
                    escape(&hint)
                );
            }
        }
    }
    let rows: Vec<Vec<String>> = report
        .matrix
        .iter()
        .map(|row| prose::cells(row).to_vec())
        .collect();
    if !rows.is_empty() {
        body.push_str(&table(&COLUMNS, &rows));
        let _ = writeln!(
            body,
            "<p class=\"note\">{}</p>",
            escape(&prose::legend(report))
        );
    }
    // Each metric once, in first-seen order, whatever order the matrix rows are in.
    let mut metrics: Vec<&str> = Vec::new();
    for row in &report.matrix {
        if !metrics.contains(&row.metric.as_str()) {
            metrics.push(&row.metric);
        }
    }
    for metric in metrics {
        let rows: Vec<&MatrixRow> = report
            .matrix
            .iter()
            .filter(|r| r.metric == metric)
            .collect();
        body.push_str(&layout_metric(report, metric, &rows));
    }
    if let Some(explain) = &report.explain {
        body.push_str(&super::explain::html_explain(
            explain,
            &report.builds[0].name,
        ));
    }
    body.push_str(&notes(&prose::notes(report)));
    if let Some(time) = prose::time(report) {
        let _ = writeln!(body, "<p class=\"note\">{}</p>", escape(&time));
    }
    let verb = crate::compare::render::notes::title_verb("layout", report.analyze.as_ref());
    page(&format!("ghostbench {verb}"), &body)
}

/// The build's position, so it has the same colour in every plot.
fn build_index(report: &LayoutReport, build: &str) -> usize {
    report
        .builds
        .iter()
        .position(|b| b.name == build)
        .unwrap_or(0)
}

fn layout_metric(report: &LayoutReport, metric: &str, rows: &[&MatrixRow]) -> String {
    let mut out = format!("<h2>{}</h2>\n", escape(metric));
    let labels: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                format!("{} default", r.build),
                format!("{} layouts", r.build),
            )
        })
        .collect();
    let mut intervals = Vec::new();
    for (row, (default_label, controlled_label)) in rows.iter().zip(&labels) {
        let Some(c) = &row.comparison else { continue };
        if let Some(d) = c.default_ratio {
            intervals.push(Interval {
                label: default_label,
                estimate: d.estimate,
                low: d.low,
                high: d.high,
                series: build_index(report, &row.build),
            });
        }
        if let Some(r) = c.controlled {
            intervals.push(Interval {
                label: controlled_label,
                estimate: r.estimate,
                low: r.low,
                high: r.high,
                series: build_index(report, &row.build),
            });
        }
    }
    if !intervals.is_empty() {
        let margin = report.settings.margin;
        out.push_str(&figure(
            &svg::intervals(
                &intervals,
                (1.0 - margin, 1.0 + margin),
                1.0,
                "ratio to the baseline",
            ),
            &format!(
                "Each build against {}: at the default layout only (what a plain A/B measures) \
                 and across all layouts. The grey band is the ±{}% margin. A default-layout \
                 difference that shrinks into the band across layouts is an ARTIFACT.",
                report.builds[0].name,
                crate::report::units::trimmed(margin * 100.0)
            ),
        ));
    }
    let estimates: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| r.variants.iter().map(|v| v.estimate).collect())
        .collect();
    let series: Vec<Series> = rows
        .iter()
        .zip(&estimates)
        .map(|(r, values)| Series {
            label: &r.build,
            values,
        })
        .collect();
    let unit = rows
        .first()
        .map_or(crate::run::metric::Unit::None, |r| r.unit);
    out.push_str(&figure(
        &svg::distribution(&series, unit, metric),
        "Layout spread: each dot is one layout's estimate for the build; the box spans the \
         middle half, the bar is the median.",
    ));
    let largest = estimates
        .iter()
        .flatten()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let scale = svg::Scale::for_values(unit, largest);
    let paired: Vec<(&str, Vec<(f64, f64)>)> = rows
        .iter()
        .map(|r| {
            let points = r
                .variants
                .iter()
                .enumerate()
                .map(|(i, v)| (i as f64, scale.apply(v.estimate)))
                .collect();
            (r.build.as_str(), points)
        })
        .collect();
    let y_label = if scale.suffix().is_empty() {
        metric.to_string()
    } else {
        format!("{metric} ({})", scale.suffix())
    };
    out.push_str(&figure(
        &svg::lines(&paired, "layout (0 = the default layout)", &y_label),
        "The same layouts for every build: lines that move together are layout effects shared \
         by the builds; the gap between them is the builds' own difference.",
    ));
    out
}
