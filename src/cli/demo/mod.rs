//! `ghostbench demo`: the product's story on examples embedded in the binary.
//!
//! The demo is a list of steps run one after another ([`STEPS`]); each step
//! prints its own section. Later verbs append their step to the list.
//!
//! Step 1, `layout`: an embedded C++ dispatch benchmark (virtual, function
//! pointer, std::variant, CRTP) is built with every C++ compiler on the
//! machine (up to `--max-compilers`) under `--layouts auto`, and the matrix
//! says which differences are real and which are layout. With one compiler it
//! is built three ways: as is, with a real change to the virtual mechanism
//! (`-DFINAL_DISPATCH`), and with cold code that only moves the hot code
//! (`-DCOLD_PATH=N`, N chosen from where the baseline's virtual loop sits, so
//! that the move changes whether it crosses a cache line).
//!
//! Last step, `probe --quick`: what misalignment costs on the machine at hand.
//!
//! This file only wires the steps: where the cold code goes is
//! `code::placement::ColdPath` on the loop `code::first_loop` finds, and
//! every sentence is `render`'s.

mod render;

use super::args::SeedArgs;
use super::layout::ScheduleArgs;
use super::output::outln;
use super::output::OutputArgs;
use crate::code::placement::ColdPath;
use crate::layout::{BuildSpec, LayoutOptions};
use crate::run::command::resolve_program;
use crate::run::launch::{self, Launch};
use crate::run::metric::MetricSpec;
use crate::run::ToolError;
use crate::stats::hierarchical::Estimator;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The embedded dispatch benchmark.
pub const DISPATCH_CPP: &str = include_str!("../../../assets/dispatch.cpp");
/// A C program with packed, atomic and false-sharing structs, for the `structs` step.
pub const HAZARDS_C: &str = include_str!("../../../assets/hazards.c");
/// Calls per mechanism and run: about 2–10 ms each on a 2020s x86 core.
const CALLS: &str = "5000000";
/// The metric: one value per mechanism, in ns/call.
pub const DISPATCH_METRIC: &str = r"regex:(?m)^(?P<name>\w+) (?P<value>[0-9.]+) ns/call$";

/// Candidate C++ compilers, oldest GCC first so the baseline is the oldest.
const COMPILERS: &[&str] = &[
    "g++-11",
    "g++-12",
    "g++-13",
    "g++-14",
    "g++",
    "clang++-14",
    "clang++-15",
    "clang++-16",
    "clang++-17",
    "clang++-18",
    "clang++-19",
    "clang++",
];

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    /// Use at most this many compilers (the oldest first). With one (the
    /// default g++ or clang++), the benchmark is built three ways with it: as
    /// is, with a real change, and with a placement ghost.
    #[arg(long, default_value_t = 3)]
    pub max_compilers: usize,
    #[command(flatten)]
    pub seed: SeedArgs,
    // --json, --markdown and --html take the layout step's report.
    #[command(flatten)]
    pub output: OutputArgs,
}

type Step = fn(&DemoArgs) -> Result<i32>;

/// The demo's steps, in order. Append new verbs' steps here.
const STEPS: &[Step] = &[layout_step, structs_step, probe_step];

pub fn run(args: DemoArgs) -> Result<i32> {
    crate::limits::Count::Compilers
        .check(args.max_compilers)
        .map_err(super::args::bound)?;
    // The layout step's options, checked before anything is built.
    options(&args, Vec::new())?;
    args.output.files().check("demo", super::layout::FORMATS)?;
    let mut worst = super::exit::OK;
    for step in STEPS {
        let code = step(&args)?;
        if super::exit::is_interrupted(code) {
            return Ok(code);
        }
        worst = worst.max(code);
    }
    Ok(worst)
}

/// The C++ compilers on PATH, one name per distinct binary.
pub fn find_compilers() -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for name in COMPILERS {
        if let Ok(path) = resolve_program(name, std::env::var_os("PATH")) {
            let real = std::fs::canonicalize(&path).unwrap_or(path);
            if !found.iter().any(|(_, p)| p == &real) {
                found.push((name.to_string(), real));
            }
        }
    }
    found
}

