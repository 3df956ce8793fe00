//! Output options shared by every verb (report files, colour, the progress
//! bar), and the one writer of report files: `--json`, `--markdown`, `--html`
//! and `--sarif` are checked before any work starts and written atomically
//! after it, with one line naming the path when that fails.

use super::exit::UsageError;
use crate::report::json::write_atomically;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Write the full result as JSON (schema: docs/json-schema.md). Written even when a run fails.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a Markdown summary fit for a pull-request comment.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write one self-contained HTML page with SVG plots.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Colour in the terminal report.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

impl OutputArgs {
    /// The same options without report files: for a verb run as one step of another.
    pub fn terminal_only(&self) -> OutputArgs {
        OutputArgs {
            json: None,
            markdown: None,
            html: None,
            ..self.clone()
        }
    }

    /// The report files asked for with `--json`, `--markdown` and `--html`.
    pub fn files(&self) -> ReportFiles {
        ReportFiles::default()
            .with(Format::Json, self.json.as_ref())
            .with(Format::Markdown, self.markdown.as_ref())
            .with(Format::Html, self.html.as_ref())
    }

    pub fn color(&self) -> bool {
        match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        }
    }

    /// A progress bar on stderr; hidden when stderr is not a terminal or with --quiet.
    pub fn progress_bar(&self, length: u64) -> ProgressBar {
        let target = if self.quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(Some(length), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs (ETA {eta}) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }
}

/// A report file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Markdown,
    Html,
    Sarif,
}

impl Format {
    /// The option that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            Format::Json => "--json",
            Format::Markdown => "--markdown",
            Format::Html => "--html",
            Format::Sarif => "--sarif",
        }
    }

    /// The usage error for asking `verb`, which writes only `writes`, for this format.
    pub fn unsupported(self, verb: &str, writes: &[Format]) -> anyhow::Error {
        let offered: Vec<&str> = writes.iter().map(|f| f.flag()).collect();
        UsageError(format!(
            "{} is not supported by {verb}; use {}",
            self.flag(),
            offered.join(" or ")
        ))
        .into()
    }
}

/// A function that writes one report file itself.
pub type WriteFile<'a> = Box<dyn Fn(&Path) -> Result<()> + 'a>;

/// What one report file holds.
pub enum Content<'a> {
    /// Text made whole.
    Text(String),
    /// Written by the function itself, by the same file-safety rule
    /// (`report::json::write_pretty`: a JSON document serialised straight
    /// into the file, never held as text).
    Written(WriteFile<'a>),
}

/// The report files one command line asks for, each a format and a path.
#[derive(Debug, Clone, Default)]
pub struct ReportFiles(Vec<(Format, PathBuf)>);

impl ReportFiles {
    /// Add `path` in `format`, when given.
    pub fn with(mut self, format: Format, path: Option<&PathBuf>) -> ReportFiles {
        if let Some(path) = path {
            self.0.push((format, path.clone()));
        }
        self
    }

    /// Each file's format and path.
    pub fn paths(&self) -> impl Iterator<Item = (Format, &Path)> {
        self.0.iter().map(|(f, p)| (*f, p.as_path()))
    }

    /// Before any work: every file is in a format `verb` writes (else a usage
    /// error, exit 2), and every path can be written (a temporary sibling is
    /// created and removed; else "cannot write PATH: cause", exit 1), so an
    /// experiment never runs only to lose its results at the end.
    pub fn check(&self, verb: &str, writes: &[Format]) -> Result<()> {
        for (format, _) in &self.0 {
            if !writes.contains(format) {
                return Err(format.unsupported(verb, writes));
            }
        }
        for (_, path) in &self.0 {
            crate::safe_file::check(path)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(())
    }

    /// Write every file, each rendered by `render` and written atomically (a
    /// temporary sibling, then a rename). All are attempted; a failure is one
    /// line naming the path, the first is returned and the others printed.
    pub fn write(&self, render: impl Fn(Format) -> Result<String>) -> Result<()> {
        self.write_content(|format| render(format).map(Content::Text))
    }

    /// [`ReportFiles::write`] where a file may also be written by its own
    /// function ([`Content::Written`]), for a report too large to hold as text.
    pub fn write_content<'a>(&self, render: impl Fn(Format) -> Result<Content<'a>>) -> Result<()> {
        let mut failures = Vec::new();
        for (format, path) in &self.0 {
            let written = render(*format).and_then(|content| match content {
                Content::Text(text) => write_atomically(path, text.as_bytes()),
                Content::Written(write) => write(path),
            });
            if let Err(error) = written {
                failures.push(error);
            }
        }
        let mut failures = failures.into_iter();
        let first = failures.next();
        for other in failures {
            print_stderr(&format!("error: {other:#}"));
        }
        first.map_or(Ok(()), Err)
    }
}

