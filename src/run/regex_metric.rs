//! `regex:` metrics: which stream a pattern reads, which groups name its
//! metrics, and which match a run's value comes from when there are several.
//!
//! Grammar: `regex:PATTERN` or `regex@OPTIONS:PATTERN`, where OPTIONS is a
//! comma-separated list of at most one choice (`first`, `last`, `median`) and at
//! most one stream (`stdout`, `stderr`). The options end at the first `:`, so the
//! pattern itself may hold any character. Defaults: `last`, and stdout with
//! stderr as the fallback when stdout has no match.
//!
//! Why `last`: programs that print progress print the final figure last. lz4's
//! `-b` rewrites one line with `\r` after every iteration and keeps the best
//! speed so far in it; its final figure is the last progress update (lz4 1.9.4,
//! default verbosity, prints only `1#` after it), while the first match is one
//! iteration's speed, 26% lower in a 3-iteration run measured here (277.9 vs
//! 374.1 MB/s).

use anyhow::{bail, Context, Result};
use regex::Regex;
use serde::Serialize;
use std::borrow::Cow;

/// Which match a run's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    First,
    Last,
    Median,
}

impl Choice {
    pub fn name(self) -> &'static str {
        match self {
            Choice::First => "first",
            Choice::Last => "last",
            Choice::Median => "median",
        }
    }
}

/// Which output the pattern reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// stdout, and stderr only when stdout has no match at all.
    Auto,
    Stdout,
    Stderr,
}

/// How the pattern's groups name the metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Groups {
    /// Groups `name` and `value`: one metric per distinct name.
    NameValue,
    /// Other named groups: one metric per group, named after it.
    Named(Vec<String>),
    /// One unnamed group: one metric named after the spec.
    Single,
}

/// One parsed `regex:` metric.
#[derive(Debug, Clone)]
pub struct RegexMetric {
    pub regex: Regex,
    pub choice: Choice,
    /// Whether the choice was written in the spec (else it is the default).
    pub choice_given: bool,
    pub stream: Stream,
    groups: Groups,
    /// `NAME=regex:…`: the name of a one-group regex's metric (else the spec).
    pub name: Option<String>,
}

/// A metric that matched more than once in one run, where first, last and
/// median disagree: the facts behind the note that says which was taken.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeveralMatches {
    pub name: String,
    pub count: usize,
    pub first: f64,
    pub last: f64,
    pub median: f64,
    pub chosen: f64,
}

/// What one run's output yields for one `regex:` metric.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// (metric name, chosen value), in the order the names first appear.
    pub values: Vec<(String, f64)>,
    pub several: Vec<SeveralMatches>,
}

impl RegexMetric {
    /// Parse the text after `regex` (`:PATTERN` or `@OPTIONS:PATTERN`).
    pub fn parse(rest: &str) -> Result<RegexMetric> {
        let (options, pattern) = if let Some(pattern) = rest.strip_prefix(':') {
            ("", pattern)
        } else if let Some(tail) = rest.strip_prefix('@') {
            tail.split_once(':').with_context(|| {
                format!("metric regex@{tail:?} needs a ':' before its pattern, as in regex@last:PATTERN")
            })?
        } else {
            bail!("expected regex:PATTERN or regex@OPTIONS:PATTERN");
        };
        let mut choice = None;
        let mut stream = None;
        if rest.starts_with('@') {
            for option in options.split(',') {
                match option.trim() {
                    "first" => set(&mut choice, Choice::First)?,
                    "last" => set(&mut choice, Choice::Last)?,
                    "median" => set(&mut choice, Choice::Median)?,
                    "stdout" => set(&mut stream, Stream::Stdout)?,
                    "stderr" => set(&mut stream, Stream::Stderr)?,
                    other => bail!(
                        "unknown regex metric option {other:?}: expected first, last, median, stdout or stderr"
                    ),
                }
            }
        }
        let regex =
            Regex::new(pattern).with_context(|| format!("invalid metric regex {pattern:?}"))?;
        let names: Vec<String> = regex.capture_names().flatten().map(String::from).collect();
        let has = |n: &str| names.iter().any(|g| g == n);
        let groups = if has("value") {
            if let Some(other) = names.iter().find(|g| *g != "name" && *g != "value") {
                bail!("metric regex {pattern:?} mixes groups `name`/`value` with `{other}`: use one style");
            }
            Groups::NameValue
        } else if has("name") {
            bail!("metric regex {pattern:?} has a group `name` but no group `value`");
        } else if !names.is_empty() {
            Groups::Named(names)
        } else if regex.captures_len() == 2 {
            Groups::Single
        } else {
            bail!("metric regex {pattern:?} needs exactly one capture group, named groups (one metric each), or named groups `name` and `value`");
        };
        Ok(RegexMetric {
            regex,
            choice: choice.unwrap_or(Choice::Last),
            choice_given: choice.is_some(),
            stream: stream.unwrap_or(Stream::Auto),
            groups,
            name: None,
        })
    }

