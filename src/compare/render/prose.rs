//! The words of a `compare` report that every format shares: the verdict
//! sentence, the line saying what the interval holds over, the notes, a side's
//! summary, the settings, the process start and how the experiment ended. Each
//! renderer lays these out its own way; the words are written once, here.

use super::notes::{baseline, non_positive, ratio_legend, unapplied};
use crate::compare::{CompareReport, Limit, MetricReport, Note, Progress, State};
use crate::report::escape::visible;
use crate::report::units::{ratio, significant, trimmed, value};
use crate::run::command::CommandSpec;
use crate::run::metric::Unit;
use crate::stats::descriptive::Summary;
use crate::stats::verdict::Verdict;
use std::borrow::Cow;

/// The labels of a report's sections, as every format prints them.
pub mod label {
    pub const TO_DECIDE: &str = "to decide:";
    pub const PROCESS_START: &str = "process start:";
    pub const COUNTERS_UNAVAILABLE: &str = "hardware counters unavailable:";
    pub const SIMULATION_UNAVAILABLE: &str = "simulated counters unavailable:";
    pub const NOTE: &str = "note:";
    pub const WARNING: &str = "warning:";
    pub const SETTINGS: &str = "settings:";
    /// The table of metrics (its first cells are `cells::compare_cells`).
    pub const TABLE: [&str; 6] = [
        "metric", "A median", "B median", "B/A (HL)", "change", "verdict",
    ];
    pub const COUNTERS: &str = "counter";
    pub const SIMULATION: &str = "cachegrind";
}

/// The report as the human formats show it: every command's name and text
/// and every metric's name on one line with its hidden characters visible
/// (`escape::visible`), so a name from a CSV or a `--name` cannot break a
/// line, forge a verdict line, or drive the terminal. `--json` keeps them as
/// given.
pub fn shown(report: &CompareReport) -> Cow<'_, CompareReport> {
    let hidden = |s: &str| matches!(visible(s), Cow::Owned(_));
    if !report
        .commands
        .iter()
        .any(|c| hidden(&c.name) || hidden(&c.text))
        && !report.metrics.iter().any(|m| hidden(&m.name))
    {
        return Cow::Borrowed(report);
    }
    let mut report = report.clone();
    for c in &mut report.commands {
        c.name = visible(&c.name).into_owned();
        c.text = visible(&c.text).into_owned();
    }
    for m in &mut report.metrics {
        m.name = visible(&m.name).into_owned();
    }
    Cow::Owned(report)
}

/// The two commands' names, A's first.
pub fn names(report: &CompareReport) -> [&str; 2] {
    [
        report.commands[0].name.as_str(),
        report.commands[1].name.as_str(),
    ]
}

/// "A = `cmd`, B = `cmd`", or with the user's names, "A = fast `cmd`".
pub fn commands(report: &CompareReport) -> String {
    format!(
        "A = {}, B = {}",
        labelled("A", &report.commands[0]),
        labelled("B", &report.commands[1])
    )
}

/// "`cmd`", or "name `cmd`" when the user named it (just the name when
/// there is no command text, as for a CSV).
fn labelled(side: &str, command: &CommandSpec) -> String {
    match command_parts(side, command) {
        (Some(name), Some(text)) => format!("{name} `{text}`"),
        (None, Some(text)) => format!("`{text}`"),
        (name, None) => name.unwrap_or(side).to_string(),
    }
}

/// What to show of the command on `side` ("A" or "B"): its name unless it is
/// just the side's letter, and its text unless there is none or it is the name.
pub fn command_parts<'a>(
    side: &str,
    command: &'a CommandSpec,
) -> (Option<&'a str>, Option<&'a str>) {
    if command.text.is_empty() || command.text == command.name {
        (Some(&command.name), None)
    } else if command.name == side {
        (None, Some(&command.text))
    } else {
        (Some(&command.name), Some(&command.text))
    }
}

