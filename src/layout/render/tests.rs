//! The renderers on a report built from fixed numbers: the verdict sentences
//! and hints word the facts exactly, and the terminal, Markdown, HTML and JSON
//! carry the same sections under the same labels.

use super::prose::{hint, sentence};
use super::*;
use crate::code::diff::ChangeReason;
use crate::layout::builds::BuildResult;
use crate::layout::explanation::{Explain, ExplainBuild, MovedFunction, Ranking};
use crate::layout::variants::{Source, SourceStatus, Variant};
use crate::layout::{
    AutoOutcome, BuildSpec, Comparison, LayoutReport, Look, MatrixRow, Note, RatioInterval,
    Settings, State, Status, Timing, Undecided, VariantValue,
};
use crate::run::environment::Environment;
use crate::run::metric::Unit;
use crate::stats::hierarchical::{Estimator, LayoutRatio};
use crate::stats::verdict::Verdict;
use serde_json::Value;

fn ratio(estimate: f64, low: f64, high: f64, variants: usize) -> LayoutRatio {
    LayoutRatio {
        estimate,
        low,
        high,
        confidence: 0.95,
        variants,
        wild_runs: 0,
        runs: variants * 10,
        unconfirmed: 0,
        df: (variants - 1) as f64,
        log_ratio_sd: 0.02,
        resolution: None,
    }
}

fn comparison(verdict: Verdict, default: f64, controlled: LayoutRatio) -> Comparison {
    Comparison {
        default_ratio: Some(RatioInterval {
            estimate: default,
            low: default * 0.998,
            high: default * 1.002,
        }),
        default_verdict: Verdict::Faster,
        controlled: Some(controlled),
        controlled_verdict: verdict,
        layout_noise: 0.052,
        verdict,
        artifact_share: None,
        reverses: false,
        undecided: None,
        fragility: None,
        placement_points: None,
        no_default_interval: None,
    }
}

#[test]
fn artifact_sentences_say_how_much_disappears() {
    let mut c = comparison(
        Verdict::Artifact,
        0.75,
        ratio(1.0, 0.998_094, 1.001_909, 16),
    );
    c.controlled_verdict = Verdict::Same;
    c.artifact_share = Some(1.0);
    assert_eq!(
        sentence(&c, ("A", "B"), 0.01, false),
        "100% of the 25.0% speedup at the default layout disappears across 16 layouts (controlled B 1.000 [0.998, 1.002])"
    );
    // Significant the other way: it also reverses.
    c.controlled = Some(ratio(1.10, 1.10, 1.10, 32));
    c.controlled_verdict = Verdict::Slower;
    c.reverses = true;
    assert!(
        sentence(&c, ("A", "B"), 0.01, false).starts_with(
            "100% of the 25.0% speedup at the default layout disappears across 32 layouts and reverses (controlled B 1.100 ["
        ),
        "{}",
        sentence(&c, ("A", "B"), 0.01, false)
    );
    c.controlled = Some(ratio(0.90, 0.90, 0.90, 16));
    c.controlled_verdict = Verdict::Faster;
    c.reverses = false;
    c.artifact_share = Some(0.633_76);
    assert!(
        sentence(&c, ("A", "B"), 0.01, false).starts_with(
            "63% of the 25.0% speedup at the default layout disappears across 16 layouts (controlled B 0.900 ["
        ),
        "{}",
        sentence(&c, ("A", "B"), 0.01, false)
    );
}

