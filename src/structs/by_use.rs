//! Atomics by use, step 3: the members the DWARF pass mapped lock sites to become
//! atomics of their struct (`SyncMember` with `by_use` and the evidence: up to 3
//! sites, their count and functions), or add their evidence to a typed atomic at
//! the same place. Every hazard pass then treats them like typed atomics. Plain
//! stores mapped exactly become the struct's `writes` (false sharing's evidence of
//! a member written elsewhere), never atomics.

use super::locked::LockSites;
use super::types::{
    LockEvidence, LockUse, Mapping, PlainWrites, SiteRef, StructLayout, SyncKind, SyncMember,
};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};

/// Sites listed per member at most.
pub const MAX_SITES: usize = 3;

/// Add the mapped lock uses to the structs they name (by `name#size`).
pub fn attach(structs: &mut [StructLayout], uses: &[LockUse], sites: &LockSites) {
    let mut by_record: HashMap<&str, Vec<&LockUse>> = HashMap::new();
    let mut stores: HashMap<&str, Vec<&LockUse>> = HashMap::new();
    for u in uses {
        if sites.sites[u.site].plain {
            if u.mapping == Mapping::Exact {
                stores.entry(u.record.as_str()).or_default().push(u);
            }
        } else {
            by_record.entry(u.record.as_str()).or_default().push(u);
        }
    }
    structs.par_iter_mut().for_each(|s| {
        let key = s.key();
        if let Some(list) = stores.get(key.as_str()) {
            s.writes = writes(list, sites);
        }
        let Some(list) = by_record.get(key.as_str()) else {
            return;
        };
        let mut by_path: HashMap<&str, Vec<&LockUse>> = HashMap::new();
        for u in list {
            by_path.entry(u.path.as_str()).or_default().push(u);
        }
        let mut paths: Vec<&str> = by_path.keys().copied().collect();
        paths.sort_unstable();
        for path in paths {
            let group = &by_path[path];
            let evidence = evidence(group, sites);
            // The widest operand seen on the member (a byte-wide `lock orb` on one
            // of its bytes covers less of it than a `lock btsq`).
            let widest = group
                .iter()
                .max_by_key(|u| (u.size, std::cmp::Reverse(u.offset)))
                .unwrap_or(&group[0]);
            let (offset, size) = (widest.offset, widest.size);
            // A typed atomic or lock covering the same bytes takes the evidence.
            if let Some(m) = s
                .sync_members
                .iter_mut()
                .find(|m| m.offset <= offset && offset + size <= m.offset + m.size.max(1))
            {
                m.locked = Some(evidence);
                continue;
            }
            let top = s
                .members
                .iter_mut()
                .find(|m| m.name == path && !m.name.is_empty());
            let type_name = top
                .as_ref()
                .map(|m| m.type_name.clone())
                .unwrap_or_default();
            if let Some(m) = top {
                m.sync = Some(SyncKind::Atomic);
            }
            s.sync_members.push(SyncMember {
                path: path.to_string(),
                offset,
                size,
                kind: SyncKind::Atomic,
                type_name,
                by_use: true,
                locked: Some(evidence),
            });
        }
        s.sync_members.sort_by_key(|m| m.offset);
    });
}

/// The evidence of one member: exact sites first, lowest address first.
fn evidence(group: &[&LockUse], sites: &LockSites) -> LockEvidence {
    let mut order: Vec<(bool, u64, usize)> = group
        .iter()
        .map(|u| {
            (
                u.mapping != Mapping::Exact,
                sites.sites[u.site].address,
                u.site,
            )
        })
        .collect();
    order.sort_unstable();
    order.dedup_by_key(|o| o.1);
    let functions: BTreeSet<u32> = order.iter().map(|o| sites.sites[o.2].function).collect();
    LockEvidence {
        sites: order
            .iter()
            .take(MAX_SITES)
            .map(|o| {
                let mapping = if o.0 {
                    Mapping::Inferred
                } else {
                    Mapping::Exact
                };
                let mut r = site_ref(sites, o.2, mapping);
                r.via = group
                    .iter()
                    .find(|u| u.site == o.2 && u.via.is_some())
                    .and_then(|u| u.via.clone());
                r
            })
            .collect(),
        count: order.len(),
        functions: functions.len(),
        all_functions: functions
            .iter()
            .filter_map(|f| sites.functions.get(*f as usize).cloned())
            .collect(),
        inferred: order.iter().all(|o| o.0),
    }
}

/// Site `index` of `sites` as listed in a finding's evidence.
fn site_ref(sites: &LockSites, index: usize, mapping: Mapping) -> SiteRef {
    let site = &sites.sites[index];
    SiteRef {
        address: site.address,
        function: sites
            .functions
            .get(site.function as usize)
            .cloned()
            .unwrap_or_default(),
        op: site.op.clone(),
        mapping,
        via: None,
    }
}

/// A struct's plain stores grouped by member path, lowest address first.
fn writes(list: &[&LockUse], sites: &LockSites) -> Vec<PlainWrites> {
    let mut by_path: HashMap<&str, PlainWrites> = HashMap::new();
    for u in list {
        let w = by_path
            .entry(u.path.as_str())
            .or_insert_with(|| PlainWrites {
                path: u.path.clone(),
                offset: u.offset,
                size: u.size,
                sites: Vec::new(),
            });
        if u.offset < w.offset {
            w.size = (w.offset + w.size).max(u.offset + u.size) - u.offset;
            w.offset = u.offset;
        } else {
            w.size = w.size.max(u.offset + u.size - w.offset);
        }
        w.sites.push(site_ref(sites, u.site, Mapping::Exact));
    }
    let mut out: Vec<PlainWrites> = by_path.into_values().collect();
    for w in &mut out {
        w.sites.sort();
        w.sites.dedup_by_key(|x| x.address);
    }
    out.sort_by(|a, b| (a.offset, &a.path).cmp(&(b.offset, &b.path)));
    out
}
