//! The verdict vocabulary (docs/architecture.md §2) and the one rule that turns a
//! confidence interval of the ratio B/A into a verdict.
//!
//! A verdict is never stronger than its interval: FASTER or SLOWER needs the
//! whole interval beyond the equivalence margin, SAME needs the whole
//! interval inside it, and everything else is UNKNOWN.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The outcome of comparing candidate B against baseline A on one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// B is faster (better) than A by more than the margin.
    Faster,
    /// B is slower (worse) than A by more than the margin.
    Slower,
    /// B and A are within the margin of each other.
    Same,
    /// `layout` only: the default-layout difference does not survive layout
    /// control. [`decide`] never returns it.
    Artifact,
    /// Not enough evidence either way.
    Unknown,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Faster => "FASTER",
            Verdict::Slower => "SLOWER",
            Verdict::Same => "SAME",
            Verdict::Artifact => "ARTIFACT",
            Verdict::Unknown => "UNKNOWN",
        })
    }
}

impl Verdict {
    /// Every verdict, in the order the docs list them.
    pub const ALL: [Verdict; 5] = [
        Verdict::Faster,
        Verdict::Slower,
        Verdict::Same,
        Verdict::Unknown,
        Verdict::Artifact,
    ];
}

impl std::str::FromStr for Verdict {
    type Err = String;

    /// A verdict's name, in any case (`slower`, `SLOWER`).
    fn from_str(text: &str) -> Result<Verdict, String> {
        Verdict::ALL
            .into_iter()
            .find(|v| v.to_string().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| format!("unknown verdict {text:?}"))
    }
}

/// Verdict from a confidence interval [low, high] of the ratio B/A and the
/// equivalence margin (0.01 = ±1%).
///
/// For a lower-is-better metric (time): high < 1 − margin → FASTER;
/// low > 1 + margin → SLOWER; 1 − margin ≤ low and high ≤ 1 + margin → SAME;
/// otherwise UNKNOWN. `higher_is_better` (throughput) swaps FASTER and
/// SLOWER. Any non-finite bound, low > high, or a negative or NaN margin is
/// UNKNOWN: an interval that reaches infinity has not decided anything.
pub fn decide(low: f64, high: f64, margin: f64, higher_is_better: bool) -> Verdict {
    if !low.is_finite() || !high.is_finite() || low > high {
        return Verdict::Unknown;
    }
    if !margin.is_finite() || margin < 0.0 {
        return Verdict::Unknown;
    }
    let (lower_edge, upper_edge) = (1.0 - margin, 1.0 + margin);
    let (b_smaller, b_larger) = if higher_is_better {
        (Verdict::Slower, Verdict::Faster)
    } else {
        (Verdict::Faster, Verdict::Slower)
    };
    if high < lower_edge {
        b_smaller
    } else if low > upper_edge {
        b_larger
    } else if lower_edge <= low && high <= upper_edge {
        Verdict::Same
    } else {
        Verdict::Unknown
    }
}

