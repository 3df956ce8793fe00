//! The plain types every part of `structs` talks through: a record's layout
//! (`StructLayout`, `Member`, `Summary`), its atomics and locks (`SyncKind`,
//! `SyncMember`) and the arrays of it the binary declares (`ArrayUse`). A leaf:
//! it imports nothing from the crate, so the DWARF reader, the hazard and
//! suggestion passes and the renderers all depend on it and never on each other
//! through it.

use serde::Serialize;

/// `struct`, `class` or `union`, as DWARF tags it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    Struct,
    Class,
    Union,
}

impl RecordKind {
    pub fn keyword(self) -> &'static str {
        match self {
            RecordKind::Struct => "struct",
            RecordKind::Class => "class",
            RecordKind::Union => "union",
        }
    }
}

/// What makes a member matter for concurrency hazards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncKind {
    /// `_Atomic`, `std::atomic<…>`, `std::atomic_flag`, Rust `Atomic*`, kernel `atomic_t`.
    Atomic,
    /// pthread mutexes and spinlocks, `std::mutex`, Rust `Mutex`, kernel spinlocks.
    Lock,
}

/// One data member (or base class) of a struct, in declaration order.
#[derive(Debug, Clone, Serialize)]
pub struct Member {
    /// Member name; empty for a base class or an anonymous struct/union member.
    pub name: String,
    /// The member's type as C would spell it, without array dimensions.
    pub type_name: String,
    /// Array dimensions, outermost first (`int a[2][3]` → `[2, 3]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub array: Vec<u64>,
    /// Byte offset; for a bitfield, the offset of its storage unit (as pahole prints it).
    pub offset: u64,
    /// Size in bytes; for a bitfield, the size of its storage unit type.
    pub size: u64,
    /// The member type's natural alignment (with any `alignas` on the member).
    pub alignment: u64,
    /// Bitfield: first bit inside the storage unit, counted from its start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bit_offset: Option<u64>,
    /// Bitfield: width in bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bit_size: Option<u64>,
    /// A base class (C++ inheritance).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub base: bool,
    /// An atomic or a lock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncKind>,
    /// Bytes of hole after this member.
    #[serde(skip_serializing_if = "is_zero")]
    pub hole_after: u64,
    /// Bits of hole after this member (bitfields).
    #[serde(skip_serializing_if = "is_zero")]
    pub bit_hole_after: u64,
    /// How pahole spells this member; only the text renderer reads it.
    #[serde(skip)]
    pub text: MemberText,
}

/// A member's type as pahole spells it in its layout text.
#[derive(Debug, Clone, Default)]
pub enum Spelling {
    /// A type name (`const char  *`: pahole puts a space after every qualified type).
    Name(String),
    /// A pointer to a function: `ret (*name)(params)`.
    FnPointer { ret: String, params: String },
    /// An anonymous struct or union, printed inline with its own members. `qualifier`
    /// is `const ` and the like; `through` is `*` for a pointer to it, empty for the
    /// record itself or an array of it (the dimensions are in `MemberText::dims`).
    Inline {
        layout: Box<StructLayout>,
        qualifier: String,
        through: String,
    },
    /// An anonymous enum, printed inline with its enumerators and their values.
    Enum { enumerators: Vec<(String, i64)> },
    /// Not filled in (layouts built by hand in tests): the renderer uses `type_name`.
    #[default]
    Unknown,
}

/// What pahole's text shows of a member beyond its place: spelling, the member's own
/// `DW_AT_alignment`, and the trailing padding of its struct type.
#[derive(Debug, Clone, Default)]
pub struct MemberText {
    pub spelling: Spelling,
    /// `DW_AT_alignment` on the member (`__attribute__((__aligned__(N)))`).
    pub aligned: Option<u64>,
    /// The member's type is a struct with this many bytes of padding at its end.
    pub type_padding: u64,
    /// Array dimensions as pahole prints them (`[4]`, `[]` for a flexible array).
    pub dims: String,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// An atomic or lock anywhere inside a struct, nested members and small arrays expanded.
#[derive(Debug, Clone, Serialize)]
pub struct SyncMember {
    /// Path from the struct, e.g. `stats.hits` or `locks[2]`.
    pub path: String,
    pub offset: u64,
    pub size: u64,
    pub kind: SyncKind,
    pub type_name: String,
    /// An atomic by use: no atomic type, but locked instructions update it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_use: bool,
    /// The locking instructions seen on it (typed atomics too, when seen).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<LockEvidence>,
}

/// pahole's summary numbers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub cachelines: u64,
    pub members: u64,
    pub sum_members: u64,
    pub holes: u64,
    pub sum_holes: u64,
    pub bit_holes: u64,
    pub sum_bit_holes: u64,
    pub padding: u64,
    pub bit_padding: u64,
    pub last_cacheline: u64,
    /// Bits in bitfield members (pahole's `sum bitfield members`).
    #[serde(skip)]
    pub sum_bitfield_bits: u64,
}

