//! Rendering of a `probe` report: terminal text and Markdown (`text`), and the HTML page (`html`).

pub mod html;
pub mod text;
