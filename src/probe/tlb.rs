//! The tlb probe: a random pointer chase over working sets from 16 KiB to
//! 1 GiB (64 MiB with `--quick`), once on 4 KiB pages (`MADV_NOHUGEPAGE`)
//! and once with `madvise(MADV_HUGEPAGE)`.
//!
//! Each step loads the next node's address from the current node, so a row
//! is the latency of one dependent access. At small sizes both page sizes
//! give cache latency; once the working set outgrows the TLB's reach, the
//! 4 KiB curve pays a page walk per access and the gap between the curves is
//! the TLB cost. Working sets above 64 MiB hold at most 2^20 nodes (one per
//! stride of size/2^20 bytes, every 4 KiB page touched), so setup stays
//! bounded while every access still misses cache and TLB alike.
//!
//! Whether huge pages were really obtained is read back from
//! /proc/self/smaps (`AnonHugePages`), because `madvise` is only advice.

use super::kernel::{self, Thp};
use super::timing::{self, Budget, SplitMix};
use super::types::{Note, Outcome, Settings, Status};
use serde::{Deserialize, Serialize};
use std::time::Instant;

const HUGE: usize = 2 << 20;
const MIN_SET: u64 = 16 << 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pages {
    /// 4 KiB pages (`MADV_NOHUGEPAGE`).
    Small,
    /// `madvise(MADV_HUGEPAGE)`.
    Huge,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub working_set_bytes: u64,
    pub pages: Pages,
    /// Nodes in the chain and bytes between nodes.
    pub nodes: u64,
    pub stride_bytes: u64,
    /// Median ns per dependent access.
    pub ns_per_access: f64,
    /// Bytes of the mapping backed by huge pages (AnonHugePages), if readable.
    pub huge_bytes: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Tlb {
    pub thp: Thp,
    /// The largest working set the sweep was to reach.
    pub max_working_set_bytes: u64,
    /// The largest one measured (smaller if the time bound stopped it).
    pub largest_measured_bytes: u64,
    /// At the largest size measured on both: 4 KiB ns / huge ns.
    pub small_over_huge: Option<f64>,
    pub rows: Vec<Row>,
}

/// An anonymous mapping aligned to 2 MiB.
struct Region {
    map: *mut u8,
    map_len: usize,
    ptr: *mut u8,
}

impl Region {
    fn new(len: usize, pages: Pages) -> Result<Region, Note> {
        let map_len = len.div_ceil(HUGE) * HUGE + HUGE;
        // SAFETY: a fresh private anonymous mapping; checked for MAP_FAILED.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(Note::MapFailed {
                bytes: map_len as u64,
                error: std::io::Error::last_os_error().to_string(),
            });
        }
        let map = map.cast::<u8>();
        let ptr = (map as usize).div_ceil(HUGE) * HUGE;
        let ptr = ptr as *mut u8;
        let advice = match pages {
            Pages::Small => libc::MADV_NOHUGEPAGE,
            Pages::Huge => libc::MADV_HUGEPAGE,
        };
        // SAFETY: advising inside our own mapping; failure only means no huge pages.
        unsafe { libc::madvise(ptr.cast(), len.div_ceil(HUGE) * HUGE, advice) };
        Ok(Region { map, map_len, ptr })
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// AnonHugePages of the smaps entry containing `address`, in bytes.
fn huge_bytes(address: usize) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((start, end)) = first.split_once('-') {
            if let (Ok(s), Ok(e)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            ) {
                inside = s <= address && address < e;
                continue;
            }
        }
        if inside {
            if let Some(rest) = line.strip_prefix("AnonHugePages:") {
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                return Some(kb * 1024);
            }
        }
    }
    None
}

