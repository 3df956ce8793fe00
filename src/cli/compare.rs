//! `ghostbench compare`: arguments, and the glue to `compare::run` and the reports.

use super::args::{bound, parse_duration, DecisionArgs, MetricArgs, RunArgs};
use super::baseline::Plan;
use super::exit::{self, UsageError};
use super::finish::{finish, Gate, Keep, Render};
use super::output::{json, Format, OutputArgs};
use super::store::{FailOnArgs, Naming, StoreArgs};
use crate::compare::render::{html, json as document, markdown, prose, terminal};
use crate::compare::{self, CompareOptions, CompareReport, Note, Order};
use crate::limits::Count;
use crate::run::command::CommandSpec;
use crate::run::spawn;
use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Baseline command (A). Split shell-style and exec'd directly unless --shell.
    pub command_a: String,
    /// Candidate command (B). Left out with --baseline NAME (CMD is compared
    /// with the stored baseline) or --save-baseline NAME (CMD alone is measured).
    pub command_b: Option<String>,
    /// Label for A, then for B (repeat the flag).
    #[arg(short = 'n', long = "name", value_name = "NAME")]
    pub names: Vec<String>,
    #[command(flatten)]
    pub metric: MetricArgs,
    #[command(flatten)]
    pub decision: DecisionArgs,
    /// Unmeasured runs of each command before measuring.
    #[arg(short = 'w', long, default_value_t = 1)]
    pub warmup: usize,
    /// Runs per command before the first look.
    #[arg(long, default_value_t = 5)]
    pub min_runs: usize,
    /// At most this many measured runs per command.
    #[arg(long, default_value_t = 100)]
    pub max_runs: usize,
    /// Stop after this long (e.g. 90, 90s, 2m, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub max_time: Duration,
    /// Order of A and B inside each round.
    #[arg(long, value_enum, default_value_t = OrderArg::Abba)]
    pub order: OrderArg,
    /// Do not vary the environment size between runs.
    #[arg(long)]
    pub no_env_jitter: bool,
    /// Turn ASLR off for every run (ADDR_NO_RANDOMIZE through personality(2),
    /// as `setarch -R`): less noise, but one memory layout (see `layout`).
    #[arg(long)]
    pub no_aslr: bool,
    /// Keep raw wall times instead of subtracting the process-start overhead.
    #[arg(long)]
    pub no_spawn_correction: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Run this command before every run (not timed).
    #[arg(long, value_name = "CMD")]
    pub prepare: Option<String>,
    /// Run this command once before the first run (not timed).
    #[arg(long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Run this command once after the last run, also after a failure (not after Ctrl-C).
    #[arg(long, value_name = "CMD")]
    pub cleanup: Option<String>,
    /// Record non-zero exit codes instead of stopping (crashes and timeouts still stop).
    #[arg(short = 'i', long)]
    pub ignore_failure: bool,
    /// Feed this file to every run on stdin (default: /dev/null).
    #[arg(long, value_name = "FILE")]
    pub input: Option<std::path::PathBuf>,
    /// Hardware counters via perf_event_open, where the machine has a PMU.
    #[arg(long)]
    pub counters: bool,
    /// Run each command once more under cachegrind for simulated cache counters.
    #[arg(long)]
    pub simulate: bool,
    /// Also print the descriptive statistics (bootstrap CI, Hodges–Lehmann shift,
    /// Welch and Mann–Whitney p-values); they are not the verdict's interval.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub fail_on: FailOnArgs,
    /// Store the runs under NAME as a baseline: of the one command given, or of A.
    #[arg(long, value_name = "NAME", conflicts_with = "baseline")]
    pub save_baseline: Option<String>,
    /// Compare the one command given with baseline NAME: its saved program
    /// run again, interleaved; else its stored runs (the report says which).
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// With --baseline: compare with stored runs even when the CPU model or
    /// kernel differs from the baseline's.
    #[arg(long, requires = "baseline")]
    pub force: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    Abba,
    Random,
}

/// The report files `compare` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

