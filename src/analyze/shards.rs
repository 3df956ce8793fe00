//! `analyze DIR/results/`: the merge of a plan's shard results
//! (docs/scale-out.md).
//!
//! The unit of replication is (machine, variant): every shard ran all builds
//! of its variants interleaved on one machine, so each per-variant log ratio
//! log(m[B][i]/m[A][i]) is within one machine and that machine's own speed
//! cancels in it; the machine is a block factor. Each variant belongs to
//! exactly one shard (duplicates are resolved first), so the overall estimate
//! is `layout`'s own analysis across the merged variants (the mean over
//! layouts, Student's t, Bonferroni), at the α share of the last wave merged.
//! With two or more CPU models it adds per-model estimates (the same mean and
//! t per model, same confidence) and the interaction test of
//! `stats::interaction` on means (Welch); when per-model verdicts
//! point opposite ways the verdict is UNKNOWN with `DependsOnMachine`, never
//! a pooled SAME. Missing, failed, duplicate, foreign and unreadable results
//! are named (facts in the `shards` section); the analysis needs at least
//! `MIN_VARIANTS` variants per build, else it refuses with [`TooFewVariants`].

use super::layouts::{layout_from_runs, metric_names};
use super::{AnalyzeOptions, Analyzed};
use crate::doc::{Imported, IntervalKind, Schema, Source};
use crate::layout::shard::{
    shard_file_name, Merged, MergedShard, ModelComparison, ModelEstimate, NextWave, Plan,
    ShardProblem, ShardResult, ShardStatus, PLAN_FILE,
};
use crate::layout::shard_run::wave_alpha_share;
use crate::layout::{self, LayoutRun, MachineEffect, Undecided, MIN_VARIANTS};
use crate::run::environment::Environment;
use crate::run::Status;
use crate::stats::hierarchical::trimmed_t;
use crate::stats::interaction::equal_means;
use crate::stats::verdict::{decide, Verdict};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// The merge refused: fewer than `MIN_VARIANTS` variants remain (exit
/// code `INCOMPLETE`). One line: how many remain, and which shards are
/// missing or failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TooFewVariants(pub String);

/// A usable shard: its result, file and parsed runs.
struct Usable {
    result: ShardResult,
    runs: Vec<LayoutRun>,
    seeds: Vec<u64>,
    environment: Option<Environment>,
}

/// Whether `problem` is an unreadable `shard-K.json`.
fn unreadable_file_of(problem: &ShardProblem, k: usize) -> bool {
    matches!(problem, ShardProblem::Unreadable { file, .. }
        if Path::new(file).file_name() == Some(std::ffi::OsStr::new(&shard_file_name(k))))
}

/// Whether `path` is a directory of shard results (`analyze DIR/results/`).
pub fn is_results_dir(path: &Path) -> bool {
    path.is_dir()
}

