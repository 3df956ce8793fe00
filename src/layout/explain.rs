//! `layout --explain` (docs/architecture.md §5): which hot functions sit
//! somewhere else in each build's default layout (seed 0) than in the
//! baseline's, the placement a naive A/B comparison silently changes.
//!
//! Each build's seed-0 binary is analyzed with `code::analyze` and compared
//! with the baseline's by `code::diff::diff_by_name` (demangled names: the
//! builds may come from different compilers). The changes are ranked by a
//! callgrind profile of the baseline's default binary (layout/profile.rs)
//! when valgrind is on PATH, else by how far the code moved inside its cache
//! lines.
//!
//! Functions only one default layout has (by name) are named too, with their
//! share of that side's profile: after an inlining change they are the hot
//! code (the callee inlined away on one side, kept on the other), and the
//! placement table of the matched functions covers little of the time. A
//! build that has functions the baseline lacks is profiled as well, so its
//! own hot functions get a share. The coverage facts say how much of the
//! profiles the table and the one-sided functions hold.
//!
//! Everything fails soft: a binary that cannot be analyzed, or a profile that
//! cannot be taken, is one line in the report and the rest goes on.

use super::explanation::{
    Coverage, Explain, ExplainBuild, ExplainProfile, MovedFunction, OneSided, Ranking, Side,
};
use super::LayoutOptions;
use crate::code::diff::{diff_by_name, PlacementChange};
use crate::code::{analyze, apply_profile, judged, Analysis};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The default-layout binary (`{out}` of seed 0) of every build, in build order.
pub fn default_binaries(work_dir: &Path, options: &LayoutOptions) -> Vec<PathBuf> {
    options
        .builds
        .iter()
        .map(|b| {
            work_dir
                .join(super::plan::sanitize(&b.name))
                .join("0")
                .join("bench")
        })
        .collect()
}

/// Compare every build's default layout with the baseline's. `built[b]` says
/// whether build b's seed 0 built.
pub fn explain(options: &LayoutOptions, work_dir: &Path, built: &[bool], top: usize) -> Explain {
    // One model: the first one named (placement is compared, not tabulated).
    let first = options
        .uarch
        .models
        .first()
        .copied()
        .unwrap_or(crate::code::uarch::Uarch::Generic);
    let models = judged(&[first], 64, None);
    let g = models[0].1;
    let binaries = default_binaries(work_dir, options);
    let mut notes = Vec::new();
    let mut result = Explain {
        uarch: options.uarch.clone(),
        window: g.window,
        baseline_binary: binaries[0].display().to_string(),
        ranking: Ranking::Placement,
        profile: None,
        top,
        notes: Vec::new(),
        builds: Vec::new(),
    };
    let analyze = |b: usize| -> Result<Analysis> {
        if !built.get(b).copied().unwrap_or(false) {
            bail!("its default layout (seed 0) did not build");
        }
        analyze(&binaries[b], &models, None, false)
            .with_context(|| format!("cannot analyze {}", binaries[b].display()))
    };
    let mut baseline = match analyze(0) {
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

    match super::profile::take(options, work_dir, &options.builds[0].name, &binaries[0]) {
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
            coverage: None,
            profile: None,
            one_sided: Vec::new(),
        };
        match analyze(b) {
            Err(e) => {
                let why = format!("{e:#}");
                notes.push(format!("{}: not compared: {why}", build.name));
                entry.error = Some(why);
            }
            Ok(mut analysis) => {
                let d = diff_by_name(&baseline, &analysis, g);
                entry.matched = d.matched;
                entry.only_in_baseline = d.only_in_old;
                entry.only_in_build = d.only_in_new;
                entry.changed = d.changes.len();
                let mut moved: Vec<MovedFunction> = d.changes.iter().map(moved_function).collect();
                let profiled = result.ranking == Ranking::Profile;
                if profiled {
                    // Name the hot functions; count the ones that never ran.
                    let before = moved.len();
                    moved.retain(|m| m.hot_share.is_some_and(|s| s > 0.0));
                    entry.changed_not_run = before - moved.len();
                }
                rank(&mut moved, result.ranking);
                moved.truncate(top);
                entry.functions = moved;
                // After the diff: the build's shares must not rank the matched table.
                let mut build_profiled = false;
                if profiled && entry.only_in_build > 0 {
                    match super::profile::take(options, work_dir, &build.name, &binaries[b]) {
                        Ok(p) => {
                            let matched_share = apply_profile(&mut analysis, &p);
                            build_profiled = matched_share > 0.0;
                            if !build_profiled {
                                notes.push(format!(
                                    "{}: no function of {} appears in its callgrind profile",
                                    build.name,
                                    binaries[b].display()
                                ));
                            }
                            entry.profile = Some(ExplainProfile {
                                path: p.path.clone(),
                                event: p.event.clone(),
                                total: p.total,
                                matched_share,
                            });
                        }
                        Err(e) => notes.push(format!(
                            "{}: {e:#}; its own functions are listed without a share",
                            build.name
                        )),
                    }
                }
                let split = split_by_side(&baseline, &analysis, profiled, build_profiled);
                entry.coverage = profiled.then(|| Coverage {
                    table_share: entry.functions.iter().filter_map(|m| m.hot_share).sum(),
                    matched_share: split.matched_share,
                    only_in_baseline_share: split.only_in_baseline_share,
                    only_in_build_share: build_profiled.then_some(split.only_in_build_share),
                });
                entry.one_sided = split.functions;
                entry.one_sided.truncate(top);
            }
        }
        result.builds.push(entry);
    }
    result.notes = notes;
    result
}

