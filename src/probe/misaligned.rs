//! The misaligned probe: plain 8-byte loads and stores by offset within a
//! 64-byte line, across a line boundary, and across a 4 KiB page boundary.
//!
//! Loads are timed as a dependent chain (`mov rax,[rdi]; add rdi,rax`, the
//! loaded value is 0), so each row is a load *latency*; stores are timed as
//! back-to-back stores to one address, a store *throughput*. A line-split
//! access needs two cache accesses; a page-split one needs two TLB lookups
//! too, which some CPUs handle in microcode. Inline assembly keeps the exact
//! instruction (a misaligned Rust reference would be undefined behaviour).

use super::timing::{self, Budget, Order, Stop, Sweep};
use super::types::{Failure, Note, Outcome, Settings, Status};
use serde::{Deserialize, Serialize};

const LINE: usize = 64;
const PAGE: usize = 4096;
const SIZE: usize = 8;

/// Load latency or store throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    Load,
    Store,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub op: Op,
    /// Offset of the 8-byte operand inside its 64-byte line.
    pub offset: u32,
    /// Offset inside its 4 KiB page.
    pub page_offset: u32,
    pub crosses_line: bool,
    pub crosses_page: bool,
    /// Median ns per load (latency) or store (throughput).
    pub ns_per_op: Option<f64>,
    /// Over the median aligned cost of the same op.
    pub ratio_to_aligned: Option<f64>,
}

/// Median costs by class, per op.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Summary {
    pub aligned_ns: Option<f64>,
    /// Misaligned but inside one line.
    pub misaligned_in_line_ns: Option<f64>,
    pub line_crossing_ns: Option<f64>,
    pub page_crossing_ns: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Misaligned {
    pub operand_bytes: u32,
    pub load: Summary,
    pub store: Summary,
    pub rows: Vec<Row>,
}

/// `n` dependent 8-byte loads starting at `p` (which must hold 0).
///
/// # Safety
/// `p..p+8` must be readable and hold zero.
unsafe fn load_chain(p: *const u8, n: u64) {
    std::arch::asm!(
        "2:",
        "mov {t}, qword ptr [{p}]",
        "add {p}, {t}",
        "dec {n}",
        "jnz 2b",
        p = inout(reg) p => _,
        n = inout(reg) n.max(1) => _,
        t = out(reg) _,
        options(nostack, readonly),
    );
}

/// `n` 8-byte stores of 0 to `p`.
///
/// # Safety
/// `p..p+8` must be writable memory nothing else uses.
unsafe fn store_loop(p: *mut u8, n: u64) {
    std::arch::asm!(
        "2:",
        "mov qword ptr [{p}], {z}",
        "dec {n}",
        "jnz 2b",
        p = in(reg) p,
        n = inout(reg) n.max(1) => _,
        z = in(reg) 0u64,
        options(nostack),
    );
}

/// Two zeroed, page-aligned pages.
struct Pages {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Pages {
    fn new() -> Option<Pages> {
        let layout = std::alloc::Layout::from_size_align(2 * PAGE, PAGE).ok()?;
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

/// A cell: (op, page offset of the operand).
fn cells() -> Vec<(Op, usize)> {
    let mut cells = Vec::new();
    for op in [Op::Load, Op::Store] {
        // Offsets 0–63 of the second line of the first page: no page crossing.
        cells.extend((0..LINE).map(|o| (op, LINE + o)));
        // The last line of the page: offsets 57–63 cross into the next page.
        cells.extend((LINE - SIZE + 1..LINE).map(|o| (op, PAGE - LINE + o)));
    }
    cells
}

/// After the first round, a round may end part-way once less than a tenth
/// of the budget is left.
const STOP: Stop = Stop {
    after_rounds: 1,
    below: 0.1,
    every_cell: true,
};

pub fn run(settings: &Settings, budget: &Budget) -> Outcome<Misaligned> {
    let Some(pages) = Pages::new() else {
        return Outcome::failed(Status::Failed, Failure::NoPages, vec![]);
    };
    let cells = cells();
    let (rounds, batch) = if settings.quick {
        (3, 20_000)
    } else {
        (15, 100_000)
    };
    let order = Order::Shuffled {
        seed: settings.seed,
    };
    let Sweep { samples, stopped } = timing::sweep(cells.len(), rounds, order, budget, STOP, |i| {
        let (op, page_offset) = cells[i];
        // SAFETY: page_offset + 8 <= 2 pages; the buffer is zeroed and
        // only ever stores zero, so the load chain stays in place.
        timing::ns_per_op(batch, || unsafe {
            let p = pages.ptr.add(page_offset);
            match op {
                Op::Load => load_chain(p, batch),
                Op::Store => store_loop(p, batch),
            }
        })
    });
    let notes: Vec<Note> = stopped.into_iter().collect();
    let mut rows: Vec<Row> = cells
        .iter()
        .zip(&samples)
        .map(|(&(op, page_offset), s)| {
            let address = pages.ptr as usize + page_offset;
            Row {
                op,
                offset: (address % LINE) as u32,
                page_offset: (address % PAGE) as u32,
                crosses_line: address % LINE + SIZE > LINE,
                crosses_page: address % PAGE + SIZE > PAGE,
                ns_per_op: (!s.is_empty()).then(|| timing::median(s)),
                ratio_to_aligned: None,
            }
        })
        .collect();
    let summarize = |op: Op, rows: &[Row]| -> Summary {
        let class = |f: &dyn Fn(&Row) -> bool| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.op == op && f(r))
                .filter_map(|r| r.ns_per_op)
                .collect();
            (!v.is_empty()).then(|| timing::median(&v))
        };
        Summary {
            aligned_ns: class(&|r| r.offset as usize % SIZE == 0),
            misaligned_in_line_ns: class(&|r| r.offset as usize % SIZE != 0 && !r.crosses_line),
            line_crossing_ns: class(&|r| r.crosses_line && !r.crosses_page),
            page_crossing_ns: class(&|r| r.crosses_page),
        }
    };
    let (load, store) = (summarize(Op::Load, &rows), summarize(Op::Store, &rows));
    for row in &mut rows {
        let aligned = match row.op {
            Op::Load => load.aligned_ns,
            Op::Store => store.aligned_ns,
        };
        row.ratio_to_aligned = row.ns_per_op.zip(aligned).map(|(v, a)| v / a);
    }
    Outcome {
        status: if rows.iter().all(|r| r.ns_per_op.is_some()) {
            Status::Ok
        } else {
            Status::Partial
        },
        failure: None,
        notes,
        details: Misaligned {
            operand_bytes: SIZE as u32,
            load,
            store,
            rows,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cover_every_line_offset_and_the_page_end() {
        let c = cells();
        assert_eq!(c.len(), 2 * (64 + 7));
        assert!(c.contains(&(Op::Store, PAGE - 1)));
    }

    #[test]
    fn store_loop_writes_the_eight_bytes_across_the_page_and_no_others() {
        let pages = Pages::new().unwrap();
        // SAFETY: every access is inside the two pages `Pages` owns.
        let bytes = unsafe {
            std::ptr::write_bytes(pages.ptr, 0xff, 2 * PAGE);
            store_loop(pages.ptr.add(PAGE - 3), 10);
            // The chain reads the zeros just stored, so it stays put and ends.
            load_chain(pages.ptr.add(PAGE - 3), 10);
            std::slice::from_raw_parts(pages.ptr.add(PAGE - 4), 10).to_vec()
        };
        assert_eq!(bytes, [0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xff]);
    }
}
