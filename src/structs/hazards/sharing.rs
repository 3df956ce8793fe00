//! False sharing, one finding per struct listing its shared lines: which atomics
//! and locks share a line, with which other members, and the evidence of separate
//! writers (atomics locked from different functions, members plainly stored to
//! where an atomic of the line is not locked).

use super::finding::{Detail, FalseSharingLine, Hazard, HazardKind, Severity, WrittenElsewhere};
use crate::structs::by_use::MAX_SITES;
use crate::structs::types::{
    LockEvidence, PlainWrites, SiteRef, StructLayout, SyncKind, SyncMember,
};

/// False sharing, one finding per struct listing its lines. A line is evidence
/// of separate writers when two of its atomics are locked from different sets of
/// functions (atomics by use); such a struct is a warning. A member beside an
/// atomic plainly stored to from a function that does not lock it
/// (`written_elsewhere`) is listed as evidence and ranks the note first, but does
/// not make a warning: a hand check of 20 such vmlinux findings found 3 real, 14
/// stores made while the object was set up or torn down (BENCHMARKS.md), which a
/// store's function alone cannot tell apart. Lines that only hold atomics or
/// locks together, or one beside plain members, make a note.
pub(super) fn false_sharing(s: &StructLayout, line: u64, out: &mut Vec<Hazard>) {
    if s.sync_members.is_empty() {
        return;
    }
    let last_line = s.size.saturating_sub(1) / line;
    let mut lines: Vec<FalseSharingLine> = Vec::new();
    for l in 0..=last_line {
        let (start, end) = (l * line, (l + 1) * line);
        let sync: Vec<&SyncMember> = s
            .sync_members
            .iter()
            .filter(|a| a.offset < end && a.offset + a.size.max(1) > start)
            .collect();
        if sync.is_empty() {
            continue;
        }
        let others: Vec<String> = s
            .members
            .iter()
            .filter(|m| m.sync.is_none() && m.offset < end && m.offset + m.size.max(1) > start)
            .filter(|m| {
                // A struct member that merely contains the atomics is not "other".
                !sync.iter().any(|a| {
                    a.path.starts_with(&format!("{}.", m.name))
                        || a.path.starts_with(&format!("{}[", m.name))
                        || a.path == m.name
                })
            })
            .map(|m| {
                if m.name.is_empty() {
                    m.type_name.clone()
                } else {
                    m.name.clone()
                }
            })
            .collect();
        if sync.len() < 2 && others.is_empty() {
            continue;
        }
        let in_line: Vec<&PlainWrites> = s
            .writes
            .iter()
            .filter(|w| w.offset < end && w.offset + w.size.max(1) > start)
            .collect();
        lines.push(FalseSharingLine {
            line: l,
            atomics: sync.iter().map(|a| a.path.clone()).collect(),
            atomic_offsets: sync.iter().map(|a| a.offset).collect(),
            others,
            separate_writers: separate_writers(&sync),
            written_elsewhere: written_elsewhere(&sync, &in_line),
        });
    }
    if lines.is_empty() {
        return;
    }
    let separate = lines
        .iter()
        .filter(|l| l.separate_writers.is_some())
        .count();
    let written = lines
        .iter()
        .filter(|l| l.written_elsewhere.is_some())
        .count();
    let mut h = Hazard::new(
        HazardKind::FalseSharing,
        if separate > 0 {
            Severity::Warning
        } else {
            Severity::Note
        },
        s,
        Detail::FalseSharing { separate, written },
    );
    let first = &lines[0];
    h.line_index = Some(first.line);
    h.offset = first.atomic_offsets.first().copied();
    h.members = first
        .atomics
        .iter()
        .chain(first.others.iter())
        .cloned()
        .collect();
    h.score = separate as f64 * 100.0 + written as f64 * 10.0 + lines.len() as f64;
    h.lines = lines;
    out.push(h);
}

