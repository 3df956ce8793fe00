//! Reading a document: its head (`schema`, `schema_version`), a migration
//! when it is older, then its type; `Stored` is what the store keeps and
//! `history show --json` gives back.

use super::imported::Imported;
use super::kinds::{Baseline, Compare, Layout, State};
use super::migrate;
use super::schema::{Error, Schema};
use crate::run::environment::Environment;
use crate::run::Status;
use serde::Deserialize;
use serde_json::Value;

/// One document of a kind the store keeps.
#[derive(Debug, Clone)]
pub enum Document {
    Compare(Box<Compare>),
    Layout(Box<Layout>),
    Baseline(Box<Baseline>),
}

/// What the store keeps and `history show --json` gives back: one document,
/// or `analyze`'s array of compare documents (one per candidate).
#[derive(Debug, Clone)]
pub enum Stored {
    One(Document),
    Many(Vec<Compare>),
}

/// The kinds a stored result may be.
const STORED: [Schema; 3] = [Schema::Compare, Schema::Layout, Schema::Baseline];

/// Every document's first two fields.
#[derive(Deserialize)]
struct Head {
    schema: String,
    schema_version: u32,
}

/// The schema and version of one document object.
fn head(value: &Value) -> Result<(Schema, u32), Error> {
    let head = Head::deserialize(value).map_err(|e| Error::NoSchema(e.to_string()))?;
    let schema = Schema::from_name(&head.schema).ok_or_else(|| Error::Kind {
        found: head.schema.clone(),
        expected: names(&STORED),
    })?;
    Ok((schema, head.schema_version))
}

fn names(schemas: &[Schema]) -> String {
    schemas
        .iter()
        .map(|s| s.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Read one document object of `schema` into `T`, migrating an older version.
fn typed<T: serde::de::DeserializeOwned>(
    value: &Value,
    schema: Schema,
    version: u32,
) -> Result<T, Error> {
    let reads = schema.version();
    let shape = |e: serde_json::Error| Error::Shape {
        schema,
        version,
        cause: e.to_string(),
    };
    if version > reads {
        return Err(Error::Newer {
            schema,
            found: version,
            reads,
        });
    }
    if version == reads {
        return T::deserialize(value).map_err(shape);
    }
    let upgraded = migrate::upgrade(schema, version, value.clone())?;
    T::deserialize(&upgraded).map_err(shape)
}

impl Document {
    /// One document object, of a kind the store keeps.
    pub fn read(value: &Value) -> Result<Document, Error> {
        let (schema, version) = head(value)?;
        Ok(match schema {
            Schema::Compare => Document::Compare(Box::new(typed(value, schema, version)?)),
            Schema::Layout => Document::Layout(Box::new(typed(value, schema, version)?)),
            Schema::Baseline => Document::Baseline(Box::new(typed(value, schema, version)?)),
            other => {
                return Err(Error::Kind {
                    found: other.name().to_string(),
                    expected: names(&STORED),
                })
            }
        })
    }

    pub fn schema(&self) -> Schema {
        match self {
            Document::Compare(_) => Schema::Compare,
            Document::Layout(_) => Schema::Layout,
            Document::Baseline(_) => Schema::Baseline,
        }
    }

    pub fn status(&self) -> &Status<State> {
        match self {
            Document::Compare(d) => &d.status,
            Document::Layout(d) => &d.status,
            Document::Baseline(d) => &d.status,
        }
    }

    pub fn environment(&self) -> &Environment {
        match self {
            Document::Compare(d) => &d.environment,
            Document::Layout(d) => &d.environment,
            Document::Baseline(d) => &d.environment,
        }
    }

    /// The `settings` as JSON text, written back through their type: for a
    /// document this ghostbench wrote, the writer's own text.
    pub fn settings_text(&self) -> String {
        let text = match self {
            Document::Compare(d) => serde_json::to_string(&d.settings),
            Document::Layout(d) => serde_json::to_string(&d.settings),
            Document::Baseline(d) => serde_json::to_string(&d.settings),
        };
        // Plain structs of numbers, strings and lists: nothing can fail.
        text.unwrap_or_else(|_| "{}".into())
    }

    /// The `analyze` section, when `analyze` wrote the document.
    pub fn imported(&self) -> Option<&Imported> {
        match self {
            Document::Compare(d) => d.analyze.as_ref(),
            Document::Layout(d) => d.analyze.as_ref(),
            Document::Baseline(_) => None,
        }
    }
}

impl Stored {
    /// A stored or imported document's text.
    pub fn parse(text: &str) -> Result<Stored, Error> {
        let value: Value = serde_json::from_str(text).map_err(|e| Error::NotJson(e.to_string()))?;
        Stored::read(&value)
    }

    /// A document already parsed as JSON.
    pub fn read(value: &Value) -> Result<Stored, Error> {
        let Value::Array(items) = value else {
            return Document::read(value).map(Stored::One);
        };
        if items.is_empty() {
            return Err(Error::Empty);
        }
        items
            .iter()
            .map(|item| match Document::read(item)? {
                Document::Compare(c) => Ok(*c),
                other => Err(Error::Array(other.schema())),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Stored::Many)
    }

    /// The verb that made it: `analyze` when it read its runs from files
    /// (or is `analyze`'s array), else the document's own kind.
    pub fn verb(&self) -> &'static str {
        match self {
            Stored::Many(_) => "analyze",
            Stored::One(d) if d.imported().is_some() => "analyze",
            Stored::One(Document::Compare(_)) => "compare",
            Stored::One(Document::Layout(_)) => "layout",
            Stored::One(Document::Baseline(_)) => "baseline",
        }
    }

    /// How many runs the store left out of the first (or only) document,
    /// if any (a result stored without its runs).
    pub fn runs_left_out(&self) -> Option<u64> {
        let left_out = match self {
            Stored::One(Document::Compare(d)) => d.runs_left_out,
            Stored::One(Document::Layout(d)) => d.runs_left_out,
            Stored::One(Document::Baseline(_)) => None,
            Stored::Many(items) => items[0].runs_left_out,
        };
        left_out.filter(|&n| n > 0)
    }

    /// The first (or only) document's status.
    pub fn status(&self) -> &Status<State> {
        match self {
            Stored::One(d) => d.status(),
            Stored::Many(items) => &items[0].status,
        }
    }
}
