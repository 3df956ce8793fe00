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

use super::args::SeedArgs;
use super::layout::ScheduleArgs;
use super::output::outln;
use super::output::OutputArgs;
use crate::layout::render::prose;
use crate::layout::{BuildSpec, LayoutOptions, LayoutReport};
use crate::run::command::resolve_program;
use crate::run::launch::{self, Launch};
use crate::run::metric::MetricSpec;
use crate::run::ToolError;
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

/// Where the baseline's virtual loop sits, and the cold-path size that moves
/// it across a cache line (or does not), from the baseline's own binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColdPath {
    /// Bytes of cold code: 16, 32 or 48.
    pub bytes: u64,
    /// The loop's start offset in its 64-byte line and its size, when found.
    pub found: Option<(u64, u64)>,
    /// Whether the move changes whether the loop crosses a line.
    pub flips: bool,
}

/// Whether a loop of `len` bytes starting at line offset `offset` crosses a
/// `line`-byte boundary.
fn crosses(offset: u64, len: u64, line: u64) -> bool {
    offset % line + len > line
}

/// The smallest move by 16, 32 or 48 bytes that changes whether the loop
/// (at `offset`, `len` bytes) crosses a 64-byte line; 32 when none does.
pub fn cold_path_for(found: Option<(u64, u64)>) -> ColdPath {
    let Some((offset, len)) = found else {
        return ColdPath {
            bytes: 32,
            found,
            flips: false,
        };
    };
    let before = crosses(offset, len, 64);
    match [16, 32, 48]
        .into_iter()
        .find(|n| crosses(offset + n, len, 64) != before)
    {
        Some(bytes) => ColdPath {
            bytes,
            found,
            flips: true,
        },
        None => ColdPath {
            bytes: 32,
            found,
            flips: false,
        },
    }
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
    let options = crate::code::CodeOptions {
        binary: out,
        functions: Some(regex::Regex::new(r"^loop_virtual\(")?),
        ..Default::default()
    };
    let report = crate::code::run(&options, &|_| {})?;
    Ok(report
        .functions
        .iter()
        .flat_map(|f| f.loops.iter())
        .next()
        .map(|l| (l.line_offset, l.body_bytes)))
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
    outln!("ghostbench demo, step 1: is a speedup real, or a layout ghost?");
    outln!("An embedded C++ benchmark times four ways to call a tiny strategy chosen at run time");
    outln!("(virtual, function pointer, std::variant + std::visit, CRTP), in ns/call.");
    let builds: Vec<BuildSpec> = if compilers.len() == 1 || args.max_compilers == 1 {
        let c = &default_compiler(&compilers);
        let base = template(c, "", &src);
        let cold = cold_path_for(locate_virtual_loop(&base, dir)?);
        outln!("It is built three ways with {c} -O2:");
        outln!("  {c}: as is;");
        outln!(
            "  final: -DFINAL_DISPATCH, a real change: the virtual loop tests the strategy's type once,"
        );
        outln!("         then calls the `final` class directly, which the compiler inlines;");
        outln!(
            "  cold: -DCOLD_PATH={}, {} bytes of cold code that never runs, linked before all hot code.",
            cold.bytes, cold.bytes
        );
        match cold.found {
            Some((offset, len)) => outln!(
                "         It changes no hot instruction; it moves loop_virtual's loop ({len} bytes, at line\n         \
                 offset {offset}) to offset {}, where it {} a 64-byte line{}.",
                (offset + cold.bytes) % 64,
                if crosses(offset + cold.bytes, len, 64) { "crosses" } else { "no longer crosses" },
                if cold.flips { "" } else { " as before: no 16-48 byte move changes that" },
            ),
            None => outln!(
                "         It changes no hot instruction; it moves all of them by {} bytes.",
                cold.bytes
            ),
        }
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
        outln!(
            "It is built with {} (-O2).",
            builds
                .iter()
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        builds
    };
    let options = options(args, builds)?;
    let (layouts, max_layouts) = (options.layouts, options.max_layouts);
    outln!(
        "Every build is rebuilt under {} layouts (alignment, code shift, section shuffle),",
        match max_layouts {
            Some(max) => format!("{layouts} or more (up to {max}, until decided)"),
            None => layouts.to_string(),
        }
    );
    outln!(
        "and every (build, layout) pair runs {} times in random order.\n",
        options.rounds
    );
    let (report, code) = super::layout::execute(&options, &args.output)?;
    outln!();
    super::output::print_terminal(&meaning(&report), false);
    Ok(code)
}

/// The layout step's options for `builds`: the dispatch benchmark's run and
/// metric, the schedule and seed of the command line.
fn options(args: &DemoArgs, builds: Vec<BuildSpec>) -> Result<LayoutOptions> {
    let mut options = LayoutOptions {
        builds,
        run_template: format!("{{out}} {CALLS}"),
        metrics: vec![MetricSpec::parse(DISPATCH_METRIC)?],
        // Interference only ever slows a run of this CPU-bound benchmark, so
        // each layout's fastest run is its least disturbed one.
        estimator: Estimator::Min,
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

/// What the matrix means, in words, from the comparisons' own facts: each
/// decided difference with its sentence, each UNKNOWN with the cause the
/// analysis found in the data, the SAMEs counted.
pub fn meaning(report: &LayoutReport) -> String {
    let mut out = String::from("What it means:\n");
    let (mut compared, mut differed, mut ghosts, mut real) = (0, 0, 0, 0);
    let mut same = Vec::new();
    for row in &report.matrix {
        let Some(c) = &row.comparison else { continue };
        compared += 1;
        if matches!(c.default_verdict, Verdict::Faster | Verdict::Slower) {
            differed += 1;
        }
        let what = match c.verdict {
            Verdict::Faster | Verdict::Slower => {
                real += 1;
                format!("real: {}", prose::comparison_sentence(report, row, c))
            }
            Verdict::Artifact => {
                ghosts += 1;
                format!(
                    "a layout ghost: {}",
                    prose::comparison_sentence(report, row, c)
                )
            }
            Verdict::Same => {
                same.push(format!("{} under {}", row.metric, row.build));
                continue;
            }
            Verdict::Unknown => format!(
                "undecided: {}",
                prose::comparison_hint(report, c)
                    .unwrap_or_else(|| prose::comparison_sentence(report, row, c))
            ),
        };
        out.push_str(&format!(
            "  {:<8} {} under {}: {what}\n",
            c.verdict.to_string(),
            row.metric,
            row.build
        ));
    }
    if compared == 0 {
        out.push_str("  nothing to compare (see the errors above)\n");
        return out;
    }
    if !same.is_empty() {
        out.push_str(&format!(
            "  {:<8} {}: within ±{}% once layout is controlled\n",
            "SAME",
            same.join(", "),
            crate::report::units::trimmed(report.settings.margin * 100.0)
        ));
    }
    out.push_str(&format!(
        "A plain A/B at the default layout finds {differed} of these {compared} differences significant;\n\
         across layouts, {real} {} real and {ghosts} {} placement (ARTIFACT).\n",
        if real == 1 { "is" } else { "are" },
        if ghosts == 1 { "is" } else { "are" },
    ));
    out
}

/// Step 2: data-layout hazards in an embedded C program, found from its DWARF.
fn structs_step(args: &DemoArgs) -> Result<i32> {
    outln!(
        "\nghostbench demo, step 2: which data layouts are hazards? `ghostbench structs --hazards`"
    );
    outln!("An embedded C program has a packed slot whose 8-byte atomic counter straddles a cache line");
    outln!("for some array elements (a split lock), a packed list node with a misaligned pointer,");
    outln!("two atomics sharing a line, and a struct full of holes. It is compiled with -g and read back.\n");
    let cc = match launch::tool("cc") {
        Ok(cc) => cc,
        Err(ToolError::Missing { .. }) => {
            outln!("skipped: no C compiler (cc) on PATH");
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
            outln!(
                "skipped: {} could not build the example: {}",
                cc.display(),
                String::from_utf8_lossy(&built.stderr_tail)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
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
    super::structs::execute(&everything, &hazards, &output)
}

/// Last step: what misalignment costs on this machine, `probe --quick` (under 3 s).
fn probe_step(args: &DemoArgs) -> Result<i32> {
    outln!("\nghostbench demo, last step: what does misalignment cost on this machine? `ghostbench probe --quick`:\n");
    let output = args.output.terminal_only();
    let options = crate::probe::ProbeOptions {
        quick: true,
        seed: args.seed.seed,
        command_line: super::output::command_line(),
        ..Default::default()
    };
    super::probe::execute(&options, &output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cold_path_moves_the_loop_across_a_line_or_says_it_cannot() {
        // A 23-byte loop crosses a 64-byte line only from offsets 42-63.
        assert!(!crosses(32, 23, 64) && crosses(48, 23, 64) && !crosses(41, 23, 64));
        // At 32: 16 bytes take it to 48, where it crosses (g++-11 here).
        let c = cold_path_for(Some((32, 23)));
        assert_eq!((c.bytes, c.flips), (16, true));
        // At 48 it crosses; 16 bytes take it to 0, where it does not (g++-12).
        let c = cold_path_for(Some((48, 23)));
        assert_eq!((c.bytes, c.flips), (16, true));
        // At 0: 16 → 16 and 32 → 32 keep it inside; 48 → 48 crosses.
        let c = cold_path_for(Some((0, 23)));
        assert_eq!((c.bytes, c.flips), (48, true));
        // A 16-byte loop at a 16-aligned offset never crosses: no move helps.
        let c = cold_path_for(Some((16, 16)));
        assert_eq!((c.bytes, c.flips), (32, false));
        // A 60-byte loop at 8 crosses at every 16-byte step too.
        assert!(!cold_path_for(Some((8, 60))).flips);
        assert_eq!(
            cold_path_for(None),
            ColdPath {
                bytes: 32,
                found: None,
                flips: false
            }
        );
    }
}