/// One struct, class or union with its complete layout.
#[derive(Debug, Clone, Serialize)]
pub struct StructLayout {
    /// Qualified name (`ns::outer::inner<int>`), or the typedef name of an anonymous struct.
    pub name: String,
    pub kind: RecordKind,
    pub size: u64,
    /// Alignment the type permits: DW_AT_alignment, else 1 if packed, else the largest member's.
    pub alignment: u64,
    /// DW_AT_alignment (`alignas`, `__attribute__((aligned))`, Rust `#[repr(align)]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explicit_alignment: Option<u64>,
    /// Packed: some member sits below its natural alignment, or the size is not a
    /// multiple of the largest member alignment (DWARF has no packed attribute).
    pub packed: bool,
    /// Packed as pahole infers it (`__attribute__((__packed__))` in its text): some
    /// member off its type's natural alignment, or a size no multiple of the largest.
    #[serde(skip)]
    pub text_packed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decl_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decl_line: Option<u64>,
    pub members: Vec<Member>,
    pub summary: Summary,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sync_members: Vec<SyncMember>,
    /// Members plainly stored to (no lock) by exactly mapped stores, which are
    /// collected only in functions that also lock something; the evidence of
    /// false sharing's "atomic sharing its line with a member written elsewhere".
    #[serde(skip)]
    pub writes: Vec<PlainWrites>,
}

/// One member's plain stores: where it is, and every store site (exact mappings).
#[derive(Debug, Clone, Default)]
pub struct PlainWrites {
    pub path: String,
    pub offset: u64,
    pub size: u64,
    /// Lowest address first.
    pub sites: Vec<SiteRef>,
}

impl StructLayout {
    /// `name#size`: the key array uses refer to.
    pub fn key(&self) -> String {
        format!("{}#{}", self.name, self.size)
    }
}

/// An array of a struct that the binary declares: a member of another struct, or a variable.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Hash)]
pub struct ArrayUse {
    /// Key of the element struct (`name#size`).
    pub element: String,
    /// The containing struct's name, or None for a variable.
    pub parent: Option<String>,
    /// Alignment the container permits (the parent struct's, or the variable's).
    pub parent_alignment: u64,
    /// Member or variable name.
    pub name: String,
    /// Byte offset of the array inside the parent (0 for a variable).
    pub offset: u64,
    /// Number of elements (all dimensions multiplied).
    pub count: u64,
}

/// One instruction that updates memory atomically: a `lock`-prefixed instruction,
/// `xchg` with memory, `cmpxchg`, `cmpxchg8b`/`16b` or `xadd`, with its memory operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSite {
    pub address: u64,
    /// Index into the function names of the scan.
    pub function: u32,
    /// `lock add`, `xchg`, `lock cmpxchg`, …
    pub op: String,
    /// DWARF register numbers (x86-64) of the base and index registers.
    pub base: Option<u16>,
    pub index: Option<u16>,
    pub scale: u32,
    pub displacement: i64,
    /// Bytes the instruction updates.
    pub size: u64,
    /// RIP-relative (or absolute) operand: the address it updates.
    pub target: Option<u64>,
    /// A segment override (`%gs:`/`%fs:`: per-CPU or thread-local data): an absolute
    /// address maps to the global covering it (the per-CPU section), a register
    /// base is traced like any pointer (to this CPU's copy).
    pub segment: bool,
    /// Not a lock site but a plain store (`mov`, `add`, … with a memory
    /// destination, no lock), kept from functions with a lock site only, for false
    /// sharing's "written elsewhere"; left out of the lock-site statistics.
    pub plain: bool,
    /// How the base register got its value, walked back over straight-line code
    /// from the site (the first link is the base register at the site itself).
    pub chain: Vec<Link>,
    /// The ways into the join points the chain walked back over (`Link::Join`
    /// names a run of them): each a chain of its own, for the same level.
    pub paths: Vec<Vec<Link>>,
    /// Other registers that hold the base plus a constant at the site: (DWARF
    /// register, constant, the `lea`/`mov` that set it). `lea 0x80(%rdi),%rdx`
    /// before `lock xadd %eax,0x80(%rdi)` leaves a variable in `%rdx` that
    /// describes the operand when none describes `%rdi` (`structs::chain`).
    pub aliases: Vec<(u16, i64, u64)>,
}

