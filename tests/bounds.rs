//! Issue 23, items 3, 5 and 7, through the binary: every number a command
//! line or a plan sets is bounded before any work starts (a one-line usage
//! error, exit 2), a plan whose hash was recomputed after an edit is checked
//! like a command line, and every reader stops at its size cap: a character
//! device made with `mknod` in a temporary directory (never a real /dev
//! path) and a sparse 10 GiB file.

mod common;

use ghostbench::layout::shard::Plan;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

fn run(dir: &Path, args: &[&str]) -> Output {
    common::run_within(dir, args, std::time::Duration::from_secs(60))
}

/// The exit code and stderr of a command that must fail with one line.
fn fails(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = run(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    assert_ne!(code, 0, "{args:?} succeeded: {stderr}");
    (code, stderr)
}

/// The one line of a failure, clap's "For more information" hint aside.
fn one_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("For more information"))
        .collect();
    assert_eq!(lines.len(), 1, "not one line: {stderr}");
    lines[0]
}

const MAX: &str = "18446744073709551615";

fn layout_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "layout",
        "--build",
        "a=cc a.c -o {out}",
        "--build",
        "b=cc b.c -o {out}",
        "--run",
        "{bin}",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn numbers_past_their_bounds_are_usage_errors_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plan_dir = d.join("plan");
    let plan = plan_dir.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            layout_args(&["--rounds", MAX]),
            "--rounds 18446744073709551615 is more than 10000",
        ),
        (
            layout_args(&["--warmup", MAX]),
            "--warmup 18446744073709551615 is more than 10000",
        ),
        (
            layout_args(&["--layouts", "4294967296", "--plan-only", plan]),
            "--layouts 4294967296 is more than 1024",
        ),
        (
            layout_args(&["--layouts", "auto", "--max-layouts", MAX]),
            "--max-layouts 18446744073709551615 is more than 1024",
        ),
        (
            layout_args(&["--jobs", "10000000"]),
            "--jobs 10000000 is more than",
        ),
        (layout_args(&["--jobs", "0"]), "--jobs must be at least 1"),
        (
            layout_args(&["--layouts", "8", "--plan-only", plan, "--shards", MAX]),
            "--shards 18446744073709551615 is more than 1024",
        ),
        (layout_args(&["--timeout", "0"]), "must be longer than 0"),
        (layout_args(&["--max-time", "0s"]), "must be longer than 0"),
        (
            layout_args(&["--margin=-5"]),
            "--margin is a percentage in [0, 100), got -5",
        ),
        (
            layout_args(&["--alpha", "7"]),
            "--alpha must be in (0, 1), got 7",
        ),
        (
            vec!["compare", "true", "true", "--warmup", MAX],
            "--warmup 18446744073709551615 is more than 10000",
        ),
        (
            vec!["compare", "true", "true", "--max-runs", MAX],
            "--max-runs 18446744073709551615 is more than 1000000",
        ),
        (
            vec!["compare", "true", "true", "--timeout", "0"],
            "must be longer than 0",
        ),
        (
            vec!["compare", "true", "true", "--max-time", "0ms"],
            "must be longer than 0",
        ),
        (vec!["probe", "--budget", "0"], "must be longer than 0"),
        (
            vec!["demo", "--rounds", MAX],
            "--rounds 18446744073709551615 is more than 10000",
        ),
        (
            vec!["demo", "--max-compilers", MAX],
            "--max-compilers 18446744073709551615 is more than 16",
        ),
        (
            vec!["analyze", "x.csv", "--margin", "1e308"],
            "--margin is a percentage in [0, 100)",
        ),
        (
            vec!["analyze", "x.csv", "--alpha", "7"],
            "--alpha must be in (0, 1), got 7",
        ),
    ];
    for (args, expected) in cases {
        let started = Instant::now();
        let (code, stderr) = fails(d, &args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        let line = one_line(&stderr);
        assert!(line.contains(expected), "{args:?}: {line}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
    assert!(
        !plan_dir.exists(),
        "a refused --plan-only wrote its directory"
    );
    assert!(
        !d.join(".ghostbench").exists(),
        "a refused command made its work directory"
    );
}

/// A plan of 4 layouts in 2 shards, written by `--plan-only` (nothing built).
fn plan(dir: &Path) -> PathBuf {
    let out = run(
        dir,
        &layout_args(&["--layouts", "4", "--shards", "2", "--plan-only", "plan"]),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("plan/plan.json")
}

/// `path`'s plan edited by `edit`, its hash recomputed as an attacker would.
fn rewrite(path: &Path, edit: impl FnOnce(&mut Plan)) {
    let mut plan: Plan = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut plan);
    plan.hash = plan.content_hash().unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&plan).unwrap()).unwrap();
}

