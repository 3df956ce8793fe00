//! Re-analyzing ghostbench's own `--json` with other `--margin`, `--alpha`,
//! `--estimator` or `--higher-is-better`.
//!
//! - `compare`: the runs were taken sequentially and the run stopped on what
//!   the looks showed, so a fixed-n interval at full α would overstate the
//!   evidence. The re-analysis replays compare's looks over the runs in
//!   their order (the same schedule, the same α spending) and reports the
//!   last one, exactly what `compare` computes at the end of a run; with
//!   the original options it reproduces the original verdicts. A report
//!   that `analyze` itself wrote from a CSV keeps its fixed-n interval.
//! - `layout`: `layout`'s analysis of the recorded runs of the seeds used.
//!   With `--layouts auto` the last look spent only a share of α; the
//!   re-analysis keeps that share, so with the original options it
//!   reproduces the original matrix.
//!
//! The report is read whole through its type (`doc::Compare`,
//! `doc::Layout`; an older version through `doc::migrate`), so a moved key is
//! a `doc::Error` naming the field. Options not given keep the report's own
//! settings (`doc::CompareSettings`/`doc::LayoutSettings`) and each metric's
//! stored direction (`doc::Metric`/`doc::Row`).

use super::layouts::{layout_from_runs, metric_names};
use super::rows::check;
use super::{AnalyzeOptions, Analyzed, Interval, Note, Reanalysis, DEFAULT_ALPHA, DEFAULT_MARGIN};
use crate::compare::analysis;
use crate::compare::{self, CompareOptions, CompareReport, CounterReport, MetricInput, Order};
use crate::doc::{
    self, CompareSettings, Directions, Document, Imported, IntervalKind, LayoutSettings, Schema,
    Source,
};
use crate::layout::{self, BuildSpec, LayoutOptions, LayoutReport, LayoutRun};
use crate::run::command::CommandSpec;
use crate::run::metric::{HigherIsBetter, MetricSpec, Unit};
use crate::run::{RunRecord, Status};
use crate::stats::hierarchical::Estimator;
use crate::stats::sequential::{evaluate, Look, Sequential, StoppingRule};
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// A ghostbench document read through its type, or a one-line error naming
/// the file and the field (`doc::Error`).
pub fn read(doc: &Value, file: &str) -> Result<Document> {
    Document::read(doc).map_err(|e| anyhow::anyhow!("{file}: {e}"))
}

/// The stored status with compare's own states; another verb's state is an
/// error naming the field.
fn compare_status(status: &Status<doc::State>, file: &str) -> Result<compare::Status> {
    use compare::State as C;
    let state = match status.state {
        doc::State::Decided => C::Decided,
        doc::State::BudgetExhausted => C::BudgetExhausted,
        doc::State::Failed => C::Failed,
        doc::State::Interrupted => C::Interrupted,
        doc::State::Imported => C::Imported,
        other => bail!("{file}: status.state: {other:?} is not a compare state"),
    };
    Ok(Status {
        state,
        message: status.message.clone(),
        last_output: status.last_output.clone(),
    })
}

/// As [`compare_status`], with layout's states.
fn layout_status(status: &Status<doc::State>, file: &str) -> Result<layout::Status> {
    use layout::State as L;
    let state = match status.state {
        doc::State::Finished => L::Finished,
        doc::State::BudgetExhausted => L::BudgetExhausted,
        doc::State::BuildFailed => L::BuildFailed,
        doc::State::RunFailed => L::RunFailed,
        doc::State::Interrupted => L::Interrupted,
        doc::State::Imported => L::Imported,
        other => bail!("{file}: status.state: {other:?} is not a layout state"),
    };
    Ok(Status {
        state,
        message: status.message.clone(),
        last_output: status.last_output.clone(),
    })
}

/// A number the report's settings must hold.
fn number(value: Option<f64>, file: &str, name: &str) -> Result<f64> {
    value.with_context(|| format!("{file}: settings.{name}: missing or not a number"))
}

/// The directions a report stored: per metric (`rows`, each a name and its
/// `direction`, or the older per-metric `higher_is_better`), as the flag
/// naming the metrics it held higher-is-better; without them, its
/// `settings.higher_is_better` (`setting`). Also the names it held higher,
/// to tell whether a re-analysis changed any.
fn stored_directions<'a>(
    rows: impl Iterator<Item = (&'a str, Option<bool>)>,
    setting: &Directions,
) -> (HigherIsBetter, Vec<String>) {
    let per_metric: Vec<(&str, bool)> = rows
        .filter_map(|(name, higher)| Some((name, higher?)))
        .collect();
    if per_metric.is_empty() {
        return (setting.flag(), Vec::new());
    }
    let mut higher: Vec<String> = Vec::new();
    for (name, h) in per_metric {
        if h && !higher.iter().any(|n| n == name) {
            higher.push(name.to_string());
        }
    }
    let flag = if higher.is_empty() {
        HigherIsBetter::Off
    } else {
        HigherIsBetter::Named(higher.clone())
    };
    (flag, higher)
}

