//! The `compare` page of `--html`: verdict banners, the table, and per metric
//! the distributions, the run order and the interval against the margin.

use super::cells::compare_cells;
use crate::compare::{CompareReport, MetricReport};
use crate::report::escape::html as escape;
use crate::report::html::{badge, figure, notes, page, stop_box, table};
use crate::report::svg::{self, Interval, Series};
use std::fmt::Write;

/// The `compare` page.
pub fn compare(report: &CompareReport) -> String {
    let title = if report.analyze.is_some() {
        "ghostbench analyze"
    } else {
        "ghostbench compare"
    };
    page(title, &compare_body(report))
}

/// Several comparisons on one page (`analyze` with more than one candidate).
pub fn compares(reports: &[CompareReport]) -> String {
    let bodies: Vec<String> = reports.iter().map(compare_body).collect();
    page("ghostbench analyze", &bodies.join("<hr>\n"))
}

/// The body of the `compare` page.
fn compare_body(report: &CompareReport) -> String {
    let [a, b] = [&report.commands[0], &report.commands[1]];
    let mut body = String::new();
    if let Some(imported) = &report.analyze {
        let _ = writeln!(
            body,
            "<p>Runs read from {}.</p>",
            escape(&crate::report::units::imported(imported))
        );
    }
    let _ = writeln!(
        body,
        "<p>A = {} <code>{}</code><br>B = {} <code>{}</code></p>",
        escape(&a.name),
        escape(&a.text),
        escape(&b.name),
        escape(&b.text)
    );
    body.push_str(&stop_box(&report.status));
    for m in &report.metrics {
        let _ = writeln!(body, "<p>{} {}</p>", badge(m.verdict), escape(&m.sentence));
        if let Some(hint) = &m.hint {
            let _ = writeln!(body, "<p class=\"note\">To decide: {}</p>", escape(hint));
        }
    }
    let rows: Vec<Vec<String>> = report
        .metrics
        .iter()
        .map(|m| {
            let mut row = compare_cells(m).to_vec();
            row.push(m.verdict.to_string());
            row
        })
        .collect();
    let ci = format!("{:.0}% CI", (1.0 - report.settings.alpha) * 100.0);
    body.push_str(&table(
        &[
            "metric", "A median", "B median", "B/A", "change", &ci, "verdict",
        ],
        &rows,
    ));
    let _ = writeln!(
        body,
        "<p class=\"note\">{} + {} measured runs in {:.1} s; CIs hold at {:.0}% over all looks; margin ±{}%.</p>",
        report.measured_runs(0),
        report.measured_runs(1),
        report.elapsed_s,
        (1.0 - report.settings.alpha) * 100.0,
        crate::report::units::trimmed(report.settings.margin * 100.0)
    );
    for m in &report.metrics {
        body.push_str(&metric_section(report, m));
    }
    body.push_str(&notes(&report.notes));
    body
}

/// One metric's pictures: its ratio CI against the margin, both distributions,
/// and the values in the order the runs happened.
fn metric_section(report: &CompareReport, m: &MetricReport) -> String {
    let mut out = format!("<h2>{}</h2>\n", escape(&m.name));
    let margin = report.settings.margin;
    out.push_str(&figure(
        &svg::intervals(
            &[Interval {
                label: "B / A",
                estimate: m.ratio,
                low: m.ci_low,
                high: m.ci_high,
                series: 1,
            }],
            (1.0 - margin, 1.0 + margin),
            1.0,
            "ratio B / A",
        ),
        &format!(
            "The ratio B/A with its {:.0}% CI; the grey band is the ±{}% margin. \
             Wholly inside: SAME; wholly outside and clear of 1: FASTER or SLOWER.",
            m.ci_level * 100.0,
            crate::report::units::trimmed(margin * 100.0)
        ),
    ));
    let values = |side: usize| -> Vec<(f64, f64)> { measured(report, m, side) };
    let [on_a, on_b] = [values(0), values(1)];
    let (a_values, b_values): (Vec<f64>, Vec<f64>) = (
        on_a.iter().map(|p| p.1).collect(),
        on_b.iter().map(|p| p.1).collect(),
    );
    let corrected = if m.spawn_corrected {
        " Process start is subtracted."
    } else {
        ""
    };
    out.push_str(&figure(
        &svg::distribution(
            &[
                Series {
                    label: &report.commands[0].name,
                    values: &a_values,
                },
                Series {
                    label: &report.commands[1].name,
                    values: &b_values,
                },
            ],
            m.unit,
            &m.name,
        ),
        &format!(
            "Every measured run; the box spans the middle half, the bar is the median.{corrected}"
        ),
    ));
    out.push_str(&figure(
        &svg::run_order(
            &[
                (report.commands[0].name.as_str(), on_a),
                (report.commands[1].name.as_str(), on_b),
            ],
            m.unit,
            &m.name,
        ),
        if report.analyze.is_some() {
            "Values in the order of the file(s) they were read from: look for drift and spikes."
        } else {
            "Values in the order the runs happened (A and B interleaved): look for drift and spikes."
        },
    ));
    out
}

/// (position in the whole run sequence, value) of every measured run of `side`.
fn measured(report: &CompareReport, m: &MetricReport, side: usize) -> Vec<(f64, f64)> {
    let shift = match (m.spawn_corrected, report.spawn_overhead_s) {
        (true, Some(overhead)) => overhead,
        _ => 0.0,
    };
    report
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.build == side && !r.warmup)
        .filter_map(|(i, r)| {
            r.values
                .iter()
                .find(|v| v.name == m.name)
                .map(|v| (i as f64, v.value - shift))
        })
        .collect()
}
