//! `ghostbench history`: the table of stored results (`--name`, `--metric`,
//! `--since`), `history show ID` (the stored `--json` document as it was
//! written, and the other formats re-rendered from it through `analyze`), and
//! `history --html FILE`, the trend page of one metric.

use super::output::{json, Format, OutputArgs};
use super::store::StoreArgs;
use crate::analyze::render::{self, Reports};
use crate::analyze::{ghost, AnalyzeOptions, AnalyzeReport};
use crate::history::{self, render as words};
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
    if let Some(HistoryVerb::Show(show)) = args.show {
        return self::show(show);
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
    print!("{}", words::table(&summaries));
    Ok(super::exit::OK)
}

/// `history show ID`.
fn show(args: ShowArgs) -> Result<i32> {
    args.output.files().check("history show", FORMATS)?;
    let mut store = args.store.open()?;
    let location = store.location().to_string();
    let Some((_verb, text)) = store
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
        print!("{}", words::baseline(&doc));
        output.files().write(|format| match format {
            Format::Json => json(&doc),
            Format::Markdown => Ok(words::baseline(&doc)),
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
    let reports = rerender(&doc, &label)?;
    print!("{}", reports.terminal(output.color()));
    output.files().write(|format| match format {
        // The document as it was written, not a re-analysis.
        Format::Json => json(&doc),
        Format::Markdown => Ok(reports.markdown()),
        Format::Html => Ok(reports.html()),
        Format::Sarif => Err(format.unsupported("history show", FORMATS)),
    })?;
    Ok(super::exit::OK)
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
