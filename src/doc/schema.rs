//! The names and versions of every document kind (`Schema`, spelled here and
//! nowhere else), and why a document cannot be read (`Error`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Every kind of document ghostbench writes: its `schema` name and version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schema {
    Compare,
    Layout,
    Baseline,
    Code,
    Structs,
    Probe,
    Plan,
    Shard,
    Noise,
}

impl Schema {
    pub const ALL: [Schema; 9] = [
        Schema::Compare,
        Schema::Layout,
        Schema::Baseline,
        Schema::Code,
        Schema::Structs,
        Schema::Probe,
        Schema::Plan,
        Schema::Shard,
        Schema::Noise,
    ];

    /// The document's `schema` value.
    pub const fn name(self) -> &'static str {
        match self {
            Schema::Compare => "ghostbench.compare",
            Schema::Layout => "ghostbench.layout",
            Schema::Baseline => "ghostbench.baseline",
            Schema::Code => "ghostbench.code",
            Schema::Structs => "ghostbench.structs",
            Schema::Probe => "ghostbench.probe",
            Schema::Plan => "ghostbench.plan",
            Schema::Shard => "ghostbench.shard",
            Schema::Noise => "ghostbench.noise",
        }
    }

    /// The `schema_version` this ghostbench writes (and reads; older ones
    /// through [`migrate`]).
    pub const fn version(self) -> u32 {
        match self {
            Schema::Layout => 3,
            Schema::Code => 2,
            Schema::Compare
            | Schema::Baseline
            | Schema::Structs
            | Schema::Probe
            | Schema::Plan
            | Schema::Shard
            | Schema::Noise => 1,
        }
    }

    /// The schema called `name`, if ghostbench writes one.
    pub fn from_name(name: &str) -> Option<Schema> {
        Schema::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Schema, D::Error> {
        let name = String::deserialize(deserializer)?;
        Schema::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown schema {name:?}")))
    }
}

/// Why a document cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("an empty array, not a ghostbench document")]
    Empty,
    #[error("no `schema` and `schema_version`: not a ghostbench document ({0})")]
    NoSchema(String),
    #[error("a {found:?} document, not one of {expected}")]
    Kind { found: String, expected: String },
    #[error("{schema} schema_version {found} is newer than this ghostbench reads ({reads}); read it with a newer ghostbench")]
    Newer {
        schema: Schema,
        found: u32,
        reads: u32,
    },
    #[error(
        "{schema} schema_version {found}: no migration from it (this ghostbench reads {reads})"
    )]
    Unknown {
        schema: Schema,
        found: u32,
        reads: u32,
    },
    /// The document names its kind but a field is missing or of the wrong type.
    #[error("{schema} schema_version {version}: {cause}")]
    Shape {
        schema: Schema,
        version: u32,
        cause: String,
    },
    #[error(
        "an array of {0} documents; only analyze's array of ghostbench.compare documents is stored"
    )]
    Array(Schema),
}
