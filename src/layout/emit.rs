//! `--emit slurm|k8s|github`: the native job file that runs one wave of a
//! plan's shards on a cluster engine (a Slurm job array, a Kubernetes
//! Indexed Job, a GitHub Actions matrix workflow). Pure text generators, one
//! per engine, from an [`EmitSpec`]; the engine's own scheduler does the rest
//! (no home-made scheduler). Writing the file is the caller's (cli/).
//!
//! Paths and commands are quoted for where they land: `sh` words with
//! `shlex`, YAML scalars as JSON strings (valid YAML double-quoted scalars),
//! and `$` doubled in a Kubernetes command (the kubelet expands `$(VAR)`).

use serde::Serialize;
use std::path::{Path, PathBuf};

/// A cluster engine `--emit` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Slurm,
    K8s,
    Github,
}

impl Engine {
    /// The job file's name in the plan directory: wave 1's is `submit.sbatch`,
    /// `job.yaml` or `shards.yml`; a later wave's carries its number so the
    /// earlier file stays as it was submitted.
    pub fn file_name(self, wave: usize) -> String {
        let (stem, ext) = match self {
            Engine::Slurm => ("submit", "sbatch"),
            Engine::K8s => ("job", "yaml"),
            Engine::Github => ("shards", "yml"),
        };
        if wave <= 1 {
            format!("{stem}.{ext}")
        } else {
            format!("{stem}-wave{wave}.{ext}")
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Engine::Slurm => "slurm",
            Engine::K8s => "k8s",
            Engine::Github => "github",
        }
    }
}

/// Everything a job file needs: which shards, where the plan is, how to run
/// ghostbench, and the engine's own parameters.
#[derive(Debug, Clone)]
pub struct EmitSpec {
    pub engine: Engine,
    /// The plan directory (holds plan.json, results/, logs/). Absolute for
    /// Slurm and Kubernetes; for GitHub, relative to the repository root.
    pub plan_dir: PathBuf,
    /// The plan's content hash (names the job so two plans' jobs differ).
    pub plan_hash: String,
    /// The wave these shards belong to (1 = the first).
    pub wave: usize,
    /// The wave's shards, 1-based and inclusive.
    pub first_shard: usize,
    pub last_shard: usize,
    /// Shards in the whole plan (all waves): the N of `--shard K/N`.
    pub total_shards: usize,
    /// Most shards running at once (Slurm `%P`, Kubernetes parallelism,
    /// GitHub max-parallel); None = all of the wave.
    pub concurrency: Option<usize>,
    /// The ghostbench command on the machines that run the shards.
    pub ghostbench: String,
    /// `--build-cache` for every shard (a directory all machines share).
    pub build_cache: Option<PathBuf>,
    /// Slurm: `--partition`, `--time`.
    pub partition: Option<String>,
    pub time_limit: Option<String>,
    /// Kubernetes: the container image (with ghostbench, the compilers and
    /// the sources the plan's build templates name), the persistent volume
    /// claim holding the plan directory, and where it is mounted (default:
    /// the plan directory's own path, so plan.json's paths hold as they are).
    pub image: Option<String>,
    pub volume_claim: Option<String>,
    pub mount: Option<PathBuf>,
}

/// Why a spec cannot become a job file (the CLI makes these usage errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error("--emit {engine} needs {option}")]
    Missing {
        engine: &'static str,
        option: &'static str,
    },
    #[error("--emit {engine}: {what} {value:?} cannot go in the job file ({why})")]
    Unusable {
        engine: &'static str,
        what: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("no shards to emit: wave {wave} has shards {first}..{last} of {total}")]
    NoShards {
        wave: usize,
        first: usize,
        last: usize,
        total: usize,
    },
    #[error("--concurrency must be at least 1")]
    ZeroConcurrency,
}

