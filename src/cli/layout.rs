//! `ghostbench layout`: arguments, and the glue to `layout::run` and the reports.

use super::args::{bound, parse_duration, DecisionArgs, MetricArgs, RunArgs};
use super::emit::{self as emit_file, EmitArgs, PlanFacts};
use super::exit::{self, usage};
use super::finish::{finish, write, Gate, Keep, Render};
use super::output::{errln, outln};
use super::output::{json, Format, OutputArgs};
use super::store::{FailOnArgs, StoreArgs};
use crate::layout::render::{html, json as document, text as report};
use crate::layout::shard::{results_dir, Plan};
use crate::layout::shard_run::{self, RunPlace};
use crate::layout::variants::Source;
use crate::layout::{self, BuildSpec, LayoutOptions, LayoutReport, Phase};
use crate::limits::Count;
use crate::report::escape::shell;
use crate::run::spawn;
use crate::stats::hierarchical::Estimator;
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Args)]
// With --plan the plan fixes these; giving them too is a usage error naming the option.
#[command(
    mut_arg("metrics", |a| a.conflicts_with("plan")),
    mut_arg("higher_is_better", |a| a.conflicts_with("plan")),
    mut_arg("margin", |a| a.conflicts_with("plan")),
    mut_arg("alpha", |a| a.conflicts_with("plan")),
    mut_arg("seed", |a| a.conflicts_with("plan")),
    mut_arg("shell", |a| a.conflicts_with("plan")),
    mut_arg("timeout", |a| a.conflicts_with("plan")),
    mut_arg("layouts", |a| a.conflicts_with("plan")),
    mut_arg("max_layouts", |a| a.conflicts_with("plan")),
    mut_arg("rounds", |a| a.conflicts_with("plan")),
)]
pub struct LayoutArgs {
    /// NAME='TEMPLATE' (repeat; the first is the baseline). Placeholders: {cflags} {ldflags} {rustflags} {out} {dir}.
    #[arg(
        short = 'b',
        long = "build",
        value_name = "NAME=TEMPLATE",
        required_unless_present = "plan",
        conflicts_with = "plan"
    )]
    pub builds: Vec<String>,
    /// Write the experiment's plan to DIR/plan.json (for shards on other
    /// machines, docs/scale-out.md) and print the shard commands; builds and runs nothing.
    #[arg(long, value_name = "DIR", conflicts_with = "plan")]
    pub plan_only: Option<PathBuf>,
    /// With --plan-only: shards of the first wave [default: 2 variants per shard].
    #[arg(long, value_name = "N", requires = "plan_only")]
    pub shards: Option<usize>,
    /// Run a plan written by --plan-only: its first wave in this process, or with --shard one shard.
    #[arg(long, value_name = "PLAN")]
    pub plan: Option<PathBuf>,
    /// With --plan: run shard K of the plan's N and write DIR/results/shard-K.json.
    #[arg(long, value_name = "K/N", requires = "plan")]
    pub shard: Option<String>,
    /// With --plan: build in (and reuse identical builds from) CACHE instead of the current directory.
    #[arg(long, value_name = "CACHE", requires = "plan")]
    pub build_cache: Option<PathBuf>,
    #[command(flatten)]
    pub emit: EmitArgs,
    /// How to run a build (placeholders {out} {dir}).
    #[arg(
        long = "run",
        value_name = "TEMPLATE",
        default_value = "{out}",
        conflicts_with = "plan"
    )]
    pub run: String,
    #[command(flatten)]
    pub metric: MetricArgs,
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    /// Unmeasured rounds first.
    #[arg(short = 'w', long, default_value_t = 1, conflicts_with = "plan")]
    pub warmup: usize,
    /// Perturbation sources (comma-separated; env is always on; heap where the program uses the C library's allocator).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "SOURCES",
        default_value = "align,shift,shuffle,env,heap",
        conflicts_with = "plan"
    )]
    pub sources: Vec<SourceArg>,
    /// Per-variant estimate: the median of its runs, its least-disturbed run (min: the fastest; for a higher-is-better metric the highest), or the median ratio of back-to-back pairs of runs (paired: for a busy host).
    #[arg(long, value_enum, default_value_t = EstimatorArg::Median, conflicts_with = "plan")]
    pub estimator: EstimatorArg,
    #[command(flatten)]
    pub decision: DecisionArgs,
    #[command(flatten)]
    pub control: RunArgs,
    /// Stop after the round that ends past this much running time (builds not
    /// counted) and analyze the rounds completed (e.g. 5m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "plan")]
    pub max_time: Option<Duration>,
    /// Rebuild everything, ignoring the build cache.
    #[arg(long)]
    pub rebuild: bool,
    /// Name the (up to N, default 10) hot functions whose placement differs between each build's default layout and the baseline's (callgrind ranks them when valgrind is installed).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10", conflicts_with = "shard")]
    pub explain: Option<usize>,
    /// The microarchitecture model --explain judges placement by (its window size): skylake,
    /// icelake, zen or generic [default: the CPU running ghostbench].
    #[arg(long, value_name = "NAME", value_parser = super::code::parse_uarch)]
    pub uarch: Option<crate::code::uarch::Uarch>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub fail_on: FailOnArgs,
}

