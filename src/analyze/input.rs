//! Reading `analyze`'s files: the format from the content, CSV and hyperfine
//! JSON into rows, and every malformed input as a one-line error naming the
//! file and the line or field.
//!
//! A ghostbench `--json` is only recognised here; `ghost` re-analyses it.

use super::json_count::{is_ghostbench, json_values};
use super::Note;
use crate::doc::{FileFormat, Schema, Source};
use crate::limits::{self, Input};
use crate::run::metric::Unit;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::Path;

/// The columns a CSV may have; `name` and `value` are required.
pub const COLUMNS: [&str; 5] = ["name", "value", "layout", "metric", "round"];

/// Why a value ≤ 0 is refused: every analysis `analyze` makes is of a ratio
/// B/A on the log scale, where such a value would be dropped or meaningless.
const ABOVE_ZERO: &str = "analyze compares ratios B/A, which need values above 0 (shift a metric that can be 0 or negative, or give its positive counterpart)";

/// The metric of a CSV without a `metric` column.
pub const DEFAULT_METRIC: &str = "value";

/// One file, read and recognised.
pub enum Loaded {
    Rows(Dataset),
    /// A ghostbench `--json`: `ghostbench.compare` or `ghostbench.layout`.
    Ghost {
        schema: String,
        doc: Value,
    },
}

/// How the runs of different names were ordered in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Every row has a round: the rounds tell.
    Rounds,
    /// One name's runs after the other's (hyperfine).
    Blocks,
    /// Nothing tells (a CSV without a `round` column).
    Unknown,
}

/// One measured value.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: usize,
    pub metric: usize,
    pub layout: Option<usize>,
    pub round: Option<usize>,
    pub value: f64,
    pub exit_code: i32,
}

/// A name (a command or build) with the command text, when the file has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Name {
    pub name: String,
    pub text: String,
}

/// The rows of one or more files.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// `csv` or `hyperfine` (`csv+hyperfine` when both were merged).
    pub format: Source,
    pub files: Vec<String>,
    /// In file order; the first is the baseline.
    pub names: Vec<Name>,
    pub metrics: Vec<(String, Unit)>,
    /// Layout labels in file order, when the data have a `layout` column.
    pub layouts: Option<Vec<String>>,
    pub order: Order,
    pub rows: Vec<Row>,
    /// What the files tell about the runs (non-zero exits), as facts.
    pub notes: Vec<Note>,
}

impl Dataset {
    fn new(format: FileFormat, file: &str, layouts: bool, order: Order) -> Dataset {
        Dataset {
            format: Source::Files(vec![format]),
            files: vec![file.into()],
            names: Vec::new(),
            metrics: Vec::new(),
            layouts: layouts.then(Vec::new),
            order,
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn name_index(&mut self, name: &str, text: &str) -> usize {
        if let Some(i) = self.names.iter().position(|n| n.name == name) {
            return i;
        }
        self.names.push(Name {
            name: name.into(),
            text: text.into(),
        });
        self.names.len() - 1
    }

    fn metric_index(&mut self, metric: &str, unit: Unit) -> usize {
        index_of(&mut self.metrics, (metric.to_string(), unit), |m| {
            m.0 == metric
        })
    }

    fn layout_index(&mut self, label: &str) -> Option<usize> {
        let layouts = self.layouts.as_mut()?;
        Some(index_of(layouts, label.to_string(), |l| l == label))
    }

    /// The rows, names, metrics and layouts within [`limits`]: checked after
    /// every row, so a hostile file stops at the bound, not at the end.
    fn check_bounds(&self, at: &str) -> Result<()> {
        let layouts = self.layouts.as_ref().map_or(0, Vec::len);
        for (what, count, most) in [
            ("rows", self.rows.len(), limits::MAX_ROWS),
            ("names", self.names.len(), limits::MAX_BUILDS),
            ("metrics", self.metrics.len(), limits::MAX_METRICS),
            ("layouts", layouts, limits::MAX_LAYOUTS),
        ] {
            if count > most {
                bail!("{at}: more than {most} {what}, the most analyze reads");
            }
        }
        Ok(())
    }

    /// Values of one name on one metric, in file order.
    pub fn values(&self, name: usize, metric: usize) -> Vec<f64> {
        self.rows
            .iter()
            .filter(|r| r.name == name && r.metric == metric)
            .map(|r| r.value)
            .collect()
    }
}

fn index_of<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T) -> bool) -> usize {
    match list.iter().position(same) {
        Some(i) => i,
        None => {
            list.push(item);
            list.len() - 1
        }
    }
}

