//! The A/B loop: warm-up, interleaved rounds, looks, and stopping.
//!
//! Each round runs A and B once, in ABBA or random order. After each round the
//! sequential rule may take a look; the experiment stops when every metric has a
//! verdict, the budget ends, a run fails, or Ctrl-C. Whatever happened, the
//! report holds every run gathered so far, and its notes as facts.

use super::analysis;
use super::causes::Budget;
use super::{
    overhead, CompareOptions, CompareReport, CounterReport, CounterRow, Limit, MetricInput,
    MetricReport, Note, Order, Progress, SimulationReport, State, Status, Unapplied,
    SCHEMA_VERSION,
};
use crate::run::counters::{self, Availability};
use crate::run::environment;
use crate::run::executor::Executor;
use crate::run::metric::{Direction, Unit};
use crate::run::{cachegrind, Prepared, RunError, RunFailure, RunRecord};
use crate::stats::descriptive::median;
use crate::stats::sequential::{decided, Look, Sequential, StoppingRule};
use crate::stats::verdict::Verdict;
use anyhow::Result;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

/// Run the experiment. Errors are only for setup problems (a command that cannot
/// be found); failures during runs end up in the report's status.
pub fn run(
    options: &CompareOptions,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<CompareReport> {
    let started = Instant::now();
    let commands = [
        Prepared::new(&options.commands[0])?,
        Prepared::new(&options.commands[1])?,
    ];
    let counters = counter_setup(options.counters);
    let mut runner = options.runner(match &counters {
        Availability::Available(kinds) => kinds.clone(),
        Availability::Unavailable(_) => Vec::new(),
    })?;
    let setup = options.setup.as_ref().map(Prepared::new).transpose()?;
    let cleanup = options.cleanup.as_ref().map(Prepared::new).transpose()?;
    let spawn_overhead = options
        .spawn_correction
        .then(|| overhead::measure(&mut runner, options.commands[0].shell))
        .flatten();
    let mut report = run_with(
        options,
        &mut runner,
        &commands,
        (setup.as_ref(), cleanup.as_ref()),
        (spawn_overhead, &counters),
        on_progress,
    );
    report.simulation = options
        .simulate
        .then(|| simulate(&commands, options.input.as_deref(), options.timeout));
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The experiment on an [`Executor`]: `--setup`, the round loop, `--cleanup`
/// and the analysis. `spawn_overhead` is the process-start time measured
/// beforehand (when the correction is on), `counters` what perf counters
/// could be attached.
pub fn run_with(
    options: &CompareOptions,
    runner: &mut dyn Executor,
    commands: &[Prepared; 2],
    (setup, cleanup): (Option<&Prepared>, Option<&Prepared>),
    (spawn_overhead, counters): (Option<f64>, &Availability),
    on_progress: &mut dyn FnMut(&Progress),
) -> CompareReport {
    let started = Instant::now();
    let mut notes: Vec<Note> = Vec::new();
    let setup_failure = setup.and_then(|s| runner.run_unmeasured(s, "--setup").err());
    let mut state = Loop::new(options, spawn_overhead);
    let status = match setup_failure {
        Some(failure) => failed(failure),
        None => state.execute(
            runner,
            commands,
            &mut ChaCha8Rng::seed_from_u64(options.seed),
            started,
            on_progress,
        ),
    };
    runner.set_deadline(None);
    notes.extend(runner.notes().into_iter().map(Note::Run));
    if let Some(cleanup) = cleanup {
        if runner.interrupted() {
            notes.push(Note::CleanupSkipped);
        } else if let Err(failure) = runner.run_unmeasured(cleanup, "--cleanup") {
            notes.push(Note::CleanupFailed {
                cause: failure.error.to_string(),
            });
        }
    }
    if let (Some(o), None, true) = (spawn_overhead, state.correction, state.correction_decided) {
        notes.push(Note::SpawnNotCorrected {
            overhead_s: o,
            max_share: overhead::MAX_SHARE,
        });
    }
    let metrics = state.analyze();
    notes.extend(state.value_notes());
    let stopped_by = state.stopped_by;
    let correction = state.correction;
    let runs = std::mem::take(&mut state.runs);
    let measured: Vec<&RunRecord> = runs.iter().filter(|r| !r.warmup).collect();
    let counter_report = counter_report(options.counters, counters, &measured);
    if options.no_aslr {
        notes.push(Note::AslrOff);
    }
    if options.env_jitter {
        notes.push(Note::EnvironmentJitter {
            max_bytes: crate::run::JITTER_MAX_BYTES - 1,
        });
    }
    let environment = environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line);
    CompareReport {
        schema: crate::doc::Schema::Compare.name(),
        schema_version: SCHEMA_VERSION,
        commands: options.commands.to_vec(),
        settings: options.clone(),
        status,
        stopped_by,
        environment,
        spawn_overhead_s: spawn_overhead,
        spawn_correction_applied: correction.is_some(),
        metrics,
        counters: counter_report,
        simulation: None,
        notes,
        elapsed_s: started.elapsed().as_secs_f64(),
        runs,
        analyze: None,
    }
}

/// The state of the round loop.
struct Loop<'a> {
    options: &'a CompareOptions,
    runs: Vec<RunRecord>,
    metric_names: Vec<(String, Unit)>,
    sequential: Option<Sequential>,
    looks: Vec<Look>,
    spawn_overhead: Option<f64>,
    /// The process-start time subtracted from wall, once decided applicable.
    correction: Option<f64>,
    /// Whether the first runs were there to decide it.
    correction_decided: bool,
    /// The limit that ended the loop, when the budget did.
    stopped_by: Option<Limit>,
    /// Time since the experiment started when the first measured round began,
    /// and when the latest round ended: the run-time budget's fixed and per-round parts.
    first_round_at: Option<Duration>,
    last_round_at: Duration,
    rounds: usize,
}

