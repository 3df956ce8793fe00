//! Unit tests of `stats::hierarchical`.
use super::*;

/// The layout-controlled ratio alone ([`across_layouts`]).
fn layout_ratio(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    estimator: Estimator,
    confidence: f64,
    higher_is_better: bool,
) -> Option<LayoutRatio> {
    across_layouts(a, b, estimator, confidence, higher_is_better).map(|x| x.ratio)
}

fn close(x: f64, y: f64, tol: f64) -> bool {
    (x - y).abs() <= tol
}

#[test]
fn trimmed_t_matches_an_independent_computation() {
    // Worked by hand (and with a separate Python script of the textbook
    // formulas, Wilcox 2017 §4.5.3): x = 1..10 with one wild value 40.
    // n = 10, g = 2, h = 6; trimmed mean of 3..8 = 5.5; winsorized
    // sample 3,3,3,4,5,6,7,8,8,8 has mean 5.5 and variance 42.5/9 =
    // 4.7222; SE = sqrt(9 · 4.7222 / 30) = 1.19024; t(0.975, 5) =
    // 2.570582 → [2.44040, 8.55960].
    let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 40.0];
    let r = trimmed_t(&xs, 0.2, 0.95).unwrap();
    assert_eq!(r.trimmed, 2);
    assert!(close(r.trimmed_mean, 5.5, 1e-12));
    assert!(
        close(r.standard_error, 1.190_238, 1e-5),
        "{}",
        r.standard_error
    );
    assert_eq!(r.df, 5.0);
    assert!(
        close(r.low, 2.440_40, 1e-4) && close(r.high, 8.559_60, 1e-4),
        "{r:?}"
    );
}

#[test]
fn without_trimming_it_is_students_t() {
    // n = 4 → g = 0: the one-sample t interval. x = 1, 2, 3, 5: mean
    // 2.75, sd 1.70783, SE 0.853913, t(0.975, 3) = 3.182446; scipy
    // `stats.ttest_1samp([1, 2, 3, 5], 0).confidence_interval(0.95)` =
    // [0.0324691, 5.4675309].
    let r = trimmed_t(&[1.0, 2.0, 3.0, 5.0], 0.2, 0.95).unwrap();
    assert_eq!(r.trimmed, 0);
    assert!(
        close(r.low, 0.032_469_1, 1e-6) && close(r.high, 5.467_530_9, 1e-6),
        "{r:?}"
    );
}

#[test]
fn identical_variants_give_the_exact_ratio() {
    let a = vec![vec![1.0, 1.0, 1.0]; 4];
    let b = vec![vec![2.0, 2.0, 2.0]; 4];
    let r = layout_ratio(&a, &b, Estimator::Median, 0.95, false).unwrap();
    assert!((r.estimate - 2.0).abs() < 1e-12);
    // Whole numbers: the printing step is 0.1 (two significant digits of
    // 1.0), so the interval holds the rounding: ±(0.05/1 + 0.05/2).
    let h = r.resolution.unwrap().half_width;
    assert!((h - 0.075).abs() < 1e-12, "{r:?}");
    assert!((r.low - 2.0 * (-h).exp()).abs() < 1e-12, "{r:?}");
    assert_eq!(r.variants, 4);
    assert_eq!(r.log_ratio_sd, 0.0);
    // Values on no decimal grid: exact, zero width (the data do not vary).
    let a = vec![vec![1.0 / 3.0; 3]; 4];
    let b = vec![vec![2.0 / 3.0; 3]; 4];
    let r = layout_ratio(&a, &b, Estimator::Median, 0.95, false).unwrap();
    assert!(r.resolution.is_none());
    assert!((r.low - 2.0).abs() < 1e-12 && (r.high - 2.0).abs() < 1e-12);
}

#[test]
fn the_interval_is_students_t_over_the_per_variant_log_ratios() {
    // Per-variant log ratios 0.01, 0.02, 0.03, 0.05 (one run a cell,
    // A = 1/3 so no decimal step): mean 0.0275, sd 0.0170783, SE
    // 0.00853913, t(0.975, 3) = 3.182446 → [0.00032469, 0.05467531], the
    // values of `without_trimming_it_is_students_t` scaled by 1/100.
    let a: Vec<Vec<f64>> = (0..4).map(|_| vec![1.0 / 3.0]).collect();
    let b: Vec<Vec<f64>> = [0.01f64, 0.02, 0.03, 0.05]
        .iter()
        .map(|l| vec![l.exp() / 3.0])
        .collect();
    let r = layout_ratio(&a, &b, Estimator::Median, 0.95, false).unwrap();
    assert!(close(r.estimate.ln(), 0.0275, 1e-12));
    assert!(close(r.low.ln(), 0.000_324_691, 1e-8), "{r:?}");
    assert!(close(r.high.ln(), 0.054_675_309, 1e-8), "{r:?}");
    assert_eq!(r.df, 3.0);
}

