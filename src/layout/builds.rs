//! Builds: template checks and substitution, and parallel builds (each
//! started by `run::launch`, in its own process group, stdin from
//! /dev/null, killed on Ctrl-C, with its variant's directory as working
//! directory so nothing lands in the user's tree).
//!
//! A template is split shell-style into words first; placeholders are then
//! substituted inside the words, so nothing reaches a shell unless `--shell`
//! asks for one. A word that is exactly `{cflags}`, `{ldflags}` or `{rustflags}` expands to
//! one word per flag (none when empty); elsewhere a placeholder is replaced by
//! its text (flags joined by spaces). With `--shell`, the values are quoted
//! and the text runs under `sh -c`. Words naming an existing file relative
//! to where ghostbench started are made absolute (the build runs elsewhere);
//! `{src}` is that directory, for `--shell` templates.
//!
//! The cache (`cache::Cache`, shared by every experiment): a template whose
//! first word is a C/C++ compiler runs through the `launcher` (objects
//! cached by their preprocessed source, one link per variant); any other
//! template's inputs (argv with its own directory written as `{dir}`, the
//! exported flags, the environment compilers read, the compiler's identity
//! and the contents of every existing file the argv names) hash to a key
//! whose entry is the output. Jobs with equal keys in one experiment are
//! built once and copied.
//!
//! It is over 600 lines because its unit tests (substitution, keys, the cache across
//! directories, failures in words) sit with the code they hold.

pub use super::cache::Fnv;
use super::cache::{Cache, Kind};
use super::launcher::{self, Counts};
use crate::run::error::signal_name;
use crate::run::launch::{self, Launch};
use crate::run::RunError;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// The values of one (build, variant)'s placeholders.
#[derive(Debug, Clone)]
pub struct Placeholders {
    pub cflags: Vec<String>,
    pub ldflags: Vec<String>,
    /// `{rustflags}`: the variant's flags for a bare `rustc` (the same ones
    /// cargo gets through `CARGO_ENCODED_RUSTFLAGS`).
    pub rustflags: Vec<String>,
    pub out: PathBuf,
    pub dir: PathBuf,
    /// `{launcher}`: the compiler launcher script.
    pub launcher: PathBuf,
    /// `{src}`: the directory ghostbench started in.
    pub src: PathBuf,
}

impl Placeholders {
    /// The values of a run template: `{out}`, `{dir}` and `{src}` (no flags).
    pub fn for_run(out: PathBuf, dir: PathBuf) -> Placeholders {
        Placeholders {
            cflags: Vec::new(),
            ldflags: Vec::new(),
            rustflags: Vec::new(),
            out,
            dir,
            launcher: PathBuf::new(),
            src: std::env::current_dir().unwrap_or_default(),
        }
    }
}

pub use super::launcher::COMPILER_VARIABLES;

/// A template that cannot make a binary ghostbench finds: refused before
/// anything is built (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("build {name}: the template names no output: use {{out}} (or write {{dir}}/bench), e.g. 'cc -O2 {{cflags}} {{ldflags}} x.c -o {{out}}'")]
pub struct TemplateError {
    pub name: String,
}

/// The static check of a build template: it must name its output.
pub fn check_template(name: &str, template: &str) -> Result<(), TemplateError> {
    if template.contains("{out}") || template.contains("{dir}/bench") {
        Ok(())
    } else {
        Err(TemplateError {
            name: name.to_string(),
        })
    }
}

/// Make the words of `argv` that name an existing path relative to `base`
/// absolute (also the path of `-I`, `-L`, `-B`, `-include`-style words), so
/// the build finds them from its own directory. Outputs that do not exist
/// yet stay relative: they land in the variant's directory.
pub fn absolutize(argv: &mut [String], base: &Path) {
    for word in argv.iter_mut().skip(1) {
        let (prefix, rest) = ["-I", "-L", "-B"]
            .iter()
            .find_map(|p| word.strip_prefix(p).map(|r| (*p, r.to_string())))
            .unwrap_or(("", word.clone()));
        if rest.is_empty() || rest.starts_with('-') || Path::new(&rest).is_absolute() {
            continue;
        }
        if prefix.is_empty() && word.starts_with('-') {
            continue;
        }
        let full = base.join(&rest);
        if full.exists() {
            *word = format!("{prefix}{}", full.display());
        }
    }
}

