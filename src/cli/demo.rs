//! `ghostbench demo`: the product's story on examples embedded in the binary.
//!
//! The demo is a list of steps run one after another ([`STEPS`]); each step
//! prints its own section. Later verbs append their step to the list.
//!
//! Step 1, `layout`: an embedded C++ dispatch benchmark (virtual, function
//! pointer, std::variant, CRTP) is built with every C++ compiler on the
//! machine (or with -O2 and -O3 when there is only one) under 8 layouts, and
//! the matrix says which differences are real and which are layout.
//!
//! Last step, `probe --quick`: what misalignment costs on the machine at hand.

use super::output::OutputArgs;
use crate::layout::variants::Source;
use crate::layout::{BuildSpec, LayoutOptions, LayoutReport};
use crate::run::command::resolve_program;
use crate::run::metric::MetricSpec;
use crate::stats::hierarchical::Estimator;
use crate::stats::verdict::Verdict;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The embedded dispatch benchmark.
pub const DISPATCH_CPP: &str = include_str!("../../assets/dispatch.cpp");
/// A C program with packed, atomic and false-sharing structs, for the `structs` step.
pub const HAZARDS_C: &str = include_str!("../../assets/hazards.c");
/// Calls per mechanism and run: about 10–30 ms each on a 2020s x86 core.
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
    /// Layout variants per build (the default layout included).
    #[arg(long, default_value_t = 8)]
    pub layouts: usize,
    /// Measured runs per (build, layout).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Use at most this many compilers (the oldest first).
    #[arg(long, default_value_t = 3)]
    pub max_compilers: usize,
    /// Parallel builds (default: the number of CPUs).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Seed for layouts, run order, jitter and bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub output: OutputArgs,
}

type Step = fn(&DemoArgs) -> Result<i32>;

/// The demo's steps, in order. Append new verbs' steps here.
const STEPS: &[Step] = &[layout_step, structs_step, probe_step];

