//! The verdict rule on hand-made per-variant data. Every variant has three
//! runs `[v·0.999, v, v·1.001]`, so its median is exactly v and run noise
//! is a rounding error; the layout noise is what the data put between
//! variants. Builds: A is the baseline, B the candidate; time, lower is better.
use super::*;
use crate::layout::variants::Source;
use crate::stats::verdict::artifact;

fn options(margin: f64) -> LayoutOptions {
    LayoutOptions {
        layouts: 3,
        max_layouts: None,
        rounds: 3,
        warmup: 0,
        sources: vec![Source::Align],
        jobs: 1,
        margin,
        ..LayoutOptions::default()
    }
}

fn runs(v: f64) -> Vec<f64> {
    vec![v * 0.999, v, v * 1.001]
}

/// A's variant i takes 1 + 0.01·i (layout spread in the baseline too);
/// B's variant i is A's times `ratios[i]`.
fn compare_ratios(ratios: &[f64], margin: f64) -> Comparison {
    let a: Vec<Vec<f64>> = (0..ratios.len())
        .map(|i| runs(1.0 + 0.01 * i as f64))
        .collect();
    let b: Vec<Vec<f64>> = ratios
        .iter()
        .enumerate()
        .map(|(i, r)| runs((1.0 + 0.01 * i as f64) * r))
        .collect();
    compare(&options(margin), false, &a, &b, (0.95, 0.95))
}

fn close(x: f64, y: f64, tol: f64) -> bool {
    (x - y).abs() <= tol
}

#[test]
fn a_default_layout_ghost_that_is_same_across_layouts_is_an_artifact() {
    // 16 layouts, margin 1%. The default layout has B/A = 0.75: a 25%
    // speedup, FASTER (its run-level interval is about [0.7485, 0.7515]).
    // Variants 1..15 alternate log ratios +0.002 (odd, 8 of them) and
    // −0.002 (even, 7). Trimmed t, g = ⌊0.2·16⌋ = 3: the sorted values are
    // ln 0.75, 7 × −0.002, 8 × +0.002; dropping 3 from each end leaves
    // 5 × −0.002 and 5 × +0.002, trimmed mean 0. Winsorized: 8 × −0.002
    // and 8 × +0.002, variance 16·0.002²/15 = 4.2667e-6; SE =
    // √(15·4.2667e-6/(10·9)) = 8.4327e-4; t(0.975, 9) = 2.262157 → log
    // interval ±0.0019076 → [0.998094, 1.001909]: SAME within ±1%.
    // Share that disappears: 1 − 0/ld = 100%.
    let mut ratios = vec![0.75];
    ratios.extend((1..16).map(|i| {
        if i % 2 == 1 {
            0.002f64.exp()
        } else {
            (-0.002f64).exp()
        }
    }));
    let c = compare_ratios(&ratios, 0.01);
    assert_eq!(c.default_verdict, Verdict::Faster, "{c:?}");
    assert_eq!(c.controlled_verdict, Verdict::Same, "{c:?}");
    assert_eq!(c.verdict, Verdict::Artifact, "{c:?}");
    let controlled = c.controlled.unwrap();
    assert!(close(controlled.estimate, 1.0, 1e-12), "{controlled:?}");
    assert!(close(controlled.low, 0.998_094, 1e-6), "{controlled:?}");
    assert!(close(controlled.high, 1.001_909, 1e-6), "{controlled:?}");
    assert_eq!(controlled.trimmed, 3);
    assert!(close(c.artifact_share.unwrap(), 1.0, 1e-9), "{c:?}");
    assert_eq!(controlled.variants, 16);
    assert!(!c.reverses, "{c:?}");
}

#[test]
fn a_controlled_estimate_of_the_opposite_sign_is_an_artifact_even_when_significant() {
    // 32 layouts, margin 1%. Default layout B/A = 0.75 (FASTER); the other
    // 31 have B/A = 1.10. Trimming 6 from each end drops the default
    // layout: trimmed mean ln 1.10, winsorized variance 0, interval
    // [1.100, 1.100]: SLOWER. The sign is opposite to the default
    // layout's: ARTIFACT. Share: 1 − lc/ld = 1.33, clamped to 100%.
    let mut ratios = vec![0.75];
    ratios.extend(std::iter::repeat(1.10).take(31));
    let c = compare_ratios(&ratios, 0.01);
    assert_eq!(c.default_verdict, Verdict::Faster, "{c:?}");
    assert_eq!(c.controlled_verdict, Verdict::Slower, "{c:?}");
    assert_eq!(c.verdict, Verdict::Artifact, "{c:?}");
    assert!(close(c.controlled.unwrap().estimate, 1.10, 1e-9), "{c:?}");
    assert_eq!(c.artifact_share, Some(1.0));
    assert_eq!(c.controlled.unwrap().variants, 32);
    assert!(c.reverses, "{c:?}");
}

#[test]
fn a_significant_controlled_estimate_under_half_the_default_one_is_an_artifact() {
    // 16 layouts, margin 1%. Default layout B/A = 0.75; the other 15 have
    // 0.90. Trimmed mean ln 0.90 → 0.900 (interval [0.900, 0.900]):
    // FASTER, significant. But lc/ld = 0.105361/0.287682 = 0.36624 < 1/2:
    // ARTIFACT, with 1 − 0.36624 = 63% of the 25% speedup being layout.
    let mut ratios = vec![0.75];
    ratios.extend(std::iter::repeat(0.90).take(15));
    let c = compare_ratios(&ratios, 0.01);
    assert_eq!(c.default_verdict, Verdict::Faster, "{c:?}");
    assert_eq!(c.controlled_verdict, Verdict::Faster, "{c:?}");
    assert_eq!(c.verdict, Verdict::Artifact, "{c:?}");
    assert!(close(c.controlled.unwrap().estimate, 0.90, 1e-9), "{c:?}");
    assert!(close(c.artifact_share.unwrap(), 0.633_76, 1e-4), "{c:?}");
    assert!(!c.reverses, "{c:?}");
}

