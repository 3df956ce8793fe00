//! The build plan of a `layout` experiment: which perturbation sources are
//! on (and the padding objects and shuffle linker they need), the build jobs
//! of a batch of variants and their parallel build, the run command of every
//! built (build, variant), and the stable names of the work directories.

use super::builds::{self, BuildJob, BuildResult, Placeholders};
use super::cache::Cache;
use super::variants::{pad_assembly, ShuffleLinker, Source, SourceStatus, Variant};
use super::{LayoutOptions, LayoutReport, Phase, Progress, State, Status, MIN_VARIANTS};
use crate::run::command::CommandSpec;
use crate::run::launch::{self, Launch};
use crate::run::Prepared;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The build jobs of one batch of variants, every build × variant.
pub(super) fn build_jobs(
    options: &LayoutOptions,
    work_dir: &Path,
    cache: &Cache,
    batch: &[Variant],
    pads: &[(u32, PathBuf)],
    linker: Option<&ShuffleLinker>,
) -> Result<Vec<BuildJob>> {
    let src = std::env::current_dir().context("cannot read the current directory")?;
    let launcher = match std::env::current_exe() {
        Ok(exe) => cache
            .launcher(&exe)
            .with_context(|| format!("cannot write the launcher in {}", cache.root.display()))?,
        Err(_) => cache.root.join("bin/launch"),
    };
    let mut jobs = Vec::new();
    let orders =
        super::rust::order_files(pads).context("cannot write the symbol ordering files")?;
    for (b, build) in options.builds.iter().enumerate() {
        for variant in batch {
            let dir = work_dir
                .join(sanitize(&build.name))
                .join(variant.seed.to_string());
            let pad = pads
                .iter()
                .find(|(k, _)| *k == variant.shift)
                .map(|(_, p)| p.as_path());
            let values = Placeholders {
                cflags: variant.cflags(),
                ldflags: variant.ldflags(pad, linker),
                rustflags: super::rust::rustflags(variant, pads, &orders),
                out: dir.join("bench"),
                dir: dir.clone(),
                launcher: launcher.clone(),
                src: src.clone(),
            };
            let mut argv = builds::substitute(&build.template, options.shell, &values)
                .with_context(|| format!("build {}", build.name))?;
            if !options.shell {
                builds::absolutize(&mut argv, &src);
            }
            let rust = super::rust::variable(variant, pads, &orders);
            jobs.push(BuildJob::new(b, variant.seed, argv, &values).with_env(vec![rust]));
        }
    }
    Ok(jobs)
}

