//! `ghostbench code`: arguments, and the glue to `code::run` and the reports.

use super::exit;
use super::finish::{write, Render};
use super::output::{json, Format, OutputArgs};
use crate::code::placement::Geometry;
use crate::code::uarch::{self, Choice, Uarch, Why};
use crate::code::{self, CodeOptions, CodeReport};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
// No HTML report: `--html` is not offered (and is a usage error).
#[command(mut_arg("html", |a| a.hide(true)))]
pub struct CodeArgs {
    /// The x86-64 ELF binary, shared object or object file to analyze.
    pub binary: PathBuf,
    /// Only functions whose demangled name matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub functions: Option<String>,
    /// Rank functions by a profile: a callgrind or cachegrind output file, or `perf script` text.
    #[arg(long, value_name = "PROFILE")]
    pub hot: Option<PathBuf>,
    /// Compare with another build of the same program: list the functions whose placement changed.
    #[arg(long, value_name = "OTHER")]
    pub diff: Option<PathBuf>,
    /// Cache-line size in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 64)]
    pub line: u64,
    /// DSB (uop-cache) window size in bytes, for every model [default: the model's: 32 for
    /// skylake and generic, 64 for icelake and zen].
    #[arg(long, value_name = "BYTES")]
    pub window: Option<u64>,
    /// Judge by these microarchitecture models, one column each: skylake, icelake, zen,
    /// generic [default: the CPU running ghostbench, from /proc/cpuinfo or cpuid].
    #[arg(long, value_name = "NAME[,NAME…]", value_delimiter = ',', value_parser = parse_uarch)]
    pub uarch: Vec<Uarch>,
    /// List every JCC-erratum spot (with its disassembly) of the listed functions.
    #[arg(short, long)]
    pub verbose: bool,
    /// Rows in each terminal table; 0 lists all (the JSON always has all).
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub limit: usize,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The report files `code` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown];

pub fn parse_uarch(name: &str) -> Result<Uarch, String> {
    Uarch::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Uarch::ALL.iter().map(|u| u.name()).collect();
        format!("unknown model {name:?} (known: {})", names.join(", "))
    })
}

/// The models named by `--uarch` (each once, in the order given), else the
/// running CPU's.
pub fn choose_uarch(named: &[Uarch]) -> Choice {
    if named.is_empty() {
        return uarch::detect();
    }
    let mut models = Vec::new();
    for u in named {
        if !models.contains(u) {
            models.push(*u);
        }
    }
    Choice {
        models,
        why: Why::Requested,
    }
}

impl CodeArgs {
    pub fn to_options(&self) -> Result<CodeOptions> {
        let functions = self
            .functions
            .as_deref()
            .map(|re| {
                regex::Regex::new(re).with_context(|| format!("bad --functions regex {re:?}"))
            })
            .transpose()?;
        Ok(CodeOptions {
            binary: self.binary.clone(),
            functions,
            hot: self.hot.clone(),
            diff: self.diff.clone(),
            line: Geometry::new(self.line, self.window.unwrap_or(32))?.line,
            window: self
                .window
                .map(|w| Geometry::new(self.line, w).map(|g| g.window))
                .transpose()?,
            uarch: choose_uarch(&self.uarch),
            verbose: self.verbose,
            limit: self.limit,
            command_line: super::output::command_line(),
        })
    }
}

pub fn run(args: CodeArgs) -> Result<i32> {
    let options = args.to_options()?;
    args.output.files().check("code", FORMATS)?;
    let bar = args.output.progress_bar(0);
    bar.set_message("functions disassembled");
    let report = code::run(&options, &|p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
    });
    bar.finish_and_clear();
    let report = report?;
    for warning in &report.warnings {
        super::output::print_stderr(&format!("warning: {warning}"));
    }
    super::output::print_terminal(
        &crate::code::render::render(&report, options.verbose, options.limit, args.output.color()),
        args.output.color(),
    );
    write_outputs(&report, &options, &args.output)?;
    // The process ends next: freeing a report of a large binary (hundreds of
    // thousands of small allocations) would only add time.
    std::mem::forget(report);
    Ok(exit::OK)
}

fn write_outputs(report: &CodeReport, options: &CodeOptions, output: &OutputArgs) -> Result<()> {
    write("code", FORMATS, output.files(), &Files { report, options })
}

/// A `code` report's files.
struct Files<'a> {
    report: &'a CodeReport,
    options: &'a CodeOptions,
}

impl Render for Files<'_> {
    fn json(&self) -> Result<String> {
        json(self.report)
    }
    fn markdown(&self) -> Option<Result<String>> {
        Some(Ok(crate::code::render::markdown(
            self.report,
            self.options.verbose,
            self.options.limit,
        )))
    }
}
