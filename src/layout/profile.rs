//! `layout --explain`'s callgrind profile of a build's default-layout binary:
//! the run template once under `valgrind --tool=callgrind` (started by
//! `run::launch`: its own process group, killed whole at the time bound or on
//! Ctrl-C), and the profile file that covers the binary.

use super::builds::{self, Placeholders};
use super::LayoutOptions;
use crate::code::profile;
use crate::run::launch::{self, Launch};
use crate::run::spawn::Exit;
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::time::Duration;

/// How long callgrind may run a default binary when `--timeout` is not given.
pub const PROFILE_TIMEOUT: Duration = Duration::from_secs(60);

/// Run a build's default binary once under callgrind (the run template,
/// bounded by `--timeout` or [`PROFILE_TIMEOUT`]) and read the profile. Each
/// build profiles into its own directory under `explain/`, emptied first;
/// valgrind's own output is kept there as `valgrind.log`.
pub fn take(
    options: &LayoutOptions,
    work_dir: &Path,
    build: &str,
    binary: &Path,
) -> Result<profile::Profile> {
    let valgrind = launch::tool("valgrind").context("no profile")?;
    let relative = Path::new("explain").join(super::plan::sanitize(build));
    let dir = work_dir.join(&relative);
    // Old profiles must not be read as this one.
    let _ = std::fs::remove_dir_all(&dir);
    crate::safe_file::private_dir(work_dir, &relative)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let values = Placeholders::for_run(
        binary.to_path_buf(),
        binary.parent().unwrap_or(Path::new(".")).to_path_buf(),
    );
    let argv = builds::substitute(&options.run_template, options.shell, &values)
        .context("cannot profile: run template")?;
    // %p: with --shell (or a wrapper script) every child process writes its own file.
    let mut words = vec![
        valgrind.display().to_string(),
        "--tool=callgrind".to_string(),
        "--trace-children=yes".to_string(),
        format!(
            "--callgrind-out-file={}",
            dir.join("callgrind.out.%p").display()
        ),
        "--".to_string(),
    ];
    words.extend(argv);
    let limit = options.timeout.unwrap_or(PROFILE_TIMEOUT);
    let outcome = Launch {
        timeout: Some(limit),
        stdout: None,
        ..Launch::new(&words)
    }
    .run()
    .with_context(|| format!("cannot start {}", valgrind.display()))?;
    let log = dir.join("valgrind.log");
    std::fs::write(&log, &outcome.stderr_tail)
        .with_context(|| format!("cannot write {}", log.display()))?;
    match outcome.exit {
        Exit::Code(0) => {}
        Exit::TimedOut => bail!(
            "callgrind profile of {} stopped after {:.0} s",
            binary.display(),
            limit.as_secs_f64()
        ),
        Exit::Interrupted => bail!(
            "callgrind profile of {} {}",
            binary.display(),
            crate::run::interrupt::cause()
        ),
        exit => {
            let last = crate::run::spawn::last_lines(&outcome.stderr_tail, 1);
            bail!(
                "callgrind run of {} failed ({}): {}",
                binary.display(),
                exit.describe(),
                last.first().map_or("", String::as_str)
            );
        }
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