#[test]
fn a_slowed_cell_is_cleaned_and_a_slow_layout_is_kept() {
    // Seven variants at +3% ± 0.1%, and variant 5 of B slowed by 40% in
    // 2 of its 3 runs (a busy machine): those runs are set aside, and
    // the ratio is the 3% of every layout.
    let a: Vec<Vec<f64>> = (0..8).map(|_| vec![1.0 / 3.0; 3]).collect();
    let cell = |i: usize| {
        let v = 1.03 * (1.0 + 0.001 * (i as f64 - 3.5) / 3.5) / 3.0;
        vec![v, v * 1.0001, v * 0.9999]
    };
    let mut b: Vec<Vec<f64>> = (0..8).map(cell).collect();
    b[5][1] *= 1.4;
    b[5][2] *= 1.4;
    let r = layout_ratio(&a, &b, Estimator::Median, 0.99, false).unwrap();
    assert_eq!(r.wild_runs, 2);
    assert!(r.low > 1.02 && r.high < 1.04, "{r:?}");
    // The same 40% in all three runs is the layout, and it is kept:
    // the mean over layouts carries 1/8 of it.
    let mut b: Vec<Vec<f64>> = (0..8).map(cell).collect();
    b[5].iter_mut().for_each(|v| *v *= 1.4);
    let r = layout_ratio(&a, &b, Estimator::Median, 0.99, false).unwrap();
    assert_eq!(r.wild_runs, 0);
    assert!(
        close(r.estimate.ln(), 1.03f64.ln() + 1.4f64.ln() / 8.0, 1e-3),
        "{r:?}"
    );
}

#[test]
fn min_takes_the_least_disturbed_run_of_the_right_end() {
    // A cost's lowest run, a throughput's highest (a busy machine only
    // lowers a throughput).
    let runs = [3.0, 1.2, 2.0, 1.1, 5.0];
    assert_eq!(Estimator::Min.of(&runs, false), 1.1);
    assert_eq!(Estimator::Min.of(&runs, true), 5.0);
    assert!(Estimator::Min.of(&[], false).is_nan());
    assert_eq!(Estimator::Median.of(&runs, true), 2.0);
}

#[test]
fn a_layout_resting_on_one_lucky_run_is_left_out_for_min() {
    // Eight layouts of identical code: every cell's runs sit on the usual
    // clock step (0.3866) or the next slower one (0.4020), except that
    // layout 4 of B caught one run a step faster (0.3723, as measured in
    // the busy demo) and layout 6 of A did too. Taking those runs, two
    // layouts stand out by 3.8% and the interval cannot say SAME at ±1%;
    // a second run would not confirm them, so both layouts are left out.
    let cell = |lucky: bool| {
        let mut runs = vec![0.3866, 0.3866, 0.4020, 0.4020, 0.3866, 0.4020];
        if lucky {
            runs[2] = 0.3723;
        }
        runs
    };
    let a: Vec<Vec<f64>> = (0..8).map(|i| cell(i == 6)).collect();
    let b: Vec<Vec<f64>> = (0..8).map(|i| cell(i == 4)).collect();
    let r = layout_ratio(&a, &b, Estimator::Min, 0.99, false).unwrap();
    assert_eq!((r.variants, r.unconfirmed), (6, 2), "{r:?}");
    assert!(r.low > 0.995 && r.high < 1.005, "{r:?}");
    // Two runs at the faster step are a confirmed best: the layout stays
    // (it is then a layout effect, or run noise that more rounds shrink).
    let mut b2 = b.clone();
    b2[4][3] = 0.3723;
    let r = layout_ratio(&a, &b2, Estimator::Min, 0.99, false).unwrap();
    assert_eq!((r.variants, r.unconfirmed), (7, 1), "{r:?}");
    // The median estimator has no lone best run to leave out.
    let r = layout_ratio(&a, &b, Estimator::Median, 0.99, false).unwrap();
    assert_eq!(r.unconfirmed, 0, "{r:?}");
}

#[test]
fn min_estimator_and_bad_input() {
    let a = vec![vec![1.0, 5.0], vec![1.0, 9.0], vec![1.0, 2.0]];
    let b = vec![vec![1.5, 5.0], vec![1.5, 9.0], vec![1.5, 2.0]];
    let r = layout_ratio(&a, &b, Estimator::Min, 0.95, false).unwrap();
    assert!((r.estimate - 1.5).abs() < 1e-12);
    assert!(layout_ratio(&a[..1], &b[..1], Estimator::Median, 0.95, false).is_none());
    assert!(layout_ratio(&a, &b, Estimator::Median, 1.0, false).is_none());
    let nan = vec![vec![f64::NAN, 1.0]; 3];
    assert!(layout_ratio(&nan, &b, Estimator::Median, 0.95, false).is_none());
    // Empty variants are skipped, not fatal.
    let mut gappy = a.clone();
    gappy[1].clear();
    let r = layout_ratio(&gappy, &b, Estimator::Median, 0.95, false).unwrap();
    assert_eq!(r.variants, 2);
}

