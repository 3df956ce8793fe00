//! The diff's first screen on fixed changes: counts by kind, one offset
//! column when the window is the line, loops by identity.

use super::*;
use crate::code::diff::{ChangeReason, LoopChange, PlacementChange, Summary};
use crate::code::placement::{Geometry, Placement};

fn change(name: &str, sizes: (u64, u64), loops: (usize, usize, usize)) -> PlacementChange {
    let g = Geometry::new(64, 64).unwrap();
    PlacementChange {
        name: name.into(),
        symbol: name.into(),
        old: Placement::of(0x1000, sizes.0, g),
        new: Placement::of(0x2020, sizes.1, g),
        reasons: vec![],
        loops: vec![],
        old_loop_count: loops.0,
        new_loop_count: loops.1,
        matched_loops: loops.2,
        hot_share: None,
    }
}

fn moved_loop(lost: bool) -> LoopChange {
    LoopChange {
        index: 0,
        old_header: 0x1010,
        new_header: 0x2034,
        old_line_offset: 16,
        new_line_offset: 52,
        old_alignment: 16,
        new_alignment: 4,
        old_windows: 1,
        new_windows: 1,
        lost_alignment: lost,
        new_straddle: false,
    }
}

#[test]
fn the_diff_opens_with_counts_by_kind_and_lists_loops_by_identity() {
    let mut unrolled = change("sqlite3VdbeExec", (900, 1400), (17, 19, 12));
    unrolled.reasons = vec![ChangeReason::OffsetMoved, ChangeReason::CodeChanged];
    let mut moved = change("pcache1Fetch", (200, 200), (3, 3, 3));
    moved.reasons = vec![ChangeReason::OffsetMoved, ChangeReason::LoopLostAlignment];
    moved.loops = vec![moved_loop(true), moved_loop(true)];
    let diff = Diff {
        old: "a.so".into(),
        new: "b.so".into(),
        matched: 10,
        only_in_old: 1,
        only_in_new: 0,
        summary: Summary {
            code_changed: 1,
            grew: 1,
            shrank: 0,
            moved_only: 1,
            new_straddle: 0,
            loop_lost_alignment: 1,
            loop_new_straddle: 0,
            hot: None,
        },
        changes: vec![unrolled, moved],
    };
    let text = render_diff(&diff, false, 20, false, Geometry::new(64, 64).unwrap());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "placement changes from a.so to b.so: 2 of 10 matched functions changed (1 only in the first, 0 only in the second)"
    );
    assert_eq!(
        lines[1],
        "  1 with other code (1 larger, 0 smaller, 0 the same size with other loops); 1 the same code, placed elsewhere"
    );
    assert_eq!(
        lines[2],
        "  new hazards: 0 functions touch more lines or windows than their size needs; 1 a loop that lost its alignment, 0 a tight loop newly straddling a window"
    );
    assert!(lines[4].contains("largest size changes first"), "{text}");
    // One offset column when the window is the line; no address pairs, no @a→b loop pairs.
    assert_eq!(lines[6].matches("off64").count(), 1, "{text}");
    assert!(!lines[6].contains("windows"), "{text}");
    assert!(!text.contains('@') && !text.contains("0x"), "{text}");
    assert!(text.contains("900 → 1400"), "{text}");
    assert!(text.contains("17 → 19 (12 same)"), "{text}");
    assert!(text.contains("code changed (+500 B)"), "{text}");
    assert!(text.contains("3 (2 moved)"), "{text}");
    assert!(text.contains("loop lost alignment ×2"), "{text}");
    // With a 32-byte window, its offset has a column of its own.
    let text = render_diff(&diff, false, 20, false, Geometry::new(64, 32).unwrap());
    assert!(text.contains("off64") && text.contains("off32") && text.contains("windows"));
}