    /// Name the metric of a one-group regex (`NAME=regex:…`). A regex with
    /// named groups is refused: its groups name its metrics.
    pub fn named(mut self, name: &str) -> Result<RegexMetric> {
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !valid {
            bail!("metric name {name:?} before '=regex' must be a letter then letters, digits, '_', '.' or '-'");
        }
        if self.groups != Groups::Single {
            bail!(
                "metric regex {:?} names its metrics by its groups: drop the {name}= before it",
                self.regex.as_str()
            );
        }
        self.name = Some(name.to_string());
        Ok(self)
    }

    /// The spec as given, options normalised: `regex:P` when none were written.
    pub fn label(&self) -> String {
        let mut options = Vec::new();
        if self.choice_given {
            options.push(self.choice.name());
        }
        match self.stream {
            Stream::Auto => {}
            Stream::Stdout => options.push("stdout"),
            Stream::Stderr => options.push("stderr"),
        }
        let name = self
            .name
            .as_ref()
            .map_or(String::new(), |n| format!("{n}="));
        if options.is_empty() {
            format!("{name}regex:{}", self.regex.as_str())
        } else {
            format!("{name}regex@{}:{}", options.join(","), self.regex.as_str())
        }
    }

    /// Whether this metric may read stderr.
    pub fn reads_stderr(&self) -> bool {
        self.stream != Stream::Stdout
    }

    /// The metric values in one run's output.
    pub fn extract(&self, stdout: &[u8], stderr: &[u8]) -> Result<Found> {
        let read = |bytes: &[u8]| -> Result<Vec<(String, Vec<f64>)>> {
            self.matches(&progress_as_lines(&String::from_utf8_lossy(bytes)))
        };
        let (matches, searched) = match self.stream {
            Stream::Stdout => (read(stdout)?, "stdout"),
            Stream::Stderr => (read(stderr)?, "stderr"),
            Stream::Auto => {
                let on_stdout = read(stdout)?;
                if on_stdout.is_empty() {
                    (read(stderr)?, "stdout or stderr")
                } else {
                    (on_stdout, "stdout")
                }
            }
        };
        if matches.is_empty() {
            bail!(
                "metric regex {:?} matched nothing in {searched}",
                self.regex.as_str()
            );
        }
        if let Groups::Named(names) = &self.groups {
            if let Some(missing) = names.iter().find(|n| !matches.iter().any(|(m, _)| m == *n)) {
                bail!(
                    "group `{missing}` of metric regex {:?} matched nothing in {searched}",
                    self.regex.as_str()
                );
            }
        }
        let mut found = Found::default();
        for (name, values) in matches {
            let first = values[0];
            let last = values[values.len() - 1];
            let median = median(&values);
            let chosen = match self.choice {
                Choice::First => first,
                Choice::Last => last,
                Choice::Median => median,
            };
            if values.len() > 1 && !(first == last && last == median) {
                found.several.push(SeveralMatches {
                    name: name.clone(),
                    count: values.len(),
                    first,
                    last,
                    median,
                    chosen,
                });
            }
            found.values.push((name, chosen));
        }
        Ok(found)
    }

