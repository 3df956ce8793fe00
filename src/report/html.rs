//! The HTML page shell every `--html` report shares: one self-contained page
//! (inline CSS and SVG, nothing fetched), verdict badges, figures, tables, the
//! stop box and the notes list. Each verb's `render::html` fills the body.

use super::escape::html as escape;
use crate::stats::verdict::Verdict;
use std::fmt::Write;

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:820px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;margin:1em 0;font-size:.9em}td,th{padding:.25em .6em;border-bottom:1px solid #eee;text-align:right}\
td:first-child,th:first-child{text-align:left}code{background:#f4f4f4;padding:0 .2em}\
.verdict{font-weight:bold;padding:.1em .4em;border-radius:3px;color:#fff}\
.FASTER{background:#2a7d2a}.SLOWER{background:#b22}.SAME{background:#36c}.ARTIFACT{background:#83a}.UNKNOWN{background:#b80}\
.note{color:#555;font-size:.9em}.failed{background:#fee;border-left:4px solid #b22;padding:.5em}\
figure{margin:1em 0}figcaption{color:#555;font-size:.85em}";

/// The page around `body`, with `title` as heading.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"generator\" content=\"ghostbench {}\">\
         <title>{}</title><style>{STYLE}</style></head>\n<body>\n<h1>{}</h1>\n{body}</body></html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title),
        escape(title)
    )
}

/// A verdict word as a coloured badge.
pub fn badge(verdict: Verdict) -> String {
    format!("<span class=\"verdict {verdict}\">{verdict}</span>")
}

/// A figure: the SVG with a caption under it.
pub fn figure(svg: &str, caption: &str) -> String {
    format!(
        "<figure>{svg}<figcaption>{}</figcaption></figure>\n",
        escape(caption)
    )
}

/// An HTML table from a header and rows of cells (escaped here).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::from("<table><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// The report's notes as a list.
pub fn notes(notes: &[String]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Notes</h2>\n<ul class=\"note\">\n");
    for note in notes {
        let _ = writeln!(out, "<li>{}</li>", escape(note));
    }
    out.push_str("</ul>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_escape_cells() {
        let t = table(&["a"], &[vec!["<b>".to_string()]]);
        assert!(t.contains("<td>&lt;b&gt;</td>"), "{t}");
    }
}
