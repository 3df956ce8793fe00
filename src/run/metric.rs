//! Metrics: what number a run yields, and how to read it from the run.
//!
//! `wall|user|sys|rss` come from the runner itself; `json:`, `gbench`,
//! `criterion` and `libtest` read the command's stdout; `criterion:PATH`
//! reads Criterion's `estimates.json` files after the run
//! (see [`super::criterion`]); `regex:` reads stdout, then stderr, or the one
//! it names (see [`super::regex_metric`]). One run may yield several metrics:
//! a regex with several named groups, or one per benchmark.
//!
//! It is over 600 lines because the spec parser, the direction rules every verdict
//! uses and each kind's extraction are one contract; a third is unit tests.

use super::criterion;
use super::regex_metric::{RegexMetric, SeveralMatches};
use super::spawn::Outcome;
use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;

/// Bytes of output kept for metrics that read it: the head of stdout, and the
/// tail of stderr when a `regex:` metric may read it. Past it a metric that
/// found nothing says the output was cut.
pub const METRIC_OUTPUT_BYTES: usize = 256 << 20;

/// One `--metric` argument.
#[derive(Debug, Clone)]
pub enum MetricSpec {
    Wall,
    User,
    Sys,
    Rss,
    Regex(RegexMetric),
    Json(String),
    Gbench,
    /// Criterion: its output on stdout (None), or the `estimates.json`
    /// file(s) at a path, `{dir}` standing for the run's variant directory.
    Criterion(Option<String>),
    /// libtest's `bench: N ns/iter` lines.
    Libtest,
}

/// A unit, so reports can scale values sensibly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Seconds,
    Kibibytes,
    Nanoseconds,
    None,
}

/// Which way is better for one metric: decided once, where metrics are
/// resolved ([`HigherIsBetter::direction`]), carried in each metric's report
/// row, and used by every verdict on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// A cost (time, memory, cycles): smaller is better.
    Lower,
    /// A throughput: larger is better.
    Higher,
}

impl Direction {
    pub fn higher_is_better(self) -> bool {
        self == Direction::Higher
    }

    /// `lower` or `higher`, as the JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
        }
    }

    /// The JSON's `"lower"`/`"higher"`; anything else is None.
    pub fn parse(text: &str) -> Option<Direction> {
        match text {
            "lower" => Some(Direction::Lower),
            "higher" => Some(Direction::Higher),
            _ => None,
        }
    }
}

/// Metric names that are costs whatever their unit says: the runner's own
/// (`wall`, `user`, `sys`, `rss`) and the counters' (`cycles`,
/// `instructions`), also as a CSV's `metric` column names them.
pub const COST_NAMES: [&str; 6] = ["wall", "user", "sys", "rss", "cycles", "instructions"];

/// Whether a metric is a cost, always lower-is-better: one of
/// [`COST_NAMES`], or one with a unit (seconds, KiB, nanoseconds: wall,
/// user, sys, rss and Google Benchmark's real time).
pub fn is_cost(name: &str, unit: Unit) -> bool {
    unit != Unit::None || COST_NAMES.contains(&name)
}

/// `--higher-is-better`: off, bare (every metric that is not a cost:
/// `regex:` and `json:` metrics, a CSV's own metrics), or `=NAME,…` (only
/// the metrics so named; a cost cannot be named).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum HigherIsBetter {
    #[default]
    Off,
    All,
    Named(Vec<String>),
}

impl HigherIsBetter {
    /// The flag's values: none given is [`HigherIsBetter::All`]; a cost
    /// named is bad input (a one-line cause).
    pub fn from_flag(values: Option<&[String]>) -> Result<HigherIsBetter> {
        let Some(values) = values else {
            return Ok(HigherIsBetter::Off);
        };
        let names: Vec<String> = values
            .iter()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if let Some(cost) = names.iter().find(|n| COST_NAMES.contains(&n.as_str())) {
            bail!("--higher-is-better={cost}: {cost} is a cost (time, memory or a counter), always lower-is-better");
        }
        Ok(if names.is_empty() {
            HigherIsBetter::All
        } else {
            HigherIsBetter::Named(names)
        })
    }

    /// The direction of the metric `name` with `unit`: a cost is
    /// [`Direction::Lower`] always.
    pub fn direction(&self, name: &str, unit: Unit) -> Direction {
        let higher = match self {
            HigherIsBetter::Off => false,
            HigherIsBetter::All => !is_cost(name, unit),
            HigherIsBetter::Named(names) => !is_cost(name, unit) && names.iter().any(|n| n == name),
        };
        if higher {
            Direction::Higher
        } else {
            Direction::Lower
        }
    }