/// Substitute placeholders into a template: the argv to exec.
pub fn substitute(template: &str, shell: bool, values: &Placeholders) -> Result<Vec<String>> {
    let text_of = |flags: &[String]| flags.join(" ");
    if shell {
        let quote = |flags: &[String]| {
            flags
                .iter()
                .map(|f| quoted(f))
                .collect::<Result<Vec<_>>>()
                .map(|q| q.join(" "))
        };
        let text = template
            .replace("{cflags}", &quote(&values.cflags)?)
            .replace("{ldflags}", &quote(&values.ldflags)?)
            .replace("{rustflags}", &quote(&values.rustflags)?)
            .replace("{out}", &quoted(&values.out.display().to_string())?)
            .replace("{dir}", &quoted(&values.dir.display().to_string())?)
            .replace(
                "{launcher}",
                &quoted(&values.launcher.display().to_string())?,
            )
            .replace("{src}", &quoted(&values.src.display().to_string())?);
        return Ok(vec!["sh".into(), "-c".into(), text]);
    }
    let words = crate::run::command::split_words(template)?;
    let mut argv = Vec::with_capacity(words.len());
    for word in words {
        match word.as_str() {
            "{cflags}" => argv.extend(values.cflags.iter().cloned()),
            "{ldflags}" => argv.extend(values.ldflags.iter().cloned()),
            "{rustflags}" => argv.extend(values.rustflags.iter().cloned()),
            _ => argv.push(
                word.replace("{cflags}", &text_of(&values.cflags))
                    .replace("{ldflags}", &text_of(&values.ldflags))
                    .replace("{rustflags}", &text_of(&values.rustflags))
                    .replace("{out}", &values.out.display().to_string())
                    .replace("{dir}", &values.dir.display().to_string())
                    .replace("{launcher}", &values.launcher.display().to_string())
                    .replace("{src}", &values.src.display().to_string()),
            ),
        }
    }
    if argv.is_empty() {
        bail!("template {template:?} is empty after substitution");
    }
    Ok(argv)
}

fn quoted(text: &str) -> Result<String> {
    shlex::try_quote(text)
        .map(|q| q.into_owned())
        .with_context(|| format!("cannot quote {text:?} for the shell"))
}

/// One build to make.
#[derive(Debug, Clone)]
pub struct BuildJob {
    pub build: usize,
    pub seed: u64,
    pub dir: PathBuf,
    pub out: PathBuf,
    pub argv: Vec<String>,
    /// CFLAGS, CXXFLAGS and LDFLAGS, with the variant's flags appended.
    pub env: Vec<(String, String)>,
    pub key: u64,
    /// Run through the launcher (the template's first word is a compiler).
    pub launched: bool,
}

impl BuildJob {
    pub fn new(build: usize, seed: u64, argv: Vec<String>, values: &Placeholders) -> BuildJob {
        let append = |name: &str, extra: &[String]| {
            let mut value = std::env::var(name).unwrap_or_default();
            for flag in extra {
                if !value.is_empty() {
                    value.push(' ');
                }
                value.push_str(flag);
            }
            (name.to_string(), value)
        };
        let env = vec![
            append("CFLAGS", &values.cflags),
            append("CXXFLAGS", &values.cflags),
            append("LDFLAGS", &values.ldflags),
        ];
        let key = cache_key(&argv, &env, &values.dir, &values.out);
        let launched = argv.first().is_some_and(|p| launcher::is_compiler(p));
        BuildJob {
            build,
            seed,
            dir: values.dir.clone(),
            out: values.out.clone(),
            argv,
            env,
            key,
            launched,
        }
    }

    /// The job with `extra` variables exported too (a variant's rustc
    /// flags), its cache key taking them in.
    pub fn with_env(mut self, extra: Vec<(String, String)>) -> BuildJob {
        self.env.extend(extra);
        self.key = cache_key(&self.argv, &self.env, &self.dir, &self.out);
        self
    }