/// Read one file and recognise its format from its content: JSON (an object)
/// is hyperfine's export or a ghostbench report, anything else must be a CSV
/// with a header.
pub fn read(path: &Path) -> Result<Loaded> {
    let file = path.display().to_string();
    let bytes =
        limits::read_capped(path, Input::Table).with_context(|| format!("cannot read {file}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{file}: not text (invalid UTF-8 at byte {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.is_empty() {
        bail!("{file}: empty file");
    }
    let json_named = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // A ghostbench report is parsed whole as a value, about six times
        // its text: held to its own, smaller cap before that (the schema is
        // read without building anything).
        if is_ghostbench(trimmed) {
            Input::Document
                .check_read(trimmed.len())
                .map_err(|e| anyhow::anyhow!("cannot read {file}: a ghostbench report: {e}"))?;
        }
        json_values(&file, trimmed)?;
        let doc: Value = serde_json::from_str(trimmed)
            .map_err(|e| anyhow::anyhow!("{file}: invalid JSON: {e}"))?;
        // The text is not needed once parsed (hyperfine's times are a value
        // of 32 bytes per number beside it otherwise).
        drop(text);
        return json(&file, doc);
    }
    if json_named {
        bail!("{file}: named .json but its content is not a JSON object");
    }
    csv(&file, trimmed).map(Loaded::Rows)
}

/// A JSON document: a ghostbench report or hyperfine's `--export-json`.
fn json(file: &str, doc: Value) -> Result<Loaded> {
    if let Some(schema) = doc.get("schema").and_then(Value::as_str) {
        if [Schema::Compare, Schema::Layout]
            .map(Schema::name)
            .contains(&schema)
        {
            return Ok(Loaded::Ghost {
                schema: schema.to_string(),
                doc,
            });
        }
        bail!(
            "{file}: a {schema:?} document; analyze reads ghostbench.compare and ghostbench.layout"
        );
    }
    if doc.get("results").is_some() {
        return hyperfine(file, &doc).map(Loaded::Rows);
    }
    bail!(
        "{file}: JSON, but neither hyperfine's --export-json (results[].command, results[].times) \
         nor a ghostbench compare or layout --json"
    )
}

