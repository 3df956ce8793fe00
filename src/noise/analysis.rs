//! Per metric: the runs of the complete rounds by cell, on the log scale;
//! the factors' shares of the variance (`stats::factorial::decompose`), the
//! shift of the mean when each factor is held (the ANOVA of the cell
//! means), the quietest setting (the default cell with every source held)
//! and the runs a `compare` would need for ±1% in the default cell and in
//! the quietest. Facts only; `render/` words them.

use super::plan::default_cell;
use super::{
    Attribution, Factor, FactorResult, MetricNoise, NoiseOptions, NoiseRun, Undecomposed,
    PRECISION, SOURCE_SHARE,
};
use crate::run::metric::Unit;
use crate::stats::factorial::{anova, decompose, runs_for_precision};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

/// The name of the derived metric `--metric user+sys` adds.
pub const USER_PLUS_SYS: &str = "user+sys";

/// Every metric of the runs, analysed over the first `complete` rounds
/// that have every cell.
pub fn analyze(
    options: &NoiseOptions,
    tested: &[Factor],
    runs: &[NoiseRun],
    complete: usize,
) -> Vec<MetricNoise> {
    let mut names: Vec<(String, Unit)> = runs
        .first()
        .map(|r| {
            r.record
                .values
                .iter()
                .map(|v| (v.name.clone(), v.unit))
                .collect()
        })
        .unwrap_or_else(|| {
            options
                .metrics
                .iter()
                .map(|m| (m.label(), Unit::None))
                .collect()
        });
    if options.user_plus_sys {
        // user and sys were added for the sum; keep them only when asked.
        let asked = |n: &str| options.metrics.iter().any(|m| m.label() == n);
        names.retain(|(n, _)| !matches!(n.as_str(), "user" | "sys") || asked(n));
        names.push((USER_PLUS_SYS.into(), Unit::Seconds));
    }
    let cells = 1usize << tested.len();
    let rounds = rounds_with_every_cell(runs, cells);
    names
        .into_iter()
        .enumerate()
        .map(|(i, (name, unit))| {
            let result = if complete < super::MIN_ROUNDS {
                Err(Undecomposed::TooFewRounds { complete })
            } else {
                by_cell(runs, &rounds, cells, &name).and_then(|values| {
                    attribute(
                        options,
                        tested,
                        &values,
                        options.seed.wrapping_add(i as u64),
                    )
                })
            };
            MetricNoise { name, unit, result }
        })
        .collect()
}

fn rounds_with_every_cell(runs: &[NoiseRun], cells: usize) -> BTreeSet<usize> {
    let mut seen: std::collections::BTreeMap<usize, BTreeSet<u32>> = Default::default();
    for run in runs {
        seen.entry(run.record.round).or_default().insert(run.cell);
    }
    seen.into_iter()
        .filter(|(_, c)| c.len() == cells)
        .map(|(r, _)| r)
        .collect()
}

/// The metric `name` of the runs of `rounds`, by cell (raw values).
fn by_cell(
    runs: &[NoiseRun],
    rounds: &BTreeSet<usize>,
    cells: usize,
    name: &str,
) -> Result<Vec<Vec<f64>>, Undecomposed> {
    let mut values = vec![Vec::new(); cells];
    for run in runs.iter().filter(|r| rounds.contains(&r.record.round)) {
        let value = if name == USER_PLUS_SYS {
            run.record.user_s + run.record.sys_s
        } else {
            run.record
                .values
                .iter()
                .find(|v| v.name == name)
                .ok_or(Undecomposed::Missing)?
                .value
        };
        values[run.cell as usize].push(value);
    }
    Ok(values)
}