/// Two atomics of one line locked from different sets of functions, if any. Only
/// exact evidence counts: an inferred mapping is a guess, not a writer.
fn separate_writers(sync: &[&SyncMember]) -> Option<(String, String)> {
    let exact = |m: &SyncMember| m.locked.clone().filter(|e| !e.inferred);
    for (i, a) in sync.iter().enumerate() {
        let Some(ea) = exact(a) else { continue };
        for b in &sync[i + 1..] {
            let Some(eb) = exact(b) else { continue };
            let differ = ea
                .all_functions
                .iter()
                .any(|f| !eb.all_functions.contains(f))
                || eb
                    .all_functions
                    .iter()
                    .any(|f| !ea.all_functions.contains(f));
            if differ {
                return Some((a.path.clone(), b.path.clone()));
            }
        }
    }
    None
}

/// An atomic of the line and a different member of it, not overlapping the atomic,
/// that exactly mapped plain stores write from functions that do not lock the
/// atomic (a typed atomic never seen locked is locked by no function). Locks
/// (mutexes, spinlocks) do not count: they are taken through calls, so whether the
/// writer holds the lock is not seen, and data beside its lock is the usual case.
fn written_elsewhere(sync: &[&SyncMember], writes: &[&PlainWrites]) -> Option<WrittenElsewhere> {
    for a in sync.iter().filter(|a| a.kind == SyncKind::Atomic) {
        let lockers: &[String] = a.locked.as_ref().map_or(&[], |e| &e.all_functions);
        let (a_start, a_end) = (a.offset, a.offset + a.size.max(1));
        for w in writes {
            if w.offset < a_end && a_start < w.offset + w.size.max(1) {
                continue;
            }
            let elsewhere: Vec<&SiteRef> = w
                .sites
                .iter()
                .filter(|x| !lockers.contains(&x.function))
                .collect();
            if elsewhere.is_empty() {
                continue;
            }
            let functions: std::collections::BTreeSet<&str> =
                elsewhere.iter().map(|x| x.function.as_str()).collect();
            return Some(WrittenElsewhere {
                atomic: a.path.clone(),
                member: w.path.clone(),
                writes: LockEvidence {
                    sites: elsewhere
                        .iter()
                        .take(MAX_SITES)
                        .map(|x| (*x).clone())
                        .collect(),
                    count: elsewhere.len(),
                    functions: functions.len(),
                    inferred: false,
                    all_functions: functions.iter().map(|f| f.to_string()).collect(),
                },
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structs::types::Mapping;

    fn write(path: &str, offset: u64, size: u64, functions: &[&str]) -> PlainWrites {
        PlainWrites {
            path: path.to_string(),
            offset,
            size,
            sites: functions
                .iter()
                .enumerate()
                .map(|(k, f)| SiteRef {
                    address: 0x1000 + k as u64,
                    function: f.to_string(),
                    op: "mov".to_string(),
                    mapping: Mapping::Exact,
                    via: None,
                })
                .collect(),
        }
    }

    #[test]
    fn written_elsewhere_needs_a_writer_that_does_not_lock_the_atomic() {
        let counter = SyncMember {
            path: "counter".to_string(),
            offset: 0,
            size: 8,
            kind: SyncKind::Atomic,
            type_name: "long".to_string(),
            by_use: true,
            locked: Some(LockEvidence {
                all_functions: vec!["bump".to_string()],
                ..LockEvidence::default()
            }),
        };
        // Written only where counter is locked, or overlapping it: no evidence.
        let same = write("flag", 8, 4, &["bump"]);
        let inside = write("counter", 0, 8, &["init"]);
        assert!(written_elsewhere(&[&counter], &[&same, &inside]).is_none());
        // Written by init and bump: only init's store is evidence.
        let other = write("flag", 8, 4, &["bump", "init", "init"]);
        let w = written_elsewhere(&[&counter], &[&same, &other]).expect("evidence");
        assert_eq!((w.atomic.as_str(), w.member.as_str()), ("counter", "flag"));
        assert_eq!((w.writes.count, w.writes.functions), (2, 1));
        assert_eq!(w.writes.sites[0].function, "init");
        // A typed atomic never seen locked is locked by no function.
        let typed = SyncMember {
            locked: None,
            by_use: false,
            ..counter.clone()
        };
        assert!(written_elsewhere(&[&typed], &[&same]).is_some());
        // A lock beside data written elsewhere is not evidence.
        let lock = SyncMember {
            kind: SyncKind::Lock,
            locked: None,
            ..counter
        };
        assert!(written_elsewhere(&[&lock], &[&same]).is_none());
    }
}
