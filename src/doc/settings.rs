//! The `settings` of compare's and layout's documents, typed for what their
//! readers need: `analyze` re-runs an analysis with the options a report was
//! made with. Every field is optional (an older or imported document may lack
//! it, and the reader keeps its default), but a field of the wrong type is an
//! error naming it, never a silent default.

use crate::run::metric::HigherIsBetter;
use serde::Deserialize;

/// `settings` of a `ghostbench.compare` document (docs/json-schema.md).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CompareSettings {
    pub margin: Option<f64>,
    pub alpha: Option<f64>,
    #[serde(default)]
    pub higher_is_better: Directions,
    /// The metric labels (`wall`, `name=regex:…`).
    pub metrics: Option<Vec<String>>,
    pub warmup: Option<u64>,
    pub min_runs: Option<u64>,
    pub max_runs: Option<u64>,
    pub max_time_s: Option<f64>,
    /// `abba` or `random`.
    pub order: Option<String>,
    pub env_jitter: Option<bool>,
    pub spawn_correction: Option<bool>,
    pub pin: Option<u64>,
    /// The hooks' command texts.
    pub prepare: Option<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    pub ignore_failure: Option<bool>,
    pub input: Option<String>,
    pub timeout_s: Option<f64>,
    pub seed: Option<u64>,
}

/// `settings` of a `ghostbench.layout` document (docs/json-schema.md).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LayoutSettings {
    pub margin: Option<f64>,
    pub alpha: Option<f64>,
    #[serde(default)]
    pub higher_is_better: Directions,
    /// `median` or `min`.
    pub estimator: Option<String>,
    /// The confidence of the last look's intervals (with `--layouts auto`, of
    /// the share of α that look spent).
    pub confidence: Option<f64>,
    pub run_template: Option<String>,
    pub max_layouts: Option<u64>,
    pub rounds: Option<u64>,
    pub warmup: Option<u64>,
    pub seed: Option<u64>,
}

/// `higher_is_better` as the writers spell it: `true` (every metric), a list
/// of metric names, or `false`/`null`/absent (none).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
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
}