    /// Every value each metric name matched, in output order.
    fn matches(&self, text: &str) -> Result<Vec<(String, Vec<f64>)>> {
        let mut all: Vec<(String, Vec<f64>)> = Vec::new();
        let mut add = |name: &str, raw: &str| -> Result<()> {
            let value: f64 = raw
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .with_context(|| {
                    format!("metric regex captured {raw:?}, which is not a finite number")
                })?;
            match all.iter_mut().find(|(n, _)| n == name) {
                Some((_, values)) => values.push(value),
                None => all.push((name.to_string(), vec![value])),
            }
            Ok(())
        };
        let single = self.name.clone().unwrap_or_else(|| self.label());
        for captures in self.regex.captures_iter(text) {
            match &self.groups {
                Groups::NameValue => {
                    if let Some(value) = captures.name("value") {
                        let name = captures.name("name").map_or("value", |m| m.as_str());
                        add(name, value.as_str())?;
                    }
                }
                Groups::Named(names) => {
                    for name in names {
                        if let Some(value) = captures.name(name) {
                            add(name, value.as_str())?;
                        }
                    }
                }
                Groups::Single => {
                    if let Some(value) = captures.get(1) {
                        add(&single, value.as_str())?;
                    }
                }
            }
        }
        Ok(all)
    }
}

/// Fill an option's slot once: first/last/median, or stdout/stderr, twice is an error.
fn set<T>(slot: &mut Option<T>, value: T) -> Result<()> {
    if slot.replace(value).is_some() {
        bail!("regex metric options name two choices (first, last, median) or two streams (stdout, stderr)");
    }
    Ok(())
}

