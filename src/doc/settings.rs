//! The `settings` of compare's, baseline's and layout's documents, typed:
//! `analyze` re-runs an analysis with the options a report was made with, and
//! the store keeps them (written back through these types, the writer's own
//! text). Every field is optional (an older or imported document may lack
//! it, and the reader keeps its default), but a field of the wrong type is an
//! error naming it, never a silent default.

use crate::run::metric::HigherIsBetter;
use serde::{Deserialize, Serialize};

/// `settings` of a `ghostbench.compare` (and `ghostbench.baseline`)
/// document (docs/json-schema.md), every field the writer writes, in its
/// order: written back ([`Serialize`]) it is the writer's `settings` text,
/// which the store keeps in its `settings` column.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareSettings {
    /// The metric labels (`wall`, `name=regex:…`).
    pub metrics: Option<Vec<String>>,
    #[serde(default)]
    pub higher_is_better: Directions,
    pub margin: Option<f64>,
    pub alpha: Option<f64>,
    pub warmup: Option<u64>,
    pub min_runs: Option<u64>,
    pub max_runs: Option<u64>,
    pub max_time_s: Option<f64>,
    /// `abba` or `random`.
    pub order: Option<String>,
    pub env_jitter: Option<bool>,
    pub spawn_correction: Option<bool>,
    pub pin: Option<u64>,
    /// `--no-aslr` (absent in documents written before it existed, and
    /// then not written back, so their text stays the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_aslr: Option<bool>,
    /// The hooks' command texts.
    pub prepare: Option<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    pub ignore_failure: Option<bool>,
    pub input: Option<String>,
    pub timeout_s: Option<f64>,
    pub seed: Option<u64>,
}

/// `settings` of a `ghostbench.layout` document (docs/json-schema.md),
/// every field the writer writes, in its order (as [`CompareSettings`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LayoutSettings {
    pub run_template: Option<String>,
    pub metrics: Option<Vec<String>>,
    #[serde(default)]
    pub higher_is_better: Directions,
    /// Variants built, over all looks.
    pub layouts: Option<u64>,
    pub max_layouts: Option<u64>,
    pub rounds: Option<u64>,
    pub warmup: Option<u64>,
    pub jobs: Option<u64>,
    /// `median`, `min` or `paired`.
    pub estimator: Option<String>,
    pub margin: Option<f64>,
    pub alpha: Option<f64>,
    /// The confidence of the last look's intervals (with `--layouts auto`, of
    /// the share of α that look spent).
    pub confidence: Option<f64>,
    pub max_time_s: Option<f64>,
    pub shell: Option<bool>,
    pub seed: Option<u64>,
    pub work_dir: Option<String>,
}

/// `higher_is_better` as the writers spell it: `true` (every metric), a list
/// of metric names, or `false`/`null`/absent (none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Directions {
    Flag(bool),
    Named(Vec<String>),
    #[default]
    Off,
}

impl Directions {
    /// The flag that names the same metrics.
    pub fn flag(&self) -> HigherIsBetter {
        match self {
            Directions::Flag(true) => HigherIsBetter::All,
            Directions::Named(names) => HigherIsBetter::Named(names.clone()),
            Directions::Flag(false) | Directions::Off => HigherIsBetter::Off,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn directions_read_every_spelling_and_a_wrong_type_is_an_error() {
        let read = |v| serde_json::from_value::<CompareSettings>(v);
        assert_eq!(
            read(json!({"higher_is_better": true}))
                .unwrap()
                .higher_is_better
                .flag(),
            HigherIsBetter::All
        );
        assert_eq!(
            read(json!({"higher_is_better": ["ops"]}))
                .unwrap()
                .higher_is_better
                .flag(),
            HigherIsBetter::Named(vec!["ops".to_string()])
        );
        for off in [
            json!({"higher_is_better": false}),
            json!({"higher_is_better": null}),
            json!({}),
        ] {
            assert_eq!(
                read(off).unwrap().higher_is_better.flag(),
                HigherIsBetter::Off
            );
        }
        let e = read(json!({"min_runs": "five"})).unwrap_err().to_string();
        assert!(e.contains("invalid type"), "{e}");
        let layout: LayoutSettings =
            serde_json::from_value(json!({"estimator": "min", "max_layouts": null, "rounds": 3}))
                .unwrap();
        assert_eq!(
            (
                layout.estimator.as_deref(),
                layout.max_layouts,
                layout.rounds
            ),
            (Some("min"), None, Some(3))
        );
    }

    /// The settings text a compare and a layout of this ghostbench wrote
    /// (`compare --min-runs 3 --max-runs 4 true true`; a layout's fields in
    /// `layout::Settings`' order), read and written back: the same bytes.
    #[test]
    fn settings_written_back_are_the_writers_text() {
        let compare = r#"{"metrics":["wall"],"higher_is_better":false,"margin":0.01,"alpha":0.05,"warmup":1,"min_runs":3,"max_runs":4,"max_time_s":60.0,"order":"abba","env_jitter":true,"spawn_correction":true,"pin":null,"no_aslr":true,"prepare":null,"setup":null,"cleanup":null,"ignore_failure":false,"input":null,"timeout_s":null,"seed":1}"#;
        let typed: CompareSettings = serde_json::from_str(compare).unwrap();
        assert_eq!(typed.no_aslr, Some(true));
        assert_eq!(serde_json::to_string(&typed).unwrap(), compare);
        // A document from before `--no-aslr` is written back without it.
        let older = compare.replace(r#""no_aslr":true,"#, "");
        let typed: CompareSettings = serde_json::from_str(&older).unwrap();
        assert_eq!(serde_json::to_string(&typed).unwrap(), older);
        let layout = r#"{"run_template":"{bench}","metrics":["cost=regex:cost (\\d+)"],"higher_is_better":["ops"],"layouts":8,"max_layouts":null,"rounds":5,"warmup":1,"jobs":2,"estimator":"min","margin":0.01,"alpha":0.05,"confidence":0.975,"max_time_s":null,"shell":false,"seed":7,"work_dir":"/tmp/w"}"#;
        let typed: LayoutSettings = serde_json::from_str(layout).unwrap();
        assert_eq!(serde_json::to_string(&typed).unwrap(), layout);
    }
}