/// "B is 1.97× slower than A on wall: ratio 1.970 [1.950, 1.990]": the
/// verdict in words with its numbers.
pub fn sentence(m: &MetricReport, [a, b]: [&str; 2], margin: f64) -> String {
    let metric = &m.name;
    let [n_a, n_b] = m.runs;
    if n_a == 0 || n_b == 0 {
        return format!("{a} vs {b} on {metric} is not decided: no measured runs ({n_a} + {n_b})");
    }
    let ci = format!(
        "ratio {} [{}, {}]",
        ratio(m.ratio),
        ratio(m.ci_low),
        ratio(m.ci_high)
    );
    let change = describe_change(m.ratio, m.direction.higher_is_better());
    let margin_pct = percent(margin);
    match m.verdict {
        Verdict::Faster | Verdict::Slower => format!("{b} is {change} than {a} on {metric}: {ci}"),
        Verdict::Same => format!("{a} and {b} are the same on {metric} within {margin_pct}: {ci}"),
        Verdict::Artifact => format!("{b} vs {a} on {metric} is a layout artifact: {ci}"),
        Verdict::Unknown => format!(
            "{a} vs {b} on {metric} is not decided: {ci} is not clear of the {margin_pct} margin"
        ),
    }
}

/// "1.97× slower" or "4.8% faster", from the ratio B/A.
fn describe_change(ratio: f64, higher_is_better: bool) -> String {
    let better = if higher_is_better {
        ratio > 1.0
    } else {
        ratio < 1.0
    };
    let word = if better { "faster" } else { "slower" };
    let factor = if ratio >= 1.0 { ratio } else { 1.0 / ratio };
    if factor >= 1.5 {
        format!("{factor:.2}× {word}")
    } else {
        format!("{:.1}% {word}", (factor - 1.0) * 100.0)
    }
}

/// "95% CI valid over all looks (3 taken); 20 + 20 runs; margin ±1%": what
/// the verdict's interval holds over.
pub fn validity(report: &CompareReport, m: &MetricReport) -> String {
    let over = if m.looks == 0 {
        "at the data's size (no sequential looks)".to_string()
    } else {
        format!("valid over all looks ({} taken)", m.looks)
    };
    format!(
        "{:.0}% CI {over}; {} + {} runs; margin {}",
        m.ci_level * 100.0,
        report.measured_runs(0),
        report.measured_runs(1),
        percent(report.settings.margin)
    )
}

/// The header of the CI column: "95% CI".
pub fn ci_header(report: &CompareReport) -> String {
    format!("{:.0}% CI", (1.0 - report.settings.alpha) * 100.0)
}

/// A metric's heading: "wall", or "wall (process start subtracted)".
pub fn metric_heading(m: &MetricReport) -> String {
    if m.spawn_corrected {
        format!("{} (process start subtracted)", m.name)
    } else {
        m.name.clone()
    }
}

/// The label of a side in the summaries: "A", or "A fast" when named.
pub fn side_label(report: &CompareReport, side: usize) -> String {
    let label = ["A", "B"][side.min(1)];
    let name = &report.commands[side.min(1)].name;
    if name == label {
        label.to_string()
    } else {
        format!("{label} {name}")
    }
}

/// A side's summary as cells: n, median, mean ± sd, CV, MAD, range, outliers.
pub fn summary_cells(s: &Summary, unit: Unit) -> [String; 7] {
    [
        s.n.to_string(),
        value(s.median, unit),
        format!("{} ± {}", value(s.mean, unit), value(s.stddev, unit)),
        format!("{:.2}%", s.cv * 100.0),
        value(s.mad, unit),
        format!("{} … {}", value(s.min, unit), value(s.max, unit)),
        format!(
            "{}+{} ({} severe)",
            s.outliers_low, s.outliers_high, s.outliers_severe
        ),
    ]
}

/// The headers of [`summary_cells`], after the side's label.
pub const SUMMARY_HEADER: [&str; 8] = [
    "side",
    "n",
    "median",
    "mean ± sd",
    "CV",
    "MAD",
    "range",
    "outliers (low+high)",
];

/// "process start: 1.4 ms (subtracted from wall; …)", when it was measured.
pub fn process_start(report: &CompareReport) -> Option<String> {
    let o = report.spawn_overhead_s?;
    let applied = if report.spawn_correction_applied {
        "subtracted from wall; --no-spawn-correction keeps raw wall"
    } else {
        "not subtracted"
    };
    Some(format!(
        "{} {} ({applied})",
        label::PROCESS_START,
        value(o, Unit::Seconds)
    ))
}

