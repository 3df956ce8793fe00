//! `ghostbench analyze`: arguments, and the glue to `analyze::analyze` and
//! the compare and layout reports.

use super::args::{DecisionArgs, ALPHA_HELP, DEFAULT_ALPHA, DEFAULT_MARGIN_PERCENT, MARGIN_HELP};
use super::exit;
use super::layout::EstimatorArg;
use super::output::{json, Format, OutputArgs};
use crate::analyze::{self, Analysis, AnalyzeOptions};
use crate::compare::render::{html, markdown, terminal};
use crate::layout::render::{html as layout_html, text as layout_report};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
// Without --margin and --alpha a re-analyzed report keeps its own.
#[command(
    mut_arg("margin", |a| a.help(format!("{MARGIN_HELP} [default: {DEFAULT_MARGIN_PERCENT}, or the report's own]"))),
    mut_arg("alpha", |a| a.help(format!("{ALPHA_HELP} [default: {DEFAULT_ALPHA}, or the report's own]"))),
)]
pub struct AnalyzeArgs {
    /// Measurements made elsewhere, read as one data set: CSV (name,value and
    /// optionally layout, metric, round), hyperfine --export-json; or one
    /// ghostbench compare/layout --json to re-analyze.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub decision: DecisionArgs,
    /// Per-layout estimate for data with layouts [default: median, or the report's own].
    #[arg(long, value_enum)]
    pub estimator: Option<EstimatorArg>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The report files `analyze` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

impl AnalyzeArgs {
    /// The command line as [`AnalyzeOptions`]: every value checked; what is
    /// not given stays `None`, for the report's own setting or the default.
    pub fn to_options(&self) -> Result<AnalyzeOptions> {
        Ok(AnalyzeOptions {
            higher_is_better: self.decision.higher_is_better,
            margin: self.decision.margin()?,
            alpha: self.decision.alpha()?,
            estimator: self.estimator.map(Into::into),
            seed: self.decision.seed.seed,
            command_line: std::env::args().collect(),
        })
    }
}

/// Analyze, print, write the report files. Bad input is an error (exit 1).
pub fn run(args: AnalyzeArgs) -> Result<i32> {
    let options = args.to_options()?;
    args.output.files().check("analyze", FORMATS)?;
    let analysis = analyze::analyze(&args.files, &options)?;
    let output = &args.output;
    let color = output.color();
    match &analysis {
        Analysis::Compare(reports) => {
            if args.estimator.is_some() {
                eprintln!("note: --estimator applies to data with layouts; these have none");
            }
            let text: Vec<String> = reports.iter().map(|r| terminal::render(r, color)).collect();
            print!("{}", text.join("\n"));
            output.files().write(|format| match format {
                Format::Json => match reports.as_slice() {
                    [one] => json(one),
                    many => json(many),
                },
                Format::Markdown => {
                    let text: Vec<String> = reports.iter().map(markdown::render).collect();
                    Ok(text.join("\n"))
                }
                Format::Html => Ok(match reports.as_slice() {
                    [one] => html::compare(one),
                    many => html::compares(many),
                }),
                Format::Sarif => Err(format.unsupported("analyze", FORMATS)),
            })?;
        }
        Analysis::Layout(report) => {
            print!("{}", layout_report::render(report, color));
            output.files().write(|format| match format {
                Format::Json => json(report.as_ref()),
                Format::Markdown => Ok(layout_report::markdown(report)),
                Format::Html => Ok(layout_html::layout(report)),
                Format::Sarif => Err(format.unsupported("analyze", FORMATS)),
            })?;
        }
    }
    Ok(exit::OK)
}