pub fn run(args: DemoArgs) -> Result<i32> {
    let mut worst = super::exit::OK;
    for step in STEPS {
        let code = step(&args)?;
        if code == super::exit::INTERRUPTED {
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

fn layout_step(args: &DemoArgs) -> Result<i32> {
    let compilers = find_compilers();
    if compilers.is_empty() {
        bail!("the demo needs a C++ compiler (g++ or clang++) on PATH");
    }
    let dir = Path::new(".ghostbench/demo");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let source = dir.join("dispatch.cpp");
    if std::fs::read_to_string(&source).ok().as_deref() != Some(DISPATCH_CPP) {
        std::fs::write(&source, DISPATCH_CPP)
            .with_context(|| format!("cannot write {}", source.display()))?;
    }
    let source = std::fs::canonicalize(&source)?;
    let src = shlex::try_quote(&source.to_string_lossy())?.into_owned();
    let template = |compiler: &str, opt: &str| {
        format!("{compiler} {opt} -std=c++17 {{cflags}} {{ldflags}} {src} -o {{out}}")
    };
    let builds: Vec<BuildSpec> = if compilers.len() == 1 {
        let c = &compilers[0].0;
        vec![
            BuildSpec {
                name: format!("{c}-O2"),
                template: template(c, "-O2"),
            },
            BuildSpec {
                name: format!("{c}-O3"),
                template: template(c, "-O3"),
            },
        ]
    } else {
        compilers
            .iter()
            .take(args.max_compilers.max(2))
            .map(|(c, _)| BuildSpec {
                name: c.clone(),
                template: template(c, "-O2"),
            })
            .collect()
    };
    println!("ghostbench demo, step 1: is a compiler's dispatch speedup real, or a layout ghost?");
    println!(
        "An embedded C++ benchmark times four ways to call a tiny strategy chosen at run time"
    );
    println!("(virtual, function pointer, std::variant + std::visit, CRTP), in ns/call.");
    println!(
        "It is built with {} under {} layouts each (alignment, code shift, section shuffle),",
        builds
            .iter()
            .map(|b| b.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        args.layouts
    );
    println!(
        "and every (build, layout) pair runs {} times in random order.\n",
        args.rounds
    );
    let options = LayoutOptions {
        builds,
        run_template: format!("{{out}} {CALLS}"),
        metrics: vec![MetricSpec::parse(DISPATCH_METRIC)?],
        higher_is_better: false,
        layouts: args.layouts,
        max_layouts: None,
        rounds: args.rounds,
        warmup: 1,
        sources: vec![Source::Align, Source::Shift, Source::Shuffle, Source::Env],
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
        estimator: Estimator::Median,
        margin: 0.01,
        alpha: 0.05,
        shell: false,
        timeout: Some(Duration::from_secs(60)),
        max_time: None,
        pin: None,
        rebuild: false,
        work_root: PathBuf::from("."),
        seed: args.seed,
        command_line: std::env::args().collect(),
        // Which hot loops the compilers placed differently: one callgrind run
        // of the baseline (about 3–4 s here) and three ELF analyses.
        explain: Some(5),
    };
    let (report, code) = super::layout::execute(&options, &args.output)?;
    println!();
    print!("{}", meaning(&report));
    Ok(code)
}

/// What the matrix means, in words.
pub fn meaning(report: &LayoutReport) -> String {
    let mut out = String::from("What it means:\n");
    let mut any = false;
    for row in &report.matrix {
        let Some(c) = &row.comparison else { continue };
        any = true;
        let what = match c.verdict {
            Verdict::Faster | Verdict::Slower => format!(
                "real: the difference survives {} layouts",
                c.controlled.map_or(0, |r| r.variants)
            ),
            Verdict::Artifact => {
                "a layout ghost: the default-layout difference is placement, not the code".into()
            }
            Verdict::Same => "no difference beyond the margin once layout is controlled".into(),
            Verdict::Unknown => "undecided: layout noise is too large for this budget".into(),
        };
        out.push_str(&format!(
            "  {:<8} {} under {}: {what}\n",
            c.verdict, row.metric, row.build
        ));
    }
    if !any {
        out.push_str("  nothing to compare (see the errors above)\n");
    }
    out.push_str(
        "A single default-layout A/B can be off by the 'layout noise' column through placement alone;\n\
         only verdicts from the across-layouts column are claims about the code.\n",
    );
    out
}

/// Step 2: data-layout hazards in an embedded C program, found from its DWARF.
fn structs_step(args: &DemoArgs) -> Result<i32> {
    println!(
        "\nghostbench demo, step 2: which data layouts are hazards? `ghostbench structs --hazards`"
    );
    println!("An embedded C program has a packed slot whose 8-byte atomic counter straddles a cache line");
    println!(
        "for some array elements (a split lock), a packed list node with a misaligned pointer,"
    );
    println!("two atomics sharing a line, and a struct full of holes. It is compiled with -g and read back.\n");
    let Ok(cc) = resolve_program("cc", std::env::var_os("PATH")) else {
        println!("skipped: no C compiler (cc) on PATH");
        return Ok(super::exit::OK);
    };
    let dir = Path::new(".ghostbench/demo");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let source = dir.join("hazards.c");
    std::fs::write(&source, HAZARDS_C)
        .with_context(|| format!("cannot write {}", source.display()))?;
    let binary = dir.join("hazards");
    let built = std::process::Command::new(&cc)
        .args(["-g", "-O0", "-o"])
        .arg(&binary)
        .arg(&source)
        .output()
        .with_context(|| format!("cannot run {}", cc.display()))?;
    if !built.status.success() {
        println!(
            "skipped: {} could not build the example: {}",
            cc.display(),
            String::from_utf8_lossy(&built.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return Ok(super::exit::OK);
    }
    let structs_args = |filter: Option<&str>, hazards: bool| super::structs::StructsArgs {
        binary: binary.clone(),
        filter: filter.map(str::to_string),
        hazards,
        line: 64,
        sarif: None,
        suggest: false,
        output: OutputArgs {
            json: None,
            markdown: None,
            html: None,
            ..args.output.clone()
        },
    };
    let code = super::structs::run(structs_args(Some("slot"), false))?;
    if code != super::exit::OK {
        return Ok(code);
    }
    println!();
    super::structs::run(structs_args(None, true))
}

/// Last step: what misalignment costs on this machine, `probe --quick` (under 3 s).
fn probe_step(args: &DemoArgs) -> Result<i32> {
    println!("\nghostbench demo, last step: what does misalignment cost on this machine? `ghostbench probe --quick`:\n");
    let output = OutputArgs {
        json: None,
        markdown: None,
        html: None,
        ..args.output.clone()
    };
    let options = crate::probe::ProbeOptions {
        only: crate::probe::ProbeKind::ALL.to_vec(),
        quick: true,
        budget: None,
        seed: args.seed,
        command_line: std::env::args().collect(),
    };
    super::probe::execute(&options, &output)
}
