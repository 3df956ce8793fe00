//! One-off launches: the tools and builds ghostbench runs for itself
//! (compilers and build templates, `cc` for the padding objects, valgrind's
//! cachegrind and callgrind, the `probe` child), on the same launcher as the
//! benchmark runs ([`super::spawn`]): each in its own process group, killed
//! as a group at its timeout or on Ctrl-C, its output captured (stdout's head
//! or tail, or discarded; stderr's tail), stdin from /dev/null or a file.
//! Also the typed check that a tool is on PATH ([`tool`]) and the private
//! scratch directories tools write into ([`scratch_dir`]).

use super::capture::{Capture, Keep};
use super::command::resolve_program;
use super::error::{RunError, ToolError};
use super::spawn::{self, Outcome, SpawnRequest};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bytes of stdout's tail kept by default (for error messages).
pub const STDOUT_TAIL: usize = 64 * 1024;

/// One process to start.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// The program (looked up on PATH unless it contains a `/`) and its arguments.
    pub argv: &'a [String],
    /// Added to (and overriding) the inherited environment.
    pub env: &'a [(String, String)],
    /// Read on stdin; /dev/null when None.
    pub stdin: Option<&'a Path>,
    /// Kill the process group after this long ([`super::spawn::Exit::TimedOut`]).
    pub timeout: Option<Duration>,
    /// The part of stdout kept; None discards it.
    pub stdout: Option<Keep>,
    /// The working directory; None = ghostbench's own.
    pub cwd: Option<&'a Path>,
}

impl<'a> Launch<'a> {
    /// `argv` with nothing added: no extra environment, stdin from /dev/null,
    /// no timeout, the tail of stdout kept.
    pub fn new(argv: &'a [String]) -> Launch<'a> {
        Launch {
            argv,
            env: &[],
            stdin: None,
            timeout: None,
            stdout: Some(Keep::Tail(STDOUT_TAIL)),
            cwd: None,
        }
    }

    /// Start it and wait for it. Ctrl-C or the timeout ends it (as its
    /// [`Outcome::exit`]); an error means it could not start. After Ctrl-C
    /// nothing new starts.
    pub fn run(&self) -> Result<Outcome, RunError> {
        if spawn::interrupted() {
            return Err(RunError::Interrupted);
        }
        let Some(first) = self.argv.first() else {
            return Err(RunError::Spawn {
                program: String::new(),
                cause: "empty command".into(),
            });
        };
        let program =
            resolve_program(first, std::env::var_os("PATH")).map_err(|_| RunError::NotFound {
                program: first.clone(),
            })?;
        let setup = |e: anyhow::Error| RunError::Setup(format!("{e:#}"));
        let mut capture = Capture::new(self.stdin).map_err(setup)?;
        if self.stdout.is_none() {
            capture.discard_stdout().map_err(setup)?;
        }
        spawn::spawn(
            &SpawnRequest {
                program: &program,
                argv: self.argv,
                extra_env: self.env,
                pin: None,
                no_aslr: false,
                timeout: self.timeout,
                poll: true,
                stdout: self.stdout.unwrap_or(Keep::Tail(0)),
                cwd: self.cwd,
            },
            &mut capture,
            None,
        )
    }

    /// [`Launch::run`], and any end but exit code 0 is an error too; the
    /// outcome (for its output) comes with it.
    pub fn run_ok(&self) -> Result<Outcome, (RunError, Option<Box<Outcome>>)> {
        let outcome = self.run().map_err(|e| (e, None))?;
        match outcome.exit.error(self.timeout) {
            None => Ok(outcome),
            Some(error) => Err((error, Some(Box::new(outcome)))),
        }
    }
}

/// Where `tool` is on PATH, or [`ToolError::Missing`].
pub fn tool(name: &str) -> Result<PathBuf, ToolError> {
    resolve_program(name, std::env::var_os("PATH")).map_err(|_| ToolError::Missing {
        tool: name.to_string(),
    })
}

/// A fresh private (0700) directory under the system temp dir, named
/// `<prefix>…`, removed when dropped.
pub fn scratch_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    // tempfile leaves the mode to the umask (0755 here): other users must not
    // read, or plant files in, what a tool writes there.
    tempfile::Builder::new()
        .prefix(prefix)
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
}

