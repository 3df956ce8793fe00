//! The alloc probe: the classic memory-alignment exercise. Create a linked
//! list of 1M nodes and walk it, once with a packed node whose `next`
//! pointer sits at offset 1, once with a node padded to 32 bytes in a
//! 64-byte aligned arena.
//!
//! Packed nodes are 31 bytes (`u8 tag; Node *next; u32 value; u8 pad[18]`
//! under `__attribute__((packed))`), laid end to end from a 64-byte aligned
//! base: node i's pointer sits at byte 31i+1, so 7 of every 64 nodes have a
//! pointer that straddles a cache line and 7 of every 8 a misaligned one.
//! Padded nodes (`next; value; tag`, aligned to 32) never straddle. The
//! packed node carries a payload so that both lists occupy about the same
//! memory (31 vs 32 MiB): what differs is alignment, not footprint (a
//! 13-byte packed node would win on bandwidth alone). Both variants do the
//! same work: write every node and link it, then walk the list summing
//! `value`.

use super::timing::{self, Budget, Order, Stop, Sweep};
use super::types::{Failure, Note, Outcome, Settings, Status};
use serde::{Deserialize, Serialize};
use std::alloc::Layout;

/// The packed node, as C's `__attribute__((packed))` lays it out.
#[repr(C, packed)]
struct Packed {
    tag: u8,
    next: *mut Packed,
    value: u32,
    payload: [u8; 18],
}

/// The padded node: 32 bytes, 32-aligned.
#[repr(C, align(32))]
struct Padded {
    next: *mut Padded,
    value: u32,
    tag: u8,
}