/// Functions by the side that has them, with the profile shares per side.
struct Split {
    matched_share: f64,
    only_in_baseline_share: f64,
    only_in_build_share: f64,
    /// Ranked: hottest first, then largest, then by name.
    functions: Vec<OneSided>,
}

/// Split the two layouts' functions by name into both / baseline only /
/// build only. Shares are per name (a name that occurs twice, e.g. two static
/// functions, is one profile entry), each from its own side's profile. With a
/// side profiled, its one-sided functions that never ran are left out.
fn split_by_side(
    baseline: &Analysis,
    build: &Analysis,
    baseline_profiled: bool,
    build_profiled: bool,
) -> Split {
    let (old, new) = (by_name(baseline), by_name(build));
    let mut split = Split {
        matched_share: 0.0,
        only_in_baseline_share: 0.0,
        only_in_build_share: 0.0,
        functions: Vec::new(),
    };
    let mut one_sided = |name: &str, side, (size, share): (u64, Option<f64>), profiled: bool| {
        let share = share.unwrap_or(0.0);
        match side {
            Side::Baseline => split.only_in_baseline_share += share,
            Side::Build => split.only_in_build_share += share,
        }
        if !profiled || share > 0.0 {
            split.functions.push(OneSided {
                name: name.to_string(),
                side,
                size,
                share: profiled.then_some(share),
            });
        }
    };
    for (&name, &value) in &old {
        if new.contains_key(name) {
            split.matched_share += value.1.unwrap_or(0.0);
        } else {
            one_sided(name, Side::Baseline, value, baseline_profiled);
        }
    }
    for (&name, &value) in &new {
        if !old.contains_key(name) {
            one_sided(name, Side::Build, value, build_profiled);
        }
    }
    split.functions.sort_by(|a, b| {
        b.share
            .unwrap_or(-1.0)
            .total_cmp(&a.share.unwrap_or(-1.0))
            .then(b.size.cmp(&a.size))
            .then(a.name.cmp(&b.name))
    });
    split
}

/// Name → (largest size, largest share) of a layout's functions.
fn by_name(a: &Analysis) -> BTreeMap<&str, (u64, Option<f64>)> {
    let mut names: BTreeMap<&str, (u64, Option<f64>)> = BTreeMap::new();
    for f in &a.functions {
        let e = names.entry(f.name.as_str()).or_insert((0, None));
        e.0 = e.0.max(f.placement.size);
        e.1 = match (e.1, f.hot_share) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
    }
    names
}

/// Circular distance between two offsets in a line of `line` bytes.
fn circular(a: u64, b: u64, line: u64) -> u64 {
    let d = a.abs_diff(b) % line;
    d.min(line - d)
}

fn moved_function(c: &PlacementChange) -> MovedFunction {
    let line = crate::code::placement::Geometry::default().line;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::diff::ChangeReason;

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

    fn analysis(functions: &[(&str, u64, Option<f64>)]) -> Analysis {
        let g = crate::code::placement::Geometry::default();
        Analysis {
            path: "x".into(),
            kind: "executable".into(),
            symbol_source: crate::code::elf::SymbolSource::Symtab,
            functions: functions
                .iter()
                .enumerate()
                .map(|(i, &(name, size, hot_share))| crate::code::Function {
                    name: name.into(),
                    symbol: name.into(),
                    section: ".text".into(),
                    placement: crate::code::placement::Placement::of(
                        0x1000 + 0x100 * i as u64,
                        size,
                        g,
                    ),
                    entry_near_line_end: false,
                    entry_near_window_end: false,
                    loops: vec![],
                    jcc_spot_count: 0,
                    jcc_spots: vec![],
                    invalid_bytes: 0,
                    hot_share,
                    hazard_score: 0,
                    uarch: vec![],
                })
                .collect(),
            warnings: vec![],
        }
    }

    #[test]
    fn one_sided_functions_carry_their_own_sides_shares() {
        // The baseline inlined `decode` into main; the build kept it, and an
        // identical static `helper` twice (one profile entry, counted once).
        let baseline = analysis(&[
            ("main", 400, Some(0.9)),
            ("helper", 20, Some(0.04)),
            ("helper", 20, Some(0.04)),
            ("gone_cold", 80, Some(0.0)),
            ("gone_warm", 30, Some(0.02)),
        ]);
        let build = analysis(&[
            ("main", 100, Some(0.05)),
            ("decode", 60, Some(0.85)),
            ("helper", 20, Some(0.04)),
            ("new_cold", 500, Some(0.0)),
        ]);
        let split = split_by_side(&baseline, &build, true, true);
        assert!(
            (split.matched_share - 0.94).abs() < 1e-12,
            "{}",
            split.matched_share
        );
        assert!((split.only_in_baseline_share - 0.02).abs() < 1e-12);
        assert!((split.only_in_build_share - 0.85).abs() < 1e-12);
        let names: Vec<(&str, Side, Option<f64>)> = split
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.side, f.share))
            .collect();
        // Functions that never ran on a profiled side are left out.
        assert_eq!(
            names,
            [
                ("decode", Side::Build, Some(0.85)),
                ("gone_warm", Side::Baseline, Some(0.02)),
            ]
        );
        // The build not profiled: its one-sided functions stay, by size, without a share.
        let split = split_by_side(&baseline, &build, true, false);
        let names: Vec<(&str, Option<f64>)> = split
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.share))
            .collect();
        assert_eq!(
            names,
            [
                ("gone_warm", Some(0.02)),
                ("new_cold", None),
                ("decode", None)
            ]
        );
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
