//! Placement arithmetic: where a byte range sits relative to cache lines and
//! DSB (uop-cache) windows. Pure functions on addresses, shared by functions,
//! loops and the diff, so every number in a report is computed one way.

use serde::Serialize;

/// The two granularities every placement is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Geometry {
    /// Cache-line size in bytes (default 64).
    pub line: u64,
    /// DSB window size in bytes (default 32).
    pub window: u64,
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry {
            line: 64,
            window: 32,
        }
    }
}

impl Geometry {
    /// Both sizes must be powers of two between 4 and 4096: placement modulo
    /// anything else is not how caches index code.
    pub fn new(line: u64, window: u64) -> anyhow::Result<Geometry> {
        for (name, value) in [("--line", line), ("--window", window)] {
            if !value.is_power_of_two() || !(4..=4096).contains(&value) {
                anyhow::bail!("{name} must be a power of two between 4 and 4096, got {value}");
            }
        }
        Ok(Geometry { line, window })
    }
}

/// How many `unit`-byte blocks the range [start, start+len) touches (0 when empty).
pub fn spans(start: u64, len: u64, unit: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let end = start.saturating_add(len - 1);
    end / unit - start / unit + 1
}

/// The fewest `unit`-byte blocks a range of `len` bytes could touch if placed well.
pub fn min_spans(len: u64, unit: u64) -> u64 {
    len.div_ceil(unit)
}

/// The size of the "near the end" zone of a block: the last 16 bytes, or the
/// last half for blocks of 16 bytes or less. An entry there gives the front end
/// only a few useful bytes before it must fetch the next block.
pub fn tail_zone(unit: u64) -> u64 {
    16.min(unit / 2)
}

/// True when `address` sits in the tail zone of its `unit`-byte block.
pub fn near_end(address: u64, unit: u64) -> bool {
    address % unit >= unit - tail_zone(unit)
}

/// The largest power of two dividing `address`, capped at `cap` (address 0 is
/// aligned to everything, so it gets `cap`).
pub fn alignment(address: u64, cap: u64) -> u64 {
    if address == 0 {
        return cap;
    }
    (1u64 << address.trailing_zeros()).min(cap)
}

/// Whether `len` bytes starting at `offset` cross a `line`-byte boundary.
pub fn crosses(offset: u64, len: u64, line: u64) -> bool {
    spans(offset, len, line) > 1
}

/// A hot loop (`offset` in its line, `len` bytes) and the bytes of cold code
/// linked before it that change whether it crosses a line: the demo's
/// placement ghost, which moves every hot instruction and changes none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColdPath {
    /// Bytes of cold code: 16, 32 or 48.
    pub bytes: u64,
    /// The loop's start offset in its line and its size, when found.
    pub found: Option<(u64, u64)>,
    /// Whether the move changes whether the loop crosses a line.
    pub flips: bool,
    pub line: u64,
}

impl ColdPath {
    /// The smallest move by 16, 32 or 48 bytes that changes whether the loop
    /// crosses a `line`-byte line; 32 when none does or no loop was found.
    pub fn for_loop(found: Option<(u64, u64)>, line: u64) -> ColdPath {
        let unchanged = ColdPath {
            bytes: 32,
            found,
            flips: false,
            line,
        };
        let Some((offset, len)) = found else {
            return unchanged;
        };
        let before = crosses(offset, len, line);
        match [16, 32, 48]
            .into_iter()
            .find(|n| crosses(offset + n, len, line) != before)
        {
            Some(bytes) => ColdPath {
                bytes,
                flips: true,
                ..unchanged
            },
            None => unchanged,
        }
    }

    /// Where the loop lands after the move: its offset in its line, and
    /// whether it crosses a line there.
    pub fn after(&self) -> Option<(u64, bool)> {
        self.found.map(|(offset, len)| {
            let moved = offset + self.bytes;
            (moved % self.line, crosses(moved, len, self.line))
        })
    }
}

