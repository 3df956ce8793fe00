//! Known values of the interaction tests against an independent
//! implementation, and the seeded simulation of their false-alarm rate and
//! power that docs/methodology.md §12 documents.

use super::*;
use crate::stats::hierarchical::{Estimator, TRIM};
use crate::stats::layout_sim::noisy_runs;
use crate::stats::sequential::standard_normal;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const G1: [f64; 8] = [
    0.0512, 0.0431, 0.0617, 0.0480, 0.0555, 0.0390, 0.1200, 0.0502,
];
const G2: [f64; 10] = [
    -0.0488, -0.0530, -0.0401, -0.0612, -0.0455, -0.0519, 0.0100, -0.0475, -0.0502, -0.0444,
];
const G3: [f64; 6] = [0.011, 0.004, -0.006, 0.020, 0.013, 0.002];

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs().max(1e-300)
}

/// Reference values: SciPy 1.17.1,
/// `scipy.stats.ttest_ind(x, y, equal_var=False, trim=0.2)` (statistic,
/// pvalue, df), computed in a fresh venv for this test.
#[test]
fn yuen_matches_scipy_ttest_ind_trimmed() {
    type Case<'a> = (&'a [f64], &'a [f64], f64, f64, f64);
    let cases: [Case; 3] = [
        (
            &G1,
            &G2,
            25.051215086561587,
            2.0264676480549937e-08,
            7.392231032321253,
        ),
        (
            &G1[..4],
            &G2[..4],
            17.25604265581011,
            2.7066988777333975e-06,
            5.92940433366955,
        ),
        (
            &[1.0, 2.0, 3.0, 4.0, 5.0],
            &[2.0, 2.5, 9.0, 3.5, 4.0, 4.5],
            -0.6196442885790208,
            0.5695893008191192,
            3.932195367726766,
        ),
    ];
    for (x, y, t, p, df) in cases {
        let got = yuen(x, y, TRIM).unwrap();
        assert!(close(got.statistic, t, 1e-9), "t {} vs {t}", got.statistic);
        assert!(close(got.df2, df, 1e-9), "df {} vs {df}", got.df2);
        assert!(close(got.p_value, p, 1e-6), "p {} vs {p}", got.p_value);
    }
}

/// Reference values: an independent NumPy/SciPy implementation of Wilcox's
/// t1way (Introduction to Robust Estimation and Hypothesis Testing, 4th ed.,
/// §7.1.1: winsorized variances by clipping, `scipy.stats.trim_mean`,
/// `scipy.stats.f.sf`), and for two groups Yuen's test (F = t²).
#[test]
fn t1way_matches_an_independent_implementation_and_is_yuen_for_two_groups() {
    let two = t1way(&[G1.to_vec(), G2.to_vec()], TRIM).unwrap();
    assert!(close(two.statistic, 627.563377313171, 1e-9), "{two:?}");
    assert!(close(two.df2, 7.39223103232125, 1e-9), "{two:?}");
    let yuen = yuen(&G1, &G2, TRIM).unwrap();
    assert!(close(two.statistic, yuen.statistic.powi(2), 1e-9));
    assert!(close(two.p_value, yuen.p_value, 1e-6));
    let three = t1way(&[G1.to_vec(), G2.to_vec(), G3.to_vec()], TRIM).unwrap();
    assert!(close(three.statistic, 324.6547360267932, 1e-9), "{three:?}");
    assert!(close(three.df2, 6.852111836514073, 1e-9), "{three:?}");
    assert!(
        close(three.p_value, 1.6305899241250333e-07, 1e-5),
        "{three:?}"
    );
    let flat = t1way(
        &[
            vec![1.0, 2.0, 3.0, 4.0, 5.0],
            vec![2.0, 2.5, 9.0, 3.5, 4.0, 4.5],
            vec![3.0, 3.1, 2.9, 3.4, 2.2],
        ],
        TRIM,
    )
    .unwrap();
    assert!(close(flat.statistic, 0.45441242049184233, 1e-9), "{flat:?}");
    assert!(close(flat.df2, 3.2846480704596415, 1e-9), "{flat:?}");
    assert!(close(flat.p_value, 0.6695361933908812, 1e-5), "{flat:?}");
    assert_eq!(
        equal_trimmed_means(&[G1.to_vec(), G2.to_vec()], TRIM)
            .unwrap()
            .test,
        InteractionTest::Yuen
    );
}

