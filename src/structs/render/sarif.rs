//! `--sarif FILE`: hazards as SARIF 2.1.0, so CI systems annotate the declaring line.

use crate::structs::hazards::{HazardKind, Severity};
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
            let level = match h.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            };
            let mut result = json!({
                "ruleId": h.kind.id(),
                "level": level,
                "message": {"text": format!("{}: {}", h.struct_name, h.message)},
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
        }]
    })
}
