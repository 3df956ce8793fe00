//! The runner: runs one command once and turns the outcome into a [`RunRecord`].
//!
//! It owns the per-run concerns of docs/architecture.md §4: environment jitter, pinning,
//! `--prepare`, timeouts, metric extraction, perf counters, and the one-line
//! failure causes ([`RunFailure`]) with the command's last output lines.
//! Every process ghostbench starts goes through `spawn` (benchmark runs,
//! here) or `launch` (tools and builds, on `spawn`).

pub mod cachegrind;
pub mod capture;
pub mod command;
pub mod counters;
pub mod criterion;
pub mod environment;
pub mod error;
pub mod executor;
pub mod interrupt;
pub mod launch;
pub mod metric;
pub mod regex_metric;
pub mod spawn;

use anyhow::{Context, Result};
use capture::{Capture, Keep};
use command::CommandSpec;
use counters::{ChildCounters, CounterKind};
pub use error::{RunError, RunFailure, ToolError};
use metric::{MetricSpec, MetricValue};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use regex_metric::MatchTally;
use serde::{Deserialize, Serialize};
use spawn::{Exit, Outcome, SpawnRequest};
use std::path::PathBuf;
use std::time::Duration;

/// The environment variable whose random length shifts the child's stack (Mytkowicz et al. 2009).
pub const JITTER_VARIABLE: &str = "GHOSTBENCH_ENV_PAD";
/// Jitter lengths are drawn from 0..JITTER_MAX_BYTES.
pub const JITTER_MAX_BYTES: usize = 4096;
pub use metric::METRIC_OUTPUT_BYTES;

/// Per-run settings shared by every command of an experiment.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    pub pin: Option<usize>,
    pub timeout: Option<Duration>,
    pub env_jitter: bool,
    pub prepare: Option<CommandSpec>,
    pub counters: Vec<CounterKind>,
    pub metrics: Vec<MetricSpec>,
    /// A non-zero exit code is recorded, not a failure (signals and timeouts still are).
    pub ignore_failure: bool,
    /// Every run reads this file on stdin (from its start) instead of /dev/null.
    pub input: Option<PathBuf>,
}

/// Everything recorded about one measured (or warm-up) run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// Index of the command or build in the report's list: `compare`'s
    /// commands (0 = A, 1 = B), `layout`'s builds. The JSON key is `side`.
    #[serde(rename = "side")]
    pub build: usize,
    pub round: usize,
    pub warmup: bool,
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_kib: u64,
    /// 0 unless `--ignore-failure` let a non-zero exit through.
    pub exit_code: i32,
    /// Length of the jitter variable, when jitter was on.
    pub env_pad_bytes: Option<usize>,
    pub values: Vec<MetricValue>,
    pub counters: Vec<(String, u64)>,
}

/// How an experiment ended, with the cause when it did not finish. Shared by the
/// verbs that run commands; each brings its own `State` enum.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status<S> {
    pub state: S,
    /// The one-line cause of a failure or interruption.
    pub message: Option<String>,
    /// The failing command's last output lines.
    pub last_output: Vec<String>,
}

impl<S> Status<S> {
    pub fn new(state: S, message: Option<String>) -> Self {
        Status {
            state,
            message,
            last_output: Vec::new(),
        }
    }

    /// The status after a run failed: `interrupted` for Ctrl-C, else `failed`
    /// with the cause and the command's last output.
    pub fn from_failure(failure: RunFailure, interrupted: S, failed: S) -> Self {
        if failure.is_interrupted() {
            return Status::new(interrupted, Some(interrupt::cause().into()));
        }
        Status {
            state: failed,
            message: Some(failure.to_string()),
            last_output: failure.last_output,
        }
    }
}

/// A command resolved once, ready to run many times.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub spec: CommandSpec,
    pub program: PathBuf,
    /// The layout variant's directory (`{dir}` in `criterion:PATH`).
    pub dir: Option<PathBuf>,
    /// Variables this command's runs get besides the runner's (a heap
    /// layout's `LD_PRELOAD`), before the jitter variable.
    pub env: Vec<(String, String)>,
}

impl Prepared {
    pub fn new(spec: &CommandSpec) -> Result<Prepared> {
        let program = command::resolve_program(&spec.argv[0], std::env::var_os("PATH"))
            .with_context(|| format!("command {:?}", spec.name))?;
        Ok(Prepared {
            spec: spec.clone(),
            program,
            dir: None,
            env: Vec::new(),
        })
    }
}

