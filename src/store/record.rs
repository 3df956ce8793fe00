//! What one stored result holds, and how it is read out of a verb's `--json`
//! document (docs/json-schema.md), which is also stored whole: the store needs
//! no verb's types, and `history show ID --json` gives back the document.

use super::redact::redact;
use serde_json::Value;

/// One result, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// `compare`, `layout`, `analyze` or `baseline` (`compare --save-baseline CMD`).
    pub verb: String,
    pub created_unix: i64,
    pub command_line: Vec<String>,
    /// The document's `settings` object, as JSON text.
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
    pub verdict: String,
    pub ratio: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// `layout`: the build is reproducibly worse than typical in some
    /// layouts (the comparison's `fragility.worse`), whatever the verdict.
    /// Read from the document for `--fail-on fragile`; not a column of the
    /// store's `verdicts` table (the document holds it).
    pub fragile: bool,
}

/// Why a document cannot be recorded.
#[derive(Debug, thiserror::Error)]
#[error("not a ghostbench compare, layout or baseline document: {0}")]
pub struct NotAReport(pub String);

impl Record {
    /// The record of `document` (one compare, layout or baseline document,
    /// or `analyze`'s array of compare documents), made by `verb`.
    pub fn from_document(
        verb: &str,
        document: &Value,
        git: Option<Git>,
        host: Option<String>,
    ) -> Result<Record, NotAReport> {
        let parts: Vec<&Value> = match document {
            Value::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        let first = *parts
            .first()
            .ok_or_else(|| NotAReport("an empty array".into()))?;
        let env = &first["environment"];
        let mut record = Record {
            verb: verb.to_string(),
            created_unix: env["timestamp_unix"].as_i64().unwrap_or_else(now),
            command_line: strings(&env["command_line"])
                .iter()
                .map(|a| redact(a).into_owned())
                .collect(),
            settings: first["settings"].to_string(),
            status: first["status"]["state"].as_str().map(String::from),
            cpu_model: text(&env["cpu_model"]),
            kernel: text(&env["kernel"]),
            governor: text(&env["governor"]),
            load1: env["load_average"][0].as_f64(),
            host,
            environment: redact(&env.to_string()).into_owned(),
            git,
            commands: Vec::new(),
            runs: Vec::new(),
            verdicts: Vec::new(),
            // A document made elsewhere may carry a password in its command line.
            document: redact(&document.to_string()).into_owned(),
        };
        for part in parts {
            record.add(part)?;
        }
        Ok(record)
    }

    /// The commands, runs and verdicts of one document.
    fn add(&mut self, doc: &Value) -> Result<(), NotAReport> {
        let schema = doc["schema"].as_str().unwrap_or_default();
        let (list, template) = match schema {
            "ghostbench.compare" | "ghostbench.baseline" => ("commands", "text"),
            "ghostbench.layout" => ("builds", "template"),
            other => return Err(NotAReport(format!("schema {other:?}"))),
        };
        // Indices in this document → indices in the record (analyze's
        // array repeats the baseline in every document).
        let mut index = Vec::new();
        for c in doc[list].as_array().into_iter().flatten() {
            let command = Command {
                name: c["name"].as_str().unwrap_or_default().to_string(),
                template: c[template].as_str().unwrap_or_default().to_string(),
            };
            let at = match self.commands.iter().position(|k| *k == command) {
                Some(i) => i,
                None => {
                    self.commands.push(command);
                    self.commands.len() - 1
                }
            };
            index.push(at);
        }
        let name_of = |i: usize| {
            index
                .get(i)
                .map(|&k| self.commands[k].name.clone())
                .unwrap_or_default()
        };
        let mut runs = Vec::new();
        for r in doc["runs"].as_array().into_iter().flatten() {
            let side = r["side"].as_u64().unwrap_or(0) as usize;
            for v in r["values"].as_array().into_iter().flatten() {
                runs.push(Run {
                    command: index.get(side).copied().unwrap_or(side),
                    name: name_of(side),
                    layout: r["seed"].as_i64(),
                    round: r["round"].as_i64().unwrap_or(0),
                    warmup: r["warmup"].as_bool().unwrap_or(false),
                    metric: v["name"].as_str().unwrap_or_default().to_string(),
                    unit: v["unit"].as_str().unwrap_or("none").to_string(),
                    value: v["value"].as_f64(),
                    exit_code: r["exit_code"].as_i64().unwrap_or(0),
                    env_pad: r["env_pad_bytes"].as_i64(),
                });
            }
        }
        self.runs.extend(runs);
        if schema == "ghostbench.compare" {
            for m in doc["metrics"].as_array().into_iter().flatten() {
                self.verdicts.push(Verdict {
                    metric: m["name"].as_str().unwrap_or_default().to_string(),
                    baseline: name_of(0),
                    name: name_of(1),
                    verdict: m["verdict"].as_str().unwrap_or("UNKNOWN").to_string(),
                    ratio: m["ratio"].as_f64(),
                    ci_low: m["ci_low"].as_f64(),
                    ci_high: m["ci_high"].as_f64(),
                    fragile: false,
                });
            }
        } else if schema == "ghostbench.layout" {
            for row in doc["matrix"].as_array().into_iter().flatten() {
                let c = &row["comparison"];
                if c.is_null() {
                    continue;
                }
                // The across-layouts interval when there is one, else the
                // default layout's.
                let interval = if c["controlled"].is_object() {
                    &c["controlled"]
                } else {
                    &c["default_ratio"]
                };
                self.verdicts.push(Verdict {
                    metric: row["metric"].as_str().unwrap_or_default().to_string(),
                    baseline: name_of(0),
                    name: row["build"].as_str().unwrap_or_default().to_string(),
                    verdict: c["verdict"].as_str().unwrap_or("UNKNOWN").to_string(),
                    ratio: interval["estimate"].as_f64(),
                    ci_low: interval["low"].as_f64(),
                    ci_high: interval["high"].as_f64(),
                    fragile: c["fragility"]["worse"]
                        .as_array()
                        .is_some_and(|w| !w.is_empty()),
                });
            }
        }
        Ok(())
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(String::from)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_compare_document_gives_its_commands_runs_and_verdicts() {
        let doc = json!({
            "schema": "ghostbench.compare",
            "commands": [{"name": "A", "text": "sleep 0.01"}, {"name": "B", "text": "sleep 0.02"}],
            "settings": {"margin": 0.01},
            "status": {"state": "decided"},
            "environment": {"cpu_model": "X", "kernel": "6.1", "load_average": [0.5, 0, 0],
                            "timestamp_unix": 1700000000, "command_line": ["ghostbench", "compare"]},
            "metrics": [{"name": "wall", "verdict": "SLOWER", "ratio": 2.0, "ci_low": 1.9, "ci_high": 2.1}],
            "runs": [
                {"side": 0, "round": 0, "warmup": true, "exit_code": 0, "env_pad_bytes": 3,
                 "values": [{"name": "wall", "value": 0.01, "unit": "seconds"}]},
                {"side": 1, "round": 1, "warmup": false, "exit_code": 0, "env_pad_bytes": null,
                 "values": [{"name": "wall", "value": 0.02, "unit": "seconds"},
                            {"name": "rss", "value": 900.0, "unit": "kibibytes"}]}
            ]
        });
        let r = Record::from_document("compare", &doc, None, Some("h".into())).unwrap();
        assert_eq!(r.created_unix, 1_700_000_000);
        assert_eq!((r.cpu_model.as_deref(), r.load1), (Some("X"), Some(0.5)));
        assert_eq!(r.commands[1].template, "sleep 0.02");
        assert_eq!(r.runs.len(), 3);
        assert_eq!((r.runs[0].warmup, r.runs[0].env_pad), (true, Some(3)));
        assert_eq!(
            (r.runs[2].name.as_str(), r.runs[2].metric.as_str()),
            ("B", "rss")
        );
        assert_eq!(r.verdicts.len(), 1);
        let v = &r.verdicts[0];
        assert_eq!(
            (v.baseline.as_str(), v.name.as_str(), v.verdict.as_str()),
            ("A", "B", "SLOWER")
        );
        assert_eq!(
            (v.ratio, v.ci_low, v.ci_high),
            (Some(2.0), Some(1.9), Some(2.1))
        );
        assert_eq!(serde_json::from_str::<Value>(&r.document).unwrap(), doc);
    }

    #[test]
    fn a_layout_document_gives_one_verdict_per_compared_build() {
        let doc = json!({
            "schema": "ghostbench.layout",
            "builds": [{"name": "old", "template": "cc {out}"}, {"name": "new", "template": "cc -O3 {out}"}],
            "settings": {}, "status": {"state": "finished"}, "environment": {},
            "matrix": [
                {"build": "old", "metric": "wall", "comparison": null},
                {"build": "new", "metric": "wall", "comparison": {"verdict": "ARTIFACT",
                    "controlled": {"estimate": 1.0, "low": 0.98, "high": 1.02},
                    "default_ratio": {"estimate": 0.8, "low": 0.78, "high": 0.82}}}
            ],
            "runs": [{"side": 1, "build": 1, "seed": 3, "round": 0, "warmup": false, "exit_code": 0,
                      "values": [{"name": "wall", "value": 1.0, "unit": "seconds"}]}]
        });
        let r = Record::from_document("layout", &doc, None, None).unwrap();
        assert_eq!(r.runs[0].layout, Some(3));
        assert_eq!(r.runs[0].name, "new");
        assert_eq!(r.verdicts.len(), 1);
        assert_eq!(r.verdicts[0].verdict, "ARTIFACT");
        assert_eq!(r.verdicts[0].ratio, Some(1.0));
    }

    #[test]
    fn other_documents_are_refused() {
        let doc = json!({"schema": "ghostbench.code"});
        assert!(Record::from_document("code", &doc, None, None).is_err());
    }
}
