//! What one stored result holds, and how it is read out of a verb's `--json`
//! document through its type (`doc`, docs/json-schema.md). The document is
//! also stored whole, so `history show ID --json` gives it back as written.

use super::redact::redact;
use crate::doc::{self, Document, Stored};
use crate::stats::verdict::Verdict as Decision;
use serde_json::Value;

/// One result, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// `compare`, `layout`, `analyze` or `baseline` (`compare --save-baseline CMD`).
    pub verb: String,
    pub created_unix: i64,
    pub command_line: Vec<String>,
    /// The document's `settings` object, as JSON text (written back through
    /// its type, `doc::CompareSettings`/`LayoutSettings`).
    pub settings: String,
    /// `status.state`.
    pub status: Option<String>,
    pub cpu_model: Option<String>,
    pub kernel: Option<String>,
    pub governor: Option<String>,
    pub load1: Option<f64>,
    pub host: Option<String>,
    /// The document's `environment` object, as JSON text.
    pub environment: String,
    pub git: Option<Git>,
    pub commands: Vec<Command>,
    pub runs: Vec<Run>,
    pub verdicts: Vec<Verdict>,
    /// The whole `--json` document.
    pub document: String,
}

/// The git state of the working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Git {
    pub commit: String,
    pub branch: Option<String>,
    pub dirty: bool,
}

/// A command (`compare`) or build (`layout`) with its template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub name: String,
    pub template: String,
}

/// One metric's value in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub command: usize,
    pub name: String,
    /// The layout's seed (`layout`), none for `compare`.
    pub layout: Option<i64>,
    pub round: i64,
    pub warmup: bool,
    pub metric: String,
    pub unit: String,
    pub value: Option<f64>,
    pub exit_code: i64,
    pub env_pad: Option<i64>,
}

/// One verdict: `name` against `baseline` on `metric`.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub metric: String,
    pub baseline: String,
    pub name: String,
    pub verdict: Decision,
    pub ratio: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// `layout`: the build is reproducibly worse than typical in some
    /// layouts (the comparison's `fragility.worse`), whatever the verdict.
    /// Read from the document for `--fail-on fragile`; not a column of the
    /// store's `verdicts` table (the document holds it).
    pub fragile: bool,
}

impl Record {
    /// The record of `document` (one compare, layout or baseline document,
    /// or `analyze`'s array of compare documents), made by `verb`; an error
    /// when it does not read as its type.
    pub fn from_document(
        verb: &str,
        document: &Value,
        git: Option<Git>,
        host: Option<String>,
    ) -> Result<Record, doc::Error> {
        let stored = Stored::read(document)?;
        Ok(Record::from_stored(verb, &stored, document, git, host))
    }

    /// The record of a document already read as its type (`text` is the
    /// document as JSON, stored whole).
    pub fn from_stored(
        verb: &str,
        stored: &Stored,
        document: &Value,
        git: Option<Git>,
        host: Option<String>,
    ) -> Record {
        let parts: Vec<Part> = match stored {
            Stored::One(d) => vec![Part::of(d)],
            Stored::Many(items) => items.iter().map(Part::Compare).collect(),
        };
        let (settings, env, state) = match stored {
            Stored::One(d) => (d.settings_text(), d.environment(), d.status().state),
            Stored::Many(items) => {
                let first = &items[0];
                let settings = Document::Compare(Box::new(first.clone())).settings_text();
                (settings, &first.environment, first.status.state)
            }
        };
        let env_text = serde_json::to_string(env).unwrap_or_default();
        let mut record = Record {
            verb: verb.to_string(),
            created_unix: i64::try_from(env.timestamp_unix).unwrap_or_else(|_| now()),
            command_line: env
                .command_line
                .iter()
                .map(|a| redact(a).into_owned())
                .collect(),
            settings,
            status: Some(state.name().to_string()),
            cpu_model: env.cpu_model.clone(),
            kernel: env.kernel.clone(),
            governor: env.governor.clone(),
            load1: env.load_average.map(|l| l[0]),
            host,
            environment: redact(&env_text).into_owned(),
            git,
            commands: Vec::new(),
            runs: Vec::new(),
            verdicts: Vec::new(),
            // A document made elsewhere may carry a password in its command line.
            document: redact(&document.to_string()).into_owned(),
        };
        for part in parts {
            record.add(part);
        }
        record
    }

    /// Where a command sits in the record: analyze's array repeats the
    /// baseline in every document.
    fn command_index(&mut self, command: Command) -> usize {
        match self.commands.iter().position(|k| *k == command) {
            Some(i) => i,
            None => {
                self.commands.push(command);
                self.commands.len() - 1
            }
        }
    }

