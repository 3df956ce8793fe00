//! Rendering of what `analyze` found: its notes on the data (facts) in words,
//! put into the `compare` or `layout` reports as their notes, which those
//! verbs' renderers then lay out in every format (terminal, Markdown, HTML,
//! JSON), with an `analyze` section saying where the runs came from.

use super::{AnalyzeReport, Analyzed, Interleaving, Interval, Note};
use crate::compare::render::{html as compare_html, json as compare_json, markdown, terminal};
use crate::compare::CompareReport;
use crate::layout::render::{html as layout_html, json as layout_json, text as layout_text};
use crate::layout::LayoutReport;
use crate::report::units::trimmed;
use anyhow::{Context, Result};

/// The reports `analyze` prints and writes: the verbs' own, with `analyze`'s
/// notes in words among their notes.
#[derive(Debug, Clone)]
pub enum Reports {
    Compare(Vec<CompareReport>),
    Layout(Box<LayoutReport>),
}

/// The verbs' reports with `analyze`'s notes worded into them, first.
pub fn reports(report: AnalyzeReport) -> Reports {
    match report {
        AnalyzeReport::Compare(reports) => Reports::Compare(
            reports
                .into_iter()
                .map(|Analyzed { mut report, notes }| {
                    let words = notes.iter().map(|n| crate::compare::Note::Text(note(n)));
                    report.notes.splice(0..0, words);
                    report
                })
                .collect(),
        ),
        AnalyzeReport::Layout(analyzed) => {
            let Analyzed { mut report, notes } = *analyzed;
            let words = notes.iter().map(|n| crate::layout::Note::Text(note(n)));
            report.notes.splice(0..0, words);
            Reports::Layout(Box::new(report))
        }
    }
}

impl Reports {
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
        let text = runs_left_out(total, most);
        let (value, counts) = match self {
            Reports::Compare(reports) => {
                let taken: Vec<_> = reports
                    .iter_mut()
                    .map(|r| {
                        r.notes.insert(0, crate::compare::Note::Text(text.clone()));
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
                report.notes.insert(0, crate::layout::Note::Text(text));
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

/// Why a stored result has no runs: `total` runs, more than the `most` the
/// store keeps of one result (the stored document's first note, and the
/// line `analyze` prints when it stores such a result).
pub fn runs_left_out(total: usize, most: usize) -> String {
    format!(
        "stored without its {total} runs, more than the {most} the store keeps of one result: \
         the verdicts, summaries and intervals are those of every run; the runs are in the files analyzed"
    )
}

/// A note in words.
pub fn note(note: &Note) -> String {
    match note {
        Note::Order(order) => interleaving(order),
        Note::NonZeroExits { commands } => {
            let each: Vec<String> = commands
                .iter()
                .map(|(command, failed, runs)| format!("{command:?} {failed} of {runs}"))
                .collect();
            format!(
                "runs that exited non-zero (hyperfine -i) are analyzed like the others: {}",
                each.join(", ")
            )
        }
        Note::Bonferroni {
            comparisons,
            confidence,
        } => format!(
            "{comparisons} comparisons (metrics × candidates): every interval is at {:.2}% (Bonferroni)",
            confidence * 100.0
        ),
        Note::Reanalysis(r) => {
            let percent = |f: f64| format!("±{}%", trimmed(f * 100.0));
            let mut text = format!(
                "re-analysis of {}: {}, {}",
                r.file,
                changed("margin", percent(r.margin.0), percent(r.margin.1)),
                changed("alpha", trimmed(r.alpha.0), trimmed(r.alpha.1)),
            );
            if let Some((now, before)) = r.estimator {
                let name = |e| format!("{e:?}").to_lowercase();
                text.push_str(&format!(
                    ", {}",
                    changed("estimator", name(now), name(before))
                ));
            }
            if r.higher_is_better {
                text.push_str(", directions changed by --higher-is-better");
            }
            match r.interval {
                Some(Interval::Replayed { runs: [a, b] }) => text.push_str(&format!(
                    "; compare's looks replayed over the {a} + {b} runs in their order"
                )),
                Some(Interval::Fixed) => text
                    .push_str("; one interval at the data's size, as when it was first analyzed"),
                None => {}
            }
            text
        }
        Note::AlphaShare { share } => format!(
            "the original run looked more than once (--layouts auto): its last look spent {}% of α, and so does this one",
            trimmed((share * 1000.0).round() / 10.0)
        ),
        Note::LayoutsLeftOut { left_out, layouts } => format!(
            "{} of {layouts} layouts left out because some name or metric has no value there: {}",
            left_out.len(),
            left_out.join(", ")
        ),
        Note::DefaultLayout { label } => format!(
            "default layout: {label:?} ({})",
            if label == "0" {
                "labelled 0"
            } else {
                "no complete layout labelled 0: the first in file order"
            }
        ),
        Note::Carried(text) => text.clone(),
    }
}

/// "margin ±2% (was ±1%)", or "margin ±1%" when unchanged.
fn changed(label: &str, new: String, old: String) -> String {
    if new == old {
        format!("{label} {new}")
    } else {
        format!("{label} {new} (was {old})")
    }
}

/// The caution when the runs were not shown to be interleaved.
fn interleaving(order: &Interleaving) -> String {
    let confounded = "drift between the blocks is confounded with the effect";
    match order {
        Interleaving::Interleaved => "the runs were interleaved".to_string(),
        Interleaving::Blocks => format!(
            "not interleaved: hyperfine runs each command's runs one after the other, so {confounded} \
             (ghostbench compare interleaves them)"
        ),
        Interleaving::Unknown { a, b } => format!(
            "no `round` column: nothing shows that {a} and {b} were interleaved; if they ran one \
             after the other, {confounded}"
        ),
        Interleaving::Apart {
            a,
            b,
            a_rounds,
            b_rounds,
        } => format!(
            "not interleaved: {a} ran in {} and {b} in {}, so {confounded}",
            span(*a_rounds),
            span(*b_rounds)
        ),
        Interleaving::Partly {
            a,
            b,
            shared,
            rounds,
        } => format!(
            "partly interleaved: {shared} of {rounds} rounds hold runs of both {a} and {b}; \
             between the others, drift is confounded with the effect"
        ),
    }
}

/// "round 3", "rounds 0–4".
fn span(rounds: Option<(usize, usize)>) -> String {
    match rounds {
        Some((first, last)) if first == last => format!("round {first}"),
        Some((first, last)) => format!("rounds {first}–{last}"),
        None => "no round".into(),
    }
}

#[cfg(test)]
mod tests;
