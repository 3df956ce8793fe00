//! Layout hazards of one struct (docs/architecture.md §7): atomics that can cross a cache line
//! (alone, and as elements of every array of the struct the binary declares),
//! misaligned members, array elements that straddle lines, false sharing, and holes
//! worth reclaiming. Each finding carries the exact offsets and element indices.
//! It is over 600 lines because the five passes share the `Hazard` type and its ranking;
//! false sharing's per-struct lines and evidence sit beside the split-lock pass they
//! mirror.

use super::suggest;
use super::types::{ArrayUse, LockEvidence, PlainWrites, StructLayout, SyncKind, SyncMember};
use crate::report::units::count;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HazardKind {
    SplitLockRisk,
    Misaligned,
    FalseSharing,
    ElementStraddle,
    Holes,
}

impl HazardKind {
    pub fn id(self) -> &'static str {
        match self {
            HazardKind::SplitLockRisk => "split-lock-risk",
            HazardKind::Misaligned => "misaligned",
            HazardKind::FalseSharing => "false-sharing",
            HazardKind::ElementStraddle => "element-straddle",
            HazardKind::Holes => "holes",
        }
    }
}

/// Error: happens at the alignment the type or its container guarantees.
/// Warning: happens at some permitted alignment. Note: costs space or sharing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

#[derive(Debug, Clone, Serialize)]
pub struct Hazard {
    pub kind: HazardKind,
    pub severity: Severity,
    #[serde(rename = "struct")]
    pub struct_name: String,
    /// Member path inside the struct (`count`, `stats.hits`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// Byte offset of the member inside the struct.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    pub message: String,
    /// split-lock-risk in an array: the container (`table` or a variable's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// split-lock-risk in an array: the array member or variable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    /// split-lock-risk in an array: offset of the array inside its container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array_offset: Option<u64>,
    /// Element indices whose member crosses a line when the container is line-aligned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub indices: Vec<u64>,
    /// Base addresses (mod line) the container or type permits at which some crossing happens.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_offsets: Vec<u64>,
    /// element-straddle: the share of elements that straddle; else unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// holes: bytes a reorder saves; false-sharing: the line number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_index: Option<u64>,
    /// false-sharing: the atomics/locks and other members in the first line listed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// false-sharing: every shared line of the struct.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<FalseSharingLine>,
    /// split-lock-risk: the member is an atomic by use (no atomic type).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_use: bool,
    /// split-lock-risk: the locking instructions seen on the member.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<LockEvidence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decl_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decl_line: Option<u64>,
    #[serde(skip)]
    score: f64,
}

impl Hazard {
    fn new(kind: HazardKind, severity: Severity, s: &StructLayout, message: String) -> Hazard {
        Hazard {
            kind,
            severity,
            struct_name: s.name.clone(),
            member: None,
            offset: None,
            size: None,
            message,
            container: None,
            array: None,
            array_offset: None,
            indices: Vec::new(),
            base_offsets: Vec::new(),
            share: None,
            bytes: None,
            line_index: None,
            members: Vec::new(),
            lines: Vec::new(),
            by_use: false,
            locked: None,
            decl_file: s.decl_file.clone(),
            decl_line: s.decl_line,
            score: 0.0,
        }
    }
}

/// One cache line of a false-sharing finding.
#[derive(Debug, Clone, Serialize)]
pub struct FalseSharingLine {
    pub line: u64,
    /// Atomics and locks in the line (paths).
    pub atomics: Vec<String>,
    /// Plain members in the line.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<String>,
    /// Two atomics of the line locked from different functions: the evidence of
    /// separate writers that makes the finding a warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub separate_writers: Option<(String, String)>,
    /// An atomic of the line and another member of it that plain stores write
    /// from functions that do not lock the atomic: also a warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_elsewhere: Option<WrittenElsewhere>,
}

