//! Metrics: what number a run yields, and how to read it from the run.
//!
//! `wall|user|sys|rss` come from the runner itself; `regex:`, `json:` and `gbench`
//! read the command's stdout (then stderr, for regexes). One run may yield several
//! metrics: a regex with named groups `name` and `value`, or one per benchmark in
//! Google Benchmark JSON.

use super::spawn::Outcome;
use anyhow::{anyhow, bail, Context, Result};
use regex::Regex;
use serde::Serialize;

/// One `--metric` argument.
#[derive(Debug, Clone)]
pub enum MetricSpec {
    Wall,
    User,
    Sys,
    Rss,
    Regex(Regex),
    Json(String),
    Gbench,
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
            _ => {
                if let Some(pattern) = text.strip_prefix("regex:") {
                    let regex = Regex::new(pattern)
                        .with_context(|| format!("invalid metric regex {pattern:?}"))?;
                    let named = regex.capture_names().flatten().any(|n| n == "value");
                    if !named && regex.captures_len() != 2 {
                        bail!("metric regex {pattern:?} needs exactly one capture group, or named groups `name` and `value`");
                    }
                    MetricSpec::Regex(regex)
                } else if let Some(pointer) = text.strip_prefix("json:") {
                    if !(pointer.is_empty() || pointer.starts_with('/')) {
                        bail!("json metric needs a JSON pointer such as json:/results/0/time, got {pointer:?}");
                    }
                    MetricSpec::Json(pointer.to_string())
                } else {
                    bail!("unknown metric {text:?}: expected wall, user, sys, rss, regex:PATTERN, json:POINTER or gbench")
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
            MetricSpec::Regex(regex) => format!("regex:{}", regex.as_str()),
            MetricSpec::Json(pointer) => format!("json:{pointer}"),
            MetricSpec::Gbench => "gbench".into(),
        }
    }

    /// Whether extracting this metric needs the command's output.
    pub fn reads_output(&self) -> bool {
        matches!(
            self,
            MetricSpec::Regex(_) | MetricSpec::Json(_) | MetricSpec::Gbench
        )
    }

    /// The value(s) this metric takes in one run.
    pub fn extract(&self, outcome: &Outcome) -> Result<Vec<MetricValue>> {
        let one = |name: &str, value: f64, unit| {
            Ok(vec![MetricValue {
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
                let stdout = String::from_utf8_lossy(&outcome.stdout);
                let found = extract_regex(regex, &stdout)?;
                if !found.is_empty() {
                    return Ok(found);
                }
                let stderr = String::from_utf8_lossy(&outcome.stderr_tail);
                let found = extract_regex(regex, &stderr)?;
                if found.is_empty() {
                    bail!(
                        "metric regex {:?} matched nothing in the output",
                        regex.as_str()
                    );
                }
                Ok(found)
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
            MetricSpec::Gbench => extract_gbench(&parse_json(&outcome.stdout)?),
        }
    }
}

fn extract_regex(regex: &Regex, text: &str) -> Result<Vec<MetricValue>> {
    let named = regex.capture_names().flatten().any(|n| n == "value");
    let mut values = Vec::new();
    for captures in regex.captures_iter(text) {
        let (name, raw) = if named {
            let name = captures
                .name("name")
                .map(|m| m.as_str().to_string())
                .unwrap_or_else(|| "value".into());
            (
                name,
                captures.name("value").map(|m| m.as_str()).unwrap_or(""),
            )
        } else {
            (
                format!("regex:{}", regex.as_str()),
                captures.get(1).map(|m| m.as_str()).unwrap_or(""),
            )
        };
        let value: f64 = raw
            .trim()
            .parse()
            .with_context(|| format!("metric regex captured {raw:?}, which is not a number"))?;
        if values.iter().any(|v: &MetricValue| v.name == name) {
            continue; // the first occurrence of a name wins
        }
        values.push(MetricValue {
            name,
            value,
            unit: Unit::None,
        });
        if !named {
            break;
        }
    }
    Ok(values)
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
        }
    }

    #[test]
    fn named_groups_yield_one_metric_per_name() {
        let spec = MetricSpec::parse(r"regex:(?m)^(?P<name>\w+) (?P<value>[0-9.]+)$").unwrap();
        let values = spec
            .extract(&outcome("virtual 1.5\nfnptr 2.5\n", ""))
            .unwrap();
        let pairs: Vec<(&str, f64)> = values.iter().map(|v| (v.name.as_str(), v.value)).collect();
        assert_eq!(pairs, vec![("virtual", 1.5), ("fnptr", 2.5)]);
    }

    #[test]
    fn single_group_regex_falls_back_to_stderr() {
        let spec = MetricSpec::parse(r"regex:took ([0-9.]+) ms").unwrap();
        let values = spec.extract(&outcome("nothing", "took 4.25 ms")).unwrap();
        assert_eq!(values[0].value, 4.25);
        assert!(spec.extract(&outcome("nothing", "")).is_err());
    }

    #[test]
    fn bad_specs_are_rejected() {
        assert!(MetricSpec::parse("regex:(a)(b)").is_err());
        assert!(MetricSpec::parse("regex:(").is_err());
        assert!(MetricSpec::parse("json:nope").is_err());
        assert!(MetricSpec::parse("cycles").is_err());
    }

    #[test]
    fn builtin_metrics_read_the_outcome() {
        let o = outcome("", "");
        assert_eq!(MetricSpec::Wall.extract(&o).unwrap()[0].value, 0.012);
        assert_eq!(MetricSpec::Rss.extract(&o).unwrap()[0].value, 2048.0);
    }

    #[test]
    fn json_pointer_and_gbench() {
        let spec = MetricSpec::parse("json:/result/time").unwrap();
        assert_eq!(
            spec.extract(&outcome(r#"{"result":{"time":"3.5"}}"#, ""))
                .unwrap()[0]
                .value,
            3.5
        );
        assert!(spec.extract(&outcome("not json", "")).is_err());
        let gbench = r#"{"benchmarks":[
            {"name":"BM_a","run_type":"iteration","real_time":2.0,"time_unit":"us"},
            {"name":"BM_a_mean","run_type":"aggregate","real_time":9.0,"time_unit":"ns"},
            {"name":"BM_b","run_type":"iteration","real_time":7.0,"time_unit":"ns"}]}"#;
        let values = MetricSpec::Gbench.extract(&outcome(gbench, "")).unwrap();
        let pairs: Vec<(&str, f64)> = values.iter().map(|v| (v.name.as_str(), v.value)).collect();
        assert_eq!(pairs, vec![("BM_a", 2000.0), ("BM_b", 7.0)]);
    }
}
