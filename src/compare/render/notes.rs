//! The words of the notes on the metrics themselves, for `compare`, `layout`
//! and `analyze`: metrics `--higher-is-better` left alone, values ≤ 0, and
//! which ratio the table's B/A is, and which baseline side A is and how it
//! was measured (`--baseline`); what the runner saw (`run::Note`) and what
//! `analyze` found about imported data (`Imported`).

use crate::compare::imported::{Imported, Interleaving, Interval};
use crate::compare::{BaselineMode, BaselineUse, CompareReport, Fallback};
use crate::report::units::trimmed;
use crate::report::units::{ratio, ratio_change};

/// The words of [`Unapplied`](crate::compare::Unapplied), for every verb.
pub fn unapplied(u: &crate::compare::Unapplied) -> String {
    let mut parts = Vec::new();
    if !u.costs.is_empty() {
        parts.push(format!(
            "--higher-is-better does not apply to {}: time, memory and counters are costs, lower is better",
            u.costs.join(", ")
        ));
    }
    if !u.unknown.is_empty() {
        parts.push(format!(
            "--higher-is-better names {}, which no metric is called",
            u.unknown.join(", ")
        ));
    }
    parts.join("; ")
}

/// The words of a metric's values ≤ 0, for every verb that allows them.
pub fn non_positive(metric: &str, a: usize, b: usize, difference_scale: bool) -> String {
    let how = if difference_scale {
        "a ratio has no log scale there, so its interval is of the difference B − A relative to A's median"
    } else {
        "a ratio has no log scale there and A's median is not above 0, so it has no interval"
    };
    format!("{metric} has values ≤ 0 ({a} runs of A, {b} of B): {how}")
}

/// The table's B/A is the Hodges–Lehmann ratio (the verdict's estimate),
/// not the ratio of the two medians beside it. Where those differ by half a
/// point or more, the words that say which is which and give the other.
pub fn ratio_legend(report: &CompareReport) -> Option<String> {
    let differing: Vec<String> = report
        .metrics
        .iter()
        .filter_map(|m| {
            let (a, b) = (m.a.as_ref()?.median, m.b.as_ref()?.median);
            let medians = b / a;
            let apart = (medians - m.ratio).abs() >= 0.005;
            (a > 0.0 && medians.is_finite() && m.ratio.is_finite() && apart)
                .then(|| format!("{} {} ({})", m.name, ratio(medians), ratio_change(medians)))
        })
        .collect();
    (!differing.is_empty()).then(|| {
        format!(
            "B/A (HL) is the Hodges–Lehmann ratio (the median of B/A over all pairs of runs), which the verdict and its CI rest on; the ratio of the two medians differs: {}",
            differing.join(", ")
        )
    })
}

/// "baseline main: interleaved now, …" or "baseline main: stored runs from
/// DATE, not interleaved (why), …".
pub fn baseline(used: &BaselineUse) -> String {
    let saved = format!(
        "result #{}, {}{}",
        used.experiment,
        crate::report::units::utc(used.saved_unix),
        used.commit
            .as_deref()
            .map(|c| format!(", commit {}", &c[..c.len().min(10)]))
            .unwrap_or_default()
    );
    match &used.mode {
        BaselineMode::Interleaved { program } => format!(
            "baseline {}: interleaved now: its command ran again in this experiment{} ({saved}), so drift between sessions cannot pass for an effect",
            used.name,
            program
                .as_deref()
                .map(|p| format!(", as {p}"))
                .unwrap_or_default()
        ),
        BaselineMode::Stored {
            why,
            drift,
            sessions,
            margin,
        } => format!(
            "baseline {}: stored runs from {}, not interleaved ({}): drift between sessions is allowed for by widening the margin by ±{}% ({}) to ±{}%, and no verdict here fails --fail-on",
            used.name,
            saved,
            fallback(why),
            trimmed(drift * 100.0),
            match sessions {
                0 => "the documented allowance".to_string(),
                n => format!(
                    "the larger of the documented allowance and its own runs' drift over {n} later session{}",
                    if *n == 1 { "" } else { "s" }
                ),
            },
            trimmed(margin * 100.0)
        ),
    }
}

/// Why a baseline was not run again now, in words.
pub fn fallback(why: &Fallback) -> String {
    match why {
        Fallback::Imported => "the other side's values were imported".into(),
        Fallback::NotKept => "it was saved without a copy of its program to run again".into(),
        Fallback::CopyGone(path) => format!("the saved copy of its program, {path}, is gone"),
        Fallback::CopyChanged(path) => {
            format!("the saved copy of its program, {path}, no longer has its hash")
        }
        Fallback::FileGone(path) => format!("{path}, named in its command, is gone"),
        Fallback::FileChanged(path) => {
            format!("{path}, named in its command, changed since it was saved")
        }
    }
}

/// The words of what the runner saw, for every verb that runs commands.
pub fn run_note(note: &crate::run::Note) -> String {
    use crate::run::Note;
    match note {
        Note::SeveralMatches { tally, of } => {
            let e = &tally.example;
            let how = if tally.choice_given {
                format!("the {} was taken, as asked", tally.choice.name())
            } else {
                format!(
                    "the {} was taken (the default; regex@first: or regex@median: choose another)",
                    tally.choice.name()
                )
            };
            format!(
                "metric {}: {} of {of} runs matched several different values (up to {}); {how}; \
                 e.g. first {}, last {}, median {}",
                tally.name, tally.runs, tally.most, e.first, e.last, e.median
            )
        }
        Note::LeftBehind {
            runs,
            of,
            commands,
            killed,
            survived,
        } => {
            let mut text = format!(
                "{runs} of {of} runs left processes running after they exited ({}): {killed} processes, killed \
                 after each run (with their process group and any daemon that left it)",
                commands.join(", "),
            );
            if *survived > 0 {
                text.push_str(&format!(
                    "; {survived} could not be killed and are still running"
                ));
            }
            text
        }
        Note::MaxTimeCut { command } => format!(
            "--max-time was reached during a run of {command}: that run was killed and left out; \
             the runs completed before it are kept"
        ),
    }
}

