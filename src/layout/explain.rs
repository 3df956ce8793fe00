//! `layout --explain` (DESIGN.md §5, last bullet): which hot functions sit
//! somewhere else in each build's default layout (seed 0) than in the
//! baseline's, the placement a naive A/B comparison silently changes.
//!
//! Each build's seed-0 binary is analysed with `code::analyze` and compared
//! with the baseline's by `code::diff::diff_by_name` (demangled names: the
//! builds may come from different compilers). The changes are ranked by a
//! callgrind profile of the baseline's default binary when valgrind is on
//! PATH, else by how far the code moved inside its cache lines. Everything
//! fails soft: a binary that cannot be analysed, or a profile that cannot be
//! taken, is one line in the report and the rest goes on.

use super::builds::{self, Placeholders};
use super::LayoutOptions;
use crate::code::diff::{diff_by_name, ChangeReason, PlacementChange};
use crate::code::placement::Geometry;
use crate::code::{analyze, apply_profile, profile, Analysis};
use crate::run::command::resolve_program;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long callgrind may run the baseline when `--timeout` is not given.
pub const PROFILE_TIMEOUT: Duration = Duration::from_secs(60);

/// How the moved functions are ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ranking {
    /// By the baseline's callgrind profile (share of its cost), then by `moved_bytes`.
    Profile,
    /// By `moved_bytes`, then by the number of reasons and by size.
    Placement,
}

/// The profile used to rank, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainProfile {
    pub path: String,
    /// The event ranked on (callgrind's Ir: instructions executed).
    pub event: String,
    pub total: f64,
    /// Share of the profile that landed in the baseline binary's functions.
    pub matched_share: f64,
}

/// One function whose placement differs from the baseline's.
#[derive(Debug, Clone, Serialize)]
pub struct MovedFunction {
    /// Demangled name (the match key).
    pub name: String,
    pub old_address: u64,
    pub new_address: u64,
    pub old_size: u64,
    pub new_size: u64,
    /// Entry offsets in the 64-byte line and 32-byte window, baseline → build.
    pub old_line_offset: u64,
    pub new_line_offset: u64,
    pub old_window_offset: u64,
    pub new_window_offset: u64,
    pub reasons: Vec<ChangeReason>,
    /// Loops whose header moved inside its line.
    pub loops_moved: usize,
    /// How far the code moved inside its cache lines: the circular distance
    /// (0–32 bytes) between old and new line offsets of the entry, plus that
    /// of every loop header. The ranking key without a profile.
    pub moved_bytes: u64,
    /// Share of the baseline profile's cost, when there is one.
    pub hot_share: Option<f64>,
}

/// One build's default layout against the baseline's.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainBuild {
    pub build: String,
    pub binary: String,
    /// Why this build could not be compared; the counts are then 0.
    pub error: Option<String>,
    /// Functions matched by demangled name.
    pub matched: usize,
    pub only_in_baseline: usize,
    pub only_in_build: usize,
    /// Matched functions whose placement differs.
    pub changed: usize,
    /// With a profile: changed functions it never saw run, left out of `functions`.
    pub changed_not_run: usize,
    /// The top `--explain-top` changes, ranked.
    pub functions: Vec<MovedFunction>,
}

/// The `explain` section of the layout report.
#[derive(Debug, Clone, Serialize)]
pub struct Explain {
    pub baseline_binary: String,
    pub ranking: Ranking,
    pub profile: Option<ExplainProfile>,
    pub top: usize,
    /// One line each: why there is no profile, a binary that failed, etc.
    pub notes: Vec<String>,
    /// One per non-baseline build.
    pub builds: Vec<ExplainBuild>,
}

/// The default-layout binary (`{out}` of seed 0) of every build, in build order.
pub fn default_binaries(work_dir: &Path, options: &LayoutOptions) -> Vec<PathBuf> {
    options
        .builds
        .iter()
        .map(|b| {
            work_dir
                .join(super::experiment::sanitize(&b.name))
                .join("0")
                .join("bench")
        })
        .collect()
}