#[test]
fn decided_sentences_give_the_direction_and_the_interval() {
    let c = comparison(Verdict::Faster, 0.75, ratio(0.75, 0.74, 0.76, 16));
    assert_eq!(
        sentence(&c, ("A", "B"), 0.01, false),
        "B is 25.0% faster than A across 16 layouts: ratio 0.750 [0.740, 0.760]"
    );
    // Throughput: a ratio under 1 is slower.
    assert!(sentence(&c, ("A", "B"), 0.01, true).starts_with("B is 25.0% slower than A"));
    let c = comparison(
        Verdict::Slower,
        1.0 / 0.75,
        ratio(1.0 / 0.75, 1.32, 1.34, 16),
    );
    assert!(sentence(&c, ("A", "B"), 0.01, false).starts_with("B is 33.3% slower than A"));
    let c = comparison(Verdict::Same, 1.0, ratio(1.001, 0.995, 1.006, 8));
    assert_eq!(
        sentence(&c, ("A", "B"), 0.015, false),
        "B and A are within ±1.5% across 8 layouts: ratio 1.001 [0.995, 1.006]"
    );
    let mut c = comparison(Verdict::Unknown, 1.0, ratio(1.02, 0.99, 1.05, 8));
    assert_eq!(
        sentence(&c, ("A", "B"), 0.01, false),
        "not decided across 8 layouts: ratio 1.020 [0.990, 1.050]"
    );
    c.controlled = None;
    assert_eq!(
        sentence(&c, ("A", "B"), 0.01, false),
        "too few runs to compare"
    );
}

#[test]
fn hints_name_the_cause() {
    let wild = Undecided::RunOutliers {
        runs: 63,
        of: 320,
        worst: 2.0f64.ln(),
        variants: vec![2, 8, 9, 10, 11, 12, 13],
    };
    assert_eq!(
        hint(&wild, 0.05, 0.01),
        "63 of 320 runs are wild (up to 100% worse than their layout's best run, in layouts 2, 8, 9, 10, 11 and 2 more): \
         runs of one binary in one layout vary this much (a busy machine, or the benchmark's own noise); \
         more --rounds, the `user` metric or --pin would steady them"
    );
    assert_eq!(
        hint(&Undecided::LayoutSpread { layouts: 40 }, 0.052, 0.01),
        "layout moves a single-layout ratio by up to ±5.2%: about 40 layouts would likely decide (--layouts auto --max-layouts 40)"
    );
    let near = Undecided::NearMargin {
        margin_for_same: 0.0123,
        margin_for_effect: Some(0.004),
    };
    assert_eq!(
        hint(&near, 0.05, 0.01),
        "the effect is too close to the ±1% margin for any layout budget to resolve: --margin 1.3 would decide SAME, --margin under 0.4 would decide the direction"
    );
}

fn environment() -> Environment {
    Environment {
        cpu_model: None,
        logical_cpus: 2,
        kernel: None,
        governor: None,
        turbo: None,
        load_average: None,
        aslr: None,
        split_lock_mitigate: None,
        split_lock_detect: None,
        perf_event_paranoid: None,
        transparent_hugepage: None,
        virtualization: None,
        tool_version: "test".into(),
        command_line: Vec::new(),
        timestamp_unix: 0,
    }
}

fn row(build: &str, value: f64, comparison: Option<Comparison>) -> MatrixRow {
    MatrixRow {
        build: build.into(),
        metric: "wall".into(),
        unit: Unit::Seconds,
        direction: crate::run::metric::Direction::Lower,
        default_value: value,
        spread_cv: 0.031,
        variants: (0..8)
            .map(|seed| VariantValue {
                seed,
                runs: 5,
                estimate: value * (1.0 + 0.01 * seed as f64),
            })
            .collect(),
        comparison,
    }
}

fn explain() -> Explain {
    Explain {
        uarch: crate::code::uarch::Choice::default(),
        window: 32,
        baseline_binary: "/w/A/0/bench".into(),
        ranking: Ranking::Placement,
        profile: None,
        top: 5,
        notes: vec!["valgrind not found; ranking by how far code moved".into()],
        builds: vec![ExplainBuild {
            build: "B".into(),
            binary: "/w/B/0/bench".into(),
            error: None,
            matched: 11,
            only_in_baseline: 0,
            only_in_build: 0,
            changed: 1,
            changed_not_run: 0,
            functions: vec![MovedFunction {
                name: "hot_loop".into(),
                old_address: 0x11d0,
                new_address: 0x1280,
                old_size: 64,
                new_size: 64,
                old_line_offset: 16,
                new_line_offset: 0,
                old_window_offset: 16,
                new_window_offset: 0,
                reasons: vec![ChangeReason::OffsetMoved],
                loops_moved: 1,
                moved_bytes: 32,
                hot_share: None,
            }],
            coverage: None,
            profile: None,
            one_sided: Vec::new(),
        }],
    }
}

