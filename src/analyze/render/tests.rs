//! `analyze`'s notes in words, and the formats agreeing on a report of
//! imported data (the same check as `compare`'s own reports get).

use super::*;
use crate::analyze::input;
use crate::analyze::{compared, AnalyzeOptions, Interleaving, Interval, Note, Reanalysis};
use crate::compare::render::notes::imported as note;
use crate::compare::render::tests::formats_agree;
use crate::stats::hierarchical::Estimator;

/// The example: 5 runs per side, +10.6% throughput, UNKNOWN; and a
/// second candidate, so two comparisons share α.
const ROWS: &str = "name,value\nold,100\nold,92\nold,108\nold,96\nold,104\n\
                    new,110.6\nnew,90.6\nnew,130.6\nnew,100.6\nnew,120.6\n\
                    newer,101\nnewer,93\nnewer,109\nnewer,97\nnewer,105\n";

#[test]
fn imported_data_say_the_same_in_every_format() {
    let data = input::csv("t.csv", ROWS).unwrap();
    let options = AnalyzeOptions {
        higher_is_better: crate::run::metric::HigherIsBetter::All,
        ..AnalyzeOptions::default()
    };
    let Reports::Compare(reports) = reports(AnalyzeReport::Compare(compared::compare_reports(
        &data, &options,
    ))) else {
        panic!("rows without layouts are compared")
    };
    assert_eq!(reports.len(), 2);
    let found = formats_agree(&reports[0]);
    for label in [
        "CI at the data's size",
        "to decide:",
        "note:",
        "settings:",
        "read from",
        "mean",
    ] {
        assert!(found.contains(&label), "{label:?} not checked: {found:?}");
    }
    // analyze's notes come first, in words, in the report's notes.
    let notes = crate::compare::render::prose::notes(&reports[0]);
    assert!(
        notes[0].starts_with("no `round` column: nothing shows that old and new were interleaved"),
        "{notes:?}"
    );
    assert!(
        notes[1].starts_with("2 comparisons (metrics × candidates): every interval is at 97.50%"),
        "{notes:?}"
    );
    let text = Reports::Compare(reports.clone()).terminal(false);
    assert!(
        text.contains("ghostbench analyze t.csv (csv): A = old, B = newer"),
        "{text}"
    );
}

#[test]
fn the_json_of_several_comparisons_is_an_array_of_compare_documents() {
    let data = input::csv("t.csv", ROWS).unwrap();
    let report =
        AnalyzeReport::Compare(compared::compare_reports(&data, &AnalyzeOptions::default()));
    let doc: serde_json::Value = serde_json::from_str(&reports(report).json().unwrap()).unwrap();
    let docs = doc.as_array().unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[1]["commands"][1]["name"], "newer");
    assert_eq!(docs[1]["schema"], crate::doc::Schema::Compare.name());
    assert!(docs[1]["notes"][0]
        .as_str()
        .unwrap()
        .starts_with("no `round` column"));
}

#[test]
fn orders_that_are_not_interleaved_are_cautioned_in_words() {
    let apart = Interleaving::Apart {
        a: "A".into(),
        b: "B".into(),
        a_rounds: Some((0, 1)),
        b_rounds: Some((2, 2)),
    };
    assert_eq!(
        note(&Note::Order(apart)),
        "not interleaved: A ran in rounds 0–1 and B in round 2, so drift between the blocks is confounded with the effect"
    );
    let partly = Interleaving::Partly {
        a: "A".into(),
        b: "B".into(),
        shared: 1,
        rounds: 3,
    };
    assert!(note(&Note::Order(partly))
        .starts_with("partly interleaved: 1 of 3 rounds hold runs of both A and B"));
    assert!(note(&Note::Order(Interleaving::Blocks)).contains("hyperfine runs each command's runs"));
}

#[test]
fn a_reanalysis_says_what_changed() {
    let compare = Reanalysis {
        file: "c.json".into(),
        margin: (0.02, 0.01),
        alpha: (0.05, 0.05),
        estimator: None,
        higher_is_better: true,
        interval: Some(Interval::Replayed { runs: [8, 9] }),
    };
    assert_eq!(
        note(&Note::Reanalysis(compare)),
        "re-analysis of c.json: margin ±2% (was ±1%), alpha 0.05, directions changed by --higher-is-better; \
         compare's looks replayed over the 8 + 9 runs in their order"
    );
    let layout = Reanalysis {
        file: "l.json".into(),
        margin: (0.01, 0.01),
        alpha: (0.1, 0.05),
        estimator: Some((Estimator::Min, Estimator::Median)),
        higher_is_better: false,
        interval: None,
    };
    assert_eq!(
        note(&Note::Reanalysis(layout)),
        "re-analysis of l.json: margin ±1%, alpha 0.1 (was 0.05), estimator min (was median)"
    );
    assert_eq!(
        note(&Note::AlphaShare { share: 0.1234 }),
        "the original run looked more than once (--layouts auto): its last look spent 12.3% of α, and so does this one"
    );
    assert_eq!(
        note(&Note::NonZeroExits {
            commands: vec![("a".into(), 1, 2)]
        }),
        "runs that exited non-zero (hyperfine -i) are analyzed like the others: \"a\" 1 of 2"
    );
    assert_eq!(
        note(&Note::DefaultLayout { label: "L1".into() }),
        "default layout: \"L1\" (no complete layout labelled 0: the first in file order)"
    );
}