/// Runs commands with the shared options and a seeded RNG for jitter.
pub struct Runner {
    options: RunnerOptions,
    prepare: Option<Prepared>,
    rng: ChaCha8Rng,
    capture: Capture,
    /// `regex:` metrics whose choice of match mattered, across all runs.
    tallies: Vec<MatchTally>,
    /// Measured runs whose metrics were extracted (warm-ups are not counted).
    extracted: usize,
    /// Processes runs left behind, killed after their run ([`spawn::Leftovers`]).
    left: LeftBehind,
    /// `--max-time`: a run still going at this instant is killed
    /// ([`RunError::OutOfTime`]); see [`Runner::set_deadline`].
    deadline: Option<std::time::Instant>,
    /// The command whose run the deadline killed.
    cut: Option<String>,
    /// Runs start with address-space randomization off ([`Runner::set_no_aslr`]).
    no_aslr: bool,
}

/// What the runner saw over an experiment that the reader should know, as
/// facts (the verbs' renderers word them: `compare::render::notes::run_note`).
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// A `regex:` metric matched several disagreeing values in some of the
    /// `of` measured runs: which match was taken, and in how many it mattered.
    SeveralMatches { tally: MatchTally, of: usize },
    /// `runs` of the `of` runs started left processes running after they
    /// exited (`commands`, in order of their first time): `killed` were
    /// killed after each run, `survived` could not be.
    LeftBehind {
        runs: usize,
        of: usize,
        commands: Vec<String>,
        killed: usize,
        survived: usize,
    },
    /// `--max-time` was reached during a run of `command`: that run was
    /// killed and left out, the runs before it kept.
    MaxTimeCut { command: String },
}

/// What the runs left running after they exited, over an experiment.
#[derive(Debug, Default)]
struct LeftBehind {
    total: spawn::Leftovers,
    /// Runs (of any command, `--prepare` and `--setup` included) that left some.
    runs: usize,
    /// Every run started.
    of: usize,
    /// The commands that left some, in order of their first time.
    commands: Vec<String>,
}

impl LeftBehind {
    fn record(&mut self, name: &str, outcome: &Outcome) {
        self.of += 1;
        let found = outcome.leftovers;
        if found == spawn::Leftovers::default() {
            return;
        }
        self.runs += 1;
        self.total.add(found);
        if !self.commands.iter().any(|c| c == name) {
            self.commands.push(name.to_string());
        }
    }

    /// The note for the report, when any run left something.
    fn note(&self) -> Option<Note> {
        (self.runs > 0).then(|| Note::LeftBehind {
            runs: self.runs,
            of: self.of,
            commands: self.commands.clone(),
            killed: self.total.killed,
            survived: self.total.survived,
        })
    }
}

impl Runner {
    pub fn new(options: RunnerOptions, rng: ChaCha8Rng) -> Result<Runner> {
        let prepare = options.prepare.as_ref().map(Prepared::new).transpose()?;
        let mut capture = Capture::new(options.input.as_deref())?;
        if options.metrics.iter().any(MetricSpec::reads_stderr) {
            capture.keep_stderr(METRIC_OUTPUT_BYTES);
        }
        Ok(Runner {
            options,
            prepare,
            rng,
            capture,
            tallies: Vec::new(),
            extracted: 0,
            left: LeftBehind::default(),
            deadline: None,
            cut: None,
            no_aslr: false,
        })
    }

    /// One note per `regex:` metric that matched several disagreeing values in
    /// some measured run: which match was taken, and in how many runs it mattered.
    pub fn match_notes(&self) -> Vec<Note> {
        self.tallies
            .iter()
            .map(|t| Note::SeveralMatches {
                tally: t.clone(),
                of: self.extracted,
            })
            .collect()
    }

    /// Every note of the runs so far: the `regex:` matches taken
    /// ([`Runner::match_notes`]) and the processes runs left behind.
    pub fn notes(&self) -> Vec<Note> {
        let mut notes = self.match_notes();
        notes.extend(self.left.note());
        notes.extend(self.cut.as_ref().map(|name| Note::MaxTimeCut {
            command: name.clone(),
        }));
        notes
    }

