//! Output options shared by every verb: report files, colour, and the progress bar.

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
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
    /// Write one self-contained HTML page with SVG plots (compare, layout, probe, analyze).
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
    /// For verbs without an HTML report: say so instead of ignoring `--html`.
    pub fn note_html_unsupported(&self, verb: &str) {
        if self.html.is_some() {
            eprintln!("note: --html is not supported by {verb}; use --json");
        }
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
