//! `ghostbench noise CMD`: arguments, the options they make, and the glue
//! to `noise::run`, the terminal text and the report files.

use super::args::{parse_duration, MetricArgs, RunArgs, SeedArgs};
use super::exit::{self, usage};
use super::finish::{write, Render};
use super::output::{json, Format, OutputArgs};
use crate::noise::render::{html, json as noise_json, text};
use crate::noise::{self, Factor, NoiseOptions, NoiseReport};
use crate::run::command::CommandSpec;
use crate::run::spawn;
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FactorArg {
    Aslr,
    Pin,
    Env,
    Heap,
    Fresh,
}

impl From<FactorArg> for Factor {
    fn from(arg: FactorArg) -> Factor {
        match arg {
            FactorArg::Aslr => Factor::Aslr,
            FactorArg::Pin => Factor::Pin,
            FactorArg::Env => Factor::Env,
            FactorArg::Heap => Factor::Heap,
            FactorArg::Fresh => Factor::Fresh,
        }
    }
}

/// The most rounds `--rounds` takes.
pub const MAX_ROUNDS: usize = 10_000;

#[derive(Debug, Clone, Args)]
pub struct NoiseArgs {
    /// The command to measure (one argument; quote it).
    pub command: String,
    /// What to measure: as compare's --metric, and user+sys (the two summed).
    #[arg(
        short = 'm',
        long = "metric",
        value_name = "METRIC",
        default_value = "wall"
    )]
    pub metrics: Vec<String>,
    /// Time bound of the measured rounds (at least two rounds run) [default: 45s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub budget: Option<Duration>,
    /// Most rounds (each runs every cell of the design once) [default: 40].
    #[arg(long, value_name = "N")]
    pub rounds: Option<usize>,
    /// Leave these factors out, comma-separated: aslr, pin, env, heap, fresh.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FACTORS")]
    pub skip: Vec<FactorArg>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub seed: SeedArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The report files `noise` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

impl NoiseArgs {
    pub fn to_options(&self) -> Result<NoiseOptions> {
        let defaults = NoiseOptions::default();
        let user_plus_sys = self.metrics.iter().any(|m| m == "user+sys");
        let metrics = MetricArgs {
            metrics: self
                .metrics
                .iter()
                .filter(|m| *m != "user+sys")
                .cloned()
                .collect(),
        }
        .specs()?;
        let max_rounds = self.rounds.unwrap_or(defaults.max_rounds);
        if !(noise::MIN_ROUNDS..=MAX_ROUNDS).contains(&max_rounds) {
            return Err(usage(format!(
                "--rounds {max_rounds}: must be {} to {MAX_ROUNDS}",
                noise::MIN_ROUNDS
            )));
        }
        Ok(NoiseOptions {
            command: CommandSpec::parse("command", &self.command, self.run.shell)?,
            metrics,
            user_plus_sys,
            budget: self.budget.unwrap_or(defaults.budget),
            max_rounds,
            pin: self.run.pin()?,
            timeout: self.run.timeout,
            seed: self.seed.seed,
            skip: self.skip.iter().map(|&f| f.into()).collect(),
            command_line: super::output::command_line(),
            ..defaults
        })
    }
}

pub fn run(args: NoiseArgs) -> Result<i32> {
    args.output.files().check("noise", FORMATS)?;
    let options = args.to_options()?;
    spawn::install_interrupt_handler();
    let bar = args.output.progress_bar(0);
    let report = noise::run(&options, &mut |p| {
        bar.set_length((p.cells * options.max_rounds) as u64);
        bar.set_position(p.runs_done as u64);
        bar.set_message(format!("round {}", p.round + 1));
    });
    bar.finish_and_clear();
    let report = report?;
    super::output::print_terminal(
        &text::terminal(&report, args.output.color()),
        args.output.color(),
    );
    let code = exit::of_noise(report.status.state);
    super::output::print_stop_cause(code, report.status.message.as_deref());
    write("noise", FORMATS, args.output.files(), &report)?;
    Ok(code)
}

impl Render for NoiseReport {
    fn json(&self) -> Result<String> {
        json(&noise_json::document(self))
    }
    fn markdown(&self) -> Option<Result<String>> {
        Some(Ok(text::markdown(self)))
    }
    fn html(&self) -> Option<Result<String>> {
        Some(Ok(html::page(self)))
    }
}
