//! Argument groups the verbs share through `#[command(flatten)]`: what to
//! measure, how a verdict is decided, the seed, and how runs are controlled;
//! and the value parsers behind them. Each flag is defined once here, so it
//! has the same name, default, help text and parsing in every verb that takes
//! it. The groups check their own values and turn them into the options'
//! types; the defaults they leave open (`None`) are the verb options' own
//! `Default`s, so the help text and the library cannot drift apart (a test
//! holds them together).

use super::exit::usage;
use crate::limits;
use crate::run::metric::{HigherIsBetter, MetricSpec};
use crate::run::spawn;
use anyhow::Result;
use clap::Args;
use std::time::Duration;

/// `-m, --metric`: what to measure (compare, layout).
#[derive(Debug, Clone, Args)]
pub struct MetricArgs {
    /// What to measure: wall, user, sys, rss, regex:PATTERN, regex@OPTIONS:PATTERN (options: first, last, median, stdout, stderr), json:POINTER, gbench, criterion, criterion:PATH ({dir}: the layout variant's directory), libtest (repeatable).
    #[arg(
        short = 'm',
        long = "metric",
        value_name = "METRIC",
        default_value = "wall"
    )]
    pub metrics: Vec<String>,
}

impl MetricArgs {
    /// The metrics, parsed; a bad one is bad input (exit 1) naming it.
    pub fn specs(&self) -> Result<Vec<MetricSpec>> {
        self.metrics.iter().map(|m| MetricSpec::parse(m)).collect()
    }
}

/// `--margin`'s help, without its default.
pub const MARGIN_HELP: &str = "Equivalence margin in percent: within ±margin counts as SAME";
/// `--alpha`'s help, without its default.
pub const ALPHA_HELP: &str = "Total false-alarm rate over all metrics, candidates and looks";
/// The default `--margin` in percent (the verbs' options hold it as a fraction).
pub const DEFAULT_MARGIN_PERCENT: f64 = 1.0;
/// The default `--alpha`.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// How a verdict is decided: the direction, the equivalence margin and the
/// false-alarm rate (compare, layout, analyze), and the seed. `--margin` and
/// `--alpha` are `None` when not given: `analyze` then keeps a report's own.
#[derive(Debug, Clone, Args)]
pub struct DecisionArgs {
    /// Bigger is better (throughput) for the metrics read from output (regex:, json:, a CSV's), or with =NAME,… only those named; wall, user, sys, rss, cycles and instructions are costs, always lower-is-better.
    #[arg(
        long,
        value_name = "NAME",
        num_args = 0..,
        require_equals = true,
        value_delimiter = ','
    )]
    pub higher_is_better: Option<Vec<String>>,
    #[arg(long, value_name = "PERCENT", help = format!("{MARGIN_HELP} [default: {DEFAULT_MARGIN_PERCENT}]"))]
    pub margin: Option<f64>,
    #[arg(long, help = format!("{ALPHA_HELP} [default: {DEFAULT_ALPHA}]"))]
    pub alpha: Option<f64>,
    #[command(flatten)]
    pub seed: SeedArgs,
}

impl DecisionArgs {
    /// `--higher-is-better[=NAME,…]`; naming a cost is bad input (exit 1).
    pub fn higher_is_better(&self) -> Result<HigherIsBetter> {
        HigherIsBetter::from_flag(self.higher_is_better.as_deref())
    }

    /// `--margin` as a fraction (0.01 = ±1%), if given; outside [0, 100) is
    /// a usage error ([`limits::margin`]).
    pub fn margin(&self) -> Result<Option<f64>> {
        match self.margin {
            Some(m) => Ok(Some(limits::margin(m / 100.0).map_err(bound)?)),
            None => Ok(None),
        }
    }

    /// `--alpha`, if given; outside (0, 1) is a usage error ([`limits::alpha`]).
    pub fn alpha(&self) -> Result<Option<f64>> {
        match self.alpha {
            Some(a) => Ok(Some(limits::alpha(a).map_err(bound)?)),
            None => Ok(None),
        }
    }
}

