//! Rows with a `layout` column, and re-analyzed layout reports: `layout`'s
//! analysis across layouts around the runs `analyze` read, with `analyze`'s
//! notes on the data as facts.

use super::input::Dataset;
use super::rows::{interleaving, runs, unknown_environment};
use super::{AnalyzeOptions, Analyzed, Interleaving, Note, DEFAULT_ALPHA, DEFAULT_MARGIN};
use crate::doc::{Imported, IntervalKind};
use crate::layout::{self, BuildSpec, LayoutOptions, LayoutReport, LayoutRun};
use crate::run::environment::Environment;
use crate::run::metric::Unit;
use crate::run::{RunRecord, Status};
use crate::stats::hierarchical::Estimator;
use crate::stats::verdict::Verdict;
use anyhow::{bail, Result};

/// Rows with a `layout` column: `layout`'s analysis across layouts.
///
/// Layouts that lack a value of some name and metric are left out (with a
/// note). The default layout is the one labelled `0` when it is complete,
/// else the first complete layout in file order; it becomes seed 0.
pub fn layout_report(data: &Dataset, options: &AnalyzeOptions) -> Result<Analyzed<LayoutReport>> {
    let files = data.files.join(", ");
    let labels = data.layouts.clone().unwrap_or_default();
    let complete = |l: usize| {
        (0..data.names.len()).all(|n| {
            (0..data.metrics.len()).all(|m| {
                data.rows
                    .iter()
                    .any(|r| r.name == n && r.metric == m && r.layout == Some(l))
            })
        })
    };
    let kept: Vec<usize> = (0..labels.len()).filter(|&l| complete(l)).collect();
    if kept.len() < 2 {
        bail!(
            "{files}: {} of {} layouts hold values of every name and metric; the analysis across layouts needs at least 2",
            kept.len(),
            labels.len()
        );
    }
    let default = kept
        .iter()
        .copied()
        .find(|&l| labels[l] == "0")
        .unwrap_or(kept[0]);
    let order: Vec<usize> = std::iter::once(default)
        .chain(kept.iter().copied().filter(|&l| l != default))
        .collect();
    let seed_of = |l: usize| order.iter().position(|&o| o == l).map(|s| s as u64);
    let seeds: Vec<u64> = (0..order.len() as u64).collect();
    let runs: Vec<LayoutRun> = runs(data, |_| true)
        .into_iter()
        .filter_map(|r| {
            Some(LayoutRun {
                build: r.name,
                seed: seed_of(r.layout?)?,
                record: r.record,
            })
        })
        .collect();
    let rounds = runs_per_cell(&runs, data.names.len(), seeds.len());
    let layout_options = LayoutOptions {
        builds: data
            .names
            .iter()
            .map(|n| BuildSpec {
                name: n.name.clone(),
                template: n.text.clone(),
            })
            .collect(),
        run_template: String::new(),
        metrics: Vec::new(),
        higher_is_better: options.higher_is_better.clone(),
        layouts: seeds.len(),
        max_layouts: None,
        rounds,
        warmup: 0,
        estimator: options.estimator.unwrap_or(Estimator::Median),
        margin: options.margin.unwrap_or(DEFAULT_MARGIN),
        alpha: options.alpha.unwrap_or(DEFAULT_ALPHA),
        seed: options.seed,
        command_line: options.command_line.clone(),
        ..LayoutOptions::default()
    };
    let ordering = (1..data.names.len())
        .map(|c| interleaving(data, c))
        .find(|i| *i != Interleaving::Interleaved)
        .unwrap_or(Interleaving::Interleaved);
    let mut notes: Vec<Note> = ordering.note().into_iter().collect();
    notes.extend(data.notes.iter().cloned());
    let left_out: Vec<String> = (0..labels.len())
        .filter(|l| !kept.contains(l))
        .map(|l| labels[l].clone())
        .collect();
    if !left_out.is_empty() {
        notes.push(Note::LayoutsLeftOut {
            left_out,
            layouts: labels.len(),
        });
    }
    notes.push(Note::DefaultLayout {
        label: labels[default].clone(),
    });
    let labels_by_seed = order.iter().map(|&l| labels[l].clone()).collect();
    let imported = Imported {
        files: data.files.clone(),
        format: data.format.clone(),
        interval: IntervalKind::Fixed,
        interleaved: ordering.interleaved(),
        layouts: Some(labels_by_seed),
        stored: None,
    };
    Ok(layout_from_runs(
        &layout_options,
        &data.metrics,
        seeds,
        runs,
        layout_options.alpha,
        unknown_environment(&options.command_line),
        Status::new(layout::State::Imported, None),
        notes,
        imported,
    ))
}

