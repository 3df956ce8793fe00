//! Atomics by use, step 1b: for each lock site, how its base register got its value
//! (`Link`s: copies, constant adds, loads from a member, a RIP-relative `lea`, the
//! function's entry), walked back over straight-line code of the site's chunk, and
//! the constant an index register carries (`lea 3(%rcx),%rsi` then `(%rdx,%rsi,8)`).
//! Where control joins from elsewhere (a jump target) the walk goes on before a
//! loop whose back edges leave the register alone or only advance it by one
//! constant stride (an induction pointer, `track`); at any other join it follows
//! every way in (each jump there and the code falling into it, up to 4 ways and 3
//! joins deep) as a chain of its own (`Link::Join`), which maps only when all ways
//! agree (`dwarf::join`); a way that comes round a loop to a join of two or more
//! ways being walked says so (`Link::Again`), and `nop` padding after a jump does
//! not fall into the join after it. It stops at a jump from another chunk, at a call that
//! returns the register (`%rax`: the callee's return value, `Link::Returned`; `%rdx`:
//! nothing), and after 24 instructions on one way. A pointer
//! reloaded from a stack spill slot is also the register stored there (`spill`).
//! Where the walk stops, the register's one writer in the function (`sole`), else
//! the writes of it that reach that point (`reach`), are ways it falls back on.
//! The kernel's `per_cpu(v, cpu)`, a load from `(%off,%ptr,1)` or an `add` of two
//! registers where one holds a CPU's per-CPU offset (`__per_cpu_offset[cpu]`,
//! `%gs:this_cpu_off`), goes on with the other, the pointer to `v`.
//! Indirect jumps (jump tables) are not followed: as for the straight-line walk
//! before, a join reached only through one is not seen.
//! It is over 600 lines because the walk's steps (writers on straight-line code,
//! loop heads, joins, the one writer, the reaching writes, per-CPU pairs) share
//! the `Walk` state and call each other; their rules are tested in `sole`,
//! `spill`, `track`, `reach` and here.

use super::alias::aliases;
use super::reach::{Reaching, ON_ENTRY};
use super::sole::{Part, SoleWriters};
use super::spill::{spilled, stack_escapes};
use super::track::induction;
use super::types::{Link, LockSite};
pub(super) use super::write::PerCpu;
use super::write::{
    dwarf_register, effects, falls_through, full, jump_target, write_of, writes, Effect, Write,
};
use iced_x86::{FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpKind, Register};
use std::cell::{Cell, OnceCell, RefCell};

/// A range of code to decode: one function, or a whole section without symbols.
pub(super) struct Chunk<'a> {
    pub(super) address: u64,
    pub(super) bytes: &'a [u8],
    pub(super) name: u32,
    /// The chunk starts at a function symbol whose registers on entry are its
    /// arguments (not a compiler clone such as `.constprop.0`, whose are not known).
    pub(super) entry: bool,
    /// The chunk is a whole function (not a `.cold` part, not code between symbols).
    pub(super) whole: bool,
    /// Where the kernel keeps each CPU's per-CPU offset (see `PerCpu`).
    pub(super) per_cpu: PerCpu,
}

/// Instructions looked back over from a site for where its registers came from
/// (on each way into a join, afresh).
const LOOKBACK: usize = 24;

/// Join points one chain goes back over, and the ways into one it follows.
const JOINS: usize = 3;
const WAYS: usize = 4;

/// Where a value is walked back from: the register at `code[at]` (before it runs),
/// plus `offset` and an index when `index`; `over_join`: the join at `code[at]`
/// is accounted for (a loop head, or a way into a join).
#[derive(Clone, Copy)]
struct Level {
    at: usize,
    register: Register,
    offset: i64,
    index: bool,
    over_join: bool,
}

