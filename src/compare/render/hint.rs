//! The "to decide" sentences of `compare`: each undecided cause found by the
//! analysis (`compare::Cause`, facts with numbers) in words, with the option
//! that would address it.

use super::prose::percent;
use crate::compare::{Cause, CompareReport, Limit, MetricReport};
use crate::report::units::trimmed;
use crate::stats::verdict::Verdict;

/// What the sentences need besides the causes.
pub struct Context<'a> {
    pub names: [&'a str; 2],
    pub metric: &'a str,
    /// The margin as a fraction (0.01 = ±1%).
    pub margin: f64,
    /// Whether the runs were already pinned (`--pin`).
    pub pinned: bool,
}

/// One sentence per cause, in the order the analysis found them.
pub fn lines(causes: &[Cause], context: &Context) -> Vec<String> {
    let more_runs = causes.iter().any(|c| matches!(c, Cause::MoreRuns { .. }));
    causes
        .iter()
        .map(|cause| line(cause, context, more_runs))
        .collect()
}

impl<'a> Context<'a> {
    /// The context of metric `m` in `report`.
    pub fn of(report: &'a CompareReport, m: &'a MetricReport) -> Self {
        Context {
            names: super::prose::names(report),
            metric: &m.name,
            margin: report.settings.margin,
            pinned: report.settings.pin.is_some(),
        }
    }
}

/// The sentences of metric `m` joined into one hint (the JSON's `hint`), or
/// None when there is nothing to say.
pub fn joined(report: &CompareReport, m: &MetricReport) -> Option<String> {
    let lines = lines(&m.causes, &Context::of(report, m));
    (!lines.is_empty()).then(|| lines.join("; "))
}

fn line(cause: &Cause, context: &Context, more_runs: bool) -> String {
    let margin = percent(context.margin);
    match cause {
        Cause::TooFewRuns { runs } => format!(
            "{runs} runs per command are too few for a finite interval at this level; allow more runs (--max-runs, --max-time)"
        ),
        Cause::RunOutliers {
            side,
            runs,
            far_out,
            tail,
            worst,
        } => {
            let name = context.names[(*side).min(1)];
            let what = if *far_out > 0 {
                format!("{far_out} of {runs} runs of {name} are far out (beyond 3 IQR)")
            } else {
                format!("{tail} of {runs} runs of {name} form a long tail (beyond 1.5 IQR)")
            };
            let mut remedies = vec!["more runs".to_string()];
            if context.metric == "wall" {
                remedies.push("--metric user (CPU time, which waiting for a CPU does not inflate)".into());
            }
            if !context.pinned {
                remedies.push("--pin CPU".into());
            }
            format!(
                "{what}, the farthest {:+.1}% from its median: {} would tame them",
                worst * 100.0,
                or_list(&remedies)
            )
        }
        Cause::MoreRuns {
            runs,
            runs_made,
            stopped_by,
            max_runs,
            max_time_s,
        } => {
            let mut text = format!("about {runs} runs per command would likely decide it");
            if let Some(limit) = stopped_by {
                text.push_str(&format!(
                    "; {} stopped the run at {runs_made}",
                    limit.option()
                ));
            }
            let time = max_time_s.map(|t| format!("--max-time {}", duration(t)));
            let count = max_runs.map(|n| format!("--max-runs {n}"));
            // The limit that stopped the run comes first.
            let raise: Vec<String> = match stopped_by {
                Some(Limit::MaxRuns) => [count, time],
                _ => [time, count],
            }
            .into_iter()
            .flatten()
            .collect();
            if !raise.is_empty() {
                text.push_str(&format!(": try {}", raise.join(" ")));
            }
            text
        }
        Cause::MarginWithinBudget {
            budget_runs,
            same_margin,
            direction_margin,
            direction,
            runs_needed,
        } => {
            let lead = if more_runs {
                format!("or, with {budget_runs} runs per command")
            } else {
                let needed = match runs_needed {
                    Some(n) => format!("it would take about {n} runs per command"),
                    None => "no run count within 100× these would decide it".to_string(),
                };
                format!(
                    "the effect is too close to the {margin} margin for the run noise ({needed}); with {budget_runs} runs per command"
                )
            };
            let mut text = format!(
                "{lead}, --margin {} would call it SAME",
                trimmed(round_up(same_margin * 100.0))
            );
            if let (Some(m), Some(v)) = (direction_margin, direction) {
                let below = round_down(m * 100.0);
                if below > 0.0 {
                    let word = match v {
                        Verdict::Faster => "FASTER",
                        _ => "SLOWER",
                    };
                    text.push_str(&format!(
                        " and --margin {} would call it {word}",
                        trimmed(below)
                    ));
                }
            }
            text
        }
    }
}

