//! One command measured alone (`compare --save-baseline NAME CMD`): what was
//! stored, in the terminal, Markdown and HTML.

use crate::compare::single::Single;
use crate::report::escape::{html as escape, markdown as md};
use crate::report::table::Table;
use crate::report::units::value;
use crate::run::metric::Unit;
use crate::stats::descriptive::median;

/// Per metric: name, unit, measured values.
fn metrics(single: &Single) -> Vec<(String, Unit, Vec<f64>)> {
    let mut out: Vec<(String, Unit, Vec<f64>)> = Vec::new();
    for run in single.measured() {
        for v in &run.values {
            match out.iter_mut().find(|m| m.0 == v.name) {
                Some(m) => m.2.push(v.value),
                None => out.push((v.name.clone(), v.unit, vec![v.value])),
            }
        }
    }
    out
}

fn rows(single: &Single) -> Vec<Vec<String>> {
    metrics(single)
        .into_iter()
        .map(|(name, unit, values)| {
            let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            vec![
                name,
                values.len().to_string(),
                value(median(&values), unit),
                value(lo, unit),
                value(hi, unit),
            ]
        })
        .collect()
}

const HEADER: [&str; 5] = ["metric", "runs", "median", "min", "max"];

fn headline(single: &Single, name: &str) -> String {
    let status = match &single.status.message {
        Some(message) => format!(" (stopped: {message})"),
        None => String::new(),
    };
    // Wall time is stored raw (process start not subtracted); other metrics are
    // what the command printed or the kernel counted.
    let raw = if metrics(single).iter().any(|m| m.0 == "wall") {
        ", raw wall times"
    } else {
        ""
    };
    format!(
        "baseline {name}: {} measured alone{raw}{status}",
        single.commands[0].text
    )
}

/// The terminal report.
pub fn terminal(single: &Single, name: &str) -> String {
    let mut table = Table::new(&HEADER);
    for row in rows(single) {
        table.row(row);
    }
    format!("{}\n\n{}\n", headline(single, name), table.render())
}

/// `--markdown`.
pub fn markdown(single: &Single, name: &str) -> String {
    let mut out = format!("### {}\n\n", md(&headline(single, name)));
    out += &format!(
        "| {} |\n|{}\n",
        HEADER.join(" | "),
        "---|".repeat(HEADER.len())
    );
    for row in rows(single) {
        let cells: Vec<String> = row.iter().map(|c| md(c)).collect();
        out += &format!("| {} |\n", cells.join(" | "));
    }
    out
}

/// `--html`.
pub fn html(single: &Single, name: &str) -> String {
    let body = crate::report::html::table(&HEADER, &rows(single));
    crate::report::html::page(
        &format!("ghostbench baseline {name}"),
        &format!("<p>{}</p>\n{body}", escape(&headline(single, name))),
    )
}