/// Build one batch in parallel, reporting each job as it ends. The default
/// layout (seed 0) of every build comes first: when one fails, nothing else
/// is built (a broken template fails once, not once per variant).
pub(super) fn build_batch(
    options: &LayoutOptions,
    cache: &Cache,
    jobs: &[BuildJob],
    on_progress: &mut dyn FnMut(&Progress),
) -> Vec<BuildResult> {
    let total = jobs.len();
    let mut done = 0;
    on_progress(&Progress {
        phase: Phase::Build,
        done,
        total,
        message: "building".into(),
    });
    let (first, rest): (Vec<BuildJob>, Vec<BuildJob>) =
        jobs.iter().cloned().partition(|j| j.seed == 0);
    let mut results = Vec::with_capacity(total);
    for part in [first, rest] {
        if part.is_empty() {
            continue;
        }
        if results.iter().any(|r: &BuildResult| !r.ok) {
            // A signal that stopped the default layouts is the cause, not
            // a failure of theirs.
            let why = if crate::run::interrupt::interrupted() {
                format!("not built: {}", crate::run::interrupt::cause())
            } else {
                "not built: a default layout (seed 0) failed first".into()
            };
            results.extend(part.iter().map(|job| BuildResult {
                build: job.build,
                seed: job.seed,
                ok: false,
                reused: false,
                seconds: 0.0,
                command: job.command_line(),
                error: Some(why.clone()),
                output_tail: Vec::new(),
                launched: Default::default(),
                code_hash: None,
            }));
            continue;
        }
        let order = new_compiles_first(&part);
        let scheduled: Vec<BuildJob> = order.iter().map(|&i| part[i].clone()).collect();
        let mut built = builds::run_all(
            &scheduled,
            cache,
            options.jobs,
            options.rebuild,
            Some(options.build_timeout),
            &mut |r| {
                done += 1;
                on_progress(&Progress {
                    phase: Phase::Build,
                    done,
                    total,
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
            },
        );
        // Back in the batch's order (seed by seed), whatever order they ran in.
        built.sort_by_key(|r| {
            order
                .iter()
                .position(|&i| part[i].build == r.build && part[i].seed == r.seed)
        });
        results.extend(built);
    }
    results
}

/// The order to start `jobs` in: for each build, the first job with a set
/// of compile flags (`CFLAGS` without its alignment words, which the
/// launcher realigns from one compile: `realign`; shuffle's
/// `-ffunction-sections` counts) not seen before comes first, jobs that can
/// only relink or realign after. Two jobs with the same flags started
/// together would compile the same objects twice or, as the launcher
/// compiles one object key at a time, leave a CPU waiting.
fn new_compiles_first(jobs: &[BuildJob]) -> Vec<usize> {
    let flags = |j: &BuildJob| {
        j.env
            .iter()
            .find(|(k, _)| k == "CFLAGS")
            .map(|(_, v)| {
                v.split_whitespace()
                    .filter(|w| !super::realign::is_align_word(w))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    let mut seen = std::collections::HashSet::new();
    let (mut new, mut relink) = (Vec::new(), Vec::new());
    for (i, job) in jobs.iter().enumerate() {
        if seen.insert((job.build, flags(job))) {
            new.push(i);
        } else {
            relink.push(i);
        }
    }
    new.extend(relink);
    new
}

/// The status when the first batch left too few variants (or lost the
/// default layout); `None` when the experiment can go on.
pub(super) fn too_few_built(options: &LayoutOptions, report: &LayoutReport) -> Option<Status> {
    let used = &report.used_seeds;
    if used.len() >= MIN_VARIANTS && used.first() == Some(&0) {
        return None;
    }
    let f = report
        .failed_builds()
        .next()
        .cloned()
        .unwrap_or(BuildResult {
            build: 0,
            seed: 0,
            ok: false,
            reused: false,
            seconds: 0.0,
            command: String::new(),
            error: Some("no variants".into()),
            output_tail: Vec::new(),
            launched: Default::default(),
            code_hash: None,
        });
    let misfired = report.notes.iter().find_map(|n| match n {
        super::Note::Identical(found @ super::identical::Identical::AcrossBuilds { .. }) => {
            Some(found.clone())
        }
        _ => None,
    });
    if report.failed_builds().next().is_none() {
        if let Some(super::identical::Identical::AcrossBuilds {
            build,
            other,
            cause,
            ..
        }) = misfired
        {
            let why = match cause {
                Some(c) if c.compiler_default => {
                    format!("the variant's {} is the compiler's default", c.variant)
                }
                Some(c) if c.own_wins => format!(
                    "{}'s own {} after {{cflags}} overrides the variant's {}",
                    c.build, c.own, c.variant
                ),
                Some(c) => format!(
                    "the variant's {} overrides {}'s own {} before {{cflags}}; leave that source out of --sources",
                    c.variant, c.build, c.own
                ),
                None => "no flag of the templates explains it".into(),
            };
            return Some(Status::new(
                State::BuildFailed,
                Some(format!(
                    "only {} variants differ between the builds, need at least {MIN_VARIANTS}: {build}'s code equals {other}'s in the others ({why})",
                    used.len()
                )),
            ));
        }
    }
    let why = if used.first() != Some(&0) {
        "the default layout (seed 0) did not build".to_string()
    } else {
        format!(
            "only {} variants built for every build, need at least {MIN_VARIANTS}",
            used.len()
        )
    };
    let mut status = build_failed(options, &f);
    status.message = status.message.map(|m| format!("{why}; {m}"));
    Some(status)
}

/// The status of a failed build `f`: which build and seed, why, and the command.
fn build_failed(options: &LayoutOptions, f: &BuildResult) -> Status {
    Status {
        state: State::BuildFailed,
        message: Some(format!(
            "build {} seed {} failed ({}): {}",
            options.builds[f.build].name,
            f.seed,
            f.error.as_deref().unwrap_or("failed"),
            f.command
        )),
        last_output: f.output_tail.clone(),
    }
}

/// A shard's status when any of its builds failed (every variant of a shard
/// must build: the merge counts on it); `None` when all built.
pub(super) fn shard_build_failure(
    options: &LayoutOptions,
    report: &LayoutReport,
) -> Option<Status> {
    let f = report.failed_builds().next()?;
    Some(build_failed(options, f))
}

/// The status when this machine cannot make some planned variant: it needs
/// a source (shift, shuffle, or the heap shim when the plan carries `heap`)
/// that is off here; `None` when all can be made.
pub(super) fn unmakeable(
    variants: &[Variant],
    sources: &[SourceStatus],
    heap: bool,
) -> Option<Status> {
    let off = |s: Source| {
        sources
            .iter()
            .find(|st| st.source == s && !st.active)
            .map(|st| st.detail.clone())
    };
    for v in variants {
        let missing = if v.shift > 0 {
            off(Source::Shift).map(|why| (Source::Shift, why))
        } else {
            None
        }
        .or_else(|| {
            v.shuffle
                .and_then(|_| off(Source::Shuffle).map(|why| (Source::Shuffle, why)))
        })
        .or_else(|| {
            (heap && v.seed != 0)
                .then(|| off(Source::Heap).map(|why| (Source::Heap, why)))
                .flatten()
        });
        if let Some((source, why)) = missing {
            return Some(Status::new(
                State::BuildFailed,
                Some(format!(
                    "this machine cannot make the plan's variant seed {} ({}): {} is off here: {why}",
                    v.seed,
                    v.describe(),
                    source.name()
                )),
            ));
        }
    }
    None
}

/// The prepared run command of every (build, seed) of a batch.
pub(super) fn run_pairs(
    options: &LayoutOptions,
    jobs: &[BuildJob],
    seeds: &[u64],
    heap: Option<&Path>,
) -> Result<Vec<(usize, u64, Prepared)>> {
    let user_preload = std::env::var("LD_PRELOAD").ok();
    let mut pairs = Vec::new();
    for (b, build) in options.builds.iter().enumerate() {
        for &seed in seeds {
            let Some(job) = jobs.iter().find(|j| j.build == b && j.seed == seed) else {
                continue;
            };
            let values = Placeholders::for_run(job.dir.join("bench"), job.dir.clone());
            let argv = builds::substitute(&options.run_template, options.shell, &values)?;
            let spec = CommandSpec {
                name: format!("{} seed {seed}", build.name),
                text: options.run_template.clone(),
                argv,
                shell: options.shell,
            };
            let mut prepared = Prepared::new(&spec)?;
            prepared.dir = Some(job.dir.clone());
            if let Some(shim) = heap {
                prepared.env = super::heap::env(shim, seed, user_preload.as_deref());
            }
            pairs.push((b, seed, prepared));
        }
    }
    Ok(pairs)
}

/// What the sources need: which are active, the shuffle linker, the
/// padding objects by size, and the heap shim.
pub(super) struct Resolved {
    pub statuses: Vec<SourceStatus>,
    pub linker: Option<ShuffleLinker>,
    pub pads: Vec<(u32, PathBuf)>,
    pub heap: Option<PathBuf>,
}

/// Which sources are active, the shuffle linker, the padding objects, and
/// the heap shim.
pub(super) fn resolve_sources(options: &LayoutOptions, work_dir: &Path) -> Resolved {
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
    let mut shim = None;
    if wanted(Source::Heap) {
        statuses.push(match super::heap::shim(&options.work_root) {
            Ok(made) => {
                shim = Some(made);
                SourceStatus {
                    source: Source::Heap,
                    active: true,
                    detail: HEAP_DETAIL.into(),
                }
            }
            Err(e) => off(
                Source::Heap,
                &format!("cannot compile the heap shim: {e:#}"),
            ),
        });
    } else {
        statuses.push(off(Source::Heap, "not in --sources"));
    }
    Resolved {
        statuses,
        linker,
        pads,
        heap: shim,
    }
}

/// What the heap source does, as the report lists it.
pub(super) const HEAP_DETAIL: &str = "LD_PRELOAD allocator shim: the heap's start moved by 0–4080 bytes and every allocation by its own multiple of 16 bytes within 4 KiB (seed 0 runs without it)";

/// Why the heap shim cannot apply to these builds (the first default-layout
/// binary that is static or brings its own allocator), or None.
pub(super) fn heap_inapplicable(options: &LayoutOptions, jobs: &[BuildJob]) -> Option<String> {
    jobs.iter()
        .filter(|j| j.seed == 0 && j.out.exists())
        .find_map(|j| {
            super::heap::inapplicable(&j.out)
                .map(|why| format!("off: build {}: {why}", options.builds[j.build].name))
        })
}

pub(super) fn off(source: Source, why: &str) -> SourceStatus {
    SourceStatus {
        source,
        active: false,
        detail: why.to_string(),
    }
}

/// Assemble the padding objects (16, 32, 48 bytes) with `cc`
/// ([`crate::run::ToolError::Missing`] in the chain when there is none).
pub(super) fn make_pads(work_dir: &Path) -> Result<Vec<(u32, PathBuf)>> {
    let dir = crate::safe_file::private_dir(work_dir, Path::new("pad"))?;
    let mut pads = Vec::new();
    for k in [16u32, 32, 48] {
        let source = dir.join(format!("pad{k}.s"));
        let object = dir.join(format!("pad{k}.o"));
        let text = pad_assembly(k);
        if object.exists() && std::fs::read_to_string(&source).is_ok_and(|s| s == text) {
            pads.push((k, object));
            continue;
        }
        // Shards on one machine may share this directory: assemble under
        // names of this process, then rename into place (atomic), object first.
        let pid = std::process::id();
        let temp_source = dir.join(format!("pad{k}.{pid}.s"));
        let temp_object = dir.join(format!("pad{k}.{pid}.o"));
        std::fs::write(&temp_source, &text)?;
        let cc = launch::tool("cc")?;
        let argv = [
            cc.display().to_string(),
            "-c".to_string(),
            temp_source.display().to_string(),
            "-o".to_string(),
            temp_object.display().to_string(),
        ];
        // Our own padding object: the default build time limit is plenty.
        let compile = Launch {
            timeout: Some(super::BUILD_TIMEOUT),
            ..Launch::new(&argv)
        };
        match compile.run_ok() {
            Ok(_) => {}
            Err((_, Some(outcome))) => bail!(
                "cc -c {} failed ({}): {}",
                source.display(),
                outcome.exit.describe(),
                String::from_utf8_lossy(&outcome.stderr_tail).trim()
            ),
            Err((error, None)) => bail!("cc -c {}: {error}", source.display()),
        }
        std::fs::rename(&temp_object, &object)?;
        std::fs::rename(&temp_source, &source)?;
        pads.push((k, object));
    }
    Ok(pads)
}

/// A stable directory name from the templates, so reruns hit the cache.
pub(super) fn experiment_name(options: &LayoutOptions) -> String {
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

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