    /// The command as one line, for messages.
    pub fn command_line(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str))
            .unwrap_or_else(|_| self.argv.join(" "))
    }
}

/// What happened to one build.
#[derive(Debug, Clone, Serialize)]
pub struct BuildResult {
    pub build: usize,
    pub seed: u64,
    pub ok: bool,
    /// Taken from the cache or from an identical build in this experiment.
    pub reused: bool,
    pub seconds: f64,
    pub command: String,
    pub error: Option<String>,
    /// The last lines of the build's output, on failure.
    pub output_tail: Vec<String>,
    /// Compiles, cache hits and links (through the launcher), with their time.
    #[serde(flatten)]
    pub launched: Counts,
    /// FNV-1a of the binary's code (its executable sections); None when
    /// it did not build or is not an ELF file with code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_hash: Option<String>,
}

/// Where a build's launcher calls log their counts, in its directory.
const LAUNCH_LOG: &str = ".ghostbench-launch.log";

/// Make every job, at most `parallel` at a time, reusing identical inputs;
/// a build still running after `timeout` is killed (its process group) and
/// fails. `on_done` is called on the calling thread after each job.
pub fn run_all(
    jobs: &[BuildJob],
    cache: &Cache,
    parallel: usize,
    rebuild: bool,
    timeout: Option<Duration>,
    on_done: &mut dyn FnMut(&BuildResult),
) -> Vec<BuildResult> {
    // The first job of each key builds; the others copy its output.
    let mut leader: HashMap<u64, usize> = HashMap::new();
    let mut followers: Vec<(usize, usize)> = Vec::new();
    let mut queue = VecDeque::new();
    for (i, job) in jobs.iter().enumerate() {
        match leader.get(&job.key) {
            Some(&l) => followers.push((i, l)),
            None => {
                leader.insert(job.key, i);
                queue.push_back(i);
            }
        }
    }
    let mut results: Vec<Option<BuildResult>> = vec![None; jobs.len()];
    // No more threads than builds, whatever `--jobs` says: each thread is
    // a stack and a start, and ten million of them took minutes to start.
    let threads = parallel.clamp(1, queue.len().max(1));
    let queue = Mutex::new(queue);
    let (sender, receiver) = mpsc::channel::<(usize, BuildResult)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let sender = sender.clone();
            let queue = &queue;
            scope.spawn(move || loop {
                // After Ctrl-C, SIGTERM or SIGHUP no build starts; the
                // running ones are killed by their launch.
                if crate::run::interrupt::interrupted() {
                    break;
                }
                let next = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None);
                let Some(i) = next else { break };
                if sender
                    .send((i, build_one(&jobs[i], cache, rebuild, timeout)))
                    .is_err()
                {
                    break;
                }
            });
        }
        drop(sender);
        for (i, result) in receiver {
            on_done(&result);
            results[i] = Some(result);
        }
    });
    for (i, l) in followers {
        let source = results[l].clone();
        let result = match source {
            Some(r) if r.ok => copy_build(&jobs[l], &jobs[i]),
            Some(r) => BuildResult {
                build: jobs[i].build,
                seed: jobs[i].seed,
                reused: true,
                command: jobs[i].command_line(),
                ..r
            },
            None => failed(&jobs[i], 0.0, not_built(), Vec::new()),
        };
        on_done(&result);
        results[i] = Some(result);
    }
    // What the builds left running (a compiler server, a stray `&`) ends
    // with them, before any benchmark runs.
    crate::run::spawn::kill_leftovers();
    results
        .into_iter()
        .zip(jobs)
        .map(|(r, job)| r.unwrap_or_else(|| failed(job, 0.0, not_built(), Vec::new())))
        .collect()
}

/// Why a job has no result: it never started (a signal stopped the builds).
fn not_built() -> String {
    if crate::run::interrupt::interrupted() {
        format!("not built: {}", crate::run::interrupt::cause())
    } else {
        "not built".into()
    }
}