impl CompareArgs {
    /// The command line as [`CompareOptions`]: every value checked, the
    /// defaults left open taken from [`CompareOptions::for_commands`].
    pub fn to_options(&self) -> Result<CompareOptions> {
        if self.names.len() > 2 {
            bail!(
                "--name is given {} times; give it at most twice (A, then B)",
                self.names.len()
            );
        }
        Count::Runs.check(self.max_runs).map_err(bound)?;
        Count::Warmup.check(self.warmup).map_err(bound)?;
        if self.min_runs < 2 || self.max_runs < self.min_runs {
            bail!(
                "need 2 <= --min-runs <= --max-runs, got {} and {}",
                self.min_runs,
                self.max_runs
            );
        }
        let pin = self.run.pin()?;
        let shell = self.run.shell;
        let name = |i: usize, default: &str| {
            self.names
                .get(i)
                .cloned()
                .unwrap_or_else(|| default.to_string())
        };
        let first = match (&self.baseline, &self.save_baseline) {
            (_, Some(saved)) if self.command_b.is_none() => name(0, saved),
            (Some(_), _) => name(0, "current"),
            _ => name(0, "A"),
        };
        let a = CommandSpec::parse(&first, &self.command_a, shell)?;
        // One command alone: B is a stand-in that is never run.
        let b = match &self.command_b {
            Some(text) => CommandSpec::parse(&name(1, "B"), text, shell)?,
            None => CommandSpec {
                name: format!("{first} (unused)"),
                ..a.clone()
            },
        };
        let commands = [a, b];
        if commands[0].name == commands[1].name {
            bail!(
                "A and B need different names, both are {:?}",
                commands[0].name
            );
        }
        let hook = |name: &str, text: &Option<String>| {
            text.as_deref()
                .map(|t| CommandSpec::parse(name, t, shell))
                .transpose()
        };
        let defaults = CompareOptions::for_commands(commands);
        Ok(CompareOptions {
            metrics: self.metric.specs()?,
            higher_is_better: self.decision.higher_is_better()?,
            margin: self.decision.margin()?.unwrap_or(defaults.margin),
            alpha: self.decision.alpha()?.unwrap_or(defaults.alpha),
            warmup: self.warmup,
            min_runs: self.min_runs,
            max_runs: self.max_runs,
            max_time: self.max_time,
            order: match self.order {
                OrderArg::Abba => Order::Abba,
                OrderArg::Random => Order::Random,
            },
            env_jitter: !self.no_env_jitter,
            spawn_correction: !self.no_spawn_correction,
            pin,
            no_aslr: self.no_aslr,
            prepare: hook("prepare", &self.prepare)?,
            setup: hook("setup", &self.setup)?,
            cleanup: hook("cleanup", &self.cleanup)?,
            ignore_failure: self.ignore_failure,
            input: self.input.clone(),
            timeout: self.run.timeout,
            counters: self.counters,
            simulate: self.simulate,
            seed: self.decision.seed.seed,
            command_line: super::output::command_line(),
            ..defaults
        })
    }
}

pub fn run(args: CompareArgs) -> Result<i32> {
    args.fail_on.verdicts()?;
    match (&args.baseline, &args.command_b) {
        (Some(_), Some(_)) => {
            return Err(UsageError(
                "--baseline NAME compares one command with the stored baseline; give one command"
                    .into(),
            )
            .into())
        }
        (None, None) if args.save_baseline.is_none() => {
            return Err(UsageError(
                "give two commands (A and B), or one with --baseline NAME or --save-baseline NAME"
                    .into(),
            )
            .into())
        }
        _ => {}
    }
    let options = args.to_options()?;
    args.output.files().check("compare", FORMATS)?;
    args.store.check(&args.output.files())?;
    if let Some(name) = &args.baseline {
        let gate = super::baseline::Gate {
            name,
            force: args.force,
            output: &args.output,
            store: &args.store,
            fail_on: &args.fail_on,
        };
        let (options, note) = match gate.plan(&options)? {
            Plan::Interleaved(options, note) => (options, note),
            Plan::Stored(baseline, why) => return gate.stored(&options, &baseline, why),
        };
        let (report, code) = execute(&options, &args.output, args.verbose, vec![note])?;
        return end(&report, code, &args, None);
    }
    if let (None, Some(name)) = (&args.command_b, &args.save_baseline) {
        return super::baseline::save_baseline(&options, name, &args.output, &args.store);
    }
    // What re-running A needs, kept before it is measured.
    let rerun = args
        .save_baseline
        .as_deref()
        .and_then(|name| super::baseline::keep(&options.commands[0], &args.store, name));
    let (report, code) = execute(&options, &args.output, args.verbose, Vec::new())?;
    let baseline = args
        .save_baseline
        .as_deref()
        .map(|name| (name, 0, rerun.as_deref()));
    // A failed run's A is no baseline; its result is still stored.
    let baseline = baseline.filter(|_| code == exit::OK);
    end(&report, code, &args, baseline)
}

/// The report files, the record and the exit code of a comparison.
fn end(
    report: &CompareReport,
    code: i32,
    args: &CompareArgs,
    baseline: Option<Naming>,
) -> Result<i32> {
    let files = Files::new(report);
    finish(
        "compare",
        FORMATS,
        args.output.files(),
        &files,
        code,
        || Ok(serde_json::to_value(&files.document)?),
        &Keep {
            verb: "compare",
            store: &args.store,
            fail_on: &args.fail_on,
            baseline,
            must_store: false,
            gate: Gate::Apply,
        },
    )
}

/// A comparison's report files; its document built once, for the file and the record.
pub struct Files<'a> {
    report: &'a CompareReport,
    document: document::Document<'a>,
}

impl<'a> Files<'a> {
    pub fn new(report: &'a CompareReport) -> Files<'a> {
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
        Some(Ok(markdown::render(self.report)))
    }
    fn html(&self) -> Option<Result<String>> {
        Some(Ok(html::compare(self.report)))
    }
}

/// Run a comparison with a progress bar, print it with `notes` first among
/// its notes; the caller writes the report files (`end`).
pub fn execute(
    options: &CompareOptions,
    output: &OutputArgs,
    verbose: bool,
    notes: Vec<Note>,
) -> Result<(CompareReport, i32)> {
    spawn::install_interrupt_handler();
    let bar = output.progress_bar(2 * (options.max_runs + options.warmup) as u64);
    let report = compare::run(options, &mut |p| {
        bar.set_position(p.runs_done as u64);
        bar.set_message(prose::progress(p));
    });
    bar.finish_and_clear();
    let mut report = report?;
    report.notes.splice(0..0, notes);
    super::output::print_terminal(
        &terminal::render_detailed(&report, output.color(), verbose),
        output.color(),
    );
    let code = exit::of_compare(&report.status.state);
    super::output::print_stop_cause(code, report.status.message.as_deref());
    Ok((report, code))
}
