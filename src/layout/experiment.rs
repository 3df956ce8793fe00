//! The layout experiment: variants → builds → interleaved runs → analysis.
//!
//! Every (build, variant) pair runs once per round, in a fresh random order
//! each round, after `warmup` unmeasured rounds. A failed build drops its
//! seed for every build (variants stay matched); the experiment goes on while
//! at least 3 seeds, including the default layout, remain. A failed run or
//! Ctrl-C stops the runs; whatever was measured is analyzed and reported.
//! What the reader should know is recorded as `Note` facts; `render` words them.

use super::analysis::comparisons;
use super::builds::BuildResult;
use super::plan::{
    build_batch, build_jobs, experiment_name, heap_inapplicable, resolve_sources, run_pairs,
    shard_build_failure, too_few_built, unmakeable,
};
use super::variants::{Source, Variant};
use super::{Added, LayoutOptions, LayoutReport, LayoutRun, Look, Note, State, Status};
use crate::run::executor::Executor;
use crate::run::metric::Unit;
use crate::run::{Prepared, Runner, RunnerOptions};
use crate::stats::verdict::Verdict;
use anyhow::{bail, Context, Result};
use budget::{auto_outcome, next_look, NextLook};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rounds::{run_rounds, RoundSchedule};
use std::path::Path;
use std::time::{Duration, Instant};

pub use super::{Phase, Progress, MIN_VARIANTS};

/// The cumulative variant counts at which `layout` looks at the data: one
/// look at `layouts` for a fixed count; with `--layouts auto`, `layouts`
/// (the first batch), then doubling up to `max_layouts`.
pub fn look_sizes(layouts: usize, max_layouts: Option<usize>) -> Vec<usize> {
    let mut sizes = vec![layouts];
    if let Some(max) = max_layouts {
        while let Some(&last) = sizes.last() {
            if last >= max {
                break;
            }
            sizes.push((last * 2).min(max));
        }
    }
    sizes
}

/// The share of α spent at look k (1-based) of `looks`: 1/(k(k + 1)), the
/// rest at the last look (so the shares add up to exactly 1). A union bound
/// over the looks keeps the family-wise level whatever the stopping rule.
pub fn look_share(k: usize, looks: usize) -> f64 {
    if looks <= 1 || k >= looks {
        return 1.0 / looks.max(1) as f64;
    }
    crate::stats::sequential::look_alpha(1.0, k)
}

