//! `ghostbench history`: the table of stored results (`--name`, `--metric`,
//! `--since`), `history show ID` (the stored `--json` document as it was
//! written, and the other formats re-rendered from it through `analyze`), and
//! `history --html FILE`, the trend page of one metric.

use super::finish::{write, Render};
use super::output::{errln, Format, OutputArgs, ReportFiles};
use super::store::StoreArgs;
use crate::analyze::render::{self, Reports};
use crate::analyze::{ghost, AnalyzeOptions, AnalyzeReport};
use crate::doc::{Document, Stored};
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
    if let Some(path) = &args.html {
        // The trend page is never written over the store (it was: exit 0,
        // the results gone), and its path is checked before any work.
        let files = ReportFiles::default().with(Format::Html, Some(path));
        args.store.check(&files)?;
        files.check("history", &[Format::Html])?;
    }
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
        errln!(
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
/// stored); a document already stored is named and not stored again. The
/// store is opened at the first document worth storing, so an import that
/// stores nothing leaves the store's path as it was (an empty file stays
/// empty, a missing store is not created).
fn import(args: ImportArgs) -> Result<i32> {
    let mut opened: Option<(crate::store::Store, String)> = None;
    for path in &args.files {
        let text = limits::read_capped_text(path, Input::Document)
            .with_context(|| format!("cannot read {}", path.display()))?;
        crate::analyze::json_count::json_values(&path.display().to_string(), &text)?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        let stored = Stored::read(&doc).with_context(|| {
            format!(
                "{}: not a report history show can read (nothing stored)",
                path.display()
            )
        })?;
        // Stored only what `history show` can read back, by its own reader.
        if !matches!(stored, Stored::One(Document::Baseline(_))) {
            readable(&stored, &path.display().to_string()).with_context(|| {
                format!(
                    "{}: not a report history show can read (nothing stored)",
                    path.display()
                )
            })?;
        }
        // Where the file was made is unknown: no git state, no host.
        let record = crate::store::Record::from_stored(stored.verb(), &stored, &doc, None, None);
        let (store, location) = match &mut opened {
            Some(open) => open,
            None => {
                let store = args.store.open_for_writing()?;
                let location = store.location().to_string();
                opened.insert((store, location))
            }
        };
        // The same document twice is stored once.
        let known = store
            .find_document(&record.document)
            .map_err(|e| anyhow::anyhow!("store {location}: {e}"))?;
        if let Some(id) = known {
            errln!(
                "already stored as result #{id} in {location} ({})",
                path.display()
            );
            continue;
        }
        let id = store
            .save(&record)
            .map_err(|e| anyhow::anyhow!("store {location}: {e}"))?;
        errln!("stored result #{id} in {location} ({})", path.display());
    }
    Ok(super::exit::OK)
}

/// `history show ID`: the stored document read as its type first (one that
/// does not, whose keys moved, is an error naming the field).
fn show(args: ShowArgs) -> Result<i32> {
    // No report file is the store: it would be written over it.
    args.store.check(&args.output.files())?;
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
    let stored = Stored::read(&doc).with_context(|| format!("result #{}", args.id))?;
    let label = format!("result #{}", args.id);
    let output = &args.output;
    if let Stored::One(Document::Baseline(baseline)) = &stored {
        let words = words::baseline(baseline);
        super::output::print_terminal(&words, false);
        let files = Shown {
            stored: &text,
            label: &label,
            reports: Ok(Rerendered::Text(words)),
        };
        write("history show", FORMATS, output.files(), &files)?;
        return Ok(super::exit::OK);
    }
    // A stored run that failed before it measured anything has nothing to
    // re-analyze: its document is still shown and written as it was.
    // A result stored without its runs (past limits::MAX_STORED_RUNS) has
    // none to re-analyze either: its document is shown and written as stored.
    let reports = match stored.runs_left_out() {
        Some(runs) => {
            let why = words::runs_left_out(runs);
            super::output::print_terminal(&format!("{label} ({verb}): {why}\n"), false);
            Err(why)
        }
        None => match rerender(&stored, &label) {
            Ok(reports) => Ok(reports.from_store(args.id)),
            Err(error) => {
                super::output::print_terminal(
                    &format!("{label} ({verb}): {}\n", words::status(stored.status())),
                    false,
                );
                Err(format!("{error:#}"))
            }
        },
    };
    if let Ok(reports) = &reports {
        super::output::print_terminal(&reports.terminal(output.color()), output.color());
    }
    let files = Shown {
        stored: &text,
        label: &label,
        reports: reports.map(Rerendered::Reports),
    };
    write("history show", FORMATS, output.files(), &files)?;
    Ok(super::exit::OK)
}

/// What `history show` re-rendered: a baseline's text, or the reports.
enum Rerendered {
    Text(String),
    Reports(Reports),
}

/// `history show`'s report files: the document byte for byte as the store
/// keeps it (not a re-analysis, nor the typed reading written back), and the
/// other formats re-rendered, or why they cannot be.
struct Shown<'a> {
    stored: &'a str,
    label: &'a str,
    reports: std::result::Result<Rerendered, String>,
}

