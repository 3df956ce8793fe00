//! The parallel pass over a binary's units (rayon) and the merge of their results:
//! each unit is read into a `Table` and built into layouts once per struct identity;
//! a unit whose split DWARF is missing becomes a warning. A RIP-relative lock site
//! no unit's DWARF covers is named by the data symbol at its address.

use super::builder::Builder;
use super::global_uses::variable_site;
use super::load::{self, directory_of};
use super::lock_uses::SiteIndex;
use super::table::read_table;
use super::{Dwarf, Outcome, Parsed, Seen, Slice, UnitResult};
use crate::structs::types::{
    LockSite, LockStats, LockUse, Mapping, SiteOutcome, StructLayout, Unmapped, VariableSite,
};
use anyhow::{Context, Result};
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Read every struct of `path` (and its split DWARF), and map the lock sites of
/// `index` to members. `progress(done, total)` is called from the reading threads
/// after each unit.
pub fn read_binary(
    path: &Path,
    index: &SiteIndex<'_>,
    aliases: bool,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Parsed> {
    load::with_dwarf(path, |dwarf, package| {
        let headers = load::unit_headers(path, dwarf)?;
        let units = headers.len();
        let dir = directory_of(path);
        let seen = Seen::new();
        let done = AtomicUsize::new(0);
        // Units are handed out in order, one at a time, to every thread: a type
        // is then nearly always laid out first by the lowest unit that has it, the
        // copy `Seen` keeps, and rarely a second time (splitting the list in
        // halves had each thread lay out every common type once).
        let next = AtomicUsize::new(0);
        let read_next = |out: &mut Vec<(usize, Result<UnitResult>)>| loop {
            let unit = next.fetch_add(1, Ordering::Relaxed);
            let Some(&header) = headers.get(unit) else {
                return;
            };
            let offset = header
                .offset()
                .as_debug_info_offset()
                .map(|o| o.0)
                .unwrap_or(0);
            let pass = Pass {
                dir: &dir,
                seen: &seen,
                index,
                aliases,
            };
            let result = read_unit(dwarf, header, package, &pass, unit).with_context(|| {
                format!(
                    "{}: truncated or corrupt DWARF in the unit at .debug_info+{offset:#x}",
                    path.display()
                )
            });
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, units);
            out.push((unit, result));
        };
        let threads = rayon::current_num_threads().clamp(1, units.max(1));
        let mut read: Vec<(usize, Result<UnitResult>)> = (0..threads)
            .into_par_iter()
            .with_max_len(1)
            .flat_map_iter(|_| {
                let mut out = Vec::new();
                read_next(&mut out);
                out
            })
            .collect();
        read.sort_by_key(|r| r.0);
        let results: Vec<Result<UnitResult>> = read.into_iter().map(|r| r.1).collect();
        merge(units, results, index, &seen)
    })
}

/// What every unit of one pass shares: the binary's directory (for split DWARF),
/// the struct identities already claimed, the lock sites to map, and whether
/// typedef aliases are wanted.
struct Pass<'p, 'i> {
    dir: &'p Path,
    seen: &'p Seen,
    index: &'p SiteIndex<'i>,
    aliases: bool,
}