/// Run the experiment. Errors are for setup problems only (bad templates,
/// an unwritable work directory); build and run failures end up in the
/// report's status.
pub fn run(
    options: &LayoutOptions,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<LayoutReport> {
    let started = Instant::now();
    if options.builds.len() < 2 {
        bail!("layout needs at least two --build templates (the first is the baseline)");
    }
    if options.layouts < MIN_VARIANTS && !options.planned.as_ref().is_some_and(|p| p.shard) {
        bail!("--layouts must be at least {MIN_VARIANTS}");
    }
    if options.max_layouts.is_some_and(|m| m < options.layouts) {
        bail!("--max-layouts must be at least the first batch of --layouts");
    }
    // Before anything is built: a template that names no output would
    // build every variant only to fail at the end.
    for build in &options.builds {
        super::builds::check_template(&build.name, &build.template)?;
    }
    // Owner-only, walked without following links: the experiment's name is
    // predictable, so a directory or link planted there is refused.
    let work_dir = crate::safe_file::private_dir(
        &options.work_root,
        &Path::new(".ghostbench/work").join(experiment_name(options)),
    )
    .with_context(|| {
        format!(
            "cannot use {}",
            options.work_root.join(".ghostbench/work").display()
        )
    })?;
    let work_dir = std::fs::canonicalize(&work_dir).unwrap_or(work_dir);

    let cache = super::cache::Cache::open(&options.work_root).with_context(|| {
        format!(
            "cannot use {}",
            options.work_root.join(super::cache::DIR).display()
        )
    })?;
    let cache_cap = super::cache::max_bytes().map_err(|e| anyhow::anyhow!(e))?;
    let resolved = resolve_sources(options, &cache.root);
    let (sources, linker, pads, mut heap) = (
        resolved.statuses,
        resolved.linker,
        resolved.pads,
        resolved.heap,
    );
    // Why the heap shim was turned off after the first builds, if it was.
    let mut heap_off: Option<String> = None;
    let active = |s: Source| sources.iter().any(|st| st.source == s && st.active);
    let mut report = fresh::new_report(options, &work_dir, sources.clone());
    if let Some(status) = options.planned.as_ref().and_then(|p| {
        unmakeable(
            &p.variants,
            &sources,
            options.sources.contains(&Source::Heap),
        )
    }) {
        report.status = status;
        report.timing.total_s = started.elapsed().as_secs_f64();
        return Ok(report);
    }
    let mut runner = Runner::new(
        RunnerOptions {
            pin: options.pin,
            timeout: options.timeout,
            env_jitter: true,
            prepare: None,
            ignore_failure: false,
            input: None,
            counters: Vec::new(),
            metrics: options.metrics.clone(),
        },
        ChaCha8Rng::seed_from_u64(options.seed ^ 0x6a09_e667_f3bc_c908),
    )?;
    let mut defaults: std::collections::HashMap<usize, String> = Default::default();
    let templates: Vec<super::identical::Template> = options
        .builds
        .iter()
        .map(|b| super::identical::Template {
            name: &b.name,
            template: &b.template,
        })
        .collect();
    let mut build = |batch: &[Variant], progress: &mut dyn FnMut(&Progress)| -> Result<Batch> {
        let started = Instant::now();
        let jobs = build_jobs(options, &work_dir, &cache, batch, &pads, linker.as_ref())?;
        let results = build_batch(options, &cache, &jobs, progress);
        // The default layouts show whether the shim can apply at all.
        if heap.is_some() {
            if let Some(why) = heap_inapplicable(options, &jobs) {
                heap = None;
                heap_off = Some(why);
            }
        }
        for r in results.iter().filter(|r| r.seed == 0 && r.ok) {
            if let Some(h) = &r.code_hash {
                defaults.insert(r.build, h.clone());
            }
        }
        // Variants identical across builds measure nothing: left out.
        let (identical, misfired) = super::identical::find(&templates, batch, &results, &defaults);
        let seeds: Vec<u64> = batch
            .iter()
            .map(|v| v.seed)
            .filter(|&seed| results.iter().filter(|r| r.seed == seed).all(|r| r.ok))
            .filter(|seed| !misfired.contains(seed))
            .collect();
        Ok(Batch {
            pairs: run_pairs(options, &jobs, &seeds, heap.as_deref())?,
            results,
            seeds,
            identical,
            build_s: started.elapsed().as_secs_f64(),
        })
    };
    let sources_on = (
        active(Source::Align),
        active(Source::Shift),
        active(Source::Shuffle),
    );
    look_loop(
        options,
        &mut runner,
        sources_on,
        &mut build,
        &mut report,
        on_progress,
    )?;
    // The heap source as it ended: off with the reason when a default
    // layout showed it cannot apply; each variant records its shift.
    let heap_on = active(Source::Heap) && heap_off.is_none();
    if let Some(why) = heap_off {
        if let Some(status) = report.sources.iter_mut().find(|s| s.source == Source::Heap) {
            status.active = false;
            status.detail = why;
        }
    }
    for variant in &mut report.variants {
        *variant = variant.clone().with_heap(heap_on);
    }
    // The cache stays within its cap: least recently used entries go.
    cache.prune(cache_cap);
    let reused = report
        .build_results
        .iter()
        .filter(|r| r.reused && r.ok)
        .count();
    report.settings.layouts = report.variants.len();
    report
        .notes
        .extend(runner.notes().into_iter().map(Note::Run));
    if reused > 0 {
        report.notes.push(Note::BuildsReused {
            reused,
            builds: report.build_results.len(),
            cache: cache.root.display().to_string(),
        });
    }
    // Interrupted during the first builds: nothing ran, and the builds the
    // signal stopped are not variants that failed.
    let stopped_building = report.status.state == State::Interrupted && report.runs.is_empty();
    let first_failure = report.failed_builds().next().cloned();
    if let Some(f) = first_failure.filter(|_| !stopped_building) {
        report.notes.push(Note::VariantsLeftOut {
            left_out: report.variants.len() - report.used_seeds.len(),
            variants: report.variants.len(),
            build: options.builds[f.build].name.clone(),
            seed: f.seed,
            error: f.error,
        });
    }
    if report.status.state == State::BuildFailed || stopped_building {
        report.timing.total_s = started.elapsed().as_secs_f64();
        return Ok(report);
    }
    if options.max_layouts.is_some() {
        report
            .notes
            .push(Note::Auto(auto_outcome(&report, options)));
        report.notes.extend(budget::rounds_note(&report));
    }
    report.notes.push(Note::EnvironmentJitter);
    if heap_on {
        report.notes.extend(four_k_aliasing(options.seed));
    }
    report.notes.extend(unapplied(options, &report.matrix));
    report.notes.extend(zero_values(&report.runs));
    let metrics = report.matrix.len() / options.builds.len();
    let comparisons = comparisons(metrics, options.builds.len());
    if comparisons > 1 {
        report.notes.push(Note::Bonferroni {
            comparisons,
            confidence: report.settings.confidence,
            split_over_looks: report.looks.len() > 1 || options.max_layouts.is_some(),
        });
    }
    if let Some(top) = options.explain {
        if report.status.state == State::Interrupted {
            report.notes.push(Note::ExplainSkipped);
        } else {
            on_progress(&Progress {
                phase: Phase::Explain,
                done: 0,
                total: 1,
                message: "comparing the default layouts' code placement".into(),
            });
            let built: Vec<bool> = (0..options.builds.len())
                .map(|b| {
                    report
                        .build_results
                        .iter()
                        .any(|r| r.build == b && r.seed == 0 && r.ok)
                })
                .collect();
            let explain_started = Instant::now();
            report.explain = Some(super::explain::explain(options, &work_dir, &built, top));
            report.timing.explain_s = explain_started.elapsed().as_secs_f64();
        }
    }
    report.timing.total_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Whether this CPU pays for 4K aliasing, from `probe`'s quick alias probe
/// run here (a few milliseconds), as a note for the heap source.
fn four_k_aliasing(seed: u64) -> Option<Note> {
    let settings = crate::probe::Settings {
        quick: true,
        budget: Duration::from_millis(500),
        split_locks: false,
        seed,
        faults: crate::probe::Faults::default(),
    };
    let budget = crate::probe::timing::Budget::new(settings.budget);
    let found = crate::probe::alias::run(&settings, &budget).details;
    Some(Note::FourKAliasing {
        ratio: found.ratio?,
        penalty: found.penalty?,
    })
}

/// One batch of variants, built: the build results, the seeds that built
/// for every build, and the run command of each (build, seed).
pub struct Batch {
    pub results: Vec<BuildResult>,
    pub seeds: Vec<u64>,
    pub pairs: Vec<(usize, u64, Prepared)>,
    pub build_s: f64,
    /// Variants whose code came out identical (those across builds are not in `seeds`).
    pub identical: Vec<super::identical::Identical>,
}

/// Builds one batch of variants, reporting progress.
pub type BuildFn<'a> = dyn FnMut(&[Variant], &mut dyn FnMut(&Progress)) -> Result<Batch> + 'a;

/// The looks: build a batch of variants (`build`), run its rounds on
/// `executor`, analyze everything so far, and stop when every comparison is
/// decided, the schedule ends, a run fails, Ctrl-C, or `--max-time`.
/// `sources_on` says which of align, shift and shuffle perturb the variants.
pub fn look_loop(
    options: &LayoutOptions,
    executor: &mut dyn Executor,
    sources_on: (bool, bool, bool),
    build: &mut BuildFn<'_>,
    report: &mut LayoutReport,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let mut metric_names: Vec<(String, Unit)> = Vec::new();
    let looks = match &options.planned {
        Some(_) => 1,
        None => look_sizes(options.layouts, options.max_layouts).len(),
    };
    let max_time_s = options.max_time.unwrap_or_default().as_secs_f64();
    // Every (build, variant, command) measured so far, for rounds looks.
    let mut all_pairs: Vec<(usize, u64, Prepared)> = Vec::new();
    // Rounds each layout so far has had, counting warm-up (round numbers).
    let mut rounds_so_far = 0;
    for look in 0..looks {
        let step = match (&options.planned, look) {
            (Some(planned), _) => NextLook::Layouts(planned.variants.len()),
            (None, 0) => NextLook::Layouts(options.layouts),
            (None, _) => next_look(options, report),
        };
        // Which of `all_pairs` this look runs: a new batch, or all of them.
        let (first_pair, schedule, added) = match step {
            NextLook::Layouts(size) => {
                let batch: Vec<Variant> = match &options.planned {
                    Some(planned) => planned.variants.clone(),
                    None => (report.variants.len() as u64..size as u64)
                        .map(|seed| {
                            Variant::from_seed(seed, sources_on.0, sources_on.1, sources_on.2)
                        })
                        .collect(),
                };
                let layouts = batch.len();
                let built = build(&batch, on_progress)?;
                report.timing.build_s += built.build_s;
                report.variants.extend(batch);
                report.used_seeds.extend(&built.seeds);
                report.build_results.extend(built.results);
                report
                    .notes
                    .extend(built.identical.into_iter().map(Note::Identical));
                // A signal during the builds: no runs start, and what was
                // built and run so far is the report (exit 130/143/129, not
                // "too few built").
                if executor.interrupted() {
                    report.status = Status::new(
                        State::Interrupted,
                        Some(crate::run::interrupt::cause().into()),
                    );
                    return Ok(());
                }
                if look == 0 {
                    let failed = match &options.planned {
                        Some(planned) if planned.shard => shard_build_failure(options, report),
                        _ => too_few_built(options, report),
                    };
                    if let Some(status) = failed {
                        report.status = status;
                        return Ok(());
                    }
                }
                let first_pair = all_pairs.len();
                all_pairs.extend(built.pairs);
                rounds_so_far = rounds_so_far.max(options.warmup + options.rounds);
                let schedule = RoundSchedule {
                    warmup: options.warmup,
                    measured: options.rounds,
                    first: 0,
                };
                (first_pair, schedule, Added::Layouts { layouts })
            }
            NextLook::Rounds(rounds) => {
                // The layouts have run before: no warm-up, and round numbers
                // go on from where they stopped.
                let schedule = RoundSchedule {
                    warmup: 0,
                    measured: rounds,
                    first: rounds_so_far,
                };
                rounds_so_far += rounds;
                (0, schedule, Added::Rounds { rounds })
            }
            NextLook::Stop => break,
        };

        // Run it: a rounds look runs only the builds it needs (the baseline
        // and every build with a comparison still undecided).
        let needed = match added {
            Added::Rounds { .. } => builds_undecided(options, report),
            Added::Layouts { .. } => vec![true; options.builds.len()],
        };
        let pairs: Vec<&(usize, u64, Prepared)> = all_pairs[first_pair..]
            .iter()
            .filter(|(b, _, _)| needed.get(*b).copied().unwrap_or(true))
            .collect();
        let run_started = Instant::now();
        let budget = options
            .max_time
            .map(|limit| limit.saturating_sub(Duration::from_secs_f64(report.timing.run_s)));
        let outcome = run_rounds(
            executor,
            &mut rng,
            &pairs,
            schedule,
            budget,
            (&mut report.runs, &mut report.load.samples),
            &mut metric_names,
            on_progress,
        );
        executor.set_deadline(None);
        report.timing.run_s += run_started.elapsed().as_secs_f64();
        report.status = outcome.status;
        if let Some(rounds_done) = outcome.rounds_done {
            report.notes.push(Note::MaxTimeInBatch {
                max_time_s,
                rounds_done,
                rounds: schedule.measured,
                layouts: pairs.len() / needed.iter().filter(|n| **n).count().max(1),
            });
        }

        // Look.
        let comparisons = comparisons(metric_names.len(), options.builds.len());
        let share = match &options.planned {
            Some(planned) => planned.alpha_share,
            None => look_share(look + 1, looks),
        };
        let alpha = options.alpha * share;
        report.settings.confidence = 1.0 - alpha / comparisons as f64;
        report.matrix = super::analysis::analyze_at(
            options,
            &metric_names,
            &report.used_seeds,
            &report.runs,
            alpha,
        );
        let undecided = report
            .matrix
            .iter()
            .filter_map(|row| row.comparison.as_ref())
            .filter(|c| c.verdict == Verdict::Unknown)
            .count();
        report.looks.push(Look {
            layouts: report.used_seeds.len(),
            confidence: report.settings.confidence,
            undecided,
            added,
        });
        if report.status.state != State::Finished || undecided == 0 {
            break;
        }
        if options
            .max_time
            .is_some_and(|limit| report.timing.run_s >= limit.as_secs_f64())
            && look + 1 < looks
        {
            report.status = Status::new(State::BudgetExhausted, None);
            report.notes.push(Note::MaxTimeBetweenLooks {
                max_time_s,
                layouts: report.used_seeds.len(),
                undecided,
            });
            break;
        }
    }
    Ok(())
}

/// Which builds a rounds look runs: the baseline, and each build with a
/// comparison still UNKNOWN (a decided build's cells keep their runs).
fn builds_undecided(options: &LayoutOptions, report: &LayoutReport) -> Vec<bool> {
    let mut needed: Vec<bool> = (0..options.builds.len()).map(|b| b == 0).collect();
    for row in &report.matrix {
        let undecided = row
            .comparison
            .as_ref()
            .is_some_and(|c| c.verdict == Verdict::Unknown);
        if let Some(b) = options.builds.iter().position(|s| s.name == row.build) {
            needed[b] |= undecided;
        }
    }
    needed
}

/// metrics get that far), as notes.
fn zero_values(runs: &[LayoutRun]) -> Vec<Note> {
    let mut counts: Vec<(String, usize, usize)> = Vec::new();
    for value in runs
        .iter()
        .filter(|r| !r.record.warmup)
        .flat_map(|r| &r.record.values)
    {
        let i = match counts.iter().position(|(m, _, _)| *m == value.name) {
            Some(i) => i,
            None => {
                counts.push((value.name.clone(), 0, 0));
                counts.len() - 1
            }
        };
        counts[i].1 += usize::from(value.value <= 0.0);
        counts[i].2 += 1;
    }
    counts
        .into_iter()
        .filter(|(_, zeros, _)| *zeros > 0)
        .map(|(metric, runs, of)| Note::ZeroValues { metric, runs, of })
        .collect()
}

/// The note on `--higher-is-better` for the matrix's metrics, if any.
pub fn unapplied(options: &LayoutOptions, matrix: &[super::MatrixRow]) -> Option<Note> {
    let mut metrics: Vec<(String, Unit)> = Vec::new();
    for row in matrix {
        if !metrics.iter().any(|(m, _)| *m == row.metric) {
            metrics.push((row.metric.clone(), row.unit));
        }
    }
    crate::compare::Unapplied::of(&options.higher_is_better, &metrics).map(Note::Unapplied)
}

mod budget;
mod fresh;
#[cfg(test)]
mod loop_tests;
mod rounds;
