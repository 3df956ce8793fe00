//! Rendering primitives every verb shares: aligned tables, terminal colour,
//! numbers with units, escaping for Markdown and HTML, the HTML page shell, the
//! SVG charts, the FAILED/INTERRUPTED block (`status`) and atomic file writing.
//! Nothing here knows a verb: each verb's `render` module turns its own report
//! into text with these.

pub mod escape;
pub mod html;
pub mod json;
pub mod status;
pub mod style;
pub mod svg;
pub mod table;
pub mod units;
