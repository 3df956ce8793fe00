//! ghostbench: is your speedup real, or a layout ghost?
//!
//! The library holds all logic; the binary only parses arguments and prints.
//! See docs/architecture.md for the verbs and how the modules fit together.

pub mod analyze;
pub mod cli;
pub mod code;
pub mod compare;
pub mod doc;
pub mod elf;
pub mod history;
pub mod layout;
pub mod limits;
pub mod noise;
pub mod probe;
pub mod report;
pub mod run;
pub mod safe_file;
pub mod stats;
pub mod store;
pub mod structs;

/// The integration tests' skip helper (`require_tool`), shared by the unit
/// tests so a skip looks and counts the same everywhere.
#[path = "../tests/common/skip.rs"]
#[cfg(test)]
mod test_skip;