/// The one compiler of the one-compiler story: the system's default `g++` or
/// `clang++` when there is one, else the oldest found.
fn default_compiler(found: &[(String, PathBuf)]) -> String {
    ["g++", "clang++"]
        .into_iter()
        .find(|name| resolve_program(name, std::env::var_os("PATH")).is_ok())
        .map_or_else(|| found[0].0.clone(), str::to_string)
}

/// The build command of the dispatch benchmark.
fn template(compiler: &str, defines: &str, src: &str) -> String {
    let defines = if defines.is_empty() {
        String::new()
    } else {
        format!("{defines} ")
    };
    format!("{compiler} -O2 -std=c++17 {defines}{{cflags}} {{ldflags}} {src} -o {{out}}")
}

/// Build the baseline once at the default layout and find its virtual loop.
fn locate_virtual_loop(command: &str, dir: &Path) -> Result<Option<(u64, u64)>> {
    let out = dir.join("dispatch-baseline");
    let text = command
        .replace("{cflags} ", "")
        .replace("{ldflags} ", "")
        .replace("{out}", &shlex::try_quote(&out.to_string_lossy())?);
    let words = crate::run::command::split_words(&text)?;
    let program = &words[0];
    let build = Launch {
        timeout: Some(crate::layout::BUILD_TIMEOUT),
        ..Launch::new(&words)
    };
    match build.run_ok() {
        Ok(_) => {}
        Err((_, Some(built))) => bail!(
            "{program} could not build the benchmark: {}",
            String::from_utf8_lossy(&built.stderr_tail)
                .lines()
                .last()
                .unwrap_or("")
        ),
        Err((error, None)) => return Err(error).with_context(|| format!("cannot run {program}")),
    }
    crate::code::first_loop(&out, &regex::Regex::new(r"^loop_virtual\(")?)
}