    /// The metrics among `metrics` the flag does not turn around although it
    /// was given: the costs, for the bare flag; for `=NAME,…`, the named
    /// costs (none: refused) and the names no metric has, as
    /// (`costs`, `unknown names`).
    pub fn unapplied(&self, metrics: &[(String, Unit)]) -> (Vec<String>, Vec<String>) {
        match self {
            HigherIsBetter::Off => (Vec::new(), Vec::new()),
            HigherIsBetter::All => (
                metrics
                    .iter()
                    .filter(|(n, u)| is_cost(n, *u))
                    .map(|(n, _)| n.clone())
                    .collect(),
                Vec::new(),
            ),
            HigherIsBetter::Named(names) => (
                metrics
                    .iter()
                    .filter(|(n, u)| is_cost(n, *u) && names.contains(n))
                    .map(|(n, _)| n.clone())
                    .collect(),
                names
                    .iter()
                    .filter(|n| !metrics.iter().any(|(m, _)| m == *n))
                    .cloned()
                    .collect(),
            ),
        }
    }

    /// How the JSON's `settings.higher_is_better` writes it: `false`,
    /// `true` (bare) or the names.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            HigherIsBetter::Off => serde_json::Value::Bool(false),
            HigherIsBetter::All => serde_json::Value::Bool(true),
            HigherIsBetter::Named(names) => serde_json::json!(names),
        }
    }

    /// Back from [`to_json`](Self::to_json); anything else (absent) is off.
    pub fn from_json(value: Option<&serde_json::Value>) -> HigherIsBetter {
        match value {
            Some(serde_json::Value::Bool(true)) => HigherIsBetter::All,
            Some(serde_json::Value::Array(names)) => HigherIsBetter::Named(
                names
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect(),
            ),
            _ => HigherIsBetter::Off,
        }
    }

    /// Both flags together: the bare flag wins; names are joined.
    pub fn or(&self, other: &HigherIsBetter) -> HigherIsBetter {
        match (self, other) {
            (HigherIsBetter::Off, x) | (x, HigherIsBetter::Off) => x.clone(),
            (HigherIsBetter::All, _) | (_, HigherIsBetter::All) => HigherIsBetter::All,
            (HigherIsBetter::Named(a), HigherIsBetter::Named(b)) => {
                let mut names = a.clone();
                names.extend(b.iter().filter(|n| !a.contains(n)).cloned());
                HigherIsBetter::Named(names)
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for HigherIsBetter {
    fn deserialize<D: serde::Deserializer<'de>>(input: D) -> std::result::Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(input)?;
        Ok(HigherIsBetter::from_json(Some(&value)))
    }
}

impl Serialize for HigherIsBetter {
    fn serialize<S: serde::Serializer>(&self, out: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(out)
    }
}

/// What one run yields for one metric spec.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extraction {
    pub values: Vec<MetricValue>,
    /// `regex:` metrics that matched several disagreeing values in this run.
    pub several: Vec<SeveralMatches>,
}

/// One value a run produced.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct MetricValue {
    pub name: String,
    pub value: f64,
    pub unit: Unit,
}

impl MetricSpec {
    pub fn parse(text: &str) -> Result<MetricSpec> {
        Ok(match text {
            "wall" => MetricSpec::Wall,
            "user" => MetricSpec::User,
            "sys" => MetricSpec::Sys,
            "rss" => MetricSpec::Rss,
            "gbench" => MetricSpec::Gbench,
            "criterion" => MetricSpec::Criterion(None),
            "libtest" => MetricSpec::Libtest,
            _ => {
                if let Some(rest) = text
                    .strip_prefix("regex")
                    .filter(|r| r.starts_with([':', '@']))
                {
                    MetricSpec::Regex(RegexMetric::parse(rest)?)
                } else if let Some((name, rest)) = text
                    .split_once("=regex")
                    .filter(|(n, r)| r.starts_with([':', '@']) && !n.contains([':', '@', '(']))
                {
                    MetricSpec::Regex(RegexMetric::parse(rest)?.named(name)?)
                } else if let Some(pointer) = text.strip_prefix("json:") {
                    if !(pointer.is_empty() || pointer.starts_with('/')) {
                        bail!("json metric needs a JSON pointer such as json:/results/0/time, got {pointer:?}");
                    }
                    MetricSpec::Json(pointer.to_string())
                } else if let Some(path) = text.strip_prefix("criterion:") {
                    if path.trim().is_empty() {
                        bail!("criterion: needs a path, e.g. criterion:target/criterion or criterion:{{dir}}/criterion");
                    }
                    MetricSpec::Criterion(Some(path.to_string()))
                } else {
                    bail!("unknown metric {text:?}: expected wall, user, sys, rss, regex:PATTERN, regex@OPTIONS:PATTERN (NAME=regex… to name it), json:POINTER, gbench, criterion, criterion:PATH or libtest")
                }
            }
        })
    }

