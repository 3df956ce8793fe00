//! Output of results: terminal tables, JSON, Markdown, HTML with SVG plots. Each format is one file;
//! they all read the same plain report types and compute nothing new.

pub mod code;
pub mod explain;
pub mod format;
pub mod hint;
pub mod html;
pub mod json;
pub mod layout;
pub mod markdown;
pub mod probe;
pub mod sarif;
pub mod structs;
pub mod svg;
pub mod table;
pub mod terminal;