/// A value out of its [`limits`] bounds as a usage error (exit 2).
pub fn bound(error: limits::Bound) -> anyhow::Error {
    usage(error.0)
}

/// `--seed`: every random choice a verb makes (compare, layout, analyze, probe, demo).
#[derive(Debug, Clone, Args)]
pub struct SeedArgs {
    /// Seed for every random choice (run order, layouts, jitter, bootstrap, probe chains).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// How each run is started and bounded (compare, layout).
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Run commands through `sh -c` (pipes, globs, variables); template placeholders are shell-quoted.
    #[arg(long)]
    pub shell: bool,
    /// Kill a run after this long and stop (e.g. 10s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Pin every measured run to this CPU.
    #[arg(long, value_name = "CPU")]
    pub pin: Option<usize>,
}

impl RunArgs {
    /// `--pin`, checked against the CPUs this process may use.
    pub fn pin(&self) -> Result<Option<usize>> {
        if let Some(cpu) = self.pin {
            spawn::check_pin(cpu)?;
        }
        Ok(self.pin)
    }
}

pub use crate::limits::MAX_DURATION;

/// "90", "90s", "1.5s", "500ms", "2m", "1h"; above 0 and at most a year
/// ([`limits::duration`]: 0 would time out every run, or end before the first).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = text.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a duration: {text:?} (try 90s, 2m, 500ms)"))?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(format!("not a duration: {text:?}"));
    }
    let seconds = value * scale;
    if seconds > MAX_DURATION.as_secs_f64() {
        return Err(format!(
            "{text:?} is longer than a year, the most any option takes"
        ));
    }
    limits::duration("a duration", Duration::from_secs_f64(seconds))
        .map_err(|_| format!("{text:?}: must be longer than 0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("inf").is_err());
        for zero in ["0", "0s", "0ms", "0.0h"] {
            let error = parse_duration(zero).unwrap_err();
            assert!(error.ends_with("must be longer than 0"), "{zero}: {error}");
        }
    }

    #[test]
    fn durations_past_a_year_are_refused_not_a_panic() {
        assert_eq!(parse_duration("8760h").unwrap(), MAX_DURATION);
        for huge in ["8761h", "1e19", "1e20", "18446744073709551616", "1e300m"] {
            let error = parse_duration(huge).unwrap_err();
            assert!(error.contains("longer than a year"), "{huge}: {error}");
        }
    }

    #[test]
    fn the_defaults_the_help_states_are_the_options_defaults() {
        use crate::compare::CompareOptions;
        use crate::layout::LayoutOptions;
        let command = crate::run::command::CommandSpec::parse("A", "true", false).unwrap();
        let compare = CompareOptions::for_commands([command.clone(), command]);
        let layout = LayoutOptions::default();
        for (margin, alpha) in [
            (compare.margin, compare.alpha),
            (layout.margin, layout.alpha),
        ] {
            assert_eq!(margin, DEFAULT_MARGIN_PERCENT / 100.0);
            assert_eq!(alpha, DEFAULT_ALPHA);
        }
        assert_eq!((compare.seed, layout.seed), (1, 1));
    }

    #[test]
    fn margin_and_alpha_are_checked_and_margin_becomes_a_fraction() {
        let decision = |margin, alpha| DecisionArgs {
            higher_is_better: None,
            margin,
            alpha,
            seed: SeedArgs { seed: 1 },
        };
        assert_eq!(decision(Some(2.5), None).margin().unwrap(), Some(0.025));
        assert_eq!(decision(None, None).margin().unwrap(), None);
        assert_eq!(decision(None, Some(0.01)).alpha().unwrap(), Some(0.01));
        for bad in [-1.0, 100.0, f64::NAN] {
            assert!(decision(Some(bad), None).margin().is_err(), "margin {bad}");
        }
        for bad in [0.0, 1.0, 2.0, f64::NAN] {
            assert!(decision(None, Some(bad)).alpha().is_err(), "alpha {bad}");
        }
    }
}