/// A counter's cells: name, A median, B median, B/A.
pub fn counter_cells(row: &crate::compare::CounterRow) -> [String; 4] {
    [
        row.name.clone(),
        significant(row.median_a),
        significant(row.median_b),
        format!("{:.4}", row.ratio),
    ]
}

/// The headers of [`counter_cells`].
pub const COUNTER_HEADER: [&str; 4] = [label::COUNTERS, "A median", "B median", "B/A"];

/// The headers of the simulation table.
pub const SIMULATION_HEADER: [&str; 6] = [
    label::SIMULATION,
    "Ir",
    "I1 misses",
    "D1 misses",
    "LL misses",
    "est. cycles",
];

/// `--simulate`: the table rows, the failures and the one-line comparison
/// ("simulation: identical instruction counts (Ir B/A = 1.0000)").
pub struct Simulation {
    pub unavailable: Option<String>,
    pub rows: Vec<[String; 6]>,
    pub failures: Vec<String>,
    pub summary: Option<String>,
}

/// The simulation section, when `--simulate` was asked for.
pub fn simulation(report: &CompareReport) -> Option<Simulation> {
    let sim = report.simulation.as_ref()?;
    if let Some(reason) = &sim.unavailable {
        return Some(Simulation {
            unavailable: Some(format!("{} {reason}", label::SIMULATION_UNAVAILABLE)),
            rows: Vec::new(),
            failures: Vec::new(),
            summary: None,
        });
    }
    let (mut rows, mut failures) = (Vec::new(), Vec::new());
    for (i, cmd) in report.commands.iter().enumerate() {
        match (
            sim.results.get(i).cloned().flatten(),
            sim.errors.get(i).cloned().flatten(),
        ) {
            (Some(s), _) => rows.push([
                cmd.name.clone(),
                s.ir.to_string(),
                s.i1_misses.to_string(),
                (s.d1r_misses + s.d1w_misses).to_string(),
                (s.ill_misses + s.dlr_misses + s.dlw_misses).to_string(),
                s.estimated_cycles.to_string(),
            ]),
            (None, error) => failures.push(format!(
                "simulation of {} failed: {}",
                cmd.name,
                error.unwrap_or_default()
            )),
        }
    }
    let summary = match (sim.results.first(), sim.results.get(1)) {
        (Some(Some(a)), Some(Some(b))) => Some(format!(
            "simulation: {} (Ir B/A = {:.4})",
            if a.ir == b.ir {
                "identical instruction counts"
            } else {
                "instruction counts differ"
            },
            b.ir as f64 / a.ir.max(1) as f64
        )),
        _ => None,
    };
    Some(Simulation {
        unavailable: None,
        rows,
        failures,
        summary,
    })
}

/// A note in words.
pub fn note(note: &Note) -> String {
    match note {
        Note::Run(note) => super::notes::run_note(note),
        Note::Imported(note) => super::notes::imported(note),
        Note::CleanupSkipped => format!("--cleanup skipped: {}", crate::run::interrupt::cause()),
        Note::CleanupFailed { cause } => format!("--cleanup failed: {cause}"),
        Note::SpawnNotCorrected {
            overhead_s,
            max_share,
        } => format!(
            "process start ({}) is over {:.0}% of a run, so wall is not corrected for it",
            value(*overhead_s, Unit::Seconds),
            max_share * 100.0
        ),
        Note::EnvironmentJitter { max_bytes } => format!(
            "environment jitter: {} of 0–{max_bytes} bytes per run, recorded per run",
            crate::run::JITTER_VARIABLE
        ),
        Note::AslrOff => "ASLR off (--no-aslr): every run started with ADDR_NO_RANDOMIZE, so in one memory layout; freezing ASLR freezes one layout, and the verdict speaks for that layout only (`ghostbench layout` varies it)".into(),
        Note::Unapplied(u) => unapplied(u),
        Note::NonPositive {
            metric,
            a,
            b,
            difference_scale,
        } => non_positive(metric, *a, *b, *difference_scale),
        Note::Baseline(used) => baseline(used),
    }
}

