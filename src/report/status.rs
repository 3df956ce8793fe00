//! Why an experiment stopped early, in every format: "FAILED: cause" or
//! "INTERRUPTED: cause", the failing command's last output lines, and whether
//! the results gathered before it follow. Any verb whose runs can fail uses it
//! over its `run::Status`.

use super::escape;
use crate::run::Status;
use std::fmt::Write;

/// The word that opens the block: "INTERRUPTED" for Ctrl-C, else "FAILED".
pub fn label(interrupted: bool) -> &'static str {
    if interrupted {
        "INTERRUPTED"
    } else {
        "FAILED"
    }
}

/// The sentence after the block when results follow.
const RESULTS_FOLLOW: &str = "results so far are below";

/// The terminal block: "FAILED: cause", the last output lines ("  | …"), and
/// "(results so far are below)" when `results_follow`. Empty when the status
/// carries no message.
pub fn stop_cause<S>(status: &Status<S>, interrupted: bool, results_follow: bool) -> String {
    let mut out = String::new();
    if let Some(message) = &status.message {
        let _ = writeln!(out, "{}: {message}", label(interrupted));
        for line in &status.last_output {
            let _ = writeln!(out, "  | {line}");
        }
        if results_follow {
            let _ = writeln!(out, "({RESULTS_FOLLOW})");
        }
        let _ = writeln!(out);
    }
    out
}

/// The same block as a Markdown quote, the output in a code block.
pub fn markdown<S>(status: &Status<S>, interrupted: bool, results_follow: bool) -> String {
    let Some(message) = &status.message else {
        return String::new();
    };
    let mut out = format!(
        "> **{}**: {}\n",
        label(interrupted),
        escape::markdown(message)
    );
    if !status.last_output.is_empty() {
        out.push_str(">\n> ```\n");
        for line in &status.last_output {
            let _ = writeln!(out, "> {}", escape::visible(line).replace("```", "'''"));
        }
        out.push_str("> ```\n");
    }
    if results_follow {
        let _ = writeln!(out, ">\n> ({RESULTS_FOLLOW})");
    }
    out.push('\n');
    out
}

/// The same block as an HTML box (class `failed`, styled by the page shell).
pub fn html<S>(status: &Status<S>, interrupted: bool, results_follow: bool) -> String {
    let Some(message) = &status.message else {
        return String::new();
    };
    let mut out = format!(
        "<div class=\"failed\"><b>{}: {}</b>",
        label(interrupted),
        escape::html(message)
    );
    if !status.last_output.is_empty() {
        let _ = write!(
            out,
            "<pre>{}</pre>",
            escape::html(&status.last_output.join("\n"))
        );
    }
    if results_follow {
        let _ = write!(out, "<br>({RESULTS_FOLLOW})");
    }
    out.push_str("</div>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed() -> Status<()> {
        Status {
            state: (),
            message: Some("B seed 3: killed by signal 11 <SIGSEGV>".into()),
            last_output: vec!["about to crash".into()],
        }
    }

    #[test]
    fn every_format_says_the_same_cause_and_output() {
        let status = failed();
        let text = stop_cause(&status, false, true);
        assert_eq!(
            text,
            "FAILED: B seed 3: killed by signal 11 <SIGSEGV>\n  | about to crash\n(results so far are below)\n\n"
        );
        let md = markdown(&status, false, true);
        assert!(
            // A program's words are escaped for Markdown: no raw tag.
            md.starts_with("> **FAILED**: B seed 3: killed by signal 11 &lt;SIGSEGV&gt;\n"),
            "{md}"
        );
        assert!(md.contains("> about to crash\n"), "{md}");
        assert!(md.contains("results so far are below"), "{md}");
        let page = html(&status, true, false);
        assert!(
            page.starts_with("<div class=\"failed\"><b>INTERRUPTED: B seed 3: killed by signal 11 &lt;SIGSEGV&gt;</b>"),
            "{page}"
        );
        assert!(page.contains("<pre>about to crash</pre>"), "{page}");
        assert!(!page.contains("results so far"), "{page}");
    }

    #[test]
    fn no_message_no_block() {
        let status: Status<()> = Status::new((), None);
        assert_eq!(stop_cause(&status, false, true), "");
        assert_eq!(markdown(&status, false, true), "");
        assert_eq!(html(&status, false, true), "");
    }
}
