//! The command-line fuzz (issue 23, must-show 2): a seeded loop that runs the
//! `ghostbench` binary with random option values and report paths for every
//! verb (compare, layout with `--plan-only`, `--plan` and `--emit`, code,
//! structs, probe's cheap options, analyze, history with show/import and
//! baselines, demo with options that are refused), each in a fresh working
//! directory with HOME and TMPDIR in the run's temporary directory.
//!
//! Values are drawn from lists of the hostile kinds (numbers at and past
//! their bounds, empty, huge, negative, NaN, unicode, control characters,
//! `$(…)`, device nodes and FIFOs made with `mknod` in a temporary
//! directory, links that point out of the working directory, directories,
//! the store itself, missing directories). Every invocation must end within
//! [`HANG`] (else it is killed: a hang), never panic (exit 101 or
//! "panicked"), exit 0 or with a code of `src/cli/exit.rs` and, when not 0,
//! say why in an `error:` line (or a run's FAILED / INTERRUPTED status). A
//! "victim" directory of files, links, a character device, a block device
//! number no driver has, and a FIFO, which the fuzzed paths point into or
//! at, is snapshotted (path, type, size, mode, mtime, rdev, link target)
//! before and after: nothing in it may change. Report paths name the
//! victim's devices, FIFO, directories and dangling links (never its regular
//! files, which a report path naming them would rightly overwrite); input
//! and store paths name anything in it.
//!
//! Over 600 lines: the value lists and one generator per verb read best
//! together, in the one file the fuzz is.
//!
//! `GHOSTBENCH_FUZZ_CLI_N` sets the number of invocations (default
//! [`DEFAULT_N`], well under a minute in release on two busy cores);
//! `GHOSTBENCH_FUZZ_CLI_SEED` the seed (default [`DEFAULT_SEED`]). A failure
//! prints the invocation's number and its arguments, so the seed and a count
//! replay it.

mod common;

use common::{require_tool, skipped};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Invocations in `cargo test`.
const DEFAULT_N: usize = 300;
/// The default seed.
const DEFAULT_SEED: u64 = 23;
/// One invocation running longer than this is a hang.
const HANG: Duration = Duration::from_secs(30);
/// The exit codes `src/cli/exit.rs` defines.
const DOCUMENTED: [i32; 11] = [0, 1, 2, 3, 4, 5, 6, 7, 129, 130, 143];

/// Numbers at and past the bounds of `src/limits.rs`, and not numbers at all.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-0",
    "64",
    "65",
    "1024",
    "1025",
    "10000",
    "10001",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "1e308",
    "1e-320",
    "NaN",
    "inf",
    "-inf",
    "0x10",
    "1.5",
    "",
    " ",
    "\u{662}\u{663}",
    "5\u{1b}[2J",
    "$(touch pwned)",
    "`touch pwned`",
    "7\n- **FASTER**",
];

/// Durations: the numbers, and with units past and at their bounds.
const DURATIONS: &[&str] = &[
    "500ms", "0s", "0ms", "1s", "2s", "8760h", "8761h", "1e20", "-1s", "1e-9", "NaNs", "infm",
    "2x", "1h",
];

/// Names, metric specs, regexes, templates: text of every hostile kind.
const TEXTS: &[&str] = &[
    "",
    "A",
    "wall",
    "user",
    "rss",
    "regex:cost (?P<c>[0-9]+)",
    "regex:(",
    "regex@last,stderr:x",
    "regex@bogus:x",
    "json:/a/b",
    "json:",
    "gbench",
    "\u{1b}]0;pwned\u{7}\u{1b}[2J",
    "\u{9b}31mred",
    "a\nb\n- **FASTER** forged",
    "$(touch pwned)",
    "`touch pwned`",
    "${{ secrets.TOKEN }}",
    "<script>alert(1)</script>",
    "@everyone",
    "\u{202e}txt.exe",
    "名前",
    "faster,slower,same,unknown,artifact,fragile",
    "fragile",
    "bogus",
    "skylake,zen",
    "icelake",
    "align,shift",
    "env",
    "median",
    "A=B",
    "=",
];

/// Whether this invocation's `.ghostbench` (or `.ghostbench/work`) is a
/// planted link.
static PLANTED: AtomicBool = AtomicBool::new(false);

/// Makes one option's value.
type Value = fn(&mut ChaCha8Rng) -> String;
/// Makes one verb's invocation.
type Verb = fn(&World, &mut ChaCha8Rng) -> Call;

/// A verb's invocation: its arguments.
struct Call {
    args: Vec<OsString>,
}

