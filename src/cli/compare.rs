//! `ghostbench compare`: arguments, and the glue to `compare::run` and the reports.

use super::exit;
use super::output::OutputArgs;
use crate::compare::render::{html, json as document, markdown, prose, terminal};
use crate::compare::{self, CompareOptions, CompareReport, Order, State};
use crate::report::json;
use crate::run::command::CommandSpec;
use crate::run::metric::MetricSpec;
use crate::run::spawn;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Baseline command (A). Split shell-style and exec'd directly unless --shell.
    pub command_a: String,
    /// Candidate command (B).
    pub command_b: String,
    /// Label for A, then for B (repeat the flag).
    #[arg(short = 'n', long = "name", value_name = "NAME")]
    pub names: Vec<String>,
    /// Run the commands through `sh -c` (pipes, globs, variables).
    #[arg(long)]
    pub shell: bool,
    /// What to measure: wall, user, sys, rss, regex:PATTERN, regex@OPTIONS:PATTERN (options: first, last, median, stdout, stderr), json:POINTER, gbench (repeatable).
    #[arg(
        short = 'm',
        long = "metric",
        value_name = "METRIC",
        default_value = "wall"
    )]
    pub metrics: Vec<String>,
    /// Bigger values are better (throughput), so FASTER means a larger B.
    #[arg(long)]
    pub higher_is_better: bool,
    /// Equivalence margin in percent: within ±margin counts as SAME.
    #[arg(long, value_name = "PERCENT", default_value_t = 1.0)]
    pub margin: f64,
    /// Total false-alarm rate over all looks and metrics.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
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
    /// Keep raw wall times instead of subtracting the process-start overhead.
    #[arg(long)]
    pub no_spawn_correction: bool,
    /// Pin the benchmarked commands to this CPU.
    #[arg(long, value_name = "CPU")]
    pub pin: Option<usize>,
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
    /// Kill a run after this long and stop (e.g. 10s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Hardware counters via perf_event_open, where the machine has a PMU.
    #[arg(long)]
    pub counters: bool,
    /// Run each command once more under cachegrind for simulated cache counters.
    #[arg(long)]
    pub simulate: bool,
    /// Seed for run order, jitter and bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also print the descriptive statistics (bootstrap CI, Hodges–Lehmann shift,
    /// Welch and Mann–Whitney p-values); they are not the verdict's interval.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    Abba,
    Random,
}

impl CompareArgs {
    pub fn to_options(&self) -> Result<CompareOptions> {
        if self.names.len() > 2 {
            bail!(
                "--name is given {} times; give it at most twice (A, then B)",
                self.names.len()
            );
        }
        if !(0.0..100.0).contains(&self.margin) {
            bail!("--margin is a percentage in [0, 100), got {}", self.margin);
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            bail!("--alpha must be in (0, 1), got {}", self.alpha);
        }
        if self.min_runs < 2 || self.max_runs < self.min_runs {
            bail!(
                "need 2 <= --min-runs <= --max-runs, got {} and {}",
                self.min_runs,
                self.max_runs
            );
        }
        if let Some(cpu) = self.pin {
            spawn::check_pin(cpu)?;
        }
        let name = |i: usize, default: &str| {
            self.names
                .get(i)
                .cloned()
                .unwrap_or_else(|| default.to_string())
        };
        let commands = [
            CommandSpec::parse(&name(0, "A"), &self.command_a, self.shell)?,
            CommandSpec::parse(&name(1, "B"), &self.command_b, self.shell)?,
        ];
        if commands[0].name == commands[1].name {
            bail!(
                "A and B need different names, both are {:?}",
                commands[0].name
            );
        }
        let metrics = self
            .metrics
            .iter()
            .map(|m| MetricSpec::parse(m))
            .collect::<Result<Vec<_>>>()?;
        let hook = |name: &str, text: &Option<String>| {
            text.as_deref()
                .map(|t| CommandSpec::parse(name, t, self.shell))
                .transpose()
        };
        let prepare = hook("prepare", &self.prepare)?;
        let setup = hook("setup", &self.setup)?;
        let cleanup = hook("cleanup", &self.cleanup)?;
        Ok(CompareOptions {
            commands,
            metrics,
            higher_is_better: self.higher_is_better,
            margin: self.margin / 100.0,
            alpha: self.alpha,
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
            pin: self.pin,
            prepare,
            setup,
            cleanup,
            ignore_failure: self.ignore_failure,
            input: self.input.clone(),
            timeout: self.timeout,
            counters: self.counters,
            simulate: self.simulate,
            seed: self.seed,
            command_line: std::env::args().collect(),
        })
    }
}

pub fn run(args: CompareArgs) -> Result<i32> {
    execute(&args.to_options()?, &args.output, args.verbose)
}

/// Run a comparison with a progress bar, print it, write the report files.
pub fn execute(options: &CompareOptions, output: &OutputArgs, verbose: bool) -> Result<i32> {
    spawn::install_interrupt_handler();
    let bar = output.progress_bar(2 * (options.max_runs + options.warmup) as u64);
    let report = compare::run(options, &mut |p| {
        bar.set_position(p.runs_done as u64);
        bar.set_message(prose::progress(p));
    });
    bar.finish_and_clear();
    let report = report?;
    print!(
        "{}",
        terminal::render_detailed(&report, output.color(), verbose)
    );
    write_outputs(&report, output)?;
    Ok(exit_code(&report))
}

/// Write `--json`, `--markdown` and `--html`, whatever the status.
fn write_outputs(report: &CompareReport, output: &OutputArgs) -> Result<()> {
    if let Some(path) = &output.json {
        json::write(&document::document(report), path)?;
    }
    if let Some(path) = &output.markdown {
        json::write_atomically(path, markdown::render(report).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &output.html {
        json::write_atomically(path, html::compare(report).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn exit_code(report: &CompareReport) -> i32 {
    match report.status.state {
        State::Decided | State::BudgetExhausted | State::Imported => exit::OK,
        State::Failed => exit::RUN_FAILED,
        State::Interrupted => exit::INTERRUPTED,
    }
}

/// "90", "90s", "1.5s", "500ms", "2m".
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = text.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a duration: {text:?} (try 90s, 2m, 500ms)"))?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(format!("not a duration: {text:?}"));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