/// Every note in words, in the report's order.
pub fn notes(report: &CompareReport) -> Vec<String> {
    // A note quotes names and causes read from the input: one line each.
    report
        .notes
        .iter()
        .map(note)
        .chain(ratio_legend(report))
        .map(|n| visible(&n).into_owned())
        .collect()
}

/// "settings: margin ±1%, α 0.05, ABBA order, seed 1; CPU …", or for data
/// read from files, "settings: margin ±1%, α 0.05, fixed-n CI".
pub fn settings(report: &CompareReport) -> String {
    let s = &report.settings;
    let mut text = format!(
        "{} margin {}, α {}",
        label::SETTINGS,
        percent(s.margin),
        trimmed(s.alpha)
    );
    let higher: Vec<&str> = report
        .metrics
        .iter()
        .filter(|m| m.direction.higher_is_better())
        .map(|m| m.name.as_str())
        .collect();
    if !higher.is_empty() {
        text.push_str(&format!(", higher is better on {}", higher.join(", ")));
    }
    match &report.analyze {
        Some(imported) => {
            let interval = if imported.interval == crate::doc::IntervalKind::Sequential {
                "anytime-valid CI (compare's looks replayed)"
            } else {
                "fixed-n CI"
            };
            text.push_str(&format!(", {interval}"));
            if report.metrics.len() > 1 {
                text.push_str(", Holm-adjusted p-values");
            }
        }
        None => {
            let order = match s.order {
                crate::compare::Order::Abba => "ABBA",
                crate::compare::Order::Random => "random",
            };
            text.push_str(&format!(
                ", {order} order, warm-up {}, runs {}–{}, --max-time {}, seed {}",
                s.warmup,
                s.min_runs,
                s.max_runs,
                value(s.max_time.as_secs_f64(), Unit::Seconds),
                s.seed
            ));
            if let Some(cpu) = s.pin {
                text.push_str(&format!(", pinned to CPU {cpu}"));
            }
            if s.no_aslr {
                text.push_str(", ASLR off");
            }
            if let Some(model) = &report.environment.cpu_model {
                text.push_str(&format!("; CPU {model}"));
            }
        }
    }
    text
}

/// How the experiment ended: "stopped by --max-runs 100 after 100 + 100 runs
/// in 61.2 s", or for data read from files, "analyzed 5 + 5 runs read from a.csv".
pub fn ending(report: &CompareReport) -> String {
    let [n_a, n_b] = [report.measured_runs(0), report.measured_runs(1)];
    let state = match (&report.status.state, report.stopped_by) {
        (State::Decided, _) => "decided".to_string(),
        (State::BudgetExhausted, Some(Limit::MaxTime)) => format!(
            "stopped by --max-time {}",
            value(report.settings.max_time.as_secs_f64(), Unit::Seconds)
        ),
        (State::BudgetExhausted, Some(Limit::MaxRuns)) => {
            format!("stopped by --max-runs {}", report.settings.max_runs)
        }
        (State::BudgetExhausted, None) => "budget exhausted".to_string(),
        (State::Failed, _) => "failed".to_string(),
        (State::Interrupted, _) => "interrupted".to_string(),
        (State::Imported, _) => {
            let files = report
                .analyze
                .as_ref()
                .map_or(String::new(), |i| i.files.join(", "));
            return format!("analyzed {n_a} + {n_b} runs read from {files}");
        }
    };
    format!(
        "{state} after {n_a} + {n_b} runs in {:.1} s",
        report.elapsed_s
    )
}

