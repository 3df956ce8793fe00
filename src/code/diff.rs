//! `--diff OTHER`: which functions' placement changed between two builds.
//! Functions are matched by symbol (the n-th function of a name in address
//! order matches the n-th in the other build, for static functions that share
//! a name). `layout --explain` calls [`diff`] on the builds' default layouts.

use super::function::{Analysis, Function};
use super::placement::{Geometry, Placement};
use serde::Serialize;
use std::collections::HashMap;

/// Why a function is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeReason {
    /// Its entry's offset in its line or window changed.
    OffsetMoved,
    /// It now touches more lines or windows beyond what its size needs.
    NewStraddle,
    /// A loop header is less aligned than before, and below the window size.
    LoopLostAlignment,
    /// A tight loop's body now touches more windows beyond what its size needs.
    LoopNewStraddle,
}

impl ChangeReason {
    pub fn label(self) -> &'static str {
        match self {
            ChangeReason::OffsetMoved => "offset moved",
            ChangeReason::NewStraddle => "new straddle",
            ChangeReason::LoopLostAlignment => "loop lost alignment",
            ChangeReason::LoopNewStraddle => "loop new straddle",
        }
    }
}

/// One loop, matched by its position in the function (first loop, second, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoopChange {
    pub index: usize,
    pub old_header: u64,
    pub new_header: u64,
    pub old_line_offset: u64,
    pub new_line_offset: u64,
    pub old_alignment: u64,
    pub new_alignment: u64,
    pub old_windows: u64,
    pub new_windows: u64,
    pub lost_alignment: bool,
    pub new_straddle: bool,
}

/// A function whose placement differs between the builds.
#[derive(Debug, Clone, Serialize)]
pub struct PlacementChange {
    pub name: String,
    pub symbol: String,
    pub old: Placement,
    pub new: Placement,
    pub reasons: Vec<ChangeReason>,
    /// Loops whose header offset changed (all of them, not only the hazards).
    pub loops: Vec<LoopChange>,
    /// Loop counts when they differ (the code itself changed).
    pub old_loop_count: usize,
    pub new_loop_count: usize,
    /// Share of the profile, with `--hot`.
    pub hot_share: Option<f64>,
}

/// The comparison of two builds.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub old: String,
    pub new: String,
    /// Functions present in both builds.
    pub matched: usize,
    pub only_in_old: usize,
    pub only_in_new: usize,
    /// Ranked: hottest first with a profile, then the most reasons, then by name.
    pub changes: Vec<PlacementChange>,
}

/// A loop header lost its alignment when it was aligned to 16 bytes or more
/// and is now aligned less, and less than the DSB window.
fn lost_alignment(old: u64, new: u64, g: Geometry) -> bool {
    old >= 16 && new < old.min(g.window)
}

fn compare(old: &Function, new: &Function, g: Geometry) -> Option<PlacementChange> {
    let (o, n) = (&old.placement, &new.placement);
    let mut reasons = Vec::new();
    if o.line_offset != n.line_offset || o.window_offset != n.window_offset {
        reasons.push(ChangeReason::OffsetMoved);
    }
    if n.extra_lines > o.extra_lines || n.extra_windows > o.extra_windows {
        reasons.push(ChangeReason::NewStraddle);
    }
    let mut loops = Vec::new();
    for (index, (a, b)) in old.loops.iter().zip(&new.loops).enumerate() {
        let lost = lost_alignment(a.alignment, b.alignment, g);
        let straddle = b.straddles() && b.extra_windows > a.extra_windows;
        if a.line_offset != b.line_offset || lost || straddle {
            loops.push(LoopChange {
                index,
                old_header: a.header,
                new_header: b.header,
                old_line_offset: a.line_offset,
                new_line_offset: b.line_offset,
                old_alignment: a.alignment,
                new_alignment: b.alignment,
                old_windows: a.windows,
                new_windows: b.windows,
                lost_alignment: lost,
                new_straddle: straddle,
            });
        }
    }
    if loops.iter().any(|l| l.lost_alignment) {
        reasons.push(ChangeReason::LoopLostAlignment);
    }
    if loops.iter().any(|l| l.new_straddle) {
        reasons.push(ChangeReason::LoopNewStraddle);
    }
    if reasons.is_empty() && loops.is_empty() {
        return None;
    }
    if reasons.is_empty() {
        // Only loop headers moved inside an unmoved function.
        reasons.push(ChangeReason::OffsetMoved);
    }
    Some(PlacementChange {
        name: new.name.clone(),
        symbol: new.symbol.clone(),
        old: *o,
        new: *n,
        reasons,
        loops,
        old_loop_count: old.loops.len(),
        new_loop_count: new.loops.len(),
        hot_share: new.hot_share.or(old.hot_share),
    })
}

/// Match the functions of two builds by symbol and list placement changes.
/// Both analyses must use the same geometry.
pub fn diff(old: &Analysis, new: &Analysis, g: Geometry) -> Diff {
    diff_by(old, new, g, |f| &f.symbol)
}

