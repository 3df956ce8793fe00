//! Command-line interface: one file per verb, each with its argument struct,
//! the one function that turns it into the verb's options, and the glue that
//! calls the library, prints and writes the report files. Shared argument
//! groups are in `args`, output options and the report-file writer in
//! `output`, exit codes in `exit`. Nothing here computes results.

pub mod analyze;
pub mod args;
pub mod baseline;
pub mod cache;
pub mod code;
pub mod compare;
pub mod demo;
pub mod emit;
pub mod exit;
pub mod finish;
pub mod history;
pub mod layout;
pub mod noise;
pub mod output;
pub mod probe;
pub mod store;
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
    /// Where one command's run-to-run noise comes from: ASLR, pinning, environment size, heap huge pages, the binary's copy.
    Noise(Box<noise::NoiseArgs>),
    /// Run the whole story on examples embedded in the binary.
    Demo(demo::DemoArgs),
    /// Stored results: a table, one result in any format (`show ID`), a trend page (--html).
    History(Box<history::HistoryArgs>),
    /// The build cache layout experiments share (.ghostbench/cache/): show it, prune it.
    Cache(cache::CacheArgs),
    /// Internal: the compiler launcher `{launcher}` runs (COMPILER ARGS…).
    #[command(hide = true)]
    Launch(cache::LaunchArgs),
}

/// Run the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match cli.verb {
        Verb::Code(args) => code::run(args),
        Verb::Compare(args) => compare::run(*args),
        Verb::Probe(args) => probe::run(args),
        Verb::Layout(args) => layout::run(*args),
        Verb::Noise(args) => noise::run(*args),
        Verb::Demo(args) => demo::run(args),
        Verb::Analyze(args) => analyze::run(*args),
        Verb::Structs(args) => structs::run(args),
        Verb::History(args) => history::run(*args),
        Verb::Cache(args) => cache::run(args),
        Verb::Launch(args) => cache::launch(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            output::print_stderr(&format!("error: {error:#}"));
            exit::code_of(&error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::CompareOptions;
    use crate::layout::LayoutOptions;

    fn parse(args: &[&str]) -> Verb {
        Cli::try_parse_from(std::iter::once("ghostbench").chain(args.iter().copied()))
            .expect("the command line parses")
            .verb
    }

    fn labels(options: &[crate::run::metric::MetricSpec]) -> Vec<String> {
        options.iter().map(|m| m.label()).collect()
    }

    #[test]
    fn a_bare_command_line_gives_the_options_defaults() {
        let Verb::Compare(args) = parse(&["compare", "true", "false"]) else {
            panic!("not compare")
        };
        let got = args.to_options().unwrap();
        let want = CompareOptions::for_commands(got.commands.clone());
        assert_eq!(labels(&got.metrics), labels(&want.metrics));
        assert_eq!(
            (got.higher_is_better, got.margin, got.alpha, got.seed),
            (want.higher_is_better, want.margin, want.alpha, want.seed)
        );
        assert_eq!(
            (
                got.warmup,
                got.min_runs,
                got.max_runs,
                got.max_time,
                got.order
            ),
            (
                want.warmup,
                want.min_runs,
                want.max_runs,
                want.max_time,
                want.order
            )
        );
        assert_eq!(
            (got.env_jitter, got.spawn_correction, got.pin, got.timeout),
            (
                want.env_jitter,
                want.spawn_correction,
                want.pin,
                want.timeout
            )
        );

        let Verb::Layout(args) = parse(&["layout", "-b", "A=x {out}", "-b", "B=y {out}"]) else {
            panic!("not layout")
        };
        let got = args.to_options().unwrap();
        let want = LayoutOptions::default();
        assert_eq!(labels(&got.metrics), labels(&want.metrics));
        assert_eq!(
            (
                got.layouts,
                got.max_layouts,
                got.rounds,
                got.warmup,
                got.jobs
            ),
            (
                want.layouts,
                want.max_layouts,
                want.rounds,
                want.warmup,
                want.jobs
            )
        );
        assert_eq!(
            (&got.sources, got.estimator, got.margin, got.alpha, got.seed),
            (
                &want.sources,
                want.estimator,
                want.margin,
                want.alpha,
                want.seed
            )
        );
        assert_eq!(
            (got.shell, got.timeout, got.max_time, got.pin, got.explain),
            (
                want.shell,
                want.timeout,
                want.max_time,
                want.pin,
                want.explain
            )
        );
    }

    #[test]
    fn shared_groups_parse_the_same_values_in_every_verb() {
        let Verb::Layout(layout) = parse(&[
            "layout",
            "-b",
            "A=x",
            "-b",
            "B=y",
            "--margin",
            "2.5",
            "--alpha",
            "0.01",
            "--seed",
            "7",
            "--sources",
            "shift,env",
            "--layouts",
            "5",
            "--timeout",
            "2m",
        ]) else {
            panic!("not layout")
        };
        let layout = layout.to_options().unwrap();
        assert_eq!((layout.margin, layout.alpha, layout.seed), (0.025, 0.01, 7));
        assert_eq!((layout.layouts, layout.max_layouts), (5, None));
        assert_eq!(layout.timeout, Some(std::time::Duration::from_secs(120)));
        use crate::layout::variants::Source;
        assert_eq!(layout.sources, [Source::Shift, Source::Env]);
        let Verb::Compare(compare) = parse(&[
            "compare",
            "a",
            "b",
            "--margin",
            "2.5",
            "--alpha",
            "0.01",
            "--seed",
            "7",
            "--timeout",
            "2m",
        ]) else {
            panic!("not compare")
        };
        let compare = compare.to_options().unwrap();
        assert_eq!(
            (compare.margin, compare.alpha, compare.seed),
            (0.025, 0.01, 7)
        );
        assert_eq!(compare.timeout, layout.timeout);
        let Verb::Analyze(analyze) = parse(&["analyze", "f.csv", "--margin", "2.5", "--seed", "7"])
        else {
            panic!("not analyze")
        };
        let analyze = analyze.to_options().unwrap();
        assert_eq!(
            (analyze.margin, analyze.alpha, analyze.seed),
            (Some(0.025), None, 7)
        );
    }
}
