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
    BuildSpec, Comparison, LayoutOptions, LayoutReport, LayoutRun, MatrixRow, RatioInterval,
    Settings, State, Status, Timing, VariantValue, SCHEMA_VERSION,
};
use crate::run::command::CommandSpec;
use crate::run::metric::Unit;
use crate::run::{environment, spawn, Prepared, RunFailure, Runner, RunnerOptions};
use crate::stats::hierarchical::{layout_ratio, smallest_trustworthy_effect, spread_cv};
use crate::stats::verdict::{decide, Verdict};
use crate::stats::{ratio_of_medians, BootstrapMethod};
use anyhow::{bail, Context, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The least number of matched variants (the default layout included) to analyse.
pub const MIN_VARIANTS: usize = 3;
const RESAMPLES: usize = 4000;

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
    report.matrix = analyse(options, &metric_names, &used_seeds, &runs);
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

/// The per-metric matrix: one row per build.
fn analyse(
    options: &LayoutOptions,
    metric_names: &[(String, Unit)],
    seeds: &[u64],
    runs: &[LayoutRun],
) -> Vec<MatrixRow> {
    let comparisons = (metric_names.len() * (options.builds.len() - 1)).max(1);
    let confidence = 1.0 - options.alpha / comparisons as f64;
    let mut rows = Vec::new();
    for (m, (metric, unit)) in metric_names.iter().enumerate() {
        // values[build][variant] = runs
        let values: Vec<Vec<Vec<f64>>> = (0..options.builds.len())
            .map(|b| {
                seeds
                    .iter()
                    .map(|&seed| {
                        runs.iter()
                            .filter(|r| r.build == b && r.seed == seed && !r.record.warmup)
                            .filter_map(|r| r.record.values.iter().find(|v| &v.name == metric))
                            .map(|v| v.value)
                            .collect()
                    })
                    .collect()
            })
            .collect();
        for (b, build) in options.builds.iter().enumerate() {
            let estimates: Vec<VariantValue> = seeds
                .iter()
                .zip(&values[b])
                .map(|(&seed, v)| VariantValue {
                    seed,
                    runs: v.len(),
                    estimate: options.estimator.of(v),
                })
                .collect();
            let spread = spread_cv(&estimates.iter().map(|e| e.estimate).collect::<Vec<_>>());
            let comparison = (b > 0).then(|| {
                compare(
                    options,
                    &values[0],
                    &values[b],
                    confidence,
                    options.seed ^ (m as u64 * 131 + b as u64),
                    (&options.builds[0], build),
                )
            });
            rows.push(MatrixRow {
                build: build.name.clone(),
                metric: metric.clone(),
                unit: *unit,
                default_value: estimates.first().map_or(f64::NAN, |e| e.estimate),
                spread_cv: spread,
                variants: estimates,
                comparison,
            });
        }
    }
    rows
}

/// One build against the baseline: default layout, controlled, verdict.
fn compare(
    options: &LayoutOptions,
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    confidence: f64,
    seed: u64,
    names: (&BuildSpec, &BuildSpec),
) -> Comparison {
    let hib = options.higher_is_better;
    let margin = options.margin;
    let default_ratio = ratio_of_medians(
        &a[0],
        &b[0],
        confidence,
        RESAMPLES,
        seed,
        BootstrapMethod::Percentile,
    )
    .map(|r| RatioInterval {
        estimate: r.estimate,
        low: r.low,
        high: r.high,
    });
    let default_verdict =
        default_ratio.map_or(Verdict::Unknown, |r| decide(r.low, r.high, margin, hib));
    let controlled = layout_ratio(a, b, options.estimator, confidence, RESAMPLES, seed ^ 0x1a7);
    let controlled_verdict =
        controlled.map_or(Verdict::Unknown, |r| decide(r.low, r.high, margin, hib));
    let trust = controlled.map_or(f64::NAN, |c| smallest_trustworthy_effect(c.log_ratio_sd));
    let artifact_share = artifact(
        default_ratio.map(|d| d.estimate),
        default_verdict,
        controlled.map(|c| c.estimate),
        controlled_verdict,
    );
    let verdict = if artifact_share.is_some() {
        Verdict::Artifact
    } else {
        controlled_verdict
    };
    // Say "reverses" only when the opposite direction is itself significant.
    let reversed = matches!(controlled_verdict, Verdict::Faster | Verdict::Slower)
        && matches!((default_ratio, controlled), (Some(d), Some(c)) if (d.estimate - 1.0) * (c.estimate - 1.0) < 0.0);
    let (base, cand) = (&names.0.name, &names.1.name);
    let layouts = controlled.map_or(0, |c| c.variants);
    let pct = |r: f64| format!("{:.1}%", (r - 1.0).abs() * 100.0);
    let direction = |r: f64| {
        let smaller = r < 1.0;
        match (smaller, hib) {
            (true, false) | (false, true) => "faster",
            _ => "slower",
        }
    };
    let sentence = match (verdict, controlled, default_ratio) {
        (Verdict::Artifact, Some(c), Some(d)) => format!(
            "{:.0}% of the {} {} at the default layout disappears across {layouts} layouts{} (controlled {} {} [{}, {}])",
            artifact_share.unwrap_or(0.0) * 100.0,
            pct(d.estimate),
            if direction(d.estimate) == "faster" { "speedup" } else { "slowdown" },
            if reversed { " and reverses" } else { "" },
            cand,
            fmt_ratio(c.estimate),
            fmt_ratio(c.low),
            fmt_ratio(c.high),
        ),
        (Verdict::Faster | Verdict::Slower, Some(c), _) => format!(
            "{cand} is {} {} than {base} across {layouts} layouts: ratio {} [{}, {}]",
            pct(c.estimate),
            direction(c.estimate),
            fmt_ratio(c.estimate),
            fmt_ratio(c.low),
            fmt_ratio(c.high),
        ),
        (Verdict::Same, Some(c), _) => format!(
            "{cand} and {base} are within ±{}% across {layouts} layouts: ratio {} [{}, {}]",
            crate::report::format::trimmed(margin * 100.0),
            fmt_ratio(c.estimate),
            fmt_ratio(c.low),
            fmt_ratio(c.high),
        ),
        (_, Some(c), _) => format!(
            "not decided across {layouts} layouts: ratio {} [{}, {}]",
            fmt_ratio(c.estimate),
            fmt_ratio(c.low),
            fmt_ratio(c.high),
        ),
        _ => "too few runs to compare".to_string(),
    };
    let hint = (verdict == Verdict::Unknown).then(|| match controlled {
        Some(c) => format!(
            "more layouts (--layouts {}): layout moves a single-layout ratio by up to ±{:.1}%",
            (c.variants * 2).max(8),
            trust * 100.0
        ),
        None => "more rounds (--rounds) and layouts (--layouts)".into(),
    });
    Comparison {
        default_ratio,
        default_verdict,
        controlled,
        controlled_verdict,
        smallest_trustworthy_effect: trust,
        verdict,
        artifact_share,
        sentence,
        hint,
    }
}

/// The ARTIFACT rule of DESIGN.md §2, on the default-layout ratio and the
/// layout-controlled ratio (both B/A) and their verdicts. Returns the share of
/// the default-layout difference that disappears under layout control (on the
/// log scale, clamped to [0, 1]) when the verdict is ARTIFACT, else `None`.
///
/// ARTIFACT needs a significant default-layout difference (FASTER or SLOWER)
/// whose layout-controlled estimate (a) is SAME, (b) has the opposite sign, or
/// (c) is less than half its size on the log scale. (b) and (c) hold whether
/// or not the controlled estimate is itself significant: a 25% default-layout
/// speedup that is a significant 8% slowdown across layouts, or a significant
/// 10% speedup, is still mostly layout, and the sentence says how much.
pub fn artifact(
    default_ratio: Option<f64>,
    default_verdict: Verdict,
    controlled_ratio: Option<f64>,
    controlled_verdict: Verdict,
) -> Option<f64> {
    let (d, c) = (default_ratio?, controlled_ratio?);
    if !matches!(default_verdict, Verdict::Faster | Verdict::Slower) {
        return None;
    }
    if !(d > 0.0 && c > 0.0 && d.is_finite() && c.is_finite()) {
        return None;
    }
    let (ld, lc) = (d.ln(), c.ln());
    if ld == 0.0 {
        return None;
    }
    let same = controlled_verdict == Verdict::Same;
    let opposite = ld * lc <= 0.0;
    let less_than_half = lc.abs() < 0.5 * ld.abs();
    (same || opposite || less_than_half).then(|| (1.0 - lc / ld).clamp(0.0, 1.0))
}

pub fn fmt_ratio(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.3}")
    } else {
        "n/a".into()
    }
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