    /// The text form, as given on the command line.
    pub fn label(&self) -> String {
        match self {
            MetricSpec::Wall => "wall".into(),
            MetricSpec::User => "user".into(),
            MetricSpec::Sys => "sys".into(),
            MetricSpec::Rss => "rss".into(),
            MetricSpec::Regex(regex) => regex.label(),
            MetricSpec::Json(pointer) => format!("json:{pointer}"),
            MetricSpec::Gbench => "gbench".into(),
            MetricSpec::Criterion(None) => "criterion".into(),
            MetricSpec::Criterion(Some(path)) => format!("criterion:{path}"),
            MetricSpec::Libtest => "libtest".into(),
        }
    }

    /// Whether extracting this metric needs the command's output.
    pub fn reads_output(&self) -> bool {
        matches!(
            self,
            MetricSpec::Regex(_)
                | MetricSpec::Json(_)
                | MetricSpec::Gbench
                | MetricSpec::Criterion(None)
                | MetricSpec::Libtest
        )
    }

    /// Whether extracting this metric may read the command's stderr.
    pub fn reads_stderr(&self) -> bool {
        matches!(self, MetricSpec::Regex(r) if r.reads_stderr())
    }

    /// The value(s) this metric takes in one run.
    pub fn extract(&self, outcome: &Outcome) -> Result<Extraction> {
        self.extract_in(outcome, None, None)
    }

    /// [`extract`](Self::extract) for a run whose variant directory is `dir`
    /// (what `{dir}` stands for in `criterion:PATH`) and that started at
    /// `since` (an `estimates.json` older than that is a previous run's).
    pub fn extract_in(
        &self,
        outcome: &Outcome,
        dir: Option<&std::path::Path>,
        since: Option<std::time::SystemTime>,
    ) -> Result<Extraction> {
        let values = |values: Vec<MetricValue>| {
            Ok(Extraction {
                values,
                several: Vec::new(),
            })
        };
        let one = |name: &str, value: f64, unit| {
            values(vec![MetricValue {
                name: name.to_string(),
                value,
                unit,
            }])
        };
        match self {
            MetricSpec::Wall => one("wall", outcome.wall.as_secs_f64(), Unit::Seconds),
            MetricSpec::User => one("user", outcome.user.as_secs_f64(), Unit::Seconds),
            MetricSpec::Sys => one("sys", outcome.sys.as_secs_f64(), Unit::Seconds),
            MetricSpec::Rss => one("rss", outcome.max_rss_kib as f64, Unit::Kibibytes),
            MetricSpec::Regex(regex) => {
                let found = regex
                    .extract(&outcome.stdout, &outcome.stderr_tail)
                    .map_err(|e| match cut_note(outcome) {
                        Some(note) => anyhow!("{e:#} ({note})"),
                        None => e,
                    })?;
                Ok(Extraction {
                    values: found
                        .values
                        .into_iter()
                        .map(|(name, value)| MetricValue {
                            name,
                            value,
                            unit: Unit::None,
                        })
                        .collect(),
                    several: found.several,
                })
            }
            MetricSpec::Json(pointer) => {
                let json = parse_json(&outcome.stdout)?;
                let value = json
                    .pointer(pointer)
                    .ok_or_else(|| anyhow!("JSON pointer {pointer:?} not found in the output"))?;
                let number = json_number(value)
                    .ok_or_else(|| anyhow!("JSON pointer {pointer:?} is not a number: {value}"))?;
                one(&format!("json:{pointer}"), number, Unit::None)
            }
            MetricSpec::Gbench => values(extract_gbench(&parse_json(&outcome.stdout)?)?),
            MetricSpec::Criterion(None) => values(timed(criterion::parse_output(
                &String::from_utf8_lossy(&outcome.stdout),
            )?)),
            MetricSpec::Libtest => values(timed(criterion::parse_libtest(
                &String::from_utf8_lossy(&outcome.stdout),
            )?)),
            MetricSpec::Criterion(Some(path)) => {
                let path = match (path.contains("{dir}"), dir) {
                    (false, _) => path.clone(),
                    (true, Some(dir)) => path.replace("{dir}", &dir.display().to_string()),
                    (true, None) => bail!(
                        "criterion:{path}: {{dir}} is a layout variant's directory; this run has none"
                    ),
                };
                values(timed(criterion::read_estimates(
                    std::path::Path::new(&path),
                    since,
                )?))
            }
        }
    }
}