/// One step back from a lock site's base register to where its value came from.
/// Each *level* is a pointer value: `Register` links name registers that hold it
/// (plus `offset`) at an address, where a variable's location may say what it
/// points to; the level ends in a `Load` (the pointer was read from memory, whose
/// address the next level describes), a `Global` or an `Entry`, or in nothing
/// (set where the decoder does not follow: the value is untracked).
/// `index`: an index register of unknown stride was added on this level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// The level's value is `register` as it was at `address`, plus `offset`.
    Register {
        address: u64,
        register: u16,
        offset: i64,
        index: bool,
    },
    /// The level's value is `offset` plus the pointer loaded from (the next level's
    /// value + `displacement`, + an index of unknown stride when `load_index`) by
    /// the instruction at `address`.
    Load {
        address: u64,
        offset: i64,
        index: bool,
        displacement: i64,
        load_index: bool,
    },
    /// The level's value is `address` (a RIP-relative `lea`) plus `offset`.
    Global {
        address: u64,
        offset: i64,
        index: bool,
    },
    /// The level's value is `register` at the head of a loop (`address`, a jump
    /// target every jump to which is a back edge), plus `offset`; each time round
    /// the loop the register advances by `stride` (`add $24,%rax`), so from here
    /// on the level carries an index of that stride (`structs::track`).
    Induction {
        address: u64,
        register: u16,
        offset: i64,
        stride: i64,
    },
    /// The level's value is `register` as it was on entry to the function (an
    /// argument: nothing wrote it between the entry and here), plus `offset`;
    /// `kept`: no instruction of the whole function writes it, so it holds that
    /// value everywhere in the function.
    Entry {
        register: u16,
        offset: i64,
        index: bool,
        kept: bool,
    },
    /// The level's value is what it was at a join point (`address`), where control
    /// comes from `count` ways (`LockSite::paths[first..first + count]`, each a
    /// chain of this level from the end of one way in: a jump to the join, or the
    /// code falling into it); it is known only when every way says the same.
    Join {
        address: u64,
        first: u32,
        count: u32,
    },
    /// The level's value is what it is at the join point `address` that the walk
    /// back over one of its ways has come round to again (a loop's head), for
    /// `register` + `offset`: the value being worked out there (`Link::Join`).
    Again {
        address: u64,
        register: u16,
        offset: i64,
    },
    /// The rest of the chain is a reload from a stack slot that a register was
    /// spilled to (`structs::spill`); when the slot's memory says nothing, the
    /// level's value is that register's (`LockSite::paths[way]`).
    Spilled { way: u32 },
    /// The walk back stopped here, and one instruction of the function (at
    /// `address`) writes the register (`structs::sole`): when the rest of the chain
    /// says nothing, the level's value is that writer's (`LockSite::paths[way]`).
    Sole { address: u64, way: u32 },
    /// The walk back stopped at `address`, and the writes of the register that
    /// reach it (`structs::reach`) say where its value came from: when the rest of
    /// the chain says nothing, the level's value is what `LockSite::paths[way]`
    /// says (the one write's chain, or a `Join` of each write's, which must agree).
    Reaching { address: u64, way: u32 },
    /// The level's value is `%rax` as the call returning to `address` (the address
    /// after the `call`) left it: the callee's return value, plus `offset`.
    Returned {
        address: u64,
        offset: i64,
        index: bool,
    },
}

/// Every link of `chain` and of the ways into its joins (`LockSite::paths`).
pub fn all_links<'l>(chain: &'l [Link], paths: &'l [Vec<Link>]) -> Vec<&'l Link> {
    let mut out = Vec::new();
    let mut stack = vec![chain];
    while let Some(links) = stack.pop() {
        for l in links {
            out.push(l);
            let (first, count) = match *l {
                Link::Join { first, count, .. } => (first as usize, count as usize),
                Link::Spilled { way } | Link::Sole { way, .. } | Link::Reaching { way, .. } => {
                    (way as usize, 1)
                }
                _ => continue,
            };
            stack.extend(paths.iter().skip(first).take(count).map(Vec::as_slice));
        }
    }
    out
}

/// Where a member was seen locked, for the findings: address, function, operation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SiteRef {
    pub address: u64,
    pub function: String,
    pub op: String,
    /// How this site mapped to the member.
    pub mapping: Mapping,
    /// How the operand's base was derived, when not from a variable's register
    /// (`induction pointer over `table.recs[]`, stride 24`, a stack slot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// How a member became an atomic by use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mapping {
    /// Along the site's chain, a variable whose location is the register there (or
    /// the member a pointer was loaded from), or a global variable at a RIP-relative
    /// address or `lea`.
    Exact,
    /// The base is an argument register unchanged since the function's entry and no
    /// location covers it: the parameter the ABI passes there (GCC units only).
    Inferred,
}