/// Two builds on wall time, 8 layouts: B UNKNOWN (layout spread), one
/// variant left out by a failed build, a run that failed after the matrix's
/// runs, `--explain`, and the notes the experiment writes.
fn report() -> LayoutReport {
    let mut unknown = comparison(Verdict::Unknown, 0.97, ratio(0.985, 0.962, 1.009, 8));
    unknown.default_verdict = Verdict::Faster;
    unknown.undecided = Some(Undecided::LayoutSpread { layouts: 40 });
    let build = |name: &str, template: &str| BuildSpec {
        name: name.into(),
        template: template.into(),
    };
    LayoutReport {
        schema: crate::doc::Schema::Layout.name(),
        schema_version: crate::layout::SCHEMA_VERSION,
        builds: vec![
            build("A", "cc -O2 {cflags} -o {out} x.c {ldflags}"),
            build("B", "cc -O3 {cflags} -o {out} x.c {ldflags}"),
        ],
        settings: Settings {
            run_template: "{out} --iterations 9".into(),
            metrics: vec!["wall".into()],
            higher_is_better: crate::run::metric::HigherIsBetter::Off,
            layouts: 9,
            max_layouts: Some(32),
            rounds: 5,
            warmup: 1,
            jobs: 2,
            estimator: Estimator::Median,
            margin: 0.01,
            alpha: 0.05,
            confidence: 0.975,
            max_time_s: None,
            shell: false,
            seed: 1,
            work_dir: "/w".into(),
        },
        sources: vec![
            SourceStatus {
                source: Source::Align,
                active: true,
                detail: "-falign-functions=N -falign-loops=N".into(),
            },
            SourceStatus {
                source: Source::Shuffle,
                active: false,
                detail: "no mold or lld found".into(),
            },
        ],
        variants: (0..9)
            .map(|seed| Variant::from_seed(seed, true, false, false))
            .collect(),
        used_seeds: vec![0, 1, 2, 3, 4, 5, 6, 7],
        build_results: vec![BuildResult {
            build: 1,
            seed: 8,
            ok: false,
            reused: false,
            seconds: 0.1,
            command: "cc -O3 -falign-functions=64 -o /w/B/8/bench x.c".into(),
            error: Some("exit status 1".into()),
            output_tail: vec!["cc: error: unrecognized option".into()],
            launched: Default::default(),
            code_hash: None,
        }],
        status: Status {
            state: State::RunFailed,
            message: Some("B seed 3: killed by signal 11 (SIGSEGV)".into()),
            last_output: vec!["about to crash".into()],
        },
        environment: environment(),
        matrix: vec![row("A", 0.0102, None), row("B", 0.0099, Some(unknown))],
        looks: vec![Look {
            layouts: 8,
            confidence: 0.975,
            undecided: 1,
            added: crate::layout::Added::Layouts { layouts: 8 },
        }],
        notes: vec![
            Note::VariantsLeftOut {
                left_out: 1,
                variants: 9,
                build: "B".into(),
                seed: 8,
                error: Some("exit status 1".into()),
            },
            Note::Auto(AutoOutcome::Stopped {
                layouts: 8,
                looks: 1,
            }),
            Note::EnvironmentJitter,
            Note::Run(crate::run::Note::MaxTimeCut {
                command: "gcc".into(),
            }),
        ],
        timing: Timing {
            build_s: 1.5,
            run_s: 12.25,
            explain_s: 0.5,
            total_s: 14.25,
        },
        load: Default::default(),
        runs: Vec::new(),
        explain: Some(explain()),
        analyze: None,
        shards: None,
    }
}

