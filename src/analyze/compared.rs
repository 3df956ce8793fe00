//! Rows without a `layout` column: each candidate against the baseline with
//! `compare`'s analysis at a fixed n (the exact Hodges–Lehmann interval of the
//! log ratio, Bonferroni over metrics × candidates).

use super::input::Dataset;
use super::rows::{interleaving, runs, unknown_environment};
use super::{AnalyzeOptions, Analyzed, Note, DEFAULT_ALPHA, DEFAULT_MARGIN};
use crate::compare::analysis;
use crate::compare::{self, CompareOptions, CompareReport, CounterReport, MetricInput, Unapplied};
use crate::doc::{Imported, IntervalKind};
use crate::limits;
use crate::run::command::CommandSpec;
use crate::run::{RunRecord, Status};
use crate::stats::sequential::evaluate;
use anyhow::{bail, Result};
use std::time::Duration;

/// Whether the reports of `data` stay within [`limits::MAX_ROWS`]: every
/// candidate's report holds its own copy of the baseline's runs, so the
/// baseline's rows count once per candidate (about 300 bytes each, held
/// until the reports are written). One line naming the files when not.
pub fn check_held(data: &Dataset) -> Result<()> {
    let mut per_name = vec![0usize; data.names.len()];
    for row in &data.rows {
        if let Some(count) = per_name.get_mut(row.name) {
            *count += 1;
        }
    }
    let candidates = per_name.len().saturating_sub(1);
    let baseline = per_name.first().copied().unwrap_or(0);
    let held = baseline * candidates + per_name.iter().skip(1).sum::<usize>();
    if held > limits::MAX_ROWS {
        bail!(
            "{}: {held} rows with the baseline's counted once for each of the {candidates} candidates \
             (each comparison holds its own copy), more than the {} analyze holds: compare fewer \
             candidates at once",
            data.files.join(", "),
            limits::MAX_ROWS
        );
    }
    Ok(())
}

/// Each candidate against the baseline with `compare`'s analysis at a fixed n.
pub fn compare_reports(data: &Dataset, options: &AnalyzeOptions) -> Vec<Analyzed<CompareReport>> {
    let margin = options.margin.unwrap_or(DEFAULT_MARGIN);
    let alpha = options.alpha.unwrap_or(DEFAULT_ALPHA);
    let hib = &options.higher_is_better;
    let candidates = data.names.len() - 1;
    let family = data.metrics.len() * candidates;
    let interval_alpha = alpha / family as f64;
    let spec = |i: usize| {
        let n = &data.names[i];
        CommandSpec {
            name: n.name.clone(),
            text: n.text.clone(),
            argv: Vec::new(),
            shell: false,
        }
    };
    (1..data.names.len())
        .map(|candidate| {
            let series: Vec<[Vec<f64>; 2]> = (0..data.metrics.len())
                .map(|m| [data.values(0, m), data.values(candidate, m)])
                .collect();
            let inputs: Vec<MetricInput> = data
                .metrics
                .iter()
                .zip(&series)
                .map(|((name, unit), [a, b])| {
                    let direction = hib.direction(name, *unit);
                    MetricInput {
                        name,
                        unit: *unit,
                        direction,
                        a,
                        b,
                        spawn_corrected: false,
                        look: evaluate(a, b, interval_alpha, margin, direction.higher_is_better()),
                        looks: 0,
                    }
                })
                .collect();
            let metrics = analysis::analyze(&inputs, margin, alpha, options.seed);
            let value_notes: Vec<compare::Note> = Unapplied::of(hib, &data.metrics)
                .map(compare::Note::Unapplied)
                .into_iter()
                .chain(analysis::non_positive(&inputs))
                .collect();
            // Only the two names' runs are made (every candidate's report
            // holds its own copy of the baseline's); collected in place, and
            // the slack of the larger ImportedRun given back.
            let mut runs: Vec<RunRecord> = runs(data, |n| n == 0 || n == candidate)
                .into_iter()
                .map(|r| RunRecord {
                    build: usize::from(r.name != 0),
                    ..r.record
                })
                .collect();
            runs.shrink_to_fit();
            let order = interleaving(data, candidate);
            let mut notes: Vec<Note> = order.note().into_iter().collect();
            notes.extend(data.notes.iter().cloned());
            if family > 1 {
                notes.push(Note::Bonferroni {
                    comparisons: family,
                    confidence: 1.0 - interval_alpha,
                });
            }
            let sizes: Vec<usize> = series
                .iter()
                .flat_map(|s| [s[0].len(), s[1].len()])
                .collect();
            let commands = [spec(0), spec(candidate)];
            let state = compare::State::Imported;
            let report = CompareReport {
                schema: crate::doc::Schema::Compare.name(),
                schema_version: compare::SCHEMA_VERSION,
                commands: commands.to_vec(),
                settings: CompareOptions {
                    metrics: Vec::new(),
                    higher_is_better: hib.clone(),
                    margin,
                    alpha,
                    warmup: 0,
                    min_runs: sizes.iter().copied().min().unwrap_or(0),
                    max_runs: sizes.iter().copied().max().unwrap_or(0),
                    max_time: Duration::ZERO,
                    env_jitter: false,
                    spawn_correction: false,
                    seed: options.seed,
                    command_line: options.command_line.clone(),
                    ..CompareOptions::for_commands(commands)
                },
                status: Status::new(state, None),
                stopped_by: None,
                environment: unknown_environment(&options.command_line),
                spawn_overhead_s: None,
                spawn_correction_applied: false,
                metrics,
                counters: CounterReport {
                    requested: false,
                    unavailable: None,
                    rows: Vec::new(),
                },
                simulation: None,
                notes: value_notes,
                elapsed_s: 0.0,
                runs,
                analyze: Some(Imported {
                    files: data.files.clone(),
                    format: data.format.clone(),
                    interval: IntervalKind::Fixed,
                    interleaved: order.interleaved(),
                    layouts: None,
                    stored: None,
                }),
            };
            Analyzed { report, notes }
        })
        .collect()
}
