//! `--json FILE`: the report as a versioned JSON document (docs/json-schema.md),
//! and the atomic file write every report file goes through.

use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

/// Write any report type as pretty JSON, atomically (temp file, then rename), so
/// an interrupted write never leaves a truncated file behind.
pub fn write<T: Serialize>(report: &T, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(report).context("cannot serialise the report")?;
    write_atomically(path, text.as_bytes())
}

/// Write `bytes` to `path` by the file-safety rule (`safe_file::write`): a
/// regular file through a sibling temporary file, fsynced, then a rename, so a
/// crash leaves the old file or the whole new one (a shard result another
/// machine merges relies on it), keeping its mode; a device or FIFO in place;
/// a link followed. A failure is "cannot write PATH: cause", naming `path`
/// (never the temporary file, which is removed again).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::safe_file::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// [`write_atomically`] of `value` as pretty JSON, serialised straight into
/// the file (never held as text: a million runs a side are 700 MB of it).
/// The same bytes as `serde_json::to_string_pretty`.
pub fn write_pretty<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    crate::safe_file::write_with(path, &mut |out| {
        serde_json::to_writer_pretty(out, value).map_err(std::io::Error::other)
    })
    .with_context(|| format!("cannot write {}", path.display()))
}

/// Tests: `report` as [`write`] writes it, read back from a temporary file.
#[cfg(test)]
pub fn written<T: Serialize>(report: &T) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("report.json");
    write(report, &path).expect("the report is written");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("it reads back"))
        .expect("it is JSON")
}
