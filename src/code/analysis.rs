//! `code::run`: read each binary's symbols, disassemble every function range
//! (in parallel, aliases once), place functions and loops on lines and
//! windows, rank them by a profile or by their hazards, and diff two builds.
//! Returns facts; `render` words them.

use super::diff;
use super::disasm::{self, Scan};
use super::elf;
use super::function::{Analysis, Function, UarchFacts};
use super::placement::{min_spans, near_end, spans, Geometry, Placement};
use super::profile::{self, base_name, Profile};
use super::uarch::Model;
use super::{
    CodeOptions, CodeReport, Phase, ProfileInfo, Progress, Summary, UarchReport, SCHEMA_VERSION,
};
use anyhow::{Context, Result};
use rayon::prelude::*;
use regex::Regex;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Ranges between two progress reports: often enough for a bar, rare enough
/// to cost nothing next to disassembly.
const REPORT_EVERY: usize = 512;

/// Function ranges disassembled so far over every binary of one run.
struct Tally<'p> {
    done: AtomicUsize,
    total: AtomicUsize,
    progress: &'p (dyn Fn(&Progress) + Sync),
}

impl Tally<'_> {
    fn report(&self, done: usize) {
        (self.progress)(&Progress {
            phase: Phase::Disassemble,
            done,
            total: self.total.load(Ordering::Relaxed),
        });
    }

    fn add_total(&self, ranges: usize) {
        self.total.fetch_add(ranges, Ordering::Relaxed);
        self.report(self.done.load(Ordering::Relaxed));
    }

    fn one_done(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if done % REPORT_EVERY == 0 {
            self.report(done);
        }
    }
}

