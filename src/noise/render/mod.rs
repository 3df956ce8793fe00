//! The words of a `noise` report, once for every format: the factors' names
//! and held settings, why a factor was not tested, each metric's finding,
//! the runs sentence and the notes (freezing ASLR freezes one layout). The
//! layouts are in `text` (terminal, Markdown), `html` and `json`.

pub mod html;
pub mod json;
pub mod text;

use super::plan::varies;
use super::{
    Attribution, Factor, MetricNoise, NoiseReport, NotTested, State, Undecomposed, PRECISION,
};
use crate::report::units;
use crate::run::metric::Unit;
use crate::stats::factorial::Estimate;

/// The table's columns, in every format.
pub const COLUMNS: [&str; 6] = [
    "factor",
    "held as",
    "share",
    "95% interval",
    "mean when held",
    "p",
];

/// A factor's name in sentences.
pub fn factor_name(factor: Factor) -> &'static str {
    match factor {
        Factor::Aslr => "ASLR",
        Factor::Pin => "CPU pinning",
        Factor::Env => "environment size",
        Factor::Heap => "heap huge pages",
        Factor::Fresh => "fresh binary copy",
    }
}

/// What holding the factor means.
pub fn held_as(factor: Factor, pin_cpu: Option<usize>) -> String {
    match factor {
        Factor::Aslr => "ASLR off (ADDR_NO_RANDOMIZE)".into(),
        Factor::Pin => match pin_cpu {
            Some(cpu) => format!("pinned to CPU {cpu}"),
            None => "pinned".into(),
        },
        Factor::Env => "no padding variable".into(),
        Factor::Heap => "glibc.malloc.hugetlb=1".into(),
        Factor::Fresh => "one copy of the binary".into(),
    }
}

/// What varying the factor means.
pub fn varied_as(factor: Factor) -> &'static str {
    match factor {
        Factor::Aslr => "ASLR on",
        Factor::Pin => "not pinned",
        Factor::Env => "a variable of 0-4095 random bytes",
        Factor::Heap => "glibc.malloc.hugetlb=0 (small pages)",
        Factor::Fresh => "a new copy every run",
    }
}

/// Why a factor was not tested, in words.
pub fn not_tested(reason: &NotTested) -> String {
    match reason {
        NotTested::Skipped => "left out with --skip".into(),
        NotTested::AslrOffMachineWide => {
            "ASLR is off machine-wide (kernel.randomize_va_space = 0): every run has one layout already".into()
        }
        NotTested::NoPersonality(cause) => {
            format!("personality(2) cannot turn ASLR off here: {cause}")
        }
        NotTested::OneCpu => "only one CPU is available: every run already runs on it".into(),
        NotTested::Shell => {
            "the command runs through sh -c: its program cannot be inspected or copied".into()
        }
        NotTested::Script => "the program is a script: a copy would not copy its interpreter".into(),
        NotTested::NotElf(cause) => format!("the program is not an ELF file: {cause}"),
        NotTested::Static => {
            "the program is statically linked: no shared glibc reads the tunable".into()
        }
        NotTested::NotGlibc => "the program does not use glibc's allocator".into(),
        NotTested::OwnAllocator(which) => format!("the program brings its own allocator ({which})"),
        NotTested::GlibcTooOld(version) => {
            format!("glibc {version} has no glibc.malloc.hugetlb tunable (2.35 and later)")
        }
        NotTested::ThpAlways => {
            "transparent huge pages are `always`: the kernel already gives the heap huge pages, the tunable changes nothing".into()
        }
        NotTested::ThpOff => "transparent huge pages are off (`never`) or not offered".into(),
        NotTested::TooLarge(bytes) => format!(
            "the program is {} MiB, too large to copy for every run",
            bytes >> 20
        ),
    }
}

