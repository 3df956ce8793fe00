//! Running one look's rounds: warm-up and measured rounds over its (build,
//! variant) pairs, each run's metrics checked against the first run's, and
//! the machine's load sampled after every round. Each round visits the
//! layouts in a fresh random order and runs one layout's builds back to back
//! (in a fresh random order too), so that the runs a ratio B/A is taken from
//! share the host's state of the moment (`order_of_round`).

use crate::layout::{LayoutRun, Phase, Progress, State, Status};
use crate::run::executor::Executor;
use crate::run::metric::Unit;
use crate::run::{Prepared, RunError, RunFailure};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

/// How a batch's rounds ended.
pub struct RoundsOutcome {
    pub status: Status,
    /// `Some(measured rounds)` when `--max-time` stopped the batch early.
    pub rounds_done: Option<usize>,
}

/// Which rounds one look runs: `warmup` unmeasured rounds, then `measured`
/// rounds, numbered from `first`.
#[derive(Debug, Clone, Copy)]
pub struct RoundSchedule {
    pub warmup: usize,
    pub measured: usize,
    pub first: usize,
}

/// Warm-up and measured rounds over one look's (build, variant) pairs, in a
/// fresh random order each round. Stops at a failed run, Ctrl-C, or after
/// the first measured round that ends past `budget`.
#[allow(clippy::too_many_arguments)]
pub fn run_rounds(
    runner: &mut dyn Executor,
    rng: &mut ChaCha8Rng,
    pairs: &[&(usize, u64, Prepared)],
    schedule: RoundSchedule,
    budget: Option<Duration>,
    (runs, load_samples): (&mut Vec<LayoutRun>, &mut Vec<f64>),
    metric_names: &mut Vec<(String, Unit)>,
    on_progress: &mut dyn FnMut(&Progress),
) -> RoundsOutcome {
    let started = Instant::now();
    let RoundSchedule {
        warmup: warmups,
        measured,
        first,
    } = schedule;
    let total = pairs.len() * (measured + warmups);
    let mut done = 0;
    for round in 0..measured + warmups {
        let warmup = round < warmups;
        for i in order_of_round(pairs, rng) {
            let (b, seed, prepared) = pairs[i];
            let result = runner
                .run(prepared, *b, first + round, warmup)
                .and_then(|record| {
                    check_metrics(metric_names, &record, &prepared.spec.name)?;
                    Ok(record)
                });
            match result {
                Ok(record) => runs.push(LayoutRun {
                    build: *b,
                    seed: *seed,
                    record,
                }),
                Err(failure) if failure.error == RunError::OutOfTime => {
                    return RoundsOutcome {
                        status: Status::new(State::BudgetExhausted, None),
                        rounds_done: Some(round.saturating_sub(warmups)),
                    }
                }
                Err(failure) => {
                    return RoundsOutcome {
                        status: failed(failure),
                        rounds_done: None,
                    }
                }
            }
            done += 1;
            on_progress(&Progress {
                phase: Phase::Run,
                done,
                total,
                message: if warmup {
                    "warm-up".into()
                } else {
                    format!("round {}/{}", round - warmups + 1, measured)
                },
            });
            if runner.interrupted() {
                return RoundsOutcome {
                    status: Status::new(
                        State::Interrupted,
                        Some(crate::run::interrupt::cause().into()),
                    ),
                    rounds_done: None,
                };
            }
        }
        if let Some(load) = crate::run::environment::load_now() {
            load_samples.push(load);
        }
        if let Some(limit) = budget {
            let measured_rounds = (round + 1).saturating_sub(warmups);
            // From the first measured round on, the budget also ends the
            // run in progress (killed, left out; the runner notes it).
            if measured_rounds == 1 {
                runner.set_deadline(Some(started + limit));
            }
            let more = round + 1 < measured + warmups;
            if measured_rounds > 0 && more && started.elapsed() >= limit {
                return RoundsOutcome {
                    status: Status::new(State::BudgetExhausted, None),
                    rounds_done: Some(measured_rounds),
                };
            }
        }
    }
    RoundsOutcome {
        status: Status::new(State::Finished, None),
        rounds_done: None,
    }
}

