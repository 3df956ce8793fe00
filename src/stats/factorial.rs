//! Two-level factorial experiments with replicates (`noise`): the ANOVA of
//! the cell means (each factor's main effect on the log metric, its sum of
//! squares, F and p), the decomposition of the run-to-run variance into the
//! factors' shares (Shapley values of the within-cell variance as a function
//! of which factors vary), with seeded bootstrap intervals, and the runs a
//! two-sided comparison needs to reach a given precision.
//!
//! Cells are indexed by bit mask: bit f set = factor f at its high level
//! (for `noise`: the level at which the factor *varies* from run to run).
//! Every function returns `None` on input it cannot use (no cells, fewer than
//! two replicates, non-finite values); nothing panics.

use super::distributions::{f_sf, normal_quantile};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Most factors a design may have (2^12 cells).
pub const MAX_FACTORS: usize = 12;

/// One effect of a 2^k factorial: the factors in `factors` (a bit mask; one
/// bit = a main effect, several = their interaction).
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub factors: u32,
    /// Mean response at the high level minus at the low level (the
    /// interaction's contrast / 2^(k−1) for several factors).
    pub estimate: f64,
    pub sum_of_squares: f64,
    pub f: f64,
    /// P(F(1, df_error) ≥ f); NaN when the error mean square is 0.
    pub p: f64,
}

/// The ANOVA table of a replicated 2^k factorial (Montgomery, *Design and
/// Analysis of Experiments*, ch. 6): every effect, each with one degree of
/// freedom, and the within-cell error.
#[derive(Debug, Clone, PartialEq)]
pub struct Anova {
    /// Every effect but the grand mean, by increasing mask.
    pub effects: Vec<Effect>,
    pub ss_error: f64,
    pub df_error: usize,
    pub ss_total: f64,
}

/// The number of factors of `cells` (a power of two, at least 2, at most
/// 2^[`MAX_FACTORS`]).
fn factors_of(cells: usize) -> Option<usize> {
    let k = cells.trailing_zeros() as usize;
    (cells.is_power_of_two() && (1..=MAX_FACTORS).contains(&k)).then_some(k)
}

/// The ANOVA of `cells[mask]` (the replicates of each cell), all with the
/// same number of replicates n ≥ 2. `None` otherwise, or for a non-finite value.
pub fn anova(cells: &[Vec<f64>]) -> Option<Anova> {
    factors_of(cells.len())?;
    let n = cells[0].len();
    if n < 2 || cells.iter().any(|c| c.len() != n) || cells.iter().flatten().any(|v| !v.is_finite())
    {
        return None;
    }
    let means: Vec<f64> = cells.iter().map(|c| mean(c)).collect();
    let grand = mean(&means);
    let ss_total: f64 = cells.iter().flatten().map(|v| (v - grand).powi(2)).sum();
    let ss_error: f64 = cells
        .iter()
        .zip(&means)
        .map(|(c, m)| c.iter().map(|v| (v - m).powi(2)).sum::<f64>())
        .sum();
    let df_error = cells.len() * (n - 1);
    let mse = ss_error / df_error as f64;
    let size = cells.len() as f64;
    let effects = (1..cells.len() as u32)
        .map(|factors| {
            let contrast: f64 = means
                .iter()
                .enumerate()
                .map(|(cell, m)| sign(factors, cell as u32) * m)
                .sum();
            let sum_of_squares = n as f64 * contrast * contrast / size;
            let f = sum_of_squares / mse;
            Effect {
                factors,
                estimate: contrast / (size / 2.0),
                sum_of_squares,
                f,
                p: if mse > 0.0 {
                    f_sf(f, 1.0, df_error as f64)
                } else {
                    f64::NAN
                },
            }
        })
        .collect();
    Some(Anova {
        effects,
        ss_error,
        df_error,
        ss_total,
    })
}