/// One unit's types, or the warning that its split DWARF is missing.
// The unit, where to find its split DWARF, the shared dedup set and the lock
// sites: each is a different input of the one parallel pass.
#[allow(clippy::too_many_arguments)]
fn read_unit<'a>(
    dwarf: &Dwarf<'a>,
    header: gimli::UnitHeader<Slice<'a>>,
    package: Option<&load::Package<'a>>,
    pass: &Pass<'_, '_>,
    unit_index: usize,
) -> Result<UnitResult> {
    let read = load::with_unit(dwarf, header, package, pass.dir, |dwarf, unit| {
        let table = read_table(dwarf, unit)?;
        let mut builder = Builder::new(table, dwarf, unit);
        let locks = builder.lock_uses(pass.index);
        let mut result = builder.build(pass.seen, pass.aliases, unit_index);
        result.locks = locks;
        Ok(result)
    })?;
    Ok(match read {
        load::Read::Walked(r) => r,
        load::Read::Empty => UnitResult::default(),
        load::Read::MissingDwo { name, looked_in } => UnitResult {
            warnings: vec![format!(
                "split DWARF unit {name} not found (looked in {}); its types are missing",
                looked_in
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
            missing_split_units: vec![name],
            ..UnitResult::default()
        },
    })
}

/// The units' results in unit order, duplicates dropped (of equal identities, the
/// lowest unit's copy is kept); the first error wins.
fn merge(
    units: usize,
    results: Vec<Result<UnitResult>>,
    index: &SiteIndex<'_>,
    seen: &Seen,
) -> Result<Parsed> {
    let mut parsed = Parsed {
        structs: Vec::new(),
        uses: Vec::new(),
        units,
        warnings: Vec::new(),
        missing_split_units: Vec::new(),
        lock_uses: Vec::new(),
        lock_stats: LockStats::default(),
        aliases: Vec::new(),
    };
    let mut outcomes: Vec<Option<Outcome>> = vec![None; index.sites.len()];
    let mut variables: Vec<Option<VariableSite>> = vec![None; index.sites.len()];
    for (index, result) in results.into_iter().enumerate() {
        let r = result?;
        for (id, s) in r.structs {
            if seen.kept(id, index) {
                parsed.structs.push(s);
            }
        }
        parsed.uses.extend(r.uses);
        parsed.warnings.extend(r.warnings);
        parsed.missing_split_units.extend(r.missing_split_units);
        for (site, outcome) in r.locks.outcomes {
            let slot = &mut outcomes[site];
            if slot.map_or(true, |old| rank(outcome) < rank(old)) {
                *slot = Some(outcome);
            }
        }
        for (site, v) in r.locks.variables {
            variables[site].get_or_insert(v);
        }
        parsed.lock_uses.extend(r.locks.uses);
        parsed.aliases.extend(r.aliases);
    }
    // Each array use once, the first in unit order.
    let first = firsts(&parsed.uses, |u| u);
    keep(&mut parsed.uses, first);
    // Units hash names by string offset; a name stored inline in one unit and by
    // offset in another gets past that, so drop exact duplicates here (the first
    // in unit order stays).
    let first = firsts(&parsed.structs, exact_key);
    keep(&mut parsed.structs, first);
    // A RIP-relative operand in no unit's global, inside a data symbol (a
    // function's `static`, `dump_running.2`; a variable only the linker names):
    // the symbol names the variable.
    for (k, site) in index.sites.iter().enumerate() {
        let Some(target) = site
            .target
            .filter(|_| outcomes[k].is_none() && !site.segment && site.index.is_none())
        else {
            continue;
        };
        if let Some((start, _, name)) = index.object_at(target) {
            let name = match target - start {
                0 => name.clone(),
                at => format!("{name}+{at}"),
            };
            outcomes[k] = Some(Outcome::Variable);
            variables[k] = Some(variable_site(name, target, site.size, 0));
        }
    }
    parsed.lock_stats = stats(index, &outcomes);
    // A site two units both claim keeps the uses of its best outcome only.
    parsed
        .lock_uses
        .retain(|u| outcomes[u.site] == Some(Outcome::Mapped(u.mapping)));
    parsed
        .lock_uses
        .par_sort_by(|a, b| (&a.record, &a.path, a.site).cmp(&(&b.record, &b.path, b.site)));
    parsed.lock_uses.dedup();
    // The audit list: each site's outcome and the members it maps to (one path per
    // record, the outermost record first).
    let mut members: Vec<Vec<&LockUse>> = vec![Vec::new(); index.sites.len()];
    for u in &parsed.lock_uses {
        members[u.site].push(u);
    }
    let rows: Vec<_> = index
        .sites
        .iter()
        .zip(&outcomes)
        .zip(members)
        .zip(variables)
        .filter(|(((site, _), _), _)| !site.plain)
        .collect();
    parsed.lock_stats.list = rows
        .into_par_iter()
        .map(|(((site, outcome), mut uses), variable)| {
            uses.sort_by(|a, b| b.path.len().cmp(&a.path.len()).then(a.path.cmp(&b.path)));
            let via = uses.iter().find_map(|u| u.via.clone());
            let mut seen = FxHashSet::default();
            uses.retain(|u| seen.insert(u.record.as_str()));
            SiteOutcome {
                address: site.address,
                function: String::new(),
                op: site.op.clone(),
                outcome: match outcome {
                    Some(Outcome::Mapped(Mapping::Exact)) => "exact".to_string(),
                    Some(Outcome::Mapped(Mapping::Inferred)) => "inferred".to_string(),
                    Some(Outcome::Variable) => "variable".to_string(),
                    _ => reason(site, *outcome).label().to_string(),
                },
                members: uses
                    .iter()
                    .map(|u| {
                        let name = u.record.rsplit_once('#').map_or(u.record.as_str(), |r| r.0);
                        format!("{name}.{}", u.path)
                    })
                    .collect(),
                via,
                variable: variable.filter(|_| *outcome == Some(Outcome::Variable)),
            }
        })
        .collect();
    parsed.aliases.sort();
    parsed.aliases.dedup();
    Ok(parsed)
}

/// Exact before a named variable before inferred before unmapped.
fn rank(o: Outcome) -> u8 {
    match o {
        Outcome::Mapped(Mapping::Exact) => 0,
        Outcome::Variable => 1,
        Outcome::Mapped(Mapping::Inferred) => 2,
        Outcome::Unmapped(_) => 3,
    }
}

/// Count each site once, by its best outcome; a site no unit looked at has no DWARF
/// (or, RIP-relative, an address no global covers; `%gs:`, per-CPU data).
fn stats(index: &SiteIndex<'_>, outcomes: &[Option<Outcome>]) -> LockStats {
    let mut s = LockStats {
        sites: index.sites.iter().filter(|x| !x.plain).count(),
        ..LockStats::default()
    };
    for (site, o) in index.sites.iter().zip(outcomes).filter(|x| !x.0.plain) {
        let why = match o {
            Some(Outcome::Mapped(Mapping::Exact)) => {
                s.exact += 1;
                continue;
            }
            Some(Outcome::Mapped(Mapping::Inferred)) => {
                s.inferred += 1;
                continue;
            }
            Some(Outcome::Variable) => {
                s.variable += 1;
                continue;
            }
            _ => reason(site, *o),
        };
        *s.unmapped.entry(why).or_default() += 1;
    }
    s
}

/// Why a site is unmapped: its outcome's reason, or, when no unit looked at it,
/// per-CPU data, a RIP-relative address no global covers, or no DWARF.
fn reason(site: &LockSite, o: Option<Outcome>) -> Unmapped {
    match o {
        Some(Outcome::Unmapped(why)) => why,
        _ if site.segment => Unmapped::Segment,
        _ if site.target.is_some() => Unmapped::UnknownAddress,
        _ => Unmapped::NoDwarf,
    }
}

/// Name, size and every member's name, place and type: equal layouts, equal keys.
/// Whether each item is the first with its key.
fn firsts<'a, T, K: std::hash::Hash + Eq>(items: &'a [T], key: impl Fn(&'a T) -> K) -> Vec<bool> {
    let mut seen = FxHashSet::default();
    seen.reserve(items.len());
    items.iter().map(|x| seen.insert(key(x))).collect()
}

/// Keep the items `which` marks.
fn keep<T>(items: &mut Vec<T>, which: Vec<bool>) {
    let mut which = which.into_iter();
    items.retain(|_| which.next().unwrap_or(true));
}

type ExactKey<'s> = (&'s str, u64, Vec<(&'s str, u64, u64, Option<u64>, &'s str)>);

fn exact_key(s: &StructLayout) -> ExactKey<'_> {
    let members = s
        .members
        .iter()
        .map(|m| {
            (
                m.name.as_str(),
                m.offset,
                m.size,
                m.bit_offset,
                m.type_name.as_str(),
            )
        })
        .collect();
    (s.name.as_str(), s.size, members)
}