/// The ARTIFACT rule (docs/methodology.md §10), on the default-layout ratio and the
/// layout-controlled ratio (both B/A) and their verdicts. Returns the share of
/// the default-layout difference that disappears under layout control (on the
/// log scale, clamped to [0, 1]) when the verdict is ARTIFACT, else `None`.
///
/// ARTIFACT needs a significant default-layout difference (FASTER or SLOWER)
/// and an across-layouts verdict that decided nothing real: SAME, or UNKNOWN
/// with an estimate of the opposite sign or less than half the default's size
/// on the log scale, and an interval that excludes the default-layout
/// estimate (the default's difference does not survive layout control: the
/// data say so, not only the point estimate). When the across-layouts
/// verdict is itself FASTER or SLOWER, that is the verdict, whatever the
/// default layout showed: a real 5% slowdown that the default layout
/// exaggerates to 17% is SLOWER, not ARTIFACT, so `--fail-on slower` catches
/// it (the report names the default layout's exaggeration as a cause).
///
/// `controlled` is (estimate, low, high).
pub fn artifact(
    default_ratio: Option<f64>,
    default_verdict: Verdict,
    controlled: Option<(f64, f64, f64)>,
    controlled_verdict: Verdict,
) -> Option<f64> {
    let (d, (c, low, high)) = (default_ratio?, controlled?);
    if !matches!(default_verdict, Verdict::Faster | Verdict::Slower) {
        return None;
    }
    if matches!(controlled_verdict, Verdict::Faster | Verdict::Slower) {
        return None;
    }
    if !(d > 0.0 && c > 0.0 && d.is_finite() && c.is_finite()) {
        return None;
    }
    if low <= d && d <= high {
        return None;
    }
    let (ld, lc) = (d.ln(), c.ln());
    if ld == 0.0 {
        return None;
    }
    let same = controlled_verdict == Verdict::Same;
    let opposite = ld * lc <= 0.0;
    let less_than_half = lc.abs() < 0.5 * ld.abs();
    (same || opposite || less_than_half).then(|| (1.0 - lc / ld).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_is_better() {
        // Cases derived by hand from the rule in docs/architecture.md §2, margin 1%.
        assert_eq!(decide(0.90, 0.98, 0.01, false), Verdict::Faster);
        assert_eq!(decide(1.02, 1.10, 0.01, false), Verdict::Slower);
        assert_eq!(decide(0.995, 1.005, 0.01, false), Verdict::Same);
        assert_eq!(decide(0.99, 1.01, 0.01, false), Verdict::Same);
        // Excludes 1 but lies partly inside the margin: not strong enough.
        assert_eq!(decide(0.985, 0.995, 0.01, false), Verdict::Unknown);
        assert_eq!(decide(0.95, 1.05, 0.01, false), Verdict::Unknown);
        // Margin 0: any interval excluding 1 decides.
        assert_eq!(decide(0.985, 0.995, 0.0, false), Verdict::Faster);
        assert_eq!(decide(1.0, 1.0, 0.0, false), Verdict::Same);
    }

    #[test]
    fn higher_is_better_swaps() {
        assert_eq!(decide(0.90, 0.98, 0.01, true), Verdict::Slower);
        assert_eq!(decide(1.02, 1.10, 0.01, true), Verdict::Faster);
        assert_eq!(decide(0.995, 1.005, 0.01, true), Verdict::Same);
    }

    #[test]
    fn non_finite_is_unknown() {
        assert_eq!(decide(f64::NAN, 0.9, 0.01, false), Verdict::Unknown);
        assert_eq!(
            decide(f64::NEG_INFINITY, 0.9, 0.01, false),
            Verdict::Unknown
        );
        assert_eq!(decide(1.1, f64::INFINITY, 0.01, false), Verdict::Unknown);
        assert_eq!(decide(1.1, 1.0, 0.01, false), Verdict::Unknown);
        assert_eq!(decide(0.9, 0.95, f64::NAN, false), Verdict::Unknown);
        assert_eq!(decide(0.9, 0.95, -0.1, false), Verdict::Unknown);
    }

    /// A controlled estimate with a ±1% interval.
    fn c(x: f64) -> Option<(f64, f64, f64)> {
        Some((x, x * 0.99, x * 1.01))
    }

    #[test]
    fn a_decided_effect_across_layouts_is_never_an_artifact() {
        // Issue 22: a real +5% whose default layout shows +17%.
        let r = artifact(Some(1.17), Verdict::Slower, c(1.049), Verdict::Slower);
        assert_eq!(r, None);
        // The same default with nothing real across layouts: 1 − ln 1.004 / ln 1.17.
        let r = artifact(Some(1.17), Verdict::Slower, c(1.004), Verdict::Same).unwrap();
        assert!((r - (1.0 - 1.004f64.ln() / 1.17f64.ln())).abs() < 1e-12);
        // Undecided and under half the size, or reversed: ARTIFACT.
        assert!(artifact(Some(1.17), Verdict::Slower, c(1.05), Verdict::Unknown).is_some());
        assert_eq!(
            artifact(Some(1.17), Verdict::Slower, c(0.97), Verdict::Unknown),
            Some(1.0)
        );
        // A decided reversal is the verdict in its own right.
        assert_eq!(
            artifact(Some(0.80), Verdict::Faster, c(1.08), Verdict::Slower),
            None
        );
        // Undecided, under half the size, but an interval wide enough to hold
        // the default's estimate: not shown to be layout.
        assert_eq!(
            artifact(
                Some(1.17),
                Verdict::Slower,
                Some((1.05, 0.95, 1.18)),
                Verdict::Unknown
            ),
            None
        );
        // Undecided but more than half the size: not ARTIFACT.
        assert_eq!(
            artifact(Some(1.17), Verdict::Slower, c(1.12), Verdict::Unknown),
            None
        );
        // Nothing significant at the default layout: no ARTIFACT.
        assert_eq!(
            artifact(Some(1.17), Verdict::Unknown, c(1.0), Verdict::Same),
            None
        );
    }

    #[test]
    fn display_names() {
        assert_eq!(Verdict::Faster.to_string(), "FASTER");
        assert_eq!(Verdict::Artifact.to_string(), "ARTIFACT");
        assert_eq!(format!("{}", Verdict::Unknown), "UNKNOWN");
    }
}
