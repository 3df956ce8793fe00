//! Helpers shared by the integration tests: the binary, JSON reports, tools on
//! PATH, fixtures, and the lock that keeps timing-sensitive tests apart.

#![allow(dead_code)] // each test binary uses its own subset

pub mod pahole;
pub mod skip;
pub mod slurm;

#[allow(unused_imports)] // each test binary uses its own subset
pub use skip::{require_any, require_tool, skipped};

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The `ghostbench` binary under test.
pub fn ghostbench() -> Command {
    Command::cargo_bin("ghostbench").expect("binary built")
}

/// `ghostbench ARGS` in `dir`, without a store from the environment, killed
/// after `limit`: its output.
pub fn run_within(dir: &Path, args: &[&str], limit: std::time::Duration) -> std::process::Output {
    ghostbench()
        .current_dir(dir)
        .env_remove("GHOSTBENCH_STORE")
        .timeout(limit)
        .args(args)
        .output()
        .expect("ghostbench runs")
}

/// `ghostbench layout --color never --json DIR/r.json ARGS` in `dir`
/// (through [`run_within`]), which must succeed: its report.
pub fn layout_json(dir: &Path, args: &[&str], limit: std::time::Duration) -> Value {
    let json = dir.join("r.json");
    let mut all = vec![
        "layout",
        "--color",
        "never",
        "--json",
        json.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let output = run_within(dir, &all, limit);
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    read_json(&json)
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

/// Whether `tool` is on PATH, to choose between two ways of doing a check.
/// A test that cannot run without a tool calls [`require_tool`] instead, so
/// the skip is seen (and fails under `CI=true`).
pub fn have(tool: &str) -> bool {
    which(tool).is_some()
}

/// Whether a section-shuffling linker (mold or ld.lld) is on PATH, else the
/// test is [`skipped`]. A test that makes one seed's build fail (by its
/// `{dir}`) needs it: without shuffle a seed's build is only its align and
/// shift, two seeds can draw the same pair, and the build cache then gives
/// both seeds one build, so the failure spreads to the other seed or
/// vanishes (issue 23, item 8).
pub fn require_shuffle() -> bool {
    require_any(&["mold", "ld.lld"]).is_some()
}

/// `tests/fixtures/<verb>/<name>`.
pub fn fixture(verb: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(verb)
        .join(name)
}

/// The modelled cost that tests/fixtures/layout/placed.c prints, as a metric:
/// its work (WORK percent of a fixed count) plus 0–4% by which quarter of a
/// 64-byte line the linker put its hot function in. Exact per binary, so
/// verdicts on it are reproducible under any load.
pub const PLACED_COST: &str = r"regex:cost (?P<cost>[0-9]+)";

/// Tests whose results depend on timing take this lock, so the binary's own
/// tests do not run in parallel and load the machine under each other.
pub fn timing_lock() -> std::sync::MutexGuard<'static, ()> {
    static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TIMING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `source` compiled with `cc -O2` into `dir`, or None (the test [`skipped`]) without a C compiler.
pub fn compile_c(source: &Path, dir: &Path, name: &str) -> Option<PathBuf> {
    if !require_tool("cc") {
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
