//! Command-line interface: one file per verb, each with its argument struct and
//! the glue that calls the library and prints. Nothing here computes results.

pub mod compare;
pub mod demo;
pub mod layout;
pub mod output;

use clap::{Parser, Subcommand};

/// Is your speedup real, or a layout ghost?
#[derive(Debug, Parser)]
#[command(name = "ghostbench", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Do two commands differ in speed? An interleaved A/B run with an anytime-valid verdict.
    Compare(Box<compare::CompareArgs>),
    /// Is the difference between builds real, or a layout artifact? Rebuilds each side under many layouts.
    Layout(Box<layout::LayoutArgs>),
    /// Run the whole story on examples embedded in the binary.
    Demo(demo::DemoArgs),
}

/// Process exit codes (documented in README.md).
pub mod exit {
    /// Finished: a verdict, or the budget ran out with UNKNOWN.
    pub const OK: i32 = 0;
    /// Bad input or an I/O error; nothing was measured.
    pub const ERROR: i32 = 1;
    /// Bad command-line usage (clap's code).
    pub const USAGE: i32 = 2;
    /// A benchmarked command failed (non-zero exit, crash, timeout, no metric); partial results were written.
    pub const RUN_FAILED: i32 = 3;
    /// `layout`: too few layout variants built (the failing command and its output are printed); partial results were written.
    pub const BUILD_FAILED: i32 = 4;
    /// Ctrl-C; partial results were written.
    pub const INTERRUPTED: i32 = 130;
}

/// Run the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match cli.verb {
        Verb::Compare(args) => compare::run(*args),
        Verb::Layout(args) => layout::run(*args),
        Verb::Demo(args) => demo::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            exit::ERROR
        }
    }
}
