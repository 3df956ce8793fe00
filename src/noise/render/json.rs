//! The `--json` document of `noise` (docs/json-schema.md, `ghostbench.noise`
//! version 1): the report's facts, each metric's finding and runs sentence
//! and the notes in words, and every run with its cell.

use super::{finding, not_tested, notes, runs_sentence};
use crate::noise::{Factor, NoiseReport, NoiseRun, NotTested, State};
use crate::run::environment::Environment;
use crate::stats::factorial::Estimate;
use serde::Serialize;

#[derive(Serialize)]
pub struct Document<'a> {
    schema: &'static str,
    schema_version: u32,
    command: &'a str,
    factors: Vec<FactorDoc<'a>>,
    pin_cpu: Option<usize>,
    thp_mode: Option<&'a str>,
    budget_s: f64,
    elapsed_s: f64,
    complete_rounds: usize,
    state: State,
    message: Option<&'a str>,
    last_output: &'a [String],
    metrics: Vec<MetricDoc>,
    notes: Vec<String>,
    seed: u64,
    environment: &'a Environment,
    runs: &'a [NoiseRun],
}

#[derive(Serialize)]
struct FactorDoc<'a> {
    factor: Factor,
    tested: bool,
    /// The bit of the factor in a run's `cell`, when tested.
    bit: Option<usize>,
    not_tested: Option<&'a NotTested>,
    why: Option<String>,
}

#[derive(Serialize)]
struct EstimateDoc {
    value: f64,
    low: f64,
    high: f64,
}

impl From<Estimate> for EstimateDoc {
    fn from(e: Estimate) -> Self {
        EstimateDoc {
            value: e.value,
            low: e.low,
            high: e.high,
        }
    }
}

#[derive(Serialize)]
struct ShareDoc {
    factor: Factor,
    share: EstimateDoc,
    held_shift: f64,
    held_shift_p: f64,
    source: bool,
}

#[derive(Serialize)]
struct MetricDoc {
    name: String,
    unit: crate::run::metric::Unit,
    finding: String,
    decomposed: bool,
    /// Holding every factor clearly removes noise (see `Attribution::explained`).
    explained: Option<bool>,
    /// Every factor varying: the variance of the log metric.
    total_variance: Option<EstimateDoc>,
    /// Every factor held: the variance left.
    held_variance: Option<EstimateDoc>,
    shares: Vec<ShareDoc>,
    unexplained: Option<EstimateDoc>,
    default_cell: Option<u32>,
    default_cv: Option<f64>,
    default_runs: Option<u64>,
    quiet_cell: Option<u32>,
    quiet_held: Vec<Factor>,
    quiet_cv: Option<f64>,
    quiet_runs: Option<u64>,
    runs_sentence: Option<String>,
    /// The variance of the log metric in every cell, by cell.
    cell_variances: Vec<f64>,
}

/// The document `--json` writes.
pub fn document(report: &NoiseReport) -> Document<'_> {
    let tested = report.tested();
    Document {
        schema: crate::doc::Schema::Noise.name(),
        schema_version: crate::doc::Schema::Noise.version(),
        command: &report.command.text,
        factors: report
            .factors
            .iter()
            .map(|p| FactorDoc {
                factor: p.factor,
                tested: p.not_tested.is_none(),
                bit: tested.iter().position(|&f| f == p.factor),
                not_tested: p.not_tested.as_ref(),
                why: p.not_tested.as_ref().map(not_tested),
            })
            .collect(),
        pin_cpu: report.pin_cpu,
        thp_mode: report.thp_mode.as_deref(),
        budget_s: report.budget_s,
        elapsed_s: report.elapsed_s,
        complete_rounds: report.complete_rounds,
        state: report.status.state,
        message: report.status.message.as_deref(),
        last_output: &report.status.last_output,
        metrics: report
            .metrics
            .iter()
            .map(|m| {
                let a = m.result.as_ref().ok();
                MetricDoc {
                    name: m.name.clone(),
                    unit: m.unit,
                    finding: finding(m),
                    decomposed: a.is_some(),
                    explained: a.map(|a| a.explained),
                    total_variance: a.map(|a| a.decomposition.total.into()),
                    held_variance: a.map(|a| a.decomposition.held.into()),
                    shares: a
                        .map(|a| {
                            a.factors
                                .iter()
                                .map(|f| ShareDoc {
                                    factor: f.factor,
                                    share: f.share.into(),
                                    held_shift: f.held_shift,
                                    held_shift_p: f.held_shift_p,
                                    source: f.source,
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                    unexplained: a.map(|a| a.decomposition.unexplained.into()),
                    default_cell: a.map(|a| a.default_cell),
                    default_cv: a.map(|a| a.default_sd),
                    default_runs: a.and_then(|a| a.default_runs),
                    quiet_cell: a.map(|a| a.quiet_cell),
                    quiet_held: a.map(|a| a.quiet_held.clone()).unwrap_or_default(),
                    quiet_cv: a.map(|a| a.quiet_sd),
                    quiet_runs: a.and_then(|a| a.quiet_runs),
                    runs_sentence: a.map(|a| runs_sentence(report, a)),
                    cell_variances: a
                        .map(|a| a.decomposition.variances.clone())
                        .unwrap_or_default(),
                }
            })
            .collect(),
        notes: notes(report),
        seed: report.seed,
        environment: &report.environment,
        runs: &report.runs,
    }
}
