//! The document types against hand-written documents of each kind, the
//! migration of an older layout document, loud failures for moved keys and
//! newer versions, and docs/json-schema.md against the fields each type reads.

use super::*;
use crate::run::Status;
use crate::stats::verdict::Verdict;
use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};

fn environment() -> Value {
    json!({"cpu_model": "X", "logical_cpus": 2, "kernel": "6.1", "governor": null,
           "turbo": null, "load_average": [0.5, 0.1, 0.0], "aslr": null,
           "split_lock_mitigate": null, "split_lock_detect": null,
           "perf_event_paranoid": null, "transparent_hugepage": null,
           "virtualization": null, "tool_version": "0.1.0",
           "command_line": ["ghostbench", "compare"], "timestamp_unix": 1700000000u64})
}

fn run(side: usize, value: f64) -> Value {
    json!({"side": side, "round": 0, "warmup": false, "wall_s": value, "user_s": 0.0,
           "sys_s": 0.0, "max_rss_kib": 1, "exit_code": 0, "env_pad_bytes": null,
           "values": [{"name": "wall", "value": value, "unit": "seconds"}], "counters": []})
}

fn compare() -> Value {
    json!({
        "schema": "ghostbench.compare", "schema_version": 1,
        "commands": [{"name": "A", "text": "a", "argv": ["a"], "shell": false},
                     {"name": "B", "text": "b", "argv": ["b"], "shell": false}],
        "settings": {"margin": 0.01}, "status": {"state": "decided", "message": null, "last_output": []},
        "environment": environment(),
        "metrics": [{"name": "wall", "unit": "seconds", "verdict": "SLOWER", "ratio": 2.0,
                     "ci_low": 1.9, "ci_high": null}],
        "notes": [], "runs": [run(0, 1.0), run(1, 2.0)]
    })
}

/// A layout document as version 2 wrote it (issue 22 made version 3):
/// `controlled.trimmed`, no `fragility`.
fn layout_v2() -> Value {
    let mut run = run(1, 1.0);
    run["build"] = json!(1);
    run["seed"] = json!(3);
    json!({
        "schema": "ghostbench.layout", "schema_version": 2,
        "builds": [{"name": "old", "template": "cc {out}"}, {"name": "new", "template": "cc -O3 {out}"}],
        "settings": {"layouts": 8, "max_layouts": null},
        "status": {"state": "finished", "message": null, "last_output": []},
        "environment": environment(), "used_seeds": [0, 3],
        "matrix": [
            {"build": "old", "metric": "wall", "comparison": null},
            {"build": "new", "metric": "wall", "comparison": {"verdict": "ARTIFACT",
                "default_verdict": "FASTER", "controlled_verdict": "SAME",
                "controlled": {"estimate": 1.0, "low": 0.98, "high": 1.02, "trimmed": 0.2, "df": 5},
                "default_ratio": {"estimate": 0.8, "low": 0.78, "high": 0.82}}}
        ],
        "looks": [], "notes": [], "runs": [run]
    })
}

#[test]
fn every_schema_name_is_one_kind_and_reads_back() {
    for schema in Schema::ALL {
        assert_eq!(Schema::from_name(schema.name()), Some(schema));
        let text = serde_json::to_string(&schema).unwrap();
        assert_eq!(serde_json::from_str::<Schema>(&text).unwrap(), schema);
        assert!(schema.version() >= 1);
    }
    let unique: std::collections::BTreeSet<_> = Schema::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(unique.len(), Schema::ALL.len());
    assert!(serde_json::from_str::<Schema>("\"ghostbench.nothing\"").is_err());
}

#[test]
fn a_compare_document_reads_into_its_type() {
    let Stored::One(Document::Compare(c)) = Stored::read(&compare()).unwrap() else {
        panic!("not a compare document");
    };
    assert_eq!(c.commands[1].name, "B");
    assert_eq!(c.status.state, State::Decided);
    assert_eq!(c.metrics[0].verdict, Verdict::Slower);
    assert_eq!(
        (c.metrics[0].ratio, c.metrics[0].ci_high),
        (Some(2.0), None)
    );
    assert_eq!(c.runs[1].build, 1);
    assert_eq!(c.environment.cpu_model.as_deref(), Some("X"));
    assert_eq!(Stored::read(&compare()).unwrap().verb(), "compare");
    // analyze's array of compare documents.
    let many = Stored::read(&json!([compare(), compare()])).unwrap();
    assert!(matches!(&many, Stored::Many(items) if items.len() == 2));
    assert_eq!(many.verb(), "analyze");
}