/// hyperfine's `--export-json`: `results[].command` and `results[].times`
/// (seconds), optionally `results[].exit_codes`. The commands ran one after
/// another, so the order is [`Order::Blocks`].
fn hyperfine(file: &str, doc: &Value) -> Result<Dataset> {
    let results = doc
        .get("results")
        .and_then(Value::as_array)
        .with_context(|| format!("{file}: `results` is not an array"))?;
    if results.is_empty() {
        bail!("{file}: `results` is empty");
    }
    let mut data = Dataset::new(FileFormat::Hyperfine, file, false, Order::Blocks);
    let metric = data.metric_index("wall", Unit::Seconds);
    let mut failures = Vec::new();
    for (i, result) in results.iter().enumerate() {
        let command = result
            .get("command")
            .and_then(Value::as_str)
            .with_context(|| format!("{file}: results[{i}].command: missing or not a string"))?;
        if data.names.iter().any(|n| n.name == command) {
            bail!("{file}: results[{i}].command {command:?} appears twice");
        }
        let times = result
            .get("times")
            .and_then(Value::as_array)
            .with_context(|| {
                format!("{file}: results[{i}].times: missing or not an array (export with hyperfine --export-json)")
            })?;
        let exit_codes = match result.get("exit_codes") {
            None | Some(Value::Null) => None,
            Some(codes) => Some(
                codes
                    .as_array()
                    .with_context(|| format!("{file}: results[{i}].exit_codes: not an array"))?,
            ),
        };
        if let Some(codes) = exit_codes {
            if codes.len() != times.len() {
                bail!(
                    "{file}: results[{i}]: {} times but {} exit_codes",
                    times.len(),
                    codes.len()
                );
            }
        }
        let name = data.name_index(command, command);
        let mut failed = 0;
        for (j, time) in times.iter().enumerate() {
            let value = time
                .as_f64()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .with_context(|| {
                    format!("{file}: results[{i}].times[{j}]: not a non-negative number: {time}")
                })?;
            if value <= 0.0 {
                bail!("{file}: results[{i}].times[{j}]: {time}: {ABOVE_ZERO}");
            }
            let exit_code = match exit_codes.and_then(|c| c.get(j)) {
                None | Some(Value::Null) => 0,
                Some(code) => code
                    .as_i64()
                    .and_then(|c| i32::try_from(c).ok())
                    .with_context(|| {
                        format!("{file}: results[{i}].exit_codes[{j}]: not an integer: {code}")
                    })?,
            };
            failed += usize::from(exit_code != 0);
            data.rows.push(Row {
                name,
                metric,
                layout: None,
                round: None,
                value,
                exit_code,
            });
            data.check_bounds(file)?;
        }
        if failed > 0 {
            failures.push((command.to_string(), failed, times.len()));
        }
    }
    if !failures.is_empty() {
        data.notes.push(Note::NonZeroExits { commands: failures });
    }
    Ok(data)
}

/// A CSV with a header row naming its columns (any order): `name` and
/// `value`, optionally `layout`, `metric` and `round`. Any other column is
/// an error: a misspelt `layout` would otherwise turn a layout analysis into
/// a two-sample one without a word.
pub fn csv(file: &str, text: &str) -> Result<Dataset> {
    let mut reader = ::csv::ReaderBuilder::new()
        .trim(::csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| anyhow::anyhow!("{file}: {}", csv_error(&e)))?
        .clone();
    let known = |c: &str| COLUMNS.contains(&c.to_ascii_lowercase().as_str());
    if !header.iter().any(|c| c.eq_ignore_ascii_case("name"))
        || !header.iter().any(|c| c.eq_ignore_ascii_case("value"))
    {
        bail!(
            "{file}:1: the header needs columns `name` and `value` (found: {})",
            header.iter().collect::<Vec<_>>().join(",")
        );
    }
    if let Some(column) = header.iter().find(|c| !known(c)) {
        bail!(
            "{file}:1: unknown column {column:?} (columns: name, value, and optionally layout, metric, round)"
        );
    }
    let mut columns: [Option<usize>; 5] = [None; 5];
    for (i, column) in header.iter().enumerate() {
        let lower = column.to_ascii_lowercase();
        let Some(k) = COLUMNS.iter().position(|c| *c == lower) else {
            continue;
        };
        if columns[k].is_some() {
            bail!("{file}:1: column {:?} appears twice", COLUMNS[k]);
        }
        columns[k] = Some(i);
    }
    let [Some(name_col), Some(value_col), layout_col, metric_col, round_col] = columns else {
        bail!(
            "{file}:1: the header needs columns `name` and `value` (found: {})",
            header.iter().collect::<Vec<_>>().join(",")
        );
    };
    let order = if round_col.is_some() {
        Order::Rounds
    } else {
        Order::Unknown
    };
    let mut data = Dataset::new(FileFormat::Csv, file, layout_col.is_some(), order);
    for record in reader.records() {
        let record = record.map_err(|e| anyhow::anyhow!("{file}: {}", csv_error(&e)))?;
        let line = record.position().map_or(0, |p| p.line());
        let cell = |col: usize, what: &str| -> Result<&str> {
            let text = record.get(col).unwrap_or("");
            if text.is_empty() {
                bail!("{file}:{line}: empty `{what}`");
            }
            Ok(text)
        };
        let name = cell(name_col, "name")?.to_string();
        let text = cell(value_col, "value")?;
        let value: f64 = text
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .with_context(|| format!("{file}:{line}: `value` is not a finite number: {text:?}"))?;
        if value <= 0.0 {
            bail!("{file}:{line}: `value` is {text}: {ABOVE_ZERO}");
        }
        let metric = match metric_col {
            Some(col) => cell(col, "metric")?.to_string(),
            None => DEFAULT_METRIC.to_string(),
        };
        let round = match round_col {
            Some(col) => {
                let text = cell(col, "round")?;
                Some(text.parse::<usize>().ok().with_context(|| {
                    format!("{file}:{line}: `round` is not a non-negative integer: {text:?}")
                })?)
            }
            None => None,
        };
        let layout = match layout_col {
            Some(col) => data.layout_index(cell(col, "layout")?),
            None => None,
        };
        let name = data.name_index(&name, "");
        let metric = data.metric_index(&metric, Unit::None);
        data.rows.push(Row {
            name,
            metric,
            layout,
            round,
            value,
            exit_code: 0,
        });
        data.check_bounds(&format!("{file}:{line}"))?;
    }
    if data.rows.is_empty() {
        bail!("{file}: a header but no rows");
    }
    Ok(data)
}

