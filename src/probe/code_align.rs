//! The code-align probe: the same small function's machine code copied into
//! an executable mapping at every offset 0–63 of a 64-byte line, called
//! through a pointer in a tight loop.
//!
//! Nothing changes between the copies but where the code sits relative to
//! cache lines and 32-byte fetch/uop-cache (DSB) windows, so the spread of
//! ns/call across offsets is this machine's code-placement sensitivity: the
//! noise floor under any "compiler X made my loop faster" claim.
//!
//! The function (14 bytes, hand-assembled, position independent):
//! ```text
//! 0:  31 c0      xor  eax, eax
//! 2:  01 f8      add  eax, edi          ; loop head
//! 4:  8d 04 78   lea  eax, [rax+rdi*2]
//! 7:  31 f8      xor  eax, edi
//! 9:  ff cf      dec  edi
//! b:  75 f5      jne  2
//! d:  c3         ret
//! ```

use super::timing::{self, Budget, Order, Stop, Sweep};
use super::types::{Failure, Note, Outcome, Settings, Status};
use serde::{Deserialize, Serialize};

/// The function's bytes; see the module comment.
pub const CODE: [u8; 14] = [
    0x31, 0xc0, 0x01, 0xf8, 0x8d, 0x04, 0x78, 0x31, 0xf8, 0xff, 0xcf, 0x75, 0xf5, 0xc3,
];
/// Byte range of the loop body inside [`CODE`].
const LOOP: (usize, usize) = (2, 13);
/// Iterations of the function's loop per call.
const ITERATIONS: u32 = 8;
/// Distance between copies: a multiple of 64, so copy k sits at line offset k.
const STRIDE: usize = 128;

