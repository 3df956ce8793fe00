//! `--emit slurm|k8s|github` and its options, shared by `layout --plan` and
//! the merge (`analyze DIR/results/`): the command line as a
//! [`layout::emit::EmitSpec`], checked, and the job file written into the
//! plan directory.

use super::exit::usage;
use crate::layout::emit::{self, EmitSpec, Engine};
use crate::report::escape::shell;
use crate::report::json::write_atomically;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// `--emit` and the engines' parameters.
#[derive(Debug, Clone, Default, Args)]
pub struct EmitArgs {
    /// Write the job file that runs a wave of the plan's shards on ENGINE
    /// (DIR/submit.sbatch, DIR/job.yaml or DIR/shards.yml) and exit.
    #[arg(long, value_enum, value_name = "ENGINE")]
    pub emit: Option<EngineArg>,
    /// With --emit: the wave to write [default: the first; for the merge, the next needed].
    #[arg(long, value_name = "W", requires = "emit")]
    pub wave: Option<usize>,
    /// With --emit: the most shards running at once [default: all of the wave].
    #[arg(long, value_name = "P", requires = "emit")]
    pub concurrency: Option<usize>,
    /// With --emit: the ghostbench command on the machines running the shards
    /// [default: this binary's absolute path for slurm, `ghostbench` otherwise].
    #[arg(long, value_name = "PATH", requires = "emit")]
    pub ghostbench: Option<String>,
    /// With --emit slurm: the partition (#SBATCH --partition).
    #[arg(long, value_name = "P", requires = "emit")]
    pub partition: Option<String>,
    /// With --emit slurm: each shard's time limit (#SBATCH --time, e.g. 2:00:00).
    #[arg(long, value_name = "T", requires = "emit")]
    pub time_limit: Option<String>,
    /// With --emit k8s: the container image (ghostbench, the compilers, the sources).
    #[arg(long, value_name = "IMAGE", requires = "emit")]
    pub image: Option<String>,
    /// With --emit k8s: the persistent volume claim holding the plan directory.
    #[arg(long, value_name = "NAME", requires = "emit")]
    pub volume_claim: Option<String>,
    /// With --emit k8s: where the volume is mounted in the container [default: the plan directory's path].
    #[arg(long, value_name = "PATH", requires = "emit")]
    pub mount: Option<PathBuf>,
}

/// One `--emit` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Slurm,
    K8s,
    Github,
}

impl From<EngineArg> for Engine {
    fn from(arg: EngineArg) -> Engine {
        match arg {
            EngineArg::Slurm => Engine::Slurm,
            EngineArg::K8s => Engine::K8s,
            EngineArg::Github => Engine::Github,
        }
    }
}

/// What the job file needs from the plan.
#[derive(Debug, Clone)]
pub struct PlanFacts {
    /// The directory holding plan.json, as the user named it.
    pub dir: PathBuf,
    pub hash: String,
    /// Shards in the whole plan.
    pub total_shards: usize,
    /// (wave, first shard, last shard), 1-based and inclusive.
    pub waves: Vec<(usize, usize, usize)>,
}

impl EmitArgs {
    /// The engine asked for, if any.
    pub fn engine(&self) -> Option<Engine> {
        self.emit.map(Engine::from)
    }

    /// The command line and the plan as a checked [`EmitSpec`] for `wave`
    /// (`--wave` wins over the caller's default). Usage errors: an option of
    /// another engine, a wave the plan does not have, what
    /// [`EmitSpec::check`] refuses.
    pub fn to_spec(
        &self,
        plan: &PlanFacts,
        default_wave: usize,
        build_cache: Option<&Path>,
    ) -> Result<EmitSpec> {
        let engine = self
            .engine()
            .ok_or_else(|| usage("no --emit ENGINE given"))?;
        let name = engine.name();
        let foreign: &[(&str, bool)] = match engine {
            Engine::Slurm => &[
                ("--image", self.image.is_some()),
                ("--volume-claim", self.volume_claim.is_some()),
                ("--mount", self.mount.is_some()),
            ],
            Engine::K8s => &[
                ("--partition", self.partition.is_some()),
                ("--time-limit", self.time_limit.is_some()),
            ],
            Engine::Github => &[
                ("--image", self.image.is_some()),
                ("--volume-claim", self.volume_claim.is_some()),
                ("--mount", self.mount.is_some()),
                ("--partition", self.partition.is_some()),
                ("--time-limit", self.time_limit.is_some()),
            ],
        };
        if let Some((option, _)) = foreign.iter().find(|(_, given)| *given) {
            return Err(usage(format!("{option} does not apply to --emit {name}")));
        }
        let wave = self.wave.unwrap_or(default_wave);
        let &(_, first, last) =
            plan.waves
                .iter()
                .find(|(w, _, _)| *w == wave)
                .ok_or_else(|| {
                    usage(format!(
                        "--wave {wave}: the plan has waves 1..={}",
                        plan.waves.iter().map(|w| w.0).max().unwrap_or(0)
                    ))
                })?;
        let plan_dir = match engine {
            Engine::Github => relative_to_cwd(&plan.dir)?,
            Engine::Slurm | Engine::K8s => std::path::absolute(&plan.dir)
                .with_context(|| format!("cannot resolve {}", plan.dir.display()))?,
        };
        let build_cache = match (engine, build_cache) {
            (Engine::Github, Some(cache)) => Some(cache.to_path_buf()),
            (_, Some(cache)) => Some(
                std::path::absolute(cache)
                    .with_context(|| format!("cannot resolve {}", cache.display()))?,
            ),
            (_, None) => None,
        };
        let ghostbench = match (&self.ghostbench, engine) {
            (Some(path), _) => path.clone(),
            (None, Engine::Slurm) => std::env::current_exe()
                .context("cannot find this binary's path; give --ghostbench")?
                .to_string_lossy()
                .into_owned(),
            (None, _) => "ghostbench".to_string(),
        };
        let spec = EmitSpec {
            engine,
            plan_dir,
            plan_hash: plan.hash.clone(),
            wave,
            first_shard: first,
            last_shard: last,
            total_shards: plan.total_shards,
            concurrency: self.concurrency,
            ghostbench,
            build_cache,
            partition: self.partition.clone(),
            time_limit: self.time_limit.clone(),
            image: self.image.clone(),
            volume_claim: self.volume_claim.clone(),
            mount: self.mount.clone(),
        };
        spec.check().map_err(|e| usage(e.to_string()))?;
        Ok(spec)
    }
}