impl EmitSpec {
    /// The checks [`emit`] relies on: a non-empty shard range within the
    /// plan, the engine's required parameters, and paths its file format
    /// can carry.
    pub fn check(&self) -> Result<(), EmitError> {
        let engine = self.engine.name();
        if self.first_shard < 1
            || self.last_shard < self.first_shard
            || self.last_shard > self.total_shards
        {
            return Err(EmitError::NoShards {
                wave: self.wave,
                first: self.first_shard,
                last: self.last_shard,
                total: self.total_shards,
            });
        }
        if self.concurrency == Some(0) {
            return Err(EmitError::ZeroConcurrency);
        }
        let unusable = |what, value: &str, why| EmitError::Unusable {
            engine,
            what,
            value: value.to_string(),
            why,
        };
        let dir = self.plan_dir.to_string_lossy();
        if dir.contains('\n') || self.ghostbench.contains('\n') {
            return Err(unusable("path", &dir, "a line break"));
        }
        match self.engine {
            Engine::Slurm => {
                // #SBATCH lines are split on blanks, and %… in --output is a
                // file-name pattern.
                if dir.contains(|c: char| c.is_whitespace() || "%\"'\\".contains(c)) {
                    return Err(unusable(
                        "plan directory",
                        &dir,
                        "blanks, quotes, backslashes and % do not survive #SBATCH --output",
                    ));
                }
                for (what, value) in [
                    ("--partition", self.partition.as_deref()),
                    ("--time-limit", self.time_limit.as_deref()),
                ] {
                    if value.is_some_and(|v| v.is_empty() || v.contains(char::is_whitespace)) {
                        return Err(unusable(what, value.unwrap_or(""), "empty or blank"));
                    }
                }
                if !self.plan_dir.is_absolute() {
                    return Err(unusable("plan directory", &dir, "not absolute"));
                }
            }
            Engine::K8s => {
                if self.image.as_deref().map_or(true, str::is_empty) {
                    return Err(EmitError::Missing {
                        engine,
                        option: "--image IMAGE",
                    });
                }
                if self.volume_claim.as_deref().map_or(true, str::is_empty) {
                    return Err(EmitError::Missing {
                        engine,
                        option: "--volume-claim NAME (the volume that holds the plan directory)",
                    });
                }
                let mount = self.mount_path();
                if !mount.is_absolute() {
                    return Err(unusable(
                        "mount path",
                        &mount.to_string_lossy(),
                        "not absolute",
                    ));
                }
            }
            Engine::Github => {
                if self.plan_dir.is_absolute() {
                    return Err(unusable(
                        "plan directory",
                        &dir,
                        "absolute; a workflow needs it relative to the repository root",
                    ));
                }
            }
        }
        Ok(())
    }

    fn shard_count(&self) -> usize {
        self.last_shard + 1 - self.first_shard
    }

    /// Where the plan directory is inside a Kubernetes container.
    fn mount_path(&self) -> PathBuf {
        self.mount.clone().unwrap_or_else(|| self.plan_dir.clone())
    }

    /// A job name: `ghostbench-<first 8 of the hash>-w<wave>` (a valid
    /// Kubernetes object name and Slurm job name).
    fn job_name(&self) -> String {
        let short: String = self
            .plan_hash
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(8)
            .collect::<String>()
            .to_ascii_lowercase();
        if short.is_empty() {
            format!("ghostbench-w{}", self.wave)
        } else {
            format!("ghostbench-{short}-w{}", self.wave)
        }
    }

    /// The shard command's words after the program, with `shard` as the K.
    fn shard_args(&self, plan: &Path, shard: &str) -> Vec<String> {
        let mut args = vec![
            "layout".to_string(),
            "--plan".to_string(),
            plan.join("plan.json").to_string_lossy().into_owned(),
            "--shard".to_string(),
            format!("{shard}/{}", self.total_shards),
        ];
        if let Some(cache) = &self.build_cache {
            args.push("--build-cache".to_string());
            args.push(cache.to_string_lossy().into_owned());
        }
        args
    }
}

/// The job file for `spec.engine`. Call [`EmitSpec::check`] first: a spec
/// that fails it gives a file the engine would reject.
pub fn emit(spec: &EmitSpec) -> String {
    match spec.engine {
        Engine::Slurm => slurm(spec),
        Engine::K8s => k8s(spec),
        Engine::Github => github(spec),
    }
}

