//! `--json`: the `compare` report as its versioned JSON document
//! (docs/json-schema.md). The report holds facts; this document adds the
//! words the schema carries as strings (each metric's `sentence` and `hint`,
//! the `notes`), written by the same functions as the other formats. Field
//! order and names are the schema's.

use super::{hint, prose};
use crate::compare::{
    BaselineUse, Cause, CompareOptions, CompareReport, CounterReport, MetricReport, Note,
    SimulationReport, Status,
};
use crate::doc::Imported;
use crate::run::command::CommandSpec;
use crate::run::environment::Environment;
use crate::run::metric::{Direction, Unit};
use crate::run::RunRecord;
use crate::stats::bootstrap::Interval;
use crate::stats::descriptive::Summary;
use crate::stats::mann_whitney::MannWhitney;
use crate::stats::shift::Shift;
use crate::stats::verdict::Verdict;
use crate::stats::welch::Welch;
use serde::Serialize;

/// The `compare` JSON document of a report.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    schema: &'static str,
    schema_version: u32,
    commands: &'a [CommandSpec],
    settings: &'a CompareOptions,
    status: &'a Status,
    stopped_by: Option<crate::compare::Limit>,
    environment: &'a Environment,
    spawn_overhead_s: Option<f64>,
    spawn_correction_applied: bool,
    metrics: Vec<Metric<'a>>,
    counters: &'a CounterReport,
    simulation: Option<&'a SimulationReport>,
    notes: Vec<String>,
    elapsed_s: f64,
    runs: &'a [RunRecord],
    #[serde(skip_serializing_if = "Option::is_none")]
    analyze: Option<&'a Imported>,
    /// With `--baseline NAME`: the baseline and the mode that measured it.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'a BaselineUse>,
}

/// One metric of the document.
#[derive(Debug, Serialize)]
struct Metric<'a> {
    name: &'a str,
    unit: Unit,
    /// `lower` or `higher`: which way is better on this metric.
    direction: Direction,
    higher_is_better: bool,
    spawn_corrected: bool,
    a: Option<&'a Summary>,
    b: Option<&'a Summary>,
    verdict: Verdict,
    ratio: f64,
    ci_low: f64,
    ci_high: f64,
    ci_level: f64,
    look_alpha: f64,
    looks: usize,
    sentence: String,
    causes: &'a [Cause],
    hint: Option<String>,
    bootstrap_ratio_of_medians: Option<&'a Interval>,
    hodges_lehmann_shift: Option<&'a Shift>,
    cliffs_delta: f64,
    welch: Option<&'a Welch>,
    mann_whitney: Option<&'a MannWhitney>,
    welch_p_holm: Option<f64>,
    mann_whitney_p_holm: Option<f64>,
}

/// The document `--json` writes for `report`.
pub fn document(report: &CompareReport) -> Document<'_> {
    Document {
        schema: report.schema,
        schema_version: report.schema_version,
        commands: &report.commands,
        settings: &report.settings,
        status: &report.status,
        stopped_by: report.stopped_by,
        environment: &report.environment,
        spawn_overhead_s: report.spawn_overhead_s,
        spawn_correction_applied: report.spawn_correction_applied,
        metrics: report.metrics.iter().map(|m| metric(report, m)).collect(),
        counters: &report.counters,
        simulation: report.simulation.as_ref(),
        notes: prose::notes(report),
        elapsed_s: report.elapsed_s,
        runs: &report.runs,
        analyze: report.analyze.as_ref(),
        baseline: report.notes.iter().find_map(|n| match n {
            Note::Baseline(used) => Some(used),
            _ => None,
        }),
    }
}

fn metric<'a>(report: &'a CompareReport, m: &'a MetricReport) -> Metric<'a> {
    Metric {
        name: &m.name,
        unit: m.unit,
        direction: m.direction,
        higher_is_better: m.direction.higher_is_better(),
        spawn_corrected: m.spawn_corrected,
        a: m.a.as_ref(),
        b: m.b.as_ref(),
        verdict: m.verdict,
        ratio: m.ratio,
        ci_low: m.ci_low,
        ci_high: m.ci_high,
        ci_level: m.ci_level,
        look_alpha: m.look_alpha,
        looks: m.looks,
        sentence: prose::sentence(m, prose::names(report), report.settings.margin),
        causes: &m.causes,
        hint: hint::joined(report, m),
        bootstrap_ratio_of_medians: m.bootstrap_ratio_of_medians.as_ref(),
        hodges_lehmann_shift: m.hodges_lehmann_shift.as_ref(),
        cliffs_delta: m.cliffs_delta,
        welch: m.welch.as_ref(),
        mann_whitney: m.mann_whitney.as_ref(),
        welch_p_holm: m.welch_p_holm,
        mann_whitney_p_holm: m.mann_whitney_p_holm,
    }
}