/// Up to the next 0.1 (a margin that is wide enough).
fn round_up(percent: f64) -> f64 {
    (percent * 10.0 - 1e-9).ceil() / 10.0
}

/// Down to the previous 0.1 (a margin that is narrow enough).
fn round_down(percent: f64) -> f64 {
    (percent * 10.0 + 1e-9).floor() / 10.0
}

/// "90s", "4m", as `--max-time` takes them.
fn duration(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0}s")
    } else {
        format!("{:.0}m", (seconds / 60.0).ceil())
    }
}

/// "a, b or c".
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(pinned: bool) -> Context<'static> {
        Context {
            names: ["A", "B"],
            metric: "wall",
            margin: 0.01,
            pinned,
        }
    }

    #[test]
    fn the_limit_that_stopped_is_named_and_raised_first() {
        let cause = Cause::MoreRuns {
            runs: 79,
            runs_made: 28,
            stopped_by: Some(Limit::MaxTime),
            max_runs: None,
            max_time_s: Some(180.0),
        };
        assert_eq!(
            lines(&[cause], &context(false)),
            ["about 79 runs per command would likely decide it; --max-time stopped the run at 28: try --max-time 3m"]
        );
        let cause = Cause::MoreRuns {
            runs: 150,
            runs_made: 100,
            stopped_by: Some(Limit::MaxRuns),
            max_runs: Some(150),
            max_time_s: Some(90.0),
        };
        assert_eq!(
            lines(&[cause], &context(false)),
            ["about 150 runs per command would likely decide it; --max-runs stopped the run at 100: try --max-runs 150 --max-time 90s"]
        );
    }

    #[test]
    fn outliers_say_how_many_and_how_far_and_what_tames_them() {
        let cause = Cause::RunOutliers {
            side: 1,
            runs: 20,
            far_out: 2,
            tail: 0,
            worst: 0.412,
        };
        let text = lines(std::slice::from_ref(&cause), &context(false)).remove(0);
        assert_eq!(
            text,
            "2 of 20 runs of B are far out (beyond 3 IQR), the farthest +41.2% from its median: \
             more runs, --metric user (CPU time, which waiting for a CPU does not inflate) or --pin CPU would tame them"
        );
        let pinned = lines(&[cause], &context(true)).remove(0);
        assert!(!pinned.contains("--pin"), "{pinned}");
    }

    #[test]
    fn a_same_margin_on_a_tenth_is_not_rounded_up_past_it() {
        let cause = Cause::MarginWithinBudget {
            budget_runs: 100,
            same_margin: 0.025,
            direction_margin: None,
            direction: None,
            runs_needed: None,
        };
        let text = lines(&[cause], &context(false)).remove(0);
        assert!(text.ends_with("--margin 2.5 would call it SAME"), "{text}");
    }

    #[test]
    fn margins_round_outwards_and_stand_alone_without_more_runs() {
        let cause = Cause::MarginWithinBudget {
            budget_runs: 100,
            same_margin: 0.01234,
            direction_margin: Some(0.0041),
            direction: Some(Verdict::Slower),
            runs_needed: None,
        };
        assert_eq!(
            lines(&[cause], &context(false)),
            ["the effect is too close to the ±1% margin for the run noise (no run count within 100× these would decide it); \
              with 100 runs per command, --margin 1.3 would call it SAME and --margin 0.4 would call it SLOWER"]
        );
    }
}
