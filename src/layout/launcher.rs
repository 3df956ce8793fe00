//! The compiler launcher (docs/architecture.md §5): one C/C++ compiler
//! call split into compiles cached by content and a link, so layout variants
//! that differ only at link time (shift's padding object, shuffle's linker
//! flags) compile once and link once each.
//!
//! A call `cc FLAGS… a.c b.c LINK-INPUTS… -o OUT` becomes, per source, a
//! compile `cc COMPILE-FLAGS… -c a.c -o a.o` keyed by the compiler's
//! identity, the compile flags and the *preprocessed* source (`cc -E`: the
//! headers it includes and the macros the flags define are in it), taken
//! from the shared cache on a hit; then one link of the call's own words with
//! each source replaced by its object, in place (the padding object stays
//! first). A `-c` call (make, cmake) is one cached compile; a call with no
//! source is a link and runs as it is. Calls it does not understand (`-E`,
//! `-S`, `-x`, stdin, `-M` alone) run as they are and count as compiles.
//!
//! `layout` runs a template whose first word is a compiler through this
//! in-process; build systems reach it through `{launcher}`, a script that
//! runs `ghostbench launch COMPILER ARGS…` (`CC='{launcher} cc'`,
//! `-DCMAKE_C_COMPILER_LAUNCHER={launcher}`), which appends its counts to
//! the file named by [`LOG_VARIABLE`].
//!
//! The unit tests are in `launcher_tests.rs`.

use super::cache::{self, Cache, Key, Kind};
use super::realign;
use crate::run::launch::{self, Launch};
use crate::run::spawn::Outcome;
use crate::run::RunError;
use serde::Serialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The variables compilers read, part of every build's and object's key.
pub const COMPILER_VARIABLES: [&str; 7] = [
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "OBJC_INCLUDE_PATH",
    "GCC_EXEC_PREFIX",
    "COMPILER_PATH",
    "SOURCE_DATE_EPOCH",
];

/// The variable naming the file where `ghostbench launch` appends its counts.
pub const LOG_VARIABLE: &str = "GHOSTBENCH_LAUNCH_LOG";
/// The variable naming the cache root `ghostbench launch` uses.
pub const CACHE_VARIABLE: &str = "GHOSTBENCH_CACHE_DIR";

/// What one or more launcher calls did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Compiler runs that compiled (cache misses, and calls not understood).
    pub compiles: usize,
    /// Compiles taken from the cache.
    pub compile_hits: usize,
    pub links: usize,
    /// Objects made from a cached assembly by replacing its alignment
    /// directives and assembling (`realign`), not by compiling.
    pub realigned: usize,
    /// Seconds in compiles (preprocessing for the key included).
    pub compile_s: f64,
    pub link_s: f64,
}

impl Counts {
    pub fn add(&mut self, other: &Counts) {
        self.compiles += other.compiles;
        self.compile_hits += other.compile_hits;
        self.links += other.links;
        self.realigned += other.realigned;
        self.compile_s += other.compile_s;
        self.link_s += other.link_s;
    }

    /// One log line: "compiles hits links compile_s link_s realigned".
    pub fn log_line(&self) -> String {
        format!(
            "{} {} {} {:.6} {:.6} {}\n",
            self.compiles,
            self.compile_hits,
            self.links,
            self.compile_s,
            self.link_s,
            self.realigned
        )
    }

    /// The sum of a log's lines (lines that do not read are skipped; a
    /// line of five fields, from before `realigned`, reads with 0).
    pub fn from_log(text: &str) -> Counts {
        let mut total = Counts::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let n = |i: usize| f.get(i).map_or(Some(0), |w| w.parse::<usize>().ok());
            let s = |i: usize| f[i].parse::<f64>().ok();
            if !(5..=6).contains(&f.len()) {
                continue;
            }
            if let (Some(c), Some(h), Some(l), Some(cs), Some(ls), Some(r)) =
                (n(0), n(1), n(2), s(3), s(4), n(5))
            {
                total.add(&Counts {
                    compiles: c,
                    compile_hits: h,
                    links: l,
                    compile_s: cs,
                    link_s: ls,
                    realigned: r,
                });
            }
        }
        total
    }
}

/// Why a launcher call failed: the compiler's own failure, with its output.
#[derive(Debug)]
pub struct Failure {
    pub error: RunError,
    pub outcome: Option<Box<Outcome>>,
    /// The command that failed, as one line.
    pub command: String,
}