/// The locking instructions that make a member an atomic by use.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LockEvidence {
    /// Up to 3 sites, lowest address first (exact ones before inferred ones).
    pub sites: Vec<SiteRef>,
    /// All sites that update the member.
    pub count: usize,
    /// Distinct functions among all the sites.
    pub functions: usize,
    /// True when no site maps exactly (every one is inferred).
    pub inferred: bool,
    /// Every function the member is locked in (for false sharing's evidence).
    #[serde(skip)]
    pub all_functions: Vec<String>,
}

/// One lock site mapped to a member of a record (what the DWARF pass returns).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LockUse {
    /// Key of the record (`name#size`).
    pub record: String,
    /// Member path inside it (`refcount`, `stats.hits`, `slots[3].count`).
    pub path: String,
    pub offset: u64,
    pub size: u64,
    /// Index into the lock sites.
    pub site: usize,
    pub mapping: Mapping,
    /// How the operand's base was derived, when worth saying (see `SiteRef::via`).
    pub via: Option<String>,
}

/// Why a lock site maps to no member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unmapped {
    /// No function DIE with variables covers the address (no DWARF, or line tables
    /// and function names only, as Rust's `debug = 1`).
    NoDwarf,
    /// `%gs:`/`%fs:` operands (per-CPU or thread-local data) neither a global nor a
    /// traced pointer names.
    Segment,
    /// A stack slot (`%rsp`/`%rbp` based) of a local that is not a record.
    Stack,
    /// The operand's base holds a variable that is no pointer to a record (a pointer
    /// to an integer), or a global that is not a record but cannot be named exactly.
    ScalarVariable,
    /// A RIP-relative address inside no variable DWARF describes.
    UnknownAddress,
    /// The base register's value was set where the decoder does not follow it (before
    /// a branch target or a call that returns it, beyond the look-back, or by
    /// arithmetic other than adding a constant), and no variable's location is it.
    UntrackedBase,
    /// The value was traced, but to nothing that names a record member: an argument
    /// register of no pointer-to-record parameter, a negative offset (a pointer into
    /// a container), a loaded value that is no pointer to a record.
    NoCandidate,
    /// A scaled index register from a displacement that falls in no array, in a
    /// record that holds an array the scale walks from there: GCC folds `h->a[i]`
    /// into `k(%rbx,%rcx,4)` with `k` short of `a`, so the member at the
    /// displacement would be the wrong one.
    StrayIndex,
    /// An index register runs over an array of more than 64 elements, or of unknown
    /// length (a flexible array member): its elements are not expanded one by one,
    /// so no member is registered.
    LargeArray,
}

impl Unmapped {
    /// The JSON spelling (`no-dwarf`, …).
    pub fn label(self) -> &'static str {
        match self {
            Unmapped::NoDwarf => "no-dwarf",
            Unmapped::Segment => "segment",
            Unmapped::Stack => "stack",
            Unmapped::ScalarVariable => "scalar-variable",
            Unmapped::UnknownAddress => "unknown-address",
            Unmapped::UntrackedBase => "untracked-base",
            Unmapped::NoCandidate => "no-candidate",
            Unmapped::StrayIndex => "stray-index",
            Unmapped::LargeArray => "large-array",
        }
    }
}

/// What became of one lock site, for auditing a sample (`lock_sites.list` in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteOutcome {
    pub address: u64,
    pub function: String,
    pub op: String,
    /// `exact`, `inferred`, `variable`, or the reason it is unmapped (`no-dwarf`, …).
    pub outcome: String,
    /// The members it maps to, `record.path` (outermost named record first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// How the operand's base was derived, when worth saying (see `SiteRef::via`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Outcome `variable`: the named variable the operand is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variable: Option<VariableSite>,
}

/// A lock site whose operand is a global variable that is no record member (a plain
/// counter, an element of an array of scalars): at a fixed address, so where it
/// falls against the cache lines is a fact, not a guess.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VariableSite {
    /// `name`, `name[3]` (a member path when the variable's type is an anonymous
    /// record).
    pub name: String,
    /// The operand's address and size in bytes.
    pub address: u64,
    pub size: u64,
    /// The operand's address is a multiple of its size.
    pub aligned: bool,
    /// The operand spans two 64-byte lines (a split lock every time it runs).
    pub crosses_line: bool,
}

/// How the lock sites of a binary mapped, for `--hazards` and the benchmarks.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LockStats {
    /// Instructions found: lock-prefixed, xchg with memory, cmpxchg, xadd.
    pub sites: usize,
    pub exact: usize,
    pub inferred: usize,
    /// Sites whose operand is exactly a named global variable that is no record
    /// member (`SiteOutcome::variable`): mapped, to a variable.
    pub variable: usize,
    /// Sites mapped to no member, by reason (`no-dwarf`, `segment`, …).
    pub unmapped: std::collections::BTreeMap<Unmapped, usize>,
    /// Every site and what became of it, by address.
    pub list: Vec<SiteOutcome>,
}
