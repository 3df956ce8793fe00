//! `ghostbench layout`: arguments, and the glue to `layout::run` and the reports.

use super::exit;
use super::output::OutputArgs;
use crate::layout::experiment::Phase;
use crate::layout::render::{html, json as document, text as report};
use crate::layout::variants::Source;
use crate::layout::{self, BuildSpec, LayoutOptions, LayoutReport, State};
use crate::report::json;
use crate::run::metric::MetricSpec;
use crate::run::spawn;
use crate::stats::hierarchical::Estimator;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct LayoutArgs {
    /// NAME='TEMPLATE' (repeat; the first is the baseline). Placeholders: {cflags} {ldflags} {out} {dir}.
    #[arg(
        short = 'b',
        long = "build",
        value_name = "NAME=TEMPLATE",
        required = true
    )]
    pub builds: Vec<String>,
    /// How to run a build (placeholders {out} {dir}).
    #[arg(long = "run", value_name = "TEMPLATE", default_value = "{out}")]
    pub run: String,
    /// What to measure: wall, user, sys, rss, regex:PATTERN, regex@OPTIONS:PATTERN (options: first, last, median, stdout, stderr), json:POINTER, gbench (repeatable).
    #[arg(
        short = 'm',
        long = "metric",
        value_name = "METRIC",
        default_value = "wall"
    )]
    pub metrics: Vec<String>,
    /// Bigger values are better (throughput).
    #[arg(long)]
    pub higher_is_better: bool,
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
    /// Unmeasured rounds first.
    #[arg(short = 'w', long, default_value_t = 1)]
    pub warmup: usize,
    /// Perturbation sources (comma-separated): align, shift, shuffle, env (env is always on).
    #[arg(long, value_delimiter = ',', default_value = "align,shift,shuffle,env")]
    pub sources: Vec<String>,
    /// Parallel builds (default: the number of CPUs).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Per-variant estimate: the median of its runs, or the minimum.
    #[arg(long, value_enum, default_value_t = EstimatorArg::Median)]
    pub estimator: EstimatorArg,
    /// Equivalence margin in percent: within ±margin counts as SAME.
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub margin: f64,
    /// False-alarm rate over all metrics and builds (Bonferroni).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Run templates through `sh -c` (placeholders are shell-quoted).
    #[arg(long)]
    pub shell: bool,
    /// Kill a run after this long and stop (e.g. 10s).
    #[arg(long, value_name = "DURATION", value_parser = super::compare::parse_duration)]
    pub timeout: Option<Duration>,
    /// Stop after the round that ends past this much running time (builds not
    /// counted) and analyze the rounds completed (e.g. 5m).
    #[arg(long, value_name = "DURATION", value_parser = super::compare::parse_duration)]
    pub max_time: Option<Duration>,
    /// Pin the runs to this CPU.
    #[arg(long, value_name = "CPU")]
    pub pin: Option<usize>,
    /// Rebuild everything, ignoring the build cache.
    #[arg(long)]
    pub rebuild: bool,
    /// Seed for layouts' run order, jitter and bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Name the (up to N, default 10) hot functions whose placement differs between each build's default layout and the baseline's (callgrind ranks them when valgrind is installed).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10")]
    pub explain: Option<usize>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EstimatorArg {
    Median,
    Min,
}

impl LayoutArgs {
    pub fn to_options(&self) -> Result<LayoutOptions> {
        if let Some(cpu) = self.pin {
            spawn::check_pin(cpu)?;
        }
        let mut builds = Vec::new();
        for text in &self.builds {
            let (name, template) = text
                .split_once('=')
                .with_context(|| format!("--build {text:?}: expected NAME=TEMPLATE"))?;
            let name = name.trim();
            if name.is_empty() || template.trim().is_empty() {
                bail!("--build {text:?}: expected NAME=TEMPLATE with both parts");
            }
            if builds.iter().any(|b: &BuildSpec| b.name == name) {
                bail!("two builds are named {name:?}");
            }
            builds.push(BuildSpec {
                name: name.to_string(),
                template: template.to_string(),
            });
        }
        if builds.len() < 2 {
            bail!("give at least two --build NAME=TEMPLATE (the first is the baseline)");
        }
        let (layouts, max_layouts) = match self.layouts {
            LayoutsArg::Fixed(n) => (n, None),
            LayoutsArg::Auto => (
                AUTO_FIRST_BATCH.min(self.max_layouts),
                Some(self.max_layouts),
            ),
        };
        if layouts < layout::experiment::MIN_VARIANTS {
            bail!(
                "--layouts and --max-layouts must be at least {}",
                layout::experiment::MIN_VARIANTS
            );
        }
        if self.rounds < 1 {
            bail!("--rounds must be at least 1");
        }
        if !(0.0..100.0).contains(&self.margin) {
            bail!("--margin is a percentage in [0, 100), got {}", self.margin);
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            bail!("--alpha must be in (0, 1), got {}", self.alpha);
        }
        let sources = self
            .sources
            .iter()
            .map(|s| Source::parse(s).map_err(anyhow::Error::msg))
            .collect::<Result<Vec<_>>>()?;
        let metrics = self
            .metrics
            .iter()
            .map(|m| MetricSpec::parse(m))
            .collect::<Result<Vec<_>>>()?;
        Ok(LayoutOptions {
            builds,
            run_template: self.run.clone(),
            metrics,
            higher_is_better: self.higher_is_better,
            layouts,
            max_layouts,
            rounds: self.rounds,
            warmup: self.warmup,
            sources,
            jobs: self
                .jobs
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
            estimator: match self.estimator {
                EstimatorArg::Median => Estimator::Median,
                EstimatorArg::Min => Estimator::Min,
            },
            margin: self.margin / 100.0,
            alpha: self.alpha,
            shell: self.shell,
            timeout: self.timeout,
            max_time: self.max_time,
            pin: self.pin,
            rebuild: self.rebuild,
            work_root: PathBuf::from("."),
            seed: self.seed,
            command_line: std::env::args().collect(),
            explain: self.explain,
        })
    }
}

pub fn run(args: LayoutArgs) -> Result<i32> {
    let (report, code) = execute(&args.to_options()?, &args.output)?;
    drop(report);
    Ok(code)
}

/// Run an experiment with progress, print the matrix, write the report files.
pub fn execute(options: &LayoutOptions, output: &OutputArgs) -> Result<(LayoutReport, i32)> {
    spawn::install_interrupt_handler();
    let bar = output.progress_bar(1);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {prefix} (ETA {eta}) {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut phase = None;
    let report = layout::run(options, &mut |p| {
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
    print!("{}", report::render(&report, output.color()));
    if let Some(path) = &output.json {
        json::write(&document::document(&report), path)?;
    }
    if let Some(path) = &output.markdown {
        json::write_atomically(path, report::markdown(&report).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &output.html {
        json::write_atomically(path, html::layout(&report).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let code = match report.status.state {
        State::Finished | State::BudgetExhausted | State::Imported => exit::OK,
        State::BuildFailed => exit::BUILD_FAILED,
        State::RunFailed => exit::RUN_FAILED,
        State::Interrupted => exit::INTERRUPTED,
    };
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