/// The last lines of a finished process's stdout and stderr, for messages.
pub fn output_tail(outcome: &Outcome, stdout_lines: usize, stderr_lines: usize) -> Vec<String> {
    let mut tail = spawn::last_lines(&outcome.stdout, stdout_lines);
    tail.extend(spawn::last_lines(&outcome.stderr_tail, stderr_lines));
    tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::spawn::Exit;
    use std::time::Instant;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn captures_exit_and_output_and_discards_stdout_when_asked() {
        let words = argv(&["sh", "-c", "echo out; echo err >&2; exit 4"]);
        let out = Launch::new(&words).run().unwrap();
        assert_eq!(out.exit, Exit::Code(4));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr_tail, b"err\n");
        let (error, outcome) = Launch::new(&words).run_ok().unwrap_err();
        assert_eq!(error, RunError::Exit(4));
        assert_eq!(output_tail(&outcome.unwrap(), 5, 5), ["out", "err"]);
        let quiet = Launch {
            stdout: None,
            ..Launch::new(&words)
        };
        assert!(quiet.run().unwrap().stdout.is_empty());
    }

    #[test]
    fn environment_and_stdin_reach_the_process() {
        let dir = scratch_dir("ghostbench-test-").unwrap();
        let input = dir.path().join("in.txt");
        std::fs::write(&input, "from the file").unwrap();
        let words = argv(&["sh", "-c", "cat; echo \" $GB_LAUNCH\""]);
        let env = [("GB_LAUNCH".to_string(), "set".to_string())];
        let out = Launch {
            env: &env,
            stdin: Some(&input),
            ..Launch::new(&words)
        }
        .run()
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "from the file set\n");
    }

    #[test]
    fn missing_programs_and_tools_are_typed_errors() {
        let words = argv(&["ghostbench-no-such-program", "x"]);
        assert_eq!(
            Launch::new(&words).run().unwrap_err(),
            RunError::NotFound {
                program: "ghostbench-no-such-program".into()
            }
        );
        assert!(matches!(
            Launch::new(&[]).run().unwrap_err(),
            RunError::Spawn { .. }
        ));
        assert_eq!(
            tool("ghostbench-no-such-tool").unwrap_err(),
            ToolError::Missing {
                tool: "ghostbench-no-such-tool".into()
            }
        );
        assert!(tool("sh").unwrap().is_absolute());
    }

    /// Whether `pid` is gone (or a zombie awaiting its reaper).
    fn gone(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        }
    }

    #[test]
    fn a_timeout_kills_the_whole_process_group() {
        // The shell prints its background child's pid, then waits on it: the
        // timeout must kill the grandchild too, not only the shell.
        let words = argv(&["sh", "-c", "sleep 30 & echo $!; wait"]);
        let started = Instant::now();
        let launch = Launch {
            timeout: Some(Duration::from_millis(300)),
            ..Launch::new(&words)
        };
        let (error, outcome) = launch.run_ok().unwrap_err();
        assert_eq!(error, RunError::Timeout(Duration::from_millis(300)));
        assert!(started.elapsed() < Duration::from_secs(20));
        let text = String::from_utf8_lossy(&outcome.unwrap().stdout).to_string();
        let grandchild: i32 = text.trim().parse().expect("the shell printed a pid");
        // SIGKILL is immediate, but the orphan is reaped by init in its own time.
        let wait_until = Instant::now() + Duration::from_secs(5);
        while !gone(grandchild) && Instant::now() < wait_until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(gone(grandchild), "sleep {grandchild} outlived the timeout");
    }

    #[test]
    fn scratch_dirs_are_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch_dir("ghostbench-test-").unwrap();
        let path = dir.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        drop(dir);
        assert!(!path.exists());
    }

    /// Processes of process group `pgid` that are alive (not zombies).
    fn group_members(pgid: i32) -> Vec<i32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    return false;
                };
                // After "(comm)": state, ppid, pgrp.
                let fields: Vec<&str> = stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect();
                fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
            })
            .collect()
    }

    /// Not a test: the process that [`ctrl_c_ends_the_launched_group`]
    /// interrupts. It starts a shell that records its process group and
    /// sleeps, and records how the launch ended if it survives Ctrl-C.
    #[test]
    #[ignore = "a helper process started by ctrl_c_ends_the_launched_group"]
    fn ctrl_c_helper() {
        let Some(dir) = std::env::var_os("GHOSTBENCH_CTRL_C_DIR") else {
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        if std::env::var_os("GHOSTBENCH_CTRL_C_CLAIM").is_some() {
            spawn::install_interrupt_handler();
        }
        let script = format!("echo $$ > {}/group; sleep 30", dir.display());
        let words = argv(&["sh", "-c", &script]);
        let exit = Launch::new(&words).run().map(|o| o.exit);
        let after = Launch::new(&argv(&["true"])).run().map(|o| o.exit);
        std::fs::write(dir.join("survived"), format!("{exit:?} then {after:?}")).unwrap();
    }

    /// Start [`ctrl_c_helper`] (this test binary), send it SIGINT once its
    /// shell runs, and return how the helper ended, what it recorded, and
    /// the shell's process group.
    fn interrupt_helper(claim: bool) -> (Exit, Option<String>, i32) {
        let dir = scratch_dir("ghostbench-test-").unwrap();
        let exe = std::env::current_exe().unwrap();
        let words = vec![
            exe.display().to_string(),
            "run::launch::tests::ctrl_c_helper".to_string(),
            "--exact".to_string(),
            "--ignored".to_string(),
            "--test-threads=1".to_string(),
        ];
        let mut env = vec![(
            "GHOSTBENCH_CTRL_C_DIR".to_string(),
            dir.path().display().to_string(),
        )];
        if claim {
            env.push(("GHOSTBENCH_CTRL_C_CLAIM".to_string(), "1".to_string()));
        }
        let group_file = dir.path().join("group");
        let helper = std::thread::spawn(move || {
            Launch {
                env: &env,
                timeout: Some(Duration::from_secs(60)),
                ..Launch::new(&words)
            }
            .run()
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let group = loop {
            let text = std::fs::read_to_string(&group_file).unwrap_or_default();
            if let Ok(pid) = text.trim().parse::<i32>() {
                break pid;
            }
            assert!(
                Instant::now() < deadline,
                "the helper's shell never started"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        // The helper is the shell's parent.
        let stat = std::fs::read_to_string(format!("/proc/{group}/stat")).unwrap();
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        let helper_pid: i32 = fields[1].parse().unwrap();
        // SAFETY: signalling the helper process this test started.
        unsafe { libc::kill(helper_pid, libc::SIGINT) };
        let outcome = helper.join().unwrap().unwrap();
        let survived = std::fs::read_to_string(dir.path().join("survived")).ok();
        (outcome.exit, survived, group)
    }

    fn wait_until_gone(group: i32) -> Vec<i32> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !group_members(group).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        group_members(group)
    }

    #[test]
    fn ctrl_c_ends_the_launched_group() {
        // Without a handler of its own, ghostbench dies of SIGINT as before,
        // after killing the group it started.
        // (Its other threads may run on for the microseconds the handler takes
        // to kill the group and re-raise, so what they record is not checked.)
        let (exit, survived, group) = interrupt_helper(false);
        assert_eq!(exit, Exit::Signal(libc::SIGINT), "{survived:?}");
        assert_eq!(wait_until_gone(group), Vec::<i32>::new());
        // With an experiment's handler, the launch ends as interrupted, the
        // group is killed, nothing new starts, and the process lives on.
        let (exit, survived, group) = interrupt_helper(true);
        assert_eq!(exit, Exit::Code(0));
        assert_eq!(
            survived.as_deref(),
            Some("Ok(Interrupted) then Err(Interrupted)")
        );
        assert_eq!(wait_until_gone(group), Vec::<i32>::new());
    }
}
