//! Do several groups share one trimmed mean? The interaction test of a
//! merge across machine types: each group is one CPU model's per-variant
//! log ratios log(B/A), and a difference between the groups' trimmed means
//! is an effect that depends on the machine.
//!
//! - Two groups: Yuen's two-sample trimmed t with Welch's degrees of freedom
//!   (Yuen 1974; Wilcox, *Introduction to Robust Estimation and Hypothesis
//!   Testing*, 4th ed., §5.3). Each group's squared standard error is
//!   d = (n − 1)·s²_w / (h·(h − 1)); t = (X̄t₁ − X̄t₂)/√(d₁ + d₂),
//!   df = (d₁ + d₂)² / (d₁²/(h₁ − 1) + d₂²/(h₂ − 1)). It is what
//!   `scipy.stats.ttest_ind(x, y, equal_var=False, trim=0.2)` computes; the
//!   unit tests hold it to scipy's values.
//! - More groups: Welch's heteroscedastic one-way ANOVA on trimmed means
//!   (Wilcox's `t1way`, same book §7.1.1): w = 1/d, U = Σw,
//!   X̃ = Σw·X̄t/U, A = Σw(X̄t − X̃)²/(J − 1),
//!   B = 2(J − 2)/(J² − 1)·Σ(1 − w/U)²/(h − 1), F = A/(1 + B),
//!   df = (J − 1, 1/(3/(J² − 1)·Σ(1 − w/U)²/(h − 1))). For J = 2 it is
//!   Yuen's test (F = t², the same p).
//!
//! - Nothing trimmed ([`equal_means`], what the merge uses): Welch's t and
//!   Welch's ANOVA (Welch 1951), the γ = 0 cases of the two above.
//!
//! docs/methodology.md §12 gives the false-alarm rate and the power of the
//! test on simulated shards with wild runs (the simulation is a unit test here).

use super::distributions::{f_sf, student_t_two_sided_p};
use super::hierarchical::trimmed_parts;
use serde::Serialize;

/// Which test [`equal_trimmed_means`] or [`equal_means`] used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InteractionTest {
    /// Two groups: Yuen's two-sample trimmed t.
    Yuen,
    /// Three or more: Welch's ANOVA on trimmed means (t1way).
    WelchTrimmedAnova,
    /// Two groups, nothing trimmed: Welch's t.
    Welch,
    /// Three or more, nothing trimmed: Welch's ANOVA (Welch 1951).
    WelchAnova,
}

/// The test of equal trimmed means across groups.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interaction {
    pub test: InteractionTest,
    /// t for Yuen (first group minus second), F for t1way.
    pub statistic: f64,
    /// Numerator degrees of freedom (1 for Yuen).
    pub df1: f64,
    /// Denominator (Welch) degrees of freedom.
    pub df2: f64,
    pub p_value: f64,
}

/// Yuen's two-sample trimmed t (γ = `trim`) of `x` against `y`. `None` when a
/// group has fewer than 2 values left after trimming, a value is not
/// finite, or both groups are constant.
pub fn yuen(x: &[f64], y: &[f64], trim: f64) -> Option<Interaction> {
    let (a, b) = (trimmed_parts(x, trim)?, trimmed_parts(y, trim)?);
    let se2 = a.squared_error + b.squared_error;
    if se2.is_nan() || se2 <= 0.0 {
        return None;
    }
    let t = (a.mean - b.mean) / se2.sqrt();
    let df = se2.powi(2)
        / (a.squared_error.powi(2) / (a.kept - 1) as f64
            + b.squared_error.powi(2) / (b.kept - 1) as f64);
    let p = student_t_two_sided_p(t, df);
    (t.is_finite() && df.is_finite() && p.is_finite()).then_some(Interaction {
        test: InteractionTest::Yuen,
        statistic: t,
        df1: 1.0,
        df2: df,
        p_value: p,
    })
}

/// Welch's one-way ANOVA on γ-trimmed means (Wilcox's t1way). `None` with
/// fewer than 2 groups, a group with fewer than 2 values after trimming or
/// no spread, or a value that is not finite.
pub fn t1way(groups: &[Vec<f64>], trim: f64) -> Option<Interaction> {
    let j = groups.len();
    if j < 2 {
        return None;
    }
    let parts = groups
        .iter()
        .map(|g| trimmed_parts(g, trim))
        .collect::<Option<Vec<_>>>()?;
    if parts
        .iter()
        .any(|p| p.squared_error.is_nan() || p.squared_error <= 0.0)
    {
        return None;
    }
    let w: Vec<f64> = parts.iter().map(|p| 1.0 / p.squared_error).collect();
    let u: f64 = w.iter().sum();
    let grand = parts.iter().zip(&w).map(|(p, w)| w * p.mean).sum::<f64>() / u;
    let jf = j as f64;
    let a = parts
        .iter()
        .zip(&w)
        .map(|(p, w)| w * (p.mean - grand).powi(2))
        .sum::<f64>()
        / (jf - 1.0);
    let sum: f64 = parts
        .iter()
        .zip(&w)
        .map(|(p, w)| (1.0 - w / u).powi(2) / (p.kept - 1) as f64)
        .sum();
    let b = 2.0 * (jf - 2.0) / (jf * jf - 1.0) * sum;
    let f = a / (1.0 + b);
    let df2 = 1.0 / (3.0 / (jf * jf - 1.0) * sum);
    let p = f_sf(f, jf - 1.0, df2);
    (f.is_finite() && df2.is_finite() && p.is_finite()).then_some(Interaction {
        test: InteractionTest::WelchTrimmedAnova,
        statistic: f,
        df1: jf - 1.0,
        df2,
        p_value: p,
    })
}

/// The test of equal trimmed means: Yuen's for two groups, t1way for more.
pub fn equal_trimmed_means(groups: &[Vec<f64>], trim: f64) -> Option<Interaction> {
    match groups {
        [x, y] => yuen(x, y, trim),
        _ => t1way(groups, trim),
    }
}

/// The test of equal means, nothing trimmed: Welch's t for two groups,
/// Welch's ANOVA for more (the γ = 0 cases of Yuen's test and t1way). The
/// merge's overall estimate is the mean over layouts (docs/methodology.md
/// §10), so the per-model comparison tests means too: a layout ghost on one
/// machine is part of what that machine's users get, not an outlier to trim.
pub fn equal_means(groups: &[Vec<f64>]) -> Option<Interaction> {
    equal_trimmed_means(groups, 0.0).map(|i| Interaction {
        test: match i.test {
            InteractionTest::Yuen | InteractionTest::Welch => InteractionTest::Welch,
            _ => InteractionTest::WelchAnova,
        },
        ..i
    })
}

#[cfg(test)]
mod tests;
