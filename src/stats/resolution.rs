//! The printing resolution of measured values, and the least half-width an
//! interval of a ratio of such values can honestly have.
//!
//! A benchmark that prints whole units (integer ns, whole ms) rounds every
//! value to a step q. When one step is 1–2% of the value and the run noise is
//! smaller than a step, every run of a build prints the same number: the
//! rounding error is then systematic (the same in every run and every
//! layout), no sample variance can see it, and an interval computed from the
//! spread alone has zero width around a ratio that is off by up to a step.
//! The honest bound is the rounding itself: each of two printed values lies
//! within q/2 of the value before rounding, so log(B/A) lies within
//! q/(2·A) + q/(2·B) of the printed ratio's log. docs/methodology.md §10.

/// The largest power of ten q such that every value is a whole multiple of q
/// (to a millionth of a step), capped so that q keeps at least two significant
/// digits of the smallest value (all values of 100 print as "100", which says
/// nothing of a step of 100). `None` when the values are not on any decimal
/// grid down to 1e-12, or any value is not finite and positive.
pub fn decimal_step(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let smallest = values.iter().copied().fold(f64::INFINITY, f64::min);
    let cap = smallest.log10().floor() as i32 - 1;
    (-12..=cap.min(12)).rev().map(|k| 10f64.powi(k)).find(|&q| {
        values.iter().all(|&v| {
            // A millionth of a step, or the rounding error of the
            // division itself for very many steps.
            let steps = v / q;
            (steps - steps.round()).abs() <= 1e-6_f64.max(steps.abs() * 4e-16)
        })
    })
}

/// The half-width on the log scale that rounding to step `q` alone leaves in
/// the ratio of two values near `a` and `b`: q/(2a) + q/(2b). Zero without a
/// step or with non-positive values.
pub fn rounding_half_width(q: Option<f64>, a: f64, b: f64) -> f64 {
    match q {
        Some(q) if a > 0.0 && b > 0.0 && q.is_finite() => q / (2.0 * a) + q / (2.0 * b),
        _ => 0.0,
    }
}

/// The rounding half-width worth stating: below 1e-4 (a step of a hundredth
/// of a percent) it changes no verdict and is left out.
pub fn material(half_width: f64) -> Option<f64> {
    (half_width.is_finite() && half_width >= 1e-4).then_some(half_width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_units_and_decimal_steps_are_found() {
        assert_eq!(decimal_step(&[61.0, 62.0, 60.0]), Some(1.0));
        assert_eq!(decimal_step(&[1.5, 1.7, 2.25]), Some(0.01));
        // 3.3 is 32.99999999999999 steps of 0.1 in binary floating point.
        assert_eq!(decimal_step(&[3.3, 1.1, 7.7]), Some(0.1));
        // One significant digit is read as two: 0.3 could be 0.30.
        assert_eq!(decimal_step(&[0.3, 0.5, 0.7]), Some(0.01));
        assert_eq!(decimal_step(&[1200.0, 1300.0, 1500.0]), Some(100.0));
        // Two significant digits at least: identical round numbers say nothing
        // of a step as large as themselves.
        assert_eq!(decimal_step(&[100.0, 100.0]), Some(10.0));
        assert_eq!(decimal_step(&[60.0, 60.0]), Some(1.0));
        // Full-precision floats are on no grid.
        assert_eq!(decimal_step(&[1.234_567_890_123_4, 2.0]), None);
        assert_eq!(decimal_step(&[]), None);
        assert_eq!(decimal_step(&[1.0, 0.0]), None);
        assert_eq!(decimal_step(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn the_rounding_bound_is_half_a_step_on_each_side() {
        // 60 and 62 printed in whole units: log(62/60) is within 1/120 + 1/124.
        let h = rounding_half_width(Some(1.0), 60.0, 62.0);
        assert!((h - (1.0 / 120.0 + 1.0 / 124.0)).abs() < 1e-15);
        assert_eq!(rounding_half_width(None, 60.0, 62.0), 0.0);
        assert_eq!(rounding_half_width(Some(1.0), 0.0, 62.0), 0.0);
        assert_eq!(material(1e-6), None);
        assert_eq!(material(0.01), Some(0.01));
    }
}