/// Analyze one binary: symbols, placement, loops and erratum spots, by each
/// of `models` (at least one; the first one's geometry places functions and
/// loops). Functions sharing an address range (aliases) are disassembled once.
pub fn analyze(
    path: &Path,
    models: &[(&'static Model, Geometry)],
    filter: Option<&Regex>,
    with_text: bool,
) -> Result<Analysis> {
    analyze_counted(path, models, filter, with_text, None)
}

/// One model's facts about a function at `address` of `size` bytes.
fn facts(
    model: &Model,
    g: Geometry,
    address: u64,
    size: u64,
    loops: &[disasm::Loop],
    spots: usize,
) -> UarchFacts {
    let p = Placement::of(address, size, g);
    let straddling_loops = loops
        .iter()
        .filter(|l| {
            l.body_bytes <= disasm::TIGHT_LOOP_BYTES
                && spans(l.header, l.body_bytes, g.window) > min_spans(l.body_bytes, g.window)
        })
        .count();
    // A size-0 symbol has no known bytes: no entry flags (README, `code`).
    let entry_near_window_end = size > 0 && near_end(address, g.window);
    let hazards = if model.jcc_erratum { spots } else { 0 };
    UarchFacts {
        uarch: model.uarch,
        window_offset: p.window_offset,
        windows: p.windows,
        extra_windows: p.extra_windows,
        entry_near_window_end,
        straddling_loops,
        jcc_spot_count: spots,
        hazard_score: 2 * straddling_loops as u64
            + hazards as u64
            + u64::from(entry_near_window_end),
    }
}

/// [`analyze`], counting the disassembled ranges in `tally`.
fn analyze_counted(
    path: &Path,
    models: &[(&'static Model, Geometry)],
    filter: Option<&Regex>,
    with_text: bool,
    tally: Option<&Tally>,
) -> Result<Analysis> {
    anyhow::ensure!(!models.is_empty(), "no microarchitecture model to judge by");
    let geometry = models[0].1;
    let tables: Vec<&Model> = models.iter().map(|(m, _)| *m).collect();
    let mapped = crate::elf::Mapped::open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let keep = |name: &str| filter.map_or(true, |re| re.is_match(name));
    let image = elf::read(mapped.bytes(), &keep).with_context(|| path.display().to_string())?;
    let mut warnings = image.warnings.clone();

    // Unique (section, address, size) ranges, disassembled in parallel.
    let mut range_index: HashMap<(usize, u64, u64), usize> = HashMap::new();
    let mut ranges = Vec::new();
    let slots: Vec<usize> = image
        .functions
        .iter()
        .map(|f| {
            *range_index
                .entry((f.section, f.address, f.size))
                .or_insert_with(|| {
                    ranges.push((f.section, f.address, f.size));
                    ranges.len() - 1
                })
        })
        .collect();
    if let Some(t) = tally {
        t.add_total(ranges.len());
    }
    let missing = AtomicUsize::new(0);
    let mut scans: Vec<Scan> = ranges
        .par_iter()
        .map(|&(section, address, size)| {
            if let Some(t) = tally {
                t.one_done();
            }
            let s = &image.sections[section];
            let start = address.wrapping_sub(s.address);
            let available = s.data.len() as u64;
            let empty = || Scan {
                spots: vec![Vec::new(); tables.len()],
                ..Scan::default()
            };
            if size == 0 {
                return empty();
            }
            if address < s.address || start >= available {
                missing.fetch_add(1, Ordering::Relaxed);
                return empty();
            }
            let end = start.saturating_add(size).min(available);
            if end - start < size {
                missing.fetch_add(1, Ordering::Relaxed);
            }
            disasm::scan(
                &s.data[start as usize..end as usize],
                address,
                geometry,
                &tables,
                with_text,
            )
        })
        .collect();
    let missing = missing.into_inner();
    if missing > 0 {
        warnings.push(format!(
            "{missing} function ranges lie (partly) outside their section's bytes and were not fully disassembled"
        ));
    }

    // Aliases share a range: the last user of a scan takes it, others clone.
    let mut users = vec![0usize; scans.len()];
    for &slot in &slots {
        users[slot] += 1;
    }
    let functions = image
        .functions
        .into_iter()
        .zip(slots)
        .map(|(raw, slot)| {
            users[slot] -= 1;
            let scan = if users[slot] == 0 {
                std::mem::take(&mut scans[slot])
            } else {
                scans[slot].clone()
            };
            let placement = Placement::of(raw.address, raw.size, geometry);
            let uarch: Vec<UarchFacts> = models
                .iter()
                .zip(&scan.spots)
                .map(|(&(model, g), spots)| {
                    facts(model, g, raw.address, raw.size, &scan.loops, spots.len())
                })
                .collect();
            let first_spots = scan.spots.first().map_or(0, Vec::len);
            Function {
                name: raw.name,
                symbol: raw.symbol,
                section: image.sections[raw.section].name.clone(),
                placement,
                entry_near_line_end: raw.size > 0 && near_end(raw.address, geometry.line),
                entry_near_window_end: uarch[0].entry_near_window_end,
                loops: scan.loops.clone(),
                jcc_spot_count: first_spots,
                jcc_spots: if with_text {
                    scan.spots.first().cloned().unwrap_or_default()
                } else {
                    Vec::new()
                },
                invalid_bytes: scan.invalid_bytes,
                hot_share: None,
                hazard_score: uarch.iter().map(|u| u.hazard_score).max().unwrap_or(0),
                uarch,
            }
        })
        .collect();
    Ok(Analysis {
        path: path.display().to_string(),
        kind: image.kind.to_string(),
        symbol_source: image.symbol_source,
        functions,
        warnings,
    })
}

/// Set each function's `hot_share` from the profile. Names match exactly
/// (demangled or raw), then by the name without its parameter list. Returns
/// the share of the profile that matched a function.
pub fn apply_profile(analysis: &mut Analysis, profile: &Profile) -> f64 {
    let costs = profile.costs_for(Path::new(&analysis.path));
    let mut bases: HashMap<&str, Vec<&str>> = HashMap::new();
    for name in costs.keys() {
        bases.entry(base_name(name)).or_default().push(name);
    }
    let mut matched: HashMap<&str, f64> = HashMap::new();
    for f in &mut analysis.functions {
        let key = [f.name.as_str(), f.symbol.as_str(), base_name(&f.name)]
            .into_iter()
            .find(|k| costs.contains_key(*k))
            .map(|k| costs.get_key_value(k).map(|(k, _)| k.as_str()))
            .unwrap_or_else(|| match bases.get(base_name(&f.name)).map(Vec::as_slice) {
                Some([only]) => Some(*only),
                _ => None,
            });
        if let Some(key) = key {
            let cost = costs[key];
            f.hot_share = Some(cost / profile.total);
            matched.insert(key, cost);
        }
    }
    matched.values().sum::<f64>() / profile.total
}

/// Worst first: hottest first when a profile is given, then by hazard score,
/// then larger functions, then by address.
pub fn rank(functions: &mut [Function]) {
    functions.sort_by(|a, b| {
        let hot = |f: &Function| f.hot_share.unwrap_or(-1.0);
        hot(b)
            .total_cmp(&hot(a))
            .then(b.hazard_score.cmp(&a.hazard_score))
            .then(b.placement.size.cmp(&a.placement.size))
            .then(a.placement.address.cmp(&b.placement.address))
    });
}

/// Run the whole analysis that `ghostbench code` prints. `progress` hears of
/// the disassembly (from its threads) and of reading the profile.
pub fn run(options: &CodeOptions, progress: &(dyn Fn(&Progress) + Sync)) -> Result<CodeReport> {
    let models = options.models();
    anyhow::ensure!(!models.is_empty(), "no microarchitecture model to judge by");
    let g = models[0].1;
    let tally = Tally {
        done: AtomicUsize::new(0),
        total: AtomicUsize::new(0),
        progress,
    };
    let analyze_one = |path: &Path| {
        analyze_counted(
            path,
            &models,
            options.functions.as_ref(),
            options.verbose,
            Some(&tally),
        )
    };
    let (mut primary, other) = match &options.diff {
        Some(other) => {
            let (a, b) = rayon::join(|| analyze_one(&options.binary), || analyze_one(other));
            (a?, Some(b?))
        }
        None => (analyze_one(&options.binary)?, None),
    };
    let mut warnings = primary.warnings.clone();
    if let Some(re) = &options.functions {
        if primary.functions.is_empty() {
            warnings.push(format!("no function name matches --functions {re}"));
        }
    }
    tally.report(tally.done.load(Ordering::Relaxed));
    let profile = match &options.hot {
        Some(path) => {
            progress(&Progress {
                phase: Phase::Profile,
                done: 0,
                total: 1,
            });
            let profile = profile::read(path)?;
            let matched_share = apply_profile(&mut primary, &profile);
            if matched_share == 0.0 {
                warnings.push(format!(
                    "no function of {} appears in the profile {}",
                    primary.path,
                    path.display()
                ));
            }
            Some(ProfileInfo {
                profile,
                matched_share,
            })
        }
        None => None,
    };
    let diff = match other {
        Some(mut other) => {
            if let Some(info) = &profile {
                apply_profile(&mut other, &info.profile);
            }
            for w in &other.warnings {
                warnings.push(format!("{}: {w}", other.path));
            }
            Some(diff::diff(&primary, &other, g))
        }
        None => None,
    };
    let mut functions = primary.functions;
    rank(&mut functions);
    let reports: Vec<UarchReport> = models
        .iter()
        .enumerate()
        .map(|(i, &(model, geometry))| UarchReport {
            model,
            geometry,
            summary: Summary::of(&functions, i, model),
        })
        .collect();
    Ok(CodeReport {
        schema: crate::doc::Schema::Code.name(),
        schema_version: SCHEMA_VERSION,
        uarch: options.uarch.clone(),
        summary: reports[0].summary.clone(),
        models: reports,
        binary: primary.path,
        kind: primary.kind,
        symbol_source: primary.symbol_source,
        geometry: g,
        function_filter: options.functions.as_ref().map(|r| r.as_str().to_string()),
        warnings,
        profile,
        functions,
        diff,
        command_line: options.command_line.clone(),
    })
}

/// The first loop of the first function `function` matches in `binary`: its
/// offset in its cache line and its body's bytes (None when it has none).
pub fn first_loop(binary: &Path, function: &Regex) -> Result<Option<(u64, u64)>> {
    let options = CodeOptions {
        binary: binary.to_path_buf(),
        functions: Some(function.clone()),
        ..Default::default()
    };
    let report = run(&options, &|_| {})?;
    Ok(report
        .functions
        .iter()
        .flat_map(|f| f.loops.iter())
        .next()
        .map(|l| (l.line_offset, l.body_bytes)))
}