impl<'a> Loop<'a> {
    fn new(options: &'a CompareOptions, spawn_overhead: Option<f64>) -> Self {
        Loop {
            options,
            runs: Vec::new(),
            metric_names: Vec::new(),
            sequential: None,
            looks: Vec::new(),
            spawn_overhead,
            correction: None,
            correction_decided: false,
            stopped_by: None,
            first_round_at: None,
            last_round_at: Duration::ZERO,
            rounds: 0,
        }
    }

    /// Decide the wall correction from the first runs of each side (warm-up, or the first round).
    fn decide_correction(&mut self) {
        let Some(o) = self.spawn_overhead else { return };
        let first_walls: Vec<f64> = (0..2)
            .map(|side| {
                self.runs
                    .iter()
                    .find(|r| r.build == side)
                    .map_or(f64::NAN, |r| r.wall_s)
            })
            .collect();
        self.correction = overhead::applicable(o, &first_walls).then_some(o);
        self.correction_decided = first_walls.iter().all(|w| w.is_finite());
    }

    fn execute(
        &mut self,
        runner: &mut dyn Executor,
        commands: &[Prepared; 2],
        rng: &mut ChaCha8Rng,
        started: Instant,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Status {
        let options = self.options;
        let runs_max = 2 * (options.max_runs + options.warmup);
        let mut progress = |runs: usize, warmup: bool, looks: Vec<(String, Verdict, f64)>| {
            on_progress(&Progress {
                runs_done: runs,
                runs_max,
                elapsed: started.elapsed(),
                max_time: options.max_time,
                warmup,
                looks,
            })
        };
        for round in 0..options.warmup {
            for side in 0..2 {
                if let Err(failure) = self.run_one(runner, commands, side, round, true) {
                    return failed(failure);
                }
                progress(self.runs.len(), true, Vec::new());
            }
        }
        if options.warmup > 0 {
            self.decide_correction();
        }
        let mut round = 0;
        self.first_round_at = Some(started.elapsed());
        loop {
            let mut order = [0usize, 1];
            match options.order {
                Order::Abba if round % 2 == 1 => order.reverse(),
                Order::Abba => {}
                Order::Random => order.shuffle(rng),
            }
            for side in order {
                if let Err(failure) =
                    self.run_one(runner, commands, side, options.warmup + round, false)
                {
                    if failure.error == RunError::OutOfTime {
                        self.stopped_by = Some(Limit::MaxTime);
                        return Status::new(State::BudgetExhausted, None);
                    }
                    return failed(failure);
                }
                progress(self.runs.len(), false, self.latest());
            }
            if round == 0 && options.warmup == 0 {
                self.decide_correction();
            }
            round += 1;
            self.rounds = round;
            // From the first measured round on, --max-time also ends the
            // run in progress (killed, left out; the runner notes it).
            if round == 1 {
                runner.set_deadline(Some(started + options.max_time));
            }
            self.last_round_at = started.elapsed();
            if let Some(looks) = self.observe(false) {
                self.looks = looks;
                if decided(&self.looks) {
                    return Status::new(State::Decided, None);
                }
            }
            if runner.interrupted() {
                return Status::new(
                    State::Interrupted,
                    Some(crate::run::interrupt::cause().into()),
                );
            }
            let out_of_time = started.elapsed() >= options.max_time;
            if round >= options.max_runs || out_of_time {
                self.stopped_by = Some(if out_of_time {
                    Limit::MaxTime
                } else {
                    Limit::MaxRuns
                });
                return Status::new(State::BudgetExhausted, None);
            }
        }
    }

    /// Run one command once, checking that it yields the same metrics as the first run.
    fn run_one(
        &mut self,
        runner: &mut dyn Executor,
        commands: &[Prepared; 2],
        side: usize,
        round: usize,
        warmup: bool,
    ) -> Result<(), RunFailure> {
        let record = runner.run(&commands[side], side, round, warmup)?;
        if self.metric_names.is_empty() {
            self.metric_names = record
                .values
                .iter()
                .map(|v| (v.name.clone(), v.unit))
                .collect();
        } else if let Some((missing, _)) = self
            .metric_names
            .iter()
            .find(|(name, _)| !record.values.iter().any(|v| &v.name == name))
        {
            return Err(RunFailure::new(
                &commands[side].spec.name,
                RunError::NoMetric(missing.clone()),
            ));
        }
        self.runs.push(record);
        Ok(())
    }

    /// The notes on the metrics themselves: `--higher-is-better` that left
    /// some lower-is-better, and values ≤ 0.
    fn value_notes(&self) -> Vec<Note> {
        let series = self.series();
        let inputs: Vec<MetricInput> = self
            .metric_names
            .iter()
            .zip(&series)
            .map(|((name, unit), [a, b])| MetricInput {
                name,
                unit: *unit,
                direction: self.options.higher_is_better.direction(name, *unit),
                a,
                b,
                spawn_corrected: false,
                look: too_few_runs(a, b),
                looks: 0,
            })
            .collect();
        Unapplied::of(&self.options.higher_is_better, &self.metric_names)
            .map(Note::Unapplied)
            .into_iter()
            .chain(analysis::non_positive(&inputs))
            .collect()
    }

    /// Each metric's direction, in the order of [`series`](Self::series).
    fn directions(&self) -> Vec<Direction> {
        self.metric_names
            .iter()
            .map(|(name, unit)| self.options.higher_is_better.direction(name, *unit))
            .collect()
    }

    /// Per-metric series of the measured runs of each side.
    fn series(&self) -> Vec<[Vec<f64>; 2]> {
        self.metric_names
            .iter()
            .map(|(name, _)| {
                let shift = if name == "wall" {
                    self.correction.unwrap_or(0.0)
                } else {
                    0.0
                };
                let side = |s: usize| -> Vec<f64> {
                    self.runs
                        .iter()
                        .filter(|r| r.build == s && !r.warmup)
                        .filter_map(|r| {
                            r.values
                                .iter()
                                .find(|v| &v.name == name)
                                .map(|v| v.value - shift)
                        })
                        .collect()
                };
                [side(0), side(1)]
            })
            .collect()
    }

    /// A look, when the sequential rule takes one now (or, with `finish`, a final one).
    fn observe(&mut self, finish: bool) -> Option<Vec<Look>> {
        if !finish {
            // Most rounds are not looks: skip building the series for them.
            let per_side = |side| {
                self.runs
                    .iter()
                    .filter(|r| r.build == side && !r.warmup)
                    .count()
            };
            let n = per_side(0).min(per_side(1));
            if self
                .sequential
                .as_ref()
                .is_some_and(|s| n < s.next_look_size())
            {
                return None;
            }
        }
        let series = self.series();
        let options = self.options;
        let metrics = series.len().max(1);
        let directions = self.directions();
        let sequential = self.sequential.get_or_insert_with(|| {
            Sequential::new(
                StoppingRule {
                    alpha: options.alpha,
                    margin: options.margin,
                    min_runs: options.min_runs,
                    higher_is_better: directions.iter().map(|d| d.higher_is_better()).collect(),
                },
                metrics,
            )
        });
        let pairs: Vec<(&[f64], &[f64])> = series
            .iter()
            .map(|[a, b]| (a.as_slice(), b.as_slice()))
            .collect();
        if finish {
            Some(sequential.finish(&pairs))
        } else {
            sequential.observe(&pairs)
        }
    }

    /// Final per-metric analysis. Unless the last look was at the final sample
    /// size, one more evaluation is made at the next unspent alpha.
    fn analyze(&mut self) -> Vec<MetricReport> {
        let series = self.series();
        let n = series.first().map_or(0, |[a, b]| a.len().min(b.len()));
        if n >= 2 {
            // Returns the last look unchanged if it was taken at this n.
            self.looks = self.observe(true).unwrap_or_default();
        }
        let looks_spent = self.sequential.as_ref().map_or(0, Sequential::looks_spent);
        let options = self.options;
        let inputs: Vec<MetricInput> = self
            .metric_names
            .iter()
            .zip(&series)
            .enumerate()
            .map(|(i, ((name, unit), [a, b]))| MetricInput {
                name,
                unit: *unit,
                direction: options.higher_is_better.direction(name, *unit),
                a,
                b,
                spawn_corrected: name == "wall" && self.correction.is_some(),
                look: self
                    .looks
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| too_few_runs(a, b)),
                looks: looks_spent,
            })
            .collect();
        analysis::analyze_within(
            &inputs,
            options.margin,
            options.alpha,
            options.seed,
            Some(&self.budget()),
        )
    }