/// Measure one (size, pages) cell: build a random cyclic chain and chase it.
/// Returns the row and the seconds spent on setup (mapping, faults, links).
fn measure(
    size: u64,
    pages: Pages,
    settings: &Settings,
    max_nodes: u64,
) -> Result<(Row, f64), Note> {
    let stride = (size / max_nodes).max(64).next_power_of_two();
    let nodes = (size / stride) as usize;
    let setup = Instant::now();
    let region = Region::new(size as usize, pages)?;
    // Sattolo's algorithm: a single cycle through every node.
    let mut order: Vec<u32> = (0..nodes as u32).collect();
    let mut rng = SplitMix::new(settings.seed ^ size);
    for i in (1..nodes).rev() {
        let j = rng.below(i);
        order.swap(i, j);
    }
    // Write the nodes in memory order (sequential faults and stores), each
    // pointing at its successor in the cycle: pos is the inverse of order.
    let mut pos = vec![0u32; nodes];
    for (i, &slot) in order.iter().enumerate() {
        pos[slot as usize] = i as u32;
    }
    let base = region.ptr as usize;
    for (slot, &at) in pos.iter().enumerate() {
        let next = order[(at as usize + 1) % nodes] as usize;
        // SAFETY: both addresses are node slots inside the region, 8-aligned.
        unsafe {
            ((base + slot * stride as usize) as *mut usize).write(base + next * stride as usize)
        };
    }
    drop((order, pos));
    let setup_s = setup.elapsed().as_secs_f64();
    // Enough steps to cycle the chain at least once where that is cheap;
    // capped, because a miss costs ~100-400 ns here and the time is bounded.
    let (steps, reps): (u64, usize) = if settings.quick {
        ((nodes as u64).clamp(20_000, 100_000), 3)
    } else {
        (
            (2 * nodes as u64).clamp(100_000, 400_000),
            if size >= 64 << 20 { 3 } else { 5 },
        )
    };
    let mut samples = Vec::new();
    let mut p = base;
    for _ in 0..reps {
        let ns = timing::ns_per_op(steps, || {
            for _ in 0..steps {
                // SAFETY: p always holds a node address written above.
                p = unsafe { std::ptr::read_volatile(p as *const usize) };
            }
        });
        samples.push(ns);
    }
    std::hint::black_box(p);
    Ok((
        Row {
            working_set_bytes: size,
            pages,
            nodes: nodes as u64,
            stride_bytes: stride,
            ns_per_access: timing::median(&samples),
            huge_bytes: huge_bytes(base),
        },
        setup_s,
    ))
}

pub fn run(settings: &Settings, budget: &Budget) -> Outcome<Tlb> {
    let mut thp = kernel::thp();
    if settings.faults.nothp {
        thp = Thp {
            enabled: Some("never".into()),
            defrag: thp.defrag,
            available: false,
        };
    }
    // ×2 steps up to 64 MiB, then 256 MiB and 1 GiB; ×4 steps to 64 MiB with --quick.
    let (sizes, max_nodes): (Vec<u64>, u64) = if settings.quick {
        ((0..7).map(|i| MIN_SET << (2 * i)).collect(), 1 << 18)
    } else {
        let mut sizes: Vec<u64> = (0..13).map(|i| MIN_SET << i).collect();
        sizes.extend([256 << 20, 1 << 30]);
        (sizes, 1 << 20)
    };
    let max_set = *sizes.last().unwrap_or(&MIN_SET);
    let mut notes = Vec::new();
    let mut modes = vec![Pages::Small];
    if thp.available {
        modes.push(Pages::Huge);
    } else {
        notes.push(Note::NoTransparentHugePages {
            enabled: thp.enabled.clone(),
        });
    }
    let mut rows = Vec::new();
    // (size, setup seconds, chase seconds) of the last size measured.
    let mut last: Option<(u64, f64, f64)> = None;
    let mut status = Status::Ok;
    for &size in &sizes {
        // Setup grows with the size; the chase is capped, so it does not.
        if let Some((last_size, setup, chase)) = last {
            let estimate = (setup * (size as f64 / last_size as f64) + chase) * 1.2;
            if estimate > budget.remaining().as_secs_f64() {
                notes.push(Note::StoppedBeforeSize {
                    bytes: size,
                    budget_s: budget.limit().as_secs_f64(),
                });
                status = Status::Partial;
                break;
            }
        }
        let start = Instant::now();
        let mut setup_total = 0.0;
        for &pages in &modes {
            match measure(size, pages, settings, max_nodes) {
                Ok((row, setup)) => {
                    rows.push(row);
                    setup_total += setup;
                }
                Err(e) => {
                    notes.push(e);
                    status = Status::Partial;
                }
            }
        }
        let total = start.elapsed().as_secs_f64();
        last = Some((size, setup_total, total - setup_total));
    }
    if thp.available {
        let huge_rows: Vec<&Row> = rows.iter().filter(|r| r.pages == Pages::Huge).collect();
        if !huge_rows.is_empty() && huge_rows.iter().all(|r| r.huge_bytes == Some(0)) {
            notes.push(Note::NoHugePagesObtained);
        }
    }
    let largest = rows.iter().map(|r| r.working_set_bytes).max().unwrap_or(0);
    let at = |pages: Pages| {
        rows.iter()
            .find(|r| r.working_set_bytes == largest && r.pages == pages)
            .map(|r| r.ns_per_access)
    };
    let small_over_huge = at(Pages::Small).zip(at(Pages::Huge)).map(|(s, h)| s / h);
    Outcome {
        status,
        failure: None,
        notes,
        details: Tlb {
            thp,
            max_working_set_bytes: max_set,
            largest_measured_bytes: largest,
            small_over_huge,
            rows,
        },
    }
}