/// Whether `program` (a path or a name) is a C/C++ compiler driver:
/// cc, c++, gcc, g++, clang, clang++, with a target prefix or version suffix.
pub fn is_compiler(program: &str) -> bool {
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let base = base.strip_suffix('-').unwrap_or(base);
    let base = base.rsplit('-').next().unwrap_or(base);
    matches!(base, "cc" | "c++" | "gcc" | "g++" | "clang" | "clang++")
}

/// Options whose value is the next word.
const WITH_VALUE: [&str; 16] = [
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-MF",
    "-MT",
    "-MQ",
    "-L",
    "-l",
    "-Xlinker",
    "-T",
    "-z",
];

/// Options that only the link needs.
fn link_only(word: &str) -> bool {
    ["-l", "-L", "-Wl,", "-fuse-ld=", "-Xlinker", "-T", "-z"]
        .iter()
        .any(|p| word.starts_with(p))
        || matches!(
            word,
            "-static" | "-shared" | "-pie" | "-no-pie" | "-rdynamic" | "-s" | "-nostdlib"
        )
}

fn is_source(word: &str) -> bool {
    let ext = Path::new(word)
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    !word.starts_with('-')
        && matches!(
            ext.as_str(),
            "c" | "cc" | "cpp" | "cxx" | "c++" | "C" | "s" | "S" | "i" | "ii"
        )
}

/// A compiler call, read.
#[derive(Debug, PartialEq)]
struct Call {
    /// Indexes of the source words in argv.
    sources: Vec<usize>,
    /// The words every compile takes (no sources, outputs, link-only words).
    compile_flags: Vec<String>,
    /// `-c`.
    compile_only: bool,
    /// The `-o` value.
    output: Option<String>,
}

/// Read a call; None when the launcher does not handle it (run it as is).
fn read(argv: &[String]) -> Option<Call> {
    let mut call = Call {
        sources: Vec::new(),
        compile_flags: Vec::new(),
        compile_only: false,
        output: None,
    };
    let mut i = 1;
    while i < argv.len() {
        let word = argv[i].as_str();
        if matches!(
            word,
            "-E" | "-S" | "-M" | "-MM" | "-" | "-x" | "-fsyntax-only"
        ) || word.starts_with("-x")
            || word.starts_with('@')
        {
            return None;
        }
        if word == "-c" {
            call.compile_only = true;
        } else if word == "-o" {
            call.output = Some(argv.get(i + 1)?.clone());
            i += 1;
        } else if let Some(out) = word.strip_prefix("-o") {
            call.output = Some(out.to_string());
        } else if WITH_VALUE.contains(&word) {
            let value = argv.get(i + 1)?;
            if !link_only(word) {
                call.compile_flags.push(word.to_string());
                call.compile_flags.push(value.clone());
            }
            i += 1;
        } else if is_source(word) {
            call.sources.push(i);
        } else if word.starts_with('-') && !link_only(word) {
            call.compile_flags.push(word.to_string());
        }
        // Other words are link inputs (objects, archives, the padding object).
        i += 1;
    }
    if call.compile_only && (call.sources.len() != 1) {
        return None;
    }
    Some(call)
}