/// A member plainly stored to, in the line of an atomic, by functions that do not
/// lock that atomic. Stores are collected only in functions that lock something.
#[derive(Debug, Clone, Serialize)]
pub struct WrittenElsewhere {
    pub atomic: String,
    pub member: String,
    /// The stores (up to 3 sites, their count and functions), exact mappings only.
    pub writes: LockEvidence,
}

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

fn crosses(address: u64, size: u64, line: u64) -> bool {
    address % line + size > line
}

/// The base addresses mod `line` that alignment `align` permits.
fn bases(align: u64, line: u64) -> impl Iterator<Item = u64> {
    let step = align.clamp(1, line);
    (0..line).step_by(step as usize)
}

/// ` (atomic by use); locked at 0x11eb in account() (lock add), … (5 sites in 2 functions)`
pub fn locked_text(by_use: bool, e: &LockEvidence) -> String {
    let sites: Vec<String> = e
        .sites
        .iter()
        .map(|x| {
            let f = if x.function.is_empty() {
                "?"
            } else {
                &x.function
            };
            match &x.via {
                Some(via) => format!("{:#x} in {f}() ({}; {via})", x.address, x.op),
                None => format!("{:#x} in {f}() ({})", x.address, x.op),
            }
        })
        .collect();
    let mut text = format!(
        "; {}locked at {}",
        if e.inferred { "inferred: " } else { "" },
        sites.join(", ")
    );
    if e.count > e.sites.len() {
        text.push_str(&format!(
            ", … ({} sites in {} functions)",
            e.count, e.functions
        ));
    }
    if by_use {
        text.push_str(" [atomic by use]");
    }
    text
}

fn list(indices: &[u64]) -> String {
    let shown: Vec<String> = indices.iter().take(8).map(|i| i.to_string()).collect();
    if indices.len() > 8 {
        format!("{}, … ({} in all)", shown.join(", "), indices.len())
    } else {
        shown.join(", ")
    }
}

/// All hazards of `s`, given the arrays of it that the binary declares.
pub fn find(s: &StructLayout, uses: &[&ArrayUse], line: u64) -> Vec<Hazard> {
    let mut out = Vec::new();
    split_locks(s, uses, line, &mut out);
    misaligned(s, &mut out);
    false_sharing(s, line, &mut out);
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
            let why = if s.alignment == 1 {
                "packed: any address".to_string()
            } else {
                format!("{}-byte aligned", s.alignment)
            };
            let mut h = Hazard::new(
                HazardKind::SplitLockRisk,
                if at_aligned { Severity::Error } else { Severity::Warning },
                s,
                format!(
                    "{} ({} bytes at offset {}) crosses a {line}-byte line for {} of the {permitted} base addresses `{}` permits ({why}){}",
                    a.path,
                    a.size,
                    a.offset,
                    crossing.len(),
                    s.name,
                    if at_aligned { ", even when it is line-aligned" } else { "" }
                ),
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
            let container = u.parent.clone().unwrap_or_else(|| u.name.clone());
            let what = match &u.parent {
                Some(p) => format!("the parent `{p}`"),
                None => format!("the array `{}`", u.name),
            };
            let message = if !indices.is_empty() {
                let first = format!("{}[{}].{}", u.name, indices[0], a.path);
                format!(
                    "{first} crosses a {line}-byte line when {what} is {line}-byte aligned; elements {} of {} cross",
                    list(&indices),
                    u.count
                )
            } else {
                format!(
                    "{}[].{} crosses a {line}-byte line for some elements when {what} sits at base offsets {} (mod {line}) its alignment of {} permits",
                    u.name,
                    a.path,
                    list(&other),
                    u.parent_alignment
                )
            };
            let mut h = Hazard::new(
                HazardKind::SplitLockRisk,
                if indices.is_empty() {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                s,
                message,
            );
            h.member = Some(a.path.clone());
            h.offset = Some(a.offset);
            h.size = Some(a.size);
            evidence(&mut h, a);
            h.container = Some(container);
            h.array = Some(u.name.clone());
            h.array_offset = Some(u.offset);
            h.score = 2.0 + indices.len() as f64;
            h.indices = indices;
            h.base_offsets = other;
            out.push(h);
        }
    }
}

