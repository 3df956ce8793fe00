//! The `--json` document of `probe` (docs/json-schema.md, `ghostbench.probe`
//! version 1): the report's facts, with each probe's finding and notes worded
//! by `finding`, in the field order the schema shows.

use super::finding::{finding, notes};
use crate::probe::types::Status;
use crate::probe::{Details, ProbeReport};
use crate::run::environment::Environment;
use serde::Serialize;

#[derive(Serialize)]
pub struct Document<'a> {
    schema: &'static str,
    schema_version: u32,
    quick: bool,
    budget_per_probe_s: f64,
    elapsed_s: f64,
    environment: &'a Environment,
    probes: Vec<Probe<'a>>,
}

#[derive(Serialize)]
struct Probe<'a> {
    status: Status,
    finding: String,
    notes: Vec<String>,
    elapsed_s: f64,
    budget_s: f64,
    #[serde(flatten)]
    details: &'a Details,
}

/// The document `--json` writes.
pub fn document(report: &ProbeReport) -> Document<'_> {
    Document {
        schema: report.schema,
        schema_version: report.schema_version,
        quick: report.quick,
        budget_per_probe_s: report.budget_per_probe_s,
        elapsed_s: report.elapsed_s,
        environment: &report.environment,
        probes: report
            .probes
            .iter()
            .map(|p| Probe {
                status: p.status,
                finding: finding(p),
                notes: notes(p),
                elapsed_s: p.elapsed_s,
                budget_s: p.budget_s,
                details: &p.details,
            })
            .collect(),
    }
}
