//! `ghostbench layout` on a cargo crate (tests/fixtures/rust/ghostcrate, std
//! only, built offline): the variant's flags reach rustc through
//! `CARGO_ENCODED_RUSTFLAGS` (distinct code placement per layout), the
//! metric is read from the `estimates.json` the fixture writes as Criterion
//! does (`criterion:{dir}/criterion`), the verdict rests on that modelled
//! cost (never on measured time), and `--explain` names the hot function by
//! its demangled Rust name. This is the cargo workflow of
//! docs/layout-workflows.md, run as written there. Two more workflows of
//! that page run here too: the Criterion build line (`cargo bench --no-run
//! --message-format json | jq … | cp`) and a bare `rustc` template with
//! `{rustflags}`.

mod common;

use common::{fixture, read_json, require_tool, timing_lock};
use std::path::{Path, PathBuf};

/// The address of the text symbol whose demangled name is `symbol`.
fn nm_address(binary: &Path, symbol: &str) -> Option<u64> {
    let out = std::process::Command::new("nm")
        .arg("-C")
        .arg(binary)
        .output()
        .expect("nm runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.ends_with(&format!(" {symbol}")))?;
    u64::from_str_radix(line.split_whitespace().next()?, 16).ok()
}

/// Every `.ghostbench/work/*/BUILD/SEED/bench` under `root`, by seed.
fn binaries(root: &Path, build: &str) -> Vec<(u64, PathBuf)> {
    let mut found = Vec::new();
    for experiment in std::fs::read_dir(root.join(".ghostbench/work")).unwrap() {
        let dir = experiment.unwrap().path().join(build);
        let Ok(seeds) = std::fs::read_dir(&dir) else {
            continue;
        };
        for seed in seeds {
            let seed = seed.unwrap().path();
            let Some(n) = seed.file_name().and_then(|n| n.to_str()?.parse().ok()) else {
                continue;
            };
            if seed.join("bench").is_file() {
                found.push((n, seed.join("bench")));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_cargo_crate_across_layouts_with_a_criterion_metric_and_explain() {
    for tool in ["cargo", "cc", "nm", "valgrind"] {
        if !require_tool(tool) {
            return;
        }
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let manifest = fixture("rust", "ghostcrate/Cargo.toml");
    let build = |name: &str, features: &str| {
        format!(
            "{name}=cargo build --release --offline -q --manifest-path '{}' --target-dir {{dir}}/target {features} && cp {{dir}}/target/release/ghostcrate {{out}}",
            manifest.display()
        )
    };
    let json = dir.path().join("r.json");
    let output = common::run_within(
        dir.path(),
        &[
            "layout",
            "--shell",
            "--build",
            &build("inlined", ""),
            "--build",
            &build("never", "--features never"),
            "--run",
            "CRITERION_HOME={dir}/criterion {out}",
            "--metric",
            "criterion:{dir}/criterion",
            "--layouts",
            "4",
            "--rounds",
            "2",
            "--margin",
            "5",
            "--explain",
            "--color",
            "never",
            "--json",
            json.to_str().unwrap(),
        ],
        std::time::Duration::from_secs(600),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = read_json(&json);

    // The flags reached rustc: the hot function sits at a different
    // address in (nearly) every layout of the `never` build.
    let built = binaries(dir.path(), "never");
    assert_eq!(
        built.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    let addresses = placements(dir.path(), "never", "ghostcrate::checksum");
    assert!(addresses.len() >= 3, "placements {addresses:?}");
    // The inlined build has no such function: the feature made the difference.
    let (_, inlined) = &binaries(dir.path(), "inlined")[0];
    assert!(nm_address(inlined, "ghostcrate::checksum").is_none());

    // The metric is Criterion's estimate, named by the benchmark.
    let row = report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["build"] == "never" && r["metric"] == "checksum")
        .unwrap_or_else(|| panic!("no never/checksum row: {}", report["matrix"]));
    assert_eq!(row["unit"], "nanoseconds", "{row}");
    // The modelled cost moves by at most 4% with the layout and the two
    // builds do the same work: within ±5% across layouts, SAME.
    assert!(row["spread_cv"].as_f64().unwrap() > 0.0, "{row}");
    assert_eq!(row["comparison"]["verdict"], "SAME", "{row}");

    // --explain names the function only the `never` build has.
    let explain = &report["explain"];
    let b = &explain["builds"][0];
    assert_eq!(explain["ranking"], "profile", "{explain}");
    let one_sided = b["one_sided"].as_array().unwrap();
    let checksum = one_sided
        .iter()
        .find(|f| f["name"] == "ghostcrate::checksum")
        .unwrap_or_else(|| panic!("ghostcrate::checksum not named: {b}"));
    assert_eq!(checksum["side"], "build", "{checksum}");
    assert!(checksum["share"].as_f64().unwrap() > 0.5, "{checksum}");
    assert!(
        stdout.contains("ghostcrate::checksum (never only"),
        "{stdout}"
    );
}

/// `layout` in `dir` with `builds` (NAME=TEMPLATE, `--shell`), the fixture's
/// Criterion-format metric, `layouts` layouts and 2 rounds; the report.
fn layout_on_criterion(dir: &Path, builds: &[String], layouts: &str) -> serde_json::Value {
    let mut args = vec!["--shell"];
    for b in builds {
        args.extend(["--build", b.as_str()]);
    }
    args.extend([
        "--run",
        "CRITERION_HOME={dir}/criterion {out} --bench",
        "--metric",
        "criterion:{dir}/criterion",
        "--layouts",
        layouts,
        "--rounds",
        "2",
        "--margin",
        "5",
    ]);
    common::layout_json(dir, &args, std::time::Duration::from_secs(600))
}

/// The distinct addresses of `symbol` over the seeds of `build`.
fn placements(dir: &Path, build: &str, symbol: &str) -> std::collections::BTreeSet<u64> {
    binaries(dir, build)
        .iter()
        .map(|(seed, b)| {
            nm_address(b, symbol).unwrap_or_else(|| panic!("seed {seed}: no {symbol}"))
        })
        .collect()
}

#[test]
fn the_criterion_build_line_builds_the_bench_target_of_every_variant() {
    for tool in ["cargo", "cc", "nm", "jq"] {
        if !require_tool(tool) {
            return;
        }
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let manifest = fixture("rust", "ghostcrate/Cargo.toml");
    // As docs/layout-workflows.md "Criterion and libtest benchmarks" writes it.
    let build = |name: &str, features: &str| {
        format!(
            "{name}=cargo bench --no-run --offline -q --manifest-path '{}' --target-dir {{dir}}/target --bench checksum {features} --message-format json | jq -r 'select(.target.kind == [\"bench\"]) | .executable' | xargs -I{{}} cp {{}} {{out}}",
            manifest.display()
        )
    };
    let report = layout_on_criterion(
        dir.path(),
        &[build("inlined", ""), build("never", "--features never")],
        "4",
    );
    // The bench target (crate `checksum`) is what ran, once per variant,
    // with the variant's flags: its hot function moves with the layout.
    assert_eq!(
        binaries(dir.path(), "never").len(),
        4,
        "{}",
        report["build_results"]
    );
    let addresses = placements(dir.path(), "never", "checksum::checksum");
    assert!(addresses.len() >= 3, "placements {addresses:?}");
    let row = report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["build"] == "never" && r["metric"] == "checksum")
        .unwrap_or_else(|| panic!("no never/checksum row: {}", report["matrix"]));
    assert_eq!(row["unit"], "nanoseconds", "{row}");
    assert_eq!(row["comparison"]["verdict"], "SAME", "{row}");
}

#[test]
fn a_bare_rustc_template_gets_the_variants_flags_from_rustflags() {
    for tool in ["rustc", "cc", "nm"] {
        if !require_tool(tool) {
            return;
        }
    }
    let _lock = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let main = fixture("rust", "ghostcrate/src/main.rs");
    let build = |name: &str, cfg: &str| {
        format!(
            "{name}=rustc -C opt-level=3 --edition 2021 --crate-name ghostcrate {cfg} {{rustflags}} '{}' -o {{out}}",
            main.display()
        )
    };
    let report = layout_on_criterion(
        dir.path(),
        &[
            build("inlined", ""),
            build("never", "--cfg 'feature=\"never\"'"),
        ],
        "4",
    );
    // Without {rustflags} every variant would be the same binary; with it
    // the hot function sits at (nearly) a different address in each.
    let addresses = placements(dir.path(), "never", "ghostcrate::checksum");
    assert!(addresses.len() >= 3, "placements {addresses:?}");
    let commands: Vec<&str> = report["build_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["command"].as_str())
        .collect();
    assert!(
        commands
            .iter()
            .any(|c| c.contains("llvm-args=-align-all-functions=")),
        "{commands:?}"
    );
    let row = report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["build"] == "never" && r["metric"] == "checksum")
        .unwrap_or_else(|| panic!("no never/checksum row: {}", report["matrix"]));
    assert_eq!(row["comparison"]["verdict"], "SAME", "{row}");
}