/// +1 or −1: the sign of `cell` in the contrast of the effect `factors`
/// (the product of ±1 over the factors in the mask).
fn sign(factors: u32, cell: u32) -> f64 {
    let low = (factors & !cell).count_ones();
    if low % 2 == 0 {
        1.0
    } else {
        -1.0
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (divisor n − 1) of every cell (NaN for fewer than two
/// values); a cell of equal values has variance exactly 0.
pub fn cell_variances(cells: &[Vec<f64>]) -> Vec<f64> {
    cells
        .iter()
        .map(|c| {
            if c.len() < 2 {
                return f64::NAN;
            }
            // Shifted by the first value, so a constant cell is exactly 0.
            let shifted: Vec<f64> = c.iter().map(|v| v - c[0]).collect();
            let m = mean(&shifted);
            shifted.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (c.len() - 1) as f64
        })
        .collect()
}

/// The Shapley value of each of the k players of the game `value[mask]`
/// (`value.len()` = 2^k): player f's marginal contribution
/// value(S ∪ {f}) − value(S), averaged over the orders in which players join.
/// The values sum to value(all) − value(none). `None` for a length that is
/// not 2^k (1 ≤ k ≤ [`MAX_FACTORS`]) or a non-finite value.
pub fn shapley(value: &[f64]) -> Option<Vec<f64>> {
    let k = factors_of(value.len())?;
    if value.iter().any(|v| !v.is_finite()) {
        return None;
    }
    // weight(s) = s! (k − s − 1)! / k!, for a coalition of size s without f.
    let factorial = |n: usize| (1..=n).map(|i| i as f64).product::<f64>();
    let weight: Vec<f64> = (0..k)
        .map(|s| factorial(s) * factorial(k - s - 1) / factorial(k))
        .collect();
    Some(
        (0..k)
            .map(|f| {
                let bit = 1u32 << f;
                (0..value.len() as u32)
                    .filter(|s| s & bit == 0)
                    .map(|s| {
                        let size = s.count_ones() as usize;
                        weight[size] * (value[(s | bit) as usize] - value[s as usize])
                    })
                    .sum()
            })
            .collect(),
    )
}

/// An estimate with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// The run-to-run variance of a replicated 2^k design taken apart: with
/// V(S) the within-cell variance when the factors in S vary and the others
/// are held, `total` = V(all), `held` = V(none), each factor's share its
/// Shapley value over V divided by `total`, and `unexplained` = held / total.
/// The shares and `unexplained` sum to 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Decomposition {
    pub total: Estimate,
    pub held: Estimate,
    pub shares: Vec<Estimate>,
    pub unexplained: Estimate,
    /// V of every cell (point estimates), by mask.
    pub variances: Vec<f64>,
    /// Resamples whose total variance was 0 and so gave no shares.
    pub degenerate_resamples: usize,
}

/// Shares (and unexplained) of the variances `v`, or `None` when V(all) is
/// not positive.
fn shares_of(v: &[f64]) -> Option<(Vec<f64>, f64)> {
    let total = *v.last()?;
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let phi = shapley(v)?;
    Some((phi.iter().map(|p| p / total).collect(), v[0] / total))
}

/// [`Decomposition`] of `cells[mask]` (each with at least two values), with
/// percentile intervals at `confidence` from `resamples` bootstrap resamples
/// (runs resampled within their cell, `rng` seeded by the caller). `None`
/// when a cell has fewer than two values, a value is not finite, or the
/// variance with every factor varying is 0 (no run-to-run noise to share).
pub fn decompose(
    cells: &[Vec<f64>],
    resamples: usize,
    confidence: f64,
    rng: &mut ChaCha8Rng,
) -> Option<Decomposition> {
    factors_of(cells.len())?;
    if cells.iter().any(|c| c.len() < 2) || cells.iter().flatten().any(|v| !v.is_finite()) {
        return None;
    }
    let variances = cell_variances(cells);
    let (shares, unexplained) = shares_of(&variances)?;
    let k = shares.len();
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); k + 3];
    let mut degenerate = 0;
    let mut buffer = Vec::new();
    for _ in 0..resamples {
        let v: Vec<f64> = cells
            .iter()
            .map(|c| {
                buffer.clear();
                buffer.extend((0..c.len()).map(|_| c[rng.random_range(0..c.len())]));
                cell_variances(std::slice::from_ref(&buffer))[0]
            })
            .collect();
        match shares_of(&v) {
            Some((s, u)) => {
                for (f, share) in s.into_iter().enumerate() {
                    draws[f].push(share);
                }
                draws[k].push(u);
            }
            None => degenerate += 1,
        }
        draws[k + 1].push(*v.last().unwrap_or(&f64::NAN));
        draws[k + 2].push(v[0]);
    }
    let interval = |value: f64, draws: &mut Vec<f64>| {
        let (low, high) = percentile_interval(draws, confidence);
        Estimate { value, low, high }
    };
    let mut shares_out = Vec::with_capacity(k);
    for (f, share) in shares.iter().enumerate() {
        shares_out.push(interval(*share, &mut draws[f]));
    }
    Some(Decomposition {
        unexplained: interval(unexplained, &mut draws[k]),
        total: interval(*variances.last()?, &mut draws[k + 1]),
        held: interval(variances[0], &mut draws[k + 2]),
        shares: shares_out,
        variances,
        degenerate_resamples: degenerate,
    })
}