    /// The commands, runs and verdicts of one document.
    fn add(&mut self, part: Part) {
        let commands: Vec<Command> = match part {
            Part::Compare(d) => d.commands.iter().map(Command::of).collect(),
            Part::Baseline(d) => d.commands.iter().map(Command::of).collect(),
            Part::Layout(d) => d
                .builds
                .iter()
                .map(|b| Command {
                    name: b.name.clone(),
                    template: b.template.clone(),
                })
                .collect(),
        };
        // Indices in this document → indices in the record.
        let index: Vec<usize> = commands
            .into_iter()
            .map(|c| self.command_index(c))
            .collect();
        let name_of = |i: usize| {
            index
                .get(i)
                .map(|&k| self.commands[k].name.clone())
                .unwrap_or_default()
        };
        let records: Vec<(Option<i64>, &crate::run::RunRecord)> = match part {
            Part::Compare(d) => d.runs.iter().map(|r| (None, r)).collect(),
            Part::Baseline(d) => d.runs.iter().map(|r| (None, r)).collect(),
            Part::Layout(d) => d
                .runs
                .iter()
                .map(|r| (i64::try_from(r.seed).ok(), &r.record))
                .collect(),
        };
        let mut runs = Vec::new();
        for (layout, r) in records {
            let side = r.build;
            for v in &r.values {
                runs.push(Run {
                    command: index.get(side).copied().unwrap_or(side),
                    name: name_of(side),
                    layout,
                    round: r.round as i64,
                    warmup: r.warmup,
                    metric: v.name.clone(),
                    unit: unit_name(v.unit),
                    value: Some(v.value).filter(|x| x.is_finite()),
                    exit_code: i64::from(r.exit_code),
                    env_pad: r.env_pad_bytes.map(|p| p as i64),
                });
            }
        }
        self.runs.extend(runs);
        match part {
            Part::Compare(d) => {
                for m in &d.metrics {
                    self.verdicts.push(Verdict {
                        metric: m.name.clone(),
                        baseline: name_of(0),
                        name: name_of(1),
                        verdict: m.verdict,
                        ratio: m.ratio,
                        ci_low: m.ci_low,
                        ci_high: m.ci_high,
                        fragile: false,
                    });
                }
            }
            Part::Layout(d) => {
                for row in &d.matrix {
                    let Some(c) = &row.comparison else {
                        continue;
                    };
                    let interval = c.interval();
                    self.verdicts.push(Verdict {
                        metric: row.metric.clone(),
                        baseline: name_of(0),
                        name: row.build.clone(),
                        verdict: c.verdict,
                        ratio: interval.and_then(|i| i.estimate),
                        ci_low: interval.and_then(|i| i.low),
                        ci_high: interval.and_then(|i| i.high),
                        fragile: c.fragile(),
                    });
                }
            }
            Part::Baseline(_) => {}
        }
    }
}