/// The words of what `analyze` found about the data it read.
pub fn imported(note: &Imported) -> String {
    match note {
        Imported::RunsLeftOut { runs, most } => runs_left_out(*runs, *most),
        Imported::Order(order) => interleaving(order),
        Imported::NonZeroExits { commands } => {
            let each: Vec<String> = commands
                .iter()
                .map(|(command, failed, runs)| format!("{command:?} {failed} of {runs}"))
                .collect();
            format!(
                "runs that exited non-zero (hyperfine -i) are analyzed like the others: {}",
                each.join(", ")
            )
        }
        Imported::Bonferroni {
            comparisons,
            confidence,
        } => format!(
            "{comparisons} comparisons (metrics × candidates): every interval is at {:.2}% (Bonferroni)",
            confidence * 100.0
        ),
        Imported::Reanalysis(r) => {
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
        Imported::AlphaShare { share } => format!(
            "the original run looked more than once (--layouts auto): its last look spent {}% of α, and so does this one",
            trimmed((share * 1000.0).round() / 10.0)
        ),
        Imported::LayoutsLeftOut { left_out, layouts } => format!(
            "{} of {layouts} layouts left out because some name or metric has no value there: {}",
            left_out.len(),
            left_out.join(", ")
        ),
        Imported::DefaultLayout { label } => format!(
            "default layout: {label:?} ({})",
            if label == "0" {
                "labelled 0"
            } else {
                "no complete layout labelled 0: the first in file order"
            }
        ),
        Imported::Carried(text) => text.clone(),
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

/// The verb a report's heading names: `verb` ("compare") for runs made
/// here, "compare (result #3 from the store)" for a stored result `history
/// show` read back, "analyze a.csv (csv)" for runs `analyze` read.
pub fn heading_verb(verb: &str, source: Option<&crate::doc::Imported>) -> String {
    match source {
        None => verb.to_string(),
        Some(i) => match i.stored {
            Some(id) => format!("{verb} (result #{id} from the store)"),
            None => format!(
                "analyze {}",
                crate::report::units::imported(&i.files, &i.format.text())
            ),
        },
    }
}

/// The verb of a page's title: `verb`, or "analyze" for runs `analyze` read.
pub fn title_verb<'a>(verb: &'a str, source: Option<&crate::doc::Imported>) -> &'a str {
    match source {
        Some(i) if i.stored.is_none() => "analyze",
        _ => verb,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::regex_metric::{Choice, MatchTally, SeveralMatches};
    use crate::run::Note;

    #[test]
    fn the_runners_notes_in_words() {
        let tally = MatchTally {
            metric: "regex::v=(\\d+)".into(),
            name: "v".into(),
            choice: Choice::Last,
            choice_given: false,
            runs: 2,
            most: 3,
            example: SeveralMatches {
                name: "v".into(),
                count: 2,
                first: 1.0,
                last: 2.0,
                median: 1.5,
                chosen: 2.0,
            },
        };
        let text = run_note(&Note::SeveralMatches { tally, of: 3 });
        assert!(
            text.starts_with("metric v: 2 of 3 runs matched several"),
            "{text}"
        );
        assert!(text.contains("the last was taken (the default"), "{text}");
        assert!(text.ends_with("first 1, last 2, median 1.5"), "{text}");
        let left = Note::LeftBehind {
            runs: 2,
            of: 13,
            commands: vec!["a".into(), "b".into()],
            killed: 3,
            survived: 0,
        };
        assert_eq!(
            run_note(&left),
            "2 of 13 runs left processes running after they exited (a, b): 3 processes, killed \
             after each run (with their process group and any daemon that left it)"
        );
        let stuck = Note::LeftBehind {
            runs: 1,
            of: 1,
            commands: vec!["a".into()],
            killed: 1,
            survived: 2,
        };
        assert!(run_note(&stuck).ends_with("; 2 could not be killed and are still running"));
        assert_eq!(
            run_note(&Note::MaxTimeCut { command: "B".into() }),
            "--max-time was reached during a run of B: that run was killed and left out; the runs completed before it are kept"
        );
    }
    #[test]
    fn headings_name_where_the_runs_came_from() {
        let mut i = crate::doc::Imported {
            files: vec!["a.csv".into()],
            format: crate::doc::Source::Files(vec![crate::doc::FileFormat::Csv]),
            interval: crate::doc::IntervalKind::Fixed,
            interleaved: None,
            layouts: None,
            stored: None,
        };
        assert_eq!(heading_verb("compare", None), "compare");
        assert_eq!(heading_verb("compare", Some(&i)), "analyze a.csv (csv)");
        assert_eq!(title_verb("layout", Some(&i)), "analyze");
        i.stored = Some(3);
        assert_eq!(
            heading_verb("compare", Some(&i)),
            "compare (result #3 from the store)"
        );
        assert_eq!(title_verb("layout", Some(&i)), "layout");
    }
}