/// The most runs of one (name, layout, metric) cell.
fn runs_per_cell(runs: &[LayoutRun], builds: usize, seeds: usize) -> usize {
    let mut counts = vec![0usize; builds * seeds.max(1)];
    for run in runs {
        if let Some(c) = counts.get_mut(run.build * seeds + run.seed as usize) {
            *c += 1;
        }
    }
    counts.into_iter().max().unwrap_or(0)
}

/// A layout report around `layout`'s analysis of `runs`, its across-layouts
/// intervals at family-wise level `look_alpha` (with layout's Bonferroni note
/// when there is more than one comparison); `analyze`'s `notes` go beside it.
#[allow(clippy::too_many_arguments)]
pub fn layout_from_runs(
    options: &LayoutOptions,
    metric_names: &[(String, Unit)],
    seeds: Vec<u64>,
    runs: Vec<LayoutRun>,
    look_alpha: f64,
    environment: Environment,
    status: layout::Status,
    notes: Vec<Note>,
    imported: Imported,
) -> Analyzed<LayoutReport> {
    let matrix = layout::analysis::analyze_at(options, metric_names, &seeds, &runs, look_alpha);
    let comparisons = layout::analysis::comparisons(metric_names.len(), options.builds.len());
    let confidence = 1.0 - look_alpha / comparisons as f64;
    let undecided = matrix
        .iter()
        .filter_map(|row| row.comparison.as_ref())
        .filter(|c| c.verdict == Verdict::Unknown)
        .count();
    // The Bonferroni note is layout's own fact; `analyze`'s notes go before it.
    let layout_notes: Vec<layout::Note> = (comparisons > 1)
        .then_some(layout::Note::Bonferroni {
            comparisons,
            confidence,
            split_over_looks: false,
        })
        .into_iter()
        .chain(layout::experiment::unapplied(options, &matrix))
        .collect();
    let report = LayoutReport {
        schema: crate::doc::Schema::Layout.name(),
        schema_version: layout::SCHEMA_VERSION,
        builds: options.builds.clone(),
        settings: layout::Settings {
            run_template: options.run_template.clone(),
            metrics: metric_names.iter().map(|m| m.0.clone()).collect(),
            higher_is_better: options.higher_is_better.clone(),
            layouts: seeds.len(),
            max_layouts: options.max_layouts,
            rounds: options.rounds,
            warmup: options.warmup,
            jobs: 0,
            estimator: options.estimator,
            margin: options.margin,
            alpha: options.alpha,
            confidence,
            max_time_s: None,
            shell: false,
            seed: options.seed,
            work_dir: String::new(),
        },
        sources: Vec::new(),
        variants: Vec::new(),
        used_seeds: seeds.clone(),
        build_results: Vec::new(),
        status,
        environment,
        matrix,
        looks: vec![layout::Look {
            layouts: seeds.len(),
            confidence,
            undecided,
            added: layout::Added::Layouts {
                layouts: seeds.len(),
            },
        }],
        notes: layout_notes,
        timing: layout::Timing {
            build_s: 0.0,
            run_s: 0.0,
            explain_s: 0.0,
            total_s: 0.0,
        },
        load: layout::MachineLoad::default(),
        runs,
        explain: None,
        analyze: Some(imported),
        shards: None,
    };
    Analyzed { report, notes }
}

/// The metrics of the first measured run that has values, in its order.
pub(super) fn metric_names<'a>(
    records: impl Iterator<Item = &'a RunRecord>,
) -> Vec<(String, Unit)> {
    records
        .filter(|r| !r.warmup && !r.values.is_empty())
        .map(|r| r.values.iter().map(|v| (v.name.clone(), v.unit)).collect())
        .next()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(csv: &str) -> Dataset {
        super::super::input::csv("t.csv", csv).unwrap()
    }

    #[test]
    fn the_default_layout_is_the_one_labelled_0_else_the_first_complete() {
        let options = AnalyzeOptions::default();
        // Layout "x" lacks B: left out; "y" is first complete, no "0".
        let d = data("name,layout,value\nA,x,1\nA,y,1\nB,y,1.1\nA,z,1\nB,z,1.1\n");
        let Analyzed { report, notes } = layout_report(&d, &options).unwrap();
        let labels = report.analyze.as_ref().unwrap().layouts.clone().unwrap();
        assert_eq!(labels, vec!["y", "z"]);
        assert!(
            notes.contains(&Note::LayoutsLeftOut {
                left_out: vec!["x".into()],
                layouts: 3
            }),
            "{notes:?}"
        );
        assert!(notes.contains(&Note::DefaultLayout { label: "y".into() }));
        let d = data("name,layout,value\nA,y,1\nB,y,1.1\nA,0,1\nB,0,1.2\n");
        let report = layout_report(&d, &options).unwrap().report;
        assert_eq!(report.analyze.unwrap().layouts.unwrap(), vec!["0", "y"]);
        assert!((report.matrix[1].default_value - 1.2).abs() < 1e-12);
    }
}