/// One document of a stored result.
#[derive(Clone, Copy)]
enum Part<'a> {
    Compare(&'a doc::Compare),
    Layout(&'a doc::Layout),
    Baseline(&'a doc::Baseline),
}

impl<'a> Part<'a> {
    fn of(document: &'a Document) -> Part<'a> {
        match document {
            Document::Compare(d) => Part::Compare(d),
            Document::Layout(d) => Part::Layout(d),
            Document::Baseline(d) => Part::Baseline(d),
        }
    }
}

impl Command {
    fn of(spec: &crate::run::command::CommandSpec) -> Command {
        Command {
            name: spec.name.clone(),
            template: spec.text.clone(),
        }
    }
}

/// A unit as the document writes it (`seconds`, `none`).
fn unit_name(unit: crate::run::metric::Unit) -> String {
    serde_json::to_value(unit)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_else(|| "none".into())
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn environment() -> Value {
        json!({"cpu_model": "X", "logical_cpus": 2, "kernel": "6.1", "governor": null,
               "turbo": null, "load_average": [0.5, 0.0, 0.0], "aslr": null,
               "split_lock_mitigate": null, "split_lock_detect": null,
               "perf_event_paranoid": null, "transparent_hugepage": null,
               "virtualization": null, "tool_version": "0.1.0",
               "command_line": ["ghostbench", "compare"], "timestamp_unix": 1700000000u64})
    }

    fn run(side: usize, round: usize, warmup: bool, pad: Value, values: Value) -> Value {
        json!({"side": side, "round": round, "warmup": warmup, "wall_s": 0.01, "user_s": 0.0,
               "sys_s": 0.0, "max_rss_kib": 900, "exit_code": 0, "env_pad_bytes": pad,
               "values": values, "counters": []})
    }

    #[test]
    fn a_compare_document_gives_its_commands_runs_and_verdicts() {
        let doc = json!({
            "schema": "ghostbench.compare", "schema_version": 1,
            "commands": [{"name": "A", "text": "sleep 0.01", "argv": [], "shell": false},
                         {"name": "B", "text": "sleep 0.02", "argv": [], "shell": false}],
            "settings": {"margin": 0.01},
            "status": {"state": "decided", "message": null, "last_output": []},
            "environment": environment(),
            "metrics": [{"name": "wall", "unit": "seconds", "verdict": "SLOWER", "ratio": 2.0,
                         "ci_low": 1.9, "ci_high": 2.1}],
            "notes": [],
            "runs": [
                run(0, 0, true, json!(3), json!([{"name": "wall", "value": 0.01, "unit": "seconds"}])),
                run(1, 1, false, Value::Null, json!([{"name": "wall", "value": 0.02, "unit": "seconds"},
                            {"name": "rss", "value": 900.0, "unit": "kibibytes"}]))
            ]
        });
        let r = Record::from_document("compare", &doc, None, Some("h".into())).unwrap();
        assert_eq!(r.created_unix, 1_700_000_000);
        assert_eq!((r.cpu_model.as_deref(), r.load1), (Some("X"), Some(0.5)));
        assert_eq!(r.status.as_deref(), Some("decided"));
        assert_eq!(r.commands[1].template, "sleep 0.02");
        assert_eq!(r.runs.len(), 3);
        assert_eq!((r.runs[0].warmup, r.runs[0].env_pad), (true, Some(3)));
        assert_eq!(
            (
                r.runs[2].name.as_str(),
                r.runs[2].metric.as_str(),
                r.runs[2].unit.as_str()
            ),
            ("B", "rss", "kibibytes")
        );
        assert_eq!(r.verdicts.len(), 1);
        let v = &r.verdicts[0];
        assert_eq!(
            (v.baseline.as_str(), v.name.as_str(), v.verdict),
            ("A", "B", Decision::Slower)
        );
        assert_eq!(
            (v.ratio, v.ci_low, v.ci_high),
            (Some(2.0), Some(1.9), Some(2.1))
        );
        assert_eq!(serde_json::from_str::<Value>(&r.document).unwrap(), doc);
    }

    #[test]
    fn a_layout_document_gives_one_verdict_per_compared_build() {
        let mut layout_run = run(
            1,
            0,
            false,
            Value::Null,
            json!([{"name": "wall", "value": 1.0, "unit": "seconds"}]),
        );
        layout_run["build"] = json!(1);
        layout_run["seed"] = json!(3);
        let doc = json!({
            "schema": "ghostbench.layout", "schema_version": 3,
            "builds": [{"name": "old", "template": "cc {out}"}, {"name": "new", "template": "cc -O3 {out}"}],
            "settings": {}, "status": {"state": "finished", "message": null, "last_output": []},
            "environment": environment(), "notes": [], "used_seeds": [0, 3],
            "matrix": [
                {"build": "old", "metric": "wall", "comparison": null},
                {"build": "new", "metric": "wall", "comparison": {"verdict": "ARTIFACT",
                    "controlled": {"estimate": 1.0, "low": 0.98, "high": 1.02},
                    "default_ratio": {"estimate": 0.8, "low": 0.78, "high": 0.82},
                    "fragility": {"typical": 1.0, "worse": [{"variant": 2}], "better": [], "variants": 8}}}
            ],
            "runs": [layout_run]
        });
        let r = Record::from_document("layout", &doc, None, None).unwrap();
        assert_eq!(r.runs[0].layout, Some(3));
        assert_eq!(r.runs[0].name, "new");
        assert_eq!(r.verdicts.len(), 1);
        assert_eq!(r.verdicts[0].verdict, Decision::Artifact);
        assert_eq!(r.verdicts[0].ratio, Some(1.0));
        assert!(r.verdicts[0].fragile);
    }

    #[test]
    fn other_documents_and_moved_keys_are_refused() {
        let doc = json!({"schema": "ghostbench.code", "schema_version": 2});
        assert!(Record::from_document("code", &doc, None, None).is_err());
        // A compare document whose verdict moved is an error, not UNKNOWN.
        let doc = json!({"schema": "ghostbench.compare", "schema_version": 1, "commands": [],
            "settings": {}, "status": {"state": "decided", "message": null, "last_output": []},
            "environment": environment(), "notes": [], "runs": [],
            "metrics": [{"name": "wall", "unit": "seconds", "result": "SLOWER", "ratio": 2.0,
                         "ci_low": 1.9, "ci_high": 2.1}]});
        let error = Record::from_document("compare", &doc, None, None).unwrap_err();
        assert!(error.to_string().contains("`verdict`"), "{error}");
    }
}
