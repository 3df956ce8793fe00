//! Running each probe in its own child process, and the whole `probe` run
//! (`run`, the verb's entry point; `run_one`, one probe in this process).
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
//! Protocol: the child prints [`ProbeResult`]s as JSON, one a line, on
//! stdout and exits 0; the last line is its result. A line before it is a
//! checkpoint: what a probe measured before a step that can stall for
//! longer than the bound (a split lock), kept if the child is killed there.

use super::types::{Failure, Note, Outcome, ProbeKind, Settings, Status};
use super::{alias, alloc, code_align, misaligned, split_lock, timing, tlb};
use super::{Details, ProbeOptions, ProbeReport, ProbeResult, Progress};
use crate::run::capture::Keep;
use crate::run::launch::Launch;
use crate::run::spawn::Exit;
use anyhow::{bail, Result};
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

fn failed(kind: ProbeKind, settings: &Settings, start: Instant, failure: Failure) -> ProbeResult {
    ProbeResult {
        status: Status::Failed,
        failure: Some(failure),
        notes: Vec::new(),
        elapsed_s: start.elapsed().as_secs_f64(),
        budget_s: settings.budget.as_secs_f64(),
        details: Details::empty(kind),
    }
}

/// Run one probe in this process. `checkpoint` is given a partial result
/// the probe may want kept if it is killed later (see `split_lock::run`).
pub fn run_one(
    kind: ProbeKind,
    settings: &Settings,
    checkpoint: &mut dyn FnMut(&ProbeResult),
) -> ProbeResult {
    fn wrap<D>(outcome: Outcome<D>, details: fn(D) -> Details) -> Outcome<Details> {
        Outcome {
            status: outcome.status,
            failure: outcome.failure,
            notes: outcome.notes,
            details: details(outcome.details),
        }
    }
    let clock = timing::Budget::new(settings.budget);
    let result = |outcome: Outcome<Details>, clock: &timing::Budget| ProbeResult {
        status: outcome.status,
        failure: outcome.failure,
        notes: outcome.notes,
        elapsed_s: clock.elapsed().as_secs_f64(),
        budget_s: settings.budget.as_secs_f64(),
        details: outcome.details,
    };
    let mut split_checkpoint = |partial: &Outcome<split_lock::SplitLock>| {
        checkpoint(&result(wrap(partial.clone(), Details::SplitLock), &clock))
    };
    let outcome = match kind {
        ProbeKind::SplitLock => wrap(
            split_lock::run(settings, &clock, &mut split_checkpoint),
            Details::SplitLock,
        ),
        ProbeKind::Misaligned => wrap(misaligned::run(settings, &clock), Details::Misaligned),
        ProbeKind::CodeAlign => wrap(code_align::run(settings, &clock), Details::CodeAlign),
        ProbeKind::Tlb => wrap(tlb::run(settings, &clock), Details::Tlb),
        ProbeKind::Alloc => wrap(alloc::run(settings, &clock), Details::Alloc),
        ProbeKind::Alias => wrap(alias::run(settings, &clock), Details::Alias),
    };
    result(outcome, &clock)
}

/// The last complete result line a child printed, if any: its final
/// result, or a checkpoint when it was killed before that.
fn last_result(stdout: &str) -> Option<ProbeResult> {
    stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<ProbeResult>(line).ok())
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
                Failure::CannotStart {
                    exe: exe.display().to_string(),
                    error: e.to_string(),
                },
            )
        }
    };
    let stdout = String::from_utf8_lossy(&outcome.stdout);
    let stderr = String::from_utf8_lossy(&outcome.stderr_tail);
    let status = outcome.exit;
    if status == Exit::TimedOut {
        let elapsed_s = start.elapsed().as_secs_f64();
        // A checkpoint printed before a step that can stall (a split lock):
        // keep what it measured, and say what stalled.
        if let Some(mut kept) = last_result(&stdout).filter(|r| r.kind() == kind) {
            kept.status = Status::Partial;
            kept.notes.push(Note::SplitLockStalled {
                after_s: (elapsed_s - kept.elapsed_s).max(0.0),
            });
            kept.elapsed_s = elapsed_s;
            return kept;
        }
        let failure = Failure::Overran {
            elapsed_s,
            budget_s: settings.budget.as_secs_f64(),
        };
        return failed(kind, settings, start, failure);
    }
    if status == Exit::Interrupted {
        return failed(kind, settings, start, Failure::Interrupted);
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
        return failed(kind, settings, start, Failure::Signal { signal });
    }
    if !status.success() {
        let last_line = stderr.lines().last().unwrap_or("").trim().to_string();
        return failed(
            kind,
            settings,
            start,
            Failure::Exited {
                code: match status {
                    Exit::Code(code) => Some(code),
                    _ => None,
                },
                last_line,
            },
        );
    }
    let last_line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    match serde_json::from_str::<ProbeResult>(last_line) {
        Ok(result) if result.kind() == kind => result,
        Ok(result) => failed(
            kind,
            settings,
            start,
            Failure::WrongProbe {
                answered: result.kind(),
            },
        ),
        Err(e) => failed(
            kind,
            settings,
            start,
            Failure::Unreadable {
                error: e.to_string(),
            },
        ),
    }
}

/// Run the chosen probes, each in a child process when `options.exe` is given
/// (the normal case) or in this process otherwise. `progress` is told which
/// probe starts. A probe that fails is a result with status `failed`, not an
/// error; the error is for options that choose no probe.
pub fn run(options: &ProbeOptions, progress: &mut dyn FnMut(&Progress)) -> Result<ProbeReport> {
    let start = Instant::now();
    let chosen: Vec<ProbeKind> = ProbeKind::ALL
        .into_iter()
        .filter(|k| options.only.contains(k))
        .collect();
    if chosen.is_empty() {
        bail!(
            "no probe chosen: name at least one of split-lock, misaligned, code-align, tlb, alloc"
        );
    }
    let settings = options.settings();
    let environment =
        crate::run::environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line);
    let mut probes = Vec::new();
    for (done, &kind) in chosen.iter().enumerate() {
        progress(&Progress {
            probe: kind,
            done,
            total: chosen.len(),
        });
        probes.push(match &options.exe {
            Some(exe) => run_isolated(kind, &settings, exe),
            None => run_one(kind, &settings, &mut |_| {}),
        });
    }
    Ok(ProbeReport {
        schema: ProbeReport::SCHEMA,
        schema_version: ProbeReport::SCHEMA_VERSION,
        quick: options.quick,
        budget_per_probe_s: settings.budget.as_secs_f64(),
        elapsed_s: start.elapsed().as_secs_f64(),
        environment,
        probes,
    })
}