/// Each site of `chunk` given the chain of its base register and the constant
/// its index register carries folded in; `code` is the whole chunk, decoded;
/// `cold`, its `.cold` part, and `foreign`, the jumps between functions (`sole`).
pub(super) fn chains(
    chunk: &Chunk<'_>,
    code: &[Instruction],
    (cold, foreign): (Option<&Part>, &[u64]),
    mut sites: Vec<LockSite>,
    outside: &[u64],
) -> Vec<LockSite> {
    let mut jumps: Vec<(u64, usize)> = code
        .iter()
        .enumerate()
        .filter_map(|(k, i)| jump_target(i).map(|t| (t, k)))
        .collect();
    // A jump from another chunk comes from no instruction here (usize::MAX).
    jumps.extend(
        outside
            .iter()
            .filter(|&&t| t >= chunk.address && t < chunk.address + chunk.bytes.len() as u64)
            .map(|&t| (t, usize::MAX)),
    );
    jumps.sort_unstable();
    // Which instructions some jump goes to, so that most steps of a walk need no
    // search of `jumps`.
    let mut targets = vec![false; code.len()];
    for &(t, _) in &jumps {
        if let Ok(k) = code.binary_search_by_key(&t, |i| i.ip()) {
            targets[k] = true;
        }
    }
    let mut factory = InstructionInfoFactory::new();
    let hot = Part {
        address: chunk.address,
        end: chunk.address + chunk.bytes.len() as u64,
        code: Vec::new(),
    };
    // What each instruction writes, for `sole` and `reach` (whole functions only).
    let effects = if chunk.whole {
        effects(code, cold.map_or(&[], |c| c.code.as_slice()), &mut factory)
    } else {
        Vec::new()
    };
    // The registers no instruction of the whole function writes (calls write the
    // caller-saved ones; an instruction of unknown effect, every one).
    let kept = if chunk.whole && !effects.is_empty() && effects.iter().all(|e| !e.unknown) {
        !effects.iter().fold(0u16, |m, e| m | e.defines | e.maybe)
    } else {
        0
    };
    let walk = Walk {
        kept,
        code,
        jumps: &jumps,
        targets: &targets,
        entry: chunk.entry,
        per_cpu: chunk.per_cpu,
        escapes: stack_escapes(code),
        sole: SoleWriters::of(
            code,
            &hot,
            cold,
            (chunk.whole, foreign),
            &effects,
            &mut factory,
        ),
        effects: &effects,
        reach: OnceCell::new(),
        stores: Cell::new(false),
        heads: RefCell::new(Vec::new()),
        function: (&hot, cold, chunk.whole, foreign, outside),
    };
    for site in &mut sites {
        let Ok(at) = code.binary_search_by_key(&site.address, |i| i.ip()) else {
            continue;
        };
        let i = &code[at];
        if let Some(index) = full(i.memory_index()) {
            let k = walk.constant(at, index, &mut factory);
            site.displacement = site
                .displacement
                .wrapping_add(k.wrapping_mul(i64::from(site.scale)));
        }
        if let Some(base) = full(i.memory_base()) {
            walk.stores.set(site.plain);
            if site.base.is_some() {
                (site.chain, site.paths) = walk.chain(at, base, &mut factory);
                if !site.plain {
                    let joins = |k: usize| !walk.sources(k).is_empty();
                    site.aliases = aliases(code, at, base, joins, (walk.effects, &mut factory));
                }
            }
        }
    }
    sites
}

/// Straight-line code of one chunk, walked back from an instruction.
struct Walk<'c> {
    code: &'c [Instruction],
    /// Branch targets inside the chunk and the instruction jumping there, sorted:
    /// control joins there from elsewhere.
    jumps: &'c [(u64, usize)],
    /// Whether a jump in `jumps` goes to each instruction of `code`.
    targets: &'c [bool],
    entry: bool,
    per_cpu: PerCpu,
    /// The chunk's stack addresses escape (`spill::stack_escapes`).
    escapes: bool,
    /// The registers one instruction of the whole function writes (`sole`).
    sole: SoleWriters,
    /// The writes of each register that reach each instruction (`reach`), worked
    /// out the first time a walk needs them.
    reach: OnceCell<Reaching>,
    /// What `reach` needs: the chunk's span, its `.cold` part, whether it is a
    /// whole function, the jumps into functions from others and from other chunks.
    function: (&'c Part, Option<&'c Part>, bool, &'c [u64], &'c [u64]),
    /// The walk is for a plain store, whose chain does without `reach` (stores
    /// outnumber lock sites, and their mappings are only evidence).
    stores: Cell<bool>,
    /// What each instruction of the function writes (`reach::effects`).
    effects: &'c [Effect],
    /// The join points whose ways the walk is in (instruction, register, offset):
    /// a way that comes round to one again says so (`Link::Again`).
    heads: RefCell<Vec<(usize, Register, i64)>>,
    /// The registers (a bit per DWARF number) no instruction of the whole function
    /// writes: they hold their entry values throughout (`Link::Entry::kept`).
    kept: u16,
}

