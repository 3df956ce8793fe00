//! `ghostbench analyze`: arguments, and the glue to `analyze::run` and
//! `analyze::render` (the compare and layout reports with `analyze`'s notes).

use super::exit;
use super::layout::EstimatorArg;
use super::output::OutputArgs;
use crate::analyze::render::{self, Reports};
use crate::analyze::{self, AnalyzeOptions};
use crate::report::json;
use crate::stats::hierarchical::Estimator;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct AnalyzeArgs {
    /// Measurements made elsewhere, read as one data set: CSV (name,value and
    /// optionally layout, metric, round), hyperfine --export-json; or one
    /// ghostbench compare/layout --json to re-analyze.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Bigger values are better (throughput), so FASTER means a larger B.
    #[arg(long)]
    pub higher_is_better: bool,
    /// Equivalence margin in percent [default: 1, or the report's own].
    #[arg(long, value_name = "PERCENT")]
    pub margin: Option<f64>,
    /// False-alarm rate over all metrics and candidates [default: 0.05, or the report's own].
    #[arg(long)]
    pub alpha: Option<f64>,
    /// Per-layout estimate for data with layouts [default: median, or the report's own].
    #[arg(long, value_enum)]
    pub estimator: Option<EstimatorArg>,
    /// Seed for the descriptive bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl AnalyzeArgs {
    pub fn to_options(&self) -> Result<AnalyzeOptions> {
        if let Some(margin) = self.margin {
            if !(0.0..100.0).contains(&margin) {
                anyhow::bail!("--margin is a percentage in [0, 100), got {margin}");
            }
        }
        if let Some(alpha) = self.alpha {
            if !(alpha > 0.0 && alpha < 1.0) {
                anyhow::bail!("--alpha must be in (0, 1), got {alpha}");
            }
        }
        Ok(AnalyzeOptions {
            files: self.files.clone(),
            higher_is_better: self.higher_is_better,
            margin: self.margin.map(|m| m / 100.0),
            alpha: self.alpha,
            estimator: self.estimator.map(|e| match e {
                EstimatorArg::Median => Estimator::Median,
                EstimatorArg::Min => Estimator::Min,
            }),
            seed: self.seed,
            command_line: std::env::args().collect(),
        })
    }
}

/// Analyze, print, write the report files. Bad input is an error (exit 1).
pub fn run(args: AnalyzeArgs) -> Result<i32> {
    let options = args.to_options()?;
    let reports = render::reports(analyze::run(&options)?);
    if args.estimator.is_some() && matches!(reports, Reports::Compare(_)) {
        eprintln!("note: --estimator applies to data with layouts; these have none");
    }
    let output = &args.output;
    print!("{}", reports.terminal(output.color()));
    let write = |path: &PathBuf, text: String| {
        json::write_atomically(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    };
    if let Some(path) = &output.json {
        write(path, reports.json()?)?;
    }
    if let Some(path) = &output.markdown {
        write(path, reports.markdown())?;
    }
    if let Some(path) = &output.html {
        write(path, reports.html())?;
    }
    Ok(exit::OK)
}
