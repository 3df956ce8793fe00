//! Rendering of a `probe` report: each probe's finding and notes (`finding`),
//! terminal text and Markdown (`text`), the HTML page (`html`) and the
//! `--json` document (`json`).

pub mod finding;
pub mod html;
pub mod json;
pub mod text;
