//! The typed contract of the `--json` documents ghostbench writes and reads
//! back (docs/json-schema.md): the [`Schema`] names and versions, spelled here
//! and nowhere else, and one struct per document kind the store, `history`,
//! `--fail-on` and `analyze` read. A document is read whole through these
//! types or refused with a one-line [`Error`]; a field that moved fails
//! loudly, never as a silent default. Older schema versions are brought up to
//! the current one by [`migrate`] first, the one place that edits a
//! document by its keys.
//!
//! The readers name the fields they need and ignore the rest (docs/json-schema.md:
//! readers ignore fields they do not know); a field the writer always writes,
//! possibly as `null`, is required here (`required`), so its absence is an error.

pub mod field;
pub mod imported;
pub mod kinds;
pub mod migrate;
pub mod schema;
pub mod settings;
pub mod stored;

pub use imported::{FileFormat, Imported, IntervalKind, Source};
pub use kinds::{
    Baseline, Build, Compare, Comparison, Direction, Fragile, Fragility, Layout, LayoutRun, Limit,
    Metric, Ratio, Row, State,
};
pub use schema::{Error, Schema};
pub use settings::{CompareSettings, Directions, LayoutSettings};
pub use stored::{Document, Stored};

#[cfg(test)]
mod tests;
