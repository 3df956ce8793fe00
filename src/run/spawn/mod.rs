//! One run of one command: start, wait, and measure.
//!
//! We start processes by hand rather than through `std::process::Command` for
//! two reasons. Hardware counters must be attached to the child *before* it
//! execs (std's `spawn` only returns after exec), so the child can wait on a
//! gate pipe. And the child gets its own process group, so a timeout or Ctrl-C
//! can kill everything it started. Output goes to files (see
//! [`super::capture`]), so nothing is pumped while the command runs and wall
//! time ends when the child exits, whatever its background grandchildren do.
//!
//! The parts: `exec` starts the process (posix_spawn, or fork + gate + exec),
//! `wait` waits for it (timeout, Ctrl-C, killing the group) and holds the
//! signal handling, `orphans` kills what a run leaves behind, `pin` handles
//! `--pin`. This file ties them into [`spawn`]; `super::launch` builds the
//! one-off launches on it.
//!
//! Processes end with their run: when the child has exited, whatever is
//! left in its process group, and whatever it started that left the group
//! (a `setsid` daemon) and so was re-parented to ghostbench, is killed and
//! counted in [`Outcome::leftovers`].

mod exec;
mod orphans;
mod pin;
mod wait;

use super::capture::{Capture, Keep};
use super::error::RunError;
use exec::ExecArgs;
pub use orphans::{sweep as kill_leftovers, Leftovers};
pub use pin::{allowed_cpus, check_pin};
use std::path::Path;
use std::time::{Duration, Instant};
use wait::Until;
pub use wait::{install_interrupt_handler, interrupted, Exit};

/// What to run and how.
pub struct SpawnRequest<'a> {
    pub program: &'a Path,
    pub argv: &'a [String],
    /// Added to (and overriding) the inherited environment.
    pub extra_env: &'a [(String, String)],
    pub pin: Option<usize>,
    /// Start the child with address-space randomization off
    /// (`ADDR_NO_RANDOMIZE` through personality(2), as `setarch -R` does).
    pub no_aslr: bool,
    pub timeout: Option<Duration>,
    /// Watch for Ctrl-C while waiting even without a timeout. A blocking wait
    /// (the cheapest) sees Ctrl-C only on the main thread, so launches from
    /// other threads (parallel builds) set this.
    pub poll: bool,
    /// The part of stdout kept: its head for metrics, else its tail for errors.
    pub stdout: Keep,
    /// The child's working directory; None = ghostbench's own.
    pub cwd: Option<&'a Path>,
}

/// What one run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub max_rss_kib: u64,
    pub exit: Exit,
    pub stdout: Vec<u8>,
    pub stdout_truncated: bool,
    /// The tail of stderr ([`super::capture::STDERR_TAIL`] bytes, or more when a metric reads it).
    pub stderr_tail: Vec<u8>,
    /// Processes the run left running after it exited, killed.
    pub leftovers: Leftovers,
}

/// The hook called with the child's pid while it is held before exec.
pub type BeforeExec<'a> = &'a mut dyn FnMut(i32) -> Result<(), RunError>;

/// Run once, with `capture` as the child's standard streams. `before_exec`,
/// when given, is called with the child's pid while the child is held before
/// exec (used to attach perf counters).
pub fn spawn(
    req: &SpawnRequest,
    capture: &mut Capture,
    before_exec: Option<BeforeExec>,
) -> Result<Outcome, RunError> {
    wait::ensure_handler();
    let args = ExecArgs::new(req.program, req.argv, req.extra_env, req.cwd)?;
    capture
        .rewind_input()
        .map_err(|e| RunError::Setup(format!("{e:#}")))?;
    let streams = capture.child_fds();
    let start = Instant::now();
    let mut child = match before_exec {
        None => exec::spawn_direct(&args, streams, req.pin, req.no_aslr)?,
        Some(callback) => exec::fork_gated(&args, streams, req.pin, req.no_aslr, callback)?,
    };
    let until = Until {
        deadline: req.timeout.map(|t| start + t),
        poll: req.poll,
    };
    let waited = wait::wait_for_exit(&mut child, until)?;
    let wall = waited.end.duration_since(start);
    let setup = |e: anyhow::Error| RunError::Setup(format!("{e:#}"));
    let output = capture.collect(req.stdout).map_err(setup)?;
    let lingering = wait::group_alive(child.pid);
    // Re-parented to ghostbench, the group's members are leftovers too; the
    // group kill is for when the sweep must wait (another child runs).
    let leftovers = orphans::sweep();
    if lingering {
        wait::kill_group(child.pid);
        capture.renew().map_err(setup)?;
    }
    Ok(Outcome {
        wall,
        user: timeval(waited.usage.ru_utime),
        sys: timeval(waited.usage.ru_stime),
        max_rss_kib: waited.usage.ru_maxrss.max(0) as u64,
        exit: waited.exit,
        stdout: output.stdout,
        stdout_truncated: output.stdout_truncated,
        stderr_tail: output.stderr_tail,
        leftovers,
    })
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}

