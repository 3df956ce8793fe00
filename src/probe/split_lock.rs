//! The split-lock probe: what a locked add (`lock xadd`) costs at every
//! offset 0–63 of a 64-byte aligned line, for 4- and 8-byte operands.
//!
//! An operand at offset o crosses the line when o + size > 64: offsets 61–63
//! for 4 bytes, 57–63 for 8. Those are *split locks*: the CPU must lock the
//! bus (or both lines) instead of one cache line, and the kernel may trap
//! and put the task to sleep for each one. So the probe reads the kernel's
//! handling first, times one split lock to calibrate, and then keeps the
//! number of split locks to a few hundred at most (a few dozen when one
//! costs more than 100 µs). Under `split_lock_detect=fatal` it runs none.
//!
//! The operations are inline assembly, because a Rust atomic at a
//! misaligned address is undefined behaviour, and the exact instruction is
//! the point.

use super::kernel::{self, SplitLockHandling};
use super::timing::{self, Budget};
use super::types::{Note, Outcome, Settings, Status};
use serde::{Deserialize, Serialize};

/// One (operand size, offset) cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// Operand size in bytes: 4 or 8.
    pub size: u32,
    /// Byte offset of the operand inside its 64-byte line.
    pub offset: u32,
    /// True when the operand crosses into the next line (a split lock).
    pub crosses_line: bool,
    /// True when the offset is a multiple of the operand size.
    pub aligned: bool,
    /// Median ns per locked add; `None` when not run (fatal kernel, budget).
    pub ns_per_op: Option<f64>,
    /// ns_per_op over the median aligned cost for the same size.
    pub ratio_to_aligned: Option<f64>,
    /// Locked adds executed for this cell.
    pub ops: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SplitLock {
    pub kernel: SplitLockHandling,
    /// Offsets whose 4-byte operand crosses a line.
    pub crossing_offsets_4: Vec<u32>,
    /// Offsets whose 8-byte operand crosses a line.
    pub crossing_offsets_8: Vec<u32>,
    /// Median ns of an aligned locked add, 4 and 8 bytes.
    pub aligned_ns_4: Option<f64>,
    pub aligned_ns_8: Option<f64>,
    /// The aligned cost over both sizes (the median of the two): the base of
    /// `split_ratio`.
    pub aligned_ns: Option<f64>,
    /// Median ns of a split lock over both sizes, and its ratio to aligned.
    pub split_ns: Option<f64>,
    pub split_ratio: Option<f64>,
    /// The one split lock timed alone before the sweep, in ns.
    pub calibration_ns: Option<f64>,
    /// How many split locks the probe executed in total.
    pub split_lock_ops: u64,
    pub rows: Vec<Row>,
}

const LINE: usize = 64;
const SIZES: [u32; 2] = [4, 8];

/// A zeroed, 64-byte aligned buffer of two lines.
#[repr(C, align(64))]
struct Lines([u8; 2 * LINE]);

/// `ops` locked adds of 1 to the `size`-byte operand at `p`.
///
/// # Safety
/// `p..p+size` must be valid, writable memory that nothing else accesses.
unsafe fn locked_adds(p: *mut u8, size: u32, ops: u64) {
    for _ in 0..ops {
        if size == 4 {
            std::arch::asm!("lock xadd dword ptr [{p}], {v:e}", p = in(reg) p,
                v = inout(reg) 1u32 => _, options(nostack));
        } else {
            std::arch::asm!("lock xadd qword ptr [{p}], {v}", p = in(reg) p,
                v = inout(reg) 1u64 => _, options(nostack));
        }
    }
}

/// Whether a `size`-byte operand at line offset `offset` crosses the line.
pub fn crosses(offset: u32, size: u32) -> bool {
    offset as usize % LINE + size as usize > LINE
}

