//! Rendering of a `structs` report: pahole-style text and hazards (`text`), and SARIF for code scanning (`sarif`).

pub mod sarif;
pub mod text;