/// The last `count` non-empty lines of some output, for error messages.
pub fn last_lines(bytes: &[u8], count: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    // `\r` ends a line too: progress rewritten in place shows as its updates.
    let lines: Vec<&str> = text
        .split(['\n', '\r'])
        .filter(|l| !l.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|l| l.chars().take(300).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn run(argv: &[&str], timeout: Option<Duration>) -> Result<Outcome, RunError> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let program =
            crate::run::command::resolve_program(&argv[0], std::env::var_os("PATH")).unwrap();
        spawn(
            &SpawnRequest {
                program: &program,
                argv: &argv,
                extra_env: &[("GHOSTBENCH_TEST".into(), "xyz".into())],
                pin: None,
                no_aslr: false,
                timeout,
                poll: false,
                stdout: Keep::Head(1 << 20),
                cwd: None,
            },
            &mut Capture::new(None).unwrap(),
            None,
        )
    }

    #[test]
    fn captures_output_exit_code_and_environment() {
        let out = run(
            &[
                "sh",
                "-c",
                "echo out $GHOSTBENCH_TEST; echo err >&2; exit 3",
            ],
            None,
        )
        .unwrap();
        assert_eq!(out.exit, Exit::Code(3));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "out xyz\n");
        assert_eq!(String::from_utf8_lossy(&out.stderr_tail), "err\n");
    }

    #[test]
    fn reports_signals_and_timeouts() {
        let out = run(&["sh", "-c", "kill -SEGV $$"], None).unwrap();
        assert_eq!(out.exit, Exit::Signal(libc::SIGSEGV));
        let out = run(&["sleep", "5"], Some(Duration::from_millis(100))).unwrap();
        assert_eq!(out.exit, Exit::TimedOut);
        assert!(out.wall < Duration::from_secs(4));
    }

    #[test]
    fn wall_time_ends_at_exit_even_if_a_grandchild_keeps_the_pipe() {
        let out = run(
            &["sh", "-c", "sleep 3 & echo started"],
            Some(Duration::from_secs(10)),
        )
        .unwrap();
        assert!(out.exit.success());
        assert!(
            out.wall < Duration::from_secs(2),
            "waited for the grandchild: {:?}",
            out.wall
        );
    }

    #[test]
    fn output_larger_than_a_pipe_buffer_is_kept_whole() {
        // 1 MiB: a pipe nobody pumped would stall the command at 64 KiB.
        let out = run(&["head", "-c", "1048576", "/dev/zero"], None).unwrap();
        assert!(out.exit.success());
        assert_eq!(out.stdout.len(), 1 << 20);
        assert!(!out.stdout_truncated);
    }

    #[test]
    fn late_output_of_a_lingering_grandchild_stays_out_of_the_next_run() {
        let argv = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let sh = crate::run::command::resolve_program("sh", std::env::var_os("PATH")).unwrap();
        let mut capture = Capture::new(None).unwrap();
        let mut run_in = |words: Vec<String>| {
            let req = SpawnRequest {
                program: &sh,
                argv: &words,
                extra_env: &[],
                pin: None,
                no_aslr: false,
                timeout: None,
                poll: false,
                stdout: Keep::Head(1 << 20),
                cwd: None,
            };
            spawn(&req, &mut capture, None).unwrap()
        };
        let first = run_in(argv(&["sh", "-c", "(sleep 0.3; echo late) & echo first"]));
        assert_eq!(String::from_utf8_lossy(&first.stdout), "first\n");
        let second = run_in(argv(&["sh", "-c", "sleep 0.6; echo second"]));
        assert_eq!(String::from_utf8_lossy(&second.stdout), "second\n");
        // Without a lingering process the same files are reused and emptied.
        let third = run_in(argv(&["sh", "-c", "echo third"]));
        assert_eq!(String::from_utf8_lossy(&third.stdout), "third\n");
    }

    /// `no_aslr` on both starting paths: the child's stack mapping (from
    /// its own /proc/self/maps) is the same in every run, and differs between
    /// runs with ASLR on (unless the machine turned ASLR off itself).
    #[test]
    fn no_aslr_fixes_the_stack_on_both_starting_paths() {
        let argv = vec!["cat".to_string(), "/proc/self/maps".to_string()];
        let cat = crate::run::command::resolve_program("cat", std::env::var_os("PATH")).unwrap();
        let mut capture = Capture::new(None).unwrap();
        let mut stack = |no_aslr: bool, gated: bool| {
            let req = SpawnRequest {
                program: &cat,
                argv: &argv,
                extra_env: &[],
                pin: None,
                no_aslr,
                timeout: None,
                poll: false,
                stdout: Keep::Head(1 << 20),
                cwd: None,
            };
            let mut hold = |_pid: i32| Ok::<(), RunError>(());
            let hook: Option<BeforeExec> = gated.then_some(&mut hold);
            let out = spawn(&req, &mut capture, hook).unwrap();
            let maps = String::from_utf8_lossy(&out.stdout).into_owned();
            maps.lines()
                .find(|l| l.ends_with("[stack]"))
                .expect("a [stack] line")
                .to_string()
        };
        for gated in [false, true] {
            let fixed: Vec<String> = (0..3).map(|_| stack(true, gated)).collect();
            assert!(
                fixed.iter().all(|l| *l == fixed[0]),
                "gated {gated}: {fixed:?}"
            );
        }
        let randomized = std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
            .is_ok_and(|v| v.trim() != "0");
        if randomized {
            let free: Vec<String> = (0..4).map(|_| stack(false, false)).collect();
            assert!(free.iter().any(|l| *l != free[0]), "{free:?}");
        }
        // The spawning thread got its own persona back.
        // SAFETY: personality(2) with the query value changes nothing.
        let persona = unsafe { libc::personality(0xffff_ffff) };
        assert_eq!(persona & libc::ADDR_NO_RANDOMIZE, 0);
    }

    #[test]
    fn exec_failure_is_an_error_not_a_run() {
        let argv = vec!["x".to_string()];
        let program = PathBuf::from("/etc/hostname");
        let req = SpawnRequest {
            program: &program,
            argv: &argv,
            extra_env: &[],
            pin: None,
            no_aslr: false,
            timeout: None,
            poll: false,
            stdout: Keep::Head(10),
            cwd: None,
        };
        let err = spawn(&req, &mut Capture::new(None).unwrap(), None).unwrap_err();
        assert!(matches!(err, RunError::Spawn { .. }), "{err:?}");
        assert!(err.to_string().contains("cannot execute"), "{err}");
    }

    #[test]
    fn gate_callback_sees_the_child_before_exec() {
        let argv = vec!["true".to_string()];
        let program =
            crate::run::command::resolve_program("true", std::env::var_os("PATH")).unwrap();
        let req = SpawnRequest {
            program: &program,
            argv: &argv,
            extra_env: &[],
            pin: Some(0),
            no_aslr: false,
            timeout: None,
            poll: false,
            stdout: Keep::Head(10),
            cwd: None,
        };
        let mut seen = 0;
        let mut callback = |pid: i32| {
            seen = pid;
            Ok::<(), RunError>(())
        };
        let out = spawn(&req, &mut Capture::new(None).unwrap(), Some(&mut callback)).unwrap();
        assert!(out.exit.success());
        assert!(seen > 0);
    }

    #[test]
    fn last_lines_skips_blank_lines() {
        assert_eq!(last_lines(b"a\n\nb\nc\n", 2), vec!["b", "c"]);
    }
}