impl Call {
    fn new(verb: &[&str]) -> Call {
        Call {
            args: verb.iter().map(OsString::from).collect(),
        }
    }
    fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Call {
        self.args.push(a.as_ref().to_os_string());
        self
    }
    fn opt(&mut self, name: &str, value: impl AsRef<OsStr>) -> &mut Call {
        self.arg(name).arg(value)
    }
}

/// Everything the invocations share: the fixtures (made once) and the victim.
struct World {
    root: PathBuf,
    fixtures: PathBuf,
    victim: PathBuf,
    /// Victim entries a report path may name: writing them must change nothing.
    victim_sinks: Vec<PathBuf>,
    /// Every victim entry (and missing paths below it), for inputs and stores.
    victim_any: Vec<PathBuf>,
}

fn mknod(path: &Path, kind: libc::mode_t, dev: libc::dev_t) -> bool {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path in a temporary directory.
    unsafe { libc::mknod(c.as_ptr(), kind | 0o666, dev) == 0 }
}

/// A block-device major number no driver of this machine has (from the
/// local/experimental range 240–254), so a node of it can never reach a
/// disk, even if something opened it.
fn unused_block_major() -> Option<u32> {
    let devices = std::fs::read_to_string("/proc/devices").ok()?;
    let block = devices.split("Block devices:").nth(1)?;
    let used: Vec<u32> = block
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    (240..=254).rev().find(|m| !used.contains(m))
}

fn gb(cwd: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ghostbench"))
        .args(args)
        .current_dir(cwd)
        .env_remove("GHOSTBENCH_STORE")
        .env("HOME", home)
        .env("TMPDIR", home)
        .stdin(Stdio::null())
        .output()
        .expect("ghostbench runs")
}