/// Whether `now` turns around other metrics among `names` than the report held higher.
fn directions_changed(now: &HigherIsBetter, names: &[(String, Unit)], stored: &[String]) -> bool {
    names
        .iter()
        .any(|(n, u)| now.direction(n, *u).higher_is_better() != stored.contains(n))
}

/// Re-analyze a `compare --json`.
pub fn compare(
    doc: &doc::Compare,
    file: &str,
    options: &AnalyzeOptions,
) -> Result<Analyzed<CompareReport>> {
    let commands: Vec<CommandSpec> = doc.commands.clone();
    let [a, b] = <[CommandSpec; 2]>::try_from(commands).map_err(|c| {
        anyhow::anyhow!(
            "{file}: `commands`: {} entries, a compare report has 2",
            c.len()
        )
    })?;
    let runs: Vec<RunRecord> = doc.runs.clone();
    if let Some((i, r)) = runs.iter().enumerate().find(|(_, r)| r.build > 1) {
        bail!("{file}: runs[{i}].side: {} (0 = A, 1 = B)", r.build);
    }
    let settings: &CompareSettings = &doc.settings;
    let old_margin = number(settings.margin, file, "margin")?;
    let old_alpha = number(settings.alpha, file, "alpha")?;
    let (old_hib, stored_higher) = stored_directions(
        doc.metrics.iter().map(|m| (m.name.as_str(), m.higher())),
        &settings.higher_is_better,
    );
    let margin = options.margin.unwrap_or(old_margin);
    let alpha = options.alpha.unwrap_or(old_alpha);
    check(margin, alpha).with_context(|| format!("{file}: settings"))?;
    let hib = options.higher_is_better.or(&old_hib);
    let min_runs = settings.min_runs.unwrap_or(5) as usize;
    let imported: Option<Imported> = doc.analyze.clone();
    let spawn_overhead: Option<f64> = doc.spawn_overhead_s;
    let corrected = doc.spawn_correction_applied;
    let correction = spawn_overhead.filter(|_| corrected).unwrap_or(0.0);

    let names = metric_names(runs.iter());
    if names.is_empty() {
        bail!("{file}: no measured run has values: nothing to analyze");
    }
    let series: Vec<[Vec<f64>; 2]> = names
        .iter()
        .map(|(name, _)| {
            let shift = if name == "wall" { correction } else { 0.0 };
            let side = |s: usize| -> Vec<f64> {
                runs.iter()
                    .filter(|r| r.build == s && !r.warmup)
                    .filter_map(|r| r.values.iter().find(|v| &v.name == name))
                    .map(|v| v.value - shift)
                    .collect()
            };
            [side(0), side(1)]
        })
        .collect();
    let sequential = imported.is_none();
    let directions: Vec<bool> = names
        .iter()
        .map(|(n, u)| hib.direction(n, *u).higher_is_better())
        .collect();
    let (looks, looks_spent) = if sequential {
        replay(&series, alpha, margin, min_runs, &directions)
    } else {
        let per = alpha / names.len() as f64;
        let looks = series
            .iter()
            .zip(&directions)
            .map(|([x, y], &h)| evaluate(x, y, per, margin, h))
            .collect();
        (looks, 0)
    };
    let inputs: Vec<MetricInput> = names
        .iter()
        .zip(&series)
        .zip(looks)
        .map(|(((name, unit), [x, y]), look)| MetricInput {
            name,
            unit: *unit,
            direction: hib.direction(name, *unit),
            a: x,
            b: y,
            spawn_corrected: name == "wall" && corrected && spawn_overhead.is_some(),
            look,
            looks: looks_spent,
        })
        .collect();
    let seed = settings.seed.unwrap_or(options.seed);
    let metrics = analysis::analyze(&inputs, margin, alpha, seed);

    let mut notes = vec![Note::Reanalysis(Reanalysis {
        file: file.to_string(),
        margin: (margin, old_margin),
        alpha: (alpha, old_alpha),
        estimator: None,
        higher_is_better: directions_changed(&hib, &names, &stored_higher),
        interval: Some(if sequential {
            Interval::Replayed {
                runs: [series[0][0].len(), series[0][1].len()],
            }
        } else {
            Interval::Fixed
        }),
    })];
    notes.extend(doc.notes.iter().cloned().map(Note::Carried));
    let shell = a.shell;
    let hook = |name: &str, text: &Option<String>| {
        text.as_deref()
            .and_then(|t| CommandSpec::parse(name, t, shell).ok())
    };
    let seconds = |s: Option<f64>| s.filter(|s| s.is_finite() && *s >= 0.0);
    let commands = [a, b];
    let options_out = CompareOptions {
        commands: commands.clone(),
        metrics: settings
            .metrics
            .iter()
            .flatten()
            .filter_map(|label| MetricSpec::parse(label).ok())
            .collect(),
        higher_is_better: hib,
        margin,
        alpha,
        warmup: settings.warmup.unwrap_or(0) as usize,
        min_runs,
        max_runs: settings.max_runs.unwrap_or(0) as usize,
        max_time: Duration::from_secs_f64(seconds(settings.max_time_s).unwrap_or(0.0)),
        order: if settings.order.as_deref() == Some("random") {
            Order::Random
        } else {
            Order::Abba
        },
        env_jitter: settings.env_jitter.unwrap_or(false),
        spawn_correction: settings.spawn_correction.unwrap_or(false),
        pin: settings.pin.map(|p| p as usize),
        no_aslr: settings.no_aslr.unwrap_or(false),
        prepare: hook("prepare", &settings.prepare),
        setup: hook("setup", &settings.setup),
        cleanup: hook("cleanup", &settings.cleanup),
        ignore_failure: settings.ignore_failure.unwrap_or(false),
        input: settings.input.clone().map(Into::into),
        timeout: seconds(settings.timeout_s).map(Duration::from_secs_f64),
        counters: false,
        simulate: false,
        seed,
        command_line: options.command_line.clone(),
    };
    let report = CompareReport {
        schema: crate::doc::Schema::Compare.name(),
        schema_version: compare::SCHEMA_VERSION,
        commands: commands.to_vec(),
        settings: options_out,
        status: compare_status(&doc.status, file)?,
        stopped_by: doc.stopped_by.map(|limit| match limit {
            doc::Limit::MaxRuns => compare::Limit::MaxRuns,
            doc::Limit::MaxTime => compare::Limit::MaxTime,
        }),
        environment: doc.environment.clone(),
        spawn_overhead_s: spawn_overhead,
        spawn_correction_applied: corrected,
        metrics,
        counters: match &doc.counters {
            Some(counters) if !counters.is_null() => CounterReport::deserialize(counters)
                .map_err(|e| anyhow::anyhow!("{file}: `counters`: {e}"))?,
            _ => CounterReport {
                requested: false,
                unavailable: None,
                rows: Vec::new(),
            },
        },
        simulation: None,
        notes: Vec::new(),
        elapsed_s: doc.elapsed_s,
        runs,
        analyze: Some(match imported {
            Some(before) => Imported {
                files: vec![file.to_string()],
                ..before
            },
            None => Imported {
                files: vec![file.to_string()],
                format: Source::Ghost(Schema::Compare),
                interval: IntervalKind::Sequential,
                interleaved: Some(true),
                layouts: None,
                stored: None,
            },
        }),
    };
    Ok(Analyzed { report, notes })
}