impl Walk<'_> {
    /// Whether no instruction of the whole function writes DWARF register `r`
    /// (`Link::Entry::kept`).
    fn keeps(&self, r: u16) -> bool {
        r < 16 && self.kept & (1 << r) != 0
    }

    /// Whether `code[k]` writes `register` (see `write::writes`): from the
    /// function's effects when worked out (whole functions), else looked up.
    fn writes_at(
        &self,
        k: usize,
        register: Register,
        factory: &mut InstructionInfoFactory,
    ) -> bool {
        let i = &self.code[k];
        match self.effects.get(k) {
            Some(e) if i.flow_control() != FlowControl::Call => e.writes(register),
            _ => writes(i, register, factory),
        }
    }

    /// Whether any of `code[from..=to]` writes `register`.
    fn any_writes(
        &self,
        (from, to): (usize, usize),
        register: Register,
        factory: &mut InstructionInfoFactory,
    ) -> bool {
        (from..=to).any(|k| self.writes_at(k, register, factory))
    }

    /// The instructions jumping to `code[at]`.
    fn sources(&self, at: usize) -> &[(u64, usize)] {
        if !self.targets.get(at).copied().unwrap_or(true) {
            return &[];
        }
        let ip = self.code[at].ip();
        let lo = self.jumps.partition_point(|j| j.0 < ip);
        let hi = self.jumps.partition_point(|j| j.0 <= ip);
        &self.jumps[lo..hi]
    }

    /// Whether `register` at `code[at]` can hold a value other than the one it had
    /// at `code[at - 1]`: control joins there from elsewhere, unless every jump
    /// there is a loop's back edge whose body (`code[at..=source]`) leaves the
    /// register alone.
    fn joined(&self, at: usize, register: Register, factory: &mut InstructionInfoFactory) -> bool {
        let sources = self.sources(at);
        let loops_only = sources.iter().all(|&(_, from)| {
            from != usize::MAX
                && from >= at
                && from - at <= 4 * LOOKBACK
                && !self.any_writes((at, from), register, factory)
        });
        !loops_only || !self.falls_into(at)
    }

    /// Whether control falls into `code[at]` from the code before it: not when
    /// that is padding (`nop`s no jump goes to) after an instruction that does
    /// not fall through (`jmp` to a loop's test, then the aligned loop head).
    fn falls_into(&self, at: usize) -> bool {
        let mut k = at;
        while k > 0 {
            k -= 1;
            let i = &self.code[k];
            if i.mnemonic() != Mnemonic::Nop || self.targets.get(k).copied().unwrap_or(true) {
                return falls_through(i);
            }
        }
        false
    }

    /// The last instruction before `code[at]` on the straight-line path that wrote
    /// `register`, and what it did; None when the path starts (a join point, the
    /// chunk's start: `Some(None)` at the start) before one is found.
    fn writer(
        &self,
        at: usize,
        register: Register,
        looked: &mut usize,
        factory: &mut InstructionInfoFactory,
    ) -> Option<Option<(usize, Write)>> {
        self.writer_from(at, register, looked, factory, false, (&mut None, &mut 0))
    }

    /// `writer`, stepping over the join at `code[at]` itself when `over_join` (a
    /// loop head already accounted for), and saying in `joined_at` where a join
    /// stopped it and in `stopped` where it stopped (the register's value at
    /// `code[stopped]` is the one asked for).
    fn writer_from(
        &self,
        mut at: usize,
        register: Register,
        looked: &mut usize,
        factory: &mut InstructionInfoFactory,
        mut over_join: bool,
        (joined_at, stopped): (&mut Option<usize>, &mut usize),
    ) -> Option<Option<(usize, Write)>> {
        loop {
            *stopped = at;
            if at == 0 {
                let clean = self.sources(0).is_empty();
                return (clean && self.entry).then_some(None);
            }
            if *looked >= LOOKBACK {
                return None;
            }
            if !over_join && self.joined(at, register, factory) {
                *joined_at = Some(at);
                return None;
            }
            over_join = false;
            at -= 1;
            *looked += 1;
            if self.writes_at(at, register, factory) {
                return Some(Some((at, write_of(&self.code[at], register))));
            }
        }
    }

    /// The chain of `base` at `code[at]` (see `Link`), and the ways into the joins
    /// it walked back over (`LockSite::paths`).
    fn chain(
        &self,
        at: usize,
        base: Register,
        factory: &mut InstructionInfoFactory,
    ) -> (Vec<Link>, Vec<Vec<Link>>) {
        let mut links = Vec::new();
        let mut paths = Vec::new();
        let Some(r) = dwarf_register(base) else {
            return (links, paths);
        };
        links.push(Link::Register {
            address: self.code[at].ip(),
            register: r,
            offset: 0,
            index: false,
        });
        let from = Level {
            at,
            register: base,
            offset: 0,
            index: false,
            over_join: false,
        };
        self.level(from, 0, &mut links, &mut paths, factory);
        (links, paths)
    }

    /// Walk one value back from `from`, appending its links (see `Link`); `joins`:
    /// how many join points the walk has gone back over already.
    fn level(
        &self,
        from: Level,
        joins: usize,
        links: &mut Vec<Link>,
        paths: &mut Vec<Vec<Link>>,
        factory: &mut InstructionInfoFactory,
    ) {
        let Level {
            mut at,
            mut register,
            mut offset,
            mut index,
            mut over_join,
        } = from;
        let mut looked = 0;
        loop {
            let mut joined_at = None;
            let mut stopped = at;
            let found = match self.writer_from(
                at,
                register,
                &mut looked,
                factory,
                over_join,
                (&mut joined_at, &mut stopped),
            ) {
                Some(found) => found,
                None => {
                    // A loop head: an induction register goes on before the loop,
                    // with an index of its stride.
                    let stride = joined_at.and_then(|head| {
                        induction(self.code, head, self.sources(head), 4 * LOOKBACK, |i| {
                            writes(i, register, factory).then(|| match write_of(i, register) {
                                Write::AddSelf(k) => Some(k),
                                _ => None,
                            })
                        })
                    });
                    let (Some(head), Some(r)) = (joined_at, dwarf_register(register)) else {
                        // The look-back spent, the chunk's start: the one writer.
                        let here = Level {
                            at: stopped,
                            register,
                            offset,
                            index,
                            over_join,
                        };
                        self.sole(here, joins, links, paths, factory);
                        break;
                    };
                    let Some(stride) = stride else {
                        // Any other join: every way into it, when they are few.
                        let here = Level {
                            at: head,
                            register,
                            offset,
                            index,
                            over_join: true,
                        };
                        // The register's one writer in the function, where the
                        // rest of the chain says nothing.
                        self.sole(here, joins, links, paths, factory);
                        if let Some(join) = self.join(here, joins, paths, factory) {
                            links.push(Link::Register {
                                address: self.code[head].ip(),
                                register: r,
                                offset,
                                index,
                            });
                            links.push(join);
                        }
                        break;
                    };
                    links.push(Link::Induction {
                        address: self.code[head].ip(),
                        register: r,
                        offset,
                        stride,
                    });
                    index = true;
                    at = head;
                    over_join = true;
                    continue;
                }
            };
            over_join = false;
            let Some((w, write)) = found else {
                if let Some(r) = dwarf_register(register) {
                    links.push(Link::Entry {
                        register: r,
                        offset,
                        index,
                        kept: self.keeps(r),
                    });
                }
                break;
            };
            if let Write::Load(Register::RSP, k, false) = write {
                let joins_at = |p: usize| !self.sources(p).is_empty();
                let found = (joins < JOINS)
                    .then(|| spilled(self.code, w, k, self.escapes, joins_at, factory))
                    .flatten();
                if let (Some((store, stored)), Some(r)) =
                    (found, found.and_then(|f| dwarf_register(f.1)))
                {
                    // A reload from a spill slot: also the register stored there,
                    // for when the slot is no variable.
                    let mut way = vec![Link::Register {
                        address: self.code[store].ip(),
                        register: r,
                        offset,
                        index,
                    }];
                    let from = Level {
                        at: store,
                        register: stored,
                        offset,
                        index,
                        over_join: false,
                    };
                    self.level(from, joins + 1, &mut way, paths, factory);
                    if let Ok(way) = u32::try_from(paths.len()) {
                        links.push(Link::Spilled { way });
                    }
                    paths.push(way);
                }
            }
            let address = self.code[w].ip();
            let next = match write {
                Write::Copy(from, true) => from,
                Write::Add(from, k) => {
                    offset = offset.wrapping_add(k);
                    from
                }
                Write::AddSelf(k) => {
                    offset = offset.wrapping_add(k);
                    register
                }
                Write::AddIndexed(from, k) => {
                    let i = &self.code[w];
                    let c = full(i.memory_index())
                        .map_or(0, |x| self.constant(w, x, factory))
                        .wrapping_mul(i64::from(i.memory_index_scale()));
                    offset = offset.wrapping_add(k).wrapping_add(c);
                    index = true;
                    from
                }
                Write::Global(target) | Write::Constant(target) => {
                    links.push(Link::Global {
                        address: target,
                        offset,
                        index,
                    });
                    break;
                }
                // A per-CPU offset added: still the same variable (some CPU's copy).
                Write::AddLoaded { address, segment }
                    if (!segment && self.per_cpu.offsets == Some(address))
                        || (segment && self.per_cpu.this_cpu_off == Some(address)) =>
                {
                    register
                }
                Write::AddLoaded { .. } => break,
                // `%rax` after a call: what the callee returned (its DWARF return
                // type says what it points to).
                Write::Returned(address) => {
                    links.push(Link::Returned {
                        address,
                        offset,
                        index,
                    });
                    break;
                }
                Write::LoadGlobal(target) => {
                    links.push(Link::Load {
                        address: self.code[w].ip(),
                        offset,
                        index,
                        displacement: 0,
                        load_index: false,
                    });
                    links.push(Link::Global {
                        address: target,
                        offset: 0,
                        index: false,
                    });
                    break;
                }
                Write::Load(from, k, true) if self.per_cpu_pair(w, from, factory).is_some() => {
                    // `mov k(%off,%ptr,1)`: a load from one CPU's copy of the
                    // per-CPU variable the other register points to.
                    links.push(Link::Load {
                        address: self.code[w].ip(),
                        offset,
                        index,
                        displacement: k,
                        load_index: false,
                    });
                    offset = 0;
                    index = false;
                    self.per_cpu_pair(w, from, factory).unwrap_or(from)
                }
                Write::Load(from, k, load_index) => {
                    let i = &self.code[w];
                    let c = full(i.memory_index())
                        .map_or(0, |x| self.constant(w, x, factory))
                        .wrapping_mul(i64::from(i.memory_index_scale()));
                    links.push(Link::Load {
                        address: i.ip(),
                        offset,
                        index,
                        displacement: k.wrapping_add(c),
                        load_index,
                    });
                    offset = 0;
                    index = false;
                    from
                }
                // A per-CPU offset added to a pointer to a per-CPU variable, or
                // the pointer to the offset: still that variable (some CPU's copy).
                Write::AddRegister(from) if self.per_cpu_offset(w, from, factory) => register,
                Write::AddRegister(from) if self.per_cpu_offset(w, register, factory) => from,
                Write::AddRegister(from) => {
                    // A global's address plus an index (`lea table(%rip), %rax;
                    // add %rax, %rdi`); otherwise `reg` is taken as the pointer.
                    let mut seen = looked;
                    if let Some(Some((_, Write::Global(target)))) =
                        self.writer(w, from, &mut seen, factory)
                    {
                        links.push(Link::Global {
                            address: target,
                            offset,
                            index: true,
                        });
                        break;
                    }
                    index = true;
                    register
                }
                Write::Other => {
                    // A conditional write (`cmov`): the writes that reach past it,
                    // its source among them.
                    if self
                        .effects
                        .get(w)
                        .is_some_and(|e| e.maybe_writes(register))
                    {
                        let past = Level {
                            at: w + 1,
                            register,
                            offset,
                            index,
                            over_join: false,
                        };
                        self.reaching(past, joins, links, paths, factory);
                    }
                    break;
                }
                Write::Copy(_, false) => break,
            };
            let Some(r) = dwarf_register(next) else { break };
            links.push(Link::Register {
                address,
                register: r,
                offset,
                index,
            });
            at = w;
            register = next;
        }
    }

    /// Where the walk stops without a source (at `stopped.at`), and the function has
    /// one writer of the register (`sole`), or one write of it reaches there
    /// (`reach`): that writer's chain as a way of its own, which the chain falls
    /// back on when the rest of it says nothing (`Link::Sole`, `Link::Reaching`).
    fn sole(
        &self,
        stopped: Level,
        joins: usize,
        links: &mut Vec<Link>,
        paths: &mut Vec<Vec<Link>>,
        factory: &mut InstructionInfoFactory,
    ) {
        let Level {
            register,
            offset,
            index,
            ..
        } = stopped;
        if joins >= JOINS {
            return;
        }
        let Some(w) = self.sole.of_register(register) else {
            self.reaching(stopped, joins, links, paths, factory);
            return;
        };
        // From just after the writer, stepping over any join there: the walk
        // meets the writer first.
        let from = Level {
            at: w + 1,
            register,
            offset,
            index,
            over_join: true,
        };
        let mut way = Vec::new();
        self.level(from, joins + 1, &mut way, paths, factory);
        if let Ok(n) = u32::try_from(paths.len()) {
            links.push(Link::Sole {
                address: self.code[w].ip(),
                way: n,
            });
            paths.push(way);
        }
    }

    /// Where the walk stops without a source (at `stopped.at`): the writes of the
    /// register that reach there (`reach`), each walked back from its writer as a
    /// way of its own, which must all say the same (a `Link::Join` of them when
    /// more than one), as a way the chain falls back on (`Link::Reaching`).
    fn reaching(
        &self,
        stopped: Level,
        joins: usize,
        links: &mut Vec<Link>,
        paths: &mut Vec<Vec<Link>>,
        factory: &mut InstructionInfoFactory,
    ) {
        if self.stores.get() {
            return;
        }
        let (hot, cold, whole, foreign, outside) = self.function;
        let reach = self.reach.get_or_init(|| {
            Reaching::of(
                self.code,
                hot,
                cold,
                (whole, foreign, outside),
                self.effects,
            )
        });
        let Some(sources) = reach.sources(stopped.at, stopped.register, self.code) else {
            return;
        };
        let address = self.code[stopped.at].ip();
        let mut ways = Vec::with_capacity(sources.len());
        for s in sources {
            let mut way = Vec::new();
            if s.writer == ON_ENTRY {
                let Some(r) = dwarf_register(s.register) else {
                    return;
                };
                way.push(Link::Entry {
                    register: r,
                    offset: stopped.offset,
                    index: stopped.index,
                    kept: self.keeps(r),
                });
                ways.push(way);
                continue;
            }
            let moved = s.at == s.writer;
            if moved {
                // A `cmov`'s source register, before it runs.
                let Some(r) = dwarf_register(s.register) else {
                    return;
                };
                way.push(Link::Register {
                    address: self.code[s.at].ip(),
                    register: r,
                    offset: stopped.offset,
                    index: stopped.index,
                });
            }
            let from = Level {
                at: s.at,
                register: s.register,
                over_join: !moved,
                ..stopped
            };
            self.level(from, joins + 1, &mut way, paths, factory);
            ways.push(way);
        }
        let way = if ways.len() == 1 {
            ways.pop().unwrap_or_default()
        } else {
            let (Ok(first), Ok(count)) = (u32::try_from(paths.len()), u32::try_from(ways.len()))
            else {
                return;
            };
            paths.extend(ways);
            vec![Link::Join {
                address,
                first,
                count,
            }]
        };
        if let Ok(n) = u32::try_from(paths.len()) {
            links.push(Link::Reaching { address, way: n });
            paths.push(way);
        }
    }

    /// The ways into the join point `here.at` for `here.register`, each walked back
    /// as a chain of its own into `paths`: each jump to it (from the end of the
    /// jump), and the code falling into it. A back edge whose loop body leaves the
    /// register alone brings the same value round and adds no way; a jump from
    /// another chunk, more than `WAYS` ways or more than `JOINS` joins on one walk
    /// make the value unknown (None).
    fn join(
        &self,
        here: Level,
        joins: usize,
        paths: &mut Vec<Vec<Link>>,
        factory: &mut InstructionInfoFactory,
    ) -> Option<Link> {
        let (head, register) = (here.at, here.register);
        let r = dwarf_register(register)?;
        let key = (head, register, here.offset);
        if !here.index && self.heads.borrow().contains(&key) {
            // Round a loop to a join already being walked.
            return Some(Link::Again {
                address: self.code[head].ip(),
                register: r,
                offset: here.offset,
            });
        }
        if joins >= JOINS || head == 0 {
            return None;
        }
        let mut ways = Vec::new();
        for &(_, from) in self.sources(head) {
            if from == usize::MAX {
                return None;
            }
            // A back edge whose loop body leaves the register alone brings the
            // same value round. Any other jump from after the join (a loop's back
            // edge, or a branch GCC placed after it) is a way like the others:
            // walked back from it, a loop's value reaches this join again and
            // stops there, so only a value the body sets afresh each time round
            // can agree with the other ways.
            let alone = from >= head
                && from - head <= 4 * LOOKBACK
                && !self.any_writes((head, from), register, factory);
            if !alone {
                ways.push(from);
            }
        }
        let falls = self.falls_into(head);
        let count = ways.len() + usize::from(falls);
        if count == 0 || count > WAYS {
            return None;
        }
        let mut found = Vec::with_capacity(count);
        // A join of one way is the code before it: a loop is solved at the join
        // where the way round it meets another.
        let head_of_ways = count > 1;
        if head_of_ways {
            self.heads.borrow_mut().push(key);
        }
        for from in ways {
            // The value at the jump is the value at the join.
            let mut links = vec![Link::Register {
                address: self.code[from].ip(),
                register: r,
                offset: here.offset,
                index: here.index,
            }];
            let way = Level {
                at: from + 1,
                ..here
            };
            self.level(way, joins + 1, &mut links, paths, factory);
            found.push(links);
        }
        if falls {
            let mut links = Vec::new();
            self.level(here, joins + 1, &mut links, paths, factory);
            found.push(links);
        }
        if head_of_ways {
            self.heads.borrow_mut().pop();
        }
        let first = u32::try_from(paths.len()).ok()?;
        paths.extend(found);
        Some(Link::Join {
            address: self.code[head].ip(),
            first,
            count: count as u32,
        })
    }

    /// Whether `register` at `code[at]` holds a CPU's per-CPU offset: the last
    /// write of it on straight-line code before is a load from the kernel's
    /// `__per_cpu_offset(,%cpu,8)` or of `%gs:this_cpu_off` (see `PerCpu`).
    fn per_cpu_offset(
        &self,
        at: usize,
        register: Register,
        factory: &mut InstructionInfoFactory,
    ) -> bool {
        let mut looked = 0;
        let Some(Some((v, _))) = self.writer(at, register, &mut looked, factory) else {
            return false;
        };
        let i = &self.code[v];
        let load = i.mnemonic() == Mnemonic::Mov
            && i.op_count() == 2
            && i.op0_kind() == OpKind::Register
            && i.op0_register().size() == 8
            && i.op1_kind() == OpKind::Memory
            && i.memory_base() == Register::None;
        let at = Some(i.memory_displacement64());
        load && match i.segment_prefix() {
            Register::None => {
                i.memory_index() != Register::None
                    && i.memory_index_scale() == 8
                    && at == self.per_cpu.offsets
            }
            Register::GS => i.memory_index() == Register::None && at == self.per_cpu.this_cpu_off,
            _ => false,
        }
    }

    /// For the load `code[at]` from `(%base,%index,1)` (`base`: its base
    /// register), when one of the two holds a per-CPU offset: the other one, the
    /// pointer to the per-CPU variable whose copy it reads.
    fn per_cpu_pair(
        &self,
        at: usize,
        base: Register,
        factory: &mut InstructionInfoFactory,
    ) -> Option<Register> {
        let i = &self.code[at];
        let index = full(i.memory_index()).filter(|_| i.memory_index_scale() == 1)?;
        if self.per_cpu_offset(at, base, factory) {
            Some(index)
        } else if self.per_cpu_offset(at, index, factory) {
            Some(base)
        } else {
            None
        }
    }

    /// The constant an index register carries on top of its variable part
    /// (`lea 3(%rcx), %rsi` then `(%rdx,%rsi,8)`: 3), 0 when none is seen.
    fn constant(&self, at: usize, index: Register, factory: &mut InstructionInfoFactory) -> i64 {
        let (mut at, mut register, mut k) = (at, index, 0i64);
        let mut looked = 0;
        while let Some(Some((w, write))) = self.writer(at, register, &mut looked, factory) {
            match write {
                Write::Copy(from, _) => register = from,
                Write::Add(from, d) => {
                    k = k.wrapping_add(d);
                    register = from;
                }
                Write::AddSelf(d) => k = k.wrapping_add(d),
                _ => break,
            }
            at = w;
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structs::decode_at_0x1000 as decode;
    use crate::structs::locked::site;

    /// `__per_cpu_offset` in the vmlinux these bytes come from (`-0x7dc634a0`).
    const OFFSETS: u64 = 0xffff_ffff_8239_cb60;

    /// The chain of the first lock site of `bytes` at 0x1000.
    fn chain_of(bytes: &[u8], offsets: Option<u64>) -> Vec<Link> {
        let chunk = Chunk {
            address: 0x1000,
            bytes,
            name: 0,
            entry: false,
            whole: true,
            per_cpu: PerCpu {
                offsets,
                this_cpu_off: None,
            },
        };
        let code = decode(bytes);
        let sites: Vec<_> = code.iter().filter_map(|i| site(i, 0)).collect();
        chains(&chunk, &code, (None, &[]), sites, &[])[0]
            .chain
            .clone()
    }

    fn global(chain: &[Link]) -> Option<u64> {
        chain.iter().find_map(|l| match *l {
            Link::Global { address, .. } => Some(address),
            _ => None,
        })
    }

    #[test]
    fn a_load_from_a_cpus_copy_of_a_per_cpu_pointer_is_a_load_from_that_variable() {
        // cpu_disable_common: mov $0x19030,%r12; mov -0x7dc634a0(,%r15,8),%rax;
        // mov (%rax,%r12,1),%rax; lock btr %rbp,(%rax)
        let bytes = [
            0x49, 0xc7, 0xc4, 0x30, 0x90, 0x01, 0x00, 0x4a, 0x8b, 0x04, 0xfd, 0x60, 0xcb, 0x39,
            0x82, 0x4a, 0x8b, 0x04, 0x20, 0xf0, 0x48, 0x0f, 0xb3, 0x28,
        ];
        let chain = chain_of(&bytes, Some(OFFSETS));
        assert!(matches!(
            chain[1],
            Link::Load {
                displacement: 0,
                load_index: false,
                ..
            }
        ));
        assert_eq!(global(&chain), Some(0x19030));
        // Without the kernel's per-CPU offsets the load's base is no pointer known.
        assert_eq!(global(&chain_of(&bytes, None)), None);
    }

    #[test]
    fn a_per_cpu_offset_added_to_a_pointer_keeps_the_pointer() {
        // mov -0x7dc634a0(,%rdx,8),%rcx; mov $0x19030,%r14; add %r14,%rcx;
        // lock incl (%rcx): the offset is in %rcx, the variable in %r14.
        let bytes = [
            0x48, 0x8b, 0x0c, 0xd5, 0x60, 0xcb, 0x39, 0x82, 0x49, 0xc7, 0xc6, 0x30, 0x90, 0x01,
            0x00, 0x4c, 0x01, 0xf1, 0xf0, 0xff, 0x01,
        ];
        let chain = chain_of(&bytes, Some(OFFSETS));
        assert_eq!(global(&chain), Some(0x19030));
        assert!(chain.iter().all(|l| !matches!(
            l,
            Link::Global { index: true, .. } | Link::Register { index: true, .. }
        )));
        // Another table's entry added: no per-CPU pointer.
        assert_eq!(global(&chain_of(&bytes, Some(OFFSETS + 8))), None);
    }

    #[test]
    fn rax_after_a_call_is_the_value_it_returned_and_rdx_is_nothing() {
        // irq_thread's shape: call f; mov %rax,%r12; lock orb $0x10,0x40(%r12)
        let bytes = [
            0xe8, 0x00, 0x00, 0x00, 0x00, 0x49, 0x89, 0xc4, 0xf0, 0x41, 0x80, 0x4c, 0x24, 0x40,
            0x10,
        ];
        let chain = chain_of(&bytes, None);
        assert_eq!(
            chain.last(),
            Some(&Link::Returned {
                address: 0x1005,
                offset: 0,
                index: false,
            })
        );
        // mov %rdx,%r12 instead: the call's %rdx is no value it returned.
        let mut rdx = bytes;
        rdx[7] = 0xd4;
        let chain = chain_of(&rdx, None);
        assert!(!chain.iter().any(|l| matches!(l, Link::Returned { .. })));
    }
}