/// A Slurm job array, one task per shard: `sbatch DIR/submit.sbatch`. The
/// tasks start where sbatch was run (Slurm's default), as a one-process run
/// starts where ghostbench was: relative paths in the build templates hold
/// when the plan is submitted from where it was made.
pub fn slurm(spec: &EmitSpec) -> String {
    let dir = &spec.plan_dir;
    let mut array = format!("{}-{}", spec.first_shard, spec.last_shard);
    if let Some(p) = spec.concurrency {
        array.push_str(&format!("%{p}"));
    }
    let mut out = String::new();
    out.push_str("#!/bin/sh\n");
    out.push_str(&format!(
        "# ghostbench layout plan {}: wave {}, shards {}..{} of {}, one array task each.\n",
        spec.plan_hash, spec.wave, spec.first_shard, spec.last_shard, spec.total_shards
    ));
    out.push_str(&format!(
        "# Submit: sbatch {} (add --wait to block until every shard has ended).\n",
        sh_quote(&dir.join(spec.engine.file_name(spec.wave)).to_string_lossy())
    ));
    out.push_str(&format!(
        "# Merge:  ghostbench analyze {}\n",
        sh_quote(&format!("{}/", dir.join("results").display()))
    ));
    out.push_str(&format!("#SBATCH --job-name={}\n", spec.job_name()));
    out.push_str(&format!("#SBATCH --array={array}\n"));
    out.push_str("#SBATCH --ntasks=1\n");
    out.push_str(&format!(
        "#SBATCH --output={}/shard-%a.out\n",
        dir.join("logs").display()
    ));
    if let Some(p) = &spec.partition {
        out.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = &spec.time_limit {
        out.push_str(&format!("#SBATCH --time={t}\n"));
    }
    let args = spec.shard_args(dir, "${SLURM_ARRAY_TASK_ID}");
    let mut words = vec![sh_quote(&spec.ghostbench)];
    for arg in &args {
        if arg.contains("${SLURM_ARRAY_TASK_ID}") {
            // Double quotes: the task id is expanded, nothing else is in it.
            words.push(format!("\"{arg}\""));
        } else {
            words.push(sh_quote(arg));
        }
    }
    out.push_str("set -eu\n");
    out.push_str(&format!("exec {}\n", words.join(" ")));
    out
}

/// A Kubernetes Indexed Job, one completion index per shard:
/// `kubectl apply -f DIR/job.yaml`.
pub fn k8s(spec: &EmitSpec) -> String {
    let mount = spec.mount_path();
    let count = spec.shard_count();
    let parallelism = spec.concurrency.unwrap_or(count).min(count);
    // JOB_COMPLETION_INDEX is 0-based: shard = index + first shard. The
    // arithmetic is the shell's; `$$` is the kubelet's escape for `$`.
    let script = format!(
        "exec \"$0\" \"$@\" --shard \"$$((JOB_COMPLETION_INDEX + {}))/{}\"",
        spec.first_shard, spec.total_shards
    );
    let mut command = vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        script,
        kubelet_escape(&spec.ghostbench),
        "layout".to_string(),
        "--plan".to_string(),
        kubelet_escape(&mount.join("plan.json").to_string_lossy()),
    ];
    if let Some(cache) = &spec.build_cache {
        command.push("--build-cache".to_string());
        command.push(kubelet_escape(&cache.to_string_lossy()));
    }
    let q = |s: &str| yaml_str(s);
    let mut out = String::new();
    out.push_str(&format!(
        "# ghostbench layout plan {}: wave {}, shards {}..{} of {}, one completion index each.\n",
        spec.plan_hash, spec.wave, spec.first_shard, spec.last_shard, spec.total_shards
    ));
    out.push_str(&format!(
        "# Submit: kubectl apply -f {}; then, with the volume's results/:\n",
        sh_quote(
            &spec
                .plan_dir
                .join(spec.engine.file_name(spec.wave))
                .to_string_lossy()
        )
    ));
    out.push_str(&format!(
        "# Merge:  ghostbench analyze {}\n",
        sh_quote(&format!("{}/", spec.plan_dir.join("results").display()))
    ));
    out.push_str("apiVersion: batch/v1\n");
    out.push_str("kind: Job\n");
    out.push_str("metadata:\n");
    out.push_str(&format!("  name: {}\n", q(&spec.job_name())));
    out.push_str("  labels:\n");
    out.push_str("    app.kubernetes.io/name: ghostbench\n");
    out.push_str("spec:\n");
    out.push_str("  completionMode: Indexed\n");
    out.push_str(&format!("  completions: {count}\n"));
    out.push_str(&format!("  parallelism: {parallelism}\n"));
    // A failed shard writes its failed result and exits non-zero; rerunning
    // it would fail the same way. Each shard may fail once without the Job
    // stopping the others.
    out.push_str(&format!("  backoffLimit: {count}\n"));
    out.push_str("  template:\n");
    out.push_str("    metadata:\n");
    out.push_str("      labels:\n");
    out.push_str("        app.kubernetes.io/name: ghostbench\n");
    out.push_str("    spec:\n");
    out.push_str("      restartPolicy: Never\n");
    out.push_str("      containers:\n");
    out.push_str("        - name: shard\n");
    out.push_str(&format!(
        "          image: {}\n",
        q(spec.image.as_deref().unwrap_or(""))
    ));
    out.push_str("          command:\n");
    for word in &command {
        out.push_str(&format!("            - {}\n", q(word)));
    }
    out.push_str("          volumeMounts:\n");
    out.push_str("            - name: plan\n");
    out.push_str(&format!(
        "              mountPath: {}\n",
        q(&mount.to_string_lossy())
    ));
    out.push_str("      volumes:\n");
    out.push_str("        - name: plan\n");
    out.push_str("          persistentVolumeClaim:\n");
    out.push_str(&format!(
        "            claimName: {}\n",
        q(spec.volume_claim.as_deref().unwrap_or(""))
    ));
    out
}