/// Like [`diff`], matching by demangled name instead of symbol: builds made by
/// different compilers (`layout --explain`) can mangle or version the same
/// function differently, while its demangled name stays the same.
pub fn diff_by_name(old: &Analysis, new: &Analysis, g: Geometry) -> Diff {
    diff_by(old, new, g, |f| &f.name)
}

fn diff_by(old: &Analysis, new: &Analysis, g: Geometry, key: fn(&Function) -> &String) -> Diff {
    let group = |functions: &'_ [Function]| {
        let mut by_symbol: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, f) in functions.iter().enumerate() {
            by_symbol.entry(key(f).clone()).or_default().push(i);
        }
        for indices in by_symbol.values_mut() {
            indices.sort_by_key(|&i| functions[i].placement.address);
        }
        by_symbol
    };
    let old_by = group(&old.functions);
    let new_by = group(&new.functions);
    let mut matched = 0;
    let mut only_in_old = 0;
    let mut changes = Vec::new();
    for (symbol, old_indices) in &old_by {
        let new_indices = new_by.get(symbol).map(Vec::as_slice).unwrap_or(&[]);
        only_in_old += old_indices.len().saturating_sub(new_indices.len());
        for (&i, &j) in old_indices.iter().zip(new_indices) {
            matched += 1;
            if let Some(change) = compare(&old.functions[i], &new.functions[j], g) {
                changes.push(change);
            }
        }
    }
    let only_in_new = new.functions.len() - matched;
    changes.sort_by(|a, b| {
        let hot = |c: &PlacementChange| c.hot_share.unwrap_or(-1.0);
        hot(b)
            .total_cmp(&hot(a))
            .then(b.reasons.len().cmp(&a.reasons.len()))
            .then(a.name.cmp(&b.name))
            .then(a.old.address.cmp(&b.old.address))
    });
    Diff {
        old: old.path.clone(),
        new: new.path.clone(),
        matched,
        only_in_old,
        only_in_new,
        changes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::disasm::Loop;
    use crate::code::elf::SymbolSource;
    use crate::code::placement::alignment;

    fn function(symbol: &str, address: u64, size: u64, loop_at: Option<u64>) -> Function {
        let g = Geometry::default();
        Function {
            name: symbol.to_string(),
            symbol: symbol.to_string(),
            section: ".text".into(),
            placement: Placement::of(address, size, g),
            entry_near_line_end: false,
            entry_near_window_end: false,
            loops: loop_at
                .map(|h| Loop {
                    header: h,
                    line_offset: h % 64,
                    window_offset: h % 32,
                    alignment: alignment(h, 64),
                    body_bytes: 8,
                    lines: 1,
                    windows: 1,
                    extra_windows: 0,
                    back_edges: 1,
                })
                .into_iter()
                .collect(),
            jcc_spot_count: 0,
            jcc_spots: vec![],
            invalid_bytes: 0,
            hot_share: None,
            hazard_score: 0,
            uarch: vec![],
        }
    }

    fn analysis(functions: Vec<Function>) -> Analysis {
        Analysis {
            path: "x".into(),
            kind: "executable".into(),
            symbol_source: SymbolSource::Symtab,
            functions,
            warnings: vec![],
        }
    }

    #[test]
    fn lists_moves_straddles_and_lost_loop_alignment() {
        let g = Geometry::default();
        let old = analysis(vec![
            function("same", 0x1000, 16, None),
            function("moved", 0x1040, 16, None),
            function("straddles", 0x1080, 16, None),
            function("loop", 0x1100, 64, Some(0x1110)),
            function("gone", 0x1200, 4, None),
        ]);
        let new = analysis(vec![
            function("same", 0x2000, 16, None),
            function("moved", 0x2050, 16, None),
            function("straddles", 0x2098, 16, None),
            function("loop", 0x2100, 64, Some(0x2114)),
            function("added", 0x2200, 4, None),
        ]);
        let d = diff(&old, &new, g);
        assert_eq!((d.matched, d.only_in_old, d.only_in_new), (4, 1, 1));
        let by: HashMap<&str, &PlacementChange> =
            d.changes.iter().map(|c| (c.name.as_str(), c)).collect();
        assert!(!by.contains_key("same"));
        assert_eq!(by["moved"].reasons, vec![ChangeReason::OffsetMoved]);
        assert_eq!(
            (by["moved"].old.line_offset, by["moved"].new.line_offset),
            (0, 0x10)
        );
        assert_eq!(
            by["straddles"].reasons,
            vec![ChangeReason::OffsetMoved, ChangeReason::NewStraddle]
        );
        assert_eq!(by["loop"].reasons, vec![ChangeReason::LoopLostAlignment]);
        assert_eq!(by["loop"].loops[0].new_alignment, 4);
    }
}