/// compare's looks over the runs in their order: one call of the sequential
/// rule per round, then its final evaluation, as `compare` does. Returns
/// the last look of every metric and the number of looks spent.
fn replay(
    series: &[[Vec<f64>; 2]],
    alpha: f64,
    margin: f64,
    min_runs: usize,
    higher_is_better: &[bool],
) -> (Vec<Look>, usize) {
    let mut sequential = Sequential::new(
        StoppingRule {
            alpha,
            margin,
            min_runs,
            higher_is_better: higher_is_better.to_vec(),
        },
        series.len(),
    );
    let n = series
        .iter()
        .map(|[a, b]| a.len().min(b.len()))
        .min()
        .unwrap_or(0);
    let prefix = |k: usize| -> Vec<(&[f64], &[f64])> {
        series
            .iter()
            .map(|[a, b]| (&a[..k.min(a.len())], &b[..k.min(b.len())]))
            .collect()
    };
    for k in 1..=n {
        sequential.observe(&prefix(k));
    }
    let looks = if n >= 2 {
        let all: Vec<(&[f64], &[f64])> = series
            .iter()
            .map(|[a, b]| (a.as_slice(), b.as_slice()))
            .collect();
        sequential.finish(&all)
    } else {
        // Too few runs for an interval: a point ratio, UNKNOWN.
        series
            .iter()
            .zip(higher_is_better)
            .map(|([a, b], &h)| evaluate(a, b, 0.0, margin, h))
            .collect()
    };
    (looks, sequential.looks_spent())
}

