//! `structs::run`: load a binary's DWARF, summarize every layout, select the
//! structs `--struct` names, find their hazards (and, with `suggest`, a better
//! member order). Returns facts; `render/` words them.

use super::by_use;
use super::dwarf;
use super::elf;
use super::hazards::{self, Hazard};
use super::layout;
use super::locked::{self, LockSites};
use super::suggest;
use super::types::{ArrayUse, StructLayout};
use super::{Phase, Progress, StructsOptions, StructsReport, SCHEMA_VERSION};
use anyhow::Result;
use rayon::prelude::*;
use regex::Regex;
use std::collections::HashMap;

/// Compile a `--struct` filter: an exact name, or an anchored regex.
pub fn name_filter(filter: Option<&str>) -> Result<Option<(String, Option<Regex>)>> {
    let Some(text) = filter else { return Ok(None) };
    let regex = Regex::new(&format!("^(?:{text})$")).ok();
    Ok(Some((text.to_string(), regex)))
}

fn matches(filter: &Option<(String, Option<Regex>)>, name: &str) -> bool {
    match filter {
        None => true,
        Some((exact, regex)) => {
            let short = dwarf::unqualified(name);
            name == exact
                || short == exact
                || regex
                    .as_ref()
                    .is_some_and(|r| r.is_match(name) || r.is_match(short))
        }
    }
}

/// Load `options.binary`, read every struct, find hazards and (with `suggest`)
/// reorders. `progress` hears of every unit read (from the reading threads)
/// and of the start of the hazard pass.
pub fn run(
    options: &StructsOptions,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<StructsReport> {
    if !options.line.is_power_of_two() || options.line < 8 {
        anyhow::bail!(
            "--line must be a power of two of at least 8, got {}",
            options.line
        );
    }
    let filter = name_filter(options.filter.as_deref())?;
    let sites = lock_sites(&options.binary);
    let index = dwarf::SiteIndex::new(&sites.sites, sites.relocatable)
        .with_cfa(&sites.cfa)
        .with_objects(&sites.objects, &sites.statics);
    let parsed = dwarf::read_binary(&options.binary, &index, filter.is_some(), &|done, total| {
        progress(&Progress {
            phase: Phase::Units,
            done,
            total,
        })
    })?;
    let mut lock_stats = parsed.lock_stats;
    let locks = sites.sites.iter().filter(|s| !s.plain);
    for (row, site) in lock_stats.list.iter_mut().zip(locks) {
        row.function = sites
            .functions
            .get(site.function as usize)
            .cloned()
            .unwrap_or_default();
    }
    let mut structs = parsed.structs;
    by_use::attach(&mut structs, &parsed.lock_uses, &sites);
    structs
        .par_iter_mut()
        .for_each(|s| layout::summarize(s, options.line));
    structs.sort_by(|a, b| a.name.cmp(&b.name).then(a.size.cmp(&b.size)));

    let mut uses: HashMap<&str, Vec<&ArrayUse>> = HashMap::new();
    for u in &parsed.uses {
        uses.entry(u.element.as_str()).or_default().push(u);
    }
    // A typedef of a record selects the record (`--struct LZ4_stream_t`).
    let aliased: std::collections::HashSet<&str> = parsed
        .aliases
        .iter()
        .filter(|(alias, _)| matches(&filter, alias))
        .map(|(_, key)| key.as_str())
        .collect();
    let selected: Vec<&StructLayout> = structs
        .iter()
        .filter(|s| matches(&filter, &s.name) || aliased.contains(s.key().as_str()))
        .collect();
    progress(&Progress {
        phase: Phase::Hazards,
        done: 0,
        total: selected.len(),
    });
    let mut found: Vec<Hazard> = selected
        .par_iter()
        .flat_map_iter(|s| {
            let key = s.key();
            let empty = Vec::new();
            let u = uses.get(key.as_str()).unwrap_or(&empty);
            hazards::find(s, u, options.line)
        })
        .collect();
    hazards::rank(&mut found);
    let hazard_counts = hazards::count(&found);
    let hazards_left_out = match options.top {
        Some(n) if found.len() > n => {
            let left_out = found.len() - n;
            found.truncate(n);
            left_out
        }
        _ => 0,
    };
    let mut suggestions = Vec::new();
    let mut no_reorder = Vec::new();
    if options.suggest {
        for s in &selected {
            match suggest::suggest(s, options.line) {
                Some(r) => suggestions.push(r),
                None => no_reorder.push(s.name.clone()),
            }
        }
    }
    let selected_structs = if filter.is_some() {
        selected.into_iter().cloned().collect()
    } else {
        drop(selected);
        structs
    };
    Ok(StructsReport {
        schema: crate::doc::Schema::Structs.name(),
        schema_version: SCHEMA_VERSION,
        binary: options.binary.display().to_string(),
        line: options.line,
        units: parsed.units,
        warnings: parsed.warnings,
        missing_split_units: parsed.missing_split_units,
        lock_sites: lock_stats,
        structs: selected_structs,
        hazards: found,
        hazard_counts,
        hazards_left_out,
        suggestions,
        no_reorder,
    })
}

/// The binary's lock sites; none when it cannot be read (the DWARF reader then
/// reports why).
fn lock_sites(path: &std::path::Path) -> LockSites {
    let Ok(mapped) = elf::open(path) else {
        return LockSites::default();
    };
    match elf::parse(path, mapped.bytes()) {
        Ok(file) => locked::scan(&file),
        Err(_) => LockSites::default(),
    }
}