/// The member's locking instructions, in the finding and its message.
fn evidence(h: &mut Hazard, a: &SyncMember) {
    h.by_use = a.by_use;
    if let Some(e) = &a.locked {
        h.message.push_str(&locked_text(a.by_use, e));
        h.locked = Some(e.clone());
    }
}

fn misaligned(s: &StructLayout, out: &mut Vec<Hazard>) {
    for m in &s.members {
        if m.bit_size.is_some() || m.alignment <= 1 || m.offset % m.alignment == 0 {
            continue;
        }
        let dims: String = m.array.iter().map(|d| format!("[{d}]")).collect();
        let name = if m.name.is_empty() {
            m.type_name.clone()
        } else {
            m.name.clone()
        };
        let mut h = Hazard::new(
            HazardKind::Misaligned,
            Severity::Warning,
            s,
            format!(
                "{name} ({}{dims}, {} bytes) at offset {} is not {}-byte aligned ({} bytes past)",
                m.type_name,
                m.size,
                m.offset,
                m.alignment,
                m.offset % m.alignment
            ),
        );
        h.member = Some(name);
        h.offset = Some(m.offset);
        h.size = Some(m.size);
        h.score = m.alignment as f64;
        out.push(h);
    }
}

/// False sharing, one finding per struct listing its lines. A line is evidence
/// of separate writers when two of its atomics are locked from different sets of
/// functions (atomics by use); such a struct is a warning. A member beside an
/// atomic plainly stored to from a function that does not lock it
/// (`written_elsewhere`) is listed as evidence and ranks the note first, but does
/// not make a warning: a hand check of 20 such vmlinux findings found 3 real, 14
/// stores made while the object was set up or torn down (BENCHMARKS.md), which a
/// store's function alone cannot tell apart. Lines that only hold atomics or
/// locks together, or one beside plain members, make a note.
fn false_sharing(s: &StructLayout, line: u64, out: &mut Vec<Hazard>) {
    if s.sync_members.is_empty() {
        return;
    }
    let last_line = s.size.saturating_sub(1) / line;
    let mut lines: Vec<SharedLine> = Vec::new();
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
        let separate = separate_writers(&sync);
        let in_line: Vec<&PlainWrites> = s
            .writes
            .iter()
            .filter(|w| w.offset < end && w.offset + w.size.max(1) > start)
            .collect();
        let written = written_elsewhere(&sync, &in_line);
        lines.push(SharedLine {
            line: l,
            sync: sync.iter().map(|a| (a.path.clone(), a.offset)).collect(),
            others,
            separate,
            written,
        });
    }
    if lines.is_empty() {
        return;
    }
    let separate = lines.iter().filter(|l| l.separate.is_some()).count();
    let written = lines.iter().filter(|l| l.written.is_some()).count();
    let warned = separate;
    let described: Vec<String> = lines.iter().take(6).map(|l| l.describe(line)).collect();
    let mut evidence = Vec::new();
    if separate > 0 {
        evidence.push(format!(
            "{separate} with atomics locked from different functions"
        ));
    }
    if written > 0 {
        evidence.push(format!(
            "{written} with an atomic beside a member written elsewhere"
        ));
    }
    let message = format!(
        "{} shared{}: {}{}{}",
        count(lines.len() as u64, "line"),
        if evidence.is_empty() {
            String::new()
        } else {
            format!(", {}", evidence.join(", "))
        },
        described.join("; "),
        if lines.len() > 6 {
            format!("; … ({} lines in all)", lines.len())
        } else {
            String::new()
        },
        if written > 0 {
            " (plain writers are found only in functions that also lock something)"
        } else {
            ""
        }
    );
    let mut h = Hazard::new(
        HazardKind::FalseSharing,
        if warned > 0 {
            Severity::Warning
        } else {
            Severity::Note
        },
        s,
        message,
    );
    let first = &lines[0];
    h.line_index = Some(first.line);
    h.offset = first.sync.first().map(|x| x.1);
    h.members = first
        .sync
        .iter()
        .map(|x| x.0.clone())
        .chain(first.others.iter().cloned())
        .collect();
    h.score = warned as f64 * 100.0 + written as f64 * 10.0 + lines.len() as f64;
    h.lines = lines
        .into_iter()
        .map(|l| FalseSharingLine {
            line: l.line,
            atomics: l.sync.into_iter().map(|x| x.0).collect(),
            others: l.others,
            separate_writers: l.separate,
            written_elsewhere: l.written,
        })
        .collect();
    out.push(h);
}