fn layout_step(args: &DemoArgs) -> Result<i32> {
    let compilers = find_compilers();
    if compilers.is_empty() {
        bail!("the demo needs a C++ compiler (g++ or clang++) on PATH");
    }
    let dir = Path::new(".ghostbench/demo");
    crate::safe_file::private_dir(Path::new("."), dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let source = dir.join("dispatch.cpp");
    if std::fs::read_to_string(&source).ok().as_deref() != Some(DISPATCH_CPP) {
        std::fs::write(&source, DISPATCH_CPP)
            .with_context(|| format!("cannot write {}", source.display()))?;
    }
    let source = std::fs::canonicalize(&source)?;
    let src = shlex::try_quote(&source.to_string_lossy())?.into_owned();
    super::output::print_terminal(&render::layout_intro(), false);
    let builds: Vec<BuildSpec> = if compilers.len() == 1 || args.max_compilers == 1 {
        let c = &default_compiler(&compilers);
        let base = template(c, "", &src);
        let cold = ColdPath::for_loop(locate_virtual_loop(&base, dir)?, 64);
        super::output::print_terminal(&render::three_ways(c, &cold), false);
        vec![
            BuildSpec {
                name: c.clone(),
                template: base,
            },
            BuildSpec {
                name: "final".into(),
                template: template(c, "-DFINAL_DISPATCH", &src),
            },
            BuildSpec {
                name: "cold".into(),
                template: template(c, &format!("-DCOLD_PATH={}", cold.bytes), &src),
            },
        ]
    } else {
        let builds: Vec<BuildSpec> = compilers
            .iter()
            .take(args.max_compilers)
            .map(|(c, _)| BuildSpec {
                name: c.clone(),
                template: template(c, "", &src),
            })
            .collect();
        let names: Vec<&str> = builds.iter().map(|b| b.name.as_str()).collect();
        super::output::print_terminal(&render::compilers(&names), false);
        builds
    };
    let options = options(args, builds)?;
    super::output::print_terminal(
        &render::schedule(options.layouts, options.max_layouts, options.rounds),
        false,
    );
    let (report, code) = super::layout::execute(&options, &args.output)?;
    outln!();
    super::output::print_terminal(&render::meaning(&report), false);
    Ok(code)
}

/// The layout step's options for `builds`: the dispatch benchmark's run and
/// metric, the schedule and seed of the command line.
fn options(args: &DemoArgs, builds: Vec<BuildSpec>) -> Result<LayoutOptions> {
    let mut options = LayoutOptions {
        builds,
        run_template: format!("{{out}} {CALLS}"),
        metrics: vec![MetricSpec::parse(DISPATCH_METRIC)?],
        // Interference only ever slows a run of this CPU-bound benchmark, and
        // a busy host's speed moves in steps that last several runs: the
        // least-disturbed back-to-back pairs of each layout give its ratio.
        estimator: Estimator::Paired,
        timeout: Some(Duration::from_secs(60)),
        seed: args.seed.seed,
        command_line: super::output::command_line(),
        // Which hot loops the builds placed differently: one callgrind run
        // of the baseline (about 3–4 s here) and three ELF analyses.
        explain: Some(5),
        // Judged by the model of the CPU the demo runs on.
        uarch: crate::code::uarch::detect(),
        ..LayoutOptions::default()
    };
    args.schedule.apply(&mut options)?;
    Ok(options)
}

/// Step 2: data-layout hazards in an embedded C program, found from its DWARF.
fn structs_step(args: &DemoArgs) -> Result<i32> {
    super::output::print_terminal(&render::structs_intro(), false);
    let cc = match launch::tool("cc") {
        Ok(cc) => cc,
        Err(ToolError::Missing { .. }) => {
            super::output::print_terminal(&render::structs_skipped(None), false);
            return Ok(super::exit::OK);
        }
        Err(e) => return Err(e.into()),
    };
    let dir = Path::new(".ghostbench/demo");
    crate::safe_file::private_dir(Path::new("."), dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let source = dir.join("hazards.c");
    std::fs::write(&source, HAZARDS_C)
        .with_context(|| format!("cannot write {}", source.display()))?;
    let binary = dir.join("hazards");
    let argv = [
        cc.display().to_string(),
        "-g".to_string(),
        "-O0".to_string(),
        "-o".to_string(),
        binary.display().to_string(),
        source.display().to_string(),
    ];
    let build = Launch {
        timeout: Some(
            args.schedule
                .build_timeout
                .unwrap_or(crate::layout::BUILD_TIMEOUT),
        ),
        ..Launch::new(&argv)
    };
    match build.run_ok() {
        Ok(_) => {}
        Err((_, Some(built))) => {
            let errors = String::from_utf8_lossy(&built.stderr_tail);
            let last = errors.lines().last().unwrap_or("");
            let cc = cc.display().to_string();
            super::output::print_terminal(&render::structs_skipped(Some((&cc, last))), false);
            return Ok(super::exit::OK);
        }
        Err((error, None)) => {
            return Err(error).with_context(|| format!("cannot run {}", cc.display()))
        }
    }
    let output = args.output.terminal_only();
    let layouts = crate::structs::StructsOptions {
        binary: binary.clone(),
        filter: Some("slot".to_string()),
        ..Default::default()
    };
    let code = super::structs::execute(&layouts, &super::structs::View::default(), &output)?;
    if code != super::exit::OK {
        return Ok(code);
    }
    outln!();
    let everything = crate::structs::StructsOptions {
        binary,
        ..Default::default()
    };
    let hazards = super::structs::View {
        hazards_only: true,
        sarif: None,
    };
    super::output::print_terminal(&render::every_hazard(), false);
    super::structs::execute(&everything, &hazards, &output)
}

/// Last step: what misalignment costs on this machine, `probe --quick` (under 3 s).
fn probe_step(args: &DemoArgs) -> Result<i32> {
    super::output::print_terminal(&render::probe_intro(), false);
    let output = args.output.terminal_only();
    let options = crate::probe::ProbeOptions {
        quick: true,
        seed: args.seed.seed,
        command_line: super::output::command_line(),
        ..Default::default()
    };
    super::probe::execute(&options, &output)
}