    /// What the budget allowed, and how the time went, for the hints.
    fn budget(&self) -> Budget {
        let fixed = self.first_round_at.unwrap_or(self.last_round_at);
        let measured = self.last_round_at.saturating_sub(fixed).as_secs_f64();
        Budget {
            stopped_by: self.stopped_by,
            max_runs: self.options.max_runs,
            max_time_s: self.options.max_time.as_secs_f64(),
            fixed_s: fixed.as_secs_f64(),
            round_s: (self.rounds > 0).then(|| measured / self.rounds as f64),
            pinned: self.options.pin.is_some(),
        }
    }

    /// The latest look's verdict and ratio per metric, for the progress bar.
    fn latest(&self) -> Vec<(String, Verdict, f64)> {
        self.looks
            .iter()
            .zip(&self.metric_names)
            .map(|(look, (name, _))| (name.clone(), look.verdict, look.ratio))
            .collect()
    }
}

/// The look for a metric with fewer than two runs a side: a point ratio, no CI.
fn too_few_runs(a: &[f64], b: &[f64]) -> Look {
    Look {
        look: 0,
        n_a: a.len(),
        n_b: b.len(),
        alpha: 0.0,
        ratio: median(b) / median(a),
        low: f64::NAN,
        high: f64::NAN,
        verdict: Verdict::Unknown,
    }
}

