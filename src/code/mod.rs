//! Code placement (`ghostbench code`, docs/architecture.md §6): where every function and loop
//! of an x86-64 ELF binary lands relative to cache lines and DSB windows, which
//! branches hit the JCC erratum, which functions a profile says are hot, and
//! what moved between two builds.
//!
//! The modules: `elf` (reading and checking the file, symbols), `demangle`,
//! `placement` (the arithmetic), `disasm` (loops and erratum spots), `profile`
//! (callgrind, cachegrind, perf script) and `diff` (placement changes, also
//! used by `layout --explain`).

pub mod demangle;
pub mod diff;
pub mod disasm;
pub mod elf;
pub mod placement;
pub mod profile;
pub mod render;

use anyhow::{Context, Result};
use disasm::{JccSpot, Loop, Scan};
use elf::SymbolSource;
use placement::{near_end, Geometry, Placement};
use profile::{base_name, Profile};
use rayon::prelude::*;
use regex::Regex;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Version of the JSON document written by `--json` (docs/json-schema.md).
pub const SCHEMA_VERSION: u32 = 1;

/// Everything `ghostbench code` needs to know, one field per CLI option.
#[derive(Debug, Clone)]
pub struct CodeOptions {
    pub binary: PathBuf,
    /// Only functions whose demangled name matches.
    pub functions: Option<Regex>,
    /// A profile to rank functions by.
    pub hot: Option<PathBuf>,
    /// A second build to compare placements with.
    pub diff: Option<PathBuf>,
    pub geometry: Geometry,
    /// List erratum spots and loops, with their disassembly.
    pub verbose: bool,
    /// Rows in the terminal tables (0 = all). The JSON always has everything.
    pub limit: usize,
}

/// One function: where it sits, its loops and its erratum spots.
#[derive(Debug, Clone, Serialize)]
pub struct Function {
    /// Demangled name.
    pub name: String,
    /// The symbol as written in the binary.
    pub symbol: String,
    pub section: String,
    #[serde(flatten)]
    pub placement: Placement,
    /// Entry in the last 16 bytes of its cache line / DSB window.
    pub entry_near_line_end: bool,
    pub entry_near_window_end: bool,
    pub loops: Vec<Loop>,
    /// Instructions (or fused pairs) hit by the JCC erratum.
    pub jcc_spot_count: usize,
    /// The spots themselves; only with `--verbose`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jcc_spots: Vec<JccSpot>,
    /// Bytes of the symbol's range that did not decode as instructions.
    pub invalid_bytes: u64,
    /// Share of the profile's total cost, with `--hot`.
    pub hot_share: Option<f64>,
    /// The ranking key without a profile: 2 per tight loop that straddles a
    /// window needlessly, 1 per erratum spot, 1 for an entry near a window's end.
    pub hazard_score: u64,
}

impl Function {
    pub fn straddling_loops(&self) -> usize {
        self.loops.iter().filter(|l| l.straddles()).count()
    }
}

/// One binary, analyzed.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    pub path: String,
    /// "executable", "shared object or PIE", "relocatable object".
    pub kind: String,
    pub symbol_source: SymbolSource,
    /// Functions in address order.
    pub functions: Vec<Function>,
    pub warnings: Vec<String>,
}

/// Analyze one binary: symbols, placement, loops and erratum spots. Functions
/// sharing an address range (aliases) are disassembled once.
pub fn analyze(
    path: &Path,
    geometry: Geometry,
    filter: Option<&Regex>,
    with_text: bool,
) -> Result<Analysis> {
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
    let missing = std::sync::atomic::AtomicUsize::new(0);
    let mut scans: Vec<Scan> = ranges
        .par_iter()
        .map(|&(section, address, size)| {
            let s = &image.sections[section];
            let start = address.wrapping_sub(s.address);
            let available = s.data.len() as u64;
            if size == 0 {
                return Scan::default();
            }
            if address < s.address || start >= available {
                missing.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Scan::default();
            }
            let end = start.saturating_add(size).min(available);
            if end - start < size {
                missing.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            disasm::scan(
                &s.data[start as usize..end as usize],
                address,
                geometry,
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
            let entry_near_window_end = raw.size > 0 && near_end(raw.address, geometry.window);
            let mut f = Function {
                name: raw.name,
                symbol: raw.symbol,
                section: image.sections[raw.section].name.clone(),
                placement,
                entry_near_line_end: raw.size > 0 && near_end(raw.address, geometry.line),
                entry_near_window_end,
                loops: scan.loops.clone(),
                jcc_spot_count: scan.spots.len(),
                jcc_spots: if with_text {
                    scan.spots.clone()
                } else {
                    Vec::new()
                },
                invalid_bytes: scan.invalid_bytes,
                hot_share: None,
                hazard_score: 0,
            };
            f.hazard_score = 2 * f.straddling_loops() as u64
                + f.jcc_spot_count as u64
                + u64::from(entry_near_window_end);
            f
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

/// Totals over the analyzed functions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub functions: usize,
    pub loops: usize,
    /// Tight loops (body <= 128 B) touching more DSB windows than their size needs.
    pub straddling_loops: usize,
    pub jcc_spots: usize,
    pub functions_with_jcc_spots: usize,
    pub entries_near_window_end: usize,
}

impl Summary {
    pub fn of(functions: &[Function]) -> Summary {
        let mut s = Summary {
            functions: functions.len(),
            ..Summary::default()
        };
        for f in functions {
            s.loops += f.loops.len();
            s.straddling_loops += f.straddling_loops();
            s.jcc_spots += f.jcc_spot_count;
            s.functions_with_jcc_spots += usize::from(f.jcc_spot_count > 0);
            s.entries_near_window_end += usize::from(f.entry_near_window_end);
        }
        s
    }
}

/// The profile as reported: where it came from and how much of it matched.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileInfo {
    #[serde(flatten)]
    pub profile: Profile,
    /// Share of the profile's total that landed in this binary's functions.
    pub matched_share: f64,
}

/// The result of `ghostbench code`, as printed and as written by `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct CodeReport {
    pub schema: &'static str,
    pub schema_version: u32,
    pub binary: String,
    pub kind: String,
    pub symbol_source: SymbolSource,
    pub geometry: Geometry,
    pub function_filter: Option<String>,
    pub warnings: Vec<String>,
    pub summary: Summary,
    pub profile: Option<ProfileInfo>,
    /// Ranked: hottest first with a profile, else worst hazards first.
    pub functions: Vec<Function>,
    pub diff: Option<diff::Diff>,
    pub command_line: Vec<String>,
}

/// Run the whole analysis that `ghostbench code` prints.
pub fn run(options: &CodeOptions) -> Result<CodeReport> {
    let g = options.geometry;
    let analyze_one = |path: &Path| analyze(path, g, options.functions.as_ref(), options.verbose);
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
    let profile = match &options.hot {
        Some(path) => {
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
    Ok(CodeReport {
        schema: "ghostbench.code",
        schema_version: SCHEMA_VERSION,
        binary: primary.path,
        kind: primary.kind,
        symbol_source: primary.symbol_source,
        geometry: g,
        function_filter: options.functions.as_ref().map(|r| r.as_str().to_string()),
        warnings,
        summary: Summary::of(&functions),
        profile,
        functions,
        diff,
        command_line: std::env::args().collect(),
    })
}