    /// From now on, a run still going at `deadline` is killed and fails
    /// with [`RunError::OutOfTime`] (None: no deadline).
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.deadline = deadline;
    }

    /// The time limit of the next run: `--timeout`, or less when the
    /// deadline comes first (then `true`). Past the deadline, the failure.
    fn limit(&self, name: &str) -> Result<(Option<Duration>, bool), RunFailure> {
        let Some(deadline) = self.deadline else {
            return Ok((self.options.timeout, false));
        };
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(RunFailure::new(name, RunError::OutOfTime));
        }
        Ok(match self.options.timeout {
            Some(own) if own <= left => (Some(own), false),
            _ => (Some(left), true),
        })
    }

    pub fn options(&self) -> &RunnerOptions {
        &self.options
    }

    /// From now on, runs start with ASLR off (`ADDR_NO_RANDOMIZE`) or on.
    pub fn set_no_aslr(&mut self, no_aslr: bool) {
        self.no_aslr = no_aslr;
    }

    /// From now on, runs are pinned to this CPU (None: not pinned).
    pub fn set_pin(&mut self, pin: Option<usize>) {
        self.options.pin = pin;
    }

    /// From now on, runs get the jitter variable of random length, or not.
    pub fn set_env_jitter(&mut self, jitter: bool) {
        self.options.env_jitter = jitter;
    }

    /// Run `command` once (after `--prepare`) and extract every metric.
    /// `build` is the command's index in the report's list (see [`RunRecord::build`]).
    pub fn run(
        &mut self,
        command: &Prepared,
        build: usize,
        round: usize,
        warmup: bool,
    ) -> Result<RunRecord, RunFailure> {
        if let Some(prepare) = &self.prepare {
            let limit = self.limit(&command.spec.name)?;
            let outcome = spawn_with(
                (&self.options, self.no_aslr),
                limit.0,
                &mut self.capture,
                prepare,
                &[],
                None,
            )
            .map_err(|e| failure(&command.spec.name, e, Vec::new()))?;
            self.check_deadline(&outcome, limit, &command.spec.name)?;
            self.left.record("--prepare", &outcome);
            self.check_exit(
                &outcome,
                &format!("{} (--prepare)", command.spec.name),
                false,
            )?;
        }
        let (pad, env) = self.jitter();
        let mut attached: Option<ChildCounters> = None;
        let kinds = self.options.counters.clone();
        let mut attach = |pid: i32| -> Result<(), RunError> {
            let counters = counters::attach(pid, &kinds)
                .map_err(|e| RunError::Setup(format!("cannot attach hardware counters: {e}")))?;
            attached = Some(counters);
            Ok(())
        };
        let hook: Option<spawn::BeforeExec> = if kinds.is_empty() {
            None
        } else {
            Some(&mut attach)
        };
        let limit = self.limit(&command.spec.name)?;
        // Files a metric reads must be newer than this (coarse file clocks
        // lag the system clock by a tick, hence the second's slack).
        let since = std::time::SystemTime::now()
            .checked_sub(Duration::from_secs(1))
            .unwrap_or(std::time::UNIX_EPOCH);
        let outcome = spawn_with(
            (&self.options, self.no_aslr),
            limit.0,
            &mut self.capture,
            command,
            &env,
            hook,
        )
        .map_err(|e| failure(&command.spec.name, e, Vec::new()))?;
        self.check_deadline(&outcome, limit, &command.spec.name)?;
        self.left.record(&command.spec.name, &outcome);
        self.check_exit(&outcome, &command.spec.name, self.options.ignore_failure)?;
        let mut values = Vec::new();
        for spec in &self.options.metrics {
            let extracted = spec
                .extract_in(&outcome, command.dir.as_deref(), Some(since))
                .map_err(|e| {
                    let mut tail = spawn::last_lines(&outcome.stdout, 5);
                    tail.extend(spawn::last_lines(&outcome.stderr_tail, 5));
                    failure(&command.spec.name, RunError::Metric(format!("{e:#}")), tail)
                })?;
            if let (MetricSpec::Regex(regex), false) = (spec, warmup) {
                MatchTally::record(&mut self.tallies, regex, &extracted.several);
            }
            values.extend(extracted.values);
        }
        self.extracted += usize::from(!warmup);
        let counters = attached
            .map(|c| {
                c.read()
                    .into_iter()
                    .map(|(kind, value)| (kind.name().to_string(), value))
                    .collect()
            })
            .unwrap_or_default();
        Ok(RunRecord {
            build,
            round,
            warmup,
            wall_s: outcome.wall.as_secs_f64(),
            user_s: outcome.user.as_secs_f64(),
            sys_s: outcome.sys.as_secs_f64(),
            max_rss_kib: outcome.max_rss_kib,
            exit_code: match outcome.exit {
                Exit::Code(code) => code,
                _ => 0,
            },
            env_pad_bytes: pad,
            values,
            counters,
        })
    }

    /// Run a command once outside the measurement (`--setup`, `--cleanup`); a
    /// non-zero exit is a failure labelled `label`.
    pub fn run_unmeasured(&mut self, command: &Prepared, label: &str) -> Result<(), RunFailure> {
        let limit = self.limit(label)?;
        let outcome = spawn_with(
            (&self.options, self.no_aslr),
            limit.0,
            &mut self.capture,
            command,
            &[],
            None,
        )
        .map_err(|e| failure(label, e, Vec::new()))?;
        self.check_deadline(&outcome, limit, label)?;
        self.left.record(label, &outcome);
        self.check_exit(&outcome, label, false)
    }

    /// Wall time of one plain run (used to calibrate process-start overhead).
    pub fn run_wall_only(&mut self, command: &Prepared) -> Result<f64> {
        let (_, env) = self.jitter();
        let timeout = self.options.timeout;
        let outcome = spawn_with(
            (&self.options, self.no_aslr),
            timeout,
            &mut self.capture,
            command,
            &env,
            None,
        )?;
        anyhow::ensure!(
            outcome.exit.success(),
            "{} failed: {}",
            command.spec.text,
            outcome.exit.describe()
        );
        Ok(outcome.wall.as_secs_f64())
    }

    /// A run the deadline ended is [`RunError::OutOfTime`] (and noted).
    fn check_deadline(
        &mut self,
        outcome: &Outcome,
        (_, by_deadline): (Option<Duration>, bool),
        name: &str,
    ) -> Result<(), RunFailure> {
        if by_deadline && outcome.exit == Exit::TimedOut {
            self.cut = Some(name.to_string());
            return Err(failure(name, RunError::OutOfTime, Vec::new()));
        }
        Ok(())
    }

    /// A non-zero exit (unless ignored), a signal, a timeout or Ctrl-C is a
    /// failure, with the last output lines unless Ctrl-C ended it.
    fn check_exit(
        &self,
        outcome: &Outcome,
        name: &str,
        ignore_codes: bool,
    ) -> Result<(), RunFailure> {
        if ignore_codes && matches!(outcome.exit, Exit::Code(_)) {
            return Ok(());
        }
        let Some(error) = outcome.exit.error(self.options.timeout) else {
            return Ok(());
        };
        let tail = if error == RunError::Interrupted {
            Vec::new()
        } else {
            let mut tail = spawn::last_lines(&outcome.stdout, 5);
            tail.extend(spawn::last_lines(&outcome.stderr_tail, 10));
            tail
        };
        Err(failure(name, error, tail))
    }

    /// The jitter length for the next run and the variable that carries it.
    fn jitter(&mut self) -> (Option<usize>, Vec<(String, String)>) {
        let pad = self
            .options
            .env_jitter
            .then(|| self.rng.random_range(0..JITTER_MAX_BYTES));
        let env = pad
            .map(|n| (JITTER_VARIABLE.to_string(), "x".repeat(n)))
            .into_iter()
            .collect();
        (pad, env)
    }
}