/// The attribution of one metric's values by cell.
fn attribute(
    options: &NoiseOptions,
    tested: &[Factor],
    values: &[Vec<f64>],
    seed: u64,
) -> Result<Attribution, Undecomposed> {
    if let Some(&bad) = values
        .iter()
        .flatten()
        .find(|v| !(v.is_finite() && **v > 0.0))
    {
        return Err(Undecomposed::NotPositive { value: bad });
    }
    let logs: Vec<Vec<f64>> = values
        .iter()
        .map(|c| c.iter().map(|v| v.ln()).collect())
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let decomposition = decompose(&logs, options.resamples, options.confidence, &mut rng)
        .ok_or_else(|| Undecomposed::NoNoise {
            value: values.iter().flatten().next().copied().unwrap_or(f64::NAN),
        })?;
    let table = anova(&logs);
    let explained = decomposition.unexplained.high < 1.0;
    let factors: Vec<FactorResult> = tested
        .iter()
        .enumerate()
        .map(|(bit, &factor)| {
            let share = decomposition.shares[bit];
            let effect = table
                .as_ref()
                .and_then(|t| t.effects.iter().find(|e| e.factors == 1 << bit));
            FactorResult {
                factor,
                share,
                // The effect is varying − held on the log scale.
                held_shift: effect.map_or(f64::NAN, |e| (-e.estimate).exp() - 1.0),
                held_shift_p: effect.map_or(f64::NAN, |e| e.p),
                source: explained && share.value >= SOURCE_SHARE && share.low > 0.0,
            }
        })
        .collect();
    let default = default_cell(tested);
    let quiet_held: Vec<Factor> = factors
        .iter()
        .enumerate()
        .filter(|(bit, f)| f.source && default & (1 << bit) != 0)
        .map(|(_, f)| f.factor)
        .collect();
    let quiet = factors
        .iter()
        .enumerate()
        .filter(|(_, f)| f.source)
        .fold(default, |cell, (bit, _)| cell & !(1 << bit));
    let variance = |cell: u32| decomposition.variances[cell as usize];
    let runs = |cell: u32| runs_for_precision(variance(cell), PRECISION, options.confidence);
    Ok(Attribution {
        explained,
        default_cell: default,
        default_sd: variance(default).sqrt(),
        default_runs: runs(default),
        quiet_cell: quiet,
        quiet_held,
        quiet_sd: variance(quiet).sqrt(),
        quiet_runs: runs(quiet),
        factors,
        decomposition,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::metric::MetricValue;
    use crate::run::RunRecord;

    fn run(cell: u32, round: usize, value: f64) -> NoiseRun {
        NoiseRun {
            cell,
            record: RunRecord {
                build: 0,
                round,
                warmup: false,
                wall_s: value,
                user_s: value / 2.0,
                sys_s: value / 4.0,
                max_rss_kib: 0,
                exit_code: 0,
                env_pad_bytes: None,
                values: vec![MetricValue {
                    name: "cost".into(),
                    value,
                    unit: Unit::None,
                }],
                counters: Vec::new(),
            },
        }
    }

    /// Two factors (ASLR, env); the cost varies (1000 or 1100) only when
    /// ASLR varies: ASLR takes the whole share, holding it is the quiet
    /// setting, and a plain run (ASLR varying) needs more runs than it.
    #[test]
    fn the_one_source_is_named_and_held() {
        let tested = [Factor::Aslr, Factor::Env];
        let mut runs = Vec::new();
        for round in 0..6 {
            for cell in 0..4u32 {
                let aslr_varies = cell & 1 != 0;
                let value = if aslr_varies && round % 2 == 1 {
                    1100.0
                } else {
                    1000.0
                };
                runs.push(run(cell, round, value));
            }
        }
        // An incomplete round is left out.
        runs.push(run(0, 6, 5000.0));
        let options = NoiseOptions {
            resamples: 200,
            ..NoiseOptions::default()
        };
        let metrics = analyze(&options, &tested, &runs, 6);
        let cost = &metrics[0];
        assert_eq!(cost.name, "cost");
        let a = cost.result.as_ref().unwrap();
        assert!((a.factors[0].share.value - 1.0).abs() < 1e-12);
        assert!(a.factors[1].share.value.abs() < 1e-12);
        assert!(a.factors[0].source && !a.factors[1].source);
        assert_eq!((a.default_cell, a.quiet_cell), (0b01, 0b00));
        assert_eq!(a.quiet_held, vec![Factor::Aslr]);
        assert_eq!(a.quiet_sd, 0.0);
        assert_eq!(a.quiet_runs, Some(2));
        // Three of 0 and three of ln 1.1 = 0.09531: variance 1.5 d²/5 =
        // 0.0027253; 2 · 1.959964² · 0.0027253 / ln(1.01)² = 211.5 → 212.
        assert_eq!(a.default_runs, Some(212));
    }

    #[test]
    fn what_cannot_be_decomposed_says_why() {
        let tested = [Factor::Env];
        let runs: Vec<NoiseRun> = (0..3)
            .flat_map(|round| (0..2).map(move |cell| run(cell, round, 7.0)))
            .collect();
        let options = NoiseOptions {
            resamples: 10,
            ..NoiseOptions::default()
        };
        let got = &analyze(&options, &tested, &runs, 3)[0].result;
        assert_eq!(got, &Err(Undecomposed::NoNoise { value: 7.0 }));
        let got = &analyze(&options, &tested, &runs, 1)[0].result;
        assert_eq!(got, &Err(Undecomposed::TooFewRounds { complete: 1 }));
        let zero: Vec<NoiseRun> = (0..2)
            .flat_map(|round| (0..2).map(move |cell| run(cell, round, 0.0)))
            .collect();
        let got = &analyze(&options, &tested, &zero, 2)[0].result;
        assert_eq!(got, &Err(Undecomposed::NotPositive { value: 0.0 }));
    }
}
