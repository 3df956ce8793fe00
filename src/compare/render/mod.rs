//! Rendering of a `compare` (or `analyze`) report: the terminal text, Markdown,
//! the HTML page and the JSON document. The analysis hands over facts; only
//! this module writes prose: `prose` the words every format shares (verdict
//! sentence, notes, settings, how it ended), `notes` the words of the notes
//! on the metrics themselves (directions, values ≤ 0, which ratio B/A is),
//! `hint` what would decide an UNKNOWN, `cells` the table's cells. Every
//! format carries the same sections under the same names (`prose::label`;
//! the test in `tests.rs` holds them to it).

pub mod cells;
pub mod hint;
pub mod html;
pub mod json;
pub mod markdown;
pub mod notes;
pub mod prose;
pub mod single;
pub mod terminal;

#[cfg(test)]
pub(crate) mod tests;