/// One line of a struct that atomics share, before it becomes a finding.
struct SharedLine {
    line: u64,
    sync: Vec<(String, u64)>,
    others: Vec<String>,
    separate: Option<(String, String)>,
    written: Option<WrittenElsewhere>,
}

impl SharedLine {
    fn describe(&self, line: u64) -> String {
        let names: Vec<String> = self
            .sync
            .iter()
            .map(|(p, o)| format!("{p} (offset {o})"))
            .collect();
        let mut text = format!(
            "line {} (bytes {}–{}): {}",
            self.line,
            self.line * line,
            (self.line + 1) * line - 1,
            names.join(", ")
        );
        if !self.others.is_empty() {
            let shown: Vec<&str> = self.others.iter().take(4).map(String::as_str).collect();
            text.push_str(&format!(" with {}", shown.join(", ")));
            if self.others.len() > 4 {
                text.push_str(&format!(" and {} more", self.others.len() - 4));
            }
        }
        if let Some((a, b)) = &self.separate {
            text.push_str(&format!(
                " [{a} and {b} are locked from different functions]"
            ));
        }
        if let Some(w) = &self.written {
            let sites: Vec<String> = w
                .writes
                .sites
                .iter()
                .map(|x| format!("{:#x} in {}() ({})", x.address, name_or(&x.function), x.op))
                .collect();
            let mut written = format!(
                " [{} is written where {} is not locked: {}",
                w.member,
                w.atomic,
                sites.join(", ")
            );
            if w.writes.count > w.writes.sites.len() {
                written.push_str(&format!(
                    ", … ({} sites in {} functions)",
                    w.writes.count, w.writes.functions
                ));
            }
            written.push(']');
            text.push_str(&written);
        }
        text
    }
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

fn name_or(function: &str) -> &str {
    if function.is_empty() {
        "?"
    } else {
        function
    }
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
            let elsewhere: Vec<&super::types::SiteRef> = w
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
                        .take(super::by_use::MAX_SITES)
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
    let arrays: Vec<String> = uses
        .iter()
        .map(|u| match &u.parent {
            Some(p) => format!("{p}.{}[{}]", u.name, u.count),
            None => format!("{}[{}]", u.name, u.count),
        })
        .collect();
    let mut h = Hazard::new(
        HazardKind::ElementStraddle,
        Severity::Note,
        s,
        format!(
            "{} of every {period} elements ({:.1}%) of a {line}-byte-aligned array straddle a line: size {} is not a divisor or multiple of {line}; arrays: {}",
            straddling,
            share * 100.0,
            s.size,
            arrays.join(", ")
        ),
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
        format!(
            "{} of {} in all and {} of padding; reordering saves {} ({} → {})",
            count(s.summary.holes, "hole"),
            count(s.summary.sum_holes, "byte"),
            count(s.summary.padding, "byte"),
            count(saved, "byte"),
            s.size,
            r.new_size
        ),
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

    fn write(path: &str, offset: u64, size: u64, functions: &[&str]) -> PlainWrites {
        PlainWrites {
            path: path.to_string(),
            offset,
            size,
            sites: functions
                .iter()
                .enumerate()
                .map(|(k, f)| super::super::types::SiteRef {
                    address: 0x1000 + k as u64,
                    function: f.to_string(),
                    op: "mov".to_string(),
                    mapping: super::super::types::Mapping::Exact,
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
