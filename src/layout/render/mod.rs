//! Rendering of a `layout` report: the terminal text and Markdown (`text`), the
//! `--explain` section in every format (`explain`) and the HTML page (`html`).

pub mod explain;
pub mod html;
pub mod text;