/// One round's order over `pairs` (build, seed, …): the seeds (layouts) in
/// a random order, and each seed's builds next to each other in a random
/// order. A busy host changes speed in steps that last several runs (on the
/// 2-CPU test machine two consecutive undisturbed runs shared the clock step
/// 61% of the time against 29% by chance; BENCHMARKS.md, issue 22 point 6),
/// so the builds of a layout run back to back see the same step far more
/// often than builds run at random places in the round. Nothing is lost
/// when the host is quiet: the order within a layout is still random.
pub fn order_of_round<T>(pairs: &[&(usize, u64, T)], rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut seeds: Vec<u64> = Vec::new();
    for (_, seed, _) in pairs {
        if !seeds.contains(seed) {
            seeds.push(*seed);
        }
    }
    seeds.shuffle(rng);
    let mut order = Vec::with_capacity(pairs.len());
    for seed in seeds {
        let mut group: Vec<usize> = (0..pairs.len()).filter(|&i| pairs[i].1 == seed).collect();
        group.shuffle(rng);
        order.extend(group);
    }
    order
}

/// The runner's own measurements, which a clock's or a counter's resolution
/// can make 0 (a short run's `user` or `sys`): a note counts those zeros.
pub const RUNNER_OWN: [&str; 4] = ["wall", "user", "sys", "rss"];

/// Every run must yield the metrics the first run yielded, and a measured
/// run values above 0 (a ratio's log needs them; a 0 would drop its layout
/// from the analysis without a word), except a 0 of [`RUNNER_OWN`].
fn check_metrics(
    names: &mut Vec<(String, Unit)>,
    record: &crate::run::RunRecord,
    command: &str,
) -> Result<(), RunFailure> {
    if let Some(v) = record.values.iter().find(|v| {
        !record.warmup
            && (v.value < 0.0 || (v.value == 0.0 && !RUNNER_OWN.contains(&v.name.as_str())))
    }) {
        return Err(RunFailure::new(
            command,
            RunError::Metric(format!(
                "metric {:?} is {} in this run: layout compares ratios B/A across layouts, which need values above 0",
                v.name, v.value
            )),
        ));
    }
    if names.is_empty() {
        *names = record
            .values
            .iter()
            .map(|v| (v.name.clone(), v.unit))
            .collect();
        return Ok(());
    }
    if let Some((missing, _)) = names
        .iter()
        .find(|(n, _)| !record.values.iter().any(|v| &v.name == n))
    {
        return Err(RunFailure::new(
            command,
            RunError::NoMetric(missing.clone()),
        ));
    }
    Ok(())
}

fn failed(failure: RunFailure) -> Status {
    Status::from_failure(failure, State::Interrupted, State::RunFailed)
}

#[cfg(test)]
mod tests {
    use super::order_of_round;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashSet;

    #[test]
    fn a_round_runs_each_layouts_builds_back_to_back_in_a_random_order() {
        // 3 builds × 5 seeds, listed build by build as the experiment does.
        let pairs: Vec<(usize, u64, ())> = (0..3)
            .flat_map(|b| (10..15).map(move |s| (b, s, ())))
            .collect();
        let refs: Vec<&(usize, u64, ())> = pairs.iter().collect();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut first_builds, mut seed_orders) = (HashSet::new(), HashSet::new());
        for _ in 0..40 {
            let order = order_of_round(&refs, &mut rng);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..15).collect::<Vec<_>>(), "every pair once");
            let seeds: Vec<u64> = order.iter().map(|&i| pairs[i].1).collect();
            for group in seeds.chunks(3) {
                assert!(group.iter().all(|&s| s == group[0]), "{seeds:?}");
            }
            first_builds.insert(pairs[order[0]].0);
            seed_orders.insert(seeds.iter().step_by(3).copied().collect::<Vec<_>>());
        }
        assert_eq!(first_builds.len(), 3, "any build may open a layout's group");
        assert!(
            seed_orders.len() > 20,
            "layouts in a fresh order each round"
        );
    }
}
