//! A layout report with nothing built or run yet: the experiment's settings
//! and environment, and empty results for the experiment to fill.

use crate::layout::analysis::comparisons;
use crate::layout::variants::SourceStatus;
use crate::layout::{LayoutOptions, LayoutReport, Settings, State, Status, Timing, SCHEMA_VERSION};
use crate::run::environment;
use std::path::Path;

/// A report with nothing built or run yet.
pub(super) fn new_report(
    options: &LayoutOptions,
    work_dir: &Path,
    sources: Vec<SourceStatus>,
) -> LayoutReport {
    LayoutReport {
        schema: crate::doc::Schema::Layout.name(),
        schema_version: SCHEMA_VERSION,
        builds: options.builds.clone(),
        settings: settings(options, work_dir),
        sources,
        variants: Vec::new(),
        used_seeds: Vec::new(),
        build_results: Vec::new(),
        status: Status::new(State::Finished, None),
        environment: environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line),
        matrix: Vec::new(),
        looks: Vec::new(),
        notes: Vec::new(),
        timing: Timing {
            build_s: 0.0,
            run_s: 0.0,
            explain_s: 0.0,
            total_s: 0.0,
        },
        load: crate::layout::MachineLoad {
            samples: Vec::new(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        },
        runs: Vec::new(),
        explain: None,
        analyze: None,
        shards: None,
    }
}

fn settings(o: &LayoutOptions, work_dir: &Path) -> Settings {
    let comparisons = comparisons(o.metrics.len(), o.builds.len());
    Settings {
        run_template: o.run_template.clone(),
        metrics: o.metrics.iter().map(|m| m.label()).collect(),
        higher_is_better: o.higher_is_better.clone(),
        layouts: o.layouts,
        max_layouts: o.max_layouts,
        rounds: o.rounds,
        warmup: o.warmup,
        jobs: o.jobs,
        estimator: o.estimator,
        margin: o.margin,
        alpha: o.alpha,
        confidence: 1.0 - o.alpha / comparisons as f64,
        max_time_s: o.max_time.map(|t| t.as_secs_f64()),
        shell: o.shell,
        seed: o.seed,
        work_dir: work_dir.display().to_string(),
    }
}