/// A share as a percentage.
pub fn percent(x: f64) -> String {
    if x.is_finite() {
        format!("{:.0}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// A share's interval.
pub fn interval(e: &Estimate) -> String {
    format!("[{}, {}]", percent(e.low), percent(e.high))
}

/// A signed change, e.g. "+1.2%".
pub fn change(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.2}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// A standard deviation of the log metric as a coefficient of variation.
pub fn cv(sd: f64) -> String {
    if sd.is_finite() {
        format!("{:.2}%", sd * 100.0)
    } else {
        "-".into()
    }
}

/// The settings of `cell` in words ("ASLR off, pinned to CPU 1").
pub fn cell_words(report: &NoiseReport, cell: u32) -> String {
    let tested = report.tested();
    let words: Vec<String> = tested
        .iter()
        .map(|&f| {
            if varies(&tested, cell, f) {
                varied_as(f).to_string()
            } else {
                held_as(f, report.pin_cpu)
            }
        })
        .collect();
    if words.is_empty() {
        "as given".into()
    } else {
        words.join(", ")
    }
}

/// A runs count, or why there is none.
fn runs(n: Option<u64>) -> String {
    n.map_or("an unknown number of".into(), |n| n.to_string())
}

/// The finding of one metric: its noise, its sources, what is unexplained.
pub fn finding(metric: &MetricNoise) -> String {
    let name = &metric.name;
    match &metric.result {
        Err(why) => format!("{name}: {}", undecomposed(why, metric.unit)),
        Ok(a) => {
            let sources: Vec<String> = a
                .factors
                .iter()
                .filter(|f| f.source)
                .map(|f| {
                    format!(
                        "{} {} {}",
                        factor_name(f.factor),
                        percent(f.share.value),
                        interval(&f.share)
                    )
                })
                .collect();
            let total = a.decomposition.total.value.sqrt();
            let sources = if !a.explained {
                "the tested factors explain no clear part of it (with every factor held it is as large)".to_string()
            } else if sources.is_empty() {
                "no tested factor is a source".to_string()
            } else {
                format!("sources: {}", sources.join(", "))
            };
            format!(
                "{name}: noise with every factor varying {} (CV); {sources}; unexplained (left with every factor held) {} {}.",
                cv(total),
                percent(a.decomposition.unexplained.value),
                interval(&a.decomposition.unexplained),
            )
        }
    }
}

/// Why a metric was not taken apart.
pub fn undecomposed(why: &Undecomposed, unit: Unit) -> String {
    match why {
        Undecomposed::TooFewRounds { complete } => format!(
            "{} complete, at least {} needed: raise --budget",
            units::count(*complete as u64, "round"),
            super::MIN_ROUNDS
        ),
        Undecomposed::NotPositive { value } => {
            format!("a value of {value} has no logarithm; the shares are of the log metric")
        }
        Undecomposed::NoNoise { value } => format!(
            "every run gave the same value ({}): no run-to-run noise to attribute",
            units::value(*value, unit)
        ),
        Undecomposed::Missing => "a run did not report this metric".into(),
    }
}

/// What `compare` would need, plainly and held.
pub fn runs_sentence(report: &NoiseReport, a: &Attribution) -> String {
    let plain = format!(
        "A plain repeated run ({}) has CV {}: `compare` would need about {} runs per command for ±{}.",
        cell_words(report, a.default_cell),
        cv(a.default_sd),
        runs(a.default_runs),
        percent(PRECISION),
    );
    if a.quiet_held.is_empty() {
        return format!("{plain} No setting a run can change makes it quieter.");
    }
    let held: Vec<String> = a
        .quiet_held
        .iter()
        .map(|&f| held_as(f, report.pin_cpu))
        .collect();
    format!(
        "{plain} Quietest setting: {} (CV {}): about {} runs per command.",
        held.join(", "),
        cv(a.quiet_sd),
        runs(a.quiet_runs),
    )
}

/// The notes every format shows after the metrics.
pub fn notes(report: &NoiseReport) -> Vec<String> {
    let mut out = Vec::new();
    let tested = report.tested();
    if tested.contains(&Factor::Aslr) {
        let shift = report.metrics.iter().find_map(|m| {
            let a = m.result.as_ref().ok()?;
            let f = a.factors.iter().find(|f| f.factor == Factor::Aslr)?;
            Some((m.name.clone(), f.held_shift))
        });
        let moved = shift
            .filter(|(_, s)| s.is_finite())
            .map(|(name, s)| format!(" (here it moved the mean {name} by {})", change(s)))
            .unwrap_or_default();
        out.push(format!(
            "Holding ASLR freezes one memory layout{moved}: a verdict measured that way speaks for that layout only. Pair it with `ghostbench layout` to know whether a difference holds across layouts."
        ));
    }
    let source = |factor: Factor| {
        report.metrics.iter().any(|m| {
            m.result
                .as_ref()
                .is_ok_and(|a| a.factors.iter().any(|f| f.factor == factor && f.source))
        })
    };
    if source(Factor::Env) {
        out.push("The environment's size moves the stack: runs in one session share it, but another shell, user or CI job has another, and with it another result.".into());
    }
    if source(Factor::Fresh) {
        out.push("A new copy of the binary (a rebuild, a checkout) lands on other physical pages and measures differently: compare builds copied the same way.".into());
    }
    for note in &report.notes {
        out.push(run_note(note));
    }
    out
}

/// The runner's notes in words.
fn run_note(note: &crate::run::Note) -> String {
    use crate::run::Note;
    match note {
        Note::SeveralMatches { tally, of } => format!(
            "metric {}: several different values matched in {} of {} runs; the {:?} one was taken",
            tally.metric, tally.runs, of, tally.choice
        ),
        Note::LeftBehind {
            runs,
            of,
            killed,
            survived,
            ..
        } => format!(
            "{runs} of {of} runs left processes running after they exited: {killed} killed, {survived} could not be"
        ),
        Note::MaxTimeCut { command } => {
            format!("a run of {command} was cut at the time limit and left out")
        }
    }
}

/// The line that says how the experiment went.
pub fn summary(report: &NoiseReport) -> String {
    let tested = report.tested();
    let state = match report.status.state {
        State::Finished => "",
        State::Failed => " (stopped by a failed run)",
        State::Interrupted => " (interrupted)",
    };
    format!(
        "{} factors tested, {} cells, {} complete, {} in {:.1} s (budget {:.0} s){state}.",
        tested.len(),
        1u32 << tested.len(),
        units::count(report.complete_rounds as u64, "round"),
        units::count(report.runs.len() as u64, "run"),
        report.elapsed_s,
        report.budget_s,
    )
}

/// The rows of one metric's table, in [`COLUMNS`] order.
pub fn rows(report: &NoiseReport, a: &Attribution) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = a
        .factors
        .iter()
        .map(|f| {
            vec![
                factor_name(f.factor).to_string(),
                held_as(f.factor, report.pin_cpu),
                percent(f.share.value),
                interval(&f.share),
                change(f.held_shift),
                units::p_value(f.held_shift_p),
            ]
        })
        .collect();
    rows.push(vec![
        "unexplained".into(),
        "every factor held".into(),
        percent(a.decomposition.unexplained.value),
        interval(&a.decomposition.unexplained),
        String::new(),
        String::new(),
    ]);
    rows
}

/// The factors not tested, each with why.
pub fn untested(report: &NoiseReport) -> Vec<String> {
    report
        .factors
        .iter()
        .filter_map(|p| {
            let why = p.not_tested.as_ref()?;
            Some(format!(
                "{}: not tested: {}",
                factor_name(p.factor),
                not_tested(why)
            ))
        })
        .collect()
}

/// The report's title.
pub fn title(report: &NoiseReport) -> String {
    format!("Where the noise of {} comes from", report.command.text)
}
