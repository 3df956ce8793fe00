//! Rendering of what `analyze` found: its notes on the data (facts, typed)
//! put into the `compare` or `layout` reports as their `Note::Imported`
//! notes, which those verbs' renderers word and lay out in every format
//! (terminal, Markdown, HTML, JSON), with an `analyze` section saying where
//! the runs came from.

use super::{AnalyzeReport, Analyzed};
use crate::compare::render::{html as compare_html, json as compare_json, markdown, terminal};
use crate::compare::CompareReport;
use crate::layout::render::{html as layout_html, json as layout_json, text as layout_text};
use crate::layout::LayoutReport;
use anyhow::{Context, Result};

/// The reports `analyze` prints and writes: the verbs' own, with `analyze`'s
/// notes among their notes.
#[derive(Debug, Clone)]
pub enum Reports {
    Compare(Vec<CompareReport>),
    Layout(Box<LayoutReport>),
}

/// The verbs' reports with `analyze`'s notes put into them, first.
pub fn reports(report: AnalyzeReport) -> Reports {
    match report {
        AnalyzeReport::Compare(reports) => Reports::Compare(
            reports
                .into_iter()
                .map(|Analyzed { mut report, notes }| {
                    let typed = notes.into_iter().map(crate::compare::Note::Imported);
                    report.notes.splice(0..0, typed);
                    report
                })
                .collect(),
        ),
        AnalyzeReport::Layout(analyzed) => {
            let Analyzed { mut report, notes } = *analyzed;
            let typed = notes.into_iter().map(crate::layout::Note::Imported);
            report.notes.splice(0..0, typed);
            Reports::Layout(Box::new(report))
        }
    }
}

impl Reports {
    /// The reports of a stored result `history show` read back (result
    /// `id`): their headings name the verb and the result, not `analyze`.
    pub fn from_store(mut self, id: i64) -> Reports {
        let mark = |imported: &mut Option<crate::doc::Imported>| {
            if let Some(i) = imported {
                i.stored = Some(id);
            }
        };
        match &mut self {
            Reports::Compare(reports) => reports.iter_mut().for_each(|r| mark(&mut r.analyze)),
            Reports::Layout(report) => mark(&mut report.analyze),
        }
        self
    }

    /// The terminal report (several comparisons one after the other).
    pub fn terminal(&self, color: bool) -> String {
        match self {
            Reports::Compare(reports) => {
                let text: Vec<String> =
                    reports.iter().map(|r| terminal::render(r, color)).collect();
                text.join("\n")
            }
            Reports::Layout(report) => layout_text::render(report, color),
        }
    }

    /// `--markdown`.
    pub fn markdown(&self) -> String {
        match self {
            Reports::Compare(reports) => {
                let text: Vec<String> = reports.iter().map(markdown::render).collect();
                text.join("\n")
            }
            Reports::Layout(report) => layout_text::markdown(report),
        }
    }

    /// `--html`: one page.
    pub fn html(&self) -> String {
        match self {
            Reports::Compare(reports) => match reports.as_slice() {
                [one] => compare_html::compare(one),
                many => compare_html::compares(many),
            },
            Reports::Layout(report) => layout_html::layout(report),
        }
    }

    /// The `--json` document as a value, for the store: made straight from
    /// the report, not by printing and parsing it (a million runs a side
    /// would hold the text and the value at once).
    pub fn document(&self) -> Result<serde_json::Value> {
        let value = match self {
            Reports::Compare(reports) => match reports.as_slice() {
                [one] => serde_json::to_value(compare_json::document(one)),
                many => serde_json::to_value(
                    many.iter().map(compare_json::document).collect::<Vec<_>>(),
                ),
            },
            Reports::Layout(report) => serde_json::to_value(layout_json::document(report)),
        };
        value.context("cannot serialise the report")
    }

    /// How many runs the reports hold: every comparison's (the baseline's
    /// again in each), or the layout report's.
    pub fn run_count(&self) -> usize {
        match self {
            Reports::Compare(reports) => reports.iter().map(|r| r.runs.len()).sum(),
            Reports::Layout(report) => report.runs.len(),
        }
    }

    /// The document the store keeps: [`Reports::document`], or, past `most`
    /// runs, the same document without its runs (`runs` empty), each part
    /// saying in `runs_left_out` how many it left out and in a first note
    /// why. Verdicts, summaries and intervals are those of every run. The
    /// runs are taken out for the while and put back, never copied.
    pub fn stored_document(&mut self, most: usize) -> Result<serde_json::Value> {
        let total = self.run_count();
        if total <= most {
            return self.document();
        }
        let note = crate::compare::imported::Imported::RunsLeftOut { runs: total, most };
        let (value, counts) = match self {
            Reports::Compare(reports) => {
                let taken: Vec<_> = reports
                    .iter_mut()
                    .map(|r| {
                        r.notes
                            .insert(0, crate::compare::Note::Imported(note.clone()));
                        std::mem::take(&mut r.runs)
                    })
                    .collect();
                let value = self.document();
                let Reports::Compare(reports) = self else {
                    unreachable!("matched as Compare above")
                };
                for (r, runs) in reports.iter_mut().zip(taken) {
                    r.notes.remove(0);
                    r.runs = runs;
                }
                (value, reports.iter().map(|r| r.runs.len()).collect())
            }
            Reports::Layout(report) => {
                report.notes.insert(0, crate::layout::Note::Imported(note));
                let runs = std::mem::take(&mut report.runs);
                let value = serde_json::to_value(layout_json::document(report))
                    .context("cannot serialise the report");
                report.notes.remove(0);
                report.runs = runs;
                (value, vec![report.runs.len()])
            }
        };
        let mut value = value?;
        let parts: Vec<&mut serde_json::Value> = match &mut value {
            serde_json::Value::Array(items) => items.iter_mut().collect(),
            one => vec![one],
        };
        for (part, count) in parts.into_iter().zip(counts) {
            if let serde_json::Value::Object(map) = part {
                map.insert("runs_left_out".into(), count.into());
            }
        }
        Ok(value)
    }

    /// `--json` written to `path`: the bytes of [`Reports::json`],
    /// serialised straight into the file (a million runs a side are 700 MB
    /// of text, never held).
    pub fn write_json(&self, path: &std::path::Path) -> Result<()> {
        use crate::report::json::write_pretty;
        match self {
            Reports::Compare(reports) => match reports.as_slice() {
                [one] => write_pretty(path, &compare_json::document(one)),
                many => write_pretty(
                    path,
                    &many.iter().map(compare_json::document).collect::<Vec<_>>(),
                ),
            },
            Reports::Layout(report) => write_pretty(path, &layout_json::document(report)),
        }
    }

    /// `--json`: one document, or an array of them for several comparisons.
    pub fn json(&self) -> Result<String> {
        let text = match self {
            Reports::Compare(reports) => match reports.as_slice() {
                [one] => serde_json::to_string_pretty(&compare_json::document(one)),
                many => serde_json::to_string_pretty(
                    &many.iter().map(compare_json::document).collect::<Vec<_>>(),
                ),
            },
            Reports::Layout(report) => serde_json::to_string_pretty(&layout_json::document(report)),
        };
        text.context("cannot serialise the report")
    }
}

/// Why a stored result has no runs (`compare::render::notes::runs_left_out`).
pub use crate::compare::render::notes::runs_left_out;

#[cfg(test)]
mod tests;
