//! Process-start overhead: the wall time of starting a process that does nothing.
//!
//! A command's wall time includes fork, exec, dynamic loading and exit, about a
//! millisecond here. That cost is the same for A and B and dilutes their ratio:
//! `sleep 0.02` vs `sleep 0.01` measures 1.9×, not 2×. Like hyperfine's shell
//! correction, we measure a no-op start (`true`, or `sh -c true` under `--shell`)
//! and subtract its median from `wall`. We only do so when it is under a fifth of
//! both commands' times, so the corrected values stay well away from zero.

use crate::run::command::CommandSpec;
use crate::run::{Prepared, Runner};
use crate::stats::descriptive::median;

/// How many no-op starts to time.
const CALIBRATION_RUNS: usize = 9;
/// The correction applies only if the overhead is below this share of each command's median wall time.
pub const MAX_SHARE: f64 = 0.2;

/// The median wall time of a no-op start, in seconds; None if `true` cannot be run.
pub fn measure(runner: &mut Runner, shell: bool) -> Option<f64> {
    let spec = CommandSpec::parse("no-op", "true", shell).ok()?;
    let noop = Prepared::new(&spec).ok()?;
    let mut walls = Vec::with_capacity(CALIBRATION_RUNS);
    for _ in 0..CALIBRATION_RUNS {
        walls.push(runner.run_wall_only(&noop).ok()?);
    }
    Some(median(&walls))
}

/// Whether subtracting `overhead` is safe for commands whose median walls are given.
pub fn applicable(overhead: f64, medians: &[f64]) -> bool {
    overhead > 0.0
        && medians
            .iter()
            .all(|m| m.is_finite() && overhead < MAX_SHARE * m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correction_only_for_commands_much_longer_than_a_start() {
        assert!(applicable(0.001, &[0.010, 0.020]));
        assert!(!applicable(0.001, &[0.004, 0.020]));
        assert!(!applicable(0.0, &[0.010, 0.020]));
        assert!(!applicable(0.001, &[f64::NAN, 0.020]));
    }
}
