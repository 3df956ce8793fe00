//! Layout hazards of one struct (docs/architecture.md §7): atomics that can cross a cache line
//! (alone, and as elements of every array of the struct the binary declares),
//! misaligned members, array elements that straddle lines, false sharing (`sharing`),
//! and holes worth reclaiming. Each finding is a fact (`finding`): the exact offsets, element
//! indices and evidence, never a sentence (`render::hazards` words them); `count`
//! sums them by kind and severity.

mod finding;
mod sharing;

use super::suggest;
use super::types::{ArrayUse, StructLayout, SyncKind, SyncMember};
use serde::Serialize;

pub use finding::{
    ArrayRef, Detail, FalseSharingLine, Hazard, HazardKind, Severity, WrittenElsewhere,
};

/// Worst first: severity, then how bad, then name for a stable order.
pub fn rank(hazards: &mut [Hazard]) {
    hazards.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then(a.kind.cmp(&b.kind))
            .then(b.score.total_cmp(&a.score))
            .then(a.struct_name.cmp(&b.struct_name))
            .then(a.offset.cmp(&b.offset))
    });
}

/// The hazards found, by kind and severity: what a report ends with, and what
/// `--json` and `--sarif` carry, whatever `--top` leaves out of the list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub total: usize,
    pub error: usize,
    pub warning: usize,
    pub note: usize,
    /// Distinct structs with at least one hazard.
    pub structs: usize,
    /// One row per kind, in rank order, every kind present (zeros included).
    pub by_kind: Vec<KindCount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KindCount {
    pub kind: HazardKind,
    pub total: usize,
    pub error: usize,
    pub warning: usize,
    pub note: usize,
}

/// Counts `hazards` by kind and severity.
pub fn count(hazards: &[Hazard]) -> Counts {
    let mut by_kind: Vec<KindCount> = HazardKind::ALL
        .iter()
        .map(|&kind| KindCount {
            kind,
            total: 0,
            error: 0,
            warning: 0,
            note: 0,
        })
        .collect();
    let mut c = Counts::default();
    let mut structs = std::collections::HashSet::new();
    for h in hazards {
        let row = &mut by_kind[HazardKind::ALL
            .iter()
            .position(|k| *k == h.kind)
            .unwrap_or(0)];
        row.total += 1;
        c.total += 1;
        let (r, all) = match h.severity {
            Severity::Error => (&mut row.error, &mut c.error),
            Severity::Warning => (&mut row.warning, &mut c.warning),
            Severity::Note => (&mut row.note, &mut c.note),
        };
        *r += 1;
        *all += 1;
        structs.insert(h.struct_name.as_str());
    }
    c.structs = structs.len();
    c.by_kind = by_kind;
    c
}

fn crosses(address: u64, size: u64, line: u64) -> bool {
    address % line + size > line
}

/// The base addresses mod `line` that alignment `align` permits.
fn bases(align: u64, line: u64) -> impl Iterator<Item = u64> {
    let step = align.clamp(1, line);
    (0..line).step_by(step as usize)
}

/// All hazards of `s`, given the arrays of it that the binary declares.
pub fn find(s: &StructLayout, uses: &[&ArrayUse], line: u64) -> Vec<Hazard> {
    let mut out = Vec::new();
    split_locks(s, uses, line, &mut out);
    misaligned(s, &mut out);
    sharing::false_sharing(s, line, &mut out);
    element_straddle(s, uses, line, &mut out);
    holes(s, line, &mut out);
    out
}

