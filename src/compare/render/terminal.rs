//! The terminal report of `compare`: the verdict sentence with its interval (the
//! one to quote) and what would decide an UNKNOWN, then the table, then each
//! side's summary. With `--verbose`, the descriptive statistics follow, labelled
//! as not the verdict's interval. Colour only when asked (the CLI asks on a TTY).

use super::cells::compare_cells;
use super::hint;
use crate::compare::{CompareReport, Limit, MetricReport, State};
use crate::report::table::Table;
use crate::report::units::{p_value, significant, trimmed, value};
use crate::run::metric::Unit;
use crate::run::Status;

pub use crate::report::style::verdict as paint;
use std::fmt::Write;

/// Why an experiment stopped early: "FAILED: cause" or "INTERRUPTED: …", the
/// failing command's last output lines, and whether results follow. Empty when
/// the status carries no message.
pub fn stop_cause<S>(status: &Status<S>, interrupted: bool, results_follow: bool) -> String {
    let mut out = String::new();
    if let Some(message) = &status.message {
        let label = if interrupted { "INTERRUPTED" } else { "FAILED" };
        let _ = writeln!(out, "{label}: {message}");
        for line in &status.last_output {
            let _ = writeln!(out, "  | {line}");
        }
        if results_follow {
            let _ = writeln!(out, "(results so far are below)");
        }
        let _ = writeln!(out);
    }
    out
}

/// The report without the descriptive statistics.
pub fn render(report: &CompareReport, color: bool) -> String {
    render_detailed(report, color, false)
}

