//! What a hazard pass finds, as facts (docs/architecture.md §7): the kind and
//! severity, the member, offsets, indices and evidence of each finding, and a
//! `Detail` per pass with the numbers its words need. `render::hazards` words them.

use crate::structs::types::{LockEvidence, StructLayout};
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
    /// Every kind, in rank order.
    pub const ALL: [HazardKind; 5] = [
        HazardKind::SplitLockRisk,
        HazardKind::Misaligned,
        HazardKind::FalseSharing,
        HazardKind::ElementStraddle,
        HazardKind::Holes,
    ];

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

impl Severity {
    pub fn id(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
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
    /// The numbers behind the finding that its fields above do not hold, by kind.
    #[serde(skip)]
    pub detail: Detail,
    #[serde(skip)]
    pub(super) score: f64,
}

/// What a finding's words need beyond the common fields, one variant per pass.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    /// split-lock-risk of the struct alone: of the `permitted` base addresses mod the
    /// line its `alignment` allows, `base_offsets` are those where the member crosses.
    SplitLock { alignment: u64, permitted: usize },
    /// split-lock-risk in an array of `count` elements; `parent` tells whether the
    /// container is a struct (else the array is a variable), aligned to `parent_alignment`.
    SplitLockInArray {
        count: u64,
        parent: bool,
        parent_alignment: u64,
    },
    /// misaligned: the member's type, its array dimensions and the alignment it lacks.
    Misaligned {
        type_name: String,
        dims: Vec<u64>,
        alignment: u64,
    },
    /// false-sharing: the lines (in `lines`) with two atomics locked from different
    /// functions, and those with an atomic beside a member written elsewhere.
    FalseSharing { separate: usize, written: usize },
    /// element-straddle: `straddling` of every `period` elements, in these arrays.
    ElementStraddle {
        straddling: u64,
        period: u64,
        arrays: Vec<ArrayRef>,
    },
    /// holes: pahole's counts, and the size a reorder reaches.
    Holes {
        holes: u64,
        sum_holes: u64,
        padding: u64,
        new_size: u64,
    },
}

/// An array of a struct the binary declares: `parent.name[count]` or `name[count]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayRef {
    pub parent: Option<String>,
    pub name: String,
    pub count: u64,
}

impl Hazard {
    pub(super) fn new(
        kind: HazardKind,
        severity: Severity,
        s: &StructLayout,
        detail: Detail,
    ) -> Hazard {
        Hazard {
            decl_file: s.decl_file.clone(),
            decl_line: s.decl_line,
            ..Hazard::named(kind, severity, &s.name, detail)
        }
    }

    /// A finding in the struct `name`, its declaration unknown.
    pub(super) fn named(
        kind: HazardKind,
        severity: Severity,
        name: &str,
        detail: Detail,
    ) -> Hazard {
        Hazard {
            kind,
            severity,
            struct_name: name.to_string(),
            member: None,
            offset: None,
            size: None,
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
            decl_file: None,
            decl_line: None,
            detail,
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
    /// Their offsets in the struct, one per entry of `atomics`.
    #[serde(skip)]
    pub atomic_offsets: Vec<u64>,
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
