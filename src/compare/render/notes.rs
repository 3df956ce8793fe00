//! The words of the notes on the metrics themselves, for `compare`, `layout`
//! and `analyze`: metrics `--higher-is-better` left alone, values ≤ 0, and
//! which ratio the table's B/A is, and which baseline side A is and how it
//! was measured (`--baseline`).

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