/// A GitHub Actions workflow: a matrix job per shard uploading its result,
/// then a merge job. Commit it under .github/workflows/ with the plan
/// directory.
pub fn github(spec: &EmitSpec) -> String {
    let dir = spec.plan_dir.to_string_lossy();
    let shards: Vec<String> = (spec.first_shard..=spec.last_shard)
        .map(|k| k.to_string())
        .collect();
    let shard_run = {
        let args = spec.shard_args(&spec.plan_dir, "${{ matrix.shard }}");
        let mut words = vec![actions(&sh_quote(&spec.ghostbench))];
        for arg in &args {
            if arg.contains("${{ matrix.shard }}") {
                // Expanded by Actions before the shell sees it: a number.
                words.push(format!("\"{arg}\""));
            } else {
                words.push(actions(&sh_quote(arg)));
            }
        }
        words.join(" ")
    };
    let results = spec.plan_dir.join("results");
    let merge_run = format!(
        "{} analyze {}/ --markdown \"$GITHUB_STEP_SUMMARY\"",
        actions(&sh_quote(&spec.ghostbench)),
        actions(&sh_quote(&results.to_string_lossy()))
    );
    // Every value is a YAML scalar in which Actions evaluates `${{ … }}`:
    // one from a path or an argument is written so that it stays text.
    let q = |s: &str| yaml_str(&actions(s));
    let ours = |s: &str| yaml_str(s);
    let mut out = String::new();
    out.push_str(&format!(
        "# ghostbench layout plan {}: wave {}, shards {}..{} of {}, one matrix job each, then the merge.\n",
        spec.plan_hash, spec.wave, spec.first_shard, spec.last_shard, spec.total_shards
    ));
    out.push_str(
        "# Commit this file under .github/workflows/ and the plan directory with it; the runners need\n\
         # ghostbench on PATH (or --ghostbench) and the compilers the plan's builds use.\n",
    );
    out.push_str(&format!(
        "name: {}\n",
        q(&format!("ghostbench layout {} wave {}", dir, spec.wave))
    ));
    out.push_str("on:\n  workflow_dispatch: {}\n");
    out.push_str("jobs:\n");
    out.push_str("  shard:\n");
    out.push_str("    runs-on: ubuntu-latest\n");
    out.push_str("    strategy:\n");
    out.push_str("      fail-fast: false\n");
    if let Some(p) = spec.concurrency {
        out.push_str(&format!("      max-parallel: {p}\n"));
    }
    out.push_str("      matrix:\n");
    out.push_str(&format!("        shard: [{}]\n", shards.join(", ")));
    out.push_str("    steps:\n");
    out.push_str("      - uses: actions/checkout@v4\n");
    out.push_str(&format!(
        "      - name: {}\n",
        ours("shard ${{ matrix.shard }}")
    ));
    out.push_str(&format!("        run: {}\n", ours(&shard_run)));
    out.push_str(&format!(
        "      - name: {}\n",
        ours("upload shard ${{ matrix.shard }}")
    ));
    out.push_str("        if: always()\n");
    out.push_str("        uses: actions/upload-artifact@v4\n");
    out.push_str("        with:\n");
    out.push_str(&format!(
        "          name: {}\n",
        ours("shard-${{ matrix.shard }}")
    ));
    out.push_str(&format!(
        "          path: {}\n",
        ours(&format!(
            "{}/shard-${{{{ matrix.shard }}}}.json",
            actions(&results.to_string_lossy())
        ))
    ));
    out.push_str("  merge:\n");
    out.push_str("    needs: shard\n");
    out.push_str("    if: always()\n");
    out.push_str("    runs-on: ubuntu-latest\n");
    out.push_str("    steps:\n");
    out.push_str("      - uses: actions/checkout@v4\n");
    out.push_str(&format!("      - name: {}\n", q("download the shards")));
    out.push_str("        uses: actions/download-artifact@v4\n");
    out.push_str("        with:\n");
    out.push_str(&format!("          pattern: {}\n", q("shard-*")));
    out.push_str("          merge-multiple: true\n");
    out.push_str(&format!(
        "          path: {}\n",
        q(&results.to_string_lossy())
    ));
    out.push_str(&format!("      - name: {}\n", q("merge")));
    out.push_str(&format!("        run: {}\n", ours(&merge_run)));
    out
}

use crate::report::escape::{
    github as actions, kubelet as kubelet_escape, shell as sh_quote, yaml as yaml_str,
};

#[cfg(test)]
mod tests;
