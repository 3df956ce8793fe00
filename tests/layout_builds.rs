//! Integration tests of `layout`'s builds (issue 25): the static template
//! check, builds that leave nothing in the user's tree, the shared cache and
//! relink-only variants (compiles counted from the JSON, never timed),
//! identical variants named with their cause, the make and cmake workflows of
//! docs/layout-workflows.md, and `ghostbench cache`. Fixtures are compiled at
//! test time; verdicts come from placed.c's modelled cost.

mod common;

use common::{fixture, read_json, require_tool, timing_lock, PLACED_COST};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(300);

/// `ghostbench layout ARGS` in `dir` with a few layouts and one round; the
/// process output.
fn layout(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec![
        "layout",
        "--metric",
        PLACED_COST,
        "--rounds",
        "1",
        "--warmup",
        "0",
        "--quiet",
        "--color",
        "never",
    ];
    all.extend_from_slice(args);
    common::run_within(dir, &all, LIMIT)
}

/// Every path under `dir` except the top `.ghostbench/`, with its size and
/// modification time (a file rewritten in place with the same size shows).
fn snapshot(dir: &Path) -> BTreeSet<(PathBuf, u64, std::time::SystemTime)> {
    type Tree = BTreeSet<(PathBuf, u64, std::time::SystemTime)>;
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path == root.join(".ghostbench") {
                continue;
            }
            let meta = entry.metadata().unwrap();
            let relative = path.strip_prefix(root).unwrap().to_path_buf();
            let modified = if meta.is_dir() {
                // A directory's time changes when ghostbench only reads it.
                std::time::SystemTime::UNIX_EPOCH
            } else {
                meta.modified().unwrap()
            };
            out.insert((relative, meta.len(), modified));
            if meta.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn sum(report: &Value, build: u64, key: &str) -> u64 {
    report["build_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["build"] == build)
        .map(|r| r[key].as_u64().unwrap_or(0))
        .sum()
}

fn notes(report: &Value) -> Vec<String> {
    report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str().map(String::from))
        .collect()
}

/// Issue 25 point 3, first half. A template without `{out}`: exit 2 before
/// anything is built or written. "At once" is asserted by what did not
/// happen, not by a time: neither template ran (each would leave a marker;
/// B names `{out}` and is valid, so the check comes before every build),
/// and the tree is as it was.
#[test]
fn a_template_without_out_is_refused_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let (a_ran, b_ran) = (dir.path().join("a-ran"), dir.path().join("b-ran"));
    let before = snapshot(dir.path());
    let output = layout(
        dir.path(),
        &[
            "--build",
            &format!("A=touch {}", a_ran.display()),
            "--build",
            &format!(
                "B=sh -c 'touch {}; cp /bin/true \"$0\"' {{out}}",
                b_ran.display()
            ),
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("build A") && stderr.contains("{out}"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!a_ran.exists() && !b_ran.exists(), "a build ran");
    assert!(!dir.path().join(".ghostbench/work").exists());
    assert_eq!(snapshot(dir.path()), before, "files appeared in the tree");
}

/// Builds run in their own directories: a compiler's by-products
/// (`-save-temps`) and a relative source stay out of the user's tree, and a
/// failing seed 0 stops every other build.
#[test]
fn nothing_lands_in_the_users_tree_and_a_failing_default_stops_the_builds() {
    if !require_tool("cc") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("layout", "placed.c"), dir.path().join("placed.c")).unwrap();
    let before = snapshot(dir.path());
    let report_dir = tempfile::tempdir().unwrap();
    let json = report_dir.path().join("r.json");
    let output = layout(
        dir.path(),
        &[
            "--build",
            "A=cc -O2 -save-temps {cflags} {ldflags} placed.c -o {out}",
            "--build",
            "B=cc -O2 -save-temps -DWORK=130 {cflags} {ldflags} placed.c -o {out}",
            "--layouts",
            "3",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(snapshot(dir.path()), before, "files appeared in the tree");
    assert_eq!(read_json(&json)["status"]["state"], "finished");

    // Seed 0 of B fails: one failure reported, no other build attempted.
    let output = common::run_within(
        dir.path(),
        &[
            "layout",
            "--shell",
            "--quiet",
            "--color",
            "never",
            "--layouts",
            "4",
            "--build",
            "A=cc -O2 {cflags} {ldflags} {src}/placed.c -o {out}",
            "--build",
            "B=case {dir} in */0) exit 7;; esac; cc -O2 {cflags} {ldflags} {src}/placed.c -o {out}",
            "--json",
            json.to_str().unwrap(),
        ],
        LIMIT,
    );
    assert_eq!(output.status.code(), Some(5), "{output:?}");
    let report = read_json(&json);
    let ran: Vec<&Value> = report["build_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["seed"] != 0)
        .collect();
    assert!(
        ran.iter()
            .all(|r| r["ok"] == false && r["error"].as_str().unwrap().contains("seed 0")),
        "{ran:?}"
    );
    assert!(
        report["status"]["message"]
            .as_str()
            .unwrap()
            .contains("B seed 0"),
        "{}",
        report["status"]
    );
    // --shell templates run in the variant's directory too: `placed.c` is not there.
    assert_eq!(snapshot(dir.path()), before);
}

/// Relink-only variants and the shared cache: compiles ≤ the distinct
/// compile-flag sets; a second experiment changing only B compiles nothing
/// for A (counted in the JSON), and the time line shows compiles and links.
#[test]
fn variants_relink_and_a_second_experiment_reuses_the_baselines_objects() {
    if !require_tool("cc") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "placed.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    let a = format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}");
    let output = layout(
        dir.path(),
        &[
            "--build",
            &a,
            "--build",
            &format!("B=cc -O2 -DWORK=130 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--layouts",
            "8",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = read_json(&json);
    let flag_sets: BTreeSet<String> = report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| format!("{} {}", v["align"], v["shuffle"].is_null()))
        .collect();
    for b in [0, 1] {
        let compiles = sum(&report, b, "compiles");
        assert!(
            compiles >= 1 && compiles as usize <= flag_sets.len(),
            "build {b}: {compiles} compiles for {} flag sets",
            flag_sets.len()
        );
        assert_eq!(sum(&report, b, "links"), 8, "one link per variant");
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(" compiles ") || stdout.contains(" compile "),
        "{stdout}"
    );
    assert!(stdout.contains("links"), "{stdout}");

    // Only B changes: A compiles nothing.
    let output = layout(
        dir.path(),
        &[
            "--build",
            &a,
            "--build",
            &format!("C=cc -O2 -DWORK=70 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--layouts",
            "8",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let second = read_json(&json);
    assert_eq!(
        sum(&second, 0, "compiles"),
        0,
        "{}",
        second["build_results"]
    );
    assert!(sum(&second, 0, "compile_hits") >= 1);
    assert!(sum(&second, 1, "compiles") >= 1);

    // `ghostbench cache` shows the objects, and prunes them.
    let shown = common::run_within(dir.path(), &["cache"], LIMIT);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.status.success() && text.contains("objects:"),
        "{text}"
    );
    let pruned = common::run_within(dir.path(), &["cache", "prune", "--max-size", "0"], LIMIT);
    let text = String::from_utf8_lossy(&pruned.stdout);
    assert!(pruned.status.success() && text.contains("pruned"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("objects:")
                && l.split_whitespace().nth(1) == Some("0")),
        "{text}"
    );
    let bad = common::run_within(dir.path(), &["cache", "prune", "--max-size", "lots"], LIMIT);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}

/// Issue 25 point 2. A user's `-falign-functions=64` before `{cflags}`: the
/// variant's alignment overrides it, so B's code equals A's at every
/// aligned seed. The report names those seeds and the flag, and the verdict
/// rests on the other seeds only. With the default seeds, 16 layouts of
/// align, shift and env leave seeds 0, 6 and 15 (align at the compiler's
/// default), so the experiment decides on 3 layouts; with align alone it
/// refuses.
#[test]
fn identical_variants_are_named_with_the_flag_and_left_out() {
    if !require_tool("cc") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("layout", "placed.c");
    let src = src.display();
    let json = dir.path().join("r.json");
    let output = layout(
        dir.path(),
        &[
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O2 -falign-functions=64 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--sources",
            "align,shift,env",
            "--layouts",
            "16",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = read_json(&json);
    let found: Vec<String> = notes(&report)
        .into_iter()
        .filter(|n| n.contains("identical code"))
        .collect();
    assert_eq!(found.len(), 1, "{:?}", notes(&report));
    assert!(
        found[0].contains("-falign-functions=64") && found[0].contains("left out"),
        "{found:?}"
    );
    // The note names the identical variants: every aligned seed.
    let aligned: Vec<String> = report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["seed"] != 0 && !v["align"].is_null())
        .map(|v| v["seed"].to_string())
        .collect();
    assert_eq!(aligned.len(), 13, "{}", report["variants"]);
    assert!(
        found[0].contains(&format!("in seeds {} though", aligned.join(", "))),
        "{found:?}"
    );
    let used: Vec<u64> = report["used_seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    for v in report["variants"].as_array().unwrap() {
        if v["seed"] != 0 && !v["align"].is_null() {
            assert!(
                !used.contains(&v["seed"].as_u64().unwrap()),
                "aligned seed {} used",
                v["seed"]
            );
        }
    }
    // The verdict stands on the rest: seeds 0, 6 and 15, and its interval
    // counts 3 layouts.
    assert_eq!(used, [0, 6, 15]);
    let row = report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["build"] == "B")
        .unwrap();
    assert_eq!(row["comparison"]["controlled"]["variants"], 3, "{row}");
    assert!(
        row["comparison"]["sentence"]
            .as_str()
            .unwrap()
            .contains("across 3 layouts"),
        "{row}"
    );
    // The identical seeds are not even run.
    let runs = report["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    assert!(
        runs.iter()
            .all(|r| used.contains(&r["seed"].as_u64().unwrap())),
        "a left-out seed was measured"
    );

    // Align alone: every variant misfires, and it refuses with the cause.
    let output = layout(
        dir.path(),
        &[
            "--build",
            &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--build",
            &format!("B=cc -O2 -falign-functions=64 {{cflags}} {{ldflags}} {src} -o {{out}}"),
            "--sources",
            "align,env",
            "--layouts",
            "4",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(5), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("-falign-functions=64") && stderr.contains("--sources"),
        "{stderr}"
    );
}

/// A small make project: two sources, a Makefile that reads CC, CFLAGS and
/// LDFLAGS (the workflow of docs/layout-workflows.md).
fn project(dir: &Path) -> PathBuf {
    let proj = dir.join("proj");
    std::fs::create_dir(&proj).unwrap();
    std::fs::copy(fixture("layout", "placed.c"), proj.join("main.c")).unwrap();
    std::fs::write(
        proj.join("extra.c"),
        "int ghostbench_extra(int x) { return x * 3; }\n",
    )
    .unwrap();
    std::fs::write(
        proj.join("Makefile"),
        "bench: main.o extra.o\n\t$(CC) $(LDFLAGS) main.o extra.o -o bench\n",
    )
    .unwrap();
    std::fs::write(
        proj.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.10)\nproject(bench C)\nadd_executable(bench main.c extra.c)\n",
    )
    .unwrap();
    proj
}

#[test]
fn the_make_workflow_builds_through_the_launcher() {
    if !require_tool("cc") || !require_tool("make") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let before = snapshot(dir.path());
    let json = dir.path().join(".ghostbench-r.json");
    let make = |name: &str, define: &str, tail: &str| {
        format!("{name}=cp {{src}}/proj/*.c {{src}}/proj/Makefile . && make -s CC='{{launcher}} cc' CFLAGS=\"-O2 {define} $CFLAGS\" bench && test -x {{out}}{tail}")
    };
    let output = layout(
        dir.path(),
        &[
            "--shell",
            "--build",
            &make("A", "", ""),
            "--build",
            &make("B", "-DWORK=130", ""),
            "--layouts",
            "4",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = read_json(&json);
    assert_eq!(report["status"]["state"], "finished");
    // 2 objects a variant, each taken from the cache, realigned from a
    // marker assembly, or compiled (a marker compile makes no object).
    let both = |key: &str| sum(&report, 0, key) + sum(&report, 1, key);
    let (compiles, hits, realigned) = (both("compiles"), both("compile_hits"), both("realigned"));
    assert!(
        hits + realigned <= 2 * 2 * 4 && 2 * 2 * 4 <= hits + realigned + compiles,
        "{}",
        report["build_results"]
    );
    assert!(compiles >= 1, "{}", report["build_results"]);
    // Other template text, same compiles: every object comes from the cache.
    let output = layout(
        dir.path(),
        &[
            "--shell",
            "--build",
            &make("A", "", " && true"),
            "--build",
            &make("B", "-DWORK=130", " && true"),
            "--layouts",
            "4",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let again = read_json(&json);
    assert_eq!(
        sum(&again, 0, "compiles") + sum(&again, 1, "compiles"),
        0,
        "{}",
        again["build_results"]
    );
    assert_eq!(
        sum(&again, 0, "compile_hits") + sum(&again, 1, "compile_hits"),
        16
    );
    let mut after = snapshot(dir.path());
    after.retain(|(p, _, _)| !p.starts_with(".ghostbench-r.json"));
    assert_eq!(after, before, "files appeared in the tree");
}

#[test]
fn the_cmake_workflow_builds_through_the_launcher() {
    if !require_tool("cc") || !require_tool("cmake") || !require_tool("make") {
        return;
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let before = snapshot(dir.path());
    let json = dir.path().join(".ghostbench-r.json");
    let cmake = |name: &str, define: &str, tail: &str| {
        format!("{name}=CFLAGS=\"$CFLAGS {define}\" cmake -S {{src}}/proj -B b -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER_LAUNCHER={{launcher}} >/dev/null && cmake --build b >/dev/null && cp b/bench {{out}}{tail}")
    };
    let run = |tail: &str| {
        let output = layout(
            dir.path(),
            &[
                "--shell",
                "--build",
                &cmake("A", "", tail),
                "--build",
                &cmake("B", "-DWORK=130", tail),
                "--layouts",
                "3",
                "--json",
                json.to_str().unwrap(),
            ],
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let report = read_json(&json);
        let compiles = sum(&report, 0, "compiles") + sum(&report, 1, "compiles");
        let hits = sum(&report, 0, "compile_hits") + sum(&report, 1, "compile_hits");
        let realigned = sum(&report, 0, "realigned") + sum(&report, 1, "realigned");
        (compiles + realigned, hits, report)
    };
    // Every object of the first run is made: compiled or realigned.
    let (compiles, hits, report) = run("");
    assert!(
        compiles >= 2 * 2 * 3 && hits == 0,
        "{}",
        report["build_results"]
    );
    // Other template text, same compiles: the project's objects all hit.
    let (compiles, hits, report) = run(" && true");
    assert!(
        compiles == 0 && hits >= 2 * 2 * 3,
        "{}",
        report["build_results"]
    );
    assert!(!dir.path().join("proj/b").exists());
    let mut after = snapshot(dir.path());
    after.retain(|(p, _, _)| !p.starts_with(".ghostbench-r.json"));
    assert_eq!(after, before, "files appeared in the tree");
}