/// One run of `command` with the runner's options and output capture.
fn spawn_with(
    (options, no_aslr): (&RunnerOptions, bool),
    timeout: Option<Duration>,
    capture: &mut Capture,
    command: &Prepared,
    extra_env: &[(String, String)],
    hook: Option<spawn::BeforeExec>,
) -> Result<Outcome, RunError> {
    let needs_output = options.metrics.iter().any(MetricSpec::reads_output);
    let mut env = command.env.clone();
    env.extend_from_slice(extra_env);
    spawn::spawn(
        &SpawnRequest {
            program: &command.program,
            argv: &command.spec.argv,
            extra_env: &env,
            pin: options.pin,
            no_aslr,
            timeout,
            poll: false,
            stdout: if needs_output {
                Keep::Head(METRIC_OUTPUT_BYTES)
            } else {
                Keep::Tail(64 << 10)
            },
            cwd: None,
        },
        capture,
        hook,
    )
}

/// A failure of the command `name`; any failure once Ctrl-C has arrived is
/// the interruption (its cause is a consequence of it).
fn failure(name: &str, error: RunError, last_output: Vec<String>) -> RunFailure {
    if spawn::interrupted() {
        return RunFailure::new(name, RunError::Interrupted);
    }
    RunFailure {
        command_name: name.to_string(),
        error,
        last_output,
    }
}
