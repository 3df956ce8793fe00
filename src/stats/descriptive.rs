//! Descriptive statistics of one sample: the numbers a report prints next to
//! every verdict (n, location, spread, quartiles) and the Tukey outlier counts.
//!
//! Outliers are only *counted* here. Nothing in `stats` ever drops a value:
//! a slow run is evidence (a page fault, a migration, a layout effect), and
//! silently trimming it would make a noisy comparison look clean.

use serde::Serialize;

/// Everything the report says about one sample of one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (divisor n − 1); 0 when n == 1.
    pub stddev: f64,
    /// Coefficient of variation, stddev / mean. 0 when stddev is 0; NaN when
    /// the mean is 0 but the values are not all equal (undefined, not zero).
    pub cv: f64,
    /// Median absolute deviation from the median, unscaled (no 1.4826 factor),
    /// so it reads in the metric's own unit.
    pub mad: f64,
    /// First quartile, Hyndman–Fan type 7.
    pub q1: f64,
    /// Third quartile, Hyndman–Fan type 7.
    pub q3: f64,
    /// Values below q1 − 1.5·IQR (Tukey's inner fence), severe ones included.
    pub outliers_low: usize,
    /// Values above q3 + 1.5·IQR (Tukey's inner fence), severe ones included.
    pub outliers_high: usize,
    /// Values beyond Tukey's outer fences (3·IQR), on either side.
    pub outliers_severe: usize,
}

/// Summarises a sample. Returns `None` for an empty sample or one holding a
/// NaN or an infinity, because every field would then be meaningless.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    let mean = mean(&sorted);
    let stddev = sample_stddev(&sorted, mean);
    let median = quantile_sorted(&sorted, 0.5);
    let q1 = quantile_sorted(&sorted, 0.25);
    let q3 = quantile_sorted(&sorted, 0.75);
    let iqr = q3 - q1;
    let (inner_low, inner_high) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    let (outer_low, outer_high) = (q1 - 3.0 * iqr, q3 + 3.0 * iqr);
    let deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
    let cv = if stddev == 0.0 {
        0.0
    } else if mean == 0.0 {
        f64::NAN
    } else {
        stddev / mean
    };
    Some(Summary {
        n,
        min: sorted[0],
        max: sorted[n - 1],
        median,
        mean,
        stddev,
        cv,
        mad: median_of(deviations),
        q1,
        q3,
        outliers_low: sorted.iter().filter(|&&x| x < inner_low).count(),
        outliers_high: sorted.iter().filter(|&&x| x > inner_high).count(),
        outliers_severe: sorted
            .iter()
            .filter(|&&x| x < outer_low || x > outer_high)
            .count(),
    })
}

/// Median of an unsorted slice in O(n) (a copy plus `select_nth_unstable`).
/// NaN for an empty slice. NaNs in the input sort above +inf (IEEE total
/// order), so they are never silently ignored but never cause a panic.
pub fn median(xs: &[f64]) -> f64 {
    median_of(xs.to_vec())
}

/// Median that consumes its buffer, so callers that already own a scratch
/// vector (bootstrap, Hodges–Lehmann) avoid another allocation.
pub(super) fn median_of(mut values: Vec<f64>) -> f64 {
    median_in_place(&mut values)
}

/// Median computed by partially reordering `values`; the slice is left in an
/// unspecified order. NaN when empty.
pub(super) fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let upper_index = n / 2;
    let (below, upper, _) = values.select_nth_unstable_by(upper_index, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return upper;
    }
    // For even n the lower middle value is the largest element left of the
    // selected one; averaging the two is what type 7 gives at p = 0.5.
    let lower = below
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(upper);
    midpoint(lower, upper)
}

/// Sample quantile of already sorted data, Hyndman & Fan (1996) type 7: the
/// default of R's `quantile`, numpy's `percentile` and Excel's `PERCENTILE`,
/// so our quartiles match what users get when they check by hand.
///
/// Returns NaN when `sorted` is empty or `p` is outside [0, 1] (or NaN).
/// Interpolating between an infinite and a finite neighbour yields the
/// infinity rather than NaN, which the bootstrap relies on.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    let position = (n - 1) as f64 * p;
    let below = position.floor() as usize;
    let above = (below + 1).min(n - 1);
    let fraction = position - below as f64;
    interpolate(sorted[below], sorted[above], fraction)
}

/// Linear interpolation that never turns `0 · inf` into NaN.
fn interpolate(low: f64, high: f64, fraction: f64) -> f64 {
    if fraction == 0.0 || low == high {
        low
    } else if fraction == 1.0 {
        high
    } else {
        low + fraction * (high - low)
    }
}

/// Average of two numbers without overflowing to infinity for huge inputs.
pub(super) fn midpoint(a: f64, b: f64) -> f64 {
    if a == b {
        a
    } else {
        a / 2.0 + b / 2.0
    }
}

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance with divisor n − 1 (two-pass, which is accurate enough for
/// run times and far simpler than Welford here). 0 when n < 2.
pub fn sample_variance(xs: &[f64], mean: f64) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let squares: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    squares / (xs.len() - 1) as f64
}

