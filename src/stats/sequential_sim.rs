//! Simulated `compare` runs: lognormal run times through the real stopping
//! rule ([`super::sequential::Sequential`]), deterministic in a seed. The
//! tests here hold the false-alarm rates and the power that
//! docs/methodology.md reports.

use super::sequential::{decided, standard_normal, Sequential, StoppingRule};
use super::verdict::Verdict;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// What one simulated `compare` run ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SimulationOutcome {
    pub verdict: Verdict,
    /// Runs per side when the run stopped.
    pub runs_per_side: usize,
    /// Looks whose α was spent, including the final one.
    pub looks: usize,
}

/// Simulates one `compare` run with lognormal run times: A has median 1, B
/// has median `true_ratio`, both with coefficient of variation `cv`. Each
/// round adds one A and one B run and calls [`Sequential::observe`]; the run
/// stops at the first decided look, or after `max_runs` rounds with
/// [`Sequential::finish`], exactly as the runner does. Deterministic in
/// `seed`.
pub fn simulate(
    rule: &StoppingRule,
    max_runs: usize,
    true_ratio: f64,
    cv: f64,
    seed: u64,
) -> Verdict {
    simulate_outcome(rule, max_runs, true_ratio, cv, seed).verdict
}

/// [`simulate`], also reporting how many runs and looks it took.
pub fn simulate_outcome(
    rule: &StoppingRule,
    max_runs: usize,
    true_ratio: f64,
    cv: f64,
    seed: u64,
) -> SimulationOutcome {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let sigma = (1.0 + cv * cv).ln().sqrt();
    let mut sequential = Sequential::new(rule.clone(), 1);
    let mut a = Vec::with_capacity(max_runs);
    let mut b = Vec::with_capacity(max_runs);
    for _ in 0..max_runs {
        a.push((sigma * standard_normal(&mut rng)).exp());
        b.push(true_ratio * (sigma * standard_normal(&mut rng)).exp());
        if let Some(looks) = sequential.observe(&[(&a, &b)]) {
            if decided(&looks) {
                return SimulationOutcome {
                    verdict: looks[0].verdict,
                    runs_per_side: a.len(),
                    looks: sequential.looks_spent(),
                };
            }
        }
    }
    let looks = sequential.finish(&[(&a, &b)]);
    SimulationOutcome {
        verdict: looks.first().map_or(Verdict::Unknown, |look| look.verdict),
        runs_per_side: a.len(),
        looks: sequential.looks_spent(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// Runs `experiments` seeded simulations in parallel (seed_base + i for
    /// experiment i) and counts verdicts: [FASTER, SLOWER, SAME], plus the
    /// mean number of runs per side at the stop.
    fn rates(
        rule: &StoppingRule,
        true_ratio: f64,
        seed_base: u64,
        experiments: u64,
    ) -> ([usize; 3], f64) {
        let outcomes: Vec<SimulationOutcome> = (0..experiments)
            .into_par_iter()
            .map(|i| simulate_outcome(rule, 100, true_ratio, 0.03, seed_base + i))
            .collect();
        let count = |v: Verdict| outcomes.iter().filter(|x| x.verdict == v).count();
        let mean_runs =
            outcomes.iter().map(|x| x.runs_per_side as f64).sum::<f64>() / experiments as f64;
        (
            [
                count(Verdict::Faster),
                count(Verdict::Slower),
                count(Verdict::Same),
            ],
            mean_runs,
        )
    }

    #[test]
    fn aa_false_alarm_rate_default_rule() {
        // 2,000 A/A experiments, seeds 1_000_000..1_002_000, default rule
        // (alpha 0.05, margin 0.01, min_runs 5), max_runs 100, CV 3%.
        let rule = StoppingRule::default();
        let ([faster, slower, same], mean_runs) = rates(&rule, 1.0, 1_000_000, 2000);
        let rate = (faster + slower) as f64 / 2000.0;
        println!(
            "A/A default rule (seeds 1000000..1002000): FASTER {faster}, SLOWER {slower}, SAME {same} of 2000 -> false-alarm rate {:.2}%, mean runs/side {mean_runs:.1}",
            rate * 100.0
        );
        assert!(rate <= 0.06, "false-alarm rate {rate}");
    }

    #[test]
    fn aa_false_alarm_rate_zero_margin() {
        // Same as above with margin 0, where any interval excluding 1 decides.
        let rule = StoppingRule {
            margin: 0.0,
            ..StoppingRule::default()
        };
        let ([faster, slower, same], mean_runs) = rates(&rule, 1.0, 2_000_000, 2000);
        let rate = (faster + slower) as f64 / 2000.0;
        println!(
            "A/A margin 0 (seeds 2000000..2002000): FASTER {faster}, SLOWER {slower}, SAME {same} of 2000 -> false-alarm rate {:.2}%, mean runs/side {mean_runs:.1}",
            rate * 100.0
        );
        assert!(rate <= 0.06, "false-alarm rate {rate}");
    }

    #[test]
    fn detects_five_percent_slowdown() {
        let rule = StoppingRule::default();
        let ([faster, slower, same], mean_runs) = rates(&rule, 1.05, 3_000_000, 2000);
        let power = slower as f64 / 2000.0;
        println!(
            "true ratio 1.05, CV 3% (seeds 3000000..3002000): SLOWER {slower}, FASTER {faster}, SAME {same} of 2000 -> power {:.2}%, mean runs/side {mean_runs:.1}",
            power * 100.0
        );
        assert!(power >= 0.90, "power {power}");
        assert_eq!(faster, 0);
    }

    #[test]
    fn detects_five_percent_speedup() {
        let rule = StoppingRule::default();
        let ([faster, slower, same], mean_runs) = rates(&rule, 0.95, 4_000_000, 2000);
        let power = faster as f64 / 2000.0;
        println!(
            "true ratio 0.95, CV 3% (seeds 4000000..4002000): FASTER {faster}, SLOWER {slower}, SAME {same} of 2000 -> power {:.2}%, mean runs/side {mean_runs:.1}",
            power * 100.0
        );
        assert!(power >= 0.90, "power {power}");
        assert_eq!(slower, 0);
    }

    #[test]
    fn power_for_smaller_effects() {
        // Not a requirement, a record: how often 2% and 3% slowdowns at 3% CV
        // are found within 100 runs per side (seeds 5000000.. and 6000000..).
        let rule = StoppingRule::default();
        let ([_, slower_2, _], runs_2) = rates(&rule, 1.02, 5_000_000, 2000);
        let ([_, slower_3, _], runs_3) = rates(&rule, 1.03, 6_000_000, 2000);
        println!(
            "true ratio 1.02, CV 3% (seeds 5000000..5002000): SLOWER {slower_2} of 2000, \
             mean runs/side {runs_2:.1}; true ratio 1.03 (seeds 6000000..6002000): \
             SLOWER {slower_3} of 2000, mean runs/side {runs_3:.1}"
        );
        assert!(slower_3 >= 1600, "power at 3%: {slower_3}/2000");
        assert!(slower_2 >= 200, "power at 2%: {slower_2}/2000");
    }

    #[test]
    fn aa_at_low_noise_is_same() {
        // At 1% CV the ±1% band can be reached within 100 runs: A/A should
        // end SAME (seeds 7000000..7002000, 1% CV instead of 3%).
        let rule = StoppingRule::default();
        let outcomes: Vec<SimulationOutcome> = (0..2000u64)
            .into_par_iter()
            .map(|i| simulate_outcome(&rule, 100, 1.0, 0.01, 7_000_000 + i))
            .collect();
        let same = outcomes
            .iter()
            .filter(|o| o.verdict == Verdict::Same)
            .count();
        let false_alarms = outcomes
            .iter()
            .filter(|o| matches!(o.verdict, Verdict::Faster | Verdict::Slower))
            .count();
        let mean_runs = outcomes.iter().map(|o| o.runs_per_side as f64).sum::<f64>() / 2000.0;
        println!(
            "A/A at CV 1% (seeds 7000000..7002000): SAME {same}, FASTER+SLOWER {false_alarms} of 2000, mean runs/side {mean_runs:.1}"
        );
        assert!(same >= 1800, "SAME {same}/2000");
        assert!(false_alarms <= 120);
    }

    #[test]
    fn higher_is_better_swaps_the_simulated_verdict() {
        let rule = StoppingRule {
            higher_is_better: vec![true],
            ..StoppingRule::default()
        };
        // A 20% higher throughput at 3% CV is decided at the first looks.
        assert_eq!(simulate(&rule, 100, 1.2, 0.03, 5), Verdict::Faster);
        assert_eq!(simulate(&rule, 100, 1.0 / 1.2, 0.03, 5), Verdict::Slower);
    }

    #[test]
    fn simulation_is_deterministic() {
        let rule = StoppingRule::default();
        for seed in 0..20 {
            assert_eq!(
                simulate(&rule, 60, 1.02, 0.03, seed),
                simulate(&rule, 60, 1.02, 0.03, seed)
            );
        }
    }
}
