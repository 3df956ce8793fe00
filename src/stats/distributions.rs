//! Thin, panic-free wrappers around the statrs distribution functions the
//! other stats modules need (standard normal and Student t).
//!
//! statrs panics on out-of-domain arguments (e.g. `inverse_cdf(1.2)` or a NaN
//! reaching the incomplete beta function). Every caller here would rather get
//! a NaN and turn it into `None`/`Unknown`, so the guards live in one place.

use statrs::distribution::{ContinuousCDF, FisherSnedecor, Normal, StudentsT};

fn standard_normal() -> Option<Normal> {
    Normal::new(0.0, 1.0).ok()
}

/// Φ(z), the standard normal CDF. NaN for NaN input.
pub(super) fn normal_cdf(z: f64) -> f64 {
    match standard_normal() {
        Some(normal) if !z.is_nan() => normal.cdf(z),
        _ => f64::NAN,
    }
}

/// 1 − Φ(z), computed directly so that small upper tails keep their precision.
pub(super) fn normal_sf(z: f64) -> f64 {
    match standard_normal() {
        Some(normal) if !z.is_nan() => normal.sf(z),
        _ => f64::NAN,
    }
}

/// Φ⁻¹(p). ±inf at p = 0 or 1, NaN outside [0, 1].
pub(super) fn normal_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    match standard_normal() {
        Some(normal) => normal.inverse_cdf(p),
        None => f64::NAN,
    }
}

/// Two-sided p-value P(|T| ≥ |t|) for Student's t with `df` degrees of
/// freedom (fractional df allowed, as Welch needs). NaN when t or df is
/// invalid.
pub(super) fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(distribution) => (2.0 * distribution.sf(t.abs())).min(1.0),
        Err(_) => f64::NAN,
    }
}

/// Upper tail P(F ≥ f) of the F distribution with (`df1`, `df2`) degrees of
/// freedom (fractional allowed). NaN when an argument is invalid.
pub(super) fn f_sf(f: f64, df1: f64, df2: f64) -> f64 {
    if f.is_nan() || df1.is_nan() || df2.is_nan() || df1 <= 0.0 || df2 <= 0.0 {
        return f64::NAN;
    }
    if f <= 0.0 {
        return 1.0;
    }
    if f.is_infinite() {
        return 0.0;
    }
    match FisherSnedecor::new(df1, df2) {
        Ok(distribution) => distribution.sf(f).clamp(0.0, 1.0),
        Err(_) => f64::NAN,
    }
}

/// The p-quantile of Student's t with `df` degrees of freedom. NaN when p is
/// outside (0, 1) or df is invalid.
pub(super) fn student_t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(distribution) => distribution.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // scipy 1.17.1: norm.ppf(0.975) = 1.959963984540054
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-12);
        // scipy 1.17.1: norm.sf(3.0) = 0.0013498980316300933; statrs 0.18's
        // erfc gives 0.0013498980315744642 (4e-11 relative), hence 1e-9.
        let tail = normal_sf(3.0);
        assert!(
            (tail - 0.0013498980316300933).abs() < 1e-9 * 0.0013498980316300933,
            "{tail}"
        );
        // scipy 1.17.1: 2 * t.sf(2.0, 10) = 0.07338803477074037
        assert!((student_t_two_sided_p(2.0, 10.0) - 0.07338803477074037).abs() < 1e-12);
        // scipy: t.ppf(0.975, 7) = 2.3646242510102993
        assert!((student_t_quantile(0.975, 7.0) - 2.3646242510102993).abs() < 1e-6);
        assert!(student_t_quantile(1.5, 7.0).is_nan());
    }

    #[test]
    fn never_panics() {
        assert!(normal_quantile(f64::NAN).is_nan());
        assert!(normal_quantile(-0.1).is_nan());
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert!(normal_cdf(f64::NAN).is_nan());
        assert!(student_t_two_sided_p(f64::NAN, 3.0).is_nan());
        assert!(student_t_two_sided_p(1.0, 0.0).is_nan());
        assert!(student_t_two_sided_p(1.0, f64::NAN).is_nan());
        assert_eq!(student_t_two_sided_p(f64::INFINITY, 3.0), 0.0);
        assert_eq!(student_t_two_sided_p(0.0, 3.0), 1.0);
    }
}