/// Run one compiler call through the cache, in `cwd`. The counts say what
/// it did; a failure carries the compiler's output.
pub fn run(
    argv: &[String],
    env: &[(String, String)],
    cwd: &Path,
    cache: &Cache,
    reuse: bool,
    timeout: Option<Duration>,
) -> Result<Counts, Failure> {
    let mut counts = Counts::default();
    let Some(call) = read(argv).filter(|c| !c.sources.is_empty()) else {
        // A link (no sources), or a call it does not understand: as it is.
        let started = Instant::now();
        let linking = read(argv).is_some();
        exec(argv, env, cwd, timeout)?;
        if linking {
            counts.links += 1;
            counts.link_s += started.elapsed().as_secs_f64();
        } else {
            counts.compiles += 1;
            counts.compile_s += started.elapsed().as_secs_f64();
        }
        return Ok(counts);
    };
    let identity = compiler_identity(&argv[0]);
    let variables = compiler_variables(env);
    // Alignment words aside, the same compile serves every alignment
    // (`realign`): its marker assembly is keyed without them.
    let split = realign::split(&call.compile_flags);
    let marked = split.as_ref().map(|(rest, _)| realign::marker_flags(rest));
    let scratch = cache.scratch().map_err(|e| setup_failure(argv, e))?;
    let mut link = argv.to_vec();
    for (n, &i) in call.sources.iter().enumerate() {
        let source = &argv[i];
        let object = if call.compile_only {
            let out = call
                .output
                .clone()
                .unwrap_or_else(|| default_object(source));
            cwd.join(out)
        } else {
            scratch.path().join(format!("{n}.o"))
        };
        let started = Instant::now();
        let marked = marked.as_deref().filter(|_| realign::realignable(source));
        let mut sets: Vec<&[String]> = vec![&call.compile_flags];
        sets.extend(marked);
        let keys = object_keys(
            argv, &call, source, &identity, env, cwd, &scratch, timeout, &variables, &sets,
        )?;
        let key = &keys[0];
        // One compile per key at a time in this process: parallel variants
        // with the same compile flags wait for the first instead of both
        // missing.
        let slot = cache::key_lock(key);
        let _compiling = slot.lock().unwrap_or_else(|e| e.into_inner());
        if reuse && cache.fetch(Kind::Object, key, &object) {
            counts.compile_hits += 1;
        } else {
            let realigned = match (&split, marked, keys.get(1)) {
                (Some((rest, align)), Some(marked), Some(asm_key)) => realign::Job {
                    program: &argv[0],
                    identity: &identity,
                    variables: &variables,
                    source,
                    rest,
                    align,
                    marked,
                    asm_key,
                    object: &object,
                    scratch: scratch.path(),
                    n,
                }
                .run(cache, reuse, &Compiler { env, cwd, timeout }),
                _ => realign::Realigned::default(),
            };
            counts.compiles += usize::from(realigned.compiled);
            if realigned.done {
                counts.realigned += 1;
            } else {
                let compile =
                    realign::command(&argv[0], &call.compile_flags, "-c", source, &object);
                exec(&compile, env, cwd, timeout)?;
                counts.compiles += 1;
            }
            let _ = cache.put(Kind::Object, key, &object);
        }
        counts.compile_s += started.elapsed().as_secs_f64();
        link[i] = object.display().to_string();
    }
    if !call.compile_only {
        let started = Instant::now();
        exec(&link, env, cwd, timeout)?;
        counts.links += 1;
        counts.link_s += started.elapsed().as_secs_f64();
    }
    Ok(counts)
}

/// `dir/x.c` → `x.o`, where `cc -c` writes it without `-o`.
fn default_object(source: &str) -> String {
    let stem = Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "a".into());
    format!("{stem}.o")
}

/// The compiler's identity: its resolved path, size and modification time,
/// and `--version`'s first line is not needed (the file is the compiler).
fn compiler_identity(program: &str) -> String {
    let Ok(path) = crate::run::command::resolve_program(program, std::env::var_os("PATH")) else {
        return program.to_string();
    };
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    let meta = std::fs::metadata(&path).ok();
    format!(
        "{} {} {:?}",
        path.display(),
        meta.as_ref().map_or(0, |m| m.len()),
        meta.and_then(|m| m.modified().ok())
    )
}

/// The keys of one source's object under each of `sets` of compile flags:
/// the compiler, the flags, the environment compilers read, and the
/// preprocessed text (read once; the flags of `sets[0]` preprocess it).
/// `variables` are the values of [`COMPILER_VARIABLES`].
#[allow(clippy::too_many_arguments)]
fn object_keys(
    argv: &[String],
    call: &Call,
    source: &str,
    identity: &str,
    env: &[(String, String)],
    cwd: &Path,
    scratch: &tempfile::TempDir,
    timeout: Option<Duration>,
    variables: &[(&'static str, String)],
    sets: &[&[String]],
) -> Result<Vec<String>, Failure> {
    // Assembly without the preprocessor (`.s`) is its own text.
    let preprocessed = if source.ends_with(".s") {
        cwd.join(source)
    } else {
        let preprocessed = scratch.path().join("pre.i");
        let pre = realign::command(&argv[0], &call.compile_flags, "-E", source, &preprocessed);
        exec_quiet(&pre, env, cwd, timeout)?;
        preprocessed
    };
    let extension = Path::new(source)
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut keys: Vec<Key> = sets
        .iter()
        .map(|flags| {
            let mut key = Key::new(b"ghostbench object key, second half");
            key.write(identity.as_bytes());
            for flag in flags.iter() {
                key.write(flag.as_bytes());
            }
            key.write(extension.as_bytes());
            for (name, value) in variables {
                key.write(name.as_bytes());
                key.write(value.as_bytes());
            }
            key
        })
        .collect();
    let mut file = std::fs::File::open(&preprocessed).map_err(|e| setup_failure(argv, e))?;
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buffer).map_err(|e| setup_failure(argv, e))?;
        if n == 0 {
            break;
        }
        for key in &mut keys {
            key.write(&buffer[..n]);
        }
    }
    if preprocessed.starts_with(scratch.path()) {
        let _ = std::fs::remove_file(&preprocessed);
    }
    Ok(keys.into_iter().map(Key::finish).collect())
}

