//! `--sarif FILE`: hazards as SARIF 2.1.0, so CI systems annotate the declaring line;
//! the run's `properties` carry the counts by kind and severity.

use super::hazards::message;
use crate::structs::hazards::HazardKind;
use crate::structs::StructsReport;
use serde_json::{json, Value};

const RULES: [(HazardKind, &str); 5] = [
    (
        HazardKind::SplitLockRisk,
        "An atomic member can cross a cache line: a locked operation on it becomes a split lock.",
    ),
    (
        HazardKind::Misaligned,
        "A member sits below its natural alignment (packing).",
    ),
    (
        HazardKind::FalseSharing,
        "Atomics or locks share a cache line with each other or with other members.",
    ),
    (
        HazardKind::ElementStraddle,
        "The element size makes a share of array elements straddle cache lines.",
    ),
    (
        HazardKind::Holes,
        "Holes and padding that a reorder reclaims.",
    ),
];

pub fn render(report: &StructsReport) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|(k, text)| json!({"id": k.id(), "shortDescription": {"text": text}}))
        .collect();
    let results: Vec<Value> = report
        .hazards
        .iter()
        .map(|h| {
            let mut result = json!({
                "ruleId": h.kind.id(),
                "level": h.severity.id(),
                "message": {"text": format!("{}: {}", h.struct_name, message(h, report.line))},
            });
            let uri = h.decl_file.clone().unwrap_or_else(|| report.binary.clone());
            let mut physical = json!({"artifactLocation": {"uri": uri}});
            if let Some(line) = h.decl_line.filter(|l| *l > 0) {
                physical["region"] = json!({"startLine": line});
            }
            result["locations"] = json!([{"physicalLocation": physical}]);
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "ghostbench",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/ghostbench/ghostbench",
                "rules": rules,
            }},
            "results": results,
            // The counts of every hazard found, as `--json` has them: with `--top N`
            // the results are the worst N.
            "properties": {
                "hazardCounts": report.hazard_counts,
                "hazardsLeftOut": report.hazards_left_out,
            },
        }]
    })
}