/// One edit of a plan.
type Edit = Box<dyn Fn(&mut Plan)>;

#[test]
fn an_edited_plan_with_a_recomputed_hash_is_checked_like_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = plan(d);
    let original = std::fs::read(&path).unwrap();
    let edits: Vec<(Edit, &str)> = vec![
        (
            Box::new(|p| p.margin = -5.0),
            "--margin is a percentage in [0, 100), got -500",
        ),
        (
            Box::new(|p| p.margin = 1e308),
            "--margin is a percentage in [0, 100)",
        ),
        (
            Box::new(|p| p.alpha = 7.0),
            "--alpha must be in (0, 1), got 7",
        ),
        (
            Box::new(|p| p.rounds = 0),
            "--rounds must be at least 1, got 0",
        ),
        (
            Box::new(|p| p.warmup = usize::MAX),
            "--warmup 18446744073709551615 is more than 10000",
        ),
        (
            Box::new(|p| p.timeout_s = Some(0.0)),
            "--timeout must be longer than 0",
        ),
        (
            Box::new(|p| p.shards = usize::MAX),
            "--shards 18446744073709551615 is more than 1024",
        ),
        (
            Box::new(|p| p.layouts = 4_294_967_296),
            "--layouts 4294967296 is more than 1024",
        ),
        (
            Box::new(|p| p.shards = 3),
            "its waves and shards are not those",
        ),
        (
            Box::new(|p| p.variants_per_shard = 0),
            "variants_per_shard 0 is not between 1",
        ),
        (
            Box::new(|p| {
                p.variants.pop();
            }),
            "its variants are not the seeds 0 to 3",
        ),
    ];
    for (edit, expected) in edits {
        std::fs::write(&path, &original).unwrap();
        rewrite(&path, edit);
        for args in [
            &["layout", "--plan", "plan/plan.json", "--shard", "1/2"][..],
            &["analyze", "plan/results/"][..],
        ] {
            let (code, stderr) = fails(d, args);
            assert_eq!(code, 2, "{args:?} {expected}: {stderr}");
            let line = one_line(&stderr);
            assert!(line.contains(expected), "{args:?}: {line}");
            assert!(
                line.contains("a plan is checked like the command line"),
                "{line}"
            );
        }
    }
    assert!(!d.join("plan/results/shard-1.json").exists());
}

/// A character device with `mknod`'s numbers in `dir` (1, 5 is a zero
/// device); `None` (a visible skip) without CAP_MKNOD.
fn device(dir: &Path, name: &str, minor: u32) -> Option<PathBuf> {
    let path = dir.join(name);
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path in a temporary directory.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, minor)) } != 0 {
        common::skipped("CAP_MKNOD (root, to make a device node)");
        return None;
    }
    Some(path)
}