#[test]
fn default_ratio_is_yuen_on_logs() {
    // log a = 0, 0.01, 0.02; log b = 0.10, 0.12, 0.14: diff 0.11,
    // SE = sqrt(0.0001/3 + 0.0004/3) = 0.0129099, df =
    // (0.000166667)^2 / ((0.0000333)^2/2 + (0.000133)^2/2) = 2.941176,
    // t(0.975, 2.941176) = 3.21876 (scipy.stats.t.ppf) → log CI 0.11 ±
    // 0.0415540.
    let a: Vec<f64> = [0.0f64, 0.01, 0.02].iter().map(|l| l.exp()).collect();
    let b: Vec<f64> = [0.10f64, 0.12, 0.14].iter().map(|l| l.exp()).collect();
    let (r, lo, hi) = default_ratio(&a, &b, 0.95).unwrap();
    assert!(close(r.ln(), 0.11, 1e-12));
    assert!(close(lo.ln(), 0.11 - 0.041_554, 1e-5), "{}", lo.ln());
    assert!(close(hi.ln(), 0.11 + 0.041_554, 1e-5), "{}", hi.ln());
    assert!(default_ratio(&a[..1], &b, 0.95).is_none());
    assert!(default_ratio(&a, &[0.0, 1.0], 0.95).is_none());
    // Five runs: one wild run in A is trimmed. Reference: scipy 1.16
    // `stats.ttest_ind(log b, log a, trim=0.2, equal_var=False)
    // .confidence_interval(0.95)` = [0.0730329, 0.1337360], t = 9.49693,
    // df = 3.95799.
    // Divided by 3, the values are on no decimal grid, and a ratio does
    // not change.
    let a: Vec<f64> = [1.00, 1.01, 1.02, 0.99, 1.35]
        .iter()
        .map(|v| v / 3.0)
        .collect();
    let b: Vec<f64> = [1.10, 1.12, 1.14, 1.11, 1.13]
        .iter()
        .map(|v| v / 3.0)
        .collect();
    let (_, lo, hi) = default_ratio(&a, &b, 0.95).unwrap();
    assert!(close(lo.ln(), 0.073_032_9, 1e-6), "{}", lo.ln());
    assert!(close(hi.ln(), 0.133_736_0, 1e-6), "{}", hi.ln());
    // As printed, in steps of 0.01: the rounding bound 0.005/1.01 +
    // 0.005/1.12 (the medians) is added in quadrature to Yuen's
    // half-width 0.0303516.
    let a: Vec<f64> = vec![1.00, 1.01, 1.02, 0.99, 1.35];
    let b: Vec<f64> = vec![1.10, 1.12, 1.14, 1.11, 1.13];
    let (r, lo, hi) = default_ratio(&a, &b, 0.95).unwrap();
    let half = 0.030_351_55f64.hypot(0.005 / 1.01 + 0.005 / 1.12);
    assert!(close(hi.ln() - r.ln(), half, 1e-6), "{}", hi.ln() - r.ln());
    assert!(close(r.ln() - lo.ln(), half, 1e-6));
    // Identical printed runs: as wide as the rounding, never zero.
    let (r, lo, hi) = default_ratio(&[1.0, 1.0], &[2.0, 2.0], 0.95).unwrap();
    assert!(close(r, 2.0, 1e-12) && lo < r && r < hi);
    assert!(close(hi.ln() - r.ln(), 0.05 + 0.025, 1e-12));
}

#[test]
fn spread_and_trust() {
    assert!((spread_cv(&[1.0, 1.0, 1.0]) - 0.0).abs() < 1e-12);
    assert!(spread_cv(&[1.0]).is_nan());
    assert!((smallest_trustworthy_effect(0.05) - 0.1029).abs() < 1e-3);
}

/// Hand-worked: A's runs 10, 10, 20, 10.4 and B's 10, 13, 10, 10.4 (k-th
/// with k-th). Distances from each side's best (10): pair 0 max(0, 0) = 0,
/// pair 1 max(0, ln 1.3), pair 2 max(ln 2, 0), pair 3 max(ln 1.04,
/// ln 1.04). The least-disturbed half is pairs 0 and 3, whose log ratios
/// are 0 and 0: the paired ratio is 1, where the medians' ratio (B 10.2 /
/// A 10.2) is 1 too but the means' would not be. A wild flag removes its
/// pair before ranking.
#[test]
fn paired_log_takes_the_median_of_the_least_disturbed_half_of_the_pairs() {
    let a = [10.0, 10.0, 20.0, 10.4];
    let b = [10.0, 13.0, 10.0, 10.4];
    let none = [false; 4];
    assert_eq!(paired_log(&a, &b, (&none, &none), false), Some(0.0));
    // Pair 0 set aside: pairs 3 and 1 are the least disturbed of 1, 2, 3
    // (ranks ln 1.04, ln 1.3, ln 2), the half of 3 is 2 pairs: median of
    // 0 and ln 1.3.
    let wild = [true, false, false, false];
    let got = paired_log(&a, &b, (&wild, &none), false).unwrap();
    assert!((got - 1.3f64.ln() / 2.0).abs() < 1e-12, "{got}");
    // Nothing left: None.
    let all = [true; 4];
    assert_eq!(paired_log(&a, &b, (&all, &none), false), None);
}
