//! Scale-out plans and shard results (docs/scale-out.md, docs/json-schema.md).
//!
//! `layout --plan-only DIR` writes a [`Plan`]: every setting of the
//! experiment, the layout variants (seeds 0..max(layouts, max_layouts) and
//! their perturbations), the waves and which variants each shard owns, and
//! a SHA-256 content hash of all of it. Shard K runs its variants of every
//! build, interleaved on one machine, and writes a [`ShardResult`] to
//! `DIR/results/shard-K.json` atomically. The shard runner, the merge in
//! `analyze` and the job-file emitters read both through [`Plan::read`] and
//! [`ShardResult::read`], which refuse a plan whose hash does not match its
//! content. Running a shard is in `shard_run`.

use super::experiment::look_sizes;
pub use super::merged::{
    Machine, Merged, MergedShard, ModelComparison, ModelEstimate, NextWave, ShardProblem,
    ShardStatus,
};
use super::variants::{ShuffleLinker, Source, Variant};
use super::{BuildSpec, LayoutOptions, MIN_VARIANTS};
use crate::limits::{self, Count, Input};
use crate::report::json::write_atomically;
use crate::run::metric::{HigherIsBetter, MetricSpec};
use crate::stats::hierarchical::Estimator;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// `schema` of `plan.json`.
pub const PLAN_SCHEMA: &str = crate::doc::Schema::Plan.name();
/// `schema` of `results/shard-K.json`.
pub const SHARD_SCHEMA: &str = crate::doc::Schema::Shard.name();
/// Version of both documents.
pub const SCHEMA_VERSION: u32 = crate::doc::Schema::Plan.version();
/// The plan's file name inside the plan directory.
pub const PLAN_FILE: &str = "plan.json";
/// The shard results' directory inside the plan directory.
pub const RESULTS_DIR: &str = "results";

/// A plan file that cannot be used as it is: a changed plan (its hash does
/// not match its content), or a `--shard K/N` that does not fit it. The
/// command line maps these to the usage exit code.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{file}: the plan's hash {recorded} does not match its content ({actual}): the plan was changed after it was written; write it again with --plan-only")]
    HashMismatch {
        file: String,
        recorded: String,
        actual: String,
    },
    #[error("--shard {given}: {why}")]
    BadShard { given: String, why: String },
    /// A value the command line would refuse ([`crate::limits`]), or parts
    /// that do not fit together: the hash only shows the plan was not
    /// changed by accident, so its content is checked like a command line.
    #[error("{file}: {why}; a plan is checked like the command line that writes it")]
    Invalid { file: String, why: String },
}

/// One wave of shards: wave 1 is the first batch of variants; with
/// `--layouts auto` every further wave doubles the variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wave {
    pub wave: usize,
    /// The first and last shard (1-based, inclusive).
    pub shards: [usize; 2],
}

/// `DIR/plan.json`: everything a shard needs to run its part, and the merge
/// to analyze the whole. Fields in the order of docs/json-schema.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub schema: String,
    pub schema_version: u32,
    pub builds: Vec<BuildSpec>,
    pub run_template: String,
    /// Metric specs as on the command line (`wall`, `regex:…`).
    pub metrics: Vec<String>,
    /// `--higher-is-better`: `false`, `true` (every metric that is not a
    /// cost) or the names it applies to.
    pub higher_is_better: HigherIsBetter,
    pub estimator: Estimator,
    pub margin: f64,
    pub alpha: f64,
    pub seed: u64,
    pub rounds: usize,
    pub warmup: usize,
    /// The perturbation sources the variants use (active where the plan was made).
    pub sources: Vec<Source>,
    pub shell: bool,
    pub timeout_s: Option<f64>,
    /// Variants of the first wave.
    pub layouts: usize,
    /// `--layouts auto`: the most variants; `None` for a fixed count.
    pub max_layouts: Option<usize>,
    /// Shards of the whole plan, every wave.
    pub shards: usize,
    pub variants_per_shard: usize,
    /// Every variant of every wave, by seed.
    pub variants: Vec<Variant>,
    pub waves: Vec<Wave>,
    /// Lowercase hex SHA-256 of the canonical JSON of every other field
    /// (this struct serialized with `hash` empty).
    pub hash: String,
}

