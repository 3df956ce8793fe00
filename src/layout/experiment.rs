//! The layout experiment: variants → builds → interleaved runs → analysis.
//!
//! Every (build, variant) pair runs once per round, in a fresh random order
//! each round, after `warmup` unmeasured rounds. A failed build drops its
//! seed for every build (variants stay matched); the experiment goes on while
//! at least 3 seeds, including the default layout, remain. A failed run or
//! Ctrl-C stops the runs; whatever was measured is analysed and reported.

use super::builds::{self, BuildJob, BuildResult, Placeholders};
use super::variants::{pad_assembly, ShuffleLinker, Source, SourceStatus, Variant};
use super::{
    LayoutOptions, LayoutReport, LayoutRun, Settings, State, Status, Timing, SCHEMA_VERSION,
};
use crate::run::command::CommandSpec;
use crate::run::metric::Unit;
use crate::run::{environment, spawn, Prepared, RunFailure, Runner, RunnerOptions};
use anyhow::{bail, Context, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The least number of matched variants (the default layout included) to analyse.
pub const MIN_VARIANTS: usize = 3;

/// What the experiment tells the caller as it goes.
#[derive(Debug, Clone)]
pub struct Progress {
    pub phase: Phase,
    pub done: usize,
    pub total: usize,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Build,
    Run,
    /// `--explain`: analysing and profiling the default layouts.
    Explain,
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
    if options.layouts < MIN_VARIANTS {
        bail!("--layouts must be at least {MIN_VARIANTS}");
    }
    let mut notes = Vec::new();
    let work_dir = options
        .work_root
        .join(".ghostbench/work")
        .join(experiment_name(options));
    std::fs::create_dir_all(&work_dir)
        .with_context(|| format!("cannot create {}", work_dir.display()))?;
    let work_dir = std::fs::canonicalize(&work_dir).unwrap_or(work_dir);

    // Sources and variants.
    let (sources, linker, pads) = resolve_sources(options, &work_dir);
    let active = |s: Source| sources.iter().any(|st| st.source == s && st.active);
    let variants: Vec<Variant> = (0..options.layouts as u64)
        .map(|seed| {
            Variant::from_seed(
                seed,
                active(Source::Align),
                active(Source::Shift),
                active(Source::Shuffle),
            )
        })
        .collect();

    // Builds.
    let mut jobs = Vec::new();
    for (b, build) in options.builds.iter().enumerate() {
        for variant in &variants {
            let dir = work_dir
                .join(sanitize(&build.name))
                .join(variant.seed.to_string());
            let pad = pads
                .iter()
                .find(|(k, _)| *k == variant.shift)
                .map(|(_, p)| p.as_path());
            let values = Placeholders {
                cflags: variant.cflags(),
                ldflags: variant.ldflags(pad, linker.as_ref()),
                out: dir.join("bench"),
                dir: dir.clone(),
            };
            let argv = builds::substitute(&build.template, options.shell, &values)
                .with_context(|| format!("build {}", build.name))?;
            jobs.push(BuildJob::new(b, variant.seed, argv, &values));
        }
    }
    let total_builds = jobs.len();
    let mut done = 0;
    on_progress(&Progress {
        phase: Phase::Build,
        done,
        total: total_builds,
        message: "building".into(),
    });
    let build_results = builds::run_all(&jobs, options.jobs, options.rebuild, &mut |r| {
        done += 1;
        on_progress(&Progress {
            phase: Phase::Build,
            done,
            total: total_builds,
            message: format!(
                "{} seed {}: {}",
                options.builds[r.build].name,
                r.seed,
                if !r.ok {
                    "FAILED"
                } else if r.reused {
                    "reused"
                } else {
                    "built"
                }
            ),
        });
    });
    let build_s = started.elapsed().as_secs_f64();
    let reused = build_results.iter().filter(|r| r.reused && r.ok).count();
    if reused > 0 {
        notes.push(format!(
            "{reused} of {total_builds} builds reused from identical inputs (cache in {})",
            work_dir.display()
        ));
    }
    let used_seeds: Vec<u64> = variants
        .iter()
        .map(|v| v.seed)
        .filter(|&seed| {
            build_results
                .iter()
                .filter(|r| r.seed == seed)
                .all(|r| r.ok)
        })
        .collect();
    let first_failure = build_results.iter().find(|r| !r.ok).cloned();
    if let Some(f) = &first_failure {
        let failed_seeds = variants.len() - used_seeds.len();
        notes.push(format!(
            "{failed_seeds} of {} variants left out because a build failed; first: {} seed {}: {}",
            variants.len(),
            options.builds[f.build].name,
            f.seed,
            f.error.as_deref().unwrap_or("failed")
        ));
    }
    let mut report = LayoutReport {
        schema: "ghostbench.layout",
        schema_version: SCHEMA_VERSION,
        builds: options.builds.clone(),
        settings: settings(options, &work_dir),
        sources,
        variants: variants.clone(),
        used_seeds: used_seeds.clone(),
        build_results,
        status: Status::new(State::Finished, None),
        environment: environment::capture(env!("CARGO_PKG_VERSION"), &options.command_line),
        matrix: Vec::new(),
        notes,
        timing: Timing {
            build_s,
            run_s: 0.0,
            explain_s: 0.0,
            total_s: 0.0,
        },
        runs: Vec::new(),
        explain: None,
    };
    if used_seeds.len() < MIN_VARIANTS || used_seeds.first() != Some(&0) {
        let f = first_failure.unwrap_or_else(|| BuildResult {
            build: 0,
            seed: 0,
            ok: false,
            reused: false,
            seconds: 0.0,
            command: String::new(),
            error: Some("no variants".into()),
            output_tail: Vec::new(),
        });
        let why = if used_seeds.first() != Some(&0) {
            "the default layout (seed 0) did not build".to_string()
        } else {
            format!(
                "only {} variants built for every build, need at least {MIN_VARIANTS}",
                used_seeds.len()
            )
        };
        report.status = Status {
            state: State::BuildFailed,
            message: Some(format!(
                "{why}; build {} seed {} failed ({}): {}",
                options.builds[f.build].name,
                f.seed,
                f.error.as_deref().unwrap_or("failed"),
                f.command
            )),
            last_output: f.output_tail,
        };
        report.timing.total_s = started.elapsed().as_secs_f64();
        return Ok(report);
    }

    // Runs.
    let run_started = Instant::now();
    let mut pairs = Vec::new();
    for (b, _) in options.builds.iter().enumerate() {
        for &seed in &used_seeds {
            let dir = &jobs[b * variants.len() + seed as usize].dir;
            let values = Placeholders {
                cflags: Vec::new(),
                ldflags: Vec::new(),
                out: dir.join("bench"),
                dir: dir.clone(),
            };
            let argv = builds::substitute(&options.run_template, options.shell, &values)?;
            let spec = CommandSpec {
                name: format!("{} seed {seed}", options.builds[b].name),
                text: options.run_template.clone(),
                argv,
                shell: options.shell,
            };
            pairs.push((b, seed, Prepared::new(&spec)?));
        }
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
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let total_runs = pairs.len() * (options.rounds + options.warmup);
    let mut runs: Vec<LayoutRun> = Vec::new();
    let mut status = Status::new(State::Finished, None);
    let mut metric_names: Vec<(String, Unit)> = Vec::new();
    'rounds: for round in 0..options.rounds + options.warmup {
        let warmup = round < options.warmup;
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.shuffle(&mut rng);
        for i in order {
            let (b, seed, prepared) = &pairs[i];
            let result = runner.run(prepared, *b, round, warmup).and_then(|record| {
                check_metrics(&mut metric_names, &record, &prepared.spec.name)?;
                Ok(record)
            });
            match result {
                Ok(record) => runs.push(LayoutRun {
                    build: *b,
                    seed: *seed,
                    record,
                }),
                Err(failure) => {
                    status = failed(failure);
                    break 'rounds;
                }
            }
            on_progress(&Progress {
                phase: Phase::Run,
                done: runs.len(),
                total: total_runs,
                message: if warmup {
                    "warm-up".into()
                } else {
                    format!("round {}/{}", round - options.warmup + 1, options.rounds)
                },
            });
            if spawn::interrupted() {
                status = Status::new(State::Interrupted, Some("interrupted by Ctrl-C".into()));
                break 'rounds;
            }
        }
        if let Some(limit) = options.max_time {
            let measured_rounds = (round + 1).saturating_sub(options.warmup);
            let more = round + 1 < options.rounds + options.warmup;
            if measured_rounds > 0 && more && run_started.elapsed() >= limit {
                status = Status::new(State::BudgetExhausted, None);
                report.notes.push(format!(
                    "--max-time {} reached after {measured_rounds} of {} rounds; \
                     the analysis uses the rounds completed",
                    crate::report::format::value(limit.as_secs_f64(), Unit::Seconds),
                    options.rounds
                ));
                break 'rounds;
            }
        }
    }
    report.status = status;
    report.notes.push(format!(
        "environment jitter: {} of 0–{} bytes per run, recorded per run",
        crate::run::JITTER_VARIABLE,
        crate::run::JITTER_MAX_BYTES - 1
    ));
    report.matrix = super::analysis::analyze(options, &metric_names, &used_seeds, &runs);
    let comparisons = (metric_names.len() * (options.builds.len() - 1)).max(1);
    report.settings.confidence = 1.0 - options.alpha / comparisons as f64;
    if comparisons > 1 {
        report.notes.push(format!(
            "{comparisons} comparisons (metrics × builds): every interval is at {:.2}% (Bonferroni)",
            report.settings.confidence * 100.0
        ));
    }
    report.runs = runs;
    report.timing.run_s = run_started.elapsed().as_secs_f64();
    if let Some(top) = options.explain {
        if report.status.state == State::Interrupted {
            report
                .notes
                .push("--explain skipped: interrupted".to_string());
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

/// Every run must yield the metrics the first run yielded.
fn check_metrics(
    names: &mut Vec<(String, Unit)>,
    record: &crate::run::RunRecord,
    command: &str,
) -> Result<(), RunFailure> {
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
        return Err(RunFailure {
            command_name: command.to_string(),
            cause: format!("metric {missing:?} not found in this run's output"),
            interrupted: false,
            last_output: Vec::new(),
        });
    }
    Ok(())
}

fn failed(failure: RunFailure) -> Status {
    Status::from_failure(failure, State::Interrupted, State::RunFailed)
}

/// Which sources are active, the shuffle linker, and the padding objects.
fn resolve_sources(
    options: &LayoutOptions,
    work_dir: &Path,
) -> (
    Vec<SourceStatus>,
    Option<ShuffleLinker>,
    Vec<(u32, PathBuf)>,
) {
    let wanted = |s: Source| options.sources.contains(&s);
    let mut statuses = Vec::new();
    statuses.push(if wanted(Source::Align) {
        SourceStatus {
            source: Source::Align,
            active: true,
            detail: "-falign-functions=N -falign-loops=N, N in {default, 16, 32, 64}".into(),
        }
    } else {
        off(Source::Align, "not in --sources")
    });
    let mut pads = Vec::new();
    statuses.push(if wanted(Source::Shift) {
        match make_pads(work_dir) {
            Ok(made) => {
                pads = made;
                SourceStatus {
                    source: Source::Shift,
                    active: true,
                    detail: "padding object of 16/32/48 bytes linked first (put {ldflags} before the sources)".into(),
                }
            }
            Err(e) => off(Source::Shift, &format!("cannot assemble the padding object: {e:#}")),
        }
    } else {
        off(Source::Shift, "not in --sources")
    });
    let mut linker = None;
    statuses.push(if wanted(Source::Shuffle) {
        match ShuffleLinker::detect(std::env::var_os("PATH")) {
            Ok(found) => {
                let detail = format!(
                    "-ffunction-sections and {}'s --shuffle-sections",
                    found.name()
                );
                linker = Some(found);
                SourceStatus {
                    source: Source::Shuffle,
                    active: true,
                    detail,
                }
            }
            Err(why) => off(Source::Shuffle, &why),
        }
    } else {
        off(Source::Shuffle, "not in --sources")
    });
    statuses.push(SourceStatus {
        source: Source::Env,
        active: true,
        detail: format!(
            "{} of 0–{} bytes per run (always on)",
            crate::run::JITTER_VARIABLE,
            crate::run::JITTER_MAX_BYTES - 1
        ),
    });
    (statuses, linker, pads)
}

fn off(source: Source, why: &str) -> SourceStatus {
    SourceStatus {
        source,
        active: false,
        detail: why.to_string(),
    }
}

/// Assemble the padding objects (16, 32, 48 bytes) with `cc`.
fn make_pads(work_dir: &Path) -> Result<Vec<(u32, PathBuf)>> {
    let dir = work_dir.join("pad");
    std::fs::create_dir_all(&dir)?;
    let mut pads = Vec::new();
    for k in [16u32, 32, 48] {
        let source = dir.join(format!("pad{k}.s"));
        let object = dir.join(format!("pad{k}.o"));
        let text = pad_assembly(k);
        if object.exists() && std::fs::read_to_string(&source).is_ok_and(|s| s == text) {
            pads.push((k, object));
            continue;
        }
        std::fs::write(&source, &text)?;
        let output = std::process::Command::new("cc")
            .arg("-c")
            .arg(&source)
            .arg("-o")
            .arg(&object)
            .output()
            .context("cannot run cc")?;
        if !output.status.success() {
            bail!(
                "cc -c {} failed: {}",
                source.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        pads.push((k, object));
    }
    Ok(pads)
}

/// A stable directory name from the templates, so reruns hit the cache.
fn experiment_name(options: &LayoutOptions) -> String {
    let mut hash = builds::Fnv::default();
    for b in &options.builds {
        hash.write(b.name.as_bytes());
        hash.write(b.template.as_bytes());
    }
    hash.write(&[options.shell as u8]);
    format!("{:016x}", hash.finish())
}

pub(super) fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn settings(o: &LayoutOptions, work_dir: &Path) -> Settings {
    let comparisons = (o.metrics.len() * (o.builds.len() - 1)).max(1);
    Settings {
        run_template: o.run_template.clone(),
        metrics: o.metrics.iter().map(|m| m.label()).collect(),
        higher_is_better: o.higher_is_better,
        layouts: o.layouts,
        rounds: o.rounds,
        warmup: o.warmup,
        jobs: o.jobs,
        estimator: o.estimator,
        margin: o.margin,
        alpha: o.alpha,
        confidence: 1.0 - o.alpha / comparisons as f64,
        max_time_s: o.max_time.map(|t| t.as_secs_f64()),
        shell: o.shell,
        seed: o.seed,
        work_dir: work_dir.display().to_string(),
    }
}
