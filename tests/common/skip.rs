//! Skips that show. A test that cannot run because a tool is missing calls
//! [`require_tool`] (or [`skipped`]); it then prints `SKIPPED <test>: missing
//! <tool>` past libtest's output capture, the test binary ends with one line
//! `N skipped (missing: …)`, and under `CI=true` (where `.ci/run` installed
//! every tool) the skip is a failure naming the test and the tool.
//!
//! Self-contained (std and libc only): the library's unit tests include this
//! same file from `src/lib.rs`.
//!
//! ```ignore
//! if !require_tool("pahole") {
//!     return;
//! }
//! ```

#![allow(dead_code)] // each test binary uses its own subset

use std::io::Write;
use std::sync::{Mutex, Once};

/// (test, missing tool) for every skip in this test binary so far.
static SKIPS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
static SUMMARY_AT_EXIT: Once = Once::new();

/// Whether `tool` is on PATH; when it is not, the current test is
/// [`skipped`] (a failure under `CI=true`) and the caller returns or leaves
/// out the checks that need it.
pub fn require_tool(tool: &str) -> bool {
    if on_path(tool) {
        return true;
    }
    skipped(tool);
    false
}

/// The first of `tools` on PATH; when none is, the test is [`skipped`]
/// naming them all ("g++ or clang++").
pub fn require_any<'a>(tools: &[&'a str]) -> Option<&'a str> {
    let found = tools.iter().copied().find(|t| on_path(t));
    if found.is_none() {
        skipped(&tools.join(" or "));
    }
    found
}

/// Record that the current test (all of it, or the part that needs
/// `missing`) did not run. Under `CI=true` this panics, naming the test and
/// what was missing; otherwise it prints `SKIPPED <test>: missing <missing>`
/// to the terminal and the binary's summary line counts it.
pub fn skipped(missing: &str) {
    let test = current_test();
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true and test {test} would be skipped: missing {missing}");
    }
    // Straight to the terminal: eprintln! from a passing test is swallowed
    // by libtest's capture, which is how skips used to pass unseen.
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: missing {missing}");
    SKIPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((test, missing.to_string()));
    SUMMARY_AT_EXIT.call_once(|| {
        // SAFETY: registers a plain extern "C" function with no arguments.
        unsafe {
            libc::atexit(print_summary);
        }
    });
}

/// The `N skipped (missing: …)` line for these skips, or None without any.
pub fn summary(skips: &[(String, String)]) -> Option<String> {
    if skips.is_empty() {
        return None;
    }
    let mut tools: Vec<&str> = skips.iter().map(|(_, t)| t.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    let tests: Vec<&str> = skips.iter().map(|(t, _)| t.as_str()).collect();
    Some(format!(
        "{} skipped (missing: {}): {}",
        skips.len(),
        tools.join(", "),
        tests.join(", ")
    ))
}

/// Run by libc at process exit, after libtest has printed its result line.
extern "C" fn print_summary() {
    let skips = match SKIPS.try_lock() {
        Ok(s) => s.clone(),
        Err(_) => return,
    };
    if let Some(line) = summary(&skips) {
        let line = format!("{line}\n");
        // SAFETY: writes a live buffer to fd 2; no Rust std state is needed at exit.
        unsafe {
            libc::write(2, line.as_ptr().cast(), line.len());
        }
    }
}

/// The running test's name: libtest runs each test on a thread named after it.
fn current_test() -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_string(),
        _ => "(unnamed test)".to_string(),
    }
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}
