//! Per-metric analysis of an A/B experiment: summaries, estimators, tests, the
//! verdict with the sentence that explains it, and for an UNKNOWN the causes
//! that kept it undecided (as facts; `render::hint` writes the sentences).
//!
//! The verdict comes from the sequential (anytime-valid) CI of the last look: it
//! is the one interval to quote. The bootstrap CI, Hodges–Lehmann shift and
//! p-values are descriptive, at the nominal level of one fixed-size test; the
//! reports show them only with `--verbose` and in the JSON, labelled so.

pub use super::causes::{Budget, Cause};
use super::render::hint;
use crate::report::units as format;
use crate::run::metric::Unit;
use crate::stats::bootstrap::{self, BootstrapMethod, Interval};
use crate::stats::descriptive::{summarize, Summary};
use crate::stats::mann_whitney::{mann_whitney, MannWhitney};
use crate::stats::multiple::holm;
use crate::stats::sequential::Look;
use crate::stats::shift::{cliffs_delta, hodges_lehmann, Shift};
use crate::stats::verdict::Verdict;
use crate::stats::welch::{welch, Welch};
use serde::Serialize;

/// Bootstrap resamples for the reported ratio-of-medians CI.
const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Everything reported about one metric.
#[derive(Debug, Clone, Serialize)]
pub struct MetricReport {
    pub name: String,
    pub unit: Unit,
    pub higher_is_better: bool,
    /// True when the process-start overhead was subtracted (wall only).
    pub spawn_corrected: bool,
    pub a: Option<Summary>,
    pub b: Option<Summary>,
    pub verdict: Verdict,
    /// Ratio B/A and its anytime-valid CI, the basis of the verdict.
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The confidence the CI holds with, over all looks together (1 − alpha).
    pub ci_level: f64,
    /// The alpha spent on this metric at the deciding look.
    pub look_alpha: f64,
    pub looks: usize,
    pub sentence: String,
    /// Why an UNKNOWN is undecided, as facts (empty for a verdict).
    pub causes: Vec<Cause>,
    /// What would resolve an UNKNOWN: the causes in words.
    pub hint: Option<String>,
    pub bootstrap_ratio_of_medians: Option<Interval>,
    pub hodges_lehmann_shift: Option<Shift>,
    pub cliffs_delta: f64,
    pub welch: Option<Welch>,
    pub mann_whitney: Option<MannWhitney>,
    /// Holm–Bonferroni adjusted p-values across the experiment's metrics.
    pub welch_p_holm: Option<f64>,
    pub mann_whitney_p_holm: Option<f64>,
}

/// The inputs for one metric.
pub struct MetricInput<'a> {
    pub name: &'a str,
    pub unit: Unit,
    pub a: &'a [f64],
    pub b: &'a [f64],
    pub spawn_corrected: bool,
    pub look: Look,
    pub looks: usize,
}

/// Analyze every metric, then adjust p-values across them (Holm). Without a
/// budget (data measured elsewhere) the hints speak of the runs at hand.
pub fn analyze(
    inputs: &[MetricInput],
    names: [&str; 2],
    margin: f64,
    alpha: f64,
    higher_is_better: bool,
    seed: u64,
) -> Vec<MetricReport> {
    analyze_within(inputs, names, margin, alpha, higher_is_better, seed, None)
}

/// [`analyze`] for an experiment that ran under `budget`.
pub fn analyze_within(
    inputs: &[MetricInput],
    names: [&str; 2],
    margin: f64,
    alpha: f64,
    higher_is_better: bool,
    seed: u64,
    budget: Option<&Budget>,
) -> Vec<MetricReport> {
    let mut reports: Vec<MetricReport> = inputs
        .iter()
        .map(|input| {
            let mut report = analyze_one(input, names, margin, alpha, higher_is_better, seed);
            report.causes = super::causes::causes(input, margin, higher_is_better, budget);
            report.hint = hint::compare(
                &report.causes,
                names,
                margin,
                &report.name,
                budget.is_some_and(|b| b.pinned),
            );
            report
        })
        .collect();
    let welch_p: Vec<f64> = reports
        .iter()
        .map(|r| r.welch.as_ref().map_or(1.0, |w| w.p))
        .collect();
    let mw_p: Vec<f64> = reports
        .iter()
        .map(|r| r.mann_whitney.as_ref().map_or(1.0, |m| m.p))
        .collect();
    for (i, (w, m)) in holm(&welch_p).into_iter().zip(holm(&mw_p)).enumerate() {
        reports[i].welch_p_holm = reports[i].welch.as_ref().map(|_| w);
        reports[i].mann_whitney_p_holm = reports[i].mann_whitney.as_ref().map(|_| m);
    }
    reports
}