/// Reference values, nothing trimmed: SciPy 1.17.1,
/// `scipy.stats.ttest_ind(x, y, equal_var=False)` (Welch's t), and Welch's
/// ANOVA (Welch 1951) from the textbook formula in NumPy, checked against
/// that t² for two groups; computed for this test.
#[test]
fn equal_means_is_welchs_t_and_welchs_anova() {
    type Case<'a> = (&'a [f64], &'a [f64], f64, f64, f64);
    let cases: [Case; 2] = [
        (
            &G1,
            &G2,
            9.247670729995258,
            4.953042850436692e-07,
            12.815786256687131,
        ),
        (
            &[1.0, 2.0, 3.0, 4.0, 5.0],
            &[2.0, 2.5, 9.0, 3.5, 4.0, 4.5],
            -1.0053763828333295,
            0.3424875393715509,
            8.496253132677374,
        ),
    ];
    for (x, y, t, p, df) in cases {
        let got = equal_means(&[x.to_vec(), y.to_vec()]).unwrap();
        assert_eq!(got.test, InteractionTest::Welch);
        assert!(close(got.statistic, t, 1e-9), "t {} vs {t}", got.statistic);
        assert!(close(got.df2, df, 1e-9), "df {} vs {df}", got.df2);
        assert!(close(got.p_value, p, 1e-6), "p {} vs {p}", got.p_value);
    }
    let three = equal_means(&[G1.to_vec(), G2.to_vec(), G3.to_vec()]).unwrap();
    assert_eq!(three.test, InteractionTest::WelchAnova);
    assert!(close(three.statistic, 44.74407450174242, 1e-9), "{three:?}");
    assert!(close(three.df2, 13.214723100212867, 1e-9), "{three:?}");
    assert!(
        close(three.p_value, 1.3061183088632987e-06, 1e-5),
        "{three:?}"
    );
    let flat = equal_means(&[
        vec![1.0, 2.0, 3.0, 4.0, 5.0],
        vec![2.0, 2.5, 9.0, 3.5, 4.0, 4.5],
        vec![3.0, 3.1, 2.9, 3.4, 2.2],
    ])
    .unwrap();
    assert!(close(flat.statistic, 0.7408357997146516, 1e-9), "{flat:?}");
    assert!(close(flat.df2, 6.577752986552958, 1e-9), "{flat:?}");
    assert!(close(flat.p_value, 0.5126654133242561, 1e-5), "{flat:?}");
}

#[test]
fn degenerate_input_gives_none_not_a_panic() {
    assert!(yuen(&[1.0], &[1.0, 2.0], TRIM).is_none());
    assert!(yuen(&[1.0, 1.0], &[1.0, 1.0], TRIM).is_none());
    assert!(yuen(&[1.0, f64::NAN], &[1.0, 2.0], TRIM).is_none());
    assert!(t1way(&[vec![1.0, 2.0]], TRIM).is_none());
    assert!(t1way(&[], TRIM).is_none());
    assert!(t1way(&[vec![1.0, 2.0], vec![3.0, 3.0]], TRIM).is_none());
}

/// A simulated merge of two CPU models' shards: per model `variants`
/// layout variants, `runs` runs per (build, variant); each build's variant
/// gets a log offset (sd `layout_sd`), each run lognormal noise (sd
/// `run_sd`), and a busy machine slows `wild_share` of the runs by
/// 1 + U(0, `wild_max`). Build B's true effect is `effects[m]` on model m.
#[derive(Debug, Clone, Copy)]
struct Shards {
    effects: [f64; 2],
    variants: usize,
    runs: usize,
    layout_sd: f64,
    run_sd: f64,
    wild_share: f64,
    wild_max: f64,
}

