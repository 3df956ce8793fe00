//! Older schema versions brought up to the current one, so that one set of
//! types reads every document a store may hold. The only code that edits a
//! document by its keys; each step is one version (docs/json-schema.md gives
//! what each version changed).
//!
//! - `ghostbench.layout` 1 → 2: only additions (`looks[]`, `settings.max_layouts`,
//!   `undecided`), none of which a reader needs: the version number alone.
//! - `ghostbench.layout` 2 → 3: `controlled.trimmed` is gone; a comparison
//!   gains `fragility` and `placement_points`, which a version 2 run did not
//!   assess: both `null` (no fragile layout, no placement points).

use super::schema::{Error, Schema};
use serde_json::Value;

/// `document` (of `schema` at `version`, older than the current one) at the
/// current version; an error for a version no step starts from.
pub fn upgrade(schema: Schema, version: u32, mut document: Value) -> Result<Value, Error> {
    let reads = schema.version();
    let unknown = Error::Unknown {
        schema,
        found: version,
        reads,
    };
    let mut at = version;
    while at < reads {
        match (schema, at) {
            (Schema::Layout, 1) => {}
            (Schema::Layout, 2) => layout_2_to_3(&mut document),
            _ => return Err(unknown),
        }
        at += 1;
    }
    if let Some(object) = document.as_object_mut() {
        object.insert("schema_version".into(), Value::from(reads));
    }
    Ok(document)
}

fn layout_2_to_3(document: &mut Value) {
    let Some(rows) = document.get_mut("matrix").and_then(Value::as_array_mut) else {
        return;
    };
    for row in rows {
        let Some(comparison) = row.get_mut("comparison").and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(controlled) = comparison
            .get_mut("controlled")
            .and_then(Value::as_object_mut)
        {
            controlled.remove("trimmed");
        }
        comparison.entry("fragility").or_insert(Value::Null);
        comparison.entry("placement_points").or_insert(Value::Null);
    }
}