/// The central `confidence` percentile interval of `draws` (NaN, NaN when empty).
fn percentile_interval(draws: &mut [f64], confidence: f64) -> (f64, f64) {
    if draws.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    draws.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |p: f64| {
        let i = (p * (draws.len() - 1) as f64).round() as usize;
        draws[i.min(draws.len() - 1)]
    };
    (at(tail), at(1.0 - tail))
}

/// Runs per command a comparison of two commands needs for the two-sided
/// `confidence` interval of their log ratio to be ±ln(1 + `margin`), when
/// each run's log metric has variance `variance`: n = ⌈2 z² σ² / ln(1 + m)²⌉
/// (the normal approximation for a difference of two means, n runs each),
/// at least 2. `None` for a negative or non-finite variance or margin ≤ 0.
pub fn runs_for_precision(variance: f64, margin: f64, confidence: f64) -> Option<u64> {
    if !(variance.is_finite() && variance >= 0.0 && margin > 0.0 && margin.is_finite()) {
        return None;
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let half = (1.0 + margin).ln();
    let n = (2.0 * z * z * variance / (half * half)).ceil();
    if !n.is_finite() || n > u64::MAX as f64 / 2.0 {
        return None;
    }
    Some((n as u64).max(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Montgomery, *Design and Analysis of Experiments* (5th ed., Example
    /// 6-1, Table 6-1): yield of a chemical process, A = reactant
    /// concentration, B = catalyst amount, three replicates. Published:
    /// effects A = 8.33, B = −5.00, AB = 1.67; SS_A = 208.33, SS_B = 75.00,
    /// SS_AB = 8.33, SS_E = 31.34, SS_T = 323.00; F_A = 53.15, F_B = 19.13,
    /// F_AB = 2.13 (the book rounds the error mean square to 3.92).
    #[test]
    fn montgomery_example_6_1() {
        // Cells by mask: bit 0 = A high, bit 1 = B high.
        let cells = vec![
            vec![28.0, 25.0, 27.0], // (1)
            vec![36.0, 32.0, 32.0], // a
            vec![18.0, 19.0, 23.0], // b
            vec![31.0, 30.0, 29.0], // ab
        ];
        let table = anova(&cells).unwrap();
        let close =
            |got: f64, want: f64, tol: f64| assert!((got - want).abs() < tol, "{got} vs {want}");
        let [a, b, ab] = &table.effects[..] else {
            panic!("three effects")
        };
        assert_eq!((a.factors, b.factors, ab.factors), (1, 2, 3));
        close(a.estimate, 8.333, 1e-3);
        close(b.estimate, -5.0, 1e-9);
        close(ab.estimate, 1.667, 1e-3);
        close(a.sum_of_squares, 208.333, 1e-3);
        close(b.sum_of_squares, 75.0, 1e-9);
        close(ab.sum_of_squares, 8.333, 1e-3);
        close(table.ss_error, 31.333, 1e-3);
        close(table.ss_total, 323.0, 1e-9);
        assert_eq!(table.df_error, 8);
        // Unrounded MSE 31.333/8 = 3.9167: F_A = 53.19 (the book's 53.15 divides by 3.92).
        close(a.f, 53.19, 0.01);
        close(b.f, 19.15, 0.01);
        close(ab.f, 2.13, 0.01);
        // The book's P-values: A 0.0001 (< 0.001), B 0.0024, AB 0.1826.
        assert!(a.p < 0.001, "{}", a.p);
        close(b.p, 0.0024, 0.0002);
        close(ab.p, 0.1826, 0.001);
    }

    #[test]
    fn anova_refuses_what_it_cannot_use() {
        assert!(anova(&[]).is_none());
        assert!(anova(&[vec![1.0, 2.0]]).is_none(), "one cell is no design");
        assert!(anova(&[vec![1.0], vec![2.0]]).is_none(), "one replicate");
        assert!(anova(&[vec![1.0, 2.0], vec![2.0]]).is_none(), "unequal");
        assert!(anova(&[vec![1.0, 2.0], vec![2.0, f64::NAN]]).is_none());
        assert!(anova(&vec![vec![1.0, 2.0]; 3]).is_none(), "not 2^k");
        let constant = anova(&[vec![1.0, 1.0], vec![1.0, 1.0]]).unwrap();
        assert!(constant.effects[0].p.is_nan(), "no error variance: no p");
    }

    /// The glove game (e.g. Osborne & Rubinstein, *A Course in Game Theory*,
    /// ex. 295.1; Wikipedia "Shapley value"): player 1 holds a left glove,
    /// players 2 and 3 a right one, a pair is worth 1. Shapley values: 2/3,
    /// 1/6, 1/6.
    #[test]
    fn shapley_of_the_glove_game() {
        let value: Vec<f64> = (0..8u32)
            .map(|s| f64::from(u8::from(s & 1 != 0 && s & 6 != 0)))
            .collect();
        let phi = shapley(&value).unwrap();
        let want = [2.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0];
        for (got, want) in phi.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{phi:?}");
        }
        assert!(shapley(&[1.0, 2.0, 3.0]).is_none());
        assert!(shapley(&[0.0, f64::INFINITY]).is_none());
    }

    /// Noise present when factor 0 *or* factor 2 varies (a stack offset
    /// that ASLR and the environment size both move): each gets half, the
    /// other two factors nothing.
    #[test]
    fn either_of_two_sources_shares_equally() {
        let value: Vec<f64> = (0..16u32)
            .map(|s| if s & 0b0101 != 0 { 4.0 } else { 0.0 })
            .collect();
        let phi = shapley(&value).unwrap();
        for (got, want) in phi.iter().zip([2.0, 0.0, 2.0, 0.0]) {
            assert!((got - want).abs() < 1e-12, "{phi:?}");
        }
    }

    /// Cells whose spread is known exactly: noise only where factor 1
    /// varies (values ±1, variance 4/3 with four values), none elsewhere.
    #[test]
    fn decompose_gives_the_whole_share_to_the_one_source() {
        let noisy = vec![-1.0, 1.0, -1.0, 1.0];
        let quiet = vec![0.5; 4];
        let cells: Vec<Vec<f64>> = (0..8u32)
            .map(|s| {
                if s & 2 != 0 {
                    noisy.clone()
                } else {
                    quiet.clone()
                }
            })
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let d = decompose(&cells, 500, 0.95, &mut rng).unwrap();
        assert!((d.total.value - 4.0 / 3.0).abs() < 1e-12);
        assert_eq!(d.held.value, 0.0);
        assert_eq!(d.unexplained.value, 0.0);
        assert!((d.shares[1].value - 1.0).abs() < 1e-12);
        // Quiet cells resample to 0 variance, so factors 0 and 2 only ever
        // see noisy-vs-noisy or quiet-vs-quiet cells: their shares are
        // differences of resampled noisy cells, 0 at the point estimate.
        assert!(d.shares[0].value.abs() < 1e-12 && d.shares[2].value.abs() < 1e-12);
        assert!(d.shares[0].low <= 0.0 && d.shares[0].high >= 0.0);
        assert!(d.shares[1].low <= 1.0 && d.shares[1].high >= 1.0);
        // No noise at all: nothing to share.
        // Equal values: no rounding residue of the mean is left.
        let same = vec![1.1f64.ln(); 3];
        assert_eq!(cell_variances(&[same])[0], 0.0);
        let flat = vec![vec![1.0, 1.0]; 4];
        assert!(decompose(&flat, 10, 0.95, &mut rng).is_none());
        assert!(decompose(&[vec![1.0], vec![2.0]], 10, 0.95, &mut rng).is_none());
    }

    /// Hand-computed: σ² = 1e-4 (1% noise), ±1%, 95%:
    /// 2 · 1.959964² · 1e-4 / ln(1.01)² = 7.6832e-4 / 9.9009e-5 = 7.760 → 8.
    /// σ² = 0.01 (10%): 775.98 → 776.
    #[test]
    fn runs_for_precision_known_values() {
        assert_eq!(runs_for_precision(1e-4, 0.01, 0.95), Some(8));
        assert_eq!(runs_for_precision(1e-2, 0.01, 0.95), Some(776));
        assert_eq!(runs_for_precision(0.0, 0.01, 0.95), Some(2));
        assert_eq!(runs_for_precision(-1.0, 0.01, 0.95), None);
        assert_eq!(runs_for_precision(1.0, 0.0, 0.95), None);
        assert_eq!(runs_for_precision(f64::NAN, 0.01, 0.95), None);
        assert_eq!(runs_for_precision(1e300, 1e-300, 0.95), None);
    }
}
