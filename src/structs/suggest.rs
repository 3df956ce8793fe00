//! `--suggest`: a cache-aware member order. Holes are filled by placing members by
//! decreasing alignment; base classes stay first; bitfields that share a storage unit
//! move together; no atomic is placed across a line; when a struct has two or more
//! atomics or locks, each gets a line of its own (`alignas(line)`); an explicit
//! alignment is kept.

use super::types::{RecordKind, StructLayout, SyncKind};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct SuggestedMember {
    /// Member name(s); a bitfield storage unit lists its fields (`a:3, b:5`).
    pub name: String,
    pub type_name: String,
    pub offset: u64,
    pub size: u64,
    /// Placed at the start of a line of its own.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub own_line: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    #[serde(rename = "struct")]
    pub struct_name: String,
    pub old_size: u64,
    pub new_size: u64,
    pub alignment: u64,
    pub members: Vec<SuggestedMember>,
    pub notes: Vec<String>,
}

struct Unit {
    name: String,
    type_name: String,
    size: u64,
    align: u64,
    base: bool,
    sync: Option<SyncKind>,
    order: usize,
}

fn units(s: &StructLayout) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::new();
    let mut last_bitfield_unit: Option<u64> = None;
    for (k, m) in s.members.iter().enumerate() {
        let display = |m: &super::types::Member| {
            let dims: String = m.array.iter().map(|d| format!("[{d}]")).collect();
            match m.bit_size {
                Some(b) => format!("{}:{b}", m.name),
                None => format!("{}{dims}", m.name),
            }
        };
        if m.bit_size.is_some() {
            if last_bitfield_unit == Some(m.offset) {
                if let Some(u) = out.last_mut() {
                    u.name = format!("{}, {}", u.name, display(m));
                    continue;
                }
            }
            last_bitfield_unit = Some(m.offset);
        } else {
            last_bitfield_unit = None;
        }
        out.push(Unit {
            name: display(m),
            type_name: m.type_name.clone(),
            size: m.size,
            align: m.alignment.max(1),
            base: m.base,
            sync: m.sync,
            order: k,
        });
    }
    out
}

/// The reordered layout; `isolate` puts each atomic or lock on its own line when
/// there are two or more of them.
pub fn reorder(s: &StructLayout, line: u64, isolate: bool) -> Option<Suggestion> {
    if s.kind == RecordKind::Union || s.members.is_empty() {
        return None;
    }
    let mut all = units(s);
    let contended = isolate && all.iter().filter(|u| u.sync.is_some()).count() >= 2;
    let (bases, rest): (Vec<Unit>, Vec<Unit>) = all.drain(..).partition(|u| u.base);
    let (mut isolated, mut plain): (Vec<Unit>, Vec<Unit>) = rest
        .into_iter()
        .partition(|u| contended && u.sync.is_some());
    plain.sort_by(|a, b| {
        b.align
            .cmp(&a.align)
            .then(b.size.cmp(&a.size))
            .then(a.order.cmp(&b.order))
    });
    isolated.sort_by_key(|u| u.order);

    let mut offset = 0u64;
    let mut members = Vec::new();
    let mut alignment = s.explicit_alignment.unwrap_or(1);
    let mut place = |u: &Unit, own_line: bool, offset: &mut u64, alignment: &mut u64| {
        let mut align = u.align;
        if own_line {
            align = align.max(line);
        }
        let mut at = offset.div_ceil(align) * align;
        if u.sync.is_some() && u.size <= line && at % line + u.size > line {
            at = at.div_ceil(line) * line;
        }
        *alignment = (*alignment).max(align);
        members.push(SuggestedMember {
            name: u.name.clone(),
            type_name: u.type_name.clone(),
            offset: at,
            size: u.size,
            own_line,
        });
        *offset = at + u.size;
        if own_line {
            *offset = offset.div_ceil(line) * line;
        }
    };
    for u in &bases {
        place(u, false, &mut offset, &mut alignment);
    }
    for u in &plain {
        place(u, false, &mut offset, &mut alignment);
    }
    for u in &isolated {
        place(u, true, &mut offset, &mut alignment);
    }
    let new_size = offset.div_ceil(alignment) * alignment;
    let mut notes = Vec::new();
    if s.packed {
        notes.push(
            "drops packing: every member at its natural alignment (keep `packed` only for a wire format)"
                .to_string(),
        );
    }
    if contended {
        notes.push(format!(
            "{} atomics/locks each on a {line}-byte line of their own (alignas({line})) to stop false sharing",
            isolated.len()
        ));
    }
    if let Some(a) = s.explicit_alignment {
        notes.push(format!("keeps the explicit alignment of {a}"));
    }
    Some(Suggestion {
        struct_name: s.name.clone(),
        old_size: s.size,
        new_size,
        alignment,
        members,
        notes,
    })
}

/// A suggestion worth showing: it saves bytes, or it removes a hazard (it isolates
/// contended atomics, or aligns the members of a packed struct). A reorder that
/// does neither is not offered, however different its order (moving a 16 KB table
/// off offset 0 for nothing helps no one); `None` then.
pub fn suggest(s: &StructLayout, line: u64) -> Option<Suggestion> {
    let r = reorder(s, line, true)?;
    // A packed struct with a misaligned member (an atomic, a pointer) gets the
    // aligned order even when it costs bytes: the hazard is worth more.
    let misaligned = s.packed
        && s.members
            .iter()
            .any(|m| m.bit_size.is_none() && m.alignment > 1 && m.offset % m.alignment != 0);
    // An atomic that crosses a line where it is now, placed whole by the reorder.
    let crossing_atomic = s
        .sync_members
        .iter()
        .any(|a| a.kind == SyncKind::Atomic && a.size <= line && a.offset % line + a.size > line);
    (misaligned || crossing_atomic || r.new_size < s.size || r.members.iter().any(|m| m.own_line))
        .then_some(r)
}
