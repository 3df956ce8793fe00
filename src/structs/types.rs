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
