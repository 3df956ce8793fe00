//! `history`: what the results store holds, as facts for `render`: the
//! experiments `history` lists, and the trend of one metric across them
//! (each command's median per experiment with its confidence interval).

pub mod render;

use crate::run::metric::Unit;
use crate::store::TrendPoint;
use statrs::distribution::{Binomial, DiscreteCDF};

/// The confidence of a trend point's interval.
pub const CONFIDENCE: f64 = 0.95;

/// One plotted point: a command's median in one experiment, with its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub experiment_id: i64,
    pub created_unix: i64,
    pub commit: Option<String>,
    pub name: String,
    pub unit: Unit,
    pub runs: usize,
    pub median: f64,
    /// The distribution-free interval of the median; with fewer than 6 runs
    /// it is min–max and covers less than [`CONFIDENCE`].
    pub low: f64,
    pub high: f64,
}

/// The trend's points, in the store's order (oldest experiment first).
pub fn points(trend: &[TrendPoint]) -> Vec<Point> {
    trend
        .iter()
        .filter_map(|t| {
            let mut values: Vec<f64> = t.values.iter().copied().filter(|v| v.is_finite()).collect();
            if values.is_empty() {
                return None;
            }
            values.sort_by(f64::total_cmp);
            let (low, high) = median_interval(&values, CONFIDENCE);
            Some(Point {
                experiment_id: t.experiment_id,
                created_unix: t.created_unix,
                commit: t.git_commit.clone(),
                name: t.name.clone(),
                unit: unit(&t.unit),
                runs: values.len(),
                median: crate::stats::descriptive::median(&values),
                low,
                high,
            })
        })
        .collect()
}

/// A stored unit name as a [`Unit`] (`none` when unknown).
pub fn unit(text: &str) -> Unit {
    use serde::de::{value::StrDeserializer, IntoDeserializer};
    use serde::Deserialize;
    let text: StrDeserializer<serde::de::value::Error> = text.into_deserializer();
    Unit::deserialize(text).unwrap_or(Unit::None)
}

/// The distribution-free confidence interval of the median of `sorted`
/// values: order statistics x₍ₗ₎ and x₍ₙ₋ₗ₊₁₎ with l the largest rank for
/// which P(Binomial(n, ½) ≤ l − 1) ≤ (1 − confidence)/2 (Conover, Practical
/// Nonparametric Statistics, 3rd ed., §3.2). Never narrower than x₍₁₎…x₍ₙ₎
/// allows: with too few values it is the range.
pub fn median_interval(sorted: &[f64], confidence: f64) -> (f64, f64) {
    let n = sorted.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let tail = (1.0 - confidence) / 2.0;
    let mut l = 1;
    if let Ok(binomial) = Binomial::new(0.5, n as u64) {
        while l < n.div_ceil(2) && binomial.cdf(l as u64) <= tail {
            l += 1;
        }
    }
    (sorted[l - 1], sorted[n - l])
}

/// A `--since` value as a Unix time: a date (`2026-11-01`), or an age before
/// `now` (`90m`, `36h`, `7d`, `2w`).
pub fn since(text: &str, now: i64) -> Result<i64, String> {
    let t = text.trim();
    let parts: Vec<&str> = t.split('-').collect();
    if let [y, m, d] = parts.as_slice() {
        let (y, m, d) = (y.parse::<i64>(), m.parse::<u32>(), d.parse::<u32>());
        if let (Ok(y), Ok(m @ 1..=12), Ok(d @ 1..=31)) = (y, m, d) {
            return Ok(crate::report::units::days_from_civil(y, m, d) * 86_400);
        }
    }
    let (number, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let seconds = match unit {
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => 0,
    };
    match number.parse::<i64>() {
        Ok(n) if seconds > 0 => Ok(now - n * seconds),
        _ => Err(format!(
            "--since {text:?}: give a date (2026-11-01) or an age (90m, 36h, 7d, 2w)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_interval_takes_the_tabled_order_statistics() {
        // n = 10: P(X ≤ 1) = 11/1024 ≤ 0.025 < P(X ≤ 2) = 56/1024, so the
        // 95% interval is x(2)…x(9) (Conover, Table A3; coverage 97.9%).
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(median_interval(&xs, 0.95), (2.0, 9.0));
        // n = 20: x(6)…x(15) (P(X ≤ 5) = 0.0207).
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(median_interval(&xs, 0.95), (6.0, 15.0));
        // Too few values for 95%: the range.
        assert_eq!(median_interval(&[3.0, 4.0, 5.0], 0.95), (3.0, 5.0));
        assert_eq!(median_interval(&[3.0], 0.95), (3.0, 3.0));
    }

    #[test]
    fn since_reads_dates_and_ages() {
        assert_eq!(since("1970-01-02", 0), Ok(86_400));
        assert_eq!(since("7d", 1_000_000), Ok(1_000_000 - 7 * 86_400));
        assert_eq!(since("90m", 10_000), Ok(10_000 - 5400));
        assert!(since("yesterday", 0).is_err());
    }
}