fn sample_stddev(xs: &[f64], mean: f64) -> f64 {
    sample_variance(xs, mean).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1.0)
    }

    #[test]
    fn quantile_type7_matches_numpy_percentile() {
        // Reference: numpy 2.4.6, np.percentile(x, [0, 10, 25, 50, 75, 90, 100])
        // with the default method="linear" (= Hyndman–Fan type 7), for
        // x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15]:
        // [1.0, 2.0, 3.5, 6.0, 8.5, 10.0, 15.0]
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0];
        let expected = [
            (0.0, 1.0),
            (0.10, 2.0),
            (0.25, 3.5),
            (0.50, 6.0),
            (0.75, 8.5),
            (0.90, 10.0),
            (1.0, 15.0),
        ];
        for (p, want) in expected {
            assert!(close(quantile_sorted(&sorted, p), want, 1e-12), "p={p}");
        }
        // numpy 2.4.6: np.percentile([3.0, 1.0, 4.0, 1.5], [25, 33, 90])
        // -> [1.375, 1.495, 3.7]
        let sorted = [1.0, 1.5, 3.0, 4.0];
        assert!(close(quantile_sorted(&sorted, 0.25), 1.375, 1e-12));
        assert!(close(quantile_sorted(&sorted, 0.33), 1.495, 1e-12));
        assert!(close(quantile_sorted(&sorted, 0.90), 3.7, 1e-12));
    }

    #[test]
    fn quantile_rejects_bad_input_without_panicking() {
        assert!(quantile_sorted(&[], 0.5).is_nan());
        assert!(quantile_sorted(&[1.0], f64::NAN).is_nan());
        assert!(quantile_sorted(&[1.0], 1.5).is_nan());
        assert_eq!(quantile_sorted(&[7.0], 0.3), 7.0);
        // Interpolating towards +inf gives +inf, not NaN.
        assert_eq!(quantile_sorted(&[1.0, f64::INFINITY], 0.5), f64::INFINITY);
        assert_eq!(quantile_sorted(&[1.0, f64::INFINITY], 0.0), 1.0);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        // Hand computed.
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(median(&[5.0]), 5.0);
    }

    #[test]
    fn summary_and_tukey_outliers_on_hand_example() {
        // Hand example: x = 1..=10 plus 20 and 40, and a low value -12.
        // sorted: [-12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 40], n = 13
        // type 7: q1 = x[3] = 3, median = x[6] = 6, q3 = x[9] = 9, IQR = 6
        // inner fences: 3 - 9 = -6 and 9 + 9 = 18 -> low {-12}, high {20, 40}
        // outer fences: 3 - 18 = -15 and 9 + 18 = 27 -> severe {40}
        // mean = (55 - 12 + 60) / 13 = 103 / 13
        // |x - 6| = [18, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 14, 34] -> MAD = 3
        // numpy 2.4.6: np.std(x, ddof=1) = 11.947534881455246,
        // np.mean(x) = 7.923076923076923.
        let xs = [
            5.0, 1.0, 40.0, 2.0, 3.0, -12.0, 4.0, 6.0, 7.0, 20.0, 8.0, 9.0, 10.0,
        ];
        let s = summarize(&xs).unwrap();
        assert_eq!(s.n, 13);
        assert_eq!(s.min, -12.0);
        assert_eq!(s.max, 40.0);
        assert_eq!(s.median, 6.0);
        assert_eq!(s.q1, 3.0);
        assert_eq!(s.q3, 9.0);
        assert!(close(s.mean, 103.0 / 13.0, 1e-12));
        assert_eq!(s.mad, 3.0);
        assert_eq!(s.outliers_low, 1);
        assert_eq!(s.outliers_high, 2);
        assert_eq!(s.outliers_severe, 1);
        assert!(close(s.stddev, 11.947534881455246, 1e-12));
        assert!(close(s.cv, 11.947534881455246 / (103.0 / 13.0), 1e-12));
    }

    #[test]
    fn summary_edge_cases() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
        assert!(summarize(&[1.0, f64::INFINITY]).is_none());

        let one = summarize(&[2.5]).unwrap();
        assert_eq!(one.n, 1);
        assert_eq!(one.stddev, 0.0);
        assert_eq!(one.cv, 0.0);
        assert_eq!(one.mad, 0.0);
        assert_eq!((one.q1, one.q3), (2.5, 2.5));

        let constant = summarize(&[4.0; 7]).unwrap();
        assert_eq!(constant.stddev, 0.0);
        assert_eq!(constant.outliers_low + constant.outliers_high, 0);

        let zeros = summarize(&[0.0; 3]).unwrap();
        assert_eq!(zeros.cv, 0.0);
        let mean_zero = summarize(&[-1.0, 1.0]).unwrap();
        assert!(mean_zero.cv.is_nan());
    }
}