impl Plan {
    /// The plan of `options` (a `layout` command line) in `shards` shards of
    /// the first wave (default: 2 variants per shard). Builds and runs nothing;
    /// the sources are those this machine can make (shuffle needs mold or lld).
    pub fn new(options: &LayoutOptions, shards: Option<usize>) -> Result<Plan> {
        let layouts = options.layouts;
        if layouts < MIN_VARIANTS {
            bail!("--layouts must be at least {MIN_VARIANTS}");
        }
        let first = shards.unwrap_or(layouts.div_ceil(2));
        if first == 0 || first > layouts {
            bail!(
                "--shards {first}: must be between 1 and the {layouts} layouts of the first wave"
            );
        }
        let per_shard = layouts.div_ceil(first);
        let wanted = |s: Source| options.sources.contains(&s);
        let shuffle =
            wanted(Source::Shuffle) && ShuffleLinker::detect(std::env::var_os("PATH")).is_ok();
        let mut sources = Vec::new();
        for (on, source) in [
            (wanted(Source::Align), Source::Align),
            (wanted(Source::Shift), Source::Shift),
            (shuffle, Source::Shuffle),
            (true, Source::Env),
            // The shim is compiled where each shard runs (`layout::heap`);
            // its offsets are a function of the seed alone, so a shard moves
            // the heap of a variant as a local run of the same seed does.
            (wanted(Source::Heap), Source::Heap),
        ] {
            if on {
                sources.push(source);
            }
        }
        let sizes = look_sizes(layouts, options.max_layouts);
        let total = *sizes.last().unwrap_or(&layouts);
        let variants = (0..total as u64)
            .map(|seed| {
                Variant::from_seed(
                    seed,
                    sources.contains(&Source::Align),
                    sources.contains(&Source::Shift),
                    shuffle,
                )
                .with_heap(sources.contains(&Source::Heap))
            })
            .collect();
        let waves = waves(&sizes, per_shard);
        let mut plan = Plan {
            schema: PLAN_SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            builds: options.builds.clone(),
            run_template: options.run_template.clone(),
            metrics: options.metrics.iter().map(|m| m.label()).collect(),
            higher_is_better: options.higher_is_better.clone(),
            estimator: options.estimator,
            margin: options.margin,
            alpha: options.alpha,
            seed: options.seed,
            rounds: options.rounds,
            warmup: options.warmup,
            sources,
            shell: options.shell,
            timeout_s: options.timeout.map(|t| t.as_secs_f64()),
            layouts,
            max_layouts: options.max_layouts,
            shards: waves.last().map_or(0, |w| w.shards[1]),
            variants_per_shard: per_shard,
            variants,
            waves,
            hash: String::new(),
        };
        plan.hash = plan.content_hash()?;
        Ok(plan)
    }

    /// The SHA-256 of the plan's canonical JSON with `hash` empty.
    pub fn content_hash(&self) -> Result<String> {
        let bare = Plan {
            hash: String::new(),
            ..self.clone()
        };
        let bytes = serde_json::to_vec(&bare)?;
        Ok(hex(&Sha256::digest(&bytes)))
    }

    /// Read and check a plan file: its schema, and its hash against its
    /// content ([`PlanError::HashMismatch`] when they differ).
    pub fn read(path: &Path) -> Result<Plan> {
        let file = path.display().to_string();
        let text = limits::read_capped_text(path, Input::Plan)
            .with_context(|| format!("cannot read {file}"))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{file}: not JSON: {e}"))?;
        let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("");
        if schema != PLAN_SCHEMA {
            bail!("{file}: not a ghostbench plan (schema {schema:?}, expected {PLAN_SCHEMA:?})");
        }
        let plan: Plan =
            serde_json::from_value(value).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        if plan.schema_version != SCHEMA_VERSION {
            bail!(
                "{file}: plan schema_version {} (this ghostbench reads {SCHEMA_VERSION})",
                plan.schema_version
            );
        }
        let actual = plan.content_hash()?;
        if actual != plan.hash {
            return Err(PlanError::HashMismatch {
                file,
                recorded: plan.hash.clone(),
                actual,
            }
            .into());
        }
        plan.check()
            .map_err(|why| PlanError::Invalid { file, why })?;
        Ok(plan)
    }

