//! The `compare` page of `--html`: the terminal report's sections (verdict
//! banners with their intervals and what would decide them, the table, each
//! side's summary, process start, counters, simulation, notes, warnings,
//! settings, how it ended), and per metric the interval against the margin,
//! the distributions and the run order.

use super::cells::compare_cells;
use super::hint;
use super::prose::{self, label};
use crate::compare::{CompareReport, MetricReport, State};
use crate::report::escape::html as escape;
use crate::report::html::{badge, figure, notes, page, table};
use crate::report::status;
use crate::report::svg::{self, Interval, Series};
use std::fmt::Write;

/// The `compare` page.
pub fn compare(report: &CompareReport) -> String {
    let verb = crate::compare::render::notes::title_verb("compare", report.analyze.as_ref());
    page(&format!("ghostbench {verb}"), &compare_body(report))
}

/// Several comparisons on one page (`analyze` with more than one candidate).
pub fn compares(reports: &[CompareReport]) -> String {
    let bodies: Vec<String> = reports.iter().map(compare_body).collect();
    page("ghostbench analyze", &bodies.join("<hr>\n"))
}

/// The body of the `compare` page: the terminal report's sections in its
/// order, each metric's with its pictures.
fn compare_body(report: &CompareReport) -> String {
    let report = &*prose::shown(report);
    let [a, b] = [&report.commands[0], &report.commands[1]];
    let mut body = String::new();
    if let Some(imported) = &report.analyze {
        let _ = writeln!(
            body,
            "<p>Runs read from {}.</p>",
            escape(&crate::report::units::imported(
                &imported.files,
                &imported.format.text()
            ))
        );
    }
    let command =
        |side: &str, c: &crate::run::command::CommandSpec| match prose::command_parts(side, c) {
            (Some(name), Some(text)) => format!("{} <code>{}</code>", escape(name), escape(text)),
            (None, Some(text)) => format!("<code>{}</code>", escape(text)),
            (name, None) => escape(name.unwrap_or(side)),
        };
    let _ = writeln!(
        body,
        "<p>A = {},<br>B = {}</p>",
        command("A", a),
        command("B", b)
    );
    body.push_str(&status::html(
        &report.status,
        report.status.state == State::Interrupted,
        true,
    ));
    for m in &report.metrics {
        let sentence = prose::sentence(m, prose::names(report), report.settings.margin);
        let _ = writeln!(body, "<p>{} {}<br>", badge(m.verdict), escape(&sentence));
        let _ = writeln!(
            body,
            "<span class=\"note\">{}</span>",
            escape(&prose::validity(report, m))
        );
        for line in hint::lines(&m.causes, &hint::Context::of(report, m)) {
            let _ = writeln!(
                body,
                "<br><span class=\"note\">{} {}</span>",
                label::TO_DECIDE,
                escape(&line)
            );
        }
        body.push_str("</p>\n");
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
    let ci = prose::ci_header(report);
    body.push_str(&table(
        &[
            "metric", "A median", "B median", "B/A (HL)", "change", &ci, "verdict",
        ],
        &rows,
    ));
    for m in &report.metrics {
        body.push_str(&metric_section(report, m));
    }
    body.push_str(&footer(report));
    body
}

/// Process start, counters, simulation, notes and warnings, then the
/// settings and how it ended.
fn footer(report: &CompareReport) -> String {
    let mut out = String::new();
    let items = prose::footer_items(report);
    out.push_str(&notes(&items));
    if !report.counters.rows.is_empty() {
        let rows: Vec<Vec<String>> = report
            .counters
            .rows
            .iter()
            .map(|r| prose::counter_cells(r).to_vec())
            .collect();
        out.push_str(&table(&prose::COUNTER_HEADER, &rows));
    }
    if let Some(sim) = prose::simulation(report).filter(|s| !s.rows.is_empty()) {
        let rows: Vec<Vec<String>> = sim.rows.iter().map(|r| r.to_vec()).collect();
        out.push_str(&table(&prose::SIMULATION_HEADER, &rows));
    }
    let _ = writeln!(
        out,
        "<p class=\"note\">{}<br>{}</p>",
        escape(&prose::settings(report)),
        escape(&prose::ending(report))
    );
    out
}

/// One metric: each side's summary, its ratio CI against the margin, both
/// distributions, and the values in the order the runs happened.
fn metric_section(report: &CompareReport, m: &MetricReport) -> String {
    let mut out = format!("<h2>{}</h2>\n", escape(&prose::metric_heading(m)));
    let summaries: Vec<Vec<String>> = [(0, &m.a), (1, &m.b)]
        .into_iter()
        .map(|(side, summary)| {
            let mut row = vec![prose::side_label(report, side)];
            match summary {
                Some(s) => row.extend(prose::summary_cells(s, m.unit)),
                None => row.extend(["0".to_string(), "no runs".to_string()]),
            }
            row
        })
        .collect();
    out.push_str(&table(&prose::SUMMARY_HEADER, &summaries));
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
    let drawn = drawn_note(report, [a_values.len(), b_values.len()]);
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
        &match &drawn {
            None => format!(
                "Every measured run; the box spans the middle half, the bar is the median.\
                 {corrected}"
            ),
            Some(drawn) => format!(
                "{drawn}; the box spans the middle half of every run, the bar is their \
                 median.{corrected}"
            ),
        },
    ));
    let order = if report.analyze.is_some() {
        "Values in the order of the file(s) they were read from: look for drift and spikes."
    } else {
        "Values in the order the runs happened (A and B interleaved): look for drift and spikes."
    };
    out.push_str(&figure(
        &svg::run_order(
            &[
                (report.commands[0].name.as_str(), on_a),
                (report.commands[1].name.as_str(), on_b),
            ],
            m.unit,
            &m.name,
        ),
        &match &drawn {
            None => order.to_string(),
            Some(drawn) => format!("{order} {drawn}."),
        },
    ));
    out
}

/// What the distribution and run-order plots draw when a side has more
/// measured runs than a plot draws (`svg::MAX_POINTS`), or `None` when every
/// run is drawn: "Drawn: 2000 of the 1000000 runs of A and 2000 of the
/// 1000000 runs of B, one at random from each of 2000 equal stretches of
/// the run order".
fn drawn_note(report: &CompareReport, counts: [usize; 2]) -> Option<String> {
    if counts.iter().all(|&n| svg::drawn_count(n) == n) {
        return None;
    }
    let side = |i: usize| {
        let n = counts[i];
        let name = &report.commands[i].name;
        match svg::drawn_count(n) {
            drawn if drawn == n => format!("all {n} runs of {name}"),
            drawn => format!("{drawn} of the {n} runs of {name}"),
        }
    };
    Some(format!(
        "Drawn: {} and {}, one at random from each of {} equal stretches of the run order \
         (seeded: the same on every render)",
        side(0),
        side(1),
        svg::MAX_POINTS
    ))
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