#[cfg(test)]
mod tests {
    //! The verdict rule on hand-made per-variant data. Every variant has three
    //! runs `[v·0.999, v, v·1.001]`, so its median is exactly v and run noise
    //! is a rounding error; the layout noise is what the data put between
    //! variants. Builds: A is the baseline, B the candidate; time, lower is better.
    use super::*;
    use crate::layout::variants::Source;

    fn options(margin: f64) -> LayoutOptions {
        LayoutOptions {
            builds: vec![],
            run_template: "{out}".into(),
            metrics: vec![],
            higher_is_better: false,
            layouts: 3,
            rounds: 3,
            warmup: 0,
            sources: vec![Source::Align],
            jobs: 1,
            estimator: crate::stats::hierarchical::Estimator::Median,
            margin,
            alpha: 0.05,
            shell: false,
            timeout: None,
            max_time: None,
            pin: None,
            rebuild: false,
            work_root: PathBuf::from("."),
            seed: 1,
            command_line: vec![],
            explain: None,
        }
    }

    fn runs(v: f64) -> Vec<f64> {
        vec![v * 0.999, v, v * 1.001]
    }

    /// A's variant i takes 1 + 0.01·i (layout spread in the baseline too);
    /// B's variant i is A's times `ratios[i]`.
    fn compare_ratios(ratios: &[f64], margin: f64) -> Comparison {
        let a: Vec<Vec<f64>> = (0..ratios.len())
            .map(|i| runs(1.0 + 0.01 * i as f64))
            .collect();
        let b: Vec<Vec<f64>> = ratios
            .iter()
            .enumerate()
            .map(|(i, r)| runs((1.0 + 0.01 * i as f64) * r))
            .collect();
        let spec = |name: &str| BuildSpec {
            name: name.into(),
            template: String::new(),
        };
        compare(&options(margin), &a, &b, 0.95, 7, (&spec("A"), &spec("B")))
    }

