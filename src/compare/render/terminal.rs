//! The terminal report of `compare`: the verdict sentence with its interval (the
//! one to quote) and what would decide an UNKNOWN, then the table, then each
//! side's summary, then process start, counters, simulation, notes, warnings,
//! settings and how it ended. With `--verbose`, the descriptive statistics
//! follow each summary, labelled as not the verdict's interval. Colour only
//! when asked (the CLI asks on a TTY).

use super::cells::compare_cells;
use super::hint;
use super::prose::{self, label};
use crate::compare::{CompareReport, MetricReport, State};
use crate::report::status;
use crate::report::style::verdict as paint;
use crate::report::table::Table;
use crate::report::units::{p_value, significant, value};
use crate::run::metric::Unit;
use std::fmt::Write;

/// The report without the descriptive statistics.
pub fn render(report: &CompareReport, color: bool) -> String {
    render_detailed(report, color, false)
}

/// The report; `verbose` adds the descriptive statistics (bootstrap CI,
/// Hodges–Lehmann shift, Cliff's delta, Welch and Mann–Whitney).
pub fn render_detailed(report: &CompareReport, color: bool, verbose: bool) -> String {
    let report = &*prose::shown(report);
    let mut out = String::new();
    let verb = crate::compare::render::notes::heading_verb("compare", report.analyze.as_ref());
    let _ = writeln!(out, "ghostbench {verb}: {}", prose::commands(report));
    let _ = writeln!(out);
    out.push_str(&status::stop_cause(
        &report.status,
        report.status.state == State::Interrupted,
        true,
    ));
    for m in &report.metrics {
        let sentence = prose::sentence(m, prose::names(report), report.settings.margin);
        let _ = writeln!(out, "{:<8} {sentence}", paint(m.verdict, color));
        let _ = writeln!(out, "         {}", prose::validity(report, m));
        for line in hint::lines(&m.causes, &hint::Context::of(report, m)) {
            let _ = writeln!(out, "         {} {line}", label::TO_DECIDE);
        }
    }
    let _ = writeln!(out);
    out.push_str(&metric_table(report, color));
    for m in &report.metrics {
        let _ = writeln!(out);
        out.push_str(&metric_details(report, m));
        if verbose {
            out.push_str(&descriptive(report, m));
        }
    }
    let _ = writeln!(out);
    out.push_str(&footer(report));
    out
}

fn metric_table(report: &CompareReport, color: bool) -> String {
    let ci = prose::ci_header(report);
    let mut table = Table::new(&[
        "metric", "A median", "B median", "B/A (HL)", "change", &ci, "verdict",
    ]);
    for m in &report.metrics {
        let mut row = compare_cells(m).to_vec();
        row.push(paint(m.verdict, color));
        table.row(row);
    }
    table.render()
}

/// The metric's heading and each side's summary, one line a side.
fn metric_details(report: &CompareReport, m: &MetricReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", prose::metric_heading(m));
    for (side, summary) in [(0, &m.a), (1, &m.b)] {
        let label = prose::side_label(report, side);
        let Some(s) = summary else {
            let _ = writeln!(out, "  {label:<12} no runs");
            continue;
        };
        let [n, median, mean, cv, mad, range, outliers] = prose::summary_cells(s, m.unit);
        let _ = writeln!(
            out,
            "  {label:<12} n={n:<4} median {median}  mean {mean}  CV {cv}  MAD {mad}  range {range}  outliers {outliers}",
        );
    }
    out
}

/// `--verbose`: the statistics of one fixed-size test at 95%, for reference.
fn descriptive(report: &CompareReport, m: &MetricReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  descriptive (not the verdict's interval; nominal 95%, one fixed-size test, no look correction):"
    );
    if let Some(bs) = &m.bootstrap_ratio_of_medians {
        let _ = writeln!(
            out,
            "    ratio of medians (BCa bootstrap, 95%): {:.4} [{:.4}, {:.4}]",
            bs.estimate, bs.low, bs.high
        );
    }
    if let Some(hl) = &m.hodges_lehmann_shift {
        let shift = |x: f64| signed(x, m.unit);
        let _ = writeln!(
            out,
            "    Hodges–Lehmann shift B−A (95%): {} [{}, {}]",
            shift(hl.estimate),
            shift(hl.low),
            shift(hl.high)
        );
    }
    if m.cliffs_delta.is_finite() {
        let _ = writeln!(out, "    Cliff's delta: {:+.3}", m.cliffs_delta);
    }
    let holm = report.metrics.len() > 1;
    if let Some(w) = &m.welch {
        let adjusted = m
            .welch_p_holm
            .filter(|_| holm)
            .map(|p| format!(", Holm-adjusted p {}", p_value(p)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    Welch t = {:.3}, df = {:.2}, p {}{adjusted}",
            w.t,
            w.df,
            p_value(w.p)
        );
    }
    if let Some(mw) = &m.mann_whitney {
        let adjusted = m
            .mann_whitney_p_holm
            .filter(|_| holm)
            .map(|p| format!(", Holm-adjusted p {}", p_value(p)))
            .unwrap_or_default();
        let kind = if mw.exact {
            "exact"
        } else {
            "normal approx., tie-corrected"
        };
        let _ = writeln!(
            out,
            "    Mann–Whitney U = {}, p {} ({kind}){adjusted}",
            significant(mw.u),
            p_value(mw.p)
        );
    }
    out
}

fn signed(x: f64, unit: Unit) -> String {
    let magnitude = value(x.abs(), unit);
    if x < 0.0 {
        format!("-{magnitude}")
    } else {
        format!("+{magnitude}")
    }
}

/// Process start, counters, simulation, notes, warnings, settings and how it ended.
fn footer(report: &CompareReport) -> String {
    let mut out = String::new();
    if let Some(line) = prose::process_start(report) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(reason) = &report.counters.unavailable {
        let _ = writeln!(out, "{} {reason}", label::COUNTERS_UNAVAILABLE);
    }
    if !report.counters.rows.is_empty() {
        let mut table = Table::new(&prose::COUNTER_HEADER);
        for row in &report.counters.rows {
            table.row(prose::counter_cells(row).to_vec());
        }
        out.push_str(&table.render());
    }
    if let Some(sim) = prose::simulation(report) {
        if let Some(line) = &sim.unavailable {
            let _ = writeln!(out, "{line}");
        }
        for line in &sim.failures {
            let _ = writeln!(out, "{line}");
        }
        if sim.unavailable.is_none() {
            let mut table = Table::new(&prose::SIMULATION_HEADER);
            for row in &sim.rows {
                table.row(row.to_vec());
            }
            out.push_str(&table.render());
        }
        if let Some(line) = &sim.summary {
            let _ = writeln!(out, "{line}");
        }
    }
    for note in prose::notes(report) {
        let _ = writeln!(out, "{} {note}", label::NOTE);
    }
    for warning in report.environment.warnings() {
        let _ = writeln!(out, "{} {warning}", label::WARNING);
    }
    let _ = writeln!(out, "{}", prose::settings(report));
    let _ = writeln!(out, "{}", prose::ending(report));
    out
}
