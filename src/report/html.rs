//! The `--html` report: one self-contained page (inline CSS and SVG, nothing
//! fetched) per run of `compare`, `layout` or `probe`. The page says what the
//! terminal says and adds the pictures: distributions, run order, intervals
//! against the margin, layout spreads and probe sweeps.

use super::format::{compare_cells, value};
use super::svg::{self, Interval, Series};
use crate::compare::{CompareReport, MetricReport};
use crate::layout::{LayoutReport, MatrixRow};
use crate::probe::misaligned::Op;
use crate::probe::tlb::Pages;
use crate::probe::{Details, ProbeReport};
use crate::stats::verdict::Verdict;
use std::fmt::Write;

/// Text made safe for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:820px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;margin:1em 0;font-size:.9em}td,th{padding:.25em .6em;border-bottom:1px solid #eee;text-align:right}\
td:first-child,th:first-child{text-align:left}code{background:#f4f4f4;padding:0 .2em}\
.verdict{font-weight:bold;padding:.1em .4em;border-radius:3px;color:#fff}\
.FASTER{background:#2a7d2a}.SLOWER{background:#b22}.SAME{background:#36c}.ARTIFACT{background:#83a}.UNKNOWN{background:#b80}\
.note{color:#555;font-size:.9em}.failed{background:#fee;border-left:4px solid #b22;padding:.5em}\
figure{margin:1em 0}figcaption{color:#555;font-size:.85em}";

/// The page around `body`, with `title` as heading.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"generator\" content=\"ghostbench {}\">\
         <title>{}</title><style>{STYLE}</style></head>\n<body>\n<h1>{}</h1>\n{body}</body></html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title),
        escape(title)
    )
}

/// A verdict word as a coloured badge.
pub fn badge(verdict: Verdict) -> String {
    format!("<span class=\"verdict {verdict}\">{verdict}</span>")
}

/// A figure: the SVG with a caption under it.
pub fn figure(svg: &str, caption: &str) -> String {
    format!(
        "<figure>{svg}<figcaption>{}</figcaption></figure>\n",
        escape(caption)
    )
}

/// An HTML table from a header and rows of cells (escaped here).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::from("<table><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// The failure or interruption box, when the experiment stopped early.
pub fn stop_box<S>(status: &crate::run::Status<S>) -> String {
    let Some(message) = &status.message else {
        return String::new();
    };
    let mut out = format!("<div class=\"failed\"><b>{}</b>", escape(message));
    if !status.last_output.is_empty() {
        let _ = write!(out, "<pre>{}</pre>", escape(&status.last_output.join("\n")));
    }
    out.push_str("<br>Results gathered before it stopped are below.</div>\n");
    out
}

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
            escape(&super::format::imported(imported))
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
        super::format::trimmed(report.settings.margin * 100.0)
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
            super::format::trimmed(margin * 100.0)
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
        .filter(|(_, r)| r.side == side && !r.warmup)
        .filter_map(|(i, r)| {
            r.values
                .iter()
                .find(|v| v.name == m.name)
                .map(|v| (i as f64, v.value - shift))
        })
        .collect()
}

/// The `layout` page: the matrix, each build's ratio at the default layout and
/// across layouts against the margin, and the spread of the per-layout estimates.
pub fn layout(report: &LayoutReport) -> String {
    let mut body = String::from("<p>");
    if let Some(imported) = &report.analyze {
        let _ = write!(
            body,
            "Runs read from {}.<br>",
            escape(&super::format::imported(imported))
        );
    }
    for b in &report.builds {
        let _ = write!(
            body,
            "{} = <code>{}</code><br>",
            escape(&b.name),
            escape(&b.template)
        );
    }
    let _ = writeln!(
        body,
        "run = <code>{}</code></p>",
        escape(&report.settings.run_template)
    );
    body.push_str(&stop_box(&report.status));
    for row in &report.matrix {
        if let Some(c) = &row.comparison {
            let _ = writeln!(body, "<p>{} {}</p>", badge(c.verdict), escape(&c.sentence));
        }
    }
    let rows: Vec<Vec<String>> = report
        .matrix
        .iter()
        .map(|row| {
            let (default, controlled, trustworthy) = super::layout::cells(row);
            vec![
                row.build.clone(),
                row.metric.clone(),
                value(row.default_value, row.unit),
                default,
                controlled,
                format!("{:.1}%", row.spread_cv * 100.0),
                trustworthy,
                row.comparison
                    .as_ref()
                    .map_or(String::new(), |c| c.verdict.to_string()),
            ]
        })
        .collect();
    body.push_str(&table(
        &[
            "build",
            "metric",
            "default layout",
            "B/A default layout",
            "B/A across layouts",
            "layout spread (CV)",
            "smallest trustworthy effect",
            "verdict",
        ],
        &rows,
    ));
    let _ = writeln!(
        body,
        "<p class=\"note\">{} layouts × {} rounds per build; intervals hold at {:.1}%; margin ±{}%.</p>",
        report.used_seeds.len(),
        report.settings.rounds,
        report.settings.confidence * 100.0,
        super::format::trimmed(report.settings.margin * 100.0)
    );
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
    body.push_str(&notes(&report.notes));
    let title = if report.analyze.is_some() {
        "ghostbench analyze"
    } else {
        "ghostbench layout"
    };
    page(title, &body)
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
                super::format::trimmed(margin * 100.0)
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

/// The `probe` page: each probe's finding, its sweep as a plot, and its notes.
pub fn probe(report: &ProbeReport) -> String {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<p class=\"note\">{} probes in {:.1} s{}.</p>",
        report.probes.len(),
        report.elapsed_s,
        if report.quick { " (--quick)" } else { "" }
    );
    for result in &report.probes {
        let kind = result.details.kind();
        let _ = writeln!(
            body,
            "<h2>{}</h2>\n<p><b>{:?}</b>: {}</p>",
            escape(kind.name()),
            result.status,
            escape(&result.finding)
        );
        if let Some((svg, caption)) = probe_plot(&result.details) {
            body.push_str(&figure(&svg, caption));
        }
        if let Details::Alloc(alloc) = &result.details {
            let rows: Vec<Vec<String>> = alloc
                .rows
                .iter()
                .map(|r| {
                    vec![
                        format!("{:?}", r.node),
                        r.node_bytes.to_string(),
                        r.next_misaligned.to_string(),
                        r.next_straddles_line.to_string(),
                        format!("{:.2}", r.total_ns_per_node),
                        format!("{:.2}", r.ratio_to_padded),
                    ]
                })
                .collect();
            body.push_str(&table(
                &[
                    "node",
                    "bytes",
                    "next misaligned",
                    "next straddles a line",
                    "ns per node",
                    "vs padded",
                ],
                &rows,
            ));
        }
        for note in &result.notes {
            let _ = writeln!(body, "<p class=\"note\">{}</p>", escape(note));
        }
    }
    page("ghostbench probe", &body)
}

/// The sweep of one probe as (svg, caption); None for probes without a sweep.
fn probe_plot(details: &Details) -> Option<(String, &'static str)> {
    let by = |points: Vec<(f64, Option<f64>)>| -> Vec<(f64, f64)> {
        points
            .into_iter()
            .filter_map(|(x, y)| y.map(|y| (x, y)))
            .collect()
    };
    match details {
        Details::SplitLock(d) => {
            let size = |bytes: u32| {
                by(d.rows
                    .iter()
                    .filter(|r| r.size == bytes)
                    .map(|r| (f64::from(r.offset), r.ns_per_op))
                    .collect())
            };
            Some((
                svg::lines(
                    &[("4-byte lock add", size(4)), ("8-byte lock add", size(8))],
                    "offset in the 64-byte line",
                    "ns per locked add",
                ),
                "Offsets where the operand crosses into the next line are split locks.",
            ))
        }
        Details::Misaligned(d) => {
            let op = |want: Op, page: bool| {
                by(d.rows
                    .iter()
                    .filter(|r| r.op == want && r.crosses_page == page)
                    .map(|r| (f64::from(r.offset), r.ns_per_op))
                    .collect())
            };
            Some((
                svg::lines(
                    &[
                        ("load", op(Op::Load, false)),
                        ("store", op(Op::Store, false)),
                        ("load across a page", op(Op::Load, true)),
                        ("store across a page", op(Op::Store, true)),
                    ],
                    "offset of the 8-byte operand in its line",
                    "ns per operation",
                ),
                "Line-crossing offsets (57–63) pay for two lines; page-crossing ones more.",
            ))
        }
        Details::CodeAlign(d) => {
            let points = d
                .rows
                .iter()
                .map(|r| (f64::from(r.offset), r.ns_per_call))
                .collect();
            Some((
                svg::lines(
                    &[("median ns per call", points)],
                    "entry offset in the 64-byte line",
                    "ns per call",
                ),
                "The same function copied to each offset and called in a tight loop.",
            ))
        }
        Details::Tlb(d) => {
            let pages = |want: Pages| -> Vec<(f64, f64)> {
                d.rows
                    .iter()
                    .filter(|r| r.pages == want)
                    .map(|r| ((r.working_set_bytes as f64).log2(), r.ns_per_access))
                    .collect()
            };
            Some((
                svg::lines(
                    &[("4 KiB pages", pages(Pages::Small)), ("huge pages", pages(Pages::Huge))],
                    "working set (log2 bytes: 20 = 1 MiB, 30 = 1 GiB)",
                    "ns per dependent access",
                ),
                "A pointer chase over growing working sets: where 4 KiB pages leave the TLB's reach, huge pages keep going.",
            ))
        }
        Details::Alloc(_) => None,
    }
}

/// The report's notes as a list.
pub fn notes(notes: &[String]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Notes</h2>\n<ul class=\"note\">\n");
    for note in notes {
        let _ = writeln!(out, "<li>{}</li>", escape(note));
    }
    out.push_str("</ul>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn tables_escape_cells() {
        let t = table(&["a"], &[vec!["<b>".to_string()]]);
        assert!(t.contains("<td>&lt;b&gt;</td>"), "{t}");
    }
}