    fn close(x: f64, y: f64, tol: f64) -> bool {
        (x - y).abs() <= tol
    }

    #[test]
    fn a_default_layout_ghost_that_is_same_across_layouts_is_an_artifact() {
        // 64 layouts, margin 3%. The default layout has B/A = 0.75: a 25%
        // speedup, FASTER (its run-level interval is about [0.7485, 0.7515]).
        // The other 63 have B/A = exp(x) with x chosen so that the mean log
        // ratio is 3% of ld = ln 0.75 = -0.287682:
        //   (ld + 63x)/64 = 0.03·ld  →  x = 0.92·ld/63 = -0.0042012
        // (B/A = 0.99581). Controlled estimate exp(0.03·ld) = 0.99141.
        // Interval: a replicate that draws the default layout k times of 64 has
        // mean log (k·ld + (64-k)·x)/64; k ~ Poisson(1), and k = 4 (tail ~1.9%)
        // gives -0.0219 → 0.978, k = 0 gives 0.9958: inside [0.97, 1.03], SAME.
        // Share that disappears: 1 - lc/ld = 1 - 0.03 = 97%.
        let ld = 0.75f64.ln();
        let x = 0.92 * ld / 63.0;
        let mut ratios = vec![0.75];
        ratios.extend(std::iter::repeat(x.exp()).take(63));
        let c = compare_ratios(&ratios, 0.03);
        assert_eq!(c.default_verdict, Verdict::Faster, "{c:?}");
        assert_eq!(c.controlled_verdict, Verdict::Same, "{c:?}");
        assert_eq!(c.verdict, Verdict::Artifact, "{c:?}");
        let controlled = c.controlled.unwrap();
        assert!(close(controlled.estimate, 0.99141, 1e-5), "{controlled:?}");
        assert!(close(c.artifact_share.unwrap(), 0.97, 1e-9), "{c:?}");
        assert!(
            c.sentence
                .starts_with("97% of the 25.0% speedup at the default layout disappears across 64 layouts (controlled B 0.991 ["),
            "{}",
            c.sentence
        );
    }

    #[test]
    fn a_controlled_estimate_of_the_opposite_sign_is_an_artifact_even_when_significant() {
        // 32 layouts, margin 1%. Default layout B/A = 0.75 (FASTER); the other
        // 31 have B/A = 1.10 (ln 1.10 = 0.095310). Mean log ratio:
        //   (-0.287682 + 31·0.095310)/32 = 2.666928/32 = 0.083341 → 1.0869.
        // Lower end of the interval: k = 4 draws of the default layout gives
        // (4·-0.287682 + 28·0.095310)/32 = 0.0474 → 1.0486 > 1.01, so the
        // controlled verdict is SLOWER. The old rule (ARTIFACT only when the
        // controlled verdict is not significant) said SLOWER; DESIGN §2 says
        // ARTIFACT: the sign is opposite. Share: 1 - lc/ld = 1.29, clamped to 100%.
        let mut ratios = vec![0.75];
        ratios.extend(std::iter::repeat(1.10).take(31));
        let c = compare_ratios(&ratios, 0.01);
        assert_eq!(c.default_verdict, Verdict::Faster, "{c:?}");
        assert_eq!(c.controlled_verdict, Verdict::Slower, "{c:?}");
        assert_eq!(c.verdict, Verdict::Artifact, "{c:?}");
        assert!(
            close(c.controlled.unwrap().estimate, 1.08691, 1e-4),
            "{c:?}"
        );
        assert_eq!(c.artifact_share, Some(1.0));
        assert!(
            c.sentence.starts_with(
                "100% of the 25.0% speedup at the default layout disappears across 32 layouts and reverses (controlled B 1.087 ["
            ),
            "{}",
            c.sentence
        );
    }