/// What the machine code computes, for checking each copy before timing it.
pub fn reference(n: u32) -> u32 {
    let (mut eax, mut edi) = (0u32, n);
    loop {
        eax = eax.wrapping_add(edi);
        eax = eax.wrapping_add(edi.wrapping_mul(2));
        eax ^= edi;
        edi = edi.wrapping_sub(1);
        if edi == 0 {
            return eax;
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// Entry offset inside the 64-byte line.
    pub offset: u32,
    /// Entry offset inside the 32-byte window.
    pub window_offset: u32,
    /// The loop body crosses a 32-byte window / 64-byte line boundary.
    pub loop_crosses_window: bool,
    pub loop_crosses_line: bool,
    /// Median ns per call, with a 95% CI of the median.
    pub ns_per_call: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// Batches timed.
    pub samples: u32,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CodeAlign {
    pub function_bytes: u32,
    pub loop_iterations_per_call: u32,
    pub calls_per_sample: u64,
    pub fastest_offset: Option<u32>,
    pub slowest_offset: Option<u32>,
    /// Slowest minus fastest median ns/call, and that as a fraction of the fastest.
    pub spread_ns: Option<f64>,
    pub spread_fraction: Option<f64>,
    /// True when the slowest offset's CI lies wholly above the fastest's.
    pub spread_significant: bool,
    pub rows: Vec<Row>,
}

/// An anonymous mapping holding the 64 copies, executable once sealed.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    /// Map, fill with int3, copy the function at every offset, then make it
    /// read+execute (never writable and executable at once).
    fn new(noexec: bool) -> Result<Mapping, Failure> {
        let len = 64 * STRIDE;
        // SAFETY: a fresh private anonymous mapping; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(Failure::MapFailed {
                error: std::io::Error::last_os_error().to_string(),
            });
        }
        let mapping = Mapping {
            ptr: ptr.cast(),
            len,
        };
        // SAFETY: the mapping is `len` writable bytes; copy k ends at
        // k*STRIDE + k + 14 <= 63*128 + 77 < len.
        unsafe {
            std::ptr::write_bytes(mapping.ptr, 0xcc, len);
            for k in 0..64 {
                std::ptr::copy_nonoverlapping(
                    CODE.as_ptr(),
                    mapping.ptr.add(k * STRIDE + k),
                    CODE.len(),
                );
            }
        }
        let result = if noexec {
            Err(std::io::Error::from_raw_os_error(libc::EACCES))
        } else {
            // SAFETY: changing protection of our own mapping.
            match unsafe { libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_EXEC) } {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        };
        result.map_err(|e| Failure::NoExecutableMemory {
            error: e.to_string(),
        })?;
        Ok(mapping)
    }

    fn function(&self, offset: usize) -> extern "C" fn(u32) -> u32 {
        // SAFETY: the mapping is executable and holds CODE at this address,
        // a complete function following the SysV calling convention.
        unsafe {
            std::mem::transmute::<*mut u8, extern "C" fn(u32) -> u32>(
                self.ptr.add(offset * STRIDE + offset),
            )
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping we created.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Three rounds always; then stop before a round once less than 30% of the
/// budget is left.
const STOP: Stop = Stop {
    after_rounds: 3,
    below: 0.3,
    every_cell: false,
};

pub fn run(settings: &Settings, budget: &Budget) -> Outcome<CodeAlign> {
    let mapping = match Mapping::new(settings.faults.noexec) {
        Ok(m) => m,
        Err(failure) => return Outcome::failed(Status::Unavailable, failure, vec![]),
    };
    let expected = reference(ITERATIONS);
    for k in 0..64 {
        let got = mapping.function(k)(ITERATIONS);
        if got != expected {
            return Outcome::failed(
                Status::Failed,
                Failure::WrongCopy {
                    offset: k,
                    got,
                    expected,
                },
                vec![],
            );
        }
    }
    let (max_rounds, calls) = if settings.quick {
        (15, 2_000u64)
    } else {
        (120, 10_000)
    };
    let order = Order::Shuffled {
        seed: settings.seed,
    };
    let Sweep { samples, stopped } = timing::sweep(64, max_rounds, order, budget, STOP, |k| {
        let f = mapping.function(k);
        timing::ns_per_op(calls, || {
            let mut acc = 0u32;
            for _ in 0..calls {
                acc = acc.wrapping_add(f(std::hint::black_box(ITERATIONS)));
            }
            std::hint::black_box(acc);
        })
    });
    let notes: Vec<Note> = stopped.into_iter().collect();
    let rows: Vec<Row> = (0..64usize)
        .map(|k| {
            let address = mapping.ptr as usize + k * STRIDE + k;
            let (first, last) = (address + LOOP.0, address + LOOP.1 - 1);
            let (ci_low, ci_high) = timing::median_ci(&samples[k]);
            Row {
                offset: (address % 64) as u32,
                window_offset: (address % 32) as u32,
                loop_crosses_window: first / 32 != last / 32,
                loop_crosses_line: first / 64 != last / 64,
                ns_per_call: timing::median(&samples[k]),
                ci_low,
                ci_high,
                samples: samples[k].len() as u32,
            }
        })
        .collect();
    let by = |better: fn(f64, f64) -> bool| {
        rows.iter()
            .filter(|r| r.ns_per_call.is_finite())
            .reduce(|a, b| {
                if better(b.ns_per_call, a.ns_per_call) {
                    b
                } else {
                    a
                }
            })
    };
    let (fast, slow) = (by(|a, b| a < b), by(|a, b| a > b));
    let mut details = CodeAlign {
        function_bytes: CODE.len() as u32,
        loop_iterations_per_call: ITERATIONS,
        calls_per_sample: calls,
        ..Default::default()
    };
    if let (Some(fast), Some(slow)) = (fast, slow) {
        let spread = slow.ns_per_call - fast.ns_per_call;
        details.fastest_offset = Some(fast.offset);
        details.slowest_offset = Some(slow.offset);
        details.spread_ns = Some(spread);
        details.spread_fraction = Some(spread / fast.ns_per_call);
        details.spread_significant = slow.ci_low > fast.ci_high;
    }
    details.rows = rows;
    Outcome {
        status: Status::Ok,
        failure: None,
        notes,
        details,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_compute_the_reference() {
        let m = Mapping::new(false).expect("executable memory in tests");
        for k in [0, 17, 31, 63] {
            for n in [1, 2, 8, 100] {
                assert_eq!(m.function(k)(n), reference(n), "offset {k}, n {n}");
            }
        }
    }

    #[test]
    fn noexec_is_a_clear_error() {
        let e = Mapping::new(true).err().unwrap();
        assert!(
            matches!(&e, Failure::NoExecutableMemory { error } if error.contains("denied")),
            "{e:?}"
        );
    }
}