/// The csv crate's error in one line, with the line number it gives.
fn csv_error(error: &::csv::Error) -> String {
    let line = error.position().map(|p| p.line());
    let text = match error.kind() {
        ::csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields where the header has {expected_len}"),
        ::csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_string(),
        _ => error.to_string().replace('\n', " "),
    };
    match line {
        Some(line) => format!("line {line}: {text}"),
        None => text,
    }
}

/// Several files as one data set: names, metrics and layouts are matched by
/// their text; the first name of the first file is the baseline. Files with
/// and without a `layout` column cannot be mixed.
pub fn merge(sets: Vec<Dataset>) -> Result<Dataset> {
    let mut sets = sets.into_iter();
    let Some(mut merged) = sets.next() else {
        bail!("no input files");
    };
    for set in sets {
        let file = set.files.join(", ");
        if set.layouts.is_some() != merged.layouts.is_some() {
            bail!(
                "{file}: {} a `layout` column and {} {}: give files of one kind",
                if set.layouts.is_some() {
                    "has"
                } else {
                    "has no"
                },
                merged.files.join(", "),
                if merged.layouts.is_some() {
                    "has one"
                } else {
                    "has none"
                }
            );
        }
        merged.format = merged.format.merged(&set.format);
        merged.files.extend(set.files.iter().cloned());
        merged.order = match (merged.order, set.order) {
            (Order::Rounds, Order::Rounds) => Order::Rounds,
            (Order::Blocks, _) | (_, Order::Blocks) => Order::Blocks,
            _ => Order::Unknown,
        };
        for row in &set.rows {
            let n = &set.names[row.name];
            let (metric, unit) = &set.metrics[row.metric];
            if let Some((_, known)) = merged.metrics.iter().find(|m| &m.0 == metric) {
                if known != unit {
                    bail!("{file}: metric {metric:?} has another unit than in the files before it");
                }
            }
            let layout = match (&set.layouts, row.layout) {
                (Some(labels), Some(l)) => merged.layout_index(&labels[l]),
                _ => None,
            };
            let row = Row {
                name: merged.name_index(&n.name, &n.text),
                metric: merged.metric_index(metric, *unit),
                layout,
                ..row.clone()
            };
            merged.rows.push(row);
        }
        merged.check_bounds(&file)?;
        merged.notes.extend(set.notes);
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Dataset> {
        csv("t.csv", text)
    }

    #[test]
    fn columns_in_any_order_with_names_metrics_and_layouts_in_file_order() {
        let d = parse("layout,value,name\n3,1.5,b\n0,1.0,a\n3,2.5,a\n").unwrap();
        assert_eq!(d.names[0].name, "b");
        assert_eq!(d.names[1].name, "a");
        assert_eq!(
            d.layouts.as_deref(),
            Some(&["3".to_string(), "0".to_string()][..])
        );
        assert_eq!(d.metrics, vec![(DEFAULT_METRIC.to_string(), Unit::None)]);
        assert_eq!(d.values(1, 0), vec![1.0, 2.5]);
        assert_eq!(d.order, Order::Unknown);
    }

    #[test]
    fn malformed_csv_names_the_line_or_column() {
        let e = |text: &str| format!("{:#}", parse(text).unwrap_err());
        assert_eq!(
            e("name,value\na,1\nb,x\n"),
            "t.csv:3: `value` is not a finite number: \"x\""
        );
        assert_eq!(
            e("name,value\na,1\nb,inf\n"),
            "t.csv:3: `value` is not a finite number: \"inf\""
        );
        assert_eq!(
            e("name,value\na,1,2\n"),
            "t.csv: line 2: 3 fields where the header has 2"
        );
        assert!(e("name,valu\na,1\n").starts_with("t.csv:1: the header needs columns"));
        assert!(e("name,value,host\na,1,x\n").starts_with("t.csv:1: unknown column \"host\""));
        assert!(e("name,layout\na,1\n")
            .starts_with("t.csv:1: the header needs columns `name` and `value`"));
        assert_eq!(e("name,value\n,1\n"), "t.csv:2: empty `name`");
        assert_eq!(
            e("name,value,round\na,1,-1\n"),
            "t.csv:2: `round` is not a non-negative integer: \"-1\""
        );
        assert_eq!(e("name,value\n"), "t.csv: a header but no rows");
        for bad in ["0", "-2.5", "0.0"] {
            assert_eq!(
                e(&format!("name,value\na,1\nb,{bad}\n")),
                format!("t.csv:3: `value` is {bad}: {ABOVE_ZERO}")
            );
        }
        assert_eq!(
            e("name,value,name\na,1,a\n"),
            "t.csv:1: column \"name\" appears twice"
        );
    }

    #[test]
    fn hyperfine_results_become_wall_rows_in_blocks() {
        let doc: Value = serde_json::from_str(
            r#"{"results":[{"command":"a","times":[0.1,0.2],"exit_codes":[0,1]},{"command":"b","times":[0.3]}]}"#,
        )
        .unwrap();
        let d = hyperfine("h.json", &doc).unwrap();
        assert_eq!(d.order, Order::Blocks);
        assert_eq!(d.metrics, vec![("wall".to_string(), Unit::Seconds)]);
        assert_eq!(d.values(0, 0), vec![0.1, 0.2]);
        assert_eq!(d.rows[1].exit_code, 1);
        assert_eq!(
            d.notes,
            vec![Note::NonZeroExits {
                commands: vec![("a".to_string(), 1, 2)]
            }]
        );
        let bad: Value =
            serde_json::from_str(r#"{"results":[{"command":"a","times":[0.1,"x"]}]}"#).unwrap();
        assert_eq!(
            format!("{:#}", hyperfine("h.json", &bad).unwrap_err()),
            "h.json: results[0].times[1]: not a non-negative number: \"x\""
        );
    }

    #[test]
    fn merging_matches_names_and_keeps_the_first_baseline() {
        let a = parse("name,value\nbase,1\n").unwrap();
        let b = parse("name,value\ncand,2\nbase,3\n").unwrap();
        let m = merge(vec![a, b]).unwrap();
        assert_eq!(m.names.len(), 2);
        assert_eq!(m.values(0, 0), vec![1.0, 3.0]);
        assert_eq!(m.files, vec!["t.csv", "t.csv"]);
        let l = parse("name,value,layout\nbase,1,0\n").unwrap();
        assert!(merge(vec![parse("name,value\nbase,1\n").unwrap(), l]).is_err());
    }
}
