//! Multiple-comparison correction for experiments that report several
//! metrics at once (e.g. one per benchmark in a Google Benchmark file).
//!
//! With ten metrics and no correction, one of them will look "significant"
//! at p < 0.05 by luck alone about 40% of the time. Holm's step-down method
//! (Holm 1979) controls the family-wise error rate like Bonferroni but is
//! uniformly more powerful, and needs no assumption about how the metrics
//! depend on each other.

/// Holm–Bonferroni adjusted p-values, in the order of the input.
///
/// Same as R's `p.adjust(p, "holm")`: sort ascending, multiply the i-th
/// smallest (1-based) by (m − i + 1), take the running maximum so the
/// adjusted values are monotone in the raw ones, cap at 1. NaN entries stay
/// NaN and do not count towards m (R's default `n = sum(!is.na(p))`).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    // Stable sort, so tied p-values keep their input order exactly as R's
    // `order()` does (the running maximum then gives them equal values).
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let m = order.len();
    let mut adjusted = vec![f64::NAN; p.len()];
    let mut running_max = 0.0f64;
    for (position, &index) in order.iter().enumerate() {
        let scaled = ((m - position) as f64 * p[index]).min(1.0);
        running_max = running_max.max(scaled);
        adjusted[index] = running_max;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_all_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn matches_r_p_adjust_holm() {
        // R's definition (?p.adjust, source of stats::p.adjust):
        //   i <- seq_len(n); o <- order(p); ro <- order(o)
        //   pmin(1, cummax((n - i + 1L) * p[o]))[ro]
        // p = c(0.01, 0.04, 0.03, 0.005): sorted 0.005, 0.01, 0.03, 0.04
        // scaled 4*0.005 = 0.02, 3*0.01 = 0.03, 2*0.03 = 0.06, 1*0.04 = 0.04
        // cummax 0.02, 0.03, 0.06, 0.06 -> back in input order:
        // c(0.03, 0.06, 0.06, 0.02)
        assert_all_close(&holm(&[0.01, 0.04, 0.03, 0.005]), &[0.03, 0.06, 0.06, 0.02]);
        // Capping at 1: p.adjust(c(0.5, 0.6, 0.01), "holm") = c(1, 1, 0.03)
        // (3*0.01 = 0.03, 2*0.5 = 1.0, max(1, 0.6) -> 1).
        assert_all_close(&holm(&[0.5, 0.6, 0.01]), &[1.0, 1.0, 0.03]);
        // Ties: p.adjust(c(0.02, 0.02, 0.04), "holm") = c(0.06, 0.06, 0.06)
        // (3*0.02 = 0.06, cummax(0.06, 2*0.02) = 0.06, cummax(0.06, 0.04)).
        assert_all_close(&holm(&[0.02, 0.02, 0.04]), &[0.06, 0.06, 0.06]);
    }

    #[test]
    fn edge_cases() {
        assert!(holm(&[]).is_empty());
        assert_all_close(&holm(&[0.2]), &[0.2]);
        // p.adjust(c(NA, 0.01, 0.02), "holm") = c(NA, 0.02, 0.02): n = 2.
        let with_nan = holm(&[f64::NAN, 0.01, 0.02]);
        assert!(with_nan[0].is_nan());
        assert_all_close(&with_nan[1..], &[0.02, 0.02]);
    }
}