impl Shown<'_> {
    fn rerendered(&self, flag: &str, render: impl Fn(&Rerendered) -> String) -> Result<String> {
        match &self.reports {
            Ok(r) => Ok(render(r)),
            Err(cause) => bail!("{} cannot be re-rendered as {flag}: {cause}", self.label),
        }
    }
}

impl Render for Shown<'_> {
    fn json(&self) -> Result<String> {
        Ok(self.stored.to_string())
    }
    fn markdown(&self) -> Option<Result<String>> {
        Some(self.rerendered("--markdown", |r| match r {
            Rerendered::Text(text) => crate::report::escape::markdown_block(text, "text"),
            Rerendered::Reports(reports) => reports.markdown(),
        }))
    }
    fn html(&self) -> Option<Result<String>> {
        Some(self.rerendered("--html", |r| match r {
            Rerendered::Text(text) => crate::report::html::page(
                self.label,
                &format!("<pre>{}</pre>", crate::report::escape::html(text)),
            ),
            Rerendered::Reports(reports) => reports.html(),
        }))
    }
}

/// Whether `history show` can read a document: it re-renders, or it is a
/// run that stopped (failed or interrupted), whose status `show` prints, or
/// a result stored without its runs, whose document `show` writes.
fn readable(stored: &Stored, label: &str) -> Result<()> {
    if stored.runs_left_out().is_some() {
        return Ok(());
    }
    match rerender(stored, label) {
        Ok(_) => Ok(()),
        Err(_) if stored.status().state.stopped() => Ok(()),
        Err(error) => Err(error),
    }
}

/// The report files `history show` writes.
pub const FORMATS: &[Format] = &[Format::Json, Format::Markdown, Format::Html];

/// A stored compare or layout document (or `analyze`'s array of compare
/// documents) as reports, through `analyze` with the document's own settings.
fn rerender(stored: &Stored, label: &str) -> Result<Reports> {
    let options = AnalyzeOptions::default();
    let report = match stored {
        Stored::Many(items) => {
            let mut reports = Vec::new();
            for item in items {
                reports.push(ghost::compare(item, label, &options)?);
            }
            AnalyzeReport::Compare(reports)
        }
        Stored::One(Document::Layout(one)) => {
            AnalyzeReport::Layout(Box::new(ghost::layout(one, label, &options)?))
        }
        Stored::One(Document::Compare(one)) => {
            AnalyzeReport::Compare(vec![ghost::compare(one, label, &options)?])
        }
        Stored::One(Document::Baseline(_)) => {
            bail!("{label}: a baseline measurement has no report to re-render")
        }
    };
    Ok(render::reports(report))
}
