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
/// Past [`svg::MAX_POINTS`] points it shows the newest ones and says how many
/// it left out, so a long-lived store cannot make a page of gigabytes.
pub fn trend_page(metric: &str, all: &[Point]) -> String {
    let points = &all[all.len().saturating_sub(svg::MAX_POINTS)..];
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
            "<p>{} points from {} experiments.{}</p>\n{figure}\n{table}",
            points.len(),
            {
                let mut ids: Vec<i64> = points.iter().map(|p| p.experiment_id).collect();
                ids.dedup();
                ids.len()
            },
            if all.len() > points.len() {
                format!(
                    " The newest {} of {} points are shown; --since or --name choose others.",
                    points.len(),
                    all.len()
                )
            } else {
                String::new()
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

    #[test]
    fn a_trend_past_the_drawing_cap_shows_the_newest_points_and_says_so() {
        let point = |i: usize| Point {
            experiment_id: i as i64,
            created_unix: 1_764_000_000 + i as i64,
            commit: None,
            name: "A".into(),
            unit: crate::run::metric::Unit::Seconds,
            runs: 5,
            median: 1.0,
            low: 0.9,
            high: 1.1,
        };
        let n = svg::MAX_POINTS + 500;
        let all: Vec<Point> = (1..=n).map(point).collect();
        let page = trend_page("wall", &all);
        assert!(
            page.contains(&format!(
                "The newest {} of {n} points are shown",
                svg::MAX_POINTS
            )),
            "{}",
            &page[..400.min(page.len())]
        );
        // The oldest 500 are left out of the table, the newest are in it.
        assert!(!page.contains("<td>#500</td>") && page.contains("<td>#501</td>"));
        assert!(page.contains(&format!("<td>#{n}</td>")));
        let few = trend_page("wall", &all[..3]);
        assert!(few.contains("3 points from 3 experiments.</p>"), "{few}");
    }
}
