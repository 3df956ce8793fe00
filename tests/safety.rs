//! Issue 23, items 1 and 2, through the binary: report paths that are
//! devices, FIFOs, links or mode-600 files; links planted in `.ghostbench`;
//! stores that are links, foreign databases, in memory, or a report path;
//! `history import` twice; a failed run shown; a read-only store. Device nodes
//! and FIFOs are made in a temporary directory, never a real system path.

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;

fn run(dir: &Path, args: &[&str]) -> Output {
    common::run_within(dir, args, std::time::Duration::from_secs(60))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn data_csv(dir: &Path) -> PathBuf {
    let csv = dir.join("data.csv");
    let mut rows = String::from("name,value\n");
    for i in 0..10 {
        rows += &format!("A,{}\nB,{}\n", 1.0 + 0.01 * i as f64, 1.2 + 0.01 * i as f64);
    }
    std::fs::write(&csv, rows).unwrap();
    csv
}

fn analyze(dir: &Path, extra: &[&str]) -> Output {
    let csv = data_csv(dir);
    let mut args = vec!["analyze", csv.to_str().unwrap(), "--color", "never"];
    args.extend_from_slice(extra);
    run(dir, &args)
}

fn count(store: &Path) -> i64 {
    let conn = rusqlite::Connection::open(store).unwrap();
    conn.query_row("SELECT COUNT(*) FROM experiments", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_device_node_report_is_written_in_place_and_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let c = CString::new(null.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path in a temporary directory.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) } != 0 {
        common::skipped("CAP_MKNOD (root, to make a device node)");
        return;
    }
    let out = analyze(
        dir.path(),
        &["--json", "null", "--markdown", "null", "--no-store"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let meta = std::fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device());
}

#[test]
fn a_fifo_without_a_reader_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path in a temporary directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    // The check passes (a FIFO is written in place), the write finds no reader.
    let out = analyze(dir.path(), &["--json", "pipe", "--no-store"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot write pipe: it is a FIFO that nothing reads"),
        "{}",
        stderr(&out)
    );
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_linked_report_is_followed_and_a_mode_600_report_stays_600() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.json"), "old").unwrap();
    std::fs::set_permissions(
        dir.path().join("real.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    symlink("real.json", dir.path().join("link.json")).unwrap();
    let out = analyze(dir.path(), &["--json", "link.json", "--no-store"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(dir.path().join("link.json"))
        .unwrap()
        .is_symlink());
    let meta = std::fs::metadata(dir.path().join("real.json")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(dir.path().join("real.json"))
        .unwrap()
        .starts_with('{'));
    // A link to nothing: refused before anything runs, kept.
    symlink("nowhere.json", dir.path().join("dangling.json")).unwrap();
    let out = analyze(dir.path(), &["--json", "dangling.json", "--no-store"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot write dangling.json: it is a symbolic link to nothing"));
    assert!(!dir.path().join("nowhere.json").exists());
}

#[test]
fn stale_temporary_files_of_dead_writers_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = dir.path().join(format!(".r.json.{dead}.ghostbench-tmp"));
    std::fs::write(&stale, "partial").unwrap();
    let out = analyze(dir.path(), &["--json", "r.json", "--no-store"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stale.exists());
}

#[test]
fn a_link_planted_in_the_work_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir_all(dir.path().join(".ghostbench")).unwrap();
    std::fs::set_permissions(
        dir.path().join(".ghostbench"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    std::fs::create_dir(&victim).unwrap();
    symlink(&victim, dir.path().join(".ghostbench/work")).unwrap();
    let out = run(
        dir.path(),
        &[
            "layout",
            "--build",
            "A=cc {cflags} {ldflags} x.c -o {out}",
            "--build",
            "B=cc {cflags} {ldflags} x.c -o {out}",
            "--quiet",
            "--no-store",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            ".ghostbench/work is a symbolic link, where ghostbench keeps a directory of its own"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
}

#[test]
fn a_linked_store_is_refused_and_nothing_is_made_where_it_points() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".ghostbench")).unwrap();
    symlink(
        dir.path().join("elsewhere.db"),
        dir.path().join(".ghostbench/results.db"),
    )
    .unwrap();
    let out = analyze(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("it is a symbolic link"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("elsewhere.db").exists());
}

#[test]
fn a_report_path_that_is_the_store_is_refused_and_the_store_keeps_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = analyze(dir.path(), &["--store", "same.db"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = analyze(dir.path(), &["--json", "same.db", "--store", "same.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--json same.db is the results store"),
        "{}",
        stderr(&out)
    );
    assert_eq!(count(&dir.path().join("same.db")), 1);
    // The same file by another name.
    let out = analyze(dir.path(), &["--html", "./same.db", "--store", "same.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(count(&dir.path().join("same.db")), 1);
}

#[test]
fn stores_that_keep_nothing_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    for store in ["", ":memory:", "file:x.db?mode=memory"] {
        let out = analyze(dir.path(), &["--store", store]);
        assert_eq!(out.status.code(), Some(2), "{store:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with("error: --store: "),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("stored result"));
    }
}

#[test]
fn a_foreign_database_is_refused_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('x');")
        .unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();
    let out = analyze(dir.path(), &["--store", "app.db"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("tables ghostbench did not create (users)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "the database changed");
    let out = analyze(dir.path(), &["--store", "app.db", "--store-foreign"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(count(&db), 1);
}

#[test]
fn import_stores_a_document_once_and_only_what_show_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let out = analyze(dir.path(), &["--json", "r.json", "--store", "s.db"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(
        dir.path(),
        &["history", "import", "r.json", "r.json", "--store", "t.db"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("already stored as result #1"),
        "{}",
        stderr(&out)
    );
    assert_eq!(count(&dir.path().join("t.db")), 1);
    // A document `history show` cannot read: refused, nothing stored.
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"schema": "ghostbench.compare", "commands": [], "runs": []}"#,
    )
    .unwrap();
    let out = run(
        dir.path(),
        &["history", "import", "bad.json", "--store", "t.db"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad.json: not a report history show can read (nothing stored)"));
    assert_eq!(count(&dir.path().join("t.db")), 1);
}

#[test]
fn a_stored_failed_run_is_shown_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &[
            "compare", "true", "false", "--quiet", "--store", "s.db", "--json", "f.json",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = run(
        dir.path(),
        &[
            "history", "show", "1", "--store", "s.db", "--json", "o.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("failed: B: command failed: exit code 1"));
    assert_eq!(
        common::read_json(&dir.path().join("o.json")),
        common::read_json(&dir.path().join("f.json"))
    );
}

#[test]
fn history_reads_a_store_it_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = analyze(dir.path(), &["--store", "s.db"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bin = env!("CARGO_BIN_EXE_ghostbench");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut command = if root {
        // Root writes anything: read as nobody, who may only read.
        if !common::require_tool("setpriv") {
            return;
        }
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(
            dir.path().join("s.db"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
        c
    } else {
        std::fs::set_permissions(
            dir.path().join("s.db"),
            std::fs::Permissions::from_mode(0o444),
        )
        .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        std::process::Command::new(bin)
    };
    let out = command
        .current_dir(dir.path())
        .env_remove("GHOSTBENCH_STORE")
        .args(["history", "--store", "s.db"])
        .output()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if root && stderr(&out).contains("Permission denied") && out.stdout.is_empty() {
        // nobody cannot reach the binary under this checkout.
        common::skipped("a binary that user nobody can run");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("analyze"),
        "{out:?}"
    );
}