#[test]
fn an_endless_device_ends_every_reader_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(_) = device(d, "zero", 5) else {
        return;
    };
    std::fs::create_dir(d.join("plan")).unwrap();
    let Some(_) = device(&d.join("plan"), "plan.json", 5) else {
        return;
    };
    for (args, what) in [
        (&["analyze", "zero", "--no-store"][..], "an analyze input"),
        (&["history", "import", "zero"][..], "a document to import"),
        (
            &["layout", "--plan", "plan/plan.json", "--shard", "1/2"][..],
            "a plan",
        ),
    ] {
        let started = Instant::now();
        let (code, stderr) = fails(d, args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        let line = one_line(&stderr);
        assert!(
            ["256 MiB", "64 MiB", "16 MiB"]
                .iter()
                .any(|cap| line.ends_with(&format!(
                    "it goes on past the {cap} ghostbench reads from {what}"
                ))),
            "{args:?}: {line}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn a_ten_gib_file_is_refused_by_its_size_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = |name: &str| {
        let path = d.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::File::create(&path)
            .unwrap()
            .set_len(10 * 1024 * 1024 * 1024)
            .unwrap();
    };
    big("big.csv");
    big("big.json");
    big("plan/plan.json");
    for (args, expected) in [
        (&["analyze", "big.csv", "--no-store"][..], "cannot read big.csv: it has 10.0 GiB, more than the 256 MiB ghostbench reads from an analyze input"),
        (&["history", "import", "big.json"][..], "cannot read big.json: it has 10.0 GiB, more than the 64 MiB ghostbench reads from a document to import"),
        (&["layout", "--plan", "plan/plan.json", "--shard", "1/2"][..], "cannot read plan/plan.json: it has 10.0 GiB, more than the 16 MiB ghostbench reads from a plan"),
    ] {
        let (code, stderr) = fails(d, args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert_eq!(one_line(&stderr), format!("error: {expected}"), "{args:?}");
    }
}

#[test]
fn analyze_stops_at_its_row_and_name_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut names = String::from("name,value\n");
    for i in 0..=ghostbench::limits::MAX_BUILDS {
        names += &format!("n{i},1.0\n");
    }
    std::fs::write(d.join("names.csv"), names).unwrap();
    let (code, stderr) = fails(d, &["analyze", "names.csv", "--no-store"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        one_line(&stderr),
        "error: names.csv:66: more than 64 names, the most analyze reads"
    );
}

#[test]
fn without_a_store_fail_on_still_reads_the_verdicts() {
    // analyze makes its stored record (every run as a JSON value) only when
    // it stores or --fail-on needs the verdicts; the gate must still hold.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rows = String::from("name,value\n");
    for i in 0..10 {
        rows += &format!("A,{}\nB,{}\n", 1.0 + 0.01 * i as f64, 1.2 + 0.01 * i as f64);
    }
    std::fs::write(d.join("slower.csv"), rows).unwrap();
    let args = ["analyze", "slower.csv", "--no-store", "--quiet"];
    let out = run(d, &[&args[..], &["--fail-on", "slower"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("--fail-on slower: value of B vs A is SLOWER"),
        "{stderr}"
    );
    assert_eq!(run(d, &args).status.code(), Some(0));
    assert!(!d.join(".ghostbench").exists(), "--no-store made a store");
}

/// A CSV of `per_side` interleaved runs of A and B (B about 1% slower):
/// values from a fixed sequence, the same every time.
fn rows(path: &Path, per_side: usize) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "name,round,value").unwrap();
    let mut x: u64 = 1;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 11) as f64 / (1u64 << 53) as f64 * 0.1
    };
    for i in 0..per_side {
        writeln!(out, "A,{i},{:.6}\nB,{i},{:.6}", 1.0 + next(), 1.01 + next()).unwrap();
    }
}

