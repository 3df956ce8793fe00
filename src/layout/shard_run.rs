//! Running a plan (docs/scale-out.md): one shard on the machine it lands on
//! (`layout --plan P --shard K/N`), which writes its [`ShardResult`] whatever
//! happens, or the plan's whole first wave in one process (`layout --plan
//! P`), the reference a merge of the shards is held against. Both run the
//! plan's own variants through `experiment::run`, every build of a variant
//! interleaved on this machine.

use super::shard::{results_dir, Machine, Plan, ShardResult, ShardStatus, SHARD_SCHEMA};
use super::{experiment, LayoutReport, Planned, Progress, State};
use crate::run::environment;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where and how a plan runs on this machine.
#[derive(Debug, Clone)]
pub struct RunPlace {
    /// The build cache (`--build-cache`): builds go to
    /// `ROOT/.ghostbench/work/…` and identical inputs are reused.
    pub work_root: PathBuf,
    /// Parallel builds.
    pub jobs: usize,
    pub pin: Option<usize>,
    pub rebuild: bool,
    pub command_line: Vec<String>,
}

/// The options of `plan`'s variants of `seeds`, run here.
fn planned_options(
    plan: &Plan,
    place: &RunPlace,
    seeds: &[u64],
    shard: bool,
    alpha_share: f64,
) -> Result<super::LayoutOptions> {
    let mut options = plan.options(&place.work_root)?;
    let variants = plan.variants_of(seeds);
    options.layouts = variants.len();
    options.max_layouts = None;
    options.jobs = place.jobs;
    options.pin = place.pin;
    options.rebuild = place.rebuild;
    options.command_line = place.command_line.clone();
    options.planned = Some(Planned {
        variants,
        shard,
        alpha_share,
    });
    Ok(options)
}

/// The share of α the look after wave `wave` spends: what `--layouts auto`
/// spends at that look (1 for a fixed count).
pub fn wave_alpha_share(plan: &Plan, wave: usize) -> f64 {
    experiment::look_share(wave, plan.waves.len().max(1))
}

/// Run the plan's first wave in one process: `layout --plan P`.
pub fn run_first_wave(
    plan: &Plan,
    place: &RunPlace,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<LayoutReport> {
    let seeds: Vec<u64> = (0..plan.layouts as u64).collect();
    let options = planned_options(plan, place, &seeds, false, wave_alpha_share(plan, 1))?;
    experiment::run(&options, on_progress)
}

/// Run shard `k` of `plan` (read from `plan_path`) and write its result to
/// `DIR/results/shard-K.json`, marked failed with its cause when a build or
/// run failed, Ctrl-C stopped it, or it could not start. Returns the result,
/// its path, and the shard's layout report when it got that far. `document`
/// turns the report into its `--json` document (a renderer, so the caller's).
pub fn run_shard(
    plan: &Plan,
    plan_path: &Path,
    k: usize,
    place: &RunPlace,
    document: &dyn Fn(&LayoutReport) -> Result<serde_json::Value>,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<(ShardResult, PathBuf, Option<LayoutReport>)> {
    let started = Instant::now();
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let seeds = plan.seeds(k).unwrap_or_default();
    let wave = plan.wave_of(k).unwrap_or(0);
    let outcome = planned_options(plan, place, &seeds, true, wave_alpha_share(plan, wave))
        .and_then(|options| experiment::run(&options, on_progress));
    let (status, cause, machine, report_doc, report) = match outcome {
        Ok(report) => {
            let (status, cause) = match report.status.state {
                State::Finished => (ShardStatus::Ok, None),
                State::Interrupted => (ShardStatus::Failed, Some("interrupted".to_string())),
                state => (
                    ShardStatus::Failed,
                    Some(
                        report
                            .status
                            .message
                            .clone()
                            .unwrap_or_else(|| format!("{state:?}")),
                    ),
                ),
            };
            let doc = document(&report)?;
            (
                status,
                cause,
                Machine::of(&report.environment),
                doc,
                Some(report),
            )
        }
        Err(error) => (
            ShardStatus::Failed,
            Some(format!("{error:#}").replace('\n', " ")),
            Machine::of(&environment::capture(
                env!("CARGO_PKG_VERSION"),
                &place.command_line,
            )),
            serde_json::Value::Null,
            None,
        ),
    };
    let result = ShardResult {
        schema: SHARD_SCHEMA.into(),
        schema_version: crate::doc::Schema::Shard.version(),
        plan_hash: plan.hash.clone(),
        shard: k,
        shards: plan.shards,
        wave,
        seeds,
        status,
        cause,
        machine,
        started_unix,
        elapsed_s: started.elapsed().as_secs_f64(),
        report: report_doc,
    };
    let path = result.write(&results_dir(plan_path))?;
    Ok((result, path, report))
}
