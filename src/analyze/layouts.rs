//! Rows with a `layout` column, and re-analyzed layout reports: `layout`'s
//! analysis across layouts around the runs `analyze` read.

use super::input::Dataset;
use super::{
    interleaving, runs, unknown_environment, AnalyzeOptions, DEFAULT_ALPHA, DEFAULT_MARGIN,
};
use crate::layout::{self, BuildSpec, LayoutOptions, LayoutReport, LayoutRun};
use crate::run::environment::Environment;
use crate::run::metric::Unit;
use crate::run::{Imported, Status};
use crate::stats::hierarchical::Estimator;
use crate::stats::verdict::Verdict;
use anyhow::{bail, Result};

/// Rows with a `layout` column: `layout`'s analysis across layouts.
///
/// Layouts that lack a value of some name and metric are left out (with a
/// note). The default layout is the one labelled `0` when it is complete,
/// else the first complete layout in file order; it becomes seed 0.
pub fn layout_report(data: &Dataset, options: &AnalyzeOptions) -> Result<LayoutReport> {
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
    let runs: Vec<LayoutRun> = runs(data)
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
        higher_is_better: options.higher_is_better,
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
    let (interleaved, caution) = (1..data.names.len())
        .map(|c| interleaving(data, c))
        .find(|(i, _)| *i != Some(true))
        .unwrap_or((Some(true), None));
    let mut notes: Vec<String> = caution.into_iter().collect();
    notes.extend(data.notes.iter().cloned());
    let dropped: Vec<&str> = (0..labels.len())
        .filter(|l| !kept.contains(l))
        .map(|l| labels[l].as_str())
        .collect();
    if !dropped.is_empty() {
        notes.push(format!(
            "{} of {} layouts left out because some name or metric has no value there: {}",
            dropped.len(),
            labels.len(),
            dropped.join(", ")
        ));
    }
    notes.push(format!(
        "default layout: {:?} ({})",
        labels[default],
        if labels[default] == "0" {
            "labelled 0"
        } else {
            "no complete layout labelled 0: the first in file order"
        }
    ));
    let labels_by_seed = order.iter().map(|&l| labels[l].clone()).collect();
    let imported = Imported {
        files: data.files.clone(),
        format: data.format.clone(),
        interval: "fixed".into(),
        interleaved,
        layouts: Some(labels_by_seed),
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
/// intervals at family-wise level `look_alpha`.
#[allow(clippy::too_many_arguments)]
pub fn layout_from_runs(
    options: &LayoutOptions,
    metric_names: &[(String, Unit)],
    seeds: Vec<u64>,
    runs: Vec<LayoutRun>,
    look_alpha: f64,
    environment: Environment,
    status: layout::Status,
    notes: Vec<String>,
    imported: Imported,
) -> LayoutReport {
    let matrix = layout::analysis::analyze_at(options, metric_names, &seeds, &runs, look_alpha);
    let comparisons = layout::analysis::comparisons(metric_names.len(), options.builds.len());
    let confidence = 1.0 - look_alpha / comparisons as f64;
    let undecided = matrix
        .iter()
        .filter_map(|row| row.comparison.as_ref())
        .filter(|c| c.verdict == Verdict::Unknown)
        .count();
    let mut notes: Vec<layout::Note> = notes.into_iter().map(layout::Note::Text).collect();
    if comparisons > 1 {
        notes.push(layout::Note::Bonferroni {
            comparisons,
            confidence,
            split_over_looks: false,
        });
    }
    LayoutReport {
        schema: "ghostbench.layout",
        schema_version: layout::SCHEMA_VERSION,
        builds: options.builds.clone(),
        settings: layout::Settings {
            run_template: options.run_template.clone(),
            metrics: metric_names.iter().map(|m| m.0.clone()).collect(),
            higher_is_better: options.higher_is_better,
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
        }],
        notes,
        timing: layout::Timing {
            build_s: 0.0,
            run_s: 0.0,
            explain_s: 0.0,
            total_s: 0.0,
        },
        runs,
        explain: None,
        analyze: Some(imported),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(csv: &str) -> Dataset {
        super::super::input::csv("t.csv", csv).unwrap()
    }

    #[test]
    fn the_default_layout_is_the_one_labelled_0_else_the_first_complete() {
        let options = AnalyzeOptions {
            higher_is_better: false,
            margin: None,
            alpha: None,
            estimator: None,
            seed: 1,
            command_line: Vec::new(),
        };
        // Layout "x" lacks B: left out; "y" is first complete, no "0".
        let d = data("name,layout,value\nA,x,1\nA,y,1\nB,y,1.1\nA,z,1\nB,z,1.1\n");
        let report = layout_report(&d, &options).unwrap();
        let labels = report.analyze.as_ref().unwrap().layouts.clone().unwrap();
        assert_eq!(labels, vec!["y", "z"]);
        assert!(
            report.notes.iter().any(|n| matches!(n,
                layout::Note::Text(t) if t.contains("1 of 3 layouts left out"))),
            "{:?}",
            report.notes
        );
        let d = data("name,layout,value\nA,y,1\nB,y,1.1\nA,0,1\nB,0,1.2\n");
        let report = layout_report(&d, &options).unwrap();
        assert_eq!(report.analyze.unwrap().layouts.unwrap(), vec!["0", "y"]);
        assert!((report.matrix[1].default_value - 1.2).abs() < 1e-12);
    }
}
