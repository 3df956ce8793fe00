//! Welch's unequal-variance t-test (Welch 1947) with the Welch–Satterthwaite
//! degrees of freedom and an exact two-sided p-value from the Student t
//! distribution.
//!
//! Why Welch and not Student: two builds rarely have the same run-to-run
//! variance, and the pooled test is wrong when they differ. Why the exact t
//! p-value: the classic mistake the design calls out is reading the critical
//! value for df = n − 1 while the Welch df is fractional; we never round df.

use super::descriptive::{mean, sample_variance};
use super::distributions::student_t_two_sided_p;
use serde::Serialize;

/// Result of Welch's test of B against A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Welch {
    /// t statistic, (mean(b) − mean(a)) / sqrt(var(a)/n_a + var(b)/n_b);
    /// positive when B's mean is larger.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom (fractional).
    pub df: f64,
    /// Two-sided p-value, exact from the Student t distribution with `df`.
    pub p: f64,
    /// mean(b) − mean(a).
    pub mean_diff: f64,
}

/// Welch's t-test of `b` (candidate) against `a` (baseline).
///
/// `None` when either sample has fewer than 2 values (no variance estimate),
/// when both variances are 0 (the statistic is 0/0 or ±inf, and no p-value
/// is honest), or when any value is not finite.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    if a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (n_a, n_b) = (a.len() as f64, b.len() as f64);
    let (mean_a, mean_b) = (mean(a), mean(b));
    let (var_a, var_b) = (sample_variance(a, mean_a), sample_variance(b, mean_b));
    if var_a == 0.0 && var_b == 0.0 {
        return None;
    }
    let (se2_a, se2_b) = (var_a / n_a, var_b / n_b);
    let standard_error = (se2_a + se2_b).sqrt();
    let mean_diff = mean_b - mean_a;
    let t = mean_diff / standard_error;
    let df = (se2_a + se2_b).powi(2) / (se2_a.powi(2) / (n_a - 1.0) + se2_b.powi(2) / (n_b - 1.0));
    let p = student_t_two_sided_p(t, df);
    if !t.is_finite() || !df.is_finite() || p.is_nan() {
        return None;
    }
    Some(Welch {
        t,
        df,
        p,
        mean_diff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, relative: f64) -> bool {
        (a - b).abs() <= relative * b.abs()
    }

    #[test]
    fn wikipedia_example_1_cross_checked_with_scipy() {
        // Wikipedia, "Welch's t-test", section Examples, example 1 (A1, A2,
        // n = 15 each): Welch t = -2.46, df = 24.99, p = 0.021 (for A1 - A2).
        // scipy 1.17.1: ttest_ind(A1, A2, equal_var=False) gives
        // statistic = -2.455356398286006, df = 24.988529290231416,
        // pvalue = 0.021378001462866992.
        // Here a = A1 (baseline) and b = A2, so t = mean(b) - mean(a) > 0.
        let a1 = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let a2 = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = welch(&a1, &a2).unwrap();
        assert!(close(w.t, 2.455356398286006, 1e-10), "t = {}", w.t);
        assert!(close(w.df, 24.988529290231416, 1e-10), "df = {}", w.df);
        assert!(close(w.p, 0.021378001462866992, 1e-8), "p = {}", w.p);
        // mean(A2) - mean(A1) from the hand sums 344.8 and 312.3.
        assert!(close(w.mean_diff, (344.8 - 312.3) / 15.0, 1e-10));
        // Swapping the samples flips the sign only.
        let swapped = welch(&a2, &a1).unwrap();
        assert!(close(swapped.t, -w.t, 1e-12));
        assert!(close(swapped.p, w.p, 1e-12));
    }

    #[test]
    fn unequal_sizes_and_variances_against_scipy() {
        // scipy 1.17.1: ttest_ind([1, 2, 3, 4], [2, 4, 6, 8, 10, 12],
        // equal_var=False) -> statistic = -2.713602101199873 (x - y),
        // df = 6.59467097295115, pvalue = 0.03182444378084147
        let w = welch(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 6.0, 8.0, 10.0, 12.0]).unwrap();
        assert!(close(w.t, 2.713602101199873, 1e-10));
        assert!(close(w.df, 6.59467097295115, 1e-10));
        assert!(close(w.p, 0.03182444378084147, 1e-8));
    }

    #[test]
    fn edge_cases_return_none_or_valid_numbers() {
        assert!(welch(&[], &[1.0, 2.0]).is_none());
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
        assert!(welch(&[3.0, 3.0], &[3.0, 3.0, 3.0]).is_none());
        assert!(welch(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
        // One constant side is fine: the other still has a variance.
        // scipy 1.17.1: ttest_ind([0, 0, 0], [1, 2, 3], equal_var=False)
        // -> statistic = -3.464101615137755, df = 2.0, pvalue = 0.07417990022744854
        let w = welch(&[0.0, 0.0, 0.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!(close(w.t, 3.464101615137755, 1e-10));
        assert!(close(w.df, 2.0, 1e-12));
        assert!(close(w.p, 0.07417990022744854, 1e-8));
        // Identical samples: t = 0, p = 1.
        let same = welch(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(same.t, 0.0);
        assert!((same.p - 1.0).abs() < 1e-12);
    }
}
