//! Why a run failed, as values callers can branch on: [`RunError`] (spawn
//! failed, exit code, signal, timeout, Ctrl-C, missing metric), the
//! [`RunFailure`] an experiment's loop receives (which command, why, its last
//! output lines), and [`ToolError`] for a tool ghostbench needs (valgrind,
//! cc) that is missing or unusable. The messages are the one-line causes the
//! reports print.

use std::time::Duration;

/// Why one run of a command did not produce its metrics.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// The program is not on PATH (or the path given does not exist).
    #[error("command not found: {program}")]
    NotFound { program: String },
    /// The process could not be started (exec failed, e.g. not executable).
    #[error("cannot execute {program}: {cause}")]
    Spawn { program: String, cause: String },
    /// It exited with a non-zero code.
    #[error("command failed: exit code {0}")]
    Exit(i32),
    /// A signal killed it.
    #[error("command failed: killed by signal {0} ({name})", name = signal_name(*.0))]
    Signal(i32),
    /// It ran past its time limit; its process group was killed.
    #[error("command failed: timed out after {} s", .0.as_secs_f64())]
    Timeout(Duration),
    /// Ctrl-C (or SIGTERM, SIGHUP) arrived; its process group was killed.
    /// Worded by the signal that arrived (`interrupt::cause`).
    #[error("{}", super::interrupt::cause())]
    Interrupted,
    /// `--max-time` was reached while it ran; its process group was killed
    /// and the run left out (the experiment ends with what it has).
    #[error("stopped at --max-time")]
    OutOfTime,
    /// A metric the first run yielded is missing from this run's output.
    #[error("metric {0:?} not found in this run's output")]
    NoMetric(String),
    /// A metric could not be read from the output (the parser's cause).
    #[error("{0}")]
    Metric(String),
    /// The run could not be set up or waited for (output files, pipes,
    /// hardware counters, `--input`).
    #[error("{0}")]
    Setup(String),
}

/// The conventional name of a signal that ends benchmarks ("signal" for others).
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

/// Why a run could not produce its metrics: which command, why, and its last
/// output lines (empty when they would not help, e.g. after Ctrl-C).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{command_name}: {error}")]
pub struct RunFailure {
    pub command_name: String,
    pub error: RunError,
    pub last_output: Vec<String>,
}

impl RunFailure {
    pub fn new(command_name: &str, error: RunError) -> RunFailure {
        RunFailure {
            command_name: command_name.to_string(),
            error,
            last_output: Vec::new(),
        }
    }

    /// Whether Ctrl-C ended the run (the experiment is interrupted, not failed).
    pub fn is_interrupted(&self) -> bool {
        self.error == RunError::Interrupted
    }
}

/// A tool ghostbench runs for itself (valgrind, cc) that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    #[error("{tool} not found on PATH")]
    Missing { tool: String },
    #[error("{tool} is unusable: {cause}")]
    Unusable { tool: String, cause: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_name_the_command_and_say_whether_ctrl_c_ended_them() {
        let failure = RunFailure::new("B", RunError::NoMetric("ns".into()));
        assert_eq!(
            failure.to_string(),
            "B: metric \"ns\" not found in this run's output"
        );
        assert!(!failure.is_interrupted());
        assert!(RunFailure::new("B", RunError::Interrupted).is_interrupted());
        assert_eq!(
            ToolError::Missing { tool: "cc".into() }.to_string(),
            "cc not found on PATH"
        );
    }
}