/// Compare every build's default layout with the baseline's. `built[b]` says
/// whether build b's seed 0 built.
pub fn explain(options: &LayoutOptions, work_dir: &Path, built: &[bool], top: usize) -> Explain {
    let g = Geometry::default();
    let binaries = default_binaries(work_dir, options);
    let mut notes = Vec::new();
    let mut result = Explain {
        baseline_binary: binaries[0].display().to_string(),
        ranking: Ranking::Placement,
        profile: None,
        top,
        notes: Vec::new(),
        builds: Vec::new(),
    };
    let analyse = |b: usize| -> Result<Analysis> {
        if !built.get(b).copied().unwrap_or(false) {
            bail!("its default layout (seed 0) did not build");
        }
        analyze(&binaries[b], g, None, false)
            .with_context(|| format!("cannot analyse {}", binaries[b].display()))
    };
    let mut baseline = match analyse(0) {
        Ok(a) => a,
        Err(e) => {
            notes.push(format!(
                "no placement comparison: baseline {}: {e:#}",
                options.builds[0].name
            ));
            result.notes = notes;
            return result;
        }
    };

    match take_profile(options, work_dir, &binaries[0]) {
        Ok(p) => {
            let matched_share = apply_profile(&mut baseline, &p);
            if matched_share > 0.0 {
                result.ranking = Ranking::Profile;
            } else {
                notes.push(format!(
                    "no function of {} appears in its callgrind profile; ranking by how far code moved",
                    binaries[0].display()
                ));
            }
            result.profile = Some(ExplainProfile {
                path: p.path.clone(),
                event: p.event.clone(),
                total: p.total,
                matched_share,
            });
        }
        Err(e) => notes.push(format!("{e:#}; ranking by how far code moved")),
    }

    for (b, build) in options.builds.iter().enumerate().skip(1) {
        let mut entry = ExplainBuild {
            build: build.name.clone(),
            binary: binaries[b].display().to_string(),
            error: None,
            matched: 0,
            only_in_baseline: 0,
            only_in_build: 0,
            changed: 0,
            changed_not_run: 0,
            functions: Vec::new(),
        };
        match analyse(b) {
            Err(e) => {
                let why = format!("{e:#}");
                notes.push(format!("{}: not compared: {why}", build.name));
                entry.error = Some(why);
            }
            Ok(analysis) => {
                let d = diff_by_name(&baseline, &analysis, g);
                entry.matched = d.matched;
                entry.only_in_baseline = d.only_in_old;
                entry.only_in_build = d.only_in_new;
                entry.changed = d.changes.len();
                let mut moved: Vec<MovedFunction> = d.changes.iter().map(moved_function).collect();
                if result.ranking == Ranking::Profile {
                    // Name the hot functions; count the ones that never ran.
                    let before = moved.len();
                    moved.retain(|m| m.hot_share.is_some_and(|s| s > 0.0));
                    entry.changed_not_run = before - moved.len();
                }
                rank(&mut moved, result.ranking);
                moved.truncate(top);
                entry.functions = moved;
            }
        }
        result.builds.push(entry);
    }
    result.notes = notes;
    result
}

/// Circular distance between two offsets in a line of `line` bytes.
fn circular(a: u64, b: u64, line: u64) -> u64 {
    let d = a.abs_diff(b) % line;
    d.min(line - d)
}

fn moved_function(c: &PlacementChange) -> MovedFunction {
    let line = Geometry::default().line;
    let loops_moved = c
        .loops
        .iter()
        .filter(|l| l.old_line_offset != l.new_line_offset)
        .count();
    let moved_bytes = circular(c.old.line_offset, c.new.line_offset, line)
        + c.loops
            .iter()
            .map(|l| circular(l.old_line_offset, l.new_line_offset, line))
            .sum::<u64>();
    MovedFunction {
        name: c.name.clone(),
        old_address: c.old.address,
        new_address: c.new.address,
        old_size: c.old.size,
        new_size: c.new.size,
        old_line_offset: c.old.line_offset,
        new_line_offset: c.new.line_offset,
        old_window_offset: c.old.window_offset,
        new_window_offset: c.new.window_offset,
        reasons: c.reasons.clone(),
        loops_moved,
        moved_bytes,
        hot_share: c.hot_share,
    }
}

