//! The words of the notes on the metrics themselves, for `compare`, `layout`
//! and `analyze`: metrics `--higher-is-better` left alone, values ≤ 0, and
//! which ratio the table's B/A is.

use crate::compare::CompareReport;
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
