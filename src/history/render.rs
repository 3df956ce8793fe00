//! `history` in words and pictures: the table of stored experiments, and the
//! trend page (one metric's median per experiment and commit, with its
//! interval, drawn with the reports' SVG code).

use super::{Point, CONFIDENCE};
use crate::report::escape::{html as escape, visible};
use crate::report::svg::{self, Interval, Scale};
use crate::report::table::Table;
use crate::report::units::{ratio, utc, value};
use crate::store::Summary;

/// A commit as the table shows it: 10 hex digits, `+` when the tree was dirty.
pub fn commit(commit: Option<&str>, dirty: bool) -> String {
    match commit {
        Some(c) => format!("{}{}", &c[..c.len().min(10)], if dirty { "+" } else { "" }),
        None => "-".into(),
    }
}

/// "wall: B SLOWER ×1.31", one per verdict.
fn verdicts(summary: &Summary) -> String {
    if summary.verdicts.is_empty() {
        return match summary.verb.as_str() {
            "baseline" => "(baseline)".into(),
            _ => "-".into(),
        };
    }
    let each: Vec<String> = summary
        .verdicts
        .iter()
        .map(|v| {
            let r = v
                .ratio
                .map(|r| format!(" {}", ratio(r)))
                .unwrap_or_default();
            format!("{}: {} {}{r}", v.metric, v.name, v.verdict)
        })
        .collect();
    each.join("; ")
}

/// The table of experiments, newest first. Stored names and verdicts are
/// shown on one line each (`escape::visible`): a line break in a name cannot
/// forge a row.
pub fn table(summaries: &[Summary]) -> String {
    if summaries.is_empty() {
        return "no stored results match\n".into();
    }
    let mut table = Table::new(&[
        "id", "time", "commit", "verb", "status", "names", "verdicts",
    ]);
    for s in summaries {
        table.row(vec![
            s.id.to_string(),
            utc(s.created_unix),
            commit(s.git_commit.as_deref(), s.git_dirty),
            visible(&s.verb).into_owned(),
            visible(&s.status.as_deref().unwrap_or("-").replace('_', " ")).into_owned(),
            visible(&s.names.join(", ")).into_owned(),
            visible(&verdicts(s)).into_owned(),
        ]);
    }
    table.render()
}

/// The label of a point on the trend's axis: "#12 3f2a9c01d2 A".
fn label(p: &Point) -> String {
    format!(
        "#{} {} {}",
        p.experiment_id,
        commit(p.commit.as_deref(), false),
        p.name
    )
}

/// The trend page: one figure of `metric` per experiment (a point per
/// command, oldest at the bottom of the chart, first in the table) and the
/// same numbers as a table.
pub fn trend_page(metric: &str, points: &[Point]) -> String {
    let unit = points
        .first()
        .map_or(crate::run::metric::Unit::None, |p| p.unit);
    let largest = points.iter().map(|p| p.high).fold(0.0, f64::max);
    let scale = Scale::for_values(unit, largest);
    let labels: Vec<String> = points.iter().map(label).collect();
    let mut names: Vec<&str> = Vec::new();
    for p in points {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    let rows: Vec<Interval> = points
        .iter()
        .zip(&labels)
        .map(|(p, l)| Interval {
            label: l,
            estimate: scale.apply(p.median),
            low: scale.apply(p.low),
            high: scale.apply(p.high),
            series: names.iter().position(|n| *n == p.name).unwrap_or(0),
        })
        .collect();
    let first = rows.first().map_or(0.0, |r| r.estimate);
    let axis = if scale.suffix().is_empty() {
        metric.to_string()
    } else {
        format!("{metric} ({})", scale.suffix())
    };
    let figure = if rows.is_empty() {
        format!("<p>no stored runs of {}</p>", escape(metric))
    } else {
        crate::report::html::figure(
            &svg::intervals(&rows, (first, first), first, &axis),
            &format!(
                "median of each experiment's runs with its {}% interval (distribution-free; min–max under 6 runs); the line is the first point",
                (CONFIDENCE * 100.0).round()
            ),
        )
    };
    let table = crate::report::html::table(
        &[
            "experiment",
            "time",
            "commit",
            "name",
            "runs",
            "median",
            "interval",
        ],
        &points
            .iter()
            .map(|p| {
                vec![
                    format!("#{}", p.experiment_id),
                    utc(p.created_unix),
                    commit(p.commit.as_deref(), false),
                    p.name.clone(),
                    p.runs.to_string(),
                    value(p.median, p.unit),
                    format!("{} – {}", value(p.low, p.unit), value(p.high, p.unit)),
                ]
            })
            .collect::<Vec<_>>(),
    );
    crate::report::html::page(
        &format!("ghostbench history: {metric}"),
        &format!(
            "<p>{} points from {} experiments.</p>\n{figure}\n{table}",
            points.len(),
            {
                let mut ids: Vec<i64> = points.iter().map(|p| p.experiment_id).collect();
                ids.dedup();
                ids.len()
            }
        ),
    )
}

/// A baseline document (one command measured alone) as text: its command
/// and each metric's runs and median.
pub fn baseline(doc: &crate::doc::Baseline) -> String {
    let mut metrics: Vec<(String, crate::run::metric::Unit, Vec<f64>)> = Vec::new();
    for run in doc.runs.iter().filter(|r| !r.warmup) {
        for v in &run.values {
            match metrics.iter_mut().find(|m| m.0 == v.name) {
                Some(m) => m.2.push(v.value),
                None => metrics.push((v.name.clone(), v.unit, vec![v.value])),
            }
        }
    }
    let mut table = Table::new(&["metric", "runs", "median"]);
    for (name, unit, values) in &metrics {
        table.row(vec![
            name.clone(),
            values.len().to_string(),
            value(crate::stats::descriptive::median(values), *unit),
        ]);
    }
    let raw = if metrics.iter().any(|m| m.0 == "wall") {
        ", raw wall times"
    } else {
        ""
    };
    let command = doc.commands.first();
    format!(
        "baseline measurement of {} ({}){raw}\n\n{}",
        command.map_or("?", |c| c.name.as_str()),
        command.map_or("?", |c| c.text.as_str()),
        table.render()
    )
}

/// Why a result stored without its runs (`runs_left_out`) is not re-rendered.
pub fn runs_left_out(runs: u64) -> String {
    format!(
        "stored without its {runs} runs (more than the store keeps of one result): --json writes \
         the stored document, with its verdicts and summaries; analyze the original files again for \
         the whole report"
    )
}

/// A stored document's status in one line, for a result that cannot be
/// re-rendered: "failed: B: command failed: exit code 1".
pub fn status(status: &crate::run::Status<crate::doc::State>) -> String {
    match &status.message {
        Some(message) => format!("{}: {message}", status.state),
        None => format!("{}, with nothing to re-analyze", status.state),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_each_experiments_status() {
        let summary = |id, status: Option<&str>| Summary {
            id,
            verb: "compare".into(),
            created_unix: 1_764_000_000,
            git_commit: None,
            git_dirty: false,
            status: status.map(String::from),
            names: vec!["A".into(), "B".into()],
            verdicts: vec![],
        };
        let text = table(&[summary(2, Some("failed")), summary(1, None)]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains(" status "), "{text}");
        let cells = |line: &str| {
            line.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        // id, date, time, UTC, commit, verb, status, names…
        assert_eq!(cells(lines[1])[6], "failed", "{text}");
        assert_eq!(cells(lines[2])[6], "-", "{text}");
    }
}