/// Sweep every (size, offset) cell; the status is `partial` when no split
/// lock was timed. `checkpoint` is given the in-line result before the first
/// split lock: one split lock can stall the machine for longer than the
/// whole bound (seen here: 20 s for one under a busy host), and an
/// instruction cannot be interrupted, so the parent that kills this probe
/// keeps what was measured before it.
pub fn run(
    settings: &Settings,
    budget: &Budget,
    checkpoint: &mut dyn FnMut(&Outcome<SplitLock>),
) -> Outcome<SplitLock> {
    let handling = kernel::split_lock_handling();
    let mut notes = Vec::new();
    let mut buffer = Box::new(Lines([0; 2 * LINE]));
    let base = buffer.0.as_mut_ptr();
    // Facts from the addresses actually used, not from a formula alone.
    let line_offset = |o: u32| (base as usize + o as usize) % LINE;
    let crossing = |size: u32| -> Vec<u32> {
        (0..LINE as u32)
            .filter(|&o| line_offset(o) + size as usize > LINE)
            .collect()
    };
    let mut details = SplitLock {
        crossing_offsets_4: crossing(4),
        crossing_offsets_8: crossing(8),
        kernel: handling.clone(),
        ..Default::default()
    };
    let (rounds, batch) = if settings.quick {
        (3, 4_000)
    } else {
        (9, 20_000)
    };

    // Cells that stay inside the line: interleaved rounds of batches.
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); SIZES.len() * LINE];
    let mut ops = vec![0u64; SIZES.len() * LINE];
    'rounds: for _ in 0..rounds {
        for (s, &size) in SIZES.iter().enumerate() {
            for offset in 0..LINE as u32 {
                if crosses(line_offset(offset) as u32, size) {
                    continue;
                }
                if budget.below(0.5) {
                    notes.push(Note::InLineSweepStopped);
                    break 'rounds;
                }
                // SAFETY: offset + size <= 64 < 128 bytes of the owned buffer.
                let ns = timing::ns_per_op(batch, || unsafe {
                    locked_adds(base.add(offset as usize), size, batch)
                });
                samples[s * LINE + offset as usize].push(ns);
                ops[s * LINE + offset as usize] += batch;
            }
        }
    }

    // Split locks: calibrate with one, then a small, bounded sweep.
    let split_allowed = settings.split_locks && !handling.fatal;
    if handling.fatal {
        notes.push(Note::SplitLocksFatal);
    } else if !settings.split_locks {
        notes.push(Note::SplitLocksKilled);
    }
    if split_allowed {
        checkpoint(&summarize(
            base as usize,
            details.clone(),
            &samples,
            &ops,
            notes.clone(),
        ));
        if settings.faults.sigbus {
            // Simulate `fatal`. Rust's runtime handles SIGBUS (for stack
            // guard pages) and returns for other faults, so restore the
            // default action first, as the re-executed faulting lock would.
            // SAFETY: resetting a signal's action and raising it.
            unsafe {
                libc::signal(libc::SIGBUS, libc::SIG_DFL);
                libc::raise(libc::SIGBUS);
            }
        }
        if settings.faults.stall {
            // Simulate a split lock that the host stalls (one instruction
            // the probe's own clock cannot interrupt).
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        let first = details.crossing_offsets_8[details.crossing_offsets_8.len() / 2];
        // SAFETY: the operand ends before byte 72 of the 128-byte buffer.
        let calibration =
            timing::ns_per_op(1, || unsafe { locked_adds(base.add(first as usize), 8, 1) });
        details.calibration_ns = Some(calibration);
        details.split_lock_ops += 1;
        let cells: u64 =
            (details.crossing_offsets_4.len() + details.crossing_offsets_8.len()) as u64;
        // Few split locks, and fewer still when each one traps and sleeps.
        let (mut split_rounds, split_batch) = match (calibration > 100_000.0, settings.quick) {
            (true, true) => (1u64, 1u64),
            (true, false) => (3, 1),
            (false, true) => (3, 2),
            (false, false) => (5, 4),
        };
        let room = budget.remaining().as_secs_f64() * 0.4 * 1e9;
        while split_rounds > 1 && (cells * split_rounds * split_batch) as f64 * calibration > room {
            split_rounds -= 1;
        }
        for _ in 0..split_rounds {
            for (s, &size) in SIZES.iter().enumerate() {
                for offset in 0..LINE as u32 {
                    if !crosses(line_offset(offset) as u32, size) {
                        continue;
                    }
                    // SAFETY: offset + size <= 72 <= 128 bytes of the owned buffer.
                    let ns = timing::ns_per_op(split_batch, || unsafe {
                        locked_adds(base.add(offset as usize), size, split_batch)
                    });
                    samples[s * LINE + offset as usize].push(ns);
                    ops[s * LINE + offset as usize] += split_batch;
                    details.split_lock_ops += split_batch;
                }
            }
        }
    }

    summarize(base as usize, details, &samples, &ops, notes)
}