#[test]
fn a_moved_key_fails_loudly_and_names_it() {
    // `verdict` renamed: an error naming the field, never UNKNOWN.
    let mut doc = compare();
    let metric = doc["metrics"][0].as_object_mut().unwrap();
    let verdict = metric.remove("verdict").unwrap();
    metric.insert("decision".into(), verdict);
    let error = Stored::read(&doc).unwrap_err();
    assert!(matches!(
        error,
        Error::Shape {
            schema: Schema::Compare,
            ..
        }
    ));
    assert!(error.to_string().contains("`verdict`"), "{error}");
    // A nullable field the writer always writes must be there.
    let mut doc = compare();
    doc["metrics"][0].as_object_mut().unwrap().remove("ci_low");
    assert!(Stored::read(&doc)
        .unwrap_err()
        .to_string()
        .contains("`ci_low`"));
    // A verdict that is no verdict.
    let mut doc = compare();
    doc["metrics"][0]["verdict"] = json!("MAYBE");
    assert!(Stored::read(&doc).is_err());
    // Not a kind the store keeps, an empty array, no schema.
    let code = json!({"schema": "ghostbench.code", "schema_version": 2});
    assert!(matches!(Stored::read(&code), Err(Error::Kind { .. })));
    assert_eq!(Stored::read(&json!([])).unwrap_err(), Error::Empty);
    assert!(matches!(
        Stored::read(&json!({"a": 1})),
        Err(Error::NoSchema(_))
    ));
    assert!(matches!(Stored::parse("{"), Err(Error::NotJson(_))));
}

#[test]
fn a_newer_version_is_refused_with_both_versions() {
    let mut doc = compare();
    doc["schema_version"] = json!(2);
    let error = Stored::read(&doc).unwrap_err();
    assert_eq!(
        error,
        Error::Newer {
            schema: Schema::Compare,
            found: 2,
            reads: 1
        }
    );
    assert!(!error.to_string().contains('\n'));
    let mut doc = compare();
    doc["schema_version"] = json!(0);
    assert!(matches!(
        Stored::read(&doc),
        Err(Error::Unknown { found: 0, .. })
    ));
}

#[test]
fn a_version_2_layout_document_reads_through_the_migration() {
    let old = layout_v2();
    // Read as if it were version 3, its missing `fragility` is an error...
    let mut as_v3 = old.clone();
    as_v3["schema_version"] = json!(3);
    let error = Stored::read(&as_v3).unwrap_err();
    assert!(error.to_string().contains("`fragility`"), "{error}");
    // ...and through the migration it reads, with no fragile layout.
    let Stored::One(Document::Layout(l)) = Stored::read(&old).unwrap() else {
        panic!("not a layout document");
    };
    assert_eq!(l.builds[1].name, "new");
    assert_eq!(l.status.state, State::Finished);
    let c = l.matrix[1].comparison.as_ref().unwrap();
    assert_eq!(c.verdict, Verdict::Artifact);
    assert!(!c.fragile());
    assert_eq!(c.interval().unwrap().estimate, Some(1.0));
    assert_eq!((l.runs[0].build, l.runs[0].seed), (1, 3));
    // The migration itself: version 3's shape, `trimmed` gone.
    let new = migrate::upgrade(Schema::Layout, 2, old.clone()).unwrap();
    assert_eq!(new["schema_version"], 3);
    let comparison = &new["matrix"][1]["comparison"];
    assert_eq!(comparison["fragility"], Value::Null);
    assert_eq!(comparison["placement_points"], Value::Null);
    assert!(comparison["controlled"].get("trimmed").is_none());
    assert_eq!(new["matrix"][0]["comparison"], Value::Null);
    // Version 1 has version 2's field names: the same steps read it.
    let mut v1 = old;
    v1["schema_version"] = json!(1);
    assert!(matches!(
        Stored::read(&v1),
        Ok(Stored::One(Document::Layout(_)))
    ));
}

