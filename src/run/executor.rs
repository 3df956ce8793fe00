//! The seam between an experiment's loop and the processes it runs: the
//! [`Executor`] trait, implemented by the real [`Runner`](super::Runner) and
//! by [`MockExecutor`], a scripted stand-in with which the `compare` and
//! `layout` loops are unit-tested without timing (as hyperfine's
//! `MockExecutor` does).

use super::metric::{MetricValue, Unit};
use super::{Prepared, RunError, RunFailure, RunRecord};
use std::time::Duration;

/// Runs benchmark commands for an experiment's loop.
pub trait Executor {
    /// Run `command` once and extract its metrics. `build` is its index in
    /// the report's list of commands or builds.
    fn run(
        &mut self,
        command: &Prepared,
        build: usize,
        round: usize,
        warmup: bool,
    ) -> Result<RunRecord, RunFailure>;

    /// Run a command outside the measurement (`--setup`, `--cleanup`); a
    /// non-zero exit is a failure labelled `label`.
    fn run_unmeasured(&mut self, command: &Prepared, label: &str) -> Result<(), RunFailure>;

    /// Whether Ctrl-C arrived.
    fn interrupted(&self) -> bool;

    /// `--max-time`: a run still going at `deadline` is killed and fails
    /// with [`RunError::OutOfTime`]; None lifts it. The mock ignores it
    /// (scripts fail with `OutOfTime` themselves).
    fn set_deadline(&mut self, _deadline: Option<std::time::Instant>) {}

    /// Notes gathered over the runs (e.g. which `regex:` match was taken).
    fn notes(&self) -> Vec<super::Note> {
        Vec::new()
    }
}

impl Executor for super::Runner {
    fn run(
        &mut self,
        command: &Prepared,
        build: usize,
        round: usize,
        warmup: bool,
    ) -> Result<RunRecord, RunFailure> {
        super::Runner::run(self, command, build, round, warmup)
    }

    fn run_unmeasured(&mut self, command: &Prepared, label: &str) -> Result<(), RunFailure> {
        super::Runner::run_unmeasured(self, command, label)
    }

    fn interrupted(&self) -> bool {
        super::spawn::interrupted()
    }

    fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        super::Runner::set_deadline(self, deadline)
    }

    fn notes(&self) -> Vec<super::Note> {
        super::Runner::notes(self)
    }
}

/// What one scripted run does.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The run takes this many seconds of wall time (the `wall` metric).
    Wall(f64),
    /// The command fails with this error (e.g. a crash: `RunError::Signal(11)`).
    Fail(RunError),
    /// The command runs past `--timeout`.
    Timeout,
    /// Ctrl-C arrives during this run.
    Interrupt,
}

/// The script: the step of the n-th call (0-based, counting every run of
/// every command) for a command name.
pub type Script = Box<dyn FnMut(usize, &str) -> Step>;

/// A scripted executor: no process is started and no time passes.
pub struct MockExecutor {
    script: Script,
    /// Every call so far: (command name, build, round, warm-up).
    pub calls: Vec<(String, usize, usize, bool)>,
    /// Labels of the unmeasured commands run (`--setup`, `--cleanup`).
    pub unmeasured: Vec<String>,
    interrupted: bool,
}

impl MockExecutor {
    pub fn new(script: impl FnMut(usize, &str) -> Step + 'static) -> Self {
        MockExecutor {
            script: Box::new(script),
            calls: Vec::new(),
            unmeasured: Vec::new(),
            interrupted: false,
        }
    }
}

impl Executor for MockExecutor {
    fn run(
        &mut self,
        command: &Prepared,
        build: usize,
        round: usize,
        warmup: bool,
    ) -> Result<RunRecord, RunFailure> {
        let name = command.spec.name.clone();
        let step = (self.script)(self.calls.len(), &name);
        self.calls.push((name.clone(), build, round, warmup));
        let failure = |error: RunError| RunFailure {
            command_name: name.clone(),
            error,
            last_output: vec![format!("{name}: last line")],
        };
        match step {
            Step::Wall(seconds) => Ok(RunRecord {
                build,
                round,
                warmup,
                wall_s: seconds,
                user_s: seconds,
                sys_s: 0.0,
                max_rss_kib: 1024,
                exit_code: 0,
                env_pad_bytes: None,
                values: vec![MetricValue {
                    name: "wall".into(),
                    value: seconds,
                    unit: Unit::Seconds,
                }],
                counters: Vec::new(),
            }),
            Step::Fail(error) => Err(failure(error)),
            Step::Timeout => Err(failure(RunError::Timeout(Duration::from_secs(1)))),
            Step::Interrupt => {
                self.interrupted = true;
                Err(failure(RunError::Interrupted))
            }
        }
    }

    fn run_unmeasured(&mut self, _command: &Prepared, label: &str) -> Result<(), RunFailure> {
        self.unmeasured.push(label.to_string());
        Ok(())
    }

    fn interrupted(&self) -> bool {
        self.interrupted
    }
}

/// A command for the mock: no program is resolved.
pub fn mock_command(name: &str) -> Prepared {
    Prepared {
        spec: super::command::CommandSpec {
            name: name.to_string(),
            text: name.to_string(),
            argv: vec![name.to_string()],
            shell: false,
        },
        program: std::path::PathBuf::from(name),
        dir: None,
        env: Vec::new(),
    }
}