fn failed(failure: RunFailure) -> Status {
    Status::from_failure(failure, State::Interrupted, State::Failed)
}

fn counter_setup(requested: bool) -> Availability {
    if requested {
        counters::availability()
    } else {
        Availability::Unavailable("not requested".into())
    }
}

fn counter_report(
    requested: bool,
    availability: &Availability,
    runs: &[&RunRecord],
) -> CounterReport {
    let unavailable = match availability {
        Availability::Unavailable(reason) if requested => Some(reason.clone()),
        _ => None,
    };
    let mut rows = Vec::new();
    if let Availability::Available(kinds) = availability {
        for kind in kinds {
            let side = |s: usize| -> Vec<f64> {
                runs.iter()
                    .filter(|r| r.build == s)
                    .filter_map(|r| {
                        r.counters
                            .iter()
                            .find(|(n, _)| n == kind.name())
                            .map(|(_, v)| *v as f64)
                    })
                    .collect()
            };
            let (a, b) = (median(&side(0)), median(&side(1)));
            if a.is_finite() && b.is_finite() {
                rows.push(CounterRow {
                    name: kind.name().to_string(),
                    median_a: a,
                    median_b: b,
                    ratio: b / a,
                });
            }
        }
    }
    CounterReport {
        requested,
        unavailable,
        rows,
    }
}

/// One cachegrind run per command, after the timing runs so it cannot disturb them.
fn simulate(
    commands: &[Prepared; 2],
    input: Option<&std::path::Path>,
    timeout: Option<Duration>,
) -> SimulationReport {
    if let Err(reason) = cachegrind::availability() {
        return SimulationReport {
            unavailable: Some(reason.to_string()),
            results: Vec::new(),
            errors: Vec::new(),
        };
    }
    let timeout = timeout.unwrap_or(Duration::from_secs(600));
    let (results, errors) = commands
        .iter()
        .map(
            |c| match cachegrind::simulate(&c.spec.argv, &[], input, timeout) {
                Ok(sim) => (Some(sim), None),
                Err(e) => (None, Some(format!("{e:#}"))),
            },
        )
        .unzip();
    SimulationReport {
        unavailable: None,
        results,
        errors,
    }
}

#[cfg(test)]
mod tests;
