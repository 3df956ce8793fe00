//! Rendering of a `layout` report: the only part of `layout` that writes
//! prose. `prose` words the facts (verdict sentences, hints, notes, the
//! legend); `text` lays them out for the terminal and Markdown, `html` for
//! the page, `json` for the `--json` document, `explain` the `--explain`
//! section in every format. All formats carry the same sections under the
//! same labels (below); a test holds them to it.

pub mod explain;
pub mod findings;
pub mod html;
pub mod json;
pub mod prose;
pub mod text;

/// The labels of a report's sections, one spelling for every format.
pub mod label {
    /// Each perturbation source, on or off, and what it used.
    pub const SOURCE: &str = "layout source";
    /// A build that failed, with its command and last output.
    pub const BUILD_FAILED: &str = "build failed";
    /// What would likely decide an UNKNOWN.
    pub const TO_DECIDE: &str = "to decide";
    /// `--explain`'s section.
    pub const EXPLAIN: &str = "Code placement";
    /// One note each.
    pub const NOTE: &str = "note";
    /// Where the time went.
    pub const TIME: &str = "time";
    /// The matrix column of how far layout alone moves a single-layout ratio.
    pub const LAYOUT_NOISE: &str = "layout noise";
}

/// The matrix's columns, in every format.
pub const COLUMNS: [&str; 8] = [
    "build",
    "metric",
    "default",
    "B/A default layout",
    "B/A across layouts",
    "spread",
    label::LAYOUT_NOISE,
    "verdict",
];

/// Each labelled section and where its facts are in the JSON document (a
/// JSON pointer; `{row}` stands for a compared row's index).
pub const SECTIONS: [(&str, &str); 6] = [
    (label::SOURCE, "/sources"),
    (label::BUILD_FAILED, "/build_results"),
    (label::TO_DECIDE, "/matrix/{row}/comparison/hint"),
    (label::EXPLAIN, "/explain"),
    (label::NOTE, "/notes"),
    (label::TIME, "/timing"),
];

/// Each matrix column and its field in a JSON matrix row (a JSON pointer).
pub const COLUMN_FIELDS: [(&str, &str); 8] = [
    ("build", "/build"),
    ("metric", "/metric"),
    ("default", "/default_value"),
    ("B/A default layout", "/comparison/default_ratio"),
    ("B/A across layouts", "/comparison/controlled"),
    ("spread", "/spread_cv"),
    (label::LAYOUT_NOISE, "/comparison/layout_noise"),
    ("verdict", "/comparison/verdict"),
];

#[cfg(test)]
mod tests;
