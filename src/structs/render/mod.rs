//! Rendering of a `structs` report: pahole-style text (`text`), the hazards' words,
//! evidence and summary (`hazards`), `--json` (`json`), and SARIF for code scanning (`sarif`).

pub mod hazards;
pub mod json;
pub mod sarif;
pub mod text;