#[test]
fn imported_formats_and_intervals_are_enums_written_as_before() {
    for text in [
        "csv",
        "hyperfine",
        "csv+hyperfine",
        "hyperfine+csv",
        "baseline",
        "ghostbench.compare",
        "ghostbench.layout",
    ] {
        let source = Source::parse(text).unwrap();
        assert_eq!(source.text(), text);
    }
    assert_eq!(
        Source::parse("csv")
            .unwrap()
            .with(FileFormat::Hyperfine)
            .text(),
        "csv+hyperfine"
    );
    assert_eq!(
        Source::parse("csv").unwrap().with(FileFormat::Csv).text(),
        "csv"
    );
    assert_eq!(Source::parse("xml"), None);
    assert_eq!(Source::parse(""), None);
    let imported: Imported = serde_json::from_value(json!({
        "files": ["a.csv"], "format": "csv", "interval": "sequential", "interleaved": null}))
    .unwrap();
    assert_eq!(imported.interval, IntervalKind::Sequential);
    assert_eq!(imported.format, Source::Files(vec![FileFormat::Csv]));
    assert_eq!(
        serde_json::to_value(&imported).unwrap(),
        json!({"files": ["a.csv"], "format": "csv", "interval": "sequential", "interleaved": null})
    );
}

/// The field names a struct type reads, from serde's own list.
fn fields<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
    struct Probe(Vec<&'static str>);
    impl<'de> Deserializer<'de> for &mut Probe {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.extend(fields);
            Err(serde::de::Error::custom("fields read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }
    let mut probe = Probe(Vec::new());
    let _ = T::deserialize(&mut probe);
    assert!(
        !probe.0.is_empty(),
        "{} reads no fields",
        std::any::type_name::<T>()
    );
    probe.0
}

/// The text of docs/json-schema.md from the heading that starts with `from` to the next `## `.
fn section<'a>(doc: &'a str, from: &str) -> &'a str {
    let start = doc
        .find(from)
        .unwrap_or_else(|| panic!("no section {from}"));
    let rest = &doc[start + from.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

#[test]
fn every_field_a_reader_needs_is_in_docs_json_schema() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-schema.md"))
        .unwrap();
    let compare = section(&doc, "## `compare`");
    let layout = section(&doc, "## `layout`");
    let baseline = section(&doc, "## `baseline`");
    let checks: Vec<(&str, &str, Vec<&str>)> = vec![
        ("compare", compare, fields::<Compare>()),
        ("compare metrics[]", compare, fields::<Metric>()),
        ("compare analyze", compare, fields::<Imported>()),
        ("status", compare, fields::<Status<State>>()),
        ("layout", layout, fields::<Layout>()),
        ("layout builds[]", layout, fields::<Build>()),
        ("layout matrix[]", layout, fields::<Row>()),
        ("layout comparison", layout, fields::<Comparison>()),
        ("layout ratio", layout, fields::<Ratio>()),
        ("layout fragility", layout, fields::<Fragility>()),
        ("layout fragile layout", layout, fields::<Fragile>()),
        ("baseline", baseline, fields::<Baseline>()),
        ("compare settings", compare, fields::<CompareSettings>()),
        ("layout settings", layout, fields::<LayoutSettings>()),
    ];
    let word = |text: &str, name: &str| {
        text.match_indices(name).any(|(at, _)| {
            let before = text[..at].chars().last();
            let after = text[at + name.len()..].chars().next();
            let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !part(before) && !part(after)
        })
    };
    let mut missing = Vec::new();
    for (what, text, names) in checks {
        for name in names {
            // Every document's head is named once, at the top of the file.
            let text = if name == "schema_version" {
                doc.as_str()
            } else {
                text
            };
            if !word(text, name) {
                missing.push(format!("{what}: `{name}`"));
            }
        }
    }
    assert!(missing.is_empty(), "read but not documented: {missing:?}");
    // The states a reader knows are the states the docs list.
    for state in [
        State::Decided,
        State::BudgetExhausted,
        State::Failed,
        State::Interrupted,
        State::Imported,
    ] {
        assert!(word(compare, state.name()), "{state}");
    }
    for state in [State::Finished, State::BuildFailed, State::RunFailed] {
        assert!(word(layout, state.name()), "{state}");
    }
    // And every schema name the doc module spells is the one the docs give.
    for schema in [
        Schema::Compare,
        Schema::Layout,
        Schema::Baseline,
        Schema::Code,
        Schema::Probe,
        Schema::Plan,
        Schema::Shard,
        Schema::Structs,
        Schema::Noise,
    ] {
        assert!(doc.contains(schema.name()), "{schema}");
    }
}