fn analyze_one(
    input: &MetricInput,
    names: [&str; 2],
    margin: f64,
    alpha: f64,
    higher_is_better: bool,
    seed: u64,
) -> MetricReport {
    let look = &input.look;
    let (a, b) = (input.a, input.b);
    MetricReport {
        name: input.name.to_string(),
        unit: input.unit,
        higher_is_better,
        spawn_corrected: input.spawn_corrected,
        a: summarize(a),
        b: summarize(b),
        verdict: look.verdict,
        ratio: look.ratio,
        ci_low: look.low,
        ci_high: look.high,
        ci_level: 1.0 - alpha,
        look_alpha: look.alpha,
        looks: input.looks,
        sentence: sentence(input.name, names, look, margin, higher_is_better),
        causes: Vec::new(),
        hint: None,
        bootstrap_ratio_of_medians: bootstrap::ratio_of_medians(
            a,
            b,
            0.95,
            BOOTSTRAP_RESAMPLES,
            seed,
            BootstrapMethod::Bca,
        ),
        hodges_lehmann_shift: hodges_lehmann(a, b, 0.95),
        cliffs_delta: cliffs_delta(a, b),
        welch: welch(a, b),
        mann_whitney: mann_whitney(a, b),
        welch_p_holm: None,
        mann_whitney_p_holm: None,
    }
}

/// "B is 1.97× slower than A": the verdict sentence with its numbers.
pub fn sentence(
    metric: &str,
    [a, b]: [&str; 2],
    look: &Look,
    margin: f64,
    higher_is_better: bool,
) -> String {
    if look.n_a == 0 || look.n_b == 0 {
        return format!(
            "{a} vs {b} on {metric} is not decided: no measured runs ({} + {})",
            look.n_a, look.n_b
        );
    }
    let ci = format!(
        "ratio {} [{}, {}]",
        format::ratio(look.ratio),
        format::ratio(look.low),
        format::ratio(look.high)
    );
    let change = describe_change(look.ratio, higher_is_better);
    let margin_pct = format!("±{}%", format::trimmed(margin * 100.0));
    match look.verdict {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn look(ratio: f64, low: f64, high: f64, verdict: Verdict) -> Look {
        Look {
            look: 3,
            n_a: 20,
            n_b: 20,
            alpha: 0.004,
            ratio,
            low,
            high,
            verdict,
        }
    }

    #[test]
    fn sentences_state_direction_and_size() {
        let s = sentence(
            "wall",
            ["A", "B"],
            &look(1.97, 1.95, 1.99, Verdict::Slower),
            0.01,
            false,
        );
        assert_eq!(
            s,
            "B is 1.97× slower than A on wall: ratio 1.970 [1.950, 1.990]"
        );
        let s = sentence(
            "wall",
            ["A", "B"],
            &look(0.952, 0.94, 0.96, Verdict::Faster),
            0.01,
            false,
        );
        assert!(s.starts_with("B is 5.0% faster than A"), "{s}");
        let s = sentence(
            "ops",
            ["A", "B"],
            &look(1.05, 1.04, 1.06, Verdict::Faster),
            0.01,
            true,
        );
        assert!(s.starts_with("B is 5.0% faster"), "{s}");
        let s = sentence(
            "wall",
            ["A", "B"],
            &look(1.0, 0.995, 1.004, Verdict::Same),
            0.01,
            false,
        );
        assert!(s.contains("same on wall within ±1%"), "{s}");
    }

    #[test]
    fn no_runs_on_a_side_is_said_not_printed_as_numbers() {
        let mut l = look(f64::NAN, f64::NAN, f64::NAN, Verdict::Unknown);
        l.n_a = 0;
        l.n_b = 0;
        let s = sentence("wall", ["A", "B"], &l, 0.01, false);
        assert_eq!(s, "A vs B on wall is not decided: no measured runs (0 + 0)");
        assert_eq!(format::ratio(f64::NAN), "n/a");
    }
}