    /// The plan's settings within the bounds of [`crate::limits`] (the same
    /// checks as the command line), and its variants, shards and waves as
    /// [`Plan::new`] makes them from its layouts and shard size.
    pub fn check(&self) -> Result<(), String> {
        let bound = |e: limits::Bound| e.0;
        Count::Builds.check(self.builds.len()).map_err(bound)?;
        Count::Rounds.check(self.rounds).map_err(bound)?;
        Count::Warmup.check(self.warmup).map_err(bound)?;
        limits::margin(self.margin).map_err(bound)?;
        limits::alpha(self.alpha).map_err(bound)?;
        if let Some(timeout) = self.timeout_s {
            limits::seconds("--timeout", timeout).map_err(bound)?;
        }
        Count::Layouts.check(self.layouts).map_err(bound)?;
        if let Some(max) = self.max_layouts {
            Count::MaxLayouts.check(max).map_err(bound)?;
        }
        Count::Shards.check(self.shards).map_err(bound)?;
        if self.variants_per_shard == 0 || self.variants_per_shard > self.layouts {
            return Err(format!(
                "variants_per_shard {} is not between 1 and its {} layouts",
                self.variants_per_shard, self.layouts
            ));
        }
        let sizes = look_sizes(self.layouts, self.max_layouts);
        let total = *sizes.last().unwrap_or(&self.layouts);
        let in_order = self.variants.iter().map(|v| v.seed).eq(0..total as u64);
        if !in_order {
            return Err(format!(
                "its variants are not the seeds 0 to {} its layouts make",
                total - 1
            ));
        }
        let waves = waves(&sizes, self.variants_per_shard);
        if self.waves != waves || self.shards != waves.last().map_or(0, |w| w.shards[1]) {
            return Err(
                "its waves and shards are not those its layouts and shard size make".into(),
            );
        }
        Ok(())
    }

    /// Write `DIR/plan.json` (atomically) and create `DIR/results/`; returns the plan's path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir.join(RESULTS_DIR))
            .with_context(|| format!("cannot create {}", dir.join(RESULTS_DIR).display()))?;
        let path = dir.join(PLAN_FILE);
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        write_atomically(&path, text.as_bytes())?;
        Ok(path)
    }

    /// The seeds shard `k` (1-based) owns: the contiguous chunk of its wave.
    pub fn seeds(&self, k: usize) -> Option<Vec<u64>> {
        let sizes = look_sizes(self.layouts, self.max_layouts);
        let mut shard = 0;
        let mut start = 0;
        for size in sizes {
            let mut from = start;
            while from < size {
                shard += 1;
                let to = (from + self.variants_per_shard).min(size);
                if shard == k {
                    return Some((from as u64..to as u64).collect());
                }
                from = to;
            }
            start = size;
        }
        None
    }

    /// The wave shard `k` belongs to.
    pub fn wave_of(&self, k: usize) -> Option<usize> {
        self.waves
            .iter()
            .find(|w| (w.shards[0]..=w.shards[1]).contains(&k))
            .map(|w| w.wave)
    }

    /// Parse `--shard K/N` against this plan ([`PlanError::BadShard`]).
    pub fn parse_shard(&self, text: &str) -> Result<usize> {
        let bad = |why: String| PlanError::BadShard {
            given: text.to_string(),
            why,
        };
        let (k, n) = text
            .split_once('/')
            .and_then(|(k, n)| {
                Some((
                    k.trim().parse::<usize>().ok()?,
                    n.trim().parse::<usize>().ok()?,
                ))
            })
            .ok_or_else(|| bad("expected K/N, e.g. 3/8".into()))?;
        if n != self.shards {
            return Err(bad(format!("the plan has {} shards, not {n}", self.shards)).into());
        }
        if k == 0 || k > n {
            return Err(bad(format!("K must be between 1 and {n}")).into());
        }
        Ok(k)
    }

    /// The command-line options the plan fixes, for a run in `work_root`.
    pub fn options(&self, work_root: &Path) -> Result<LayoutOptions> {
        let metrics = self
            .metrics
            .iter()
            .map(|m| MetricSpec::parse(m))
            .collect::<Result<Vec<_>>>()?;
        Ok(LayoutOptions {
            builds: self.builds.clone(),
            run_template: self.run_template.clone(),
            metrics,
            higher_is_better: self.higher_is_better.clone(),
            layouts: self.layouts,
            max_layouts: self.max_layouts,
            rounds: self.rounds,
            warmup: self.warmup,
            sources: self.sources.clone(),
            estimator: self.estimator,
            margin: self.margin,
            alpha: self.alpha,
            shell: self.shell,
            timeout: self
                .timeout_s
                .filter(|t| t.is_finite() && *t >= 0.0)
                .map(std::time::Duration::from_secs_f64),
            seed: self.seed,
            work_root: work_root.to_path_buf(),
            ..LayoutOptions::default()
        })
    }

    /// The variants of `seeds`, in the plan's order.
    pub fn variants_of(&self, seeds: &[u64]) -> Vec<Variant> {
        self.variants
            .iter()
            .filter(|v| seeds.contains(&v.seed))
            .cloned()
            .collect()
    }
}