/// What a browser shows of `page`: the tags dropped, the entities back to characters.
fn visible(page: &str) -> String {
    let mut text = String::with_capacity(page.len());
    let mut in_tag = false;
    for c in page.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[test]
fn every_format_carries_the_terminal_reports_sections() {
    let report = report();
    let terminal = text::render(&report, false);
    let markdown = text::markdown(&report);
    let page = visible(&html::layout(&report));
    let json = crate::report::json::written(&json::document(&report));
    let compared = report
        .matrix
        .iter()
        .position(|r| r.comparison.is_some())
        .unwrap();
    let formats = [("Markdown", &markdown), ("HTML", &page)];

    // Every labelled section: in the terminal (the fixture has them all),
    // in Markdown and in what the HTML page shows (a heading may capitalise
    // it), and its facts in the JSON.
    for (label, pointer) in SECTIONS {
        let pointer = pointer.replace("{row}", &compared.to_string());
        assert!(
            terminal.contains(label),
            "terminal lacks {label:?}:\n{terminal}"
        );
        for (format, text) in formats {
            assert!(
                text.to_lowercase().contains(&label.to_lowercase()),
                "{format} lacks {label:?}:\n{text}"
            );
        }
        let facts = json.pointer(&pointer);
        assert!(
            facts.is_some_and(|v| !v.is_null() && v != &Value::Array(Vec::new())),
            "JSON lacks {pointer} for {label:?}"
        );
    }
    // The stop block, labelled alike.
    for text in [&terminal, &markdown, &page] {
        assert!(text.contains("FAILED"), "{text}");
        assert!(
            text.contains("B seed 3: killed by signal 11 (SIGSEGV)"),
            "{text}"
        );
        assert!(text.contains("about to crash"), "{text}");
    }
    assert_eq!(json["status"]["state"], "run_failed");
    // The matrix: the same column names, and each one's number in the JSON rows.
    for (column, field) in COLUMN_FIELDS {
        assert!(
            terminal.contains(column),
            "terminal lacks column {column:?}"
        );
        for (format, text) in formats {
            assert!(text.contains(column), "{format} lacks column {column:?}");
        }
        let value = json["matrix"][compared].pointer(field);
        assert!(
            value.is_some_and(|v| !v.is_null()),
            "JSON row lacks {field} for {column:?}"
        );
    }
    assert_eq!(
        COLUMN_FIELDS.map(|(column, _)| column),
        COLUMNS,
        "every column has its JSON field"
    );
    // The same words everywhere: the verdict line names the build and the
    // metric, then the sentence; the hint, the notes, the legend, the
    // sources, the failed build, the templates, the time.
    // 9 variants built, 8 entered the analysis: the headline counts both.
    assert!(
        prose::headline(&report).contains("× 9 layouts (8 used) ×"),
        "{}",
        prose::headline(&report)
    );
    let row = &report.matrix[compared];
    let c = row.comparison.as_ref().unwrap();
    let words = {
        let mut words = vec![
            format!("B wall: {}", prose::comparison_sentence(&report, row, c)),
            prose::comparison_hint(&report, c).unwrap(),
            prose::legend(&report),
            prose::build_failed(&report, &report.build_results[0]),
            prose::headline(&report),
            prose::time(&report).unwrap(),
            "B = `cc -O3 {cflags} -o {out} x.c {ldflags}`".to_string(),
            "run = `{out} --iterations 9`".to_string(),
            "cc: error: unrecognized option".to_string(),
        ];
        words.extend(report.sources.iter().map(prose::source));
        words.extend(prose::notes(&report));
        words
    };
    for text in &words {
        assert!(
            terminal.contains(text.as_str()),
            "terminal lacks {text:?}:\n{terminal}"
        );
        // Markdown escapes prose (`[` of an interval, `_`, `*`), and sets
        // templates and output in code, where nothing is escaped.
        assert!(
            markdown.contains(text.as_str())
                || markdown.contains(&crate::report::escape::markdown(text)),
            "Markdown lacks {text:?}:\n{markdown}"
        );
        // HTML sets the templates in <code> instead of backticks.
        let in_page = text.replace('`', "");
        assert!(page.contains(&in_page), "HTML lacks {in_page:?}:\n{page}");
    }
    assert!(html::layout(&report)
        .contains("<span class=\"verdict UNKNOWN\">UNKNOWN</span> B wall: not decided"));
    assert_eq!(
        json["matrix"][compared]["comparison"]["sentence"],
        prose::comparison_sentence(&report, row, c).as_str()
    );
    let notes: Vec<&str> = json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(notes, prose::notes(&report));
    assert_eq!(
        json["matrix"][compared]["comparison"]["layout_noise"],
        0.052
    );
    assert_eq!(
        json["matrix"][compared]["comparison"]["smallest_trustworthy_effect"],
        0.052
    );
    // `--explain`'s table in every format.
    for text in [&terminal, &markdown, &page] {
        assert!(text.contains("hot_loop"), "{text}");
        assert!(text.contains("valgrind not found"), "{text}");
    }
    assert_eq!(
        json["explain"]["builds"][0]["functions"][0]["name"],
        "hot_loop"
    );
}

#[test]
fn an_imported_report_names_its_files_everywhere_and_has_no_time() {
    let mut report = report();
    report.analyze = Some(crate::doc::Imported {
        files: vec!["runs.csv".into()],
        format: crate::doc::Source::Files(vec![crate::doc::FileFormat::Csv]),
        interval: crate::doc::IntervalKind::Fixed,
        interleaved: Some(true),
        layouts: None,
        stored: None,
    });
    report.status = Status::new(State::Imported, None);
    report.explain = None;
    let terminal = text::render(&report, false);
    let markdown = text::markdown(&report);
    let page = html::layout(&report);
    for text in [&terminal, &markdown, &page] {
        assert!(text.contains("runs.csv (csv)"), "{text}");
        assert!(!text.contains("time: "), "{text}");
        assert!(!text.contains("FAILED"), "{text}");
    }
    let json = crate::report::json::written(&json::document(&report));
    assert_eq!(json["analyze"]["files"][0], "runs.csv");
    assert!(json.get("explain").is_none());
}

#[test]
fn a_busy_machine_is_named_in_the_notes_the_hint_and_the_json() {
    let mut report = report();
    assert!(findings::busy_machine(&report).is_none());
    // Load 4.8 and 5.2 after the rounds, on 2 CPUs: other work averaged 4.0
    // beyond the benchmark's own 1, more than half the CPUs.
    report.load = crate::layout::MachineLoad {
        samples: vec![4.8, 5.2],
        cpus: 2,
    };
    let busy = findings::busy_machine(&report).unwrap();
    assert!(
        busy.starts_with(
            "the machine was busy during the runs: load average 5.0 (up to 5.2) on 2 CPUs"
        ),
        "{busy}"
    );
    assert!(prose::notes(&report).contains(&busy));
    let unknown = report
        .matrix
        .iter()
        .find_map(|r| {
            r.comparison
                .as_ref()
                .filter(|c| c.verdict == Verdict::Unknown)
        })
        .unwrap();
    let hint = prose::comparison_hint(&report, unknown).unwrap();
    assert!(
        hint.contains("the machine was busy (load average 5.0 on 2 CPUs)"),
        "{hint}"
    );
    let json: Value = crate::report::json::written(&json::document(&report));
    assert_eq!(json["load"]["busy"], true);
    assert_eq!(json["load"]["mean"], 5.0);
    // One process on a quiet 2-CPU machine is not busy.
    report.load.samples = vec![1.1, 1.6];
    assert!(findings::busy_machine(&report).is_none());
}
