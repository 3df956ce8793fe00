//! `--diff OTHER`: which functions' placement changed between two builds.
//! Functions are matched by symbol (the n-th function of a name in address
//! order matches the n-th in the other build, for static functions that share
//! a name). Loops are matched by identity: the same offset from the
//! function's entry, the same body size and back edges; a loop of code the
//! compiler changed has no match and is counted, not compared. The
//! [`Summary`] counts the changes by kind. `layout --explain` calls [`diff`]
//! on the builds' default layouts.

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
    /// The compiler made other code: the size or the loops differ.
    CodeChanged,
}

impl ChangeReason {
    pub fn label(self) -> &'static str {
        match self {
            ChangeReason::OffsetMoved => "offset moved",
            ChangeReason::NewStraddle => "new straddle",
            ChangeReason::LoopLostAlignment => "loop lost alignment",
            ChangeReason::LoopNewStraddle => "loop new straddle",
            ChangeReason::CodeChanged => "code changed",
        }
    }
}

/// One loop matched by identity (same offset from the entry, body size and
/// back edges) whose placement changed; `index` is its place among the old
/// function's loops.
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
    /// Loops matched by identity whose header offset changed (all of them,
    /// not only the hazards).
    pub loops: Vec<LoopChange>,
    pub old_loop_count: usize,
    pub new_loop_count: usize,
    /// Loops of the new build matched by identity to one of the old.
    pub matched_loops: usize,
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
    /// Ranked: hottest first with a profile, then the largest size change,
    /// then the most reasons, then by name.
    pub changes: Vec<PlacementChange>,
    pub summary: Summary,
}

/// The changes counted by kind: a function counts once in each kind it shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The compiler made other code (`CodeChanged`).
    pub code_changed: usize,
    /// Of those, larger and smaller.
    pub grew: usize,
    pub shrank: usize,
    /// The same code, placed elsewhere (entry or loops moved in their line or window).
    pub moved_only: usize,
    /// Functions with a new straddle, a loop that lost its alignment, a loop newly straddling.
    pub new_straddle: usize,
    pub loop_lost_alignment: usize,
    pub loop_new_straddle: usize,
    /// With a profile: changed functions with a share of it.
    pub hot: Option<usize>,
}

impl Summary {
    fn of(changes: &[PlacementChange]) -> Summary {
        let has = |c: &PlacementChange, r| c.reasons.contains(&r);
        let count = |r| changes.iter().filter(|c| has(c, r)).count();
        let code: Vec<&PlacementChange> = changes
            .iter()
            .filter(|c| has(c, ChangeReason::CodeChanged))
            .collect();
        let profiled = changes.iter().any(|c| c.hot_share.is_some());
        Summary {
            code_changed: code.len(),
            grew: code.iter().filter(|c| c.new.size > c.old.size).count(),
            shrank: code.iter().filter(|c| c.new.size < c.old.size).count(),
            moved_only: changes.len() - code.len(),
            new_straddle: count(ChangeReason::NewStraddle),
            loop_lost_alignment: count(ChangeReason::LoopLostAlignment),
            loop_new_straddle: count(ChangeReason::LoopNewStraddle),
            hot: profiled.then(|| {
                changes
                    .iter()
                    .filter(|c| c.hot_share.is_some_and(|s| s > 0.0))
                    .count()
            }),
        }
    }
}

impl PlacementChange {
    /// Bytes the function grew (positive) or shrank.
    pub fn size_delta(&self) -> i64 {
        self.new.size as i64 - self.old.size as i64
    }
}

/// A loop's identity within its function: the same code at the same place.
fn identity(f: &Function, l: &crate::code::disasm::Loop) -> (u64, u64, u32) {
    (
        l.header.wrapping_sub(f.placement.address),
        l.body_bytes,
        l.back_edges,
    )
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
    let mut unused: Vec<Option<(usize, _)>> = old
        .loops
        .iter()
        .enumerate()
        .map(|(i, l)| Some((i, identity(old, l))))
        .collect();
    let mut pairs = Vec::new();
    for b in &new.loops {
        let id = identity(new, b);
        if let Some(slot) = unused.iter_mut().find(|s| s.is_some_and(|(_, k)| k == id)) {
            let (index, _) = slot.take().expect("found above");
            pairs.push((index, &old.loops[index], b));
        }
    }
    let matched_loops = pairs.len();
    let code_changed = o.size != n.size || matched_loops != old.loops.len().max(new.loops.len());
    if code_changed {
        reasons.push(ChangeReason::CodeChanged);
    }
    for (index, a, b) in pairs {
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
        matched_loops,
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
            .then(b.size_delta().abs().cmp(&a.size_delta().abs()))
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
        summary: Summary::of(&changes),
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
            function("loop", 0x2104, 64, Some(0x2114)),
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
        // The same code 4 bytes further on: it now crosses a line, and its
        // loop, matched by identity, lost its 16-byte alignment.
        assert_eq!(
            by["loop"].reasons,
            vec![
                ChangeReason::OffsetMoved,
                ChangeReason::NewStraddle,
                ChangeReason::LoopLostAlignment
            ]
        );
        assert_eq!(by["loop"].loops[0].new_alignment, 4);
        assert_eq!(by["loop"].matched_loops, 1);
        assert_eq!(
            d.summary,
            Summary {
                code_changed: 0,
                grew: 0,
                shrank: 0,
                moved_only: 3,
                new_straddle: 2,
                loop_lost_alignment: 1,
                loop_new_straddle: 0,
                hot: None,
            }
        );
    }

    #[test]
    fn other_code_is_counted_not_compared_loop_by_loop() {
        let g = Geometry::default();
        let mut unrolled = function("unrolled", 0x2100, 200, Some(0x2140));
        // -O3 made a second loop and moved the first one inside the function.
        let mut second = unrolled.loops[0].clone();
        second.header = 0x2180;
        unrolled.loops.push(second);
        let old = analysis(vec![
            function("unrolled", 0x1100, 64, Some(0x1110)),
            function("small", 0x1200, 32, None),
            function("shrunk", 0x1300, 96, None),
        ]);
        let new = analysis(vec![
            unrolled,
            function("small", 0x2300, 40, None),
            function("shrunk", 0x2400, 48, None),
        ]);
        let d = diff(&old, &new, g);
        let names: Vec<&str> = d.changes.iter().map(|c| c.name.as_str()).collect();
        // Largest size change first: +136, -48, +8.
        assert_eq!(names, ["unrolled", "shrunk", "small"]);
        let u = &d.changes[0];
        assert_eq!(u.reasons, vec![ChangeReason::CodeChanged]);
        // No loop matched: none is listed as an offset pair.
        assert_eq!((u.matched_loops, u.loops.len()), (0, 0));
        assert_eq!((u.old_loop_count, u.new_loop_count), (1, 2));
        assert_eq!(u.size_delta(), 136);
        assert_eq!(
            (d.summary.code_changed, d.summary.grew, d.summary.shrank),
            (3, 2, 1)
        );
        assert_eq!(d.summary.moved_only, 0);
    }
}
