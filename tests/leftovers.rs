//! Issue 23's last escaping and signal items, and the cases the CLI fuzz
//! (`tests/fuzz_cli.rs`) found, through the binary: a name's own SGR
//! colours with `--color always`; the `--plan-only`, shard and `--fail-on`
//! lines on the terminal; `@mentions` in Markdown; a stdout and stderr that
//! are gone (a closed pipe, SIGHUP with the terminal closed); block devices
//! refused by `structs`, `code` and `analyze` from their metadata alone; a
//! FIFO with no writer given to `analyze`; a failed run's cause on stderr;
//! a `history import` that stores nothing leaving the store's path as it
//! was. Device nodes and FIFOs are made in a temporary directory, with a
//! device number no driver has, never a real system path.

mod common;

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn run(dir: &Path, args: &[&str]) -> Output {
    common::run_within(dir, args, std::time::Duration::from_secs(60))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn mknod(path: &Path, kind: libc::mode_t, dev: libc::dev_t) -> bool {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path in a temporary directory.
    unsafe { libc::mknod(c.as_ptr(), kind | 0o666, dev) == 0 }
}

/// A CSV of two names, B 20% above A.
fn csv(dir: &Path, a: &str, b: &str) -> PathBuf {
    let path = dir.join("data.csv");
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut rows = String::from("name,value\n");
    for i in 0..10 {
        let v = 1.0 + 0.01 * i as f64;
        rows += &format!("{},{v}\n{},{}\n", quote(a), quote(b), v * 1.2);
    }
    std::fs::write(&path, rows).unwrap();
    path
}

/// Every escape in `out` is one of ghostbench's colours: `ESC [` digits `m`,
/// and never the name's own `ESC[31m` / `ESC[5m` (which are shown as text).
fn only_our_colours(out: &str) {
    for (i, _) in out.match_indices('\x1b') {
        let rest = &out[i..];
        let end = rest.find('m').expect("an SGR sequence");
        assert!(
            rest.starts_with("\x1b[")
                && rest[2..end].chars().all(|c| c.is_ascii_digit() || c == ';'),
            "a foreign escape: {:?}",
            &rest[..end.min(20)]
        );
    }
    assert!(
        !out.contains("\x1b[5m"),
        "the name's blink got through: {out}"
    );
    assert!(
        !out.contains("\x1b[31mRED"),
        "the name's red got through: {out}"
    );
}

#[test]
fn a_names_own_colours_are_shown_with_color_always_and_ours_stay() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    csv(d, "\x1b[31mRED", "B\x1b[5mblink");
    let out = run(
        d,
        &[
            "analyze",
            "data.csv",
            "--no-store",
            "--color",
            "always",
            "--fail-on",
            "slower",
        ],
    );
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    only_our_colours(&stdout);
    assert!(
        stdout.contains("\x1b["),
        "ghostbench's own colours are gone: {stdout}"
    );
    assert!(stdout.contains("\\u{1b}[31mRED"), "{stdout}");
    // The --fail-on line names the builds: shown, not obeyed.
    let stderr = text(&out.stderr);
    let fail_on = stderr
        .lines()
        .find(|l| l.starts_with("--fail-on"))
        .expect("the --fail-on line");
    assert!(
        !fail_on.contains('\x1b') && fail_on.contains("\\u{1b}[5mblink"),
        "{fail_on}"
    );

    // compare's --name, and layout's build names.
    let out = run(
        d,
        &[
            "compare",
            "true",
            "true",
            "--name",
            "\x1b[31mRED",
            "--name",
            "B\x1b[5m",
            "--max-runs",
            "3",
            "--min-runs",
            "2",
            "--warmup",
            "0",
            "--no-store",
            "--color",
            "always",
            "--quiet",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    only_our_colours(&text(&out.stdout));
    let out = run(
        d,
        &[
            "layout",
            "-b",
            "\x1b[31mRED=cp /bin/true {out}",
            "-b",
            "B\x1b[5m=cp /bin/true {out}",
            "--layouts",
            "3",
            "--rounds",
            "2",
            "--warmup",
            "0",
            "--no-store",
            "--color",
            "always",
            "--quiet",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    only_our_colours(&text(&out.stdout));
}

#[test]
fn plan_only_and_shard_lines_show_hidden_characters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plan_dir = "p\x1b]0;pwned\x07\x1b[2J";
    let out = run(
        d,
        &[
            "layout",
            "-b",
            "A=cp /bin/true {out}",
            "-b",
            "B=cp /bin/true {out}",
            "--layouts",
            "4",
            "--rounds",
            "1",
            "--warmup",
            "0",
            "--plan-only",
            plan_dir,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("plan written to"), "{stdout}");
    assert!(
        !stdout.contains('\x1b') && !stdout.contains('\x07'),
        "{stdout:?}"
    );
    assert!(stdout.contains("\\u{1b}]0;pwned\\u{7}"), "{stdout}");

    let plan = format!("{plan_dir}/plan.json");
    let out = run(
        d,
        &[
            "layout",
            "--plan",
            &plan,
            "--shard",
            "1/2",
            "--no-store",
            "--quiet",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("shard 1/2: "))
        .expect("the shard line");
    assert!(line.starts_with("shard 1/2: ok; wrote "), "{line}");
    assert!(
        !stderr.contains('\x1b') && !stderr.contains('\x07'),
        "{stderr:?}"
    );
}

#[test]
fn a_mention_in_a_name_pings_no_one_from_the_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    csv(d, "@octocat", "B @org/team");
    let out = run(
        d,
        &["analyze", "data.csv", "--no-store", "--markdown", "r.md"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let md = std::fs::read_to_string(d.join("r.md")).unwrap();
    // GitHub does not link a mention inside a code span; outside one, the
    // `@` is followed by a zero-width joiner, so nothing is a mention.
    let outside: String = md.split('`').step_by(2).collect();
    assert!(
        !outside.contains("@octocat") && !outside.contains("@org"),
        "{md}"
    );
    assert!(md.contains("octocat") && md.contains("org/team"), "{md}");
}

/// The write end of a pipe whose read end is closed: every write is EPIPE.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: a two-element array for pipe(2).
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fds[0] is the read end just made, closed once here; fds[1] is
    // owned by the returned Stdio.
    unsafe {
        libc::close(fds[0]);
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

fn gone(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ghostbench"));
    command
        .current_dir(dir)
        .env_remove("GHOSTBENCH_STORE")
        .args(args)
        .stdin(Stdio::null())
        .stdout(closed_pipe())
        .stderr(closed_pipe());
    command
}

#[test]
fn a_stdout_and_stderr_that_are_gone_lose_text_not_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    csv(d, "A", "B");
    // "stored result #1" goes to a closed stderr: no panic, the report and
    // the stored result are kept.
    let status = gone(d, &["analyze", "data.csv", "--json", "r.json"])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(common::read_json(&d.join("r.json")).is_object());
    assert!(d.join(".ghostbench/results.db").is_file());
    let status = gone(
        d,
        &[
            "layout",
            "-b",
            "A=cp /bin/true {out}",
            "-b",
            "B=cp /bin/true {out}",
            "--plan-only",
            "plan",
        ],
    )
    .status()
    .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(d.join("plan/plan.json").is_file());
}

#[test]
fn sighup_with_the_terminal_gone_writes_the_report_and_exits_129() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut child = gone(
        d,
        &[
            "compare",
            "sleep 0.2",
            "sleep 0.2",
            "--max-runs",
            "100",
            "--min-runs",
            "2",
            "--warmup",
            "0",
            "--json",
            "r.json",
        ],
    )
    .spawn()
    .unwrap();
    // Some runs first, so the report has something to keep.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signals the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "still running after SIGHUP"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(129));
    let report = common::read_json(&d.join("r.json"));
    assert_eq!(report["status"]["state"], "interrupted", "{report}");
}

#[test]
fn block_devices_are_refused_by_their_metadata_before_any_open() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Major 0 is no block driver's: opening it could only fail (ENXIO,
    // "No such device or address"), so the message below, which names the
    // kind, shows that the refusal came from the metadata, before an open.
    if !mknod(&d.join("disk"), libc::S_IFBLK, libc::makedev(0, 0)) {
        common::skipped("CAP_MKNOD (root, to make a device node)");
        return;
    }
    for (verb, said) in [
        (
            "structs",
            "disk: cannot read: it is a block device, not a regular file",
        ),
        ("code", "it is a block device, not a regular file"),
        ("analyze", "it is a block device, not a file or a pipe"),
    ] {
        let out = run(
            d,
            &[verb, "disk", "--no-store"][..if verb == "analyze" { 3 } else { 2 }],
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{verb}: {stderr}");
        assert!(
            stderr.contains(said) && stderr.lines().count() == 1,
            "{verb}: {stderr}"
        );
        assert!(!stderr.contains("os error"), "{verb} opened it: {stderr}");
    }
}

#[test]
fn analyze_of_a_fifo_nothing_writes_to_ends_with_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(mknod(&d.join("fifo"), libc::S_IFIFO, 0));
    let start = Instant::now();
    let out = run(d, &["analyze", "fifo", "--no-store"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("it is a FIFO that nothing wrote to within 10 s"),
        "{stderr}"
    );
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_failed_run_says_why_on_stderr_too() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &[
            "compare",
            "true",
            "sh -c 'exit 3'",
            "--max-runs",
            "3",
            "--min-runs",
            "2",
            "--no-store",
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error: ") && l.contains("exit code 3")),
        "{stderr}"
    );
}

#[test]
fn an_import_that_stores_nothing_leaves_the_store_path_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("empty.db"), "").unwrap();
    std::fs::write(d.join("not.json"), "nope").unwrap();
    let out = run(d, &["history", "import", "not.json", "--store", "empty.db"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(std::fs::metadata(d.join("empty.db")).unwrap().len(), 0);
    let out = run(d, &["history", "import", "not.json", "--store", "new.db"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!d.join("new.db").exists());
}

#[test]
fn a_planted_ghostbench_link_gets_no_baseline_copy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let elsewhere = d.join("elsewhere");
    let cwd = d.join("cwd");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir(&cwd).unwrap();
    std::os::unix::fs::symlink(&elsewhere, cwd.join(".ghostbench")).unwrap();
    let out = run(
        &cwd,
        &[
            "compare",
            "--save-baseline",
            "base",
            "true",
            "--max-runs",
            "3",
            "--min-runs",
            "2",
            "--warmup",
            "0",
            "--quiet",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(".ghostbench is a symbolic link"),
        "the link is named: {stderr}"
    );
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "written through the link: {stderr}"
    );
}

#[test]
fn history_never_writes_a_report_over_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    csv(d, "A", "B");
    let out = run(d, &["analyze", "data.csv", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let store = d.join(".ghostbench/results.db");
    let before = std::fs::read(&store).unwrap();
    for args in [
        &["history", "--html", ".ghostbench/results.db"][..],
        &[
            "history",
            "show",
            "1",
            "--markdown",
            "./.ghostbench/results.db",
        ],
        &["history", "show", "1", "--json", ".ghostbench/results.db"],
    ] {
        let out = run(d, args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("is the results store") && stderr.lines().count() == 1,
            "{stderr}"
        );
        assert_eq!(
            std::fs::read(&store).unwrap(),
            before,
            "{args:?} changed the store"
        );
    }
    let out = run(d, &["history"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn reading_an_empty_file_as_the_store_leaves_it_empty() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("empty.db"), "").unwrap();
    for args in [
        &["history", "--store", "empty.db"][..],
        &["history", "show", "1", "--store", "empty.db"],
    ] {
        let out = run(d, args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("there is no store here"), "{stderr}");
        assert_eq!(std::fs::metadata(d.join("empty.db")).unwrap().len(), 0);
        assert!(!d.join("empty.db-wal").exists() && !d.join("empty.db-shm").exists());
    }
    // A verb that stores makes it a store, as it would a missing path.
    csv(d, "A", "B");
    let out = run(
        d,
        &["analyze", "data.csv", "--store", "empty.db", "--quiet"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(d, &["history", "--store", "empty.db"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