/// Where one range lands: the numbers reported for a function, and compared by the diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Placement {
    pub address: u64,
    pub size: u64,
    /// `address % line`.
    pub line_offset: u64,
    /// `address % window`.
    pub window_offset: u64,
    /// Cache lines the range touches.
    pub lines: u64,
    /// DSB windows the range touches.
    pub windows: u64,
    /// Lines and windows touched beyond the minimum the size needs: a straddle
    /// that a better placement would avoid.
    pub extra_lines: u64,
    pub extra_windows: u64,
}

impl Placement {
    pub fn of(address: u64, size: u64, g: Geometry) -> Placement {
        let lines = spans(address, size, g.line);
        let windows = spans(address, size, g.window);
        Placement {
            address,
            size,
            line_offset: address % g.line,
            window_offset: address % g.window,
            lines,
            windows,
            extra_lines: lines - min_spans(size, g.line),
            extra_windows: windows - min_spans(size, g.window),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_count_touched_blocks() {
        assert_eq!(spans(0, 0, 32), 0);
        assert_eq!(spans(0, 1, 32), 1);
        assert_eq!(spans(0, 32, 32), 1);
        assert_eq!(spans(0, 33, 32), 2);
        assert_eq!(spans(31, 2, 32), 2);
        assert_eq!(spans(30, 2, 32), 1);
        assert_eq!(spans(60, 70, 64), 3);
    }

    #[test]
    fn placement_and_straddles() {
        let g = Geometry::default();
        let p = Placement::of(0x40101c, 10, g);
        assert_eq!((p.line_offset, p.window_offset), (0x1c, 0x1c));
        assert_eq!((p.lines, p.windows), (1, 2));
        assert_eq!((p.extra_lines, p.extra_windows), (0, 1));
        let p = Placement::of(0x401034, 20, g);
        assert_eq!((p.line_offset, p.window_offset), (0x34, 0x14));
        assert_eq!(
            (p.lines, p.windows, p.extra_lines, p.extra_windows),
            (2, 2, 1, 1)
        );
        assert!(near_end(0x401034, 32) && near_end(0x401034, 64));
        assert!(!near_end(0x401024, 64) && near_end(0x401030, 64));
        assert!(!near_end(0x40100f, 32) && near_end(0x401010, 32) && near_end(0x40101f, 32));
    }

    #[test]
    fn alignments() {
        assert_eq!(alignment(0x401040, 64), 64);
        assert_eq!(alignment(0x401030, 64), 16);
        assert_eq!(alignment(0x401031, 64), 1);
        assert_eq!(alignment(0, 64), 64);
        assert!(Geometry::new(64, 32).is_ok());
        assert!(Geometry::new(48, 32).is_err());
        assert!(Geometry::new(64, 0).is_err());
    }

    #[test]
    fn the_cold_path_moves_the_loop_across_a_line_or_says_it_cannot() {
        // A 23-byte loop crosses a 64-byte line only from offsets 42-63.
        assert!(!crosses(32, 23, 64) && crosses(48, 23, 64) && !crosses(41, 23, 64));
        assert!(!crosses(0, 0, 64) && crosses(63, 2, 64));
        // At 32: 16 bytes take it to 48, where it crosses.
        let c = ColdPath::for_loop(Some((32, 23)), 64);
        assert_eq!((c.bytes, c.flips, c.after()), (16, true, Some((48, true))));
        // At 48 it crosses; 16 bytes take it to 0, where it does not.
        let c = ColdPath::for_loop(Some((48, 23)), 64);
        assert_eq!((c.bytes, c.flips, c.after()), (16, true, Some((0, false))));
        // At 0: 16 → 16 and 32 → 32 keep it inside; 48 → 48 crosses.
        let c = ColdPath::for_loop(Some((0, 23)), 64);
        assert_eq!((c.bytes, c.flips), (48, true));
        // A 16-byte loop at a 16-aligned offset never crosses: no move helps.
        let c = ColdPath::for_loop(Some((16, 16)), 64);
        assert_eq!(
            (c.bytes, c.flips, c.after()),
            (32, false, Some((48, false)))
        );
        // A 60-byte loop at 8 crosses at every 16-byte step too.
        assert!(!ColdPath::for_loop(Some((8, 60)), 64).flips);
        let none = ColdPath::for_loop(None, 64);
        assert_eq!((none.bytes, none.flips, none.after()), (32, false, None));
    }
}