/// Merge the shard results in `dir` against the plan in `dir/../plan.json`.
pub fn merge(dir: &Path, options: &AnalyzeOptions) -> Result<Analyzed<LayoutReport>> {
    let plan_path = dir
        .canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .parent()
        .map(|p| p.join(PLAN_FILE))
        .with_context(|| format!("{}: no parent directory holding {PLAN_FILE}", dir.display()))?;
    let plan = Plan::read(&plan_path)?;
    let mut problems = Vec::new();
    // Every result claiming shard K, with its file.
    let mut claims: BTreeMap<usize, Vec<(String, ShardResult)>> = BTreeMap::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("shard-") && n.ends_with(".json") && !n.starts_with('.')
            })
        })
        .collect();
    entries.sort();
    for path in entries {
        let file = path.display().to_string();
        let result = match ShardResult::read(&path) {
            Ok(r) => r,
            Err(e) => {
                let error = format!("{e:#}").replace(&format!("{file}: "), "");
                problems.push(ShardProblem::Unreadable { file, error });
                continue;
            }
        };
        if result.plan_hash != plan.hash {
            problems.push(ShardProblem::Foreign {
                file,
                why: format!(
                    "plan hash {} is not this plan's {}",
                    short(&result.plan_hash),
                    short(&plan.hash)
                ),
            });
            continue;
        }
        if plan.seeds(result.shard).as_deref() != Some(result.seeds.as_slice()) {
            problems.push(ShardProblem::Foreign {
                file,
                why: format!(
                    "shard {} with seeds {:?} is not a shard of this plan",
                    result.shard, result.seeds
                ),
            });
            continue;
        }
        claims.entry(result.shard).or_default().push((file, result));
    }
    // One result per shard: the latest started; the others named.
    let mut chosen: Vec<(String, ShardResult)> = Vec::new();
    for (shard, mut list) in claims {
        list.sort_by(|a, b| a.1.started_unix.total_cmp(&b.1.started_unix));
        let (used_file, used) = list.pop().expect("non-empty claim list");
        for (ignored, _) in list {
            problems.push(ShardProblem::Duplicate {
                shard,
                ignored,
                used: used_file.clone(),
            });
        }
        chosen.push((used_file, used));
    }
    // Missing shards of the waves that have any result.
    let waves_present: Vec<usize> = {
        let mut w: Vec<usize> = chosen.iter().map(|(_, r)| r.wave).collect();
        w.sort_unstable();
        w.dedup();
        w
    };
    for wave in plan
        .waves
        .iter()
        .filter(|w| waves_present.contains(&w.wave))
    {
        // A shard whose file is there but unreadable (truncated, corrupt)
        // is named as such above, not called missing.
        let missing: Vec<usize> = (wave.shards[0]..=wave.shards[1])
            .filter(|k| !chosen.iter().any(|(_, r)| r.shard == *k))
            .filter(|k| !problems.iter().any(|p| unreadable_file_of(p, *k)))
            .collect();
        if !missing.is_empty() {
            problems.push(ShardProblem::Missing {
                wave: wave.wave,
                shards: missing,
            });
        }
    }
    let mut shards = Vec::new();
    let mut usable: Vec<Usable> = Vec::new();
    for (file, result) in chosen {
        let parsed = if result.status == ShardStatus::Ok {
            parse_report(&result).map_err(|e| format!("{e:#}"))
        } else {
            Err(result.cause.clone().unwrap_or_else(|| "failed".into()))
        };
        match parsed {
            Ok((runs, seeds, environment)) => {
                shards.push(merged_shard(&file, &result, true));
                usable.push(Usable {
                    result,
                    runs,
                    seeds,
                    environment,
                });
            }
            Err(cause) => {
                shards.push(merged_shard(&file, &result, false));
                problems.push(ShardProblem::Failed {
                    shard: result.shard,
                    host: result.machine.host.clone(),
                    cause,
                });
            }
        }
    }
    let mut seeds: Vec<u64> = usable.iter().flat_map(|u| u.seeds.clone()).collect();
    seeds.sort_unstable();
    seeds.dedup();
    if seeds.len() < MIN_VARIANTS {
        let why: Vec<String> = problems
            .iter()
            .filter_map(|p| match p {
                ShardProblem::Missing { shards, .. } => Some(format!("missing shards {shards:?}")),
                ShardProblem::Failed { shard, .. } => Some(format!("shard {shard} failed")),
                ShardProblem::Unreadable { file, error } => {
                    Some(format!("{file} unreadable: {error}"))
                }
                _ => None,
            })
            .collect();
        return Err(TooFewVariants(format!(
            "{}: only {} variant{} per build remain{}, the analysis needs at least {MIN_VARIANTS}{}",
            dir.display(),
            seeds.len(),
            if seeds.len() == 1 { "" } else { "s" },
            if seeds.len() == 1 { "s" } else { "" },
            if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join(", "))
            }
        ))
        .into());
    }
    if seeds[0] != 0 {
        problems.push(ShardProblem::NoDefaultLayout {
            first_seed: seeds[0],
        });
    }
    let wave = usable.iter().map(|u| u.result.wave).max().unwrap_or(1);
    let runs: Vec<LayoutRun> = usable.iter().flat_map(|u| u.runs.clone()).collect();
    let names = metric_names(runs.iter().map(|r| &r.record));
    let mut layout_options = plan.options(Path::new("."))?;
    if let Some(m) = options.margin {
        layout_options.margin = m;
    }
    if let Some(a) = options.alpha {
        layout_options.alpha = a;
    }
    if let Some(e) = options.estimator {
        layout_options.estimator = e;
    }
    layout_options.higher_is_better = layout_options
        .higher_is_better
        .or(&options.higher_is_better);
    layout_options.layouts = seeds.len();
    layout_options.command_line = options.command_line.clone();
    let share = wave_alpha_share(&plan, wave);
    let look_alpha = layout_options.alpha * share;
    let environment = usable
        .iter()
        .find_map(|u| u.environment.clone())
        .unwrap_or_else(|| super::rows::unknown_environment(&options.command_line));
    let imported = Imported {
        files: vec![dir.display().to_string()],
        format: Source::Ghost(Schema::Shard),
        interval: IntervalKind::Fixed,
        interleaved: Some(true),
        layouts: None,
        stored: None,
    };
    let mut analyzed = layout_from_runs(
        &layout_options,
        &names,
        seeds.clone(),
        runs,
        look_alpha,
        environment,
        Status::new(layout::State::Imported, None),
        Vec::new(),
        imported,
    );
    // Per CPU model.
    let model_of: BTreeMap<u64, String> = usable
        .iter()
        .flat_map(|u| {
            let model = u
                .result
                .machine
                .cpu_model
                .clone()
                .unwrap_or_else(|| "unknown CPU".into());
            u.seeds.iter().map(move |&s| (s, model.clone()))
        })
        .collect();
    let confidence = analyzed.report.settings.confidence;
    let models = per_model(&mut analyzed.report, &model_of, confidence, &layout_options);
    let undecided = analyzed
        .report
        .matrix
        .iter()
        .filter_map(|r| r.comparison.as_ref())
        .filter(|c| c.verdict == Verdict::Unknown)
        .count();
    if let Some(last) = analyzed.report.looks.last_mut() {
        last.undecided = undecided;
    }
    let next_wave = (plan.max_layouts.is_some() && undecided > 0)
        .then(|| plan.waves.iter().find(|w| w.wave == wave + 1))
        .flatten()
        .map(|w| NextWave {
            wave: w.wave,
            shards: w.shards,
            undecided,
        });
    analyzed.report.settings.max_layouts = plan.max_layouts;
    analyzed.report.variants = plan.variants_of(&seeds);
    analyzed.report.shards = Some(Merged {
        plan: plan_path.display().to_string(),
        plan_hash: plan.hash.clone(),
        wave,
        shards,
        problems,
        models,
        next_wave,
    });
    Ok(analyzed)
}

