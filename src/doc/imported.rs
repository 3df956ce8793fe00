//! The `analyze` section of a compare or layout document: where the runs
//! came from (`Source`, formats as enums) and how the interval was taken.

use super::field::required;
use super::schema::Schema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Where `analyze` read a report's runs from (`analyze.format`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `csv`, `hyperfine`, or both merged (`csv+hyperfine`), in the order read.
    Files(Vec<FileFormat>),
    /// A ghostbench document re-analyzed.
    Ghost(Schema),
    /// A stored baseline's runs (`compare --baseline`/`analyze --baseline`, stored mode).
    Baseline,
}

/// A file format `analyze` reads rows from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Csv,
    Hyperfine,
}

impl FileFormat {
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Csv => "csv",
            FileFormat::Hyperfine => "hyperfine",
        }
    }
}

impl Source {
    /// As written in `analyze.format`.
    pub fn text(&self) -> String {
        match self {
            Source::Files(formats) => formats
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join("+"),
            Source::Ghost(schema) => schema.name().to_string(),
            Source::Baseline => "baseline".to_string(),
        }
    }

    /// `text` read back; None for a format ghostbench does not write.
    pub fn parse(text: &str) -> Option<Source> {
        if text == "baseline" {
            return Some(Source::Baseline);
        }
        if let Some(schema) = Schema::from_name(text) {
            return Some(Source::Ghost(schema));
        }
        let formats: Option<Vec<FileFormat>> = text
            .split('+')
            .map(|f| match f {
                "csv" => Some(FileFormat::Csv),
                "hyperfine" => Some(FileFormat::Hyperfine),
                _ => None,
            })
            .collect();
        formats.filter(|f| !f.is_empty()).map(Source::Files)
    }

    /// The formats of both, in the order read (files merged); `self` when
    /// either is not rows from files.
    pub fn merged(&self, other: &Source) -> Source {
        match other {
            Source::Files(formats) => formats.iter().fold(self.clone(), |s, &f| s.with(f)),
            _ => self.clone(),
        }
    }

    /// The same with `format` merged in (a second file of another format).
    pub fn with(&self, format: FileFormat) -> Source {
        match self {
            Source::Files(formats) if formats.contains(&format) => self.clone(),
            Source::Files(formats) => {
                let mut formats = formats.clone();
                formats.push(format);
                Source::Files(formats)
            }
            other => other.clone(),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Source, D::Error> {
        let text = String::deserialize(deserializer)?;
        Source::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown analyze.format {text:?}")))
    }
}

/// How the verdict's interval of imported runs was taken (`analyze.interval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalKind {
    /// One interval at the data's size.
    Fixed,
    /// `compare`'s looks replayed over the runs in their order.
    Sequential,
}

/// Where a report's runs came from when `analyze` read them from files
/// instead of running anything (the document's `analyze` section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// The files read, in order.
    pub files: Vec<String>,
    pub format: Source,
    pub interval: IntervalKind,
    /// Whether the runs of the compared sides were interleaved; `None` when
    /// the data cannot tell (no `round` column).
    #[serde(deserialize_with = "required")]
    pub interleaved: Option<bool>,
    /// With a CSV `layout` column: the layout labels by seed (seed = index;
    /// seed 0 is the default layout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<Vec<String>>,
    /// `history show ID`: the document is the store's result ID, read back
    /// with its own settings (not a new analysis; not in the JSON).
    #[serde(skip)]
    pub stored: Option<i64>,
}
