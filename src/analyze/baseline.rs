//! A named baseline's stored runs against runs made now (`compare
//! --baseline NAME CMD` when its command cannot be run again) or imported
//! (`analyze --baseline NAME FILE`): `compare`'s two-sample analysis at a
//! fixed n on the metrics both sides have, with the margin widened by
//! [`DRIFT`], since the two sides were not interleaved (docs/methodology.md
//! "Baselines"), and a note that says so.

use super::compared::compare_reports;
use super::input::{Dataset, Name, Order, Row};
use super::{AnalyzeOptions, Analyzed, Note, DEFAULT_MARGIN};
use crate::compare::{BaselineMode, BaselineUse, CompareReport, Fallback};
use crate::run::metric::Unit;
use crate::store::Baseline;
use anyhow::{bail, Result};

/// One value of the side measured now.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub metric: String,
    pub unit: Unit,
    pub round: usize,
    pub value: f64,
    pub exit_code: i32,
}

/// The side measured now: its name, command text and values.
#[derive(Debug, Clone)]
pub struct Current {
    pub name: String,
    pub text: String,
    pub values: Vec<Value>,
    /// Where the values came from: "measured now" or the files.
    pub source: String,
}

/// The drift between two sessions on one machine that stored runs allow for:
/// a stored side and a side measured in another session are compared with
/// the margin widened to `(1 + margin)(1 + DRIFT) − 1`, so a verdict (and
/// `--fail-on`) never rests on a difference that drift alone can make.
/// BENCHMARKS.md ("Baseline gate") has the drift measured between sessions
/// of one CPU-bound binary on `user` time (up to 8.3% in issue 22's runs).
pub const DRIFT: f64 = 0.15;

/// `margin` widened by [`DRIFT`].
pub fn widened(margin: f64) -> f64 {
    (1.0 + margin) * (1.0 + DRIFT) - 1.0
}

/// A stored unit name as a [`Unit`] (`none` when unknown).
pub fn unit(text: &str) -> Unit {
    serde_json::from_value(serde_json::Value::String(text.to_string())).unwrap_or(Unit::None)
}

/// `baseline`'s runs (A) against `current` (B) on the metrics both have,
/// with the margin widened by [`DRIFT`]; `why` they were not interleaved.
pub fn against(
    baseline: &Baseline,
    current: &Current,
    options: &AnalyzeOptions,
    why: Fallback,
) -> Result<Analyzed<CompareReport>> {
    let mut metrics: Vec<(String, Unit)> = Vec::new();
    for run in &baseline.runs {
        let shared = current.values.iter().any(|v| v.metric == run.metric);
        if shared && !metrics.iter().any(|m| m.0 == run.metric) {
            metrics.push((run.metric.clone(), unit(&run.unit)));
        }
    }
    if metrics.is_empty() {
        let mut stored: Vec<&str> = baseline.runs.iter().map(|r| r.metric.as_str()).collect();
        stored.dedup();
        let mut now: Vec<&str> = current.values.iter().map(|v| v.metric.as_str()).collect();
        now.dedup();
        bail!(
            "baseline {:?} has no metric in common with {}: it has {}, this has {}",
            baseline.name,
            current.name,
            stored.join(", "),
            now.join(", ")
        );
    }
    let metric_index = |name: &str| metrics.iter().position(|m| m.0 == name);
    let mut rows = Vec::new();
    let mut last_round = 0;
    for run in &baseline.runs {
        let (Some(metric), Some(value)) = (metric_index(&run.metric), run.value) else {
            continue;
        };
        let round = run.round.max(0) as usize;
        last_round = last_round.max(round);
        rows.push(Row {
            name: 0,
            metric,
            layout: None,
            round: Some(round),
            value,
            exit_code: run.exit_code as i32,
        });
    }
    // The current side's rounds after the baseline's: no round holds both.
    for v in &current.values {
        let Some(metric) = metric_index(&v.metric) else {
            continue;
        };
        rows.push(Row {
            name: 1,
            metric,
            layout: None,
            round: Some(last_round + 1 + v.round),
            value: v.value,
            exit_code: v.exit_code,
        });
    }
    let mut candidate = current.name.clone();
    if candidate == baseline.name {
        candidate.push_str(" (now)");
    }
    let data = Dataset {
        format: "baseline".into(),
        files: vec![
            format!(
                "baseline {} (result #{})",
                baseline.name, baseline.experiment_id
            ),
            current.source.clone(),
        ],
        names: vec![
            Name {
                name: baseline.name.clone(),
                text: baseline.command.template.clone(),
            },
            Name {
                name: candidate.clone(),
                text: current.text.clone(),
            },
        ],
        metrics,
        layouts: None,
        order: Order::Rounds,
        rows,
        notes: Vec::new(),
    };
    let margin = widened(options.margin.unwrap_or(DEFAULT_MARGIN));
    let widened_options = AnalyzeOptions {
        margin: Some(margin),
        ..options.clone()
    };
    let mut analyzed = compare_reports(&data, &widened_options)
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("no comparison"))?;
    // The baseline's own caution replaces the rounds' (which says the same
    // less precisely).
    analyzed.notes.retain(|n| !matches!(n, Note::Order(_)));
    analyzed.report.notes.insert(
        0,
        crate::compare::Note::Baseline(BaselineUse {
            name: baseline.name.clone(),
            experiment: baseline.experiment_id,
            saved_unix: baseline.created_unix,
            commit: baseline.git_commit.clone(),
            mode: BaselineMode::Stored {
                why,
                drift: DRIFT,
                margin,
            },
        }),
    );
    Ok(analyzed)
}
