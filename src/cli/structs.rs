//! `ghostbench structs`: arguments, and the glue to `structs::run` and the reports.

use super::exit;
use super::finish::{write, Render};
use super::output::errln;
use super::output::{json, Format, OutputArgs};
use crate::structs::elf::InputError;
use crate::structs::render::{json as document, sarif, text};
use crate::structs::{self, StructsOptions};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
// No Markdown or HTML report: those flags are not offered (and are usage errors).
#[command(mut_arg("markdown", |a| a.hide(true)), mut_arg("html", |a| a.hide(true)))]
pub struct StructsArgs {
    /// ELF binary or object with DWARF (split DWARF: .dwo files or BINARY.dwp are found).
    pub binary: PathBuf,
    /// Only structs with this name (qualified or not), or matching this anchored regex.
    #[arg(long = "struct", value_name = "NAME|REGEX")]
    pub filter: Option<String>,
    /// List only the hazards, worst first, instead of the layouts, and end with
    /// their counts by kind and severity; with --struct, each one's evidence too.
    #[arg(long)]
    pub hazards: bool,
    /// List only the worst N hazards (in the text, --json and --sarif); the
    /// counts still cover every hazard found.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Cache-line size in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 64)]
    pub line: u64,
    /// Write the hazards as SARIF 2.1.0 for CI annotations.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Show a cache-aware member order with its new size.
    #[arg(long)]
    pub suggest: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The report files `structs` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Sarif];

impl StructsArgs {
    /// `--json` and `--sarif`.
    fn files(&self) -> super::output::ReportFiles {
        self.output.files().with(Format::Sarif, self.sarif.as_ref())
    }

    pub fn to_options(&self) -> StructsOptions {
        StructsOptions {
            binary: self.binary.clone(),
            filter: self.filter.clone(),
            line: self.line,
            suggest: self.suggest,
            top: self.top,
        }
    }
}

pub fn run(args: StructsArgs) -> Result<i32> {
    let view = View {
        hazards_only: args.hazards,
        sarif: args.sarif.clone(),
    };
    args.files().check("structs", FORMATS)?;
    execute(&args.to_options(), &view, &args.output)
}

/// What is shown of a report, beside the options that make it.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// `--hazards`: list only the hazards, worst first.
    pub hazards_only: bool,
    /// `--sarif FILE`.
    pub sarif: Option<PathBuf>,
}

/// Analyze with a progress bar, print the report, write the report files.
pub fn execute(options: &StructsOptions, view: &View, output: &OutputArgs) -> Result<i32> {
    let bar = output.progress_bar(0);
    bar.set_message("compilation units read");
    let report = structs::run(options, &|p| {
        if p.phase == structs::Phase::Units {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
        }
    });
    bar.finish_and_clear();
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            // Input the tool cannot read gets one line and its own exit code.
            if let Some(input) = e.downcast_ref::<InputError>() {
                super::output::print_stderr(&format!("error: {input}"));
                return Ok(match input {
                    InputError::NoDebugInfo { .. } => exit::NO_DEBUG_INFO,
                    _ => exit::ERROR,
                });
            }
            return Err(e);
        }
    };
    if options.filter.is_some() && report.structs.is_empty() {
        errln!(
            "error: no struct named or matching {:?} in {}",
            options.filter.as_deref().unwrap_or_default(),
            options.binary.display()
        );
        return Ok(exit::ERROR);
    }
    let color = output.color();
    let shown = text::Shown {
        hazards_only: view.hazards_only,
        // One struct's (or a few structs') findings: their evidence in full.
        evidence: view.hazards_only && options.filter.is_some(),
    };
    let files = output.files().with(Format::Sarif, view.sarif.as_ref());
    // The terminal text and the report files are independent: made side by side.
    let (text, written) = rayon::join(
        || text::render(&report, shown, color),
        || write("structs", FORMATS, files, &report),
    );
    super::output::print_terminal(&text, color);
    written?;
    if !report.missing_split_units.is_empty() {
        // Part of the debug info is missing: what was read is shown, but
        // "no hazards" would be a claim about types never seen.
        super::output::print_stderr(&format!(
            "error: {}: the split DWARF of {} of {} units is missing ({}): their structs are not in this report; put the .dwo files where they were built or beside the binary, or give {}.dwp",
            options.binary.display(),
            report.missing_split_units.len(),
            report.units,
            report.missing_split_units.join(", "),
            options.binary.display()
        ));
        return Ok(exit::NO_DEBUG_INFO);
    }
    Ok(exit::OK)
}

impl Render for structs::StructsReport {
    fn json(&self) -> Result<String> {
        json(&document::document(self))
    }
    fn sarif(&self) -> Option<Result<String>> {
        Some(json(&sarif::render(self)))
    }
}