/// A terminal report printed on stdout, every character ghostbench did not
/// write itself shown rather than obeyed (`report::escape::terminal`):
/// a name or a program's output cannot move the cursor, set the title or
/// colour the page, whatever `--color`. A stdout that is gone (a closed
/// pipe, the terminal of a session that ended: EPIPE, EIO) loses the text,
/// never the run: nothing here panics, so the report files are still
/// written after it.
pub fn print_terminal(text: &str, color: bool) {
    write_ignoring(
        &mut std::io::stdout().lock(),
        &crate::report::escape::terminal(text, color),
    );
}

/// One line on stdout (`plan written to …`), its hidden characters shown;
/// a stdout that is gone is ignored, as in [`print_terminal`].
pub fn print_stdout(text: &str) {
    print_terminal(&format!("{text}\n"), false);
}

/// One message on stderr (`error: …`, `warning: …`), its hidden characters
/// shown; a stderr that is gone is ignored (`eprintln!` would panic).
pub fn print_stderr(text: &str) {
    write_ignoring(
        &mut std::io::stderr().lock(),
        &format!("{}\n", crate::report::escape::terminal(text, false)),
    );
}

/// The cause of a run that ended with `code` (not 0: failed, builds
/// failed, interrupted), once more on stderr as one `error:` line after the
/// terminal report printed its block, so a log that keeps only stderr, or a
/// run whose stdout is gone, still says why it exited so.
pub fn print_stop_cause(code: i32, message: Option<&str>) {
    if code == super::exit::OK {
        return;
    }
    if let Some(message) = message {
        let line = message.lines().next().unwrap_or_default();
        print_stderr(&format!("error: {line}"));
    }
}

/// Write all of `text`; a write error (EPIPE, EIO, a full disk) is dropped.
fn write_ignoring(out: &mut impl std::io::Write, text: &str) {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// `println!` for the verbs: formatted, escaped and never panicking
/// ([`print_stdout`]).
macro_rules! outln {
    () => {
        $crate::cli::output::print_stdout("")
    };
    ($($arg:tt)*) => {
        $crate::cli::output::print_stdout(&format!($($arg)*))
    };
}
pub(crate) use outln;

/// `eprintln!` for the verbs: formatted, escaped and never panicking
/// ([`print_stderr`]).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::output::print_stderr(&format!($($arg)*))
    };
}
pub(crate) use errln;

/// This invocation's arguments as the reports record them (`command_line` in
/// `--json`, the store, HTML and Markdown): a password in `--store URL` or
/// anywhere else hidden by `store::redact`, and an argument that is not UTF-8
/// written lossily rather than a panic.
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|a| crate::store::redact(&a.to_string_lossy()).into_owned())
        .collect()
}

/// A report as `--json` writes it: pretty JSON (schema: docs/json-schema.md).
pub fn json<T: Serialize + ?Sized>(report: &T) -> Result<String> {
    serde_json::to_string_pretty(report).context("cannot serialise the report")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> ReportFiles {
        ReportFiles::default()
            .with(Format::Json, Some(&dir.join("r.json")))
            .with(Format::Markdown, Some(&dir.join("r.md")))
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_writable_place_passes_the_check_and_keeps_no_trace() {
        let dir = tempfile::tempdir().unwrap();
        files(dir.path())
            .check("compare", &[Format::Json, Format::Markdown])
            .unwrap();
        assert!(listing(dir.path()).is_empty());
        files(dir.path()).write(|f| Ok(format!("{f:?}"))).unwrap();
        assert_eq!(listing(dir.path()), ["r.json", "r.md"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("r.md")).unwrap(),
            "Markdown"
        );
    }

    #[test]
    fn an_unwritable_place_is_one_line_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing").join("r.json");
        let error = ReportFiles::default()
            .with(Format::Json, Some(&missing))
            .check("compare", &[Format::Json])
            .unwrap_err();
        let text = format!("{error:#}");
        assert!(
            text.starts_with(&format!("cannot write {}: ", missing.display())),
            "{text}"
        );
        assert!(!text.contains('\n') && error.downcast_ref::<UsageError>().is_none());
        // A directory where the file should go.
        let error = ReportFiles::default()
            .with(Format::Html, Some(&dir.path().to_path_buf()))
            .check("compare", &[Format::Html])
            .unwrap_err();
        assert!(
            format!("{error:#}").ends_with("it is a directory"),
            "{error:#}"
        );
    }

    #[test]
    fn a_format_the_verb_does_not_write_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = files(dir.path())
            .check("code", &[Format::Json])
            .unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some());
        assert_eq!(
            error.to_string(),
            "--markdown is not supported by code; use --json"
        );
    }

    #[test]
    fn every_file_is_attempted_and_the_failure_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing").join("r.json");
        let error = ReportFiles::default()
            .with(Format::Json, Some(&missing))
            .with(Format::Markdown, Some(&dir.path().join("r.md")))
            .write(|_| Ok("text".into()))
            .unwrap_err();
        // The target, never the temporary file (issue 13: `--json /proc/x.json`).
        assert!(
            !format!("{error:#}").contains("ghostbench-tmp"),
            "{error:#}"
        );
        assert!(format!("{error:#}").starts_with(&format!("cannot write {}: ", missing.display())));
        assert_eq!(listing(dir.path()), ["r.md"]);
    }
}