/// Benchmarks' (name, nanoseconds) as metric values.
fn timed(pairs: Vec<criterion::Timed>) -> Vec<MetricValue> {
    let value = |(name, value)| MetricValue {
        name,
        value,
        unit: Unit::Nanoseconds,
    };
    pairs.into_iter().map(value).collect()
}

fn parse_json(stdout: &[u8]) -> Result<serde_json::Value> {
    serde_json::from_slice(stdout).context("the command's stdout is not valid JSON")
}

fn json_number(value: &serde_json::Value) -> Option<f64> {
    match value {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Google Benchmark's `--benchmark_format=json`: one metric per benchmark, its real
/// time in nanoseconds. Aggregate rows (mean, median, stddev) are skipped.
fn extract_gbench(json: &serde_json::Value) -> Result<Vec<MetricValue>> {
    let benchmarks = json
        .get("benchmarks")
        .and_then(|b| b.as_array())
        .ok_or_else(|| {
            anyhow!(
                "no \"benchmarks\" array: is this Google Benchmark JSON (--benchmark_format=json)?"
            )
        })?;
    let mut values = Vec::new();
    for bench in benchmarks {
        if bench.get("run_type").and_then(|r| r.as_str()) == Some("aggregate") {
            continue;
        }
        let name = bench
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or("benchmark");
        let Some(time) = bench.get("real_time").and_then(json_number) else {
            continue;
        };
        let scale = match bench
            .get("time_unit")
            .and_then(|u| u.as_str())
            .unwrap_or("ns")
        {
            "s" => 1e9,
            "ms" => 1e6,
            "us" => 1e3,
            _ => 1.0,
        };
        if !values.iter().any(|v: &MetricValue| v.name == name) {
            values.push(MetricValue {
                name: name.to_string(),
                value: time * scale,
                unit: Unit::Nanoseconds,
            });
        }
    }
    if values.is_empty() {
        bail!("Google Benchmark JSON holds no benchmark with a real_time");
    }
    Ok(values)
}

/// Why a metric that found nothing may have missed its line: the run wrote
/// more than the [`METRIC_OUTPUT_BYTES`] ghostbench reads (the head of
/// stdout, the tail of stderr), or None when all of it was read.
fn cut_note(outcome: &Outcome) -> Option<String> {
    let limit = METRIC_OUTPUT_BYTES;
    let mut cut = Vec::new();
    if outcome.stdout_truncated {
        cut.push(format!("only the first {} MiB of stdout", limit >> 20));
    }
    if outcome.stderr_tail.len() >= limit {
        cut.push(format!("only the last {} MiB of stderr", limit >> 20));
    }
    (!cut.is_empty()).then(|| {
        format!(
            "output cut: the run wrote more than ghostbench reads, so {} were searched",
            cut.join(" and ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::spawn::Exit;
    use std::time::Duration;

    fn outcome(stdout: &str, stderr: &str) -> Outcome {
        Outcome {
            wall: Duration::from_millis(12),
            user: Duration::from_millis(3),
            sys: Duration::from_millis(1),
            max_rss_kib: 2048,
            exit: Exit::Code(0),
            stdout: stdout.as_bytes().to_vec(),
            stdout_truncated: false,
            stderr_tail: stderr.as_bytes().to_vec(),
            leftovers: Default::default(),
        }
    }

    fn values(spec: &MetricSpec, o: &Outcome) -> Vec<(String, f64)> {
        let e = spec.extract(o).unwrap();
        e.values.into_iter().map(|v| (v.name, v.value)).collect()
    }

    #[test]
    fn regex_specs_parse_with_and_without_options() {
        let spec = MetricSpec::parse(r"regex@first,stderr:took ([0-9.]+) ms").unwrap();
        assert_eq!(spec.label(), r"regex@first,stderr:took ([0-9.]+) ms");
        assert!(spec.reads_output() && spec.reads_stderr());
        let o = outcome("took 1 ms", "took 2 ms\ntook 3 ms");
        assert_eq!(values(&spec, &o), vec![(spec.label(), 2.0)]);
        let named = MetricSpec::parse(r"took=regex@first:took ([0-9.]+) ms").unwrap();
        assert_eq!(named.label(), r"took=regex@first:took ([0-9.]+) ms");
        assert!(MetricSpec::parse(r"x=regex:(?P<a>\d+)").is_err());
        let plain = MetricSpec::parse(r"regex:took ([0-9.]+) ms").unwrap();
        assert_eq!(values(&plain, &o), vec![(plain.label(), 1.0)]);
        assert!(!MetricSpec::parse(r"regex@stdout:(\d)")
            .unwrap()
            .reads_stderr());
        assert!(!MetricSpec::Wall.reads_stderr());
    }

    #[test]
    fn several_matches_are_reported_with_the_values() {
        let spec = MetricSpec::parse(r"regex:(?m)^(?P<name>\w+) (?P<value>[0-9.]+)$").unwrap();
        let e = spec
            .extract(&outcome("virtual 1.5\nfnptr 2.5\nvirtual 1.0\n", ""))
            .unwrap();
        let pairs: Vec<(&str, f64)> = e
            .values
            .iter()
            .map(|v| (v.name.as_str(), v.value))
            .collect();
        assert_eq!(pairs, vec![("virtual", 1.0), ("fnptr", 2.5)]);
        assert_eq!(e.several.len(), 1);
        assert_eq!(e.several[0].name, "virtual");
        assert!(MetricSpec::Wall
            .extract(&outcome("", ""))
            .unwrap()
            .several
            .is_empty());
    }

    #[test]
    fn bad_specs_are_rejected() {
        assert!(MetricSpec::parse("regex:(a)(b)").is_err());
        assert!(MetricSpec::parse("regex:(").is_err());
        assert!(MetricSpec::parse("json:nope").is_err());
        assert!(MetricSpec::parse("cycles").is_err());
        assert!(MetricSpec::parse("regexp:(a)").is_err());
    }

    #[test]
    fn builtin_metrics_read_the_outcome() {
        let o = outcome("", "");
        assert_eq!(values(&MetricSpec::Wall, &o), vec![("wall".into(), 0.012)]);
        assert_eq!(values(&MetricSpec::Rss, &o), vec![("rss".into(), 2048.0)]);
    }

    #[test]
    fn json_pointer_and_gbench() {
        let spec = MetricSpec::parse("json:/result/time").unwrap();
        assert_eq!(
            values(&spec, &outcome(r#"{"result":{"time":"3.5"}}"#, "")),
            vec![("json:/result/time".into(), 3.5)]
        );
        assert!(spec.extract(&outcome("not json", "")).is_err());
        let gbench = r#"{"benchmarks":[
            {"name":"BM_a","run_type":"iteration","real_time":2.0,"time_unit":"us"},
            {"name":"BM_a_mean","run_type":"aggregate","real_time":9.0,"time_unit":"ns"},
            {"name":"BM_b","run_type":"iteration","real_time":7.0,"time_unit":"ns"}]}"#;
        assert_eq!(
            values(&MetricSpec::Gbench, &outcome(gbench, "")),
            vec![("BM_a".into(), 2000.0), ("BM_b".into(), 7.0)]
        );
    }

    #[test]
    fn costs_stay_lower_is_better_and_the_flag_turns_only_the_others() {
        let all = HigherIsBetter::from_flag(Some(&[])).unwrap();
        assert_eq!(all, HigherIsBetter::All);
        assert_eq!(all.direction("user", Unit::Seconds), Direction::Lower);
        assert_eq!(all.direction("cycles", Unit::None), Direction::Lower);
        assert_eq!(all.direction("BM_a", Unit::Nanoseconds), Direction::Lower);
        assert_eq!(all.direction("ops", Unit::None), Direction::Higher);
        let named = HigherIsBetter::from_flag(Some(&["ops".into()])).unwrap();
        assert_eq!(named.direction("ops", Unit::None), Direction::Higher);
        assert_eq!(named.direction("latency", Unit::None), Direction::Lower);
        assert_eq!(
            HigherIsBetter::Off.direction("ops", Unit::None),
            Direction::Lower
        );
        let error = HigherIsBetter::from_flag(Some(&["ops".into(), "wall".into()])).unwrap_err();
        assert!(error.to_string().contains("wall is a cost"), "{error}");
        let metrics = [
            ("user".to_string(), Unit::Seconds),
            ("ops".to_string(), Unit::None),
        ];
        assert_eq!(all.unapplied(&metrics), (vec!["user".to_string()], vec![]));
        let typo = HigherIsBetter::Named(vec!["opz".into()]);
        assert_eq!(typo.unapplied(&metrics), (vec![], vec!["opz".to_string()]));
        for h in [HigherIsBetter::Off, all, named] {
            assert_eq!(HigherIsBetter::from_json(Some(&h.to_json())), h);
        }
    }
}