/// The report; `verbose` adds the descriptive statistics (bootstrap CI,
/// Hodges–Lehmann shift, Cliff's delta, Welch and Mann–Whitney).
pub fn render_detailed(report: &CompareReport, color: bool, verbose: bool) -> String {
    let mut out = String::new();
    let [a, b] = [&report.commands[0], &report.commands[1]];
    let verb = match &report.analyze {
        Some(imported) => format!("analyze {}", crate::report::units::imported(imported)),
        None => "compare".to_string(),
    };
    let _ = writeln!(
        out,
        "ghostbench {verb}: A = {}, B = {}",
        labelled("A", a),
        labelled("B", b)
    );
    let _ = writeln!(out);
    out.push_str(&stop_cause(
        &report.status,
        report.status.state == State::Interrupted,
        true,
    ));
    let n = [report.measured_runs(0), report.measured_runs(1)];
    for m in &report.metrics {
        let _ = writeln!(out, "{:<8} {}", paint(m.verdict, color), m.sentence);
        let validity = if m.looks == 0 {
            "at the data's size (no sequential looks)".to_string()
        } else {
            format!("valid over all looks ({} taken)", m.looks)
        };
        let _ = writeln!(
            out,
            "         {:.0}% CI {validity}; {} + {} runs; margin ±{}%",
            m.ci_level * 100.0,
            n[0],
            n[1],
            trimmed(report.settings.margin * 100.0)
        );
        let context = hint::Context {
            names: [a.name.as_str(), b.name.as_str()],
            metric: &m.name,
            margin: report.settings.margin,
            pinned: report.settings.pin.is_some(),
        };
        for line in hint::lines(&m.causes, &context) {
            let _ = writeln!(out, "         to decide: {line}");
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

/// "`cmd`", or "name `cmd`" when the user named it (just the name when
/// there is no command text, as for a CSV).
fn labelled(side: &str, command: &crate::run::command::CommandSpec) -> String {
    if command.text.is_empty() || command.text == command.name {
        command.name.clone()
    } else if command.name == side {
        format!("`{}`", command.text)
    } else {
        format!("{} `{}`", command.name, command.text)
    }
}

fn metric_table(report: &CompareReport, color: bool) -> String {
    let ci = format!("{:.0}% CI", (1.0 - report.settings.alpha) * 100.0);
    let mut table = Table::new(&[
        "metric", "A median", "B median", "B/A", "change", &ci, "verdict",
    ]);
    for m in &report.metrics {
        let mut row = compare_cells(m).to_vec();
        row.push(paint(m.verdict, color));
        table.row(row);
    }
    table.render()
}

fn metric_details(report: &CompareReport, m: &MetricReport) -> String {
    let mut out = String::new();
    let corrected = if m.spawn_corrected {
        " (process start subtracted)"
    } else {
        ""
    };
    let _ = writeln!(out, "{}{corrected}", m.name);
    for (label, summary, cmd) in [
        ("A", &m.a, &report.commands[0]),
        ("B", &m.b, &report.commands[1]),
    ] {
        let label = if cmd.name == label {
            label.to_string()
        } else {
            format!("{label} {}", cmd.name)
        };
        let Some(s) = summary else {
            let _ = writeln!(out, "  {label:<12} no runs");
            continue;
        };
        let u = m.unit;
        let _ = writeln!(
            out,
            "  {label:<12} n={:<4} median {}  mean {} ± {}  CV {:.2}%  MAD {}  range {} … {}  outliers {}+{} ({} severe)",
            s.n,
            value(s.median, u),
            value(s.mean, u),
            value(s.stddev, u),
            s.cv * 100.0,
            value(s.mad, u),
            value(s.min, u),
            value(s.max, u),
            s.outliers_low,
            s.outliers_high,
            s.outliers_severe
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

fn footer(report: &CompareReport) -> String {
    let mut out = String::new();
    if let Some(o) = report.spawn_overhead_s {
        let applied = if report.spawn_correction_applied {
            "subtracted from wall; --no-spawn-correction keeps raw wall"
        } else {
            "not subtracted"
        };
        let _ = writeln!(
            out,
            "process start: {} ({applied})",
            value(o, Unit::Seconds)
        );
    }
    if let Some(reason) = &report.counters.unavailable {
        let _ = writeln!(out, "hardware counters unavailable: {reason}");
    }
    if !report.counters.rows.is_empty() {
        let mut table = Table::new(&["counter", "A median", "B median", "B/A"]);
        for row in &report.counters.rows {
            table.row(vec![
                row.name.clone(),
                significant(row.median_a),
                significant(row.median_b),
                format!("{:.4}", row.ratio),
            ]);
        }
        out.push_str(&table.render());
    }
    if let Some(sim) = &report.simulation {
        out.push_str(&simulation(report, sim));
    }
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for warning in report.environment.warnings() {
        let _ = writeln!(out, "warning: {warning}");
    }
    let state = match (&report.status.state, report.stopped_by) {
        (State::Decided, _) => "decided".to_string(),
        (State::BudgetExhausted, Some(Limit::MaxTime)) => format!(
            "stopped by --max-time {}",
            value(report.settings.max_time.as_secs_f64(), Unit::Seconds)
        ),
        (State::BudgetExhausted, Some(Limit::MaxRuns)) => {
            format!("stopped by --max-runs {}", report.settings.max_runs)
        }
        (State::BudgetExhausted, None) => "budget exhausted".to_string(),
        (State::Failed, _) => "failed".to_string(),
        (State::Interrupted, _) => "interrupted".to_string(),
        (State::Imported, _) => {
            let _ = writeln!(
                out,
                "analyzed {} + {} runs read from {}",
                report.measured_runs(0),
                report.measured_runs(1),
                report
                    .analyze
                    .as_ref()
                    .map_or(String::new(), |i| i.files.join(", "))
            );
            return out;
        }
    };
    let _ = writeln!(
        out,
        "{state} after {} + {} runs in {:.1} s",
        report.measured_runs(0),
        report.measured_runs(1),
        report.elapsed_s
    );
    out
}

fn simulation(report: &CompareReport, sim: &crate::compare::SimulationReport) -> String {
    let mut out = String::new();
    if let Some(reason) = &sim.unavailable {
        let _ = writeln!(out, "simulated counters unavailable: {reason}");
        return out;
    }
    let mut table = Table::new(&[
        "cachegrind",
        "Ir",
        "I1 misses",
        "D1 misses",
        "LL misses",
        "est. cycles",
    ]);
    for (i, cmd) in report.commands.iter().enumerate() {
        match (
            sim.results.get(i).cloned().flatten(),
            sim.errors.get(i).cloned().flatten(),
        ) {
            (Some(s), _) => table.row(vec![
                cmd.name.clone(),
                s.ir.to_string(),
                s.i1_misses.to_string(),
                (s.d1r_misses + s.d1w_misses).to_string(),
                (s.ill_misses + s.dlr_misses + s.dlw_misses).to_string(),
                s.estimated_cycles.to_string(),
            ]),
            (None, error) => {
                let _ = writeln!(
                    out,
                    "simulation of {} failed: {}",
                    cmd.name,
                    error.unwrap_or_default()
                );
            }
        }
    }
    out.push_str(&table.render());
    if let (Some(Some(a)), Some(Some(b))) = (sim.results.first(), sim.results.get(1)) {
        let verdict = if a.ir == b.ir {
            "identical instruction counts"
        } else {
            "instruction counts differ"
        };
        let _ = writeln!(
            out,
            "simulation: {verdict} (Ir B/A = {:.4})",
            b.ir as f64 / a.ir.max(1) as f64
        );
    }
    out
}