/// How many layouts, rounds and parallel builds (layout, demo).
#[derive(Debug, Clone, Args)]
pub struct ScheduleArgs {
    /// Layout variants per build, the default layout included: a count, or
    /// `auto` (8, then doubling until every comparison is decided or
    /// --max-layouts is reached).
    #[arg(long, default_value = "auto", value_parser = parse_layouts)]
    pub layouts: LayoutsArg,
    /// With `--layouts auto`: the most variants to measure.
    #[arg(long, default_value_t = 32)]
    pub max_layouts: usize,
    /// Measured runs of every (build, layout) pair.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Parallel builds (default: the number of CPUs).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Kill a build (one template at one layout) still running after this
    /// long; it fails like a build that exits non-zero (default 1h).
    #[arg(long, value_name = "DURATION", value_parser = super::args::parse_duration)]
    pub build_timeout: Option<Duration>,
}

impl ScheduleArgs {
    /// Set the layouts, rounds and jobs of `options`, checked.
    pub fn apply(&self, options: &mut LayoutOptions) -> Result<()> {
        let (layouts, max_layouts) = match self.layouts {
            LayoutsArg::Fixed(n) => (n, None),
            LayoutsArg::Auto => (
                AUTO_FIRST_BATCH.min(self.max_layouts),
                Some(self.max_layouts),
            ),
        };
        // Every bound in one place (crate::limits), before any work.
        let layouts = Count::Layouts.check(layouts).map_err(bound)?;
        if self.layouts == LayoutsArg::Auto {
            Count::MaxLayouts.check(self.max_layouts).map_err(bound)?;
        }
        Count::Rounds.check(self.rounds).map_err(bound)?;
        if let Some(jobs) = self.jobs {
            Count::Jobs.check(jobs).map_err(bound)?;
        }
        options.layouts = layouts;
        options.max_layouts = max_layouts;
        options.rounds = self.rounds;
        if let Some(jobs) = self.jobs {
            options.jobs = jobs;
        }
        if let Some(limit) = self.build_timeout {
            if limit.is_zero() {
                return Err(usage("--build-timeout must be more than 0"));
            }
            options.build_timeout = limit;
        }
        Ok(())
    }
}

/// One `--sources` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    Align,
    Shift,
    Shuffle,
    Env,
    Heap,
}