/// The fixtures: an ELF with DWARF, a CSV, a `--json` document, a plan, a
/// store with a result and a baseline; and the victim directory.
fn world(root: &Path) -> Option<World> {
    if !require_tool("cc") {
        return None;
    }
    let fixtures = root.join("fixtures");
    let victim = root.join("victim");
    let home = root.join("home");
    for d in [&fixtures, &victim, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let elf = fixtures.join("elf");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/structs/layouts.c");
    let status = Command::new("cc")
        .args(["-g", "-O1", "-c", "-o"])
        .arg(&elf)
        .arg(&source)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc failed");
    let mut csv = String::from("name,value\n");
    for i in 0..12 {
        csv += &format!("A,{}\nB,{}\n", 1.0 + 0.01 * i as f64, 1.1 + 0.01 * i as f64);
    }
    std::fs::write(fixtures.join("data.csv"), csv).unwrap();
    let out = gb(
        &fixtures,
        &home,
        &["analyze", "data.csv", "--json", "doc.json", "--no-store"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = gb(
        &fixtures,
        &home,
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
            "--plan-only",
            "plan",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // A store with one result and a baseline, copied into each working directory.
    let store_src = fixtures.join("store");
    std::fs::create_dir(&store_src).unwrap();
    let out = gb(&store_src, &home, &["analyze", "../data.csv", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = gb(
        &store_src,
        &home,
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
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // The victim: what no invocation may change.
    for (name, text) in [
        ("file.txt", "a file ghostbench does not own\n"),
        ("notadb.db", "not a database\n"),
        ("empty", ""),
    ] {
        std::fs::write(victim.join(name), text).unwrap();
    }
    for f in ["data.csv", "doc.json", "elf"] {
        std::fs::copy(fixtures.join(f), victim.join(f)).unwrap();
    }
    std::fs::create_dir(victim.join("sub")).unwrap();
    std::fs::write(victim.join("sub/inner.txt"), "inner\n").unwrap();
    std::fs::set_permissions(
        victim.join("file.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    assert!(mknod(&victim.join("fifo"), libc::S_IFIFO, 0));
    if !mknod(&victim.join("null"), libc::S_IFCHR, libc::makedev(1, 3))
        || !mknod(&victim.join("zero"), libc::S_IFCHR, libc::makedev(1, 5))
    {
        skipped("CAP_MKNOD (root, to make device nodes)");
        return None;
    }
    let mut sinks = vec!["null", "zero", "fifo", "sub", "link_dangling", "link_dev"];
    if let Some(major) = unused_block_major() {
        assert!(mknod(
            &victim.join("blk"),
            libc::S_IFBLK,
            libc::makedev(major, 0)
        ));
        sinks.push("blk");
    }
    symlink("file.txt", victim.join("link_file")).unwrap();
    symlink("missing", victim.join("link_dangling")).unwrap();
    symlink("null", victim.join("link_dev")).unwrap();
    symlink("sub", victim.join("link_dir")).unwrap();
    symlink("fifo", victim.join("link_fifo")).unwrap();
    let victim_sinks: Vec<PathBuf> = sinks.iter().map(|s| victim.join(s)).collect();
    let mut victim_any: Vec<PathBuf> = std::fs::read_dir(&victim)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    victim_any.sort();
    victim_any.push(victim.clone());
    victim_any.push(victim.join("missing/x.db"));
    victim_any.push(victim.join("sub/../file.txt"));
    Some(World {
        root: root.to_path_buf(),
        fixtures,
        victim,
        victim_sinks,
        victim_any,
    })
}

/// One entry of a tree snapshot: type, size, mode, mtime, rdev, link target.
type Entry = (u32, u64, u32, i64, i64, u64, Option<PathBuf>);

/// Every entry under `dir` (links not followed), by path.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(path) = todo.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let target = std::fs::read_link(&path).ok();
        if meta.is_dir() {
            for e in std::fs::read_dir(&path).unwrap() {
                todo.push(e.unwrap().path());
            }
        }
        out.insert(
            path,
            (
                meta.mode() & libc::S_IFMT,
                meta.size(),
                meta.mode() & 0o7777,
                meta.mtime(),
                meta.mtime_nsec(),
                meta.rdev(),
                target,
            ),
        );
    }
    out
}

/// What one invocation's working directory starts with.
struct Cwd {
    dir: PathBuf,
    home: PathBuf,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    std::fs::set_permissions(
        to,
        std::fs::metadata(from).unwrap().permissions(), // 0700 for .ghostbench
    )
    .unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

fn fresh_cwd(world: &World, i: usize, rng: &mut ChaCha8Rng) -> Cwd {
    let base = world.root.join(format!("run{i}"));
    let dir = base.join("cwd");
    let home = base.join("home");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(world.fixtures.join("data.csv"), dir.join("data.csv")).unwrap();
    std::fs::copy(world.fixtures.join("doc.json"), dir.join("doc.json")).unwrap();
    std::fs::copy(world.fixtures.join("elf"), dir.join("elf")).unwrap();
    copy_tree(&world.fixtures.join("plan"), &dir.join("plan"));
    let planted = rng.random_range(0..10);
    PLANTED.store(planted < 2, Ordering::Relaxed);
    match planted {
        // A link planted where ghostbench keeps its own directories.
        0 => symlink(world.victim.join("sub"), dir.join(".ghostbench")).unwrap(),
        1 => {
            copy_tree(
                &world.fixtures.join("store/.ghostbench"),
                &dir.join(".ghostbench"),
            );
            symlink(world.victim.join("sub"), dir.join(".ghostbench/work")).unwrap();
        }
        2 => {}
        _ => copy_tree(
            &world.fixtures.join("store/.ghostbench"),
            &dir.join(".ghostbench"),
        ),
    }
    symlink(world.victim.join("file.txt"), dir.join("to_victim_file")).unwrap();
    symlink(world.victim.join("null"), dir.join("to_victim_dev")).unwrap();
    symlink(world.victim.join("fifo"), dir.join("to_victim_fifo")).unwrap();
    symlink(world.victim.join("sub"), dir.join("to_victim_dir")).unwrap();
    symlink(world.victim.join("nothing"), dir.join("to_victim_nothing")).unwrap();
    Cwd { dir, home }
}

fn pick<'a>(rng: &mut ChaCha8Rng, list: &[&'a str]) -> &'a str {
    list.choose(rng).unwrap()
}

/// A report path: in the working directory, or a victim entry writing to
/// which must change nothing, or a path that must be refused.
fn report_path(world: &World, rng: &mut ChaCha8Rng) -> OsString {
    match rng.random_range(0..16) {
        0..=2 => pick(
            rng,
            &["r.json", "r.md", "r.html", "r.sarif", "plan/plan.json"],
        )
        .into(),
        3..=5 => world.victim_sinks.choose(rng).unwrap().into(),
        6 => pick(
            rng,
            &[
                "to_victim_dev",
                "to_victim_fifo",
                "to_victim_dir",
                "to_victim_nothing",
            ],
        )
        .into(),
        // The store itself; not through a planted `.ghostbench` link, which
        // a report path the user names is followed through by design.
        7 if !PLANTED.load(Ordering::Relaxed) => pick(
            rng,
            &[
                ".ghostbench/results.db",
                "./.ghostbench/results.db",
                "s.db",
                "data.csv",
            ],
        )
        .into(),
        7 => pick(rng, &["s.db", "data.csv"]).into(),
        8 => pick(rng, &["", " ", "-", ".", "..", "/", "missing/dir/r.json"]).into(),
        9 => "x".repeat(rng.random_range(250..5000)).into(),
        10 => pick(
            rng,
            &[
                "$(touch pwned).json",
                "a\nb.json",
                "\u{1b}[2J.md",
                "名前.html",
                "@here.md",
            ],
        )
        .into(),
        11 => world.victim.join("missing/r.json").into(),
        _ => format!("r{}.json", rng.random_range(0..3)).into(),
    }
}

/// An input file: a good one, a victim entry, or something that is not one.
fn input_path(world: &World, rng: &mut ChaCha8Rng, good: &str) -> OsString {
    match rng.random_range(0..8) {
        0..=2 => good.into(),
        3..=5 => world.victim_any.choose(rng).unwrap().into(),
        6 => pick(
            rng,
            &[
                "to_victim_file",
                "to_victim_dev",
                "to_victim_fifo",
                "to_victim_dir",
                "to_victim_nothing",
            ],
        )
        .into(),
        _ => pick(
            rng,
            &[
                "",
                "missing",
                "missing/dir/x",
                ".ghostbench/results.db",
                ".ghostbench",
                "-",
                "data.csv",
                "doc.json",
                "elf",
                "plan",
                "plan/plan.json",
            ],
        )
        .into(),
    }
}

/// A `--store`: the default, a file here, one that must be refused, or a
/// victim entry. A verb that writes the store may rightly make a store of an
/// empty file or in a missing directory it is given, so those are given
/// only to verbs that only read it (`reading`).
fn store(world: &World, rng: &mut ChaCha8Rng, call: &mut Call, reading: bool) {
    match rng.random_range(0..12) {
        0..=4 => {}
        5 => {
            call.arg("--no-store");
        }
        6 => {
            call.opt("--store", "s.db");
        }
        7 => {
            call.opt(
                "--store",
                pick(
                    rng,
                    &[
                        "",
                        ":memory:",
                        "file:x.db?mode=memory",
                        "postgresql://u:s3cret@127.0.0.1:1/db",
                        "r.json",
                    ],
                ),
            );
        }
        8 => {
            call.opt(
                "--store",
                pick(
                    rng,
                    &[
                        "to_victim_file",
                        "to_victim_dir",
                        "to_victim_dev",
                        "to_victim_nothing",
                    ],
                ),
            );
        }
        _ => {
            let refused: Vec<&PathBuf> = world
                .victim_any
                .iter()
                .filter(|p| reading || !(p.ends_with("empty") || p.ends_with("missing/x.db")))
                .collect();
            call.opt("--store", refused.choose(rng).unwrap());
        }
    }
    if rng.random_bool(0.1) {
        call.arg("--store-foreign");
    }
}

/// The output options every verb with reports takes.
fn outputs(world: &World, rng: &mut ChaCha8Rng, call: &mut Call, formats: &[&str]) {
    for f in formats {
        if rng.random_bool(0.35) {
            call.opt(f, report_path(world, rng));
        }
    }
    if rng.random_bool(0.3) {
        call.opt(
            "--color",
            pick(rng, &["always", "never", "auto", "", "bogus"]),
        );
    }
    if rng.random_bool(0.7) {
        call.arg("--quiet");
    }
}

fn number(rng: &mut ChaCha8Rng) -> &'static str {
    // Half of them plausible, so the verb gets past its argument checks
    // and the hostile paths and names are exercised too.
    if rng.random_bool(0.7) {
        pick(rng, &["1", "2", "3", "4", "5", "8"])
    } else {
        pick(rng, NUMBERS)
    }
}

fn duration(rng: &mut ChaCha8Rng) -> &'static str {
    match rng.random_range(0..4) {
        0 | 1 => pick(rng, &["300ms", "1s", "2s"]),
        2 => pick(rng, DURATIONS),
        _ => number(rng),
    }
}

fn text(rng: &mut ChaCha8Rng) -> String {
    if rng.random_bool(0.05) {
        "\u{1b}[31m".repeat(rng.random_range(100..3000))
    } else {
        pick(rng, TEXTS).to_string()
    }
}

/// Some of `options` (name, value maker), each at most once.
fn some_of(rng: &mut ChaCha8Rng, call: &mut Call, options: &[(&str, Value)]) {
    for (name, value) in options {
        if rng.random_bool(0.2) {
            let v = value(rng);
            call.opt(name, v);
        }
    }
}

fn n(rng: &mut ChaCha8Rng) -> String {
    number(rng).to_string()
}
fn d(rng: &mut ChaCha8Rng) -> String {
    duration(rng).to_string()
}
fn t(rng: &mut ChaCha8Rng) -> String {
    text(rng)
}

/// A value of one of `valid`, or (a quarter of the time) any text.
fn one_of(rng: &mut ChaCha8Rng, valid: &[&str]) -> String {
    if rng.random_bool(0.75) {
        pick(rng, valid).to_string()
    } else {
        text(rng)
    }
}
fn order(rng: &mut ChaCha8Rng) -> String {
    one_of(rng, &["abba", "random"])
}
fn fail_on(rng: &mut ChaCha8Rng) -> String {
    one_of(
        rng,
        &["slower", "faster,same", "unknown", "fragile,artifact"],
    )
}
fn metric(rng: &mut ChaCha8Rng) -> String {
    one_of(
        rng,
        &[
            "wall",
            "user",
            "sys",
            "rss",
            "regex:(?P<n>[0-9]+)",
            "json:/x",
        ],
    )
}
fn sources(rng: &mut ChaCha8Rng) -> String {
    one_of(rng, &["align", "shift,env", "align,shift,shuffle,env"])
}
fn estimator(rng: &mut ChaCha8Rng) -> String {
    one_of(rng, &["median", "min"])
}
fn uarch(rng: &mut ChaCha8Rng) -> String {
    one_of(
        rng,
        &["skylake", "icelake", "zen", "generic", "skylake,zen"],
    )
}

/// `--higher-is-better`, which takes its names after `=` only.
fn higher_is_better(rng: &mut ChaCha8Rng, call: &mut Call) {
    match rng.random_range(0..8) {
        0 => {
            call.arg("--higher-is-better");
        }
        1 => {
            call.arg(format!("--higher-is-better={}", text(rng)));
        }
        _ => {}
    }
}

fn compare(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call = Call::new(&["compare"]);
    let commands = [
        "true",
        "false",
        "$(touch pwned)",
        "",
        "sh -c 'exit 3'",
        "./elf",
    ];
    if rng.random_bool(0.2) {
        call.opt(
            "--save-baseline",
            pick(rng, &["base", "", "new", "\u{1b}[2J"]),
        );
        call.arg(pick(rng, &commands[..2]));
    } else if rng.random_bool(0.2) {
        call.opt("--baseline", pick(rng, &["base", "", "none"]));
        call.arg(pick(rng, &commands));
        if rng.random_bool(0.3) {
            call.arg("--force");
        }
    } else {
        call.arg(pick(rng, &commands)).arg(pick(rng, &commands));
    }
    // The bounds that keep a run short, unless fuzzed themselves; at most
    // one of --max-runs and --max-time is fuzzed, so one of them ends it.
    match rng.random_range(0..3) {
        0 => call.opt("--max-runs", number(rng)).opt("--max-time", "2s"),
        1 => call.opt("--max-time", duration(rng)).opt("--max-runs", "6"),
        _ => call.opt("--max-runs", "4").opt("--max-time", "2s"),
    };
    if rng.random_bool(0.7) {
        call.opt("--min-runs", "2").opt("--warmup", "0");
    } else {
        some_of(rng, &mut call, &[("--min-runs", n), ("--warmup", n)]);
    }
    some_of(
        rng,
        &mut call,
        &[
            ("--name", t),
            ("--metric", metric),
            ("--margin", n),
            ("--alpha", n),
            ("--seed", n),
            ("--timeout", d),
            ("--pin", n),
            ("--fail-on", fail_on),
            ("--order", order),
            ("--input", |_| "to_victim_dev".into()),
        ],
    );
    if rng.random_bool(0.1) {
        call.opt("--prepare", pick(rng, &["true", "false", "$(touch pwned)"]));
    }
    if rng.random_bool(0.1) {
        call.arg("-v");
    }
    higher_is_better(rng, &mut call);
    store(world, rng, &mut call, false);
    outputs(world, rng, &mut call, &["--json", "--markdown", "--html"]);
    call
}

fn layout(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call = Call::new(&["layout"]);
    let mode = rng.random_range(0..4);
    if mode == 0 {
        // Run the plan (builds by cp, runs of /bin/true), a shard, or emit its job file.
        call.opt("--plan", input_path(world, rng, "plan/plan.json"));
        match rng.random_range(0..3) {
            0 => {
                call.opt(
                    "--shard",
                    pick(
                        rng,
                        &[
                            "1/2",
                            "2/2",
                            "0/2",
                            "3/2",
                            "1/0",
                            "x",
                            "",
                            "18446744073709551616/2",
                        ],
                    ),
                );
            }
            1 => {
                call.opt("--emit", pick(rng, &["slurm", "k8s", "github", "bogus"]));
                some_of(
                    rng,
                    &mut call,
                    &[
                        ("--wave", n),
                        ("--concurrency", n),
                        ("--ghostbench", t),
                        ("--partition", t),
                        ("--time-limit", t),
                        ("--image", t),
                        ("--volume-claim", t),
                        ("--mount", t),
                    ],
                );
            }
            _ => {}
        }
        if rng.random_bool(0.3) {
            call.opt("--build-cache", input_path(world, rng, "cache"));
        }
    } else {
        let builds = [
            "A=cp /bin/true {out}",
            "B=cp /bin/true {out}",
            "C=false",
            "=x",
            "A",
            "D=$(touch pwned) {out}",
            "E=cp /bin/true {out} {cflags} {ldflags}",
        ];
        for _ in 0..rng.random_range(0..4) {
            call.opt("-b", pick(rng, &builds));
        }
        if rng.random_bool(0.8) {
            call.opt("-b", builds[0]).opt("-b", builds[1]);
        }
        if mode == 1 {
            call.opt("--plan-only", report_path(world, rng));
            some_of(rng, &mut call, &[("--shards", n)]);
        }
    }
    match rng.random_range(0..3) {
        0 => call.opt(
            "--layouts",
            pick(
                rng,
                &["auto", "3", "4", "2", "0", "1025", "4294967296", "x", ""],
            ),
        ),
        1 => call.opt("--layouts", number(rng)),
        _ => call.opt("--layouts", "3"),
    };
    if rng.random_bool(0.7) {
        call.opt("--rounds", "1").opt("--warmup", "0");
    } else {
        some_of(rng, &mut call, &[("--rounds", n), ("--warmup", n)]);
    }
    call.opt("--max-time", "2s");
    some_of(
        rng,
        &mut call,
        &[
            ("--max-layouts", n),
            ("--jobs", n),
            ("--build-timeout", d),
            ("--sources", sources),
            ("--estimator", estimator),
            ("--metric", metric),
            ("--margin", n),
            ("--alpha", n),
            ("--seed", n),
            ("--timeout", d),
            ("--run", t),
            ("--fail-on", fail_on),
            ("--uarch", uarch),
        ],
    );
    if rng.random_bool(0.1) {
        call.opt(
            "--explain",
            pick(rng, &["1", "0", "-1", "18446744073709551616"]),
        );
    }
    store(world, rng, &mut call, false);
    outputs(world, rng, &mut call, &["--json", "--markdown", "--html"]);
    call
}

fn code(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call = Call::new(&["code"]);
    call.arg(input_path(world, rng, "elf"));
    if rng.random_bool(0.2) {
        call.opt("--diff", input_path(world, rng, "elf"));
    }
    if rng.random_bool(0.2) {
        call.opt("--hot", input_path(world, rng, "data.csv"));
    }
    some_of(
        rng,
        &mut call,
        &[
            ("--functions", t),
            ("--line", n),
            ("--window", n),
            ("--uarch", uarch),
            ("--limit", n),
        ],
    );
    if rng.random_bool(0.2) {
        call.arg("-v");
    }
    outputs(world, rng, &mut call, &["--json", "--markdown", "--html"]);
    call
}

fn structs(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call = Call::new(&["structs"]);
    call.arg(input_path(world, rng, "elf"));
    some_of(rng, &mut call, &[("--struct", t), ("--line", n)]);
    for flag in ["--hazards", "--suggest"] {
        if rng.random_bool(0.3) {
            call.arg(flag);
        }
    }
    outputs(world, rng, &mut call, &["--json", "--sarif", "--html"]);
    call
}

fn probe(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call = Call::new(&["probe", "--quick"]);
    // Cheap probes only: each in well under a second with --quick.
    call.opt(
        "--only",
        pick(
            rng,
            &["misaligned", "split-lock", "code-align", "bogus", ""],
        ),
    );
    if rng.random_bool(0.5) {
        call.opt(
            "--budget",
            pick(rng, &["200ms", "0", "0s", "-1", "NaN", "1e20", "", "300ms"]),
        );
    } else {
        call.opt("--budget", "300ms");
    }
    some_of(rng, &mut call, &[("--seed", n)]);
    outputs(world, rng, &mut call, &["--json", "--markdown", "--html"]);
    call
}

fn noise(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call = Call::new(&["noise"]);
    call.arg(pick(
        rng,
        &[
            "true",
            "false",
            "$(touch pwned)",
            "",
            "sh -c 'exit 3'",
            "./elf",
        ],
    ));
    // The bounds that keep it short, unless fuzzed themselves: at most one
    // of --budget and --rounds is fuzzed, so the other ends it.
    if rng.random_bool(0.3) {
        call.opt("--budget", duration(rng)).opt("--rounds", "2");
    } else if rng.random_bool(0.3) {
        call.opt("--rounds", number(rng)).opt("--budget", "1s");
    } else {
        call.opt("--rounds", "2").opt("--budget", "1s");
    }
    if rng.random_bool(0.3) {
        call.opt(
            "--skip",
            pick(rng, &["aslr", "pin,env", "heap,fresh", "bogus", ""]),
        );
    }
    some_of(
        rng,
        &mut call,
        &[
            ("--metric", metric),
            ("--seed", n),
            ("--timeout", d),
            ("--pin", n),
        ],
    );
    outputs(world, rng, &mut call, &["--json", "--markdown", "--html"]);
    call
}

fn analyze(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call = Call::new(&["analyze"]);
    for _ in 0..rng.random_range(1..3) {
        let good = pick(rng, &["data.csv", "doc.json", "plan/results"]);
        call.arg(input_path(world, rng, good));
    }
    some_of(
        rng,
        &mut call,
        &[
            ("--margin", n),
            ("--alpha", n),
            ("--seed", n),
            ("--estimator", estimator),
            ("--fail-on", fail_on),
        ],
    );
    if rng.random_bool(0.15) {
        call.opt("--baseline", pick(rng, &["base", "", "none", "\u{1b}[2J"]));
    }
    if rng.random_bool(0.1) {
        call.opt("--emit", pick(rng, &["slurm", "k8s", "github"]));
    }
    higher_is_better(rng, &mut call);
    store(world, rng, &mut call, false);
    outputs(world, rng, &mut call, &["--json", "--markdown", "--html"]);
    call
}

fn history(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call;
    match rng.random_range(0..3) {
        0 => {
            call = Call::new(&["history", "show"]);
            call.arg(pick(
                rng,
                &["1", "2", "0", "-1", "", "18446744073709551616", "x"],
            ));
            outputs(world, rng, &mut call, &["--json", "--markdown", "--html"]);
        }
        1 => {
            call = Call::new(&["history", "import"]);
            for _ in 0..rng.random_range(1..3) {
                call.arg(input_path(world, rng, "doc.json"));
            }
        }
        _ => {
            call = Call::new(&["history"]);
            some_of(
                rng,
                &mut call,
                &[
                    ("--name", t),
                    ("--metric", metric),
                    ("--since", d),
                    ("--limit", n),
                ],
            );
            if rng.random_bool(0.4) {
                call.opt("--html", report_path(world, rng));
            }
        }
    }
    let reading = !matches!(call.args.get(1), Some(a) if a == "import");
    store(world, rng, &mut call, reading);
    call
}

/// `demo` only with a value its bounds refuse, so it ends before building.
fn demo(world: &World, rng: &mut ChaCha8Rng) -> Call {
    let mut call = Call::new(&["demo", "--quiet"]);
    let bad: &[(&str, &[&str])] = &[
        (
            "--rounds",
            &["0", "10001", "-1", "x", "18446744073709551616"],
        ),
        ("--max-compilers", &["0", "17", "-1", "NaN"]),
        ("--layouts", &["0", "2", "1025", "4294967296", "x"]),
        ("--max-layouts", &["0", "2", "1025"]),
        ("--jobs", &["0", "10000000", "-1"]),
        ("--build-timeout", &["0", "0s", "1e20", "x"]),
        ("--color", &["bogus", ""]),
    ];
    let (name, values) = bad.choose(rng).unwrap();
    call.opt(name, pick(rng, values));
    outputs(world, rng, &mut call, &["--json", "--markdown", "--html"]);
    call
}

/// How one invocation ended.
struct Ended {
    code: Option<i32>,
    hung: bool,
    stderr: String,
}

fn run(cwd: &Cwd, call: &Call) -> Ended {
    let out = cwd.dir.parent().unwrap();
    let stdout = std::fs::File::create(out.join("stdout")).unwrap();
    let stderr = std::fs::File::create(out.join("stderr")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ghostbench"))
        .args(&call.args)
        .current_dir(&cwd.dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &cwd.home)
        .env("TMPDIR", &cwd.home)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn()
        .expect("ghostbench starts");
    let start = Instant::now();
    let (code, hung) = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break (status.code(), false);
        }
        if start.elapsed() > HANG {
            // SAFETY: kills the process group this test started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = String::from_utf8_lossy(&std::fs::read(out.join("stderr")).unwrap()).into_owned();
    Ended { code, hung, stderr }
}

/// What is wrong with how an invocation ended, if anything.
fn judge(ended: &Ended) -> Option<String> {
    if ended.hung {
        return Some(format!("hung: killed after {} s", HANG.as_secs()));
    }
    let Some(code) = ended.code else {
        return Some("killed by a signal".into());
    };
    if code == 101 || ended.stderr.contains("panicked") {
        return Some(format!("panicked (exit {code})"));
    }
    if !DOCUMENTED.contains(&code) {
        return Some(format!("exit {code} is not a code of src/cli/exit.rs"));
    }
    if code == 0 {
        return None;
    }
    // The cause, on one line: an `error:` line, a run's FAILED or
    // INTERRUPTED status, or (exit 6) the --fail-on line.
    let said = ended.stderr.lines().any(|l| {
        let l = l.trim_start();
        (l.starts_with("error: ") && l.len() > 7)
            || l.starts_with("FAILED")
            || l.starts_with("INTERRUPTED")
            || (code == 6 && l.contains("--fail-on"))
    });
    if said {
        None
    } else {
        Some(format!("exit {code} without a one-line cause"))
    }
}

fn shown(call: &Call) -> String {
    call.args
        .iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if s.len() > 80 {
                format!(
                    "{:?}…({} bytes)",
                    &s[..s.char_indices().nth(40).map_or(s.len(), |c| c.0)],
                    s.len()
                )
            } else {
                format!("{s:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn random_command_lines_never_panic_hang_or_touch_what_they_do_not_own() {
    let n: usize = std::env::var("GHOSTBENCH_FUZZ_CLI_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_N);
    let seed: u64 = std::env::var("GHOSTBENCH_FUZZ_CLI_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let root = tempfile::tempdir().unwrap();
    let Some(world) = world(root.path()) else {
        return;
    };
    let (mut victim, fixtures) = (snapshot(&world.victim), snapshot(&world.fixtures));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let verbs: [(&str, Verb); 9] = [
        ("compare", compare),
        ("layout", layout),
        ("code", code),
        ("structs", structs),
        ("probe", probe),
        ("noise", noise),
        ("analyze", analyze),
        ("history", history),
        ("demo", demo),
    ];
    let mut failures = Vec::new();
    let mut codes: BTreeMap<(&str, i32), usize> = BTreeMap::new();
    let (mut panics, mut hangs, mut files_changed) = (0, 0, 0);
    let start = Instant::now();
    for i in 0..n {
        let (verb, make) = verbs[i % verbs.len()];
        let cwd = fresh_cwd(&world, i, &mut rng);
        let call = make(&world, &mut rng);
        let ended = run(&cwd, &call);
        *codes.entry((verb, ended.code.unwrap_or(-1))).or_default() += 1;
        if let Some(why) = judge(&ended) {
            panics += usize::from(why.starts_with("panicked"));
            hangs += usize::from(ended.hung);
            let last: Vec<&str> = ended.stderr.lines().rev().take(4).collect();
            failures.push(format!(
                "#{i}: {why}: ghostbench {}\n    stderr (last lines, reversed): {last:?}",
                shown(&call)
            ));
        }
        // A `$(…)` or backtick is never run by a shell.
        if cwd.dir.join("pwned").exists() || world.root.join("pwned").exists() {
            failures.push(format!(
                "#{i}: a $(touch pwned) ran: ghostbench {}",
                shown(&call)
            ));
        }
        let after = snapshot(&world.victim);
        if after != victim {
            let changed: Vec<_> = after
                .iter()
                .filter(|(p, e)| victim.get(*p) != Some(e))
                .map(|(p, _)| p.clone())
                .chain(victim.keys().filter(|p| !after.contains_key(*p)).cloned())
                .collect();
            files_changed += changed.len();
            failures.push(format!(
                "#{i}: changed outside its directory {changed:?}: ghostbench {}",
                shown(&call)
            ));
            victim = after;
        }
        let _ = std::fs::remove_dir_all(cwd.dir.parent().unwrap());
    }
    if snapshot(&world.fixtures) != fixtures {
        files_changed += 1;
        failures.push("the fixtures directory changed".into());
    }
    eprintln!(
        "CLI fuzz: seed {seed}, {n} invocations in {:.1} s: {panics} panics, {hangs} hangs, {files_changed} files changed outside the run's directory, {} failures; exit codes by verb: {codes:?}",
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {n} invocations failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