fn log_ratios(s: &Shards, effect: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let cell = |centre: f64, rng: &mut ChaCha8Rng| -> f64 {
        let offset = s.layout_sd * standard_normal(rng);
        let runs = noisy_runs(
            s.runs,
            centre.ln() + offset,
            s.run_sd,
            s.wild_share,
            s.wild_max,
            rng,
        );
        Estimator::Median.of(&runs, false)
    };
    (0..s.variants)
        .map(|_| {
            let a = cell(1.0, rng);
            let b = cell(1.0 + effect, rng);
            (b / a).ln()
        })
        .collect()
}

/// The share of `experiments` simulated merges whose interaction test has p < `alpha`.
fn flagged(s: &Shards, alpha: f64, experiments: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut hits = 0;
    for _ in 0..experiments {
        let groups = [
            log_ratios(s, s.effects[0], &mut rng),
            log_ratios(s, s.effects[1], &mut rng),
        ];
        if equal_means(&groups).is_some_and(|i| i.p_value < alpha) {
            hits += 1;
        }
    }
    hits as f64 / experiments as f64
}

/// Busy machine (issue 10's noise: layout sd 0.4%, run sd 0.3%, 15% of runs
/// slowed by up to 40%) and a quiet one with large layout effects (layout sd
/// 3%, run sd 1%).
fn busy(effects: [f64; 2], variants: usize, runs: usize) -> Shards {
    Shards {
        effects,
        variants,
        runs,
        layout_sd: 0.004,
        run_sd: 0.003,
        wild_share: 0.15,
        wild_max: 0.40,
    }
}

fn quiet(effects: [f64; 2], variants: usize, runs: usize) -> Shards {
    Shards {
        effects,
        variants,
        runs,
        layout_sd: 0.03,
        run_sd: 0.01,
        wild_share: 0.0,
        wild_max: 0.0,
    }
}

/// The rates of docs/methodology.md §12, each within 4 binomial standard
/// errors of 2000 seeded experiments (a false alarm of 1 in 15 000).
#[test]
fn documented_interaction_rates_hold_within_sampling_error() {
    let n = 2000;
    let within = |got: f64, want: f64, what: &str| {
        let se = (want * (1.0 - want) / n as f64).sqrt().max(1.0 / n as f64);
        assert!(
            (got - want).abs() <= 4.0 * se,
            "{what}: {got:.4}, documented {want:.3}"
        );
    };
    let cases: [(&str, Shards, f64); 9] = [
        (
            "busy, no interaction, 4 variants/model, 3 runs",
            busy([0.0, 0.0], 4, 3),
            0.021,
        ),
        (
            "busy, no interaction, 4 variants/model, 5 runs",
            busy([0.0, 0.0], 4, 5),
            0.031,
        ),
        (
            "busy, no interaction, 8 variants/model, 5 runs",
            busy([0.0, 0.0], 8, 5),
            0.024,
        ),
        (
            "quiet, no interaction, 4 variants/model, 5 runs",
            quiet([0.0, 0.0], 4, 5),
            0.040,
        ),
        (
            "busy, +5% vs -5%, 4 variants/model, 3 runs",
            busy([0.05, -0.05], 4, 3),
            0.69,
        ),
        (
            "busy, +5% vs -5%, 8 variants/model, 5 runs",
            busy([0.05, -0.05], 8, 5),
            0.974,
        ),
        (
            "busy, +1% vs -1%, 4 variants/model, 5 runs",
            busy([0.01, -0.01], 4, 5),
            0.65,
        ),
        (
            "quiet, +5% vs -5%, 4 variants/model, 5 runs",
            quiet([0.05, -0.05], 4, 5),
            0.74,
        ),
        (
            "quiet, +5% vs -5%, 8 variants/model, 5 runs",
            quiet([0.05, -0.05], 8, 5),
            0.995,
        ),
    ];
    let mut table = String::new();
    for (i, (what, s, want)) in cases.iter().enumerate() {
        let got = flagged(s, 0.05, n, 0x5eed_0000 + i as u64);
        table.push_str(&format!("{what}: {got:.4}\n"));
        if std::env::var_os("GHOSTBENCH_PRINT_RATES").is_none() {
            within(got, *want, what);
        }
    }
    eprintln!("{table}");
}
