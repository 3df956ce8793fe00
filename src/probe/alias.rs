//! The 4K-aliasing probe: does a load wait for a recent store to an address
//! 4 KiB away (the same low 12 bits) on this CPU?
//!
//! Each iteration stores to `p` and then loads from `p + distance`, walking
//! `p` over one page 8 bytes at a time. With `distance` a multiple of 4096
//! the load matches the store on the address bits the CPU compares first,
//! and on many x86 cores it waits as if it depended on the store ("4K
//! aliasing", Intel's optimization manual §3.6.8.1 (Skylake: `LD_BLOCKS_PARTIAL.ADDRESS_ALIAS`));
//! at other distances it need not. Rows are ns per store+load pair; the
//! summary is the aliased median over the unaliased one. This is what
//! decides whether two heap buffers 4 KiB apart (the `heap` layout source)
//! can differ in speed here.

use super::timing::{self, Budget, Order, Stop, Sweep};
use super::types::{Failure, Note, Outcome, Settings, Status};
use serde::{Deserialize, Serialize};

const PAGE: usize = 4096;
/// Distances from the store to the load: multiples of 4 KiB (aliased) and
/// others (not).
const DISTANCES: [usize; 8] = [
    PAGE,
    2 * PAGE,
    PAGE + 64,
    PAGE + 256,
    PAGE + 1024,
    PAGE + 2048,
    2 * PAGE + 512,
    PAGE - 512,
];
/// The ratio above which the report says this CPU pays for 4K aliasing.
pub const PENALTY_RATIO: f64 = 1.10;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// Bytes from the store to the load.
    pub distance: u32,
    /// Whether the two share their low 12 address bits.
    pub aliased: bool,
    /// Median ns per store+load pair.
    pub ns_per_pair: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Alias {
    pub rows: Vec<Row>,
    /// Median over the aliased rows, and over the others.
    pub aliased_ns: Option<f64>,
    pub unaliased_ns: Option<f64>,
    /// `aliased_ns / unaliased_ns`.
    pub ratio: Option<f64>,
    /// Whether the ratio is at least [`PENALTY_RATIO`].
    pub penalty: Option<bool>,
}

/// `n` pairs: store 0 to `p + i`, then load from `p + i + distance`, `i`
/// walking one page by 8 bytes. The loaded value (0) is added to `i`, so
/// each load's latency is on the loop's critical path and a load held back
/// by the store shows.
///
/// # Safety
/// `p .. p + PAGE + distance + 8` must be writable memory nothing else uses.
unsafe fn pairs(p: *mut u8, distance: usize, n: u64) {
    std::arch::asm!(
        "xor {i:e}, {i:e}",
        "2:",
        "mov qword ptr [{p} + {i}], {z}",
        "mov {t}, qword ptr [{q} + {i}]",
        "add {i}, {t}",
        "add {i}, 8",
        "and {i}, 4095",
        "dec {n}",
        "jnz 2b",
        p = in(reg) p,
        q = in(reg) p.add(distance),
        i = out(reg) _,
        t = out(reg) _,
        z = in(reg) 0u64,
        n = inout(reg) n.max(1) => _,
        options(nostack),
    );
}

/// Zeroed, page-aligned pages.
struct Pages {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Pages {
    fn new(bytes: usize) -> Option<Pages> {
        let layout = std::alloc::Layout::from_size_align(bytes, PAGE).ok()?;
        // SAFETY: the layout has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(Pages { ptr, layout })
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// After the first round, a round may end part-way once less than a tenth
/// of the budget is left.
const STOP: Stop = Stop {
    after_rounds: 1,
    below: 0.1,
    every_cell: true,
};

pub fn run(settings: &Settings, budget: &Budget) -> Outcome<Alias> {
    let largest = DISTANCES.iter().max().copied().unwrap_or(PAGE);
    let Some(pages) = Pages::new(largest + 2 * PAGE) else {
        return Outcome::failed(Status::Failed, Failure::NoPages, vec![]);
    };
    let (rounds, batch) = if settings.quick {
        (5, 50_000)
    } else {
        (21, 400_000)
    };
    let order = Order::Shuffled {
        seed: settings.seed,
    };
    let Sweep { samples, stopped } =
        timing::sweep(DISTANCES.len(), rounds, order, budget, STOP, |i| {
            // SAFETY: the pages hold PAGE + the largest distance + 8 bytes.
            timing::ns_per_op(batch, || unsafe { pairs(pages.ptr, DISTANCES[i], batch) })
        });
    let notes: Vec<Note> = stopped.into_iter().collect();
    let rows: Vec<Row> = DISTANCES
        .iter()
        .zip(&samples)
        .map(|(&distance, s)| Row {
            distance: distance as u32,
            aliased: distance % PAGE == 0,
            ns_per_pair: (!s.is_empty()).then(|| timing::median(s)),
        })
        .collect();
    let class = |aliased: bool| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.aliased == aliased)
            .filter_map(|r| r.ns_per_pair)
            .collect();
        (!v.is_empty()).then(|| timing::median(&v))
    };
    let (aliased_ns, unaliased_ns) = (class(true), class(false));
    let ratio = aliased_ns.zip(unaliased_ns).map(|(a, u)| a / u);
    Outcome {
        status: if rows.iter().all(|r| r.ns_per_pair.is_some()) {
            Status::Ok
        } else {
            Status::Partial
        },
        failure: None,
        notes,
        details: Alias {
            rows,
            aliased_ns,
            unaliased_ns,
            ratio,
            penalty: ratio.map(|r| r >= PENALTY_RATIO),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pairs_store_where_they_should_and_nowhere_else() {
        let pages = Pages::new(4 * PAGE).unwrap();
        // SAFETY: PAGE + 2 * PAGE + 8 bytes are inside the four pages.
        let written = unsafe {
            std::ptr::write_bytes(pages.ptr, 0xff, 2 * PAGE);
            pairs(pages.ptr, 2 * PAGE, 3);
            std::slice::from_raw_parts(pages.ptr as *const u64, 4).to_vec()
        };
        // Three pairs stored 0 at offsets 0, 8, 16 (the loads read the
        // zeros of the far page, so `i` walked by 8).
        assert_eq!(written, [0, 0, 0, u64::MAX]);
        // The loads' page is untouched.
        // SAFETY: inside the pages.
        let far = unsafe { *(pages.ptr.add(2 * PAGE) as *const u64) };
        assert_eq!(far, 0);
    }

    #[test]
    fn aliased_rows_are_the_multiples_of_4_kib() {
        let aliased: Vec<usize> = DISTANCES
            .iter()
            .copied()
            .filter(|d| d % PAGE == 0)
            .collect();
        assert_eq!(aliased, [PAGE, 2 * PAGE]);
        assert!(DISTANCES.iter().filter(|d| *d % PAGE != 0).count() >= 4);
    }
}
