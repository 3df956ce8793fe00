//! How every verb ends: its report written in each format asked for (the
//! one `match` over report formats), then for the verbs that keep results
//! the record, the store and the exit code (`--fail-on`), in that order, in
//! one function. A report that cannot be written is an error after every
//! other file was tried; a store that cannot be written is a warning.

use super::output::{Content, Format, ReportFiles};
use super::store::{record_of, save, FailOnArgs, Naming, StoreArgs};
use anyhow::Result;
use serde_json::Value;

/// A verb's report as the text of each report file. `None`: the verb does
/// not write that format (a usage error naming the formats it does; the
/// files were checked against them before any work).
pub trait Render {
    /// The `--json` document.
    fn json(&self) -> Result<String>;
    /// The `--json` file: its text, or a function that writes it (a
    /// document too large to hold as text).
    fn json_content(&self) -> Result<Content<'_>> {
        self.json().map(Content::Text)
    }
    fn markdown(&self) -> Option<Result<String>> {
        None
    }
    fn html(&self) -> Option<Result<String>> {
        None
    }
    fn sarif(&self) -> Option<Result<String>> {
        None
    }
}

/// Write every report file in `files` from `report`; `verb` and `formats`
/// name what the verb writes, for a format it does not.
pub fn write(
    verb: &str,
    formats: &[Format],
    files: ReportFiles,
    report: &dyn Render,
) -> Result<()> {
    files.write_content(|format| {
        let text = match format {
            Format::Json => return report.json_content(),
            Format::Markdown => report.markdown(),
            Format::Html => report.html(),
            Format::Sarif => report.sarif(),
        };
        text.unwrap_or_else(|| Err(format.unsupported(verb, formats)))
            .map(Content::Text)
    })
}

/// Whether `--fail-on` decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// It does (the verdicts of runs measured together).
    Apply,
    /// It does not: side A is stored runs from another session, which
    /// interleaving did not support; one line names what would have failed.
    NotApplied,
}

/// How a verb's result is kept.
pub struct Keep<'a> {
    /// The verb the store records (`compare`, `layout`, `analyze`, `baseline`).
    pub verb: &'a str,
    pub store: &'a StoreArgs,
    pub fail_on: &'a FailOnArgs,
    /// A baseline to name in the same transaction.
    pub baseline: Option<Naming<'a>>,
    /// `compare --save-baseline NAME CMD`: a result not stored is an error
    /// (else a warning).
    pub must_store: bool,
    pub gate: Gate,
}

/// After the report files: the record of `document` (made only when it is
/// stored or `--fail-on` reads its verdicts: with a million runs a side it
/// is most of the memory), stored, and the exit code: `code`, or
/// [`FAIL_ON`](super::exit::FAIL_ON).
pub fn keep(code: i32, document: impl FnOnce() -> Result<Value>, keep: &Keep) -> Result<i32> {
    let storing = keep.store.location().is_some();
    if !storing && keep.fail_on.verdicts()?.is_empty() && !keep.must_store {
        return Ok(code);
    }
    let record = record_of(keep.verb, &document()?, storing)?;
    let id = save(keep.store, &record, keep.baseline);
    if let (None, Some((name, _, _)), true) = (id, keep.baseline, keep.must_store) {
        anyhow::bail!("baseline {name:?} was measured but not stored (see the warning above)");
    }
    Ok(match keep.gate {
        Gate::Apply => keep.fail_on.exit_code(code, &record.verdicts),
        Gate::NotApplied => keep.fail_on.not_applied(code, &record.verdicts),
    })
}

/// [`write`], then [`keep`]: how `compare`, `layout` and `analyze` end.
pub fn finish(
    verb: &str,
    formats: &[Format],
    files: ReportFiles,
    report: &dyn Render,
    code: i32,
    document: impl FnOnce() -> Result<Value>,
    how: &Keep,
) -> Result<i32> {
    write(verb, formats, files, report)?;
    keep(code, document, how)
}
