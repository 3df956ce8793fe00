//! Planning estimates for an undecided `compare`: the interval a later look of
//! the sequential schedule would likely give if the effect and the run noise
//! stay as they are, and the first look size at which it would decide.
//!
//! These are forecasts for hints ("about 80 runs would likely decide it"),
//! never confidence statements: the verdict only ever comes from a look.
//!
//! A look's interval shrinks like 1/√n (both sides grow to n') and widens with
//! the smaller α of later looks: α_k = α/(k(k + 1)) (see `sequential`), so the
//! normal quantile z(α_k/2) grows slowly with k. Each side of the interval is
//! scaled by √(n/n') · z(α_k'/2)/z(α_k/2) around the point estimate, on the log
//! scale when the interval is positive (the Hodges–Lehmann interval of the log
//! ratio), else on the ratio scale.

use super::distributions::normal_quantile;
use super::sequential::{following_look_size, Look};
use super::verdict::{decide, Verdict};

/// The interval of the look `steps` looks after `look`, at `n_to` runs per side.
/// `None` when `look` has no finite interval or no runs.
pub fn projected_interval(look: &Look, n_to: usize, steps: usize) -> Option<(f64, f64)> {
    let n = look.n_a.min(look.n_b);
    let (low, high, ratio) = (look.low, look.high, look.ratio);
    if n == 0 || n_to == 0 || !(low.is_finite() && high.is_finite() && ratio.is_finite()) {
        return None;
    }
    let alpha_to = if look.look == 0 {
        look.alpha
    } else {
        let (k, k_to) = (look.look as f64, (look.look + steps) as f64);
        look.alpha * k * (k + 1.0) / (k_to * (k_to + 1.0))
    };
    let z = |alpha: f64| normal_quantile(1.0 - alpha / 2.0);
    let scale = (n as f64 / n_to as f64).sqrt() * z(alpha_to) / z(look.alpha);
    if !(scale.is_finite() && scale > 0.0) {
        return None;
    }
    if low > 0.0 && ratio > 0.0 {
        let centre = ratio.ln();
        Some((
            (centre - (centre - low.ln()) * scale).exp(),
            (centre + (high.ln() - centre) * scale).exp(),
        ))
    } else {
        Some((
            ratio - (ratio - low) * scale,
            ratio + (high - ratio) * scale,
        ))
    }
}

/// The first look size of the schedule after `look` whose projected interval
/// decides under `margin`, searching up to `max_runs` runs per side.
pub fn runs_to_decide(
    look: &Look,
    margin: f64,
    higher_is_better: bool,
    max_runs: usize,
) -> Option<usize> {
    let mut size = look.n_a.min(look.n_b);
    let mut steps = 0;
    while size < max_runs {
        size = following_look_size(size).min(max_runs);
        steps += 1;
        let (low, high) = projected_interval(look, size, steps)?;
        if decide(low, high, margin, higher_is_better) != Verdict::Unknown {
            return Some(size);
        }
    }
    None
}

/// How many looks of the schedule lie after a look at `from` runs per side up
/// to and including `to` (at least 1 when `to` > `from`: the final evaluation
/// spends the next α even off the schedule).
pub fn looks_between(from: usize, to: usize) -> usize {
    let (mut size, mut steps) = (from, 0);
    while size < to {
        size = following_look_size(size);
        steps += 1;
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(k: usize, n: usize, ratio: f64, low: f64, high: f64) -> Look {
        Look {
            look: k,
            n_a: n,
            n_b: n,
            alpha: 0.05 / (k.max(1) * (k.max(1) + 1)) as f64,
            ratio,
            low,
            high,
            verdict: decide(low, high, 0.01, false),
        }
    }

    #[test]
    fn a_standalone_interval_shrinks_like_one_over_root_n() {
        let l = look(0, 10, 1.0, (-0.04f64).exp(), 0.04f64.exp());
        let (low, high) = projected_interval(&l, 40, 3).unwrap();
        assert!((low.ln() + 0.02).abs() < 1e-12, "{low}");
        assert!((high.ln() - 0.02).abs() < 1e-12, "{high}");
    }

    #[test]
    fn later_looks_pay_for_their_smaller_alpha() {
        let l = look(2, 10, 1.0, (-0.04f64).exp(), 0.04f64.exp());
        let (_, high) = projected_interval(&l, 40, 3).unwrap();
        // Look 5 spends 0.05/30 against 0.05/6 at look 2: z grows from 2.64 to 3.14.
        assert!(high.ln() > 0.022 && high.ln() < 0.026, "{}", high.ln());
    }

    #[test]
    fn asymmetric_intervals_keep_their_shape() {
        let l = look(0, 16, 1.1, 1.0, 1.3);
        let (low, high) = projected_interval(&l, 64, 1).unwrap();
        assert!(((1.1f64).ln() - low.ln() - ((1.1f64).ln() - 0.0) / 2.0).abs() < 1e-12);
        assert!((high.ln() - (1.1f64).ln() - ((1.3f64).ln() - (1.1f64).ln()) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_clear_effect_is_decided_soon_and_one_on_the_margin_never() {
        // 3% slower, CI ±3% at 10 runs: the lower bound clears 1.01 by about 4x the runs.
        let l = look(2, 10, 1.03, 1.0, 1.061);
        let n = runs_to_decide(&l, 0.01, false, 1000).unwrap();
        assert!((28..=79).contains(&n), "{n}");
        // Exactly on the margin: no run count decides.
        let l = look(2, 10, 1.01, 0.98, 1.04);
        assert_eq!(runs_to_decide(&l, 0.01, false, 1000), None);
        // No interval, no forecast.
        let l = look(0, 1, f64::NAN, f64::NAN, f64::NAN);
        assert_eq!(runs_to_decide(&l, 0.01, false, 1000), None);
    }

    #[test]
    fn looks_are_counted_along_the_schedule() {
        assert_eq!(looks_between(10, 10), 0);
        assert_eq!(looks_between(10, 14), 1);
        assert_eq!(looks_between(10, 20), 2);
        assert_eq!(looks_between(10, 21), 3);
    }
}
