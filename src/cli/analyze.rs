//! `ghostbench analyze`: arguments, and the glue to `analyze::run` and
//! `analyze::render` (the compare and layout reports with `analyze`'s notes).

use super::args::{DecisionArgs, ALPHA_HELP, DEFAULT_ALPHA, DEFAULT_MARGIN_PERCENT, MARGIN_HELP};
use super::emit::{self as emit_file, EmitArgs};
use super::exit;
use super::finish::{keep, write, Gate, Keep, Render};
use super::layout::EstimatorArg;
use super::output::{errln, outln};
use super::output::{Content, Format, OutputArgs};
use super::store::{FailOnArgs, StoreArgs};
use crate::analyze::render::{self, Reports};
use crate::analyze::{self, AnalyzeOptions};
use crate::layout::shard::{Plan, PLAN_FILE};
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};

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
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub fail_on: FailOnArgs,
    /// Compare FILE (one name) with the stored runs of baseline NAME (see
    /// `compare --save-baseline`).
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// With DIR/results/: after the merge, the job file of the next wave
    /// (docs/scale-out.md).
    #[command(flatten)]
    pub emit: EmitArgs,
}

/// The report files `analyze` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

impl AnalyzeArgs {
    /// The command line as [`AnalyzeOptions`]: every value checked; what is
    /// not given stays `None`, for the report's own setting or the default.
    pub fn to_options(&self) -> Result<AnalyzeOptions> {
        Ok(AnalyzeOptions {
            files: self.files.clone(),
            higher_is_better: self.decision.higher_is_better()?,
            margin: self.decision.margin()?,
            alpha: self.decision.alpha()?,
            estimator: self.estimator.map(Into::into),
            seed: self.decision.seed.seed,
            command_line: super::output::command_line(),
        })
    }
}

/// Analyze, print, write the report files. Bad input is an error (exit 1).
pub fn run(args: AnalyzeArgs) -> Result<i32> {
    args.fail_on.verdicts()?;
    let options = args.to_options()?;
    args.output.files().check("analyze", FORMATS)?;
    args.store.check(&args.output.files())?;
    if let Some(name) = &args.baseline {
        return super::baseline::analyze(&options, name, &args.output, &args.store, &args.fail_on);
    }
    let results = match (args.emit.engine(), args.files.as_slice()) {
        (None, _) => None,
        (Some(_), [dir]) if dir.is_dir() => Some(dir.clone()),
        (Some(_), _) => {
            return Err(exit::usage(
                "--emit needs one shard results directory (analyze DIR/results/ --emit ENGINE)",
            ))
        }
    };
    let mut reports = render::reports(analyze::run(&options)?);
    if args.estimator.is_some() && matches!(reports, Reports::Compare(_)) {
        errln!("note: --estimator applies to data with layouts; these have none");
    }
    let output = &args.output;
    super::output::print_terminal(&reports.terminal(output.color()), output.color());
    write("analyze", FORMATS, output.files(), &reports)?;
    // The record (the whole document as a value, every run) is made only
    // when it is stored or --fail-on reads its verdicts; past
    // limits::MAX_STORED_RUNS it is made without the runs (about 2 KB each
    // while recorded).
    let most = crate::limits::MAX_STORED_RUNS;
    if args.store.location().is_some() && reports.run_count() > most {
        errln!("note: {}", render::runs_left_out(reports.run_count(), most));
    }
    let code = keep(
        exit::OK,
        || reports.stored_document(most),
        &Keep {
            verb: "analyze",
            store: &args.store,
            fail_on: &args.fail_on,
            baseline: None,
            must_store: false,
            gate: Gate::Apply,
        },
    )?;
    if let Some(results) = results {
        emit_next_wave(&args.emit, &results, &reports)?;
    }
    Ok(code)
}

impl Render for Reports {
    fn json(&self) -> Result<String> {
        Reports::json(self)
    }
    /// Straight into its file: with a million runs a side its text is 700 MB.
    fn json_content(&self) -> Result<Content<'_>> {
        Ok(Content::Written(Box::new(|path| self.write_json(path))))
    }
    fn markdown(&self) -> Option<Result<String>> {
        Some(Ok(Reports::markdown(self)))
    }
    fn html(&self) -> Option<Result<String>> {
        Some(Ok(Reports::html(self)))
    }
}

/// `analyze DIR/results/ --emit ENGINE`: the job file of the wave the merge
/// says is needed next (or of `--wave W`); nothing when none is needed.
fn emit_next_wave(args: &EmitArgs, results: &Path, reports: &Reports) -> Result<()> {
    let next = match reports {
        Reports::Layout(report) => report.shards.as_ref().and_then(|m| m.next_wave),
        Reports::Compare(_) => None,
    };
    let wave = match (args.wave, next) {
        (Some(wave), _) => wave,
        (None, Some(next)) => next.wave,
        (None, None) => {
            outln!("no further wave needed: nothing to emit");
            return Ok(());
        }
    };
    let dir = results
        .canonicalize()
        .unwrap_or_else(|_| results.to_path_buf())
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let plan_path = dir.join(PLAN_FILE);
    let plan = Plan::read(&plan_path)?;
    let facts = super::layout::plan_facts(&plan, &plan_path);
    let spec = args.to_spec(&facts, wave, None)?;
    emit_file::write(&spec, &facts.dir)?;
    Ok(())
}