    #[test]
    fn a_significant_controlled_estimate_under_half_the_default_one_is_an_artifact() {
        // 16 layouts, margin 1%. Default layout B/A = 0.75; the other 15 have
        // 0.90 (ln 0.90 = -0.105361). Mean log ratio:
        //   (-0.287682 + 15·-0.105361)/16 = -1.868092/16 = -0.116756 → 0.88981.
        // Every replicate lies between k = 0 (0.900) and k = 4
        // (4·-0.287682 + 12·-0.105361)/16 = -0.1510 → 0.860: FASTER, significant.
        // But lc/ld = 0.116756/0.287682 = 0.4059 < 1/2: ARTIFACT (DESIGN §2),
        // with 1 - 0.4059 = 59% of the 25% speedup being layout.
        let mut ratios = vec![0.75];
        ratios.extend(std::iter::repeat(0.90).take(15));
        let c = compare_ratios(&ratios, 0.01);
        assert_eq!(c.default_verdict, Verdict::Faster, "{c:?}");
        assert_eq!(c.controlled_verdict, Verdict::Faster, "{c:?}");
        assert_eq!(c.verdict, Verdict::Artifact, "{c:?}");
        assert!(
            close(c.controlled.unwrap().estimate, 0.88981, 1e-4),
            "{c:?}"
        );
        assert!(close(c.artifact_share.unwrap(), 0.5941, 1e-3), "{c:?}");
        assert!(
            c.sentence.starts_with(
                "59% of the 25.0% speedup at the default layout disappears across 16 layouts (controlled B 0.890 ["
            ),
            "{}",
            c.sentence
        );
    }

    #[test]
    fn a_real_effect_that_survives_every_layout_is_faster_or_slower() {
        // 16 layouts, margin 1%. B/A = 0.75·1.01 on odd variants and 0.75/1.01
        // on even ones (the default layout is even: 0.74257, FASTER). The
        // ±ln 1.01 cancel over 8 + 8 variants: mean log = ln 0.75 → 0.75, and
        // every replicate lies within 0.75·[1/1.01, 1.01]: FASTER. lc = ld, so
        // nothing disappears: the verdict stays FASTER.
        let ratios: Vec<f64> = (0..16)
            .map(|i| if i % 2 == 1 { 0.75 * 1.01 } else { 0.75 / 1.01 })
            .collect();
        let c = compare_ratios(&ratios, 0.01);
        assert_eq!(c.verdict, Verdict::Faster, "{c:?}");
        assert_eq!(c.artifact_share, None);
        assert!(close(c.controlled.unwrap().estimate, 0.75, 1e-9), "{c:?}");
        assert!(
            c.sentence
                .starts_with("B is 25.0% faster than A across 16 layouts: ratio 0.750 ["),
            "{}",
            c.sentence
        );
        // The mirror image: B/A = 1/0.75 = 1.3333 everywhere is SLOWER, 33.3%.
        let c = compare_ratios(&[1.0 / 0.75; 16], 0.01);
        assert_eq!(c.verdict, Verdict::Slower, "{c:?}");
        assert!(
            c.sentence.starts_with("B is 33.3% slower than A"),
            "{}",
            c.sentence
        );
    }

    #[test]
    fn the_rule_alone() {
        let f = Verdict::Faster;
        // Not significant at the default layout: never ARTIFACT.
        assert_eq!(
            artifact(Some(0.75), Verdict::Unknown, Some(1.0), Verdict::Same),
            None
        );
        // Same sign, more than half the size, undecided: stays UNKNOWN (not ARTIFACT).
        // ln 0.85 / ln 0.75 = 0.565 ≥ 0.5.
        assert_eq!(artifact(Some(0.75), f, Some(0.85), Verdict::Unknown), None);
        // ln 0.88 / ln 0.75 = 0.444 < 0.5: ARTIFACT, 55.6% disappears.
        let share = artifact(Some(0.75), f, Some(0.88), Verdict::Unknown).unwrap();
        assert!(close(share, 1.0 - 0.88f64.ln() / 0.75f64.ln(), 1e-12));
        // A slowdown that is SAME across layouts: all of it disappears... up to lc.
        let share = artifact(Some(1.25), Verdict::Slower, Some(1.005), Verdict::Same).unwrap();
        assert!(close(share, 1.0 - 1.005f64.ln() / 1.25f64.ln(), 1e-12));
        // Missing estimates: no ARTIFACT.
        assert_eq!(artifact(None, f, Some(1.0), Verdict::Same), None);
        assert_eq!(artifact(Some(0.75), f, None, Verdict::Unknown), None);
    }
}
