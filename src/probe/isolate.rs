//! Running each probe in its own child process, and the whole `probe` run.
//!
//! Probes do things a process may not survive: a split lock under
//! `split_lock_detect=fatal` is answered with SIGBUS, executable memory may
//! be forbidden, a 1 GiB mapping may be refused. Running each probe as
//! `ghostbench probe --child NAME …` confines any of that to one probe: the
//! parent reports a clear line for it and the other probes still run. The
//! parent also enforces the time bound from outside, killing a child (and
//! its process group) that overruns it by half; the child is started by
//! `run::launch`, which also ends it on Ctrl-C.
//!
//! Protocol: the child prints one [`ProbeResult`] as JSON on stdout and
//! exits 0.

use super::{Details, ProbeKind, ProbeOptions, ProbeReport, ProbeResult, Settings, Status};
use crate::run::capture::Keep;
use crate::run::launch::Launch;
use crate::run::spawn::Exit;
use std::path::Path;
use std::time::{Duration, Instant};

/// Bytes of the child's stdout read: its one JSON result, with room to spare.
const RESULT_BYTES: usize = 16 << 20;

/// The command line of a child that runs `kind` with `settings`.
pub fn child_args(kind: ProbeKind, settings: &Settings) -> Vec<String> {
    let mut args = vec![
        "probe".to_string(),
        "--child".to_string(),
        kind.name().to_string(),
        "--budget".to_string(),
        format!("{}ms", settings.budget.as_millis()),
        "--seed".to_string(),
        settings.seed.to_string(),
    ];
    if settings.quick {
        args.push("--quick".into());
    }
    if !settings.split_locks {
        args.push("--child-no-split-locks".into());
    }
    args
}

/// Hard limit for a child: the budget plus half of it, plus process start.
fn hard_limit(budget: Duration) -> Duration {
    budget + budget / 2 + Duration::from_millis(500)
}

fn failed(kind: ProbeKind, settings: &Settings, start: Instant, reason: String) -> ProbeResult {
    ProbeResult {
        status: Status::Failed,
        finding: format!("not measured: {reason}"),
        notes: vec![reason],
        elapsed_s: start.elapsed().as_secs_f64(),
        budget_s: settings.budget.as_secs_f64(),
        details: Details::empty(kind),
    }
}

fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGBUS => "SIGBUS",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL (out of memory?)",
        libc::SIGABRT => "SIGABRT",
        libc::SIGFPE => "SIGFPE",
        _ => "",
    };
    if name.is_empty() {
        format!("signal {signal}")
    } else {
        format!("{name} (signal {signal})")
    }
}

/// Run one probe in a child process `exe` (the ghostbench binary).
pub fn run_isolated(kind: ProbeKind, settings: &Settings, exe: &Path) -> ProbeResult {
    let start = Instant::now();
    let mut argv = vec![exe.to_string_lossy().into_owned()];
    argv.extend(child_args(kind, settings));
    let launched = Launch {
        timeout: Some(hard_limit(settings.budget)),
        stdout: Some(Keep::Head(RESULT_BYTES)),
        ..Launch::new(&argv)
    }
    .run();
    let outcome = match launched {
        Ok(outcome) => outcome,
        Err(e) => {
            return failed(
                kind,
                settings,
                start,
                format!("cannot start {}: {e}", exe.display()),
            )
        }
    };
    let stdout = String::from_utf8_lossy(&outcome.stdout);
    let stderr = String::from_utf8_lossy(&outcome.stderr_tail);
    let status = outcome.exit;
    if status == Exit::TimedOut {
        let reason = format!(
            "killed after {:.1} s: it overran its time bound ({:.1} s)",
            start.elapsed().as_secs_f64(),
            settings.budget.as_secs_f64()
        );
        return failed(kind, settings, start, reason);
    }
    if status == Exit::Interrupted {
        return failed(kind, settings, start, "interrupted by Ctrl-C".into());
    }
    if let Exit::Signal(signal) = status {
        if signal == libc::SIGBUS && kind == ProbeKind::SplitLock && settings.split_locks {
            // Split locks are fatal here: measure again without them.
            let again = Settings {
                split_locks: false,
                budget: settings.budget.saturating_sub(start.elapsed()),
                ..settings.clone()
            };
            let mut result = run_isolated(kind, &again, exe);
            result.elapsed_s = start.elapsed().as_secs_f64();
            result.budget_s = settings.budget.as_secs_f64();
            return result;
        }
        return failed(
            kind,
            settings,
            start,
            format!("the probe process died of {}", signal_name(signal)),
        );
    }
    if !status.success() {
        let last = stderr.lines().last().unwrap_or("").trim().to_string();
        return failed(
            kind,
            settings,
            start,
            format!(
                "the probe process exited with {}: {last}",
                status.describe()
            ),
        );
    }
    match serde_json::from_str::<ProbeResult>(&stdout) {
        Ok(result) if result.kind() == kind => result,
        Ok(result) => failed(
            kind,
            settings,
            start,
            format!("the probe process answered for {} instead", result.kind()),
        ),
        Err(e) => failed(
            kind,
            settings,
            start,
            format!("unreadable probe output: {e}"),
        ),
    }
}

/// Run the chosen probes, each in a child process when `exe` is given (the
/// normal case) or in this process otherwise. `progress` is told which probe
/// starts.
pub fn run(
    options: &ProbeOptions,
    exe: Option<&Path>,
    progress: &mut dyn FnMut(ProbeKind),
) -> ProbeReport {
    let start = Instant::now();
    let settings = options.settings();
    let environment =
        crate::run::environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line);
    let mut probes = Vec::new();
    for kind in ProbeKind::ALL {
        if !options.only.contains(&kind) {
            continue;
        }
        progress(kind);
        probes.push(match exe {
            Some(exe) => run_isolated(kind, &settings, exe),
            None => super::run_one(kind, &settings),
        });
    }
    ProbeReport {
        schema: ProbeReport::SCHEMA,
        schema_version: ProbeReport::SCHEMA_VERSION,
        quick: options.quick,
        budget_per_probe_s: settings.budget.as_secs_f64(),
        elapsed_s: start.elapsed().as_secs_f64(),
        environment,
        probes,
    }
}
