//! `--json`: the report as data, each hazard with its sentence (`message`) beside
//! its facts, so the document reads on its own (docs/json-schema.md, `structs`).

use super::hazards::message;
use crate::structs::hazards::Hazard;
use crate::structs::StructsReport;
use serde::Serialize;

/// The `--json` document of `report`.
pub fn document(report: &StructsReport) -> Document<'_> {
    Document {
        report,
        hazards: report
            .hazards
            .iter()
            .map(|hazard| Worded {
                hazard,
                message: message(hazard, report.line),
            })
            .collect(),
    }
}

#[derive(Serialize)]
pub struct Document<'a> {
    #[serde(flatten)]
    report: &'a StructsReport,
    /// Worst first, as `report.hazards`.
    hazards: Vec<Worded<'a>>,
}

#[derive(Serialize)]
struct Worded<'a> {
    #[serde(flatten)]
    hazard: &'a Hazard,
    message: String,
}