fn failed(job: &BuildJob, seconds: f64, error: String, output_tail: Vec<String>) -> BuildResult {
    BuildResult {
        build: job.build,
        seed: job.seed,
        ok: false,
        reused: false,
        seconds,
        command: job.command_line(),
        error: Some(error),
        output_tail,
        launched: Counts::default(),
        code_hash: None,
    }
}

fn succeeded(job: &BuildJob, seconds: f64, reused: bool, launched: Counts) -> BuildResult {
    BuildResult {
        build: job.build,
        seed: job.seed,
        ok: true,
        reused,
        seconds,
        command: job.command_line(),
        error: None,
        output_tail: Vec::new(),
        launched,
        code_hash: crate::elf::code_hash(&job.out).map(|h| format!("{h:016x}")),
    }
}

fn build_one(
    job: &BuildJob,
    cache: &Cache,
    rebuild: bool,
    timeout: Option<Duration>,
) -> BuildResult {
    let started = Instant::now();
    let key_text = format!("{:016x}", job.key);
    // WORK/BUILD/SEED: owner-only, no link in it (the file-safety rule).
    if let Err(e) = crate::safe_file::private_tail(&job.dir, 2) {
        return failed(
            job,
            0.0,
            format!("cannot create {}: {e}", job.dir.display()),
            Vec::new(),
        );
    }
    if !rebuild && !job.launched && cache.fetch(Kind::Build, &key_text, &job.out) {
        return succeeded(job, 0.0, true, Counts::default());
    }
    let _ = std::fs::remove_file(&job.out);
    let log = job.dir.join(LAUNCH_LOG);
    let _ = std::fs::remove_file(&log);
    let (outcome, launched) = if job.launched {
        match launcher::run(&job.argv, &job.env, &job.dir, cache, !rebuild, timeout) {
            Ok(counts) => (None, counts),
            Err(failure) => {
                let tail = failure
                    .outcome
                    .as_deref()
                    .map(|o| launch::output_tail(o, 5, 15))
                    .unwrap_or_default();
                let how = describe(&failure.error, timeout, &job.argv[0]);
                let seconds = started.elapsed().as_secs_f64();
                return failed(job, seconds, format!("{how}: {}", failure.command), tail);
            }
        }
    } else {
        let mut env = job.env.clone();
        env.push((launcher::LOG_VARIABLE.into(), log.display().to_string()));
        env.push((
            launcher::CACHE_VARIABLE.into(),
            cache.root.display().to_string(),
        ));
        let output = Launch {
            env: &env,
            timeout,
            cwd: Some(&job.dir),
            ..Launch::new(&job.argv)
        }
        .run();
        let launched =
            launcher::Counts::from_log(&std::fs::read_to_string(&log).unwrap_or_default());
        (Some(output), launched)
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut tail = Vec::new();
    if let Some(output) = outcome {
        let output = match output {
            Ok(output) => output,
            Err(e) => {
                return failed(
                    job,
                    seconds,
                    describe(&e, timeout, &job.argv[0]),
                    Vec::new(),
                )
            }
        };
        tail = launch::output_tail(&output, 5, 15);
        if let Some(error) = output.exit.error(timeout) {
            return failed(job, seconds, describe(&error, timeout, &job.argv[0]), tail);
        }
    }
    if !job.out.exists() {
        return failed(
            job,
            seconds,
            format!(
                "build succeeded but did not write {} (does the template use {{out}}?)",
                job.out.display()
            ),
            tail,
        );
    }
    if !job.launched {
        let _ = cache.put(Kind::Build, &key_text, &job.out);
    }
    succeeded(job, seconds, false, launched)
}

/// A build's failure in words.
fn describe(error: &RunError, timeout: Option<Duration>, program: &str) -> String {
    match error {
        RunError::NotFound { program } => format!("cannot run {program:?}: not found"),
        RunError::Exit(code) => format!("build failed with exit code {code}"),
        RunError::Signal(signal) => {
            format!("build killed by signal {signal} ({})", signal_name(*signal))
        }
        RunError::Interrupted => format!("build {}", crate::run::interrupt::cause()),
        RunError::Timeout(limit) => format!(
            "build timed out after {} s (--build-timeout); its process group was killed",
            limit.as_secs_f64()
        ),
        RunError::Spawn { .. } | RunError::Setup(_) => {
            format!("cannot run {program:?}: {error}")
        }
        other => {
            let _ = timeout;
            format!("build failed: {other}")
        }
    }
}

fn copy_build(from: &BuildJob, to: &BuildJob) -> BuildResult {
    let copy = || -> Result<()> {
        crate::safe_file::private_tail(&to.dir, 2)?;
        let _ = std::fs::remove_file(&to.out);
        std::fs::copy(&from.out, &to.out)?;
        Ok(())
    };
    match copy() {
        Ok(()) => succeeded(to, 0.0, true, Counts::default()),
        Err(e) => failed(
            to,
            0.0,
            format!("cannot copy {}: {e}", from.out.display()),
            Vec::new(),
        ),
    }
}

fn cache_key(argv: &[String], env: &[(String, String)], dir: &Path, out: &Path) -> u64 {
    let dir_text = dir.display().to_string();
    let mut hash = Fnv::default();
    for word in argv {
        hash.write(word.replace(&dir_text, "{dir}").as_bytes());
    }
    for (name, value) in env {
        hash.write(name.as_bytes());
        hash.write(value.replace(&dir_text, "{dir}").as_bytes());
    }
    // The environment the build sees beyond the flags.
    for name in COMPILER_VARIABLES.iter().chain(&["PATH", "CC", "CXX"]) {
        hash.write(name.as_bytes());
        hash.write(std::env::var(name).unwrap_or_default().as_bytes());
    }
    // The compiler's identity: its resolved path, size and modification time.
    if let Ok(program) = crate::run::command::resolve_program(&argv[0], std::env::var_os("PATH")) {
        let program = std::fs::canonicalize(&program).unwrap_or(program);
        hash.write(program.display().to_string().as_bytes());
        if let Ok(meta) = std::fs::metadata(&program) {
            hash.write(&meta.len().to_le_bytes());
            if let Ok(modified) = meta.modified() {
                hash.write(format!("{modified:?}").as_bytes());
            }
        }
    }
    // The contents of every input file the argv names (sources, objects, the pad).
    for word in argv {
        let path = Path::new(word);
        if path == out || word.starts_with('-') {
            continue;
        }
        if path.is_file() {
            if let Ok(mut file) = std::fs::File::open(path) {
                let mut bytes = Vec::new();
                if file.read_to_end(&mut bytes).is_ok() {
                    hash.write(&bytes);
                }
            }
        }
    }
    hash.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> Placeholders {
        Placeholders {
            cflags: vec!["-falign-functions=32".into(), "-falign-loops=32".into()],
            ldflags: vec![],
            rustflags: vec!["-C".into(), "llvm-args=-align-all-functions=5".into()],
            out: PathBuf::from("/w/b 1/bin"),
            dir: PathBuf::from("/w/b 1"),
            launcher: PathBuf::from("/c/launch"),
            src: PathBuf::from("/s"),
        }
    }

    #[test]
    fn substitutes_into_words_without_a_shell() {
        let argv = substitute(
            "cc -O2 {cflags} x.c -o {out} {ldflags} -Wl,-Map={dir}/map",
            false,
            &values(),
        )
        .unwrap();
        assert_eq!(
            argv,
            [
                "cc",
                "-O2",
                "-falign-functions=32",
                "-falign-loops=32",
                "x.c",
                "-o",
                "/w/b 1/bin",
                "-Wl,-Map=/w/b 1/map"
            ]
        );
    }

    #[test]
    fn rustflags_expand_to_words_or_text() {
        let argv = substitute("rustc -O {rustflags} x.rs -o {out}", false, &values()).unwrap();
        assert_eq!(
            argv,
            [
                "rustc",
                "-O",
                "-C",
                "llvm-args=-align-all-functions=5",
                "x.rs",
                "-o",
                "/w/b 1/bin"
            ]
        );
        let argv = substitute("rustc {rustflags} x.rs -o {out}", true, &values()).unwrap();
        assert_eq!(
            argv[2],
            "rustc -C 'llvm-args=-align-all-functions=5' x.rs -o '/w/b 1/bin'"
        );
        let mut none = values();
        none.rustflags.clear();
        let argv = substitute("rustc {rustflags} x.rs -o {out}", false, &none).unwrap();
        assert_eq!(argv, ["rustc", "x.rs", "-o", "/w/b 1/bin"]);
    }

    #[test]
    fn shell_mode_quotes_values() {
        let argv = substitute("cc {cflags} x.c -o {out} && echo ok", true, &values()).unwrap();
        assert_eq!(argv[0], "sh");
        assert_eq!(
            argv[2],
            "cc '-falign-functions=32' '-falign-loops=32' x.c -o '/w/b 1/bin' && echo ok"
        );
    }

    #[test]
    fn keys_ignore_the_directory_but_not_the_flags() {
        let v = values();
        let mut w = values();
        w.dir = PathBuf::from("/w/other");
        w.out = PathBuf::from("/w/other/bin");
        let template = "cc {cflags} x.c -o {out}";
        let a = BuildJob::new(0, 1, substitute(template, false, &v).unwrap(), &v);
        let b = BuildJob::new(0, 2, substitute(template, false, &w).unwrap(), &w);
        assert_eq!(a.key, b.key);
        w.cflags.clear();
        let c = BuildJob::new(0, 3, substitute(template, false, &w).unwrap(), &w);
        assert_ne!(a.key, c.key);
    }

    fn shell_job(dir: &Path, script: &str) -> BuildJob {
        let values = Placeholders {
            cflags: vec![],
            ldflags: vec![],
            rustflags: vec![],
            out: dir.join("bin"),
            dir: dir.to_path_buf(),
            launcher: PathBuf::from("/c/launch"),
            src: PathBuf::from("/s"),
        };
        let argv = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
        BuildJob::new(0, 0, argv, &values)
    }

    #[test]
    fn a_build_runs_once_then_comes_from_the_cache() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(tmp.path()).unwrap();
        let dir = tmp.path().join("b/1");
        let job = shell_job(&dir, &format!("echo $CFLAGS > {}/bin", dir.display()));
        let first = build_one(&job, &cache, false, None);
        assert!(first.ok && !first.reused, "{first:?}");
        assert!(dir.join("bin").exists());
        // Another experiment's directory: the shared cache has it.
        let other = tmp.path().join("c/1");
        let job2 = shell_job(&other, &format!("echo $CFLAGS > {}/bin", other.display()));
        assert_eq!(job.key, job2.key);
        let elsewhere = build_one(&job2, &cache, false, None);
        assert!(elsewhere.ok && elsewhere.reused, "{elsewhere:?}");
        let second = build_one(&job, &cache, false, None);
        assert!(second.ok && second.reused, "{second:?}");
        assert!(!build_one(&job, &cache, true, None).reused);
    }

    #[test]
    fn failed_builds_say_how_and_keep_their_last_output() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(tmp.path()).unwrap();
        let tmp = tmp.path().join("B/1");
        let failing = shell_job(&tmp, "echo compiling; echo 'x.c:1: error' >&2; exit 3");
        let result = build_one(&failing, &cache, false, None);
        assert!(!result.ok);
        assert_eq!(
            result.error.as_deref(),
            Some("build failed with exit code 3")
        );
        assert_eq!(result.output_tail, ["compiling", "x.c:1: error"]);
        let crashing = shell_job(&tmp, "kill -SEGV $$");
        assert_eq!(
            build_one(&crashing, &cache, false, None).error.as_deref(),
            Some("build killed by signal 11 (SIGSEGV)")
        );
        let silent = shell_job(&tmp, "true");
        let error = build_one(&silent, &cache, false, None).error.unwrap();
        assert!(error.contains("did not write"), "{error}");
        let mut missing = shell_job(&tmp, "true");
        missing.argv[0] = "ghostbench-no-such-compiler".into();
        let error = build_one(&missing, &cache, false, None).error.unwrap();
        assert!(error.contains("ghostbench-no-such-compiler"), "{error}");
    }
}