impl From<SourceArg> for Source {
    fn from(arg: SourceArg) -> Source {
        match arg {
            SourceArg::Align => Source::Align,
            SourceArg::Shift => Source::Shift,
            SourceArg::Shuffle => Source::Shuffle,
            SourceArg::Env => Source::Env,
            SourceArg::Heap => Source::Heap,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EstimatorArg {
    Median,
    Min,
    Paired,
}

impl From<EstimatorArg> for Estimator {
    fn from(arg: EstimatorArg) -> Estimator {
        match arg {
            EstimatorArg::Median => Estimator::Median,
            EstimatorArg::Min => Estimator::Min,
            EstimatorArg::Paired => Estimator::Paired,
        }
    }
}

/// The report files `layout` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

impl LayoutArgs {
    /// The command line as [`LayoutOptions`]: every value checked, the
    /// defaults left open taken from [`LayoutOptions::default`].
    pub fn to_options(&self) -> Result<LayoutOptions> {
        let pin = self.control.pin()?;
        let mut builds = Vec::new();
        for text in &self.builds {
            let (name, template) = text
                .split_once('=')
                .ok_or_else(|| usage(format!("--build {text:?}: expected NAME=TEMPLATE")))?;
            let name = name.trim();
            if name.is_empty() || template.trim().is_empty() {
                return Err(usage(format!(
                    "--build {text:?}: expected NAME=TEMPLATE with both parts"
                )));
            }
            if builds.iter().any(|b: &BuildSpec| b.name == name) {
                return Err(usage(format!("two builds are named {name:?}")));
            }
            builds.push(BuildSpec {
                name: name.to_string(),
                template: template.to_string(),
            });
        }
        if builds.len() < 2 {
            return Err(usage(
                "give at least two --build NAME=TEMPLATE (the first is the baseline)",
            ));
        }
        Count::Builds.check(builds.len()).map_err(bound)?;
        let defaults = LayoutOptions::default();
        let mut options = LayoutOptions {
            builds,
            run_template: self.run.clone(),
            metrics: self.metric.specs()?,
            higher_is_better: self.decision.higher_is_better()?,
            warmup: Count::Warmup.check(self.warmup).map_err(bound)?,
            sources: self.sources.iter().map(|&s| s.into()).collect(),
            estimator: self.estimator.into(),
            margin: self.decision.margin()?.unwrap_or(defaults.margin),
            alpha: self.decision.alpha()?.unwrap_or(defaults.alpha),
            shell: self.control.shell,
            timeout: self.control.timeout,
            max_time: self.max_time,
            pin,
            rebuild: self.rebuild,
            seed: self.decision.seed.seed,
            command_line: super::output::command_line(),
            explain: self.explain,
            uarch: super::code::choose_uarch(self.uarch.as_slice()),
            ..defaults
        };
        self.schedule.apply(&mut options)?;
        Ok(options)
    }
}

pub fn run(args: LayoutArgs) -> Result<i32> {
    args.fail_on.verdicts()?;
    args.output.files().check("layout", FORMATS)?;
    args.store.check(&args.output.files())?;
    if let Some(plan) = &args.plan {
        return run_plan(&args, plan);
    }
    if args.emit.engine().is_some() {
        return Err(usage(
            "--emit writes the job file of a plan: give --plan DIR/plan.json (written by --plan-only DIR)",
        ));
    }
    let options = args.to_options()?;
    if let Some(dir) = &args.plan_only {
        return plan_only(&options, dir, args.shards);
    }
    let (report, code) = run_with(&args.output, |progress| layout::run(&options, progress))?;
    end(&report, code, &args)
}

/// The report files, the record and the exit code of a layout experiment.
fn end(report: &LayoutReport, code: i32, args: &LayoutArgs) -> Result<i32> {
    let files = Files::new(report);
    finish(
        "layout",
        FORMATS,
        args.output.files(),
        &files,
        code,
        || Ok(serde_json::to_value(&files.document)?),
        &Keep {
            verb: "layout",
            store: &args.store,
            fail_on: &args.fail_on,
            baseline: None,
            must_store: false,
            gate: Gate::Apply,
        },
    )
}

/// A layout experiment's report files; its document built once, for the
/// file and the record.
pub struct Files<'a> {
    report: &'a LayoutReport,
    document: document::Document<'a>,
}

impl<'a> Files<'a> {
    pub fn new(report: &'a LayoutReport) -> Files<'a> {
        Files {
            report,
            document: document::document(report),
        }
    }
}

impl Render for Files<'_> {
    fn json(&self) -> Result<String> {
        json(&self.document)
    }
    fn markdown(&self) -> Option<Result<String>> {
        Some(Ok(report::markdown(self.report)))
    }
    fn html(&self) -> Option<Result<String>> {
        Some(Ok(html::layout(self.report)))
    }
}

/// `--plan-only DIR`: write the plan, say where, print the shard commands.
fn plan_only(options: &LayoutOptions, dir: &Path, shards: Option<usize>) -> Result<i32> {
    if let Some(shards) = shards {
        Count::Shards.check(shards).map_err(bound)?;
    }
    let plan = Plan::new(options, shards).map_err(|e| usage(format!("{e:#}")))?;
    let path = plan.write(dir)?;
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    let me = std::env::args()
        .next()
        .unwrap_or_else(|| "ghostbench".into());
    outln!(
        "plan written to {} ({} variants in {} shards of {}, hash {})",
        path.display(),
        plan.variants.len(),
        plan.shards,
        plan.variants_per_shard,
        &plan.hash[..12]
    );
    for wave in &plan.waves {
        let [first, last] = wave.shards;
        outln!(
            "wave {}: shards {first}..={last}{}",
            wave.wave,
            if wave.wave > 1 {
                " (only when the merge says another wave is needed)"
            } else {
                ""
            }
        );
    }
    let quoted = shell(&path.to_string_lossy());
    let me = shell(&me);
    let [first, last] = plan.waves[0].shards;
    outln!(
        "run shard K on any machine:  {me} layout --plan {quoted} --shard K/{}   (K = {first}..={last})",
        plan.shards
    );
    outln!("or the first wave here:      {me} layout --plan {quoted}");
    outln!(
        "then merge:                  {me} analyze {}",
        shell(&results_dir(&path).to_string_lossy())
    );
    Ok(exit::OK)
}

/// `--plan PLAN`: one shard (`--shard K/N`), or the first wave in this process.
fn run_plan(args: &LayoutArgs, path: &Path) -> Result<i32> {
    let plan = Plan::read(path)?;
    if args.emit.engine().is_some() {
        return emit_plan(args, &plan, path);
    }
    let place = RunPlace {
        work_root: args
            .build_cache
            .clone()
            .unwrap_or_else(|| PathBuf::from(".")),
        jobs: args
            .schedule
            .jobs
            .unwrap_or_else(|| LayoutOptions::default().jobs),
        pin: args.control.pin()?,
        rebuild: args.rebuild,
        command_line: super::output::command_line(),
    };
    let Some(shard) = &args.shard else {
        let (report, code) = run_with(&args.output, |progress| {
            shard_run::run_first_wave(&plan, &place, progress)
        })?;
        return end(&report, code, args);
    };
    let k = plan.parse_shard(shard)?;
    let mut written = None;
    let (report, code) = run_with(&args.output, |progress| {
        let (result, file, report) = shard_run::run_shard(
            &plan,
            path,
            k,
            &place,
            &|r| Ok(serde_json::to_value(document::document(r))?),
            progress,
        )?;
        written = Some((result, file));
        report.ok_or_else(|| {
            let cause = written
                .as_ref()
                .and_then(|(r, _)| r.cause.clone())
                .unwrap_or_default();
            anyhow::anyhow!("shard {k} failed: {cause}")
        })
    })
    .inspect_err(|_| {
        if let Some((_, file)) = &written {
            errln!("shard {k}: failed; wrote {}", file.display());
        }
    })?;
    // A shard is not stored: the merge of every shard is (`analyze DIR/results/`).
    write("layout", FORMATS, args.output.files(), &Files::new(&report))?;
    if let Some((result, file)) = &written {
        match &result.cause {
            None => errln!("shard {k}/{}: ok; wrote {}", plan.shards, file.display()),
            Some(cause) => errln!(
                "shard {k}/{}: failed ({cause}); wrote {}",
                plan.shards,
                file.display()
            ),
        }
    }
    Ok(code)
}

/// `--plan PLAN --emit ENGINE`: the job file of a wave (the first unless
/// `--wave`) in the plan's directory; runs nothing.
fn emit_plan(args: &LayoutArgs, plan: &Plan, path: &Path) -> Result<i32> {
    if args.shard.is_some() {
        return Err(usage(
            "--emit writes the job file that runs every shard; leave out --shard",
        ));
    }
    let facts = plan_facts(plan, path);
    let spec = args.emit.to_spec(&facts, 1, args.build_cache.as_deref())?;
    emit_file::write(&spec, &facts.dir)?;
    Ok(exit::OK)
}

/// What `--emit` needs from a plan read from `path`.
pub fn plan_facts(plan: &Plan, path: &Path) -> PlanFacts {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    PlanFacts {
        dir,
        hash: plan.hash.clone(),
        total_shards: plan.shards,
        waves: plan
            .waves
            .iter()
            .map(|w| (w.wave, w.shards[0], w.shards[1]))
            .collect(),
    }
}

/// Run an experiment with progress, print the matrix, write the report
/// files (nothing is stored: `demo`).
pub fn execute(options: &LayoutOptions, output: &OutputArgs) -> Result<(LayoutReport, i32)> {
    let (report, code) = run_with(output, |progress| layout::run(options, progress))?;
    write("layout", FORMATS, output.files(), &Files::new(&report))?;
    Ok((report, code))
}

/// Any way of running a layout experiment (`layout`, a plan, a shard) with
/// progress, the matrix printed; the caller writes the report files.
pub fn run_with(
    output: &OutputArgs,
    run: impl FnOnce(&mut dyn FnMut(&layout::Progress)) -> Result<LayoutReport>,
) -> Result<(LayoutReport, i32)> {
    spawn::install_interrupt_handler();
    let bar = output.progress_bar(1);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {prefix} (ETA {eta}) {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut phase = None;
    let report = run(&mut |p| {
        if phase != Some(p.phase) {
            phase = Some(p.phase);
            bar.reset();
            bar.set_prefix(match p.phase {
                Phase::Build => "builds",
                Phase::Run => "runs",
                Phase::Explain => "explain",
            });
        }
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(p.message.clone());
    });
    bar.finish_and_clear();
    let report = report?;
    super::output::print_terminal(&report::render(&report, output.color()), output.color());
    let code = exit::of_layout(report.status.state);
    super::output::print_stop_cause(code, report.status.message.as_deref());
    Ok((report, code))
}

/// The first batch of `--layouts auto`.
pub const AUTO_FIRST_BATCH: usize = 8;

/// `--layouts`: a fixed count or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutsArg {
    Fixed(usize),
    Auto,
}

pub fn parse_layouts(text: &str) -> Result<LayoutsArg, String> {
    if text == "auto" {
        return Ok(LayoutsArg::Auto);
    }
    text.parse()
        .map(LayoutsArg::Fixed)
        .map_err(|_| format!("expected a number of layouts or `auto`, got {text:?}"))
}