/// Hottest first with a profile (functions it never saw last), else (and
/// then) the largest move, the most reasons, the largest function, the name.
pub fn rank(moved: &mut [MovedFunction], ranking: Ranking) {
    moved.sort_by(|a, b| {
        let hot = |m: &MovedFunction| match ranking {
            Ranking::Profile => m.hot_share.unwrap_or(-1.0),
            Ranking::Placement => 0.0,
        };
        hot(b)
            .total_cmp(&hot(a))
            .then(b.moved_bytes.cmp(&a.moved_bytes))
            .then(b.reasons.len().cmp(&a.reasons.len()))
            .then(b.old_size.cmp(&a.old_size))
            .then(a.name.cmp(&b.name))
    });
}

/// Run the baseline's default binary once under callgrind (the run template,
/// bounded by `--timeout` or [`PROFILE_TIMEOUT`]) and read the profile.
fn take_profile(
    options: &LayoutOptions,
    work_dir: &Path,
    binary: &Path,
) -> Result<profile::Profile> {
    let valgrind = resolve_program("valgrind", std::env::var_os("PATH"))
        .map_err(|_| anyhow::anyhow!("valgrind not found, so no profile"))?;
    let dir = work_dir.join("explain");
    // Old profiles must not be read as this one.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let values = Placeholders {
        cflags: Vec::new(),
        ldflags: Vec::new(),
        out: binary.to_path_buf(),
        dir: binary.parent().unwrap_or(Path::new(".")).to_path_buf(),
    };
    let argv = builds::substitute(&options.run_template, options.shell, &values)
        .context("cannot profile: run template")?;
    let log = dir.join("valgrind.log");
    let stderr =
        std::fs::File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
    // %p: with --shell (or a wrapper script) every child process writes its own file.
    let mut child = Command::new(&valgrind)
        .arg("--tool=callgrind")
        .arg("--trace-children=yes")
        .arg(format!(
            "--callgrind-out-file={}",
            dir.join("callgrind.out.%p").display()
        ))
        .arg("--")
        .args(&argv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("cannot start {}", valgrind.display()))?;
    let limit = options.timeout.unwrap_or(PROFILE_TIMEOUT);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for callgrind")? {
            break status;
        }
        if started.elapsed() > limit || crate::run::spawn::interrupted() {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "callgrind profile of {} stopped after {:.0} s",
                binary.display(),
                limit.as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        let tail = std::fs::read_to_string(&log).unwrap_or_default();
        let last = tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!(
            "callgrind run of {} failed ({status}): {last}",
            binary.display()
        );
    }
    // The profile whose objects include the binary, and the largest of those.
    let key = profile::object_key(&binary.to_string_lossy());
    let mut best: Option<profile::Profile> = None;
    for entry in std::fs::read_dir(&dir)?.flatten() {
        let path = entry.path();
        if !path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("callgrind.out."))
        {
            continue;
        }
        let Ok(p) = profile::read(&path) else {
            continue;
        };
        let has_binary = p.entries.keys().any(|(object, _)| *object == key);
        if has_binary && best.as_ref().map_or(true, |b| p.total > b.total) {
            best = Some(p);
        }
    }
    best.with_context(|| format!("callgrind wrote no profile of {}", binary.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(name: &str, moved_bytes: u64, hot: Option<f64>) -> MovedFunction {
        MovedFunction {
            name: name.into(),
            old_address: 0,
            new_address: 0,
            old_size: 10,
            new_size: 10,
            old_line_offset: 0,
            new_line_offset: 0,
            old_window_offset: 0,
            new_window_offset: 0,
            reasons: vec![ChangeReason::OffsetMoved],
            loops_moved: 0,
            moved_bytes,
            hot_share: hot,
        }
    }

    #[test]
    fn circular_distance_wraps_around_the_line() {
        assert_eq!(circular(0, 16, 64), 16);
        assert_eq!(circular(48, 0, 64), 16);
        assert_eq!(circular(0, 32, 64), 32);
        assert_eq!(circular(5, 5, 64), 0);
    }

    #[test]
    fn ranks_by_profile_then_by_move() {
        let mut v = vec![
            moved("cold_far", 32, None),
            moved("hot", 4, Some(0.9)),
            moved("warm", 16, Some(0.1)),
        ];
        rank(&mut v, Ranking::Profile);
        let names: Vec<&str> = v.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["hot", "warm", "cold_far"]);
        rank(&mut v, Ranking::Placement);
        let names: Vec<&str> = v.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["cold_far", "warm", "hot"]);
    }
}