/// Write the job file of `spec` into the plan directory (and, for Slurm,
/// the logs/ directory its tasks write to); print where it went and how to
/// submit it. Returns the file's path.
pub fn write(spec: &EmitSpec, plan_dir: &Path) -> Result<PathBuf> {
    let path = plan_dir.join(spec.engine.file_name(spec.wave));
    if spec.engine == Engine::Slurm {
        let logs = plan_dir.join("logs");
        std::fs::create_dir_all(&logs)
            .with_context(|| format!("cannot create {}", logs.display()))?;
    }
    write_atomically(&path, emit::emit(spec).as_bytes())?;
    // The hints are for pasting into a shell: every path one `sh` word.
    let quoted = shell(&path.to_string_lossy());
    let submit = match spec.engine {
        Engine::Slurm => format!("sbatch {quoted}"),
        Engine::K8s => format!("kubectl apply -f {quoted}"),
        Engine::Github => {
            format!("copy {quoted} to .github/workflows/ and run it (workflow_dispatch)")
        }
    };
    let text = format!(
        "wrote {}: wave {}, shards {}..={} of {}\nsubmit: {submit}\nmerge:  ghostbench analyze {}\n",
        path.display(),
        spec.wave,
        spec.first_shard,
        spec.last_shard,
        spec.total_shards,
        shell(&format!("{}/", plan_dir.join("results").display()))
    );
    super::output::print_terminal(&text, false);
    Ok(path)
}

/// `path` relative to the current directory (a workflow runs from the
/// repository root): as given when relative, else with the current
/// directory's prefix removed.
fn relative_to_cwd(path: &Path) -> Result<PathBuf> {
    if path.is_relative() {
        return Ok(path
            .strip_prefix(".")
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| path.to_path_buf()));
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    path.strip_prefix(&cwd)
        .map(Path::to_path_buf)
        .map_err(|_| {
            usage(format!(
                "--emit github: {} is outside the current directory; run from the repository root with the plan inside it",
                path.display()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> PlanFacts {
        PlanFacts {
            dir: PathBuf::from("/shared/exp"),
            hash: "ab".repeat(32),
            total_shards: 12,
            waves: vec![(1, 1, 4), (2, 5, 12)],
        }
    }

    #[test]
    fn the_wave_picks_its_shards_and_a_missing_wave_is_a_usage_error() {
        let args = EmitArgs {
            emit: Some(EngineArg::Slurm),
            ..EmitArgs::default()
        };
        let spec = args.to_spec(&facts(), 2, None).unwrap();
        assert_eq!((spec.first_shard, spec.last_shard), (5, 12));
        assert_eq!(spec.total_shards, 12);
        let args = EmitArgs {
            wave: Some(3),
            ..args
        };
        let err = args.to_spec(&facts(), 1, None).unwrap_err();
        assert_eq!(err.to_string(), "--wave 3: the plan has waves 1..=2");
        assert_eq!(super::super::exit::code_of(&err), super::super::exit::USAGE);
    }

    #[test]
    fn an_option_of_another_engine_is_named() {
        let args = EmitArgs {
            emit: Some(EngineArg::Slurm),
            image: Some("x".to_string()),
            ..EmitArgs::default()
        };
        let err = args.to_spec(&facts(), 1, None).unwrap_err();
        assert_eq!(err.to_string(), "--image does not apply to --emit slurm");
        let args = EmitArgs {
            emit: Some(EngineArg::K8s),
            image: Some("x".to_string()),
            ..EmitArgs::default()
        };
        let err = args.to_spec(&facts(), 1, None).unwrap_err();
        assert!(err.to_string().contains("--volume-claim"), "{err}");
    }
}