/// The rows and summaries of the cells measured so far.
fn summarize(
    base: usize,
    mut details: SplitLock,
    samples: &[Vec<f64>],
    ops: &[u64],
    notes: Vec<Note>,
) -> Outcome<SplitLock> {
    let mut aligned = [f64::NAN; 2];
    for (s, &size) in SIZES.iter().enumerate() {
        let medians: Vec<f64> = (0..LINE as u32)
            .filter(|o| o % size == 0)
            .map(|o| timing::median(&samples[s * LINE + o as usize]))
            .filter(|x| x.is_finite())
            .collect();
        aligned[s] = timing::median(&medians);
    }
    let mut split_values = Vec::new();
    for (s, &size) in SIZES.iter().enumerate() {
        for offset in 0..LINE as u32 {
            let cell = &samples[s * LINE + offset as usize];
            let ns = (!cell.is_empty()).then(|| timing::median(cell));
            let crosses_line = crosses(((base + offset as usize) % LINE) as u32, size);
            if crosses_line {
                split_values.extend(ns);
            }
            details.rows.push(Row {
                size,
                offset,
                crosses_line,
                aligned: offset % size == 0,
                ns_per_op: ns,
                ratio_to_aligned: ns
                    .filter(|_| aligned[s].is_finite() && aligned[s] > 0.0)
                    .map(|v| v / aligned[s]),
                ops: ops[s * LINE + offset as usize],
            });
        }
    }
    let finite = |x: f64| x.is_finite().then_some(x);
    details.aligned_ns_4 = finite(aligned[0]);
    details.aligned_ns_8 = finite(aligned[1]);
    let aligned_both = timing::median(
        &aligned
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect::<Vec<_>>(),
    );
    details.aligned_ns = finite(aligned_both);
    details.split_ns = finite(timing::median(&split_values));
    details.split_ratio = details.split_ns.zip(details.aligned_ns).map(|(s, a)| s / a);
    let status = if details.split_ratio.is_some() {
        Status::Ok
    } else {
        Status::Partial
    };
    Outcome {
        status,
        failure: None,
        notes,
        details,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossing_offsets() {
        let four: Vec<u32> = (0..64).filter(|&o| crosses(o, 4)).collect();
        let eight: Vec<u32> = (0..64).filter(|&o| crosses(o, 8)).collect();
        assert_eq!(four, vec![61, 62, 63]);
        assert_eq!(eight, (57..64).collect::<Vec<_>>());
    }

    #[test]
    fn locked_adds_add() {
        let mut b = Box::new(Lines([0; 2 * LINE]));
        // SAFETY: offsets 3..7 and 16..24 lie inside the buffer; no split lock here.
        unsafe {
            locked_adds(b.0.as_mut_ptr().add(3), 4, 5);
            locked_adds(b.0.as_mut_ptr().add(16), 8, 7);
        }
        assert_eq!(u32::from_le_bytes(b.0[3..7].try_into().unwrap()), 5);
        assert_eq!(u64::from_le_bytes(b.0[16..24].try_into().unwrap()), 7);
    }
}