/// Re-analyze a `layout --json`.
pub fn layout(
    doc: &doc::Layout,
    file: &str,
    options: &AnalyzeOptions,
) -> Result<Analyzed<LayoutReport>> {
    let builds: Vec<BuildSpec> = doc
        .builds
        .iter()
        .map(|b| BuildSpec {
            name: b.name.clone(),
            template: b.template.clone(),
        })
        .collect();
    if builds.len() < 2 {
        bail!(
            "{file}: `builds`: {} entries, a layout report has at least 2",
            builds.len()
        );
    }
    let runs: Vec<LayoutRun> = doc.runs.clone();
    if let Some((i, r)) = runs
        .iter()
        .enumerate()
        .find(|(_, r)| r.build >= builds.len())
    {
        bail!(
            "{file}: runs[{i}].build: {} but there are {} builds",
            r.build,
            builds.len()
        );
    }
    let seeds: Vec<u64> = doc.used_seeds.clone();
    let settings: &LayoutSettings = &doc.settings;
    let old_margin = settings.margin.unwrap_or(DEFAULT_MARGIN);
    let old_alpha = settings.alpha.unwrap_or(DEFAULT_ALPHA);
    let margin = options.margin.unwrap_or(old_margin);
    let alpha = options.alpha.unwrap_or(old_alpha);
    check(margin, alpha).with_context(|| format!("{file}: settings"))?;
    let (old_hib, stored_higher) = stored_directions(
        doc.matrix.iter().map(|r| (r.metric.as_str(), r.higher())),
        &settings.higher_is_better,
    );
    let hib = options.higher_is_better.or(&old_hib);
    let old_estimator = match settings.estimator.as_deref() {
        Some("min") => Estimator::Min,
        Some("paired") => Estimator::Paired,
        Some("median") | None => Estimator::Median,
        Some(other) => bail!("{file}: settings.estimator: {other:?} (median, min or paired)"),
    };
    let estimator = options.estimator.unwrap_or(old_estimator);
    let names = metric_names(runs.iter().map(|r| &r.record));
    if names.is_empty() {
        bail!("{file}: no measured run has values: nothing to analyze");
    }
    // The share of α the original's last look spent (1 for a fixed count).
    let comparisons = layout::analysis::comparisons(names.len(), builds.len());
    let share = settings
        .confidence
        .map(|c| (1.0 - c) * comparisons as f64 / old_alpha)
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(1.0, |s| s.min(1.0));
    let layout_options = LayoutOptions {
        builds,
        run_template: settings.run_template.clone().unwrap_or_default(),
        metrics: Vec::new(),
        higher_is_better: hib.clone(),
        layouts: seeds.len(),
        max_layouts: settings.max_layouts.map(|m| m as usize),
        rounds: settings.rounds.unwrap_or(0) as usize,
        warmup: settings.warmup.unwrap_or(0) as usize,
        estimator,
        margin,
        alpha,
        seed: settings.seed.unwrap_or(options.seed),
        command_line: options.command_line.clone(),
        ..LayoutOptions::default()
    };
    let mut notes = vec![Note::Reanalysis(Reanalysis {
        file: file.to_string(),
        margin: (margin, old_margin),
        alpha: (alpha, old_alpha),
        estimator: Some((estimator, old_estimator)),
        higher_is_better: directions_changed(&hib, &names, &stored_higher),
        interval: None,
    })];
    if share < 1.0 {
        notes.push(Note::AlphaShare { share });
    }
    let imported = match doc.analyze.clone() {
        Some(before) => Imported {
            files: vec![file.to_string()],
            ..before
        },
        None => Imported {
            files: vec![file.to_string()],
            format: Source::Ghost(Schema::Layout),
            interval: IntervalKind::Fixed,
            interleaved: Some(true),
            layouts: None,
            stored: None,
        },
    };
    Ok(layout_from_runs(
        &layout_options,
        &names,
        seeds,
        runs,
        alpha * share,
        doc.environment.clone(),
        layout_status(&doc.status, file)?,
        notes,
        imported,
    ))
}