/// A carriage return not followed by a newline ends a line: progress that
/// rewrites one terminal line (`\r`) reads as the lines a user saw go by, so
/// `^`/`$` in multi-line mode and `.` stop at every update. `\r\n` is kept.
pub fn progress_as_lines(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() != Some(&'\n') {
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The median of a non-empty list (mean of the middle two for an even count).
/// Written here because `run/` depends on nothing else in the crate (the
/// statistics module has its own).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Across an experiment: the runs in which one metric matched several
/// disagreeing values, so the choice of match mattered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatchTally {
    /// The spec's label.
    pub metric: String,
    pub name: String,
    pub choice: Choice,
    pub choice_given: bool,
    /// Runs in which the choice mattered.
    pub runs: usize,
    /// The most matches seen in one run.
    pub most: usize,
    /// The first run in which the choice mattered.
    pub example: SeveralMatches,
}

impl MatchTally {
    /// Add one run's several matches to the tallies.
    pub fn record(tallies: &mut Vec<MatchTally>, spec: &RegexMetric, several: &[SeveralMatches]) {
        let label = spec.label();
        for s in several {
            match tallies
                .iter_mut()
                .find(|t| t.metric == label && t.name == s.name)
            {
                Some(t) => {
                    t.runs += 1;
                    t.most = t.most.max(s.count);
                }
                None => tallies.push(MatchTally {
                    metric: label.clone(),
                    name: s.name.clone(),
                    choice: spec.choice,
                    choice_given: spec.choice_given,
                    runs: 1,
                    most: s.count,
                    example: s.clone(),
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(spec: &str, stdout: &str, stderr: &str) -> Result<Found> {
        RegexMetric::parse(spec.strip_prefix("regex").unwrap())?
            .extract(stdout.as_bytes(), stderr.as_bytes())
    }

    fn pairs(found: &Found) -> Vec<(&str, f64)> {
        found.values.iter().map(|(n, v)| (n.as_str(), *v)).collect()
    }

    #[test]
    fn progress_lines_then_a_final_line_take_the_last_by_default() {
        let out = "iter 1: 10.5 MB/s\niter 2: 11.0 MB/s\nfinal: 12.25 MB/s\n";
        let f = found(r"regex:([0-9.]+) MB/s", out, "").unwrap();
        assert_eq!(f.values[0].1, 12.25);
        assert_eq!(f.values[0].0, r"regex:([0-9.]+) MB/s");
        assert_eq!(
            f.several,
            vec![SeveralMatches {
                name: r"regex:([0-9.]+) MB/s".into(),
                count: 3,
                first: 10.5,
                last: 12.25,
                median: 11.0,
                chosen: 12.25,
            }]
        );
        let first = found(r"regex@first:([0-9.]+) MB/s", out, "").unwrap();
        assert_eq!(
            first.values[0],
            (r"regex@first:([0-9.]+) MB/s".into(), 10.5)
        );
        let median = found(r"regex@median:([0-9.]+) MB/s", out, "").unwrap();
        assert_eq!(median.values[0].1, 11.0);
        let even = found(r"regex@median:v=(\d+)", "v=1 v=2 v=4 v=10", "").unwrap();
        assert_eq!(even.values[0].1, 3.0);
    }

    #[test]
    fn a_repeated_identical_value_is_not_a_choice() {
        let f = found(r"regex:v=(\d+)", "v=5\nv=5\n", "").unwrap();
        assert_eq!(f.values[0].1, 5.0);
        assert!(f.several.is_empty());
    }

    /// lz4 -b's stderr, as lz4 1.9.4 prints it to a file: progress rewritten
    /// with `\r`, the best speed so far in each update, then `1#`.
    const LZ4: &str =
        "\r                                                                               \r \
|-in.bin         :   4000000 ->\r /-in.bin         :   4000000 ->   1925863 (2.077), 277.9 MB/s\r \
=-in.bin         :   4000000 ->   1925863 (2.077), 277.9 MB/s ,3089.3 MB/s\r \
=-in.bin         :   4000000 ->\r \\-in.bin         :   4000000 ->   1925863 (2.077), 373.7 MB/s\r \
|-in.bin         :   4000000 ->   1925863 (2.077), 373.7 MB/s ,3089.3 MB/s\r \
|-in.bin         :   4000000 ->\r /-in.bin         :   4000000 ->   1925863 (2.077), 374.1 MB/s\r \
=-in.bin         :   4000000 ->   1925863 (2.077), 374.1 MB/s ,3102.5 MB/s\r 1#\n";

    #[test]
    fn carriage_return_progress_reads_as_lines() {
        // Without the \r rule, `.*` would run from the first update's
        // compression speed to the last one's decompression speed.
        let spec = r"regex:(?P<compress>[0-9.]+) MB/s .*?,\s*(?P<decompress>[0-9.]+) MB/s";
        let f = found(spec, "", LZ4).unwrap();
        assert_eq!(pairs(&f), vec![("compress", 374.1), ("decompress", 3102.5)]);
        assert_eq!(f.several.len(), 2);
        assert_eq!(f.several[0].first, 277.9);
        assert_eq!(f.several[0].count, 3);
        let anchored = found(r"regex:(?m)^ =-.*,([0-9.]+) MB/s$", "", LZ4).unwrap();
        assert_eq!(anchored.values[0].1, 3102.5);
        let first = found(r"regex@first,stderr:\(([0-9.]+)\)", "", LZ4).unwrap();
        assert_eq!(first.values[0].1, 2.077);
        assert!(first.several.is_empty());
        assert_eq!(progress_as_lines("a\r\nb\rc"), "a\r\nb\nc");
    }

    #[test]
    fn several_named_groups_on_one_line_are_metrics_each() {
        let out = "lz4 412.5 MB/s (ratio 2.1) 2950.0 MB/s\n";
        let spec = r"regex:(?P<compress>[0-9.]+) MB/s .* (?P<decompress>[0-9.]+) MB/s";
        let f = found(spec, out, "").unwrap();
        assert_eq!(pairs(&f), vec![("compress", 412.5), ("decompress", 2950.0)]);
        assert!(f.several.is_empty());
        // A named group that never matched is an error, not a silently missing metric.
        let err = found(r"regex:c=(?P<c>\d+)|d=(?P<d>\d+)", "c=1", "").unwrap_err();
        assert!(format!("{err:#}").contains("group `d`"), "{err:#}");
        // Alternatives may fill different groups on different lines.
        let f = found(r"regex:c=(?P<c>\d+)|d=(?P<d>\d+)", "c=1 d=2 c=3", "").unwrap();
        assert_eq!(pairs(&f), vec![("c", 3.0), ("d", 2.0)]);
    }

    #[test]
    fn name_value_groups_choose_per_name() {
        let out = "virtual 1.5\nfnptr 2.5\nvirtual 1.25\n";
        let spec = r"regex:(?m)^(?P<name>\w+) (?P<value>[0-9.]+)$";
        let f = found(spec, out, "").unwrap();
        assert_eq!(pairs(&f), vec![("virtual", 1.25), ("fnptr", 2.5)]);
        assert_eq!(f.several.len(), 1);
        let first = found(&spec.replacen("regex:", "regex@first:", 1), out, "").unwrap();
        assert_eq!(pairs(&first), vec![("virtual", 1.5), ("fnptr", 2.5)]);
    }

    #[test]
    fn streams_stdout_first_then_stderr_or_as_asked() {
        let spec = r"regex:took ([0-9.]+) ms";
        assert_eq!(
            found(spec, "took 1 ms", "took 2 ms").unwrap().values[0].1,
            1.0
        );
        assert_eq!(
            found(spec, "nothing", "took 2 ms").unwrap().values[0].1,
            2.0
        );
        let err = found(spec, "nothing", "").unwrap_err();
        assert!(format!("{err:#}").contains("matched nothing in stdout or stderr"));
        let stderr = r"regex@stderr:took ([0-9.]+) ms";
        assert_eq!(
            found(stderr, "took 1 ms", "took 2 ms").unwrap().values[0].1,
            2.0
        );
        let stdout = r"regex@stdout:took ([0-9.]+) ms";
        let err = found(stdout, "", "took 2 ms").unwrap_err();
        assert!(format!("{err:#}").contains("matched nothing in stdout"));
    }

    #[test]
    fn options_parse_and_bad_ones_are_refused() {
        let m = RegexMetric::parse("@median,stderr:a:(\\d+)").unwrap();
        assert_eq!(
            (m.choice, m.stream, m.choice_given),
            (Choice::Median, Stream::Stderr, true)
        );
        assert_eq!(m.regex.as_str(), "a:(\\d+)");
        assert_eq!(m.label(), "regex@median,stderr:a:(\\d+)");
        let m = RegexMetric::parse("@stdout,first:(\\d+)").unwrap();
        assert_eq!(m.label(), "regex@first,stdout:(\\d+)");
        // The plain form: the pattern may start with '@' and hold ':'.
        let m = RegexMetric::parse(":@(\\d+):").unwrap();
        assert_eq!(
            (m.choice, m.choice_given, m.stream),
            (Choice::Last, false, Stream::Auto)
        );
        assert_eq!(m.label(), "regex:@(\\d+):");
        for bad in [
            "@latest:(\\d+)",
            "@:(\\d+)",
            "@first,last:(\\d+)",
            "@stdout,stderr:(\\d+)",
            "@first(\\d+)",
            "@first:(a)(b)",
            "@first:(?P<name>a)",
            "@first:(?P<name>\\w+) (?P<value>\\d+) (?P<x>\\d+)",
            "x(\\d+)",
        ] {
            assert!(RegexMetric::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn non_numbers_and_non_finite_captures_are_errors() {
        assert!(found(r"regex:v=(\w+)", "v=abc", "").is_err());
        assert!(found(r"regex:v=(\w+)", "v=inf", "").is_err());
    }

    #[test]
    fn a_name_prefix_names_a_one_group_metric() {
        let spec = RegexMetric::parse(r":([0-9.]+) ns/call")
            .unwrap()
            .named("ns_per_call")
            .unwrap();
        assert_eq!(spec.label(), r"ns_per_call=regex:([0-9.]+) ns/call");
        let f = spec.extract(b"3.5 ns/call\n", b"").unwrap();
        assert_eq!(pairs(&f), vec![("ns_per_call", 3.5)]);
        // Named groups name their metrics already; a bad name is refused.
        let named = RegexMetric::parse(r":(?P<ns>[0-9.]+) ns").unwrap();
        assert!(named.named("x").is_err());
        let one = || RegexMetric::parse(r":([0-9.]+)").unwrap();
        for bad in ["", "1x", "a b", "a=b"] {
            assert!(one().named(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn tallies_count_runs_once_per_metric() {
        let spec = RegexMetric::parse(r":v=(\d+)").unwrap();
        let mut tallies = Vec::new();
        for out in ["v=1 v=2", "v=3 v=3", "v=1 v=2 v=9"] {
            let f = spec.extract(out.as_bytes(), b"").unwrap();
            MatchTally::record(&mut tallies, &spec, &f.several);
        }
        assert_eq!(tallies.len(), 1);
        assert_eq!((tallies[0].runs, tallies[0].most), (2, 3));
        assert_eq!(tallies[0].example.last, 2.0);
        assert_eq!(tallies[0].choice, Choice::Last);
        assert!(!tallies[0].choice_given);
        assert_eq!(
            (tallies[0].example.first, tallies[0].example.median),
            (1.0, 1.5)
        );
    }
}
