//! `ghostbench probe`: arguments, and the glue to `probe::run` and the
//! reports. With the hidden `--child NAME` it is the isolated child
//! process of one probe, printing that probe's result as JSON.

use super::args::{parse_duration, SeedArgs};
use super::exit;
use super::finish::{write, Render};
use super::output::{json, Format, OutputArgs};
use crate::probe::render::{html, json as probe_json, text as report};
use crate::probe::{self, ProbeKind, ProbeOptions, ProbeReport};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProbeArg {
    SplitLock,
    Misaligned,
    CodeAlign,
    Tlb,
    Alloc,
    Alias,
}

impl From<ProbeArg> for ProbeKind {
    fn from(arg: ProbeArg) -> ProbeKind {
        match arg {
            ProbeArg::SplitLock => ProbeKind::SplitLock,
            ProbeArg::Misaligned => ProbeKind::Misaligned,
            ProbeArg::CodeAlign => ProbeKind::CodeAlign,
            ProbeArg::Tlb => ProbeKind::Tlb,
            ProbeArg::Alloc => ProbeKind::Alloc,
            ProbeArg::Alias => ProbeKind::Alias,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ProbeArgs {
    /// Run only these probes, comma-separated: split-lock, misaligned, code-align, tlb, alloc, alias.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PROBES")]
    pub only: Vec<ProbeArg>,
    /// Small sweeps: every probe together in under 3 s.
    #[arg(long)]
    pub quick: bool,
    /// Time bound of each probe (default 15s; 500ms with --quick).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub budget: Option<Duration>,
    #[command(flatten)]
    pub seed: SeedArgs,
    /// Internal: run this one probe here and print its result as JSON.
    #[arg(long, value_enum, hide = true)]
    pub child: Option<ProbeArg>,
    /// Internal: the child must not execute split locks (after a SIGBUS).
    #[arg(long, hide = true)]
    pub child_no_split_locks: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The report files `probe` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

impl ProbeArgs {
    pub fn to_options(&self) -> ProbeOptions {
        let only: Vec<ProbeKind> = if self.only.is_empty() {
            ProbeKind::ALL.to_vec()
        } else {
            self.only.iter().map(|&a| a.into()).collect()
        };
        ProbeOptions {
            only,
            quick: self.quick,
            budget: self.budget,
            seed: self.seed.seed,
            exe: None,
            command_line: super::output::command_line(),
        }
    }
}

pub fn run(args: ProbeArgs) -> Result<i32> {
    let options = args.to_options();
    if let Some(kind) = args.child {
        let mut settings = options.settings();
        settings.split_locks = !args.child_no_split_locks;
        // One JSON line a result, flushed: a checkpoint must reach the
        // parent before a step that may stall until the parent kills us.
        let print = |result: &probe::ProbeResult| -> Result<()> {
            use std::io::Write;
            let line =
                serde_json::to_string(result).context("cannot serialise the probe result")?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}").and_then(|()| out.flush())?;
            Ok(())
        };
        let mut checkpoint_error = None;
        let result = probe::run_one(kind.into(), &settings, &mut |partial| {
            if let Err(e) = print(partial) {
                checkpoint_error.get_or_insert(e);
            }
        });
        if let Some(e) = checkpoint_error {
            return Err(e);
        }
        print(&result)?;
        return Ok(exit::OK);
    }
    args.output.files().check("probe", FORMATS)?;
    execute(&options, &args.output)
}

/// Run the probes (each in a child process), print them, write the reports.
pub fn execute(options: &ProbeOptions, output: &OutputArgs) -> Result<i32> {
    let exe = std::env::current_exe().context("cannot find the ghostbench executable")?;
    let options = ProbeOptions {
        exe: Some(exe),
        ..options.clone()
    };
    let bar = output.progress_bar(options.only.len() as u64);
    let report = probe::run(&options, &mut |p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(format!("probe {}", p.probe));
    });
    bar.finish_and_clear();
    let report = report?;
    super::output::print_terminal(&report::render(&report, output.color()), output.color());
    write_outputs(&report, output)?;
    Ok(if report.any_failed() {
        let failed = report
            .probes
            .iter()
            .filter(|p| p.status == probe::Status::Failed)
            .count();
        super::output::print_stderr(&format!(
            "error: {failed} of {} probes failed (the report says how)",
            report.probes.len()
        ));
        exit::RUN_FAILED
    } else {
        exit::OK
    })
}

fn write_outputs(report: &ProbeReport, output: &OutputArgs) -> Result<()> {
    write("probe", FORMATS, output.files(), report)
}

impl Render for ProbeReport {
    fn json(&self) -> Result<String> {
        json(&probe_json::document(self))
    }
    fn markdown(&self) -> Option<Result<String>> {
        Some(Ok(report::markdown(self)))
    }
    fn html(&self) -> Option<Result<String>> {
        Some(Ok(html::probe(self)))
    }
}