/// The values of [`COMPILER_VARIABLES`]: from `env`, else this process's.
fn compiler_variables(env: &[(String, String)]) -> Vec<(&'static str, String)> {
    COMPILER_VARIABLES
        .iter()
        .map(|&name| {
            let value = env
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(name).ok())
                .unwrap_or_default();
            (name, value)
        })
        .collect()
}

fn setup_failure(argv: &[String], e: std::io::Error) -> Failure {
    Failure {
        error: RunError::Setup(e.to_string()),
        outcome: None,
        command: one_line(argv),
    }
}

fn one_line(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

/// Compiler commands for `realign`, run as the launcher runs its own.
struct Compiler<'a> {
    env: &'a [(String, String)],
    cwd: &'a Path,
    timeout: Option<Duration>,
}

impl realign::Runner for Compiler<'_> {
    fn run(&self, argv: &[String], forward: bool) -> bool {
        if forward {
            exec(argv, self.env, self.cwd, self.timeout).is_ok()
        } else {
            exec_quiet(argv, self.env, self.cwd, self.timeout).is_ok()
        }
    }
}

/// Set by `ghostbench launch`: the compiler's output is passed on (build
/// systems read it, e.g. cmake's compiler checks parse `-v`).
static FORWARD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Run one compiler command in `cwd`; any end but exit 0 is a failure.
/// Under `ghostbench launch` its output is passed on.
fn exec(
    argv: &[String],
    env: &[(String, String)],
    cwd: &Path,
    timeout: Option<Duration>,
) -> Result<Outcome, Failure> {
    let outcome = exec_quiet(argv, env, cwd, timeout)?;
    if FORWARD.load(std::sync::atomic::Ordering::Relaxed) {
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(&outcome.stdout);
        let _ = std::io::stderr().lock().write_all(&outcome.stderr_tail);
    }
    Ok(outcome)
}

/// [`exec`], its output kept to itself.
fn exec_quiet(
    argv: &[String],
    env: &[(String, String)],
    cwd: &Path,
    timeout: Option<Duration>,
) -> Result<Outcome, Failure> {
    Launch {
        env,
        timeout,
        cwd: Some(cwd),
        ..Launch::new(argv)
    }
    .run_ok()
    .map_err(|(error, outcome)| Failure {
        error,
        outcome,
        command: one_line(argv),
    })
}

/// `ghostbench launch COMPILER ARGS…`: one call through the cache named by
/// [`CACHE_VARIABLE`] (or the current directory's), its counts appended to
/// the [`LOG_VARIABLE`] file; the compiler's output is passed on. Returns
/// the exit code: the compiler's, or 1 when it could not run.
pub fn launch_main(argv: &[String]) -> i32 {
    FORWARD.store(true, std::sync::atomic::Ordering::Relaxed);
    // Never `eprintln!`: a stderr that is gone must not panic.
    let say = |text: &str| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let cache = match std::env::var_os(CACHE_VARIABLE) {
        Some(dir) => Ok(Cache {
            root: PathBuf::from(dir),
        }),
        None => Cache::open(&cwd),
    };
    let cache = match cache {
        Ok(c) => c,
        Err(e) => {
            say(&format!("ghostbench launch: cannot use the cache: {e}"));
            return 1;
        }
    };
    if argv.is_empty() {
        say("ghostbench launch: usage: ghostbench launch COMPILER ARGS…");
        return 2;
    }
    let (code, counts) = match run(argv, &[], &cwd, &cache, true, None) {
        Ok(counts) => (0, counts),
        Err(failure) => {
            if let Some(outcome) = &failure.outcome {
                for line in launch::output_tail(outcome, 20, 40) {
                    say(&line);
                }
            }
            say(&format!(
                "ghostbench launch: {}: {}",
                failure.command, failure.error
            ));
            let code = match failure.error {
                RunError::Exit(code) => code,
                _ => 1,
            };
            (code, Counts::default())
        }
    };
    if let Some(log) = std::env::var_os(LOG_VARIABLE) {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(log)
        {
            let _ = file.write_all(counts.log_line().as_bytes());
        }
    }
    code
}

#[cfg(test)]
#[path = "launcher_tests.rs"]
mod tests;