#[test]
fn a_real_effect_that_survives_every_layout_is_faster_or_slower() {
    // 16 layouts, margin 1%. B/A = 0.75·1.01 on odd variants and 0.75/1.01
    // on even ones (the default layout is even: 0.74257, FASTER). The
    // ±ln 1.01 cancel over 8 + 8 variants: mean log = ln 0.75 → 0.75, and
    // the trimmed mean is ln 0.75 and the interval lies within
    // 0.75·[1/1.01, 1.01]: FASTER. lc = ld, so
    // nothing disappears: the verdict stays FASTER.
    let ratios: Vec<f64> = (0..16)
        .map(|i| if i % 2 == 1 { 0.75 * 1.01 } else { 0.75 / 1.01 })
        .collect();
    let c = compare_ratios(&ratios, 0.01);
    assert_eq!(c.verdict, Verdict::Faster, "{c:?}");
    assert_eq!(c.artifact_share, None);
    assert!(close(c.controlled.unwrap().estimate, 0.75, 1e-9), "{c:?}");
    assert!(!c.reverses, "{c:?}");
    // The mirror image: B/A = 1/0.75 = 1.3333 everywhere is SLOWER.
    let c = compare_ratios(&[1.0 / 0.75; 16], 0.01);
    assert_eq!(c.verdict, Verdict::Slower, "{c:?}");
    assert!(
        close(c.controlled.unwrap().estimate, 1.0 / 0.75, 1e-9),
        "{c:?}"
    );
}

#[test]
fn wild_runs_that_hide_an_effect_are_the_named_cause() {
    // 8 layouts, B 3% slower with ±0.1% run noise; in 3 layouts B's runs
    // were mostly slowed by 30% (3 of 5), so those medians are off by 30%
    // and the trimmed interval cannot drop all three.
    let base = [0.999, 1.0, 1.001, 1.0005, 0.9995];
    let a: Vec<Vec<f64>> = (0..8).map(|_| base.to_vec()).collect();
    let b: Vec<Vec<f64>> = (0..8)
        .map(|i| {
            base.iter()
                .enumerate()
                .map(|(j, v)| v * 1.03 * if i % 3 == 0 && j < 3 { 1.3 } else { 1.0 })
                .collect()
        })
        .collect();
    let o = options(0.01);
    let c = layout_ratio(&a, &b, o.estimator, 0.95).unwrap();
    assert_eq!(
        decide(c.low, c.high, 0.01, false),
        Verdict::Unknown,
        "{c:?}"
    );
    match diagnose(&o, false, &a, &b, Some(c), 0.95) {
        Undecided::RunOutliers {
            runs, of, variants, ..
        } => {
            assert_eq!((runs, of), (9, 80));
            assert_eq!(variants, [0, 3, 6]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_intervals_do_not_depend_on_the_seed() {
    // Issue 10: the same data with 20 seeds must move each bound by
    // < 0.2%. The intervals are analytic, so they do not move at all.
    let ratios: Vec<f64> = (0..8).map(|i| 1.03 + 0.004 * (i % 3) as f64).collect();
    let a: Vec<Vec<f64>> = (0..8).map(|i| runs(1.0 + 0.01 * i as f64)).collect();
    let b: Vec<Vec<f64>> = ratios
        .iter()
        .enumerate()
        .map(|(i, r)| runs((1.0 + 0.01 * i as f64) * r))
        .collect();
    let bounds = |seed: u64| {
        let mut o = options(0.01);
        o.seed = seed;
        let c = compare(&o, false, &a, &b, (0.99, 0.99));
        let (d, r) = (c.default_ratio.unwrap(), c.controlled.unwrap());
        [d.low, d.high, r.low, r.high]
    };
    let first = bounds(0);
    for seed in 1..20 {
        assert_eq!(bounds(seed), first);
    }
}

#[test]
fn the_rule_alone() {
    let f = Verdict::Faster;
    // Not significant at the default layout: never ARTIFACT.
    assert_eq!(
        artifact(Some(0.75), Verdict::Unknown, Some(1.0), Verdict::Same),
        None
    );
    // Same sign, more than half the size, undecided: stays UNKNOWN (not ARTIFACT).
    // ln 0.85 / ln 0.75 = 0.565 ≥ 0.5.
    assert_eq!(artifact(Some(0.75), f, Some(0.85), Verdict::Unknown), None);
    // ln 0.88 / ln 0.75 = 0.444 < 0.5: ARTIFACT, 55.6% disappears.
    let share = artifact(Some(0.75), f, Some(0.88), Verdict::Unknown).unwrap();
    assert!(close(share, 1.0 - 0.88f64.ln() / 0.75f64.ln(), 1e-12));
    // A slowdown that is SAME across layouts: all of it disappears... up to lc.
    let share = artifact(Some(1.25), Verdict::Slower, Some(1.005), Verdict::Same).unwrap();
    assert!(close(share, 1.0 - 1.005f64.ln() / 1.25f64.ln(), 1e-12));
    // Missing estimates: no ARTIFACT.
    assert_eq!(artifact(None, f, Some(1.0), Verdict::Same), None);
    assert_eq!(artifact(Some(0.75), f, None, Verdict::Unknown), None);
}
