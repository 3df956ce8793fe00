//! A named baseline's stored runs against runs made now (`compare
//! --baseline NAME CMD` when its command cannot be run again) or imported
//! (`analyze --baseline NAME FILE`): `compare`'s two-sample analysis at a
//! fixed n on the metrics both sides have, with the margin widened by the
//! drift allowed between sessions ([`allowance`]: at least [`DRIFT`], more
//! when the store's history of the baseline's own command shows more), since
//! the two sides were not interleaved (docs/methodology.md §13), and a note
//! that says so.

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

/// The least drift between two sessions that stored runs allow for: a
/// stored side and a side measured in another session are compared with the
/// margin widened to `(1 + margin)(1 + drift) − 1`, so a verdict (and
/// `--fail-on`) does not rest on a difference that drift alone can make.
/// Issue 22 saw 8.3% (interval to 14.8%); BENCHMARKS.md ("Baseline gate")
/// has far more on a loaded machine, which the history then has to show.
pub const DRIFT: f64 = 0.15;

/// The drift allowed between sessions, and how many sessions since the
/// baseline was saved it was measured over (0: [`DRIFT`] alone).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drift {
    pub allowance: f64,
    pub sessions: usize,
}

/// The drift to allow: [`DRIFT`], or the largest factor between the median
/// of the baseline's own command in a later session (`sessions`, its values
/// per session) and its saved median (`saved`), when that is larger.
pub fn allowance(saved: f64, sessions: &[Vec<f64>]) -> Drift {
    let mut allowance = DRIFT;
    let mut counted = 0;
    for values in sessions {
        let median = crate::stats::descriptive::median(values);
        if !(median > 0.0 && saved > 0.0) {
            continue;
        }
        counted += 1;
        let factor = (median / saved).max(saved / median);
        allowance = allowance.max(factor - 1.0);
    }
    Drift {
        allowance,
        sessions: counted,
    }
}

/// `margin` widened by `drift`.
pub fn widened(margin: f64, drift: f64) -> f64 {
    (1.0 + margin) * (1.0 + drift) - 1.0
}

/// A stored unit name as a [`Unit`] (`none` when unknown).
pub fn unit(text: &str) -> Unit {
    serde_json::from_value(serde_json::Value::String(text.to_string())).unwrap_or(Unit::None)
}

/// `baseline`'s runs (A) against `current` (B) on the metrics both have,
/// with the margin widened by `drift`; `why` they were not interleaved.
pub fn against(
    baseline: &Baseline,
    current: &Current,
    options: &AnalyzeOptions,
    why: Fallback,
    drift: Drift,
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
        format: crate::doc::Source::Baseline,
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
    let margin = widened(options.margin.unwrap_or(DEFAULT_MARGIN), drift.allowance);
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
                drift: drift.allowance,
                sessions: drift.sessions,
                margin,
            },
        }),
    );
    Ok(analyzed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowance_is_the_documented_drift_or_the_largest_seen_since() {
        // No later session: the documented 15%.
        assert_eq!(
            allowance(10.0, &[]),
            Drift {
                allowance: DRIFT,
                sessions: 0
            }
        );
        // Sessions within 15% leave it; one at 25 against 10 (medians of
        // 24, 25, 26) makes it 150%, one at 4 (a 2.5x faster session) too.
        let near = vec![vec![10.5, 11.0, 11.5], vec![9.0, 9.5, 10.0]];
        assert_eq!(allowance(10.0, &near).allowance, DRIFT);
        assert_eq!(allowance(10.0, &near).sessions, 2);
        let far = vec![vec![10.0], vec![24.0, 25.0, 26.0]];
        assert!((allowance(10.0, &far).allowance - 1.5).abs() < 1e-12);
        assert!((allowance(10.0, &[vec![4.0]]).allowance - 1.5).abs() < 1e-12);
        // (1.01)(1.15) − 1.
        assert!((widened(0.01, 0.15) - 0.1615).abs() < 1e-12);
    }
}
