//! `layout --explain`'s callgrind profile of a build's default-layout binary:
//! the run template once under `valgrind --tool=callgrind`, bounded in time,
//! and the profile file that covers the binary.

use super::builds::{self, Placeholders};
use super::LayoutOptions;
use crate::code::profile;
use crate::run::command::resolve_program;
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long callgrind may run a default binary when `--timeout` is not given.
pub const PROFILE_TIMEOUT: Duration = Duration::from_secs(60);

/// Run a build's default binary once under callgrind (the run template,
/// bounded by `--timeout` or [`PROFILE_TIMEOUT`]) and read the profile. Each
/// build profiles into its own directory under `explain/`, emptied first.
pub fn take(
    options: &LayoutOptions,
    work_dir: &Path,
    build: &str,
    binary: &Path,
) -> Result<profile::Profile> {
    let valgrind = resolve_program("valgrind", std::env::var_os("PATH"))
        .map_err(|_| anyhow::anyhow!("valgrind not found, so no profile"))?;
    let dir = work_dir.join("explain").join(super::plan::sanitize(build));
    // Old profiles must not be read as this one.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let values = Placeholders {
        cflags: Vec::new(),
        ldflags: Vec::new(),
        out: binary.to_path_buf(),
        dir: binary.parent().unwrap_or(Path::new(".")).to_path_buf(),
    };
    let argv = builds::substitute(&options.run_template, options.shell, &values)
        .context("cannot profile: run template")?;
    let log = dir.join("valgrind.log");
    let stderr =
        std::fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
    // %p: with --shell (or a wrapper script) every child process writes its own file.
    let mut child = Command::new(&valgrind)
        .arg("--tool=callgrind")
        .arg("--trace-children=yes")
        .arg(format!(
            "--callgrind-out-file={}",
            dir.join("callgrind.out.%p").display()
        ))
        .arg("--")
        .args(&argv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("cannot start {}", valgrind.display()))?;
    let limit = options.timeout.unwrap_or(PROFILE_TIMEOUT);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for callgrind")? {
            break status;
        }
        if started.elapsed() > limit || crate::run::spawn::interrupted() {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "callgrind profile of {} stopped after {:.0} s",
                binary.display(),
                limit.as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        let tail = std::fs::read_to_string(&log).unwrap_or_default();
        let last = tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!(
            "callgrind run of {} failed ({status}): {last}",
            binary.display()
        );
    }
    // The profile whose objects include the binary, and the largest of those.
    let key = profile::object_key(&binary.to_string_lossy());
    let mut best: Option<profile::Profile> = None;
    for entry in std::fs::read_dir(&dir)?.flatten() {
        let path = entry.path();
        if !path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("callgrind.out."))
        {
            continue;
        }
        let Ok(p) = profile::read(&path) else {
            continue;
        };
        let has_binary = p.entries.keys().any(|(object, _)| *object == key);
        if has_binary && best.as_ref().map_or(true, |b| p.total > b.total) {
            best = Some(p);
        }
    }
    best.with_context(|| format!("callgrind wrote no profile of {}", binary.display()))
}
