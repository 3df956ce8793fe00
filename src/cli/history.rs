//! `ghostbench history`: the table of stored results (`--name`, `--metric`,
//! `--since`), `history show ID` (the stored `--json` document as it was
//! written, and the other formats re-rendered from it through `analyze`), and
//! `history --html FILE`, the trend page of one metric.

use super::output::{json, Format, OutputArgs};
use super::store::StoreArgs;
use crate::analyze::render::{self, Reports};
use crate::analyze::{ghost, AnalyzeOptions, AnalyzeReport};
use crate::history::{self, render as words};
use crate::limits::{self, Input};
use crate::store::Filter;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub show: Option<HistoryVerb>,
    /// Only results with a command or build of this name (with --html: only its points).
    #[arg(long)]
    pub name: Option<String>,
    /// Only results that measured this metric (with --html: the metric plotted) [--html default: wall].
    #[arg(long)]
    pub metric: Option<String>,
    /// Only results since a date (2026-11-01) or for an age (90m, 36h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// At most this many results, newest first.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Write the trend page: the metric's median per result and commit, with its interval.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HistoryVerb {
    /// Show one stored result in any output format (--json is the document as it was written).
    Show(ShowArgs),
    /// Store ghostbench --json reports made elsewhere (another runner, --no-store), one result each.
    Import(ImportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// compare, layout, analyze or baseline --json files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The result's id (the first column of `ghostbench history`).
    pub id: i64,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(args: HistoryArgs) -> Result<i32> {
    match args.show {
        Some(HistoryVerb::Show(show)) => return self::show(show),
        Some(HistoryVerb::Import(import)) => return self::import(import),
        None => {}
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let since = args
        .since
        .as_deref()
        .map(|s| history::since(s, now))
        .transpose()
        .map_err(super::exit::UsageError)?;
    let mut store = args.store.open()?;
    let location = store.location().to_string();
    let failed = |e| anyhow::anyhow!("store {location}: {e}");
    if let Some(path) = &args.html {
        let metric = args.metric.as_deref().unwrap_or("wall");
        let mut trend = store.trend(metric, args.name.as_deref()).map_err(failed)?;
        if let Some(since) = since {
            trend.retain(|t| t.created_unix >= since);
        }
        let points = history::points(&trend);
        crate::report::json::write_atomically(path, words::trend_page(metric, &points).as_bytes())?;
        eprintln!(
            "trend of {metric}: {} points written to {}",
            points.len(),
            path.display()
        );
        return Ok(super::exit::OK);
    }
    let filter = Filter {
        name: args.name.clone(),
        metric: args.metric.clone(),
        since_unix: since,
        limit: Some(args.limit),
    };
    let summaries = store.experiments(&filter).map_err(failed)?;
    super::output::print_terminal(&words::table(&summaries), false);
    Ok(super::exit::OK)
}

/// `history import FILE...`: each file one transaction, stored whole or not
/// at all; a file that cannot be read or is not a report `history show` can
/// read stops the import with one line naming it (the files before it are
/// stored); a document already stored is named and not stored again.
fn import(args: ImportArgs) -> Result<i32> {
    let mut store = args.store.open_for_writing()?;
    let location = store.location().to_string();
    for path in &args.files {
        let text = limits::read_capped_text(path, Input::Document)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        let first = if let Value::Array(items) = &doc {
            items.first().unwrap_or(&doc)
        } else {
            &doc
        };
        let verb = if first.get("analyze").is_some() {
            "analyze"
        } else {
            match first["schema"].as_str() {
                Some("ghostbench.layout") => "layout",
                Some("ghostbench.baseline") => "baseline",
                _ => "compare",
            }
        };
        // Stored only what `history show` can read back, by its own reader.
        if verb != "baseline" {
            readable(&doc, &path.display().to_string()).with_context(|| {
                format!(
                    "{}: not a report history show can read (nothing stored)",
                    path.display()
                )
            })?;
        }
        // Where the file was made is unknown: no git state, no host.
        let record = crate::store::Record::from_document(verb, &doc, None, None)
            .with_context(|| path.display().to_string())?;
        // The same document twice is stored once.
        let known = store
            .find_document(&record.document)
            .map_err(|e| anyhow::anyhow!("store {location}: {e}"))?;
        if let Some(id) = known {
            eprintln!(
                "already stored as result #{id} in {location} ({})",
                path.display()
            );
            continue;
        }
        let id = store
            .save(&record)
            .map_err(|e| anyhow::anyhow!("store {location}: {e}"))?;
        eprintln!("stored result #{id} in {location} ({})", path.display());
    }
    Ok(super::exit::OK)
}

/// `history show ID`.
fn show(args: ShowArgs) -> Result<i32> {
    args.output.files().check("history show", FORMATS)?;
    let mut store = args.store.open()?;
    let location = store.location().to_string();
    let Some((verb, text)) = store
        .document(args.id)
        .map_err(|e| anyhow::anyhow!("store {location}: {e}"))?
    else {
        bail!("no result #{} in {location}", args.id);
    };
    let doc: Value = serde_json::from_str(&text)
        .with_context(|| format!("result #{}: the stored document is not JSON", args.id))?;
    let label = format!("result #{}", args.id);
    let output = &args.output;
    if doc["schema"] == "ghostbench.baseline" {
        super::output::print_terminal(&words::baseline(&doc), false);
        output.files().write(|format| match format {
            Format::Json => json(&doc),
            Format::Markdown => Ok(crate::report::escape::markdown_block(
                &words::baseline(&doc),
                "text",
            )),
            Format::Html => Ok(crate::report::html::page(
                &label,
                &format!(
                    "<pre>{}</pre>",
                    crate::report::escape::html(&words::baseline(&doc))
                ),
            )),
            Format::Sarif => Err(format.unsupported("history show", FORMATS)),
        })?;
        return Ok(super::exit::OK);
    }
    // A stored run that failed before it measured anything has nothing to
    // re-analyze: its document is still shown and written as it was.
    let reports = match rerender(&doc, &label) {
        Ok(reports) => Ok(reports.from_store(args.id)),
        Err(error) => {
            super::output::print_terminal(
                &format!("{label} ({verb}): {}\n", words::status(&doc)),
                false,
            );
            Err(format!("{error:#}"))
        }
    };
    if let Ok(reports) = &reports {
        super::output::print_terminal(&reports.terminal(output.color()), output.color());
    }
    output.files().write(|format| match (format, &reports) {
        // The document as it was written, not a re-analysis.
        (Format::Json, _) => json(&doc),
        (Format::Markdown, Ok(reports)) => Ok(reports.markdown()),
        (Format::Html, Ok(reports)) => Ok(reports.html()),
        (Format::Markdown | Format::Html, Err(cause)) => {
            bail!(
                "{label} cannot be re-rendered as {}: {cause}",
                format.flag()
            )
        }
        (Format::Sarif, _) => Err(format.unsupported("history show", FORMATS)),
    })?;
    Ok(super::exit::OK)
}

/// Whether `history show` can read `doc`: it re-renders, or it is a run
/// that stopped (failed or interrupted), whose status `show` prints.
fn readable(doc: &Value, label: &str) -> Result<()> {
    let error = match rerender(doc, label) {
        Ok(_) => return Ok(()),
        Err(error) => error,
    };
    let first = match doc {
        Value::Array(items) => items.first().unwrap_or(doc),
        one => one,
    };
    match first["status"]["state"].as_str() {
        Some("failed" | "interrupted") => Ok(()),
        _ => Err(error),
    }
}

/// The report files `history show` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

/// A stored compare or layout document (or `analyze`'s array of compare
/// documents) as reports, through `analyze` with the document's own settings.
fn rerender(doc: &Value, label: &str) -> Result<Reports> {
    let options = AnalyzeOptions::default();
    let report = match doc {
        Value::Array(items) => {
            let mut reports = Vec::new();
            for item in items {
                reports.push(ghost::compare(item, label, &options)?);
            }
            AnalyzeReport::Compare(reports)
        }
        one if one["schema"] == "ghostbench.layout" => {
            AnalyzeReport::Layout(Box::new(ghost::layout(one, label, &options)?))
        }
        one => AnalyzeReport::Compare(vec![ghost::compare(one, label, &options)?]),
    };
    Ok(render::reports(report))
}
