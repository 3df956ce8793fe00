//! `ghostbench structs`: arguments, and the glue to `structs::analyze` and the reports.

use super::exit;
use super::output::{json, Format, OutputArgs};
use crate::structs::elf::InputError;
use crate::structs::render::{sarif, text};
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
    /// List only the hazards, worst first, instead of the layouts.
    #[arg(long)]
    pub hazards: bool,
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
        }
    }
}

pub fn run(args: StructsArgs) -> Result<i32> {
    args.files().check("structs", FORMATS)?;
    let report = match structs::analyze(&args.to_options()) {
        Ok(r) => r,
        Err(e) => {
            // Input the tool cannot read gets one line and its own exit code.
            if let Some(input) = e.downcast_ref::<InputError>() {
                eprintln!("error: {input}");
                return Ok(match input {
                    InputError::NoDebugInfo { .. } => exit::NO_DEBUG_INFO,
                    _ => exit::ERROR,
                });
            }
            return Err(e);
        }
    };
    if args.filter.is_some() && report.structs.is_empty() {
        eprintln!(
            "error: no struct named or matching {:?} in {}",
            args.filter.as_deref().unwrap_or_default(),
            args.binary.display()
        );
        return Ok(exit::ERROR);
    }
    let color = args.output.color();
    print!("{}", text::render(&report, args.hazards, color));
    args.files().write(|format| match format {
        Format::Json => json(&report),
        Format::Sarif => json(&sarif::render(&report)),
        Format::Markdown | Format::Html => Err(format.unsupported("structs", FORMATS)),
    })?;
    Ok(exit::OK)
}
