//! A `noise` report as one HTML page: per metric the finding, a chart of
//! the factors' shares with their intervals, the table and the runs
//! sentence; the factors not tested and the notes.

use super::{factor_name, finding, notes, rows, runs_sentence, summary, title, untested, COLUMNS};
use crate::noise::{NoiseReport, State};
use crate::report::{escape, html, status, svg};
use std::fmt::Write;

pub fn page(report: &NoiseReport) -> String {
    let mut body = format!("<p>{}</p>\n", escape::html(&summary(report)));
    let interrupted = report.status.state == State::Interrupted;
    body.push_str(&status::html(&report.status, interrupted, true));
    for metric in &report.metrics {
        let _ = writeln!(body, "<h2>{}</h2>", escape::html(&metric.name));
        let _ = writeln!(body, "<p>{}</p>", escape::html(&finding(metric)));
        let Ok(a) = &metric.result else {
            continue;
        };
        let labels: Vec<String> = a
            .factors
            .iter()
            .map(|f| factor_name(f.factor).to_string())
            .chain(["unexplained".to_string()])
            .collect();
        let estimates = a
            .factors
            .iter()
            .map(|f| f.share)
            .chain([a.decomposition.unexplained]);
        let bars: Vec<svg::Interval> = labels
            .iter()
            .zip(estimates)
            .enumerate()
            .map(|(i, (label, e))| svg::Interval {
                label,
                estimate: e.value * 100.0,
                low: e.low * 100.0,
                high: e.high * 100.0,
                series: i,
            })
            .collect();
        let chart = svg::intervals(
            &bars,
            (0.0, 0.0),
            0.0,
            "share of the run-to-run variance (%)",
        );
        body.push_str(&html::figure(
            &chart,
            "Each factor's share (dot) with its 95% bootstrap interval; the shares and the unexplained rest sum to 100%.",
        ));
        body.push_str(&html::table(&COLUMNS, &rows(report, a)));
        let _ = writeln!(body, "<p>{}</p>", escape::html(&runs_sentence(report, a)));
    }
    let lines: Vec<String> = untested(report).into_iter().chain(notes(report)).collect();
    body.push_str(&html::notes(&lines));
    html::page(&title(report), &body)
}
