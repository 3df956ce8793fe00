//! The rounds of a `noise` experiment: the factors that apply, one warm-up
//! run, then rounds of every cell once in a fresh random order until the
//! budget or `--rounds` ends them (at least [`MIN_ROUNDS`]); a fresh copy of
//! the binary is made before, and removed after, each run that asks for one.
//! A failed run or Ctrl-C ends the rounds; what was gathered is analysed.

use super::analysis::analyze;
use super::plan::{self, Machine, Program, Settings};
use super::{NoiseOptions, NoiseReport, NoiseRun, Progress, State, MIN_ROUNDS};
use crate::run::{self, Prepared, RunFailure, Runner, RunnerOptions, Status};
use anyhow::{Context, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The copies of the binary: the one every held run executes, and the
/// fresh ones, all at paths of the same length (the path is on the stack).
struct Copies {
    _dir: tempfile::TempDir,
    root: PathBuf,
    name: std::ffi::OsString,
    source: PathBuf,
    made: usize,
}

impl Copies {
    fn new(source: &Path) -> Result<Copies> {
        let dir = run::launch::scratch_dir("ghostbench-noise-")
            .context("cannot make a directory for the binary's copies")?;
        let name = source
            .file_name()
            .context("the program has no file name")?
            .to_os_string();
        let copies = Copies {
            root: dir.path().to_path_buf(),
            _dir: dir,
            name,
            source: source.to_path_buf(),
            made: 0,
        };
        copies.copy_to(0)?;
        Ok(copies)
    }

    fn path(&self, n: usize) -> PathBuf {
        self.root.join(format!("{n:07}")).join(&self.name)
    }

    fn copy_to(&self, n: usize) -> Result<PathBuf> {
        let path = self.path(n);
        let dir = path.parent().context("a copy's directory")?;
        std::fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::copy(&self.source, &path).with_context(|| {
            format!(
                "cannot copy {} to {}",
                self.source.display(),
                path.display()
            )
        })?;
        Ok(path)
    }

    /// A new copy, numbered after the last (the held copy is number 0).
    fn fresh(&mut self) -> Result<PathBuf> {
        self.made += 1;
        self.copy_to(self.made)
    }

    fn remove(&self, path: &Path) {
        let _ = std::fs::remove_file(path);
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Run the experiment `options` describes. Bad input (a command that cannot
/// be found) is an error before anything runs; a failed run or Ctrl-C ends
/// the rounds and is the report's status.
pub fn run(options: &NoiseOptions, progress: &mut dyn FnMut(Progress)) -> Result<NoiseReport> {
    let started = Instant::now();
    let base = Prepared::new(&options.command)?;
    let machine = Machine::read();
    let program = Program::inspect(&base.program, options.command.shell);
    let factors = plan::factors(options, &machine, &program);
    let tested: Vec<_> = factors
        .iter()
        .filter(|f| f.not_tested.is_none())
        .map(|f| f.factor)
        .collect();
    let pin_cpu = plan::pin_cpu(options, &machine);
    if let Some(cpu) = options.pin {
        crate::run::spawn::check_pin(cpu)?;
    }
    let mut copies = if tested.contains(&super::Factor::Fresh) {
        Some(Copies::new(&base.program)?)
    } else {
        None
    };
    let mut metrics = options.metrics.clone();
    if options.user_plus_sys {
        for needed in [run::metric::MetricSpec::User, run::metric::MetricSpec::Sys] {
            if !metrics.iter().any(|m| m.label() == needed.label()) {
                metrics.push(needed);
            }
        }
    }
    let mut runner = Runner::new(
        RunnerOptions {
            pin: None,
            timeout: options.timeout,
            env_jitter: false,
            prepare: None,
            counters: Vec::new(),
            metrics,
            ignore_failure: false,
            input: None,
        },
        ChaCha8Rng::seed_from_u64(options.seed),
    )?;
    let user_tunables = std::env::var("GLIBC_TUNABLES").ok();
    let cells = 1u32 << tested.len();
    let mut order_rng = ChaCha8Rng::seed_from_u64(options.seed.wrapping_add(1));
    let mut runs: Vec<NoiseRun> = Vec::new();
    let mut status = Status::new(State::Finished, None);
    let one = |runner: &mut Runner,
               copies: &mut Option<Copies>,
               cell: u32,
               round: usize,
               warmup: bool|
     -> Result<Result<NoiseRun, RunFailure>> {
        let settings = plan::settings(&tested, cell, pin_cpu);
        let (command, fresh) = prepare(&base, &settings, copies, user_tunables.as_deref())?;
        runner.set_no_aslr(settings.no_aslr);
        runner.set_pin(settings.pin);
        runner.set_env_jitter(settings.env_jitter);
        let record = runner.run(&command, 0, round, warmup);
        if let (Some(path), Some(copies)) = (fresh, copies.as_ref()) {
            copies.remove(&path);
        }
        Ok(record.map(|record| NoiseRun { cell, record }))
    };
    let default_cell = plan::default_cell(&tested);
    let warm_start = Instant::now();
    let mut per_run = match one(&mut runner, &mut copies, default_cell, 0, true)? {
        Ok(_) => warm_start.elapsed().as_secs_f64(),
        Err(failure) => {
            status = Status::from_failure(failure, State::Interrupted, State::Failed);
            f64::NAN
        }
    };
    let rounds_start = Instant::now();
    let mut round = 0;
    while status.state == State::Finished && round < options.max_rounds.max(MIN_ROUNDS) {
        let elapsed = rounds_start.elapsed().as_secs_f64();
        if round > 0 {
            per_run = elapsed / runs.len().max(1) as f64;
        }
        let next_round = per_run * f64::from(cells);
        if round >= MIN_ROUNDS && elapsed + next_round > options.budget.as_secs_f64() {
            break;
        }
        let mut order: Vec<u32> = (0..cells).collect();
        order.shuffle(&mut order_rng);
        for cell in order {
            match one(&mut runner, &mut copies, cell, round, false)? {
                Ok(run) => runs.push(run),
                Err(failure) => {
                    status = Status::from_failure(failure, State::Interrupted, State::Failed);
                    break;
                }
            }
            if crate::run::spawn::interrupted() {
                status = Status::new(State::Interrupted, Some(run::interrupt::cause().into()));
                break;
            }
            progress(Progress {
                round,
                runs_done: runs.len(),
                cells: cells as usize,
            });
        }
        round += 1;
    }
    let complete_rounds = complete_rounds(&runs, cells);
    let metrics = analyze(options, &tested, &runs, complete_rounds);
    Ok(NoiseReport {
        command: options.command.clone(),
        factors,
        pin_cpu: tested
            .contains(&super::Factor::Pin)
            .then_some(pin_cpu)
            .flatten(),
        thp_mode: machine.thp_mode,
        budget_s: options.budget.as_secs_f64(),
        elapsed_s: started.elapsed().as_secs_f64(),
        complete_rounds,
        runs,
        metrics,
        status,
        notes: runner.notes(),
        seed: options.seed,
        environment: run::environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line),
    })
}

/// The command of one run: the program (a copy when the fresh-copy factor
/// is tested) and `GLIBC_TUNABLES` (when the heap factor is). Returns the
/// fresh copy to remove after the run.
fn prepare(
    base: &Prepared,
    settings: &Settings,
    copies: &mut Option<Copies>,
    user_tunables: Option<&str>,
) -> Result<(Prepared, Option<PathBuf>)> {
    let mut command = base.clone();
    let mut fresh = None;
    if let (Some(is_fresh), Some(copies)) = (settings.fresh_copy, copies.as_mut()) {
        command.program = if is_fresh {
            let path = copies.fresh()?;
            fresh = Some(path.clone());
            path
        } else {
            copies.path(0)
        };
    }
    if let Some(value) = settings.hugetlb {
        command.env.push((
            "GLIBC_TUNABLES".into(),
            plan::tunables(user_tunables, value),
        ));
    }
    Ok((command, fresh))
}

/// Rounds in which every cell ran (the runs come round by round).
fn complete_rounds(runs: &[NoiseRun], cells: u32) -> usize {
    let mut per_round: std::collections::BTreeMap<usize, usize> = Default::default();
    for run in runs {
        *per_round.entry(run.record.round).or_default() += 1;
    }
    per_round.values().filter(|&&n| n == cells as usize).count()
}
