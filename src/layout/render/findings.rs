//! The words of a layout comparison's findings beside its verdict: how much
//! of the default layout's difference is placement, the layouts where a build
//! is fragile, and a busy machine. `prose` puts them into the sentences and
//! notes every format carries.

use crate::layout::LayoutReport;

/// "the default layout shows +17.0%, of which 12.1 points are placement".
pub fn placement(default_estimate: f64, points: f64) -> String {
    let signed = |x: f64| format!("{}{:.1}%", if x < 0.0 { "−" } else { "+" }, x.abs() * 100.0);
    let shown = default_estimate - 1.0;
    if shown * (shown - points) < 0.0 {
        format!(
            "the default layout shows {}, the other way: placement, not the code",
            signed(shown)
        )
    } else {
        format!(
            "the default layout shows {}, of which {:.1} points are placement",
            signed(shown),
            points.abs() * 100.0
        )
    }
}

/// "B is 15.2% slower than in its typical layout in 2 of 16 layouts (seeds
/// 5, 11), reproduced in 3 of 3 rounds each".
pub fn fragility(
    f: &crate::stats::fragility::Fragility,
    cand: &str,
    seeds: &[u64],
    higher_is_better: bool,
) -> String {
    let mut parts = Vec::new();
    for (layouts, worse) in [(&f.worse, true), (&f.better, false)] {
        if layouts.is_empty() {
            continue;
        }
        // How far from typical, the largest first.
        let away: Vec<f64> = layouts
            .iter()
            .map(|l| ((l.ratio / f.typical).ln().abs()).exp() - 1.0)
            .collect();
        let most = away.iter().copied().fold(0.0, f64::max);
        let least = away.iter().copied().fold(f64::INFINITY, f64::min);
        let size = if layouts.len() == 1 || (most - least) < 0.0005 {
            format!("{:.1}%", most * 100.0)
        } else {
            format!("{:.1}–{:.1}%", least * 100.0, most * 100.0)
        };
        let word = match (worse, higher_is_better) {
            (true, false) => "slower",
            (false, false) => "faster",
            (true, true) => "worse",
            (false, true) => "better",
        };
        let named: Vec<usize> = layouts
            .iter()
            .map(|l| seeds.get(l.variant).map_or(l.variant, |&s| s as usize))
            .collect();
        let rounds: Vec<usize> = layouts.iter().map(|l| l.rounds).collect();
        let reproduced = if rounds.iter().all(|&r| r == rounds[0]) {
            format!("reproduced in {0} of {0} rounds", rounds[0])
        } else {
            "reproduced in every round that measured it".to_string()
        };
        parts.push(format!(
            "{cand} is {size} {word} than typical in {} of {} layouts (seed{} {}), {reproduced}",
            layouts.len(),
            f.variants,
            if layouts.len() == 1 { "" } else { "s" },
            listed(&named, 6),
        ));
    }
    format!("fragile: {}", parts.join("; "))
}

/// "the machine was busy during the runs: load average 4.9 (up to 5.6) on 2
/// CPUs", when `MachineLoad::busy` says so.
pub fn busy_machine(report: &LayoutReport) -> Option<String> {
    let load = &report.load;
    if !load.busy() {
        return None;
    }
    Some(format!(
        "the machine was busy during the runs: load average {:.1} (up to {:.1}) on {} CPU{}; \
         runs a busy machine spoiled are set aside, but noisier runs need more rounds to decide",
        load.mean().unwrap_or(0.0),
        load.max().unwrap_or(0.0),
        load.cpus,
        if load.cpus == 1 { "" } else { "s" }
    ))
}

/// Up to `most` numbers, then how many more.
pub fn listed(numbers: &[usize], most: usize) -> String {
    let shown: Vec<String> = numbers.iter().take(most).map(|v| v.to_string()).collect();
    match numbers.len().saturating_sub(most) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}
