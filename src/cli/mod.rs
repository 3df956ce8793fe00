//! Command-line interface: one file per verb, each with its argument struct and
//! the glue that calls the library and prints. Nothing here computes results.

pub mod analyze;
pub mod code;
pub mod compare;
pub mod demo;
pub mod layout;
pub mod output;
pub mod probe;
pub mod structs;

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
    /// The verdicts of compare and layout on measurements made elsewhere: CSV, hyperfine JSON, or a ghostbench --json.
    Analyze(Box<analyze::AnalyzeArgs>),
    /// Where every function and loop lands: cache lines, DSB windows, JCC-erratum spots, what moved.
    Code(code::CodeArgs),
    /// Data layout from DWARF: pahole-style layouts, split-lock, misalignment and false-sharing hazards.
    Structs(structs::StructsArgs),
    /// How much does this machine punish misalignment? Split locks, misaligned loads, code offset, TLB, list nodes.
    Probe(probe::ProbeArgs),
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
    /// A benchmarked command failed (non-zero exit, crash, timeout, no metric), or a
    /// probe crashed or overran its time bound; partial results were written.
    pub const RUN_FAILED: i32 = 3;
    /// `structs`: the binary has no DWARF debug info (build with -g).
    pub const NO_DEBUG_INFO: i32 = 4;
    /// `layout`: too few layout variants built (the failing command and its output are printed); partial results were written.
    pub const BUILD_FAILED: i32 = 5;
    /// Ctrl-C; partial results were written.
    pub const INTERRUPTED: i32 = 130;
}

/// Run the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match cli.verb {
        Verb::Code(args) => code::run(args),
        Verb::Compare(args) => compare::run(*args),
        Verb::Probe(args) => probe::run(args),
        Verb::Layout(args) => layout::run(*args),
        Verb::Demo(args) => demo::run(args),
        Verb::Analyze(args) => analyze::run(*args),
        Verb::Structs(args) => structs::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            exit::ERROR
        }
    }
}