/// The waves of look sizes `sizes` in chunks of `per_shard` variants.
fn waves(sizes: &[usize], per_shard: usize) -> Vec<Wave> {
    let mut waves = Vec::new();
    let mut start = 0;
    let mut next_shard = 1;
    for (i, &size) in sizes.iter().enumerate() {
        let count = (size - start).div_ceil(per_shard);
        waves.push(Wave {
            wave: i + 1,
            shards: [next_shard, next_shard + count - 1],
        });
        next_shard += count;
        start = size;
    }
    waves
}

/// `DIR/results/shard-K.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardResult {
    pub schema: String,
    pub schema_version: u32,
    pub plan_hash: String,
    pub shard: usize,
    pub shards: usize,
    pub wave: usize,
    pub seeds: Vec<u64>,
    pub status: ShardStatus,
    /// The one-line cause of a failure.
    pub cause: Option<String>,
    pub machine: Machine,
    pub started_unix: f64,
    pub elapsed_s: f64,
    /// The `layout --json` document of this shard, runs included; null when
    /// the shard failed before it had one (a bad template).
    pub report: serde_json::Value,
}

impl ShardResult {
    /// Read a shard result (schema checked; the plan hash is the merge's to compare).
    pub fn read(path: &Path) -> Result<ShardResult> {
        let file = path.display().to_string();
        let text = limits::read_capped_text(path, Input::Shard)
            .with_context(|| format!("cannot read {file}"))?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            if e.is_eof() {
                anyhow::anyhow!(
                    "{file}: truncated: its JSON stops at line {} (an incomplete copy, or a \
                     file cut short)",
                    e.line()
                )
            } else {
                anyhow::anyhow!("{file}: corrupt: not JSON: {e}")
            }
        })?;
        let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("");
        if schema != SHARD_SCHEMA {
            bail!("{file}: not a shard result (schema {schema:?}, expected {SHARD_SCHEMA:?})");
        }
        let result: ShardResult =
            serde_json::from_value(value).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        if Count::Shards.check(result.shards).is_err()
            || !(1..=result.shards).contains(&result.shard)
        {
            bail!(
                "{file}: shard {} of {} is not a shard of a plan (1 to {} shards)",
                result.shard,
                result.shards,
                limits::MAX_SHARDS
            );
        }
        Ok(result)
    }

    /// Write to `results_dir/shard-K.json` atomically (a temporary file,
    /// fsync, rename): a reader never sees half a result. Returns the path.
    pub fn write(&self, results_dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(results_dir)
            .with_context(|| format!("cannot create {}", results_dir.display()))?;
        let path = results_dir.join(shard_file_name(self.shard));
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        write_atomically(&path, text.as_bytes())?;
        Ok(path)
    }
}

