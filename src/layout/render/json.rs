//! The `--json` document of `layout` (docs/json-schema.md): the report's facts
//! as they are, with the verdict sentences, hints and notes worded by
//! `prose`, the same words the other formats print. `LayoutReport` itself is
//! not serialisable, so every JSON goes through here.

use super::prose;
use crate::doc::Imported;
use crate::layout::builds::BuildResult;
use crate::layout::explanation::Explain;
use crate::layout::merged::Merged;
use crate::layout::variants::{SourceStatus, Variant};
use crate::layout::{
    BuildSpec, LayoutReport, LayoutRun, Look, MatrixRow, NoDefaultInterval, RatioInterval,
    Settings, Status, Timing, Undecided, VariantValue,
};
use crate::run::environment::Environment;
use crate::run::metric::{Direction, Unit};
use crate::stats::fragility::Fragility;
use crate::stats::hierarchical::LayoutRatio;
use crate::stats::verdict::Verdict;
use serde::Serialize;

/// The whole document, fields in the order of docs/json-schema.md.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    schema: &'static str,
    schema_version: u32,
    builds: &'a [BuildSpec],
    settings: &'a Settings,
    sources: &'a [SourceStatus],
    variants: &'a [Variant],
    used_seeds: &'a [u64],
    build_results: &'a [BuildResult],
    status: &'a Status,
    environment: &'a Environment,
    matrix: Vec<Row<'a>>,
    looks: &'a [Look],
    notes: Vec<String>,
    timing: &'a Timing,
    /// The load during the runs; absent for imported runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    load: Option<LoadDoc<'a>>,
    runs: &'a [LayoutRun],
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<&'a Explain>,
    #[serde(skip_serializing_if = "Option::is_none")]
    analyze: Option<&'a Imported>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shards: Option<&'a Merged>,
}

/// `load`: the samples, their mean and largest, and whether the machine was
/// busy by `MachineLoad::busy`'s rule.
#[derive(Debug, Serialize)]
struct LoadDoc<'a> {
    samples: &'a [f64],
    cpus: usize,
    mean: Option<f64>,
    max: Option<f64>,
    busy: bool,
}

/// One matrix row.
#[derive(Debug, Serialize)]
struct Row<'a> {
    build: &'a str,
    metric: &'a str,
    unit: Unit,
    /// `lower` or `higher`: which way is better on this metric.
    direction: Direction,
    default_value: f64,
    spread_cv: f64,
    variants: &'a [VariantValue],
    comparison: Option<ComparisonDoc<'a>>,
}

/// A row's comparison: the facts, and the sentence and hint in words.
#[derive(Debug, Serialize)]
struct ComparisonDoc<'a> {
    default_ratio: Option<RatioInterval>,
    default_verdict: Verdict,
    controlled: Option<LayoutRatio>,
    controlled_verdict: Verdict,
    /// The "layout noise" column (schema 2 added it under this name).
    layout_noise: f64,
    /// The same number under its first name, kept for schema-2 readers.
    smallest_trustworthy_effect: f64,
    verdict: Verdict,
    artifact_share: Option<f64>,
    sentence: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    undecided: Option<&'a Undecided>,
    /// Why the default layout has no interval, when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    no_default_interval: Option<NoDefaultInterval>,
    hint: Option<String>,
    /// Layouts where the build stands apart reproducibly (null: none found,
    /// or fewer than 5 layouts or 2 runs a cell to tell).
    fragility: Option<&'a Fragility>,
    /// Default ratio minus controlled estimate, for a decided verdict whose
    /// default layout lies outside the interval.
    placement_points: Option<f64>,
}

/// The document of `report`, ready for `report::json::write`.
pub fn document(report: &LayoutReport) -> Document<'_> {
    Document {
        schema: report.schema,
        schema_version: report.schema_version,
        builds: &report.builds,
        settings: &report.settings,
        sources: &report.sources,
        variants: &report.variants,
        used_seeds: &report.used_seeds,
        build_results: &report.build_results,
        status: &report.status,
        environment: &report.environment,
        matrix: report.matrix.iter().map(|r| row(report, r)).collect(),
        looks: &report.looks,
        notes: prose::notes(report),
        timing: &report.timing,
        load: (!report.load.samples.is_empty()).then(|| LoadDoc {
            samples: &report.load.samples,
            cpus: report.load.cpus,
            mean: report.load.mean(),
            max: report.load.max(),
            busy: report.load.busy(),
        }),
        runs: &report.runs,
        explain: report.explain.as_ref(),
        analyze: report.analyze.as_ref(),
        shards: report.shards.as_ref(),
    }
}

fn row<'a>(report: &LayoutReport, row: &'a MatrixRow) -> Row<'a> {
    Row {
        build: &row.build,
        metric: &row.metric,
        unit: row.unit,
        direction: row.direction,
        default_value: row.default_value,
        spread_cv: row.spread_cv,
        variants: &row.variants,
        comparison: row.comparison.as_ref().map(|c| ComparisonDoc {
            default_ratio: c.default_ratio,
            default_verdict: c.default_verdict,
            controlled: c.controlled,
            controlled_verdict: c.controlled_verdict,
            layout_noise: c.layout_noise,
            smallest_trustworthy_effect: c.layout_noise,
            verdict: c.verdict,
            artifact_share: c.artifact_share,
            sentence: prose::comparison_sentence(report, row, c),
            undecided: c.undecided.as_ref(),
            no_default_interval: c.no_default_interval,
            hint: prose::comparison_hint(report, c),
            fragility: c.fragility.as_ref(),
            placement_points: c.placement_points,
        }),
    }
}