pub const NODES: usize = 1 << 20;
const ARENA_ALIGN: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Node {
    Packed,
    Padded,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub node: Node,
    pub node_bytes: u32,
    /// Offset of `next` inside the node.
    pub next_offset: u32,
    pub arena_align: u32,
    pub nodes: u64,
    /// Nodes whose `next` is not 8-byte aligned / crosses a 64-byte line.
    pub next_misaligned: u64,
    pub next_straddles_line: u64,
    /// Median ns per node to create and link, and to walk.
    pub create_ns_per_node: f64,
    pub walk_ns_per_node: f64,
    pub total_ns_per_node: f64,
    /// total over the padded node's total.
    pub ratio_to_padded: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Alloc {
    pub nodes: u64,
    /// Packed total over padded total.
    pub packed_over_padded: Option<f64>,
    pub rows: Vec<Row>,
}

/// A zeroed 64-byte aligned byte arena.
struct Arena {
    ptr: *mut u8,
    layout: Layout,
}

impl Arena {
    fn new(bytes: usize) -> Option<Arena> {
        let layout = Layout::from_size_align(bytes, ARENA_ALIGN).ok()?;
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(Arena { ptr, layout })
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// Create and link the packed list; returns (create ns, walk ns, checksum).
fn packed_list(arena: &Arena) -> (f64, f64, u64) {
    let base = arena.ptr.cast::<Packed>();
    let create = timing::ns_per_op(NODES as u64, || {
        for i in 0..NODES {
            // SAFETY: the arena holds NODES packed nodes; packed fields are
            // written unaligned through raw pointers.
            unsafe {
                let node = base.add(i);
                let next = if i + 1 < NODES {
                    base.add(i + 1)
                } else {
                    std::ptr::null_mut()
                };
                std::ptr::addr_of_mut!((*node).tag).write(1);
                std::ptr::addr_of_mut!((*node).next).write_unaligned(next);
                std::ptr::addr_of_mut!((*node).value).write_unaligned(i as u32);
                std::ptr::addr_of_mut!((*node).payload).write_unaligned([0; 18]);
            }
        }
    });
    let mut sum = 0u64;
    let walk = timing::ns_per_op(NODES as u64, || {
        let mut p = base;
        while !p.is_null() {
            // SAFETY: p is a node of the list built above.
            unsafe {
                sum += std::ptr::addr_of!((*p).value).read_unaligned() as u64;
                p = std::ptr::addr_of!((*p).next).read_unaligned();
            }
        }
    });
    (create, walk, std::hint::black_box(sum))
}

fn padded_list(arena: &Arena) -> (f64, f64, u64) {
    let base = arena.ptr.cast::<Padded>();
    let create = timing::ns_per_op(NODES as u64, || {
        for i in 0..NODES {
            // SAFETY: the arena holds NODES padded nodes, 64-aligned base.
            unsafe {
                let next = if i + 1 < NODES {
                    base.add(i + 1)
                } else {
                    std::ptr::null_mut()
                };
                base.add(i).write(Padded {
                    next,
                    value: i as u32,
                    tag: 1,
                });
            }
        }
    });
    let mut sum = 0u64;
    let walk = timing::ns_per_op(NODES as u64, || {
        let mut p = base;
        while !p.is_null() {
            // SAFETY: p is a node of the list built above.
            unsafe {
                sum += (*p).value as u64;
                p = (*p).next;
            }
        }
    });
    (create, walk, std::hint::black_box(sum))
}

/// Layout facts of a node type placed end to end from a 64-aligned base.
fn facts(node_bytes: usize, next_offset: usize) -> (u64, u64) {
    let mut misaligned = 0;
    let mut straddles = 0;
    for i in 0..NODES {
        let at = i * node_bytes + next_offset;
        misaligned += u64::from(at % 8 != 0);
        straddles += u64::from(at % 64 + 8 > 64);
    }
    (misaligned, straddles)
}

/// After the first round, stop before a round once less than 30% of the
/// budget is left.
const STOP: Stop = Stop {
    after_rounds: 1,
    below: 0.3,
    every_cell: false,
};

pub fn run(settings: &Settings, budget: &Budget) -> Outcome<Alloc> {
    let packed_size = std::mem::size_of::<Packed>();
    let padded_size = std::mem::size_of::<Padded>();
    let (Some(packed_arena), Some(padded_arena)) = (
        Arena::new(NODES * packed_size),
        Arena::new(NODES * padded_size),
    ) else {
        return Outcome::failed(Status::Failed, Failure::NoArenas, vec![]);
    };
    let rounds = if settings.quick { 3 } else { 11 };
    let expected: u64 = (NODES as u64 - 1) * NODES as u64 / 2;
    // Alternate which variant goes first, so neither always runs warm.
    let swept = timing::try_sweep(2, rounds, Order::Alternating, budget, STOP, |v| {
        let (create, walk, sum) = if v == 0 {
            packed_list(&packed_arena)
        } else {
            padded_list(&padded_arena)
        };
        if sum != expected {
            return Err(Failure::WrongSum { sum, expected });
        }
        Ok((create, walk))
    });
    let Sweep { samples, stopped } = match swept {
        Ok(swept) => swept,
        Err(failure) => return Outcome::failed(Status::Failed, failure, vec![]),
    };
    let notes: Vec<Note> = stopped.into_iter().collect();
    let medians = |v: usize| {
        let (create, walk): (Vec<f64>, Vec<f64>) = samples[v].iter().copied().unzip();
        (timing::median(&create), timing::median(&walk))
    };
    let (padded_create, padded_walk) = medians(1);
    let padded_total = padded_create + padded_walk;
    let row = |node: Node, v: usize, size: usize, next_offset: usize| {
        let (create, walk) = medians(v);
        let (misaligned, straddles) = facts(size, next_offset);
        Row {
            node,
            node_bytes: size as u32,
            next_offset: next_offset as u32,
            arena_align: ARENA_ALIGN as u32,
            nodes: NODES as u64,
            next_misaligned: misaligned,
            next_straddles_line: straddles,
            create_ns_per_node: create,
            walk_ns_per_node: walk,
            total_ns_per_node: create + walk,
            ratio_to_padded: (create + walk) / padded_total,
        }
    };
    let rows = vec![
        row(
            Node::Packed,
            0,
            packed_size,
            std::mem::offset_of!(Packed, next),
        ),
        row(
            Node::Padded,
            1,
            padded_size,
            std::mem::offset_of!(Padded, next),
        ),
    ];
    let ratio = rows[0].ratio_to_padded;
    Outcome {
        status: Status::Ok,
        failure: None,
        notes,
        details: Alloc {
            nodes: NODES as u64,
            packed_over_padded: Some(ratio),
            rows,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_c() {
        assert_eq!(std::mem::size_of::<Packed>(), 31);
        assert_eq!(std::mem::offset_of!(Packed, next), 1);
        assert_eq!(std::mem::size_of::<Padded>(), 32);
        // 2^20 nodes: 31 is odd, so 31i+1 visits every residue mod 64 equally.
        assert_eq!(facts(31, 1), (NODES as u64 / 8 * 7, NODES as u64 / 64 * 7));
        assert_eq!(facts(32, 0), (0, 0));
    }
}