use crate::layout::LayoutReport;

fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}

fn merged_shard(file: &str, result: &ShardResult, used: bool) -> MergedShard {
    MergedShard {
        shard: result.shard,
        file: file.to_string(),
        machine: result.machine.clone(),
        status: result.status,
        used,
        variants: result.seeds.clone(),
    }
}

/// What the merge reads of a shard's layout report, through its type: a
/// moved key is an error naming the field.
#[derive(serde::Deserialize)]
struct ShardReport {
    runs: Vec<LayoutRun>,
    used_seeds: Vec<u64>,
    #[serde(default)]
    environment: Option<Environment>,
}

/// The runs, the seeds that built for every build, and the environment of a
/// shard's layout report.
fn parse_report(result: &ShardResult) -> Result<(Vec<LayoutRun>, Vec<u64>, Option<Environment>)> {
    let ShardReport {
        runs,
        used_seeds: seeds,
        environment,
    } = <ShardReport as serde::Deserialize>::deserialize(&result.report).context("its report")?;
    if seeds != result.seeds {
        anyhow::bail!(
            "variants {:?} of {:?} built for every build",
            seeds,
            result.seeds
        );
    }
    Ok((runs, seeds, environment))
}

/// Per-model estimates and the interaction test of every comparison, when
/// two or more CPU models took part; a comparison whose models point
/// opposite ways becomes UNKNOWN with `DependsOnMachine`.
fn per_model(
    report: &mut LayoutReport,
    model_of: &BTreeMap<u64, String>,
    confidence: f64,
    options: &layout::LayoutOptions,
) -> Vec<ModelComparison> {
    let mut names: Vec<&String> = model_of.values().collect();
    names.sort();
    names.dedup();
    if names.len() < 2 {
        return Vec::new();
    }
    let names: Vec<String> = names.into_iter().cloned().collect();
    let baselines: BTreeMap<String, Vec<(u64, f64)>> = report
        .matrix
        .iter()
        .filter(|r| r.comparison.is_none())
        .map(|r| {
            (
                r.metric.clone(),
                r.variants.iter().map(|v| (v.seed, v.estimate)).collect(),
            )
        })
        .collect();
    let mut out = Vec::new();
    for row in report.matrix.iter_mut() {
        let Some(comparison) = row.comparison.as_mut() else {
            continue;
        };
        let Some(base) = baselines.get(&row.metric) else {
            continue;
        };
        let groups: Vec<Vec<f64>> = names
            .iter()
            .map(|model| {
                row.variants
                    .iter()
                    .filter(|v| model_of.get(&v.seed) == Some(model))
                    .filter_map(|v| {
                        let a = base.iter().find(|(s, _)| *s == v.seed)?.1;
                        let ratio = v.estimate / a;
                        (ratio.is_finite() && ratio > 0.0).then(|| ratio.ln())
                    })
                    .collect()
            })
            .collect();
        let models: Vec<ModelEstimate> = names
            .iter()
            .zip(&groups)
            .map(|(model, d)| {
                // The mean over this model's layouts, Student's t: the
                // overall estimate's own rule (nothing trimmed).
                let t = trimmed_t(d, 0.0, confidence);
                let (estimate, low, high) = t.map_or((f64::NAN, f64::NAN, f64::NAN), |t| {
                    (t.trimmed_mean.exp(), t.low.exp(), t.high.exp())
                });
                ModelEstimate {
                    cpu_model: model.clone(),
                    variants: d.len(),
                    estimate,
                    low,
                    high,
                    verdict: decide(low, high, options.margin, row.direction.higher_is_better()),
                }
            })
            .collect();
        let interaction = equal_means(&groups);
        let flagged = interaction.is_some_and(|i| i.p_value < 1.0 - confidence);
        let opposite = models.iter().any(|m| m.verdict == Verdict::Faster)
            && models.iter().any(|m| m.verdict == Verdict::Slower);
        if opposite {
            comparison.verdict = Verdict::Unknown;
            comparison.artifact_share = None;
            comparison.undecided = Some(Undecided::DependsOnMachine {
                models: models
                    .iter()
                    .map(|m| MachineEffect {
                        cpu_model: m.cpu_model.clone(),
                        estimate: m.estimate,
                        verdict: m.verdict,
                    })
                    .collect(),
            });
        }
        out.push(ModelComparison {
            build: row.build.clone(),
            metric: row.metric.clone(),
            models,
            interaction,
            flagged,
        });
    }
    out
}
