//! Helpers shared by the integration tests: the binary, JSON reports, tools on
//! PATH, fixtures, and the lock that keeps timing-sensitive tests apart.

#![allow(dead_code)] // each test binary uses its own subset

pub mod pahole;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The `ghostbench` binary under test.
pub fn ghostbench() -> Command {
    Command::cargo_bin("ghostbench").expect("binary built")
}

/// A report written with `--json`.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("JSON report written");
    serde_json::from_str(&text).expect("valid JSON")
}

/// Measured (not warm-up) runs in a `compare` or `layout` report.
pub fn measured_runs(report: &Value) -> usize {
    report["runs"]
        .as_array()
        .expect("runs[]")
        .iter()
        .filter(|r| r["warmup"] == false)
        .count()
}

/// Where `program` is on PATH, if anywhere.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Whether `tool` is on PATH (tests that need it skip without it).
pub fn have(tool: &str) -> bool {
    which(tool).is_some()
}

/// `tests/fixtures/<verb>/<name>`.
pub fn fixture(verb: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(verb)
        .join(name)
}

/// Tests whose results depend on timing take this lock, so the binary's own
/// tests do not run in parallel and load the machine under each other.
pub fn timing_lock() -> std::sync::MutexGuard<'static, ()> {
    static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TIMING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Say loudly that a test is skipped and why; under `CI=true` a skip is a
/// failure, so a CI machine without the tool cannot pass by skipping.
pub fn skip(why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but the test would be skipped: {why}"
    );
    eprintln!("skipped: {why}");
}

/// `source` compiled with `cc -O2` into `dir`, or None (after saying so) without a C compiler.
pub fn compile_c(source: &Path, dir: &Path, name: &str) -> Option<PathBuf> {
    if which("cc").is_none() {
        skip("no cc on PATH");
        return None;
    }
    let out = dir.join(name);
    let status = std::process::Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(source)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc failed on {}", source.display());
    Some(out)
}