/// `shard-K.json`.
pub fn shard_file_name(k: usize) -> String {
    format!("shard-{k}.json")
}

/// The results directory of the plan at `plan_path`.
pub fn results_dir(plan_path: &Path) -> PathBuf {
    plan_path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(RESULTS_DIR)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_start_at_the_fewest_variants_an_experiment_needs() {
        assert_eq!(Count::Layouts.range().0, MIN_VARIANTS);
        assert_eq!(Count::MaxLayouts.range().0, MIN_VARIANTS);
    }

    fn options(layouts: usize, max_layouts: Option<usize>) -> LayoutOptions {
        LayoutOptions {
            builds: vec![
                BuildSpec {
                    name: "A".into(),
                    template: "cc {cflags} a.c -o {out} {ldflags}".into(),
                },
                BuildSpec {
                    name: "B".into(),
                    template: "cc {cflags} b.c -o {out} {ldflags}".into(),
                },
            ],
            layouts,
            max_layouts,
            sources: vec![Source::Align, Source::Shift, Source::Env],
            ..LayoutOptions::default()
        }
    }

    #[test]
    fn shards_own_contiguous_variants_wave_by_wave() {
        let plan = Plan::new(&options(8, None), None).unwrap();
        assert_eq!((plan.shards, plan.variants_per_shard), (4, 2));
        assert_eq!(plan.seeds(1).unwrap(), [0, 1]);
        assert_eq!(plan.seeds(4).unwrap(), [6, 7]);
        assert_eq!(plan.seeds(5), None);
        assert_eq!(
            plan.waves,
            [Wave {
                wave: 1,
                shards: [1, 4]
            }]
        );
        let auto = Plan::new(&options(8, Some(32)), Some(2)).unwrap();
        // 8, 16, 32 variants in chunks of 4: 2 + 2 + 4 shards.
        assert_eq!(auto.variants.len(), 32);
        assert_eq!(
            auto.waves,
            [
                Wave {
                    wave: 1,
                    shards: [1, 2]
                },
                Wave {
                    wave: 2,
                    shards: [3, 4]
                },
                Wave {
                    wave: 3,
                    shards: [5, 8]
                },
            ]
        );
        assert_eq!(auto.seeds(3).unwrap(), [8, 9, 10, 11]);
        assert_eq!(auto.wave_of(6), Some(3));
        assert_eq!(auto.parse_shard("3/8").unwrap(), 3);
        assert!(auto.parse_shard("3/4").is_err());
        assert!(auto.parse_shard("0/8").is_err());
        assert!(auto.parse_shard("x").is_err());
        // Uneven: 8 layouts in 3 shards of 3, 3, 2.
        let uneven = Plan::new(&options(8, None), Some(3)).unwrap();
        assert_eq!(uneven.seeds(3).unwrap(), [6, 7]);
        assert!(Plan::new(&options(8, None), Some(9)).is_err());
    }

    #[test]
    fn the_hash_round_trips_and_a_changed_plan_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut options = options(8, None);
        options.margin = 0.0123456789;
        options.timeout = Some(std::time::Duration::from_millis(1500));
        let plan = Plan::new(&options, None).unwrap();
        assert_eq!(plan.hash.len(), 64);
        let path = plan.write(dir.path()).unwrap();
        assert!(dir.path().join(RESULTS_DIR).is_dir());
        let back = Plan::read(&path).unwrap();
        assert_eq!(back, plan);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"rounds\": 5", "\"rounds\": 6")).unwrap();
        let error = Plan::read(&path).unwrap_err();
        assert!(
            matches!(
                error.downcast_ref::<PlanError>(),
                Some(PlanError::HashMismatch { .. })
            ),
            "{error:#}"
        );
        assert_eq!(format!("{error:#}").lines().count(), 1);
    }
}