fn split_locks(s: &StructLayout, uses: &[&ArrayUse], line: u64, out: &mut Vec<Hazard>) {
    for a in s.sync_members.iter().filter(|a| a.kind == SyncKind::Atomic) {
        if a.size == 0 || a.size > line {
            continue;
        }
        // The struct alone, at every base its alignment permits.
        let crossing: Vec<u64> = bases(s.alignment, line)
            .filter(|b| crosses(b + a.offset, a.size, line))
            .collect();
        if !crossing.is_empty() {
            let permitted = bases(s.alignment, line).count();
            let at_aligned = crossing[0] == 0;
            let mut h = Hazard::new(
                HazardKind::SplitLockRisk,
                if at_aligned {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                s,
                Detail::SplitLock {
                    alignment: s.alignment,
                    permitted,
                },
            );
            h.member = Some(a.path.clone());
            h.offset = Some(a.offset);
            h.size = Some(a.size);
            h.base_offsets = crossing;
            evidence(&mut h, a);
            h.score = 1.0 + h.base_offsets.len() as f64 / permitted as f64;
            out.push(h);
        }
        // Every array of the struct the binary declares.
        for u in uses {
            let index_at = |base: u64| -> Vec<u64> {
                (0..u.count.min(1 << 16))
                    .filter(|i| crosses(base + u.offset + i * s.size + a.offset, a.size, line))
                    .collect()
            };
            let indices = index_at(0);
            let other: Vec<u64> = bases(u.parent_alignment, line)
                .filter(|b| !index_at(*b).is_empty())
                .collect();
            if indices.is_empty() && other.is_empty() {
                continue;
            }
            let mut h = Hazard::new(
                HazardKind::SplitLockRisk,
                if indices.is_empty() {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                s,
                Detail::SplitLockInArray {
                    count: u.count,
                    parent: u.parent.is_some(),
                    parent_alignment: u.parent_alignment,
                },
            );
            h.member = Some(a.path.clone());
            h.offset = Some(a.offset);
            h.size = Some(a.size);
            evidence(&mut h, a);
            h.container = Some(u.parent.clone().unwrap_or_else(|| u.name.clone()));
            h.array = Some(u.name.clone());
            h.array_offset = Some(u.offset);
            h.score = 2.0 + indices.len() as f64;
            h.indices = indices;
            h.base_offsets = other;
            out.push(h);
        }
    }
}

/// The member's locking instructions, in the finding.
fn evidence(h: &mut Hazard, a: &SyncMember) {
    h.by_use = a.by_use;
    h.locked = a.locked.clone();
}

fn misaligned(s: &StructLayout, out: &mut Vec<Hazard>) {
    for m in &s.members {
        if m.bit_size.is_some() || m.alignment <= 1 || m.offset % m.alignment == 0 {
            continue;
        }
        let name = if m.name.is_empty() {
            m.type_name.clone()
        } else {
            m.name.clone()
        };
        let mut h = Hazard::new(
            HazardKind::Misaligned,
            Severity::Warning,
            s,
            Detail::Misaligned {
                type_name: m.type_name.clone(),
                dims: m.array.clone(),
                alignment: m.alignment,
            },
        );
        h.member = Some(name);
        h.offset = Some(m.offset);
        h.size = Some(m.size);
        h.score = m.alignment as f64;
        out.push(h);
    }
}

/// Share of elements of an array (line-aligned start) that touch more lines than needed.
pub fn straddle_share(size: u64, line: u64) -> (u64, u64) {
    if size == 0 {
        return (0, 1);
    }
    let period = line / gcd(size % line, line).max(1);
    let needed = size.div_ceil(line);
    let straddling = (0..period)
        .filter(|i| {
            let start = (i * size) % line;
            (start + size).div_ceil(line) > needed
        })
        .count() as u64;
    (straddling, period)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn element_straddle(s: &StructLayout, uses: &[&ArrayUse], line: u64, out: &mut Vec<Hazard>) {
    if uses.is_empty() {
        return;
    }
    let (straddling, period) = straddle_share(s.size, line);
    if straddling == 0 {
        return;
    }
    let share = straddling as f64 / period as f64;
    let arrays = uses
        .iter()
        .map(|u| ArrayRef {
            parent: u.parent.clone(),
            name: u.name.clone(),
            count: u.count,
        })
        .collect();
    let mut h = Hazard::new(
        HazardKind::ElementStraddle,
        Severity::Note,
        s,
        Detail::ElementStraddle {
            straddling,
            period,
            arrays,
        },
    );
    h.share = Some(share);
    h.size = Some(s.size);
    h.score = share;
    out.push(h);
}

fn holes(s: &StructLayout, line: u64, out: &mut Vec<Hazard>) {
    let wasted = s.summary.sum_holes + s.summary.padding;
    if wasted == 0 {
        return;
    }
    let Some(r) = suggest::reorder(s, line, false) else {
        return;
    };
    if r.new_size >= s.size {
        return;
    }
    let saved = s.size - r.new_size;
    let mut h = Hazard::new(
        HazardKind::Holes,
        Severity::Note,
        s,
        Detail::Holes {
            holes: s.summary.holes,
            sum_holes: s.summary.sum_holes,
            padding: s.summary.padding,
            new_size: r.new_size,
        },
    );
    h.bytes = Some(saved);
    h.size = Some(s.size);
    h.score = saved as f64;
    out.push(h);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straddle_shares() {
        assert_eq!(straddle_share(24, 64), (2, 8));
        assert_eq!(straddle_share(16, 64), (0, 4));
        assert_eq!(straddle_share(128, 64), (0, 1));
        assert_eq!(straddle_share(13, 64), (12, 64));
    }

    #[test]
    fn crossing() {
        assert!(crosses(60, 8, 64));
        assert!(!crosses(56, 8, 64));
        assert_eq!(bases(16, 64).collect::<Vec<_>>(), vec![0, 16, 32, 48]);
        assert_eq!(bases(128, 64).collect::<Vec<_>>(), vec![0]);
    }

    fn hazard(kind: HazardKind, severity: Severity, name: &str) -> Hazard {
        Hazard::named(
            kind,
            severity,
            name,
            Detail::FalseSharing {
                separate: 0,
                written: 0,
            },
        )
    }

    #[test]
    fn counts_by_kind_and_severity() {
        let list = [
            hazard(HazardKind::SplitLockRisk, Severity::Error, "a"),
            hazard(HazardKind::SplitLockRisk, Severity::Warning, "a"),
            hazard(HazardKind::Misaligned, Severity::Warning, "b"),
            hazard(HazardKind::Holes, Severity::Note, "c"),
            hazard(HazardKind::Holes, Severity::Note, "a"),
        ];
        let c = count(&list);
        assert_eq!(
            (c.total, c.error, c.warning, c.note, c.structs),
            (5, 1, 2, 2, 3)
        );
        let rows: Vec<(HazardKind, usize, usize, usize, usize)> = c
            .by_kind
            .iter()
            .map(|r| (r.kind, r.total, r.error, r.warning, r.note))
            .collect();
        assert_eq!(
            rows,
            vec![
                (HazardKind::SplitLockRisk, 2, 1, 1, 0),
                (HazardKind::Misaligned, 1, 0, 1, 0),
                (HazardKind::FalseSharing, 0, 0, 0, 0),
                (HazardKind::ElementStraddle, 0, 0, 0, 0),
                (HazardKind::Holes, 2, 0, 0, 2),
            ]
        );
        assert_eq!(count(&[]).by_kind.len(), 5);
    }
}
