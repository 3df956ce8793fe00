//! Output of results: terminal tables, JSON, Markdown. Each format is one file;
//! they all read the same plain report types and compute nothing new.

pub mod code;
pub mod format;
pub mod json;
pub mod layout;
pub mod markdown;
pub mod probe;
pub mod sarif;
pub mod structs;
pub mod table;
pub mod terminal;