/// The progress bar's message: "warm-up", or "wall: UNKNOWN 1.020".
pub fn progress(p: &Progress) -> String {
    if p.warmup {
        return "warm-up".to_string();
    }
    p.looks
        .iter()
        .map(|(name, verdict, r)| format!("{name}: {verdict} {}", ratio(*r)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "±1%".
pub fn percent(fraction: f64) -> String {
    format!("±{}%", trimmed(fraction * 100.0))
}

/// The footer's list, the same in Markdown and HTML: process start, counters
/// that could not be read, the simulation, notes and warnings, each labelled.
pub fn footer_items(report: &CompareReport) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    items.extend(process_start(report));
    if let Some(reason) = &report.counters.unavailable {
        items.push(format!("{} {reason}", label::COUNTERS_UNAVAILABLE));
    }
    if let Some(sim) = &simulation(report) {
        items.extend(sim.unavailable.iter().cloned());
        items.extend(sim.failures.iter().cloned());
        items.extend(sim.summary.iter().cloned());
    }
    items.extend(
        notes(report)
            .into_iter()
            .map(|n| format!("{} {n}", label::NOTE)),
    );
    items.extend(
        report
            .environment
            .warnings()
            .into_iter()
            .map(|w| format!("{} {w}", label::WARNING)),
    );
    // The environment's words quote its CPU model: one line each.
    items
        .into_iter()
        .map(|i| visible(&i).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::verdict::Verdict;

    fn metric(ratio: f64, low: f64, high: f64, verdict: Verdict, hib: bool) -> MetricReport {
        MetricReport {
            name: "wall".into(),
            unit: Unit::Seconds,
            direction: if hib {
                crate::run::metric::Direction::Higher
            } else {
                crate::run::metric::Direction::Lower
            },
            spawn_corrected: false,
            runs: [20, 20],
            a: None,
            b: None,
            verdict,
            ratio,
            ci_low: low,
            ci_high: high,
            ci_level: 0.95,
            look_alpha: 0.004,
            looks: 3,
            causes: Vec::new(),
            bootstrap_ratio_of_medians: None,
            hodges_lehmann_shift: None,
            cliffs_delta: f64::NAN,
            welch: None,
            mann_whitney: None,
            welch_p_holm: None,
            mann_whitney_p_holm: None,
        }
    }

    #[test]
    fn sentences_state_direction_and_size() {
        let names = ["A", "B"];
        let s = sentence(
            &metric(1.97, 1.95, 1.99, Verdict::Slower, false),
            names,
            0.01,
        );
        assert_eq!(
            s,
            "B is 1.97× slower than A on wall: ratio 1.970 [1.950, 1.990]"
        );
        let s = sentence(
            &metric(0.952, 0.94, 0.96, Verdict::Faster, false),
            names,
            0.01,
        );
        assert!(s.starts_with("B is 5.0% faster than A"), "{s}");
        let mut ops = metric(1.05, 1.04, 1.06, Verdict::Faster, true);
        ops.name = "ops".into();
        let s = sentence(&ops, names, 0.01);
        assert!(s.starts_with("B is 5.0% faster"), "{s}");
        let s = sentence(
            &metric(1.0, 0.995, 1.004, Verdict::Same, false),
            names,
            0.01,
        );
        assert!(s.contains("same on wall within ±1%"), "{s}");
    }

    #[test]
    fn no_runs_on_a_side_is_said_not_printed_as_numbers() {
        let mut m = metric(f64::NAN, f64::NAN, f64::NAN, Verdict::Unknown, false);
        m.runs = [0, 0];
        let s = sentence(&m, ["A", "B"], 0.01);
        assert_eq!(s, "A vs B on wall is not decided: no measured runs (0 + 0)");
        assert_eq!(ratio(f64::NAN), "n/a");
    }

    #[test]
    fn notes_and_progress_in_words() {
        let text = note(&Note::SpawnNotCorrected {
            overhead_s: 0.0014,
            max_share: 0.5,
        });
        assert_eq!(
            text,
            "process start (1.400 ms) is over 50% of a run, so wall is not corrected for it"
        );
        assert_eq!(
            note(&Note::EnvironmentJitter { max_bytes: 4095 }),
            format!(
                "environment jitter: {} of 0–4095 bytes per run, recorded per run",
                crate::run::JITTER_VARIABLE
            )
        );
        let mut p = Progress {
            runs_done: 4,
            runs_max: 10,
            elapsed: std::time::Duration::ZERO,
            max_time: std::time::Duration::ZERO,
            warmup: true,
            looks: vec![("wall".into(), Verdict::Unknown, 1.02)],
        };
        assert_eq!(progress(&p), "warm-up");
        p.warmup = false;
        assert_eq!(progress(&p), "wall: UNKNOWN 1.020");
    }
}
