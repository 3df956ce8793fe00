//! Rendering of a `compare` (or `analyze`) report: the terminal text, Markdown,
//! the HTML page and the sentences that say what would decide an UNKNOWN. The
//! analysis hands over facts; only this module writes prose.

pub mod cells;
pub mod hint;
pub mod html;
pub mod markdown;
pub mod terminal;