/// The exit code, peak resident memory (bytes) and stderr of `ghostbench
/// args` in `dir`: the kernel's account of that child and what it waited
/// for (`wait4`; `timeout` bounds it), not a time.
// wait4 reaps the child (std's wait would not give its rusage).
#[allow(clippy::zombie_processes)]
fn peak(dir: &Path, args: &[&str]) -> (i32, u64, String) {
    let err = dir.join("stderr.txt");
    let child = std::process::Command::new("timeout")
        .args(["-k", "5", "120"])
        .arg(assert_cmd::cargo::cargo_bin("ghostbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("GHOSTBENCH_STORE")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("timeout and ghostbench start");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let kib = u64::try_from(usage.ru_maxrss).unwrap_or(0);
    (code, kib * 1024, std::fs::read_to_string(err).unwrap())
}

/// Issue 23, must-show 3: analyze's memory is linear in the rows with a
/// small constant: a million rows a side must fit 1 GB, so each added run
/// may cost at most 500 bytes at the peak (all n·m pairwise differences, or
/// two hash maps and a second copy of the runs, would not). Past 100,000
/// runs the store keeps the result without its runs and says so.
#[test]
fn analyze_memory_grows_by_at_most_500_bytes_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (small, large) = (20_000, 80_000);
    rows(&d.join("small.csv"), small);
    rows(&d.join("large.csv"), large);
    let (code, at_small, stderr) = peak(d, &["analyze", "small.csv", "--no-store", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, at_large, stderr) = peak(d, &["analyze", "large.csv", "--no-store", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let added = 2 * (large - small) as u64;
    let per_run = at_large.saturating_sub(at_small) / added;
    assert!(
        per_run <= 500,
        "{per_run} bytes a run: {} MB at {small} a side, {} MB at {large}",
        at_small >> 20,
        at_large >> 20
    );

    // Stored: 160,000 runs are more than the store keeps of one result.
    let (code, stored, stderr) = peak(d, &["analyze", "large.csv", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let runs = 2 * large;
    assert!(
        stderr.contains(&format!(
            "note: stored without its {runs} runs, more than the 100000"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("stored result #1"), "{stderr}");
    assert!(
        stored <= at_large + (16 << 20),
        "storing took {} MB, {} MB without",
        stored >> 20,
        at_large >> 20
    );
    let out = run(d, &["history", "show", "1", "--json", "doc.json"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains(&format!("stored without its {runs} runs")),
        "{shown}"
    );
    let doc = common::read_json(&d.join("doc.json"));
    assert_eq!(doc["runs_left_out"], runs);
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(0));
    assert_eq!(doc["metrics"][0]["a"]["n"], large);
    let (code, stderr) = fails(d, &["history", "show", "1", "--markdown", "doc.md"]);
    assert_eq!(code, 1, "{stderr}");
}

/// Issue 23, must-show 3 with `--html`: the page draws at most
/// `svg::MAX_POINTS` runs a side per plot (a seeded, evenly spread sample,
/// and it says how many of how many), so 200,000 runs a side make a page of
/// under 1 MiB and no more memory than the report without it; below the cap
/// every run is drawn and nothing is said. (Drawing every run made a 77 MB
/// page here, and 386 MB and 1.2 GB at a million a side.)
#[test]
fn the_html_page_of_a_large_input_stays_under_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let max = ghostbench::report::svg::MAX_POINTS;
    let circles = |page: &str| page.matches("<circle").count();
    // Two plots draw each run (distribution, run order); the interval's
    // point and the run order's two legend markers are the other three.
    let small = max / 2;
    rows(&d.join("small.csv"), small);
    let out = run(
        d,
        &["analyze", "small.csv", "--no-store", "--html", "s.html"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let page = std::fs::read_to_string(d.join("s.html")).unwrap();
    assert_eq!(circles(&page), 2 * 2 * small + 3);
    assert!(page.contains("Every measured run;"), "{page}");
    assert!(!page.contains("Drawn:"), "{page}");

    let large = 200_000;
    rows(&d.join("large.csv"), large);
    let (code, without, stderr) = peak(d, &["analyze", "large.csv", "--no-store", "--quiet"]);
    assert_eq!(code, 0, "{stderr}");
    let args = [
        "analyze",
        "large.csv",
        "--no-store",
        "--quiet",
        "--html",
        "l.html",
    ];
    let (code, with, stderr) = peak(d, &args);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(d.join("l.html")).unwrap();
    assert!(page.len() < 1 << 20, "a page of {} bytes", page.len());
    assert_eq!(circles(&page), 2 * 2 * max + 3);
    let drawn = format!("Drawn: {max} of the {large} runs of A and {max} of the {large} runs of B");
    assert_eq!(page.matches(&drawn).count(), 2, "{drawn}");
    assert!(
        with <= without + (16 << 20),
        "--html took {} MB, {} MB without",
        with >> 20,
        without >> 20
    );
}
