//! docs/ci.md's GitHub Actions workflow, run locally: its `run:` steps in
//! order with bash, the hosted parts replaced (checkout by a local clone of a
//! bare `origin`, the cache by copying `.ghostbench/` between two runs of the
//! job, the install step by the binary under test on PATH, the runner's
//! variables by local values). A pull request whose benchmark does twice the
//! work must fail the step with exit 6 after writing the job summary.
//!
//! One more stand-in keeps the verdict free of timing: the benchmark is
//! tests/fixtures/layout/placed.c, and the layout step's `--metric user` is
//! replaced by the modelled cost it prints (exact per binary), so twice the
//! work is a ratio of exactly 2 under any load. Everything else in the step
//! (the gate, the summary, the store) runs as the docs write it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// One step of the workflow: its name, and `uses:` or `run:`.
#[derive(Debug)]
struct Step {
    name: String,
    uses: Option<String>,
    run: Option<String>,
}

/// The workflow's YAML block from docs/ci.md.
fn workflow() -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md"))
        .expect("docs/ci.md");
    let start = doc.find("```yaml\n").expect("a yaml block") + 8;
    // The closing fence is on a line of its own (the scripts echo fences).
    let end = start + doc[start..].find("\n```\n").expect("its end") + 1;
    doc[start..end].to_string()
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The steps, read from the YAML's `steps:` list (the subset the workflow
/// uses: `- name:`, `uses:`, `run: |` blocks and one-line `run:`).
fn steps(yaml: &str) -> Vec<Step> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut steps: Vec<Step> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if let Some(name) = trimmed.strip_prefix("- name: ") {
            steps.push(Step {
                name: name.trim().to_string(),
                uses: None,
                run: None,
            });
        } else if let (Some(step), Some(uses)) = (steps.last_mut(), trimmed.strip_prefix("uses: "))
        {
            step.uses = Some(uses.trim().to_string());
        } else if let (Some(step), Some(run)) = (steps.last_mut(), trimmed.strip_prefix("run: ")) {
            if run.trim() == "|" {
                let key = indent(line);
                let mut block = Vec::new();
                while i + 1 < lines.len()
                    && (lines[i + 1].trim().is_empty() || indent(lines[i + 1]) > key)
                {
                    i += 1;
                    block.push(lines[i]);
                }
                let common = block
                    .iter()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| indent(l))
                    .min()
                    .unwrap_or(0);
                let script: Vec<&str> = block
                    .iter()
                    .map(|l| if l.len() >= common { &l[common..] } else { "" })
                    .collect();
                step.run = Some(script.join("\n") + "\n");
            } else {
                step.run = Some(run.trim().to_string());
            }
        }
        i += 1;
    }
    steps
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=ci", "-c", "user.email=ci@example.invalid"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bare `origin` whose `main` has bench/work.c (placed.c, which prints its
/// modelled cost), and the pull request's branch `pr`, where it does twice the work.
fn repository(root: &Path) -> PathBuf {
    let origin = root.join("origin.git");
    std::fs::create_dir_all(&origin).unwrap();
    git(&origin, &["init", "-q", "--bare"]);
    let seed = root.join("seed");
    std::fs::create_dir_all(seed.join("bench")).unwrap();
    git(&seed, &["init", "-q"]);
    let work = std::fs::read_to_string(common::fixture("layout", "placed.c")).unwrap();
    std::fs::write(seed.join("bench/work.c"), &work).unwrap();
    git(&seed, &["add", "."]);
    git(&seed, &["commit", "-q", "-m", "bench"]);
    git(
        &seed,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    git(&seed, &["push", "-q", "origin", "main"]);
    git(&seed, &["checkout", "-q", "-b", "pr"]);
    let slower = work.replace("#define WORK 100", "#define WORK 200");
    assert_ne!(slower, work, "the fixture defines WORK 100");
    std::fs::write(seed.join("bench/work.c"), slower).unwrap();
    git(&seed, &["commit", "-q", "-am", "twice the work"]);
    git(&seed, &["push", "-q", "origin", "pr"]);
    origin
}

/// What one run of the job left: each run step's exit code, and the summary.
struct Job {
    codes: Vec<(String, i32)>,
    summary: String,
    report: serde_json::Value,
}

/// One run of the job on a fresh "runner" under `root/run{n}`, with the
/// cache in `root/cache`.
fn run_job(root: &Path, origin: &Path, steps: &[Step], n: usize) -> Job {
    let runner = root.join(format!("run{n}"));
    let temp = runner.join("temp");
    std::fs::create_dir_all(&temp).unwrap();
    let summary = runner.join("summary.md");
    let cache = root.join("cache");
    let work = runner.join("work");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ghostbench"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut codes = Vec::new();
    let mut failed = false;
    for step in steps {
        match (&step.uses, &step.run) {
            (Some(uses), _) if uses.starts_with("actions/checkout") => {
                // The hosted checkout: the pull request's branch, full history.
                let out = Command::new("git")
                    .args(["clone", "-q", "--branch", "pr"])
                    .arg(origin)
                    .arg(&work)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            (Some(uses), _) if uses.starts_with("actions/cache") => {
                // Restore: the store the last run saved, if any.
                if cache.join(".ghostbench").exists() {
                    copy_dir(&cache.join(".ghostbench"), &work.join(".ghostbench"));
                }
            }
            (Some(uses), _) if uses.starts_with("actions/upload-artifact") => {
                // `if: always()`: runs after a failure too.
                assert!(
                    work.join("ghostbench.json").exists() && work.join("ghostbench.md").exists()
                );
            }
            (Some(other), _) => panic!(
                "step {:?} uses {other}, which this test cannot stand in for",
                step.name
            ),
            (None, Some(_)) if step.name == "Install ghostbench" => {
                // The binary under test is on PATH instead.
            }
            (None, Some(script)) => {
                if failed {
                    continue;
                }
                let out = Command::new("bash")
                    .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
                    .current_dir(&work)
                    .env("PATH", &path)
                    .env("GITHUB_BASE_REF", "main")
                    .env("RUNNER_TEMP", &temp)
                    .env("GITHUB_STEP_SUMMARY", &summary)
                    .env("CI", "true")
                    .env_remove("GHOSTBENCH_STORE")
                    .output()
                    .expect("bash runs");
                let code = out.status.code().unwrap_or(-1);
                eprintln!(
                    "step {:?}: exit {code}\n{}{}",
                    step.name,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                failed = code != 0;
                codes.push((step.name.clone(), code));
            }
            (None, None) => panic!("step {:?} has neither uses nor run", step.name),
        }
    }
    // The cache action's post step: save the store.
    if work.join(".ghostbench").exists() {
        let _ = std::fs::remove_dir_all(cache.join(".ghostbench"));
        copy_dir(&work.join(".ghostbench"), &cache.join(".ghostbench"));
    }
    Job {
        codes,
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        report: common::read_json(&work.join("ghostbench.json")),
    }
}

/// The cache's `path: .ghostbench/results.db*`: the store's files only.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with("results.db")
        {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn the_workflow_yaml_has_the_steps_the_docs_describe() {
    let steps = steps(&workflow());
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(steps.iter().any(|s| s
        .uses
        .as_deref()
        .is_some_and(|u| u.starts_with("actions/cache"))));
    let layout = steps
        .iter()
        .find_map(|s| s.run.as_deref().filter(|r| r.contains("ghostbench layout")))
        .unwrap();
    assert!(layout.contains("--fail-on slower") && layout.contains("GITHUB_STEP_SUMMARY"));
}

/// The docs' workflow, run twice: a pull request doing twice the work fails
/// the layout step with exit 6 after writing the summary, and the cached
/// store carries the first run's result into the second. The verdict comes
/// from the benchmark's printed modelled cost, not from measured time.
#[test]
fn the_ci_workflow_fails_a_real_regression_and_keeps_the_store() {
    if !common::require_tool("cc") || !common::require_tool("git") {
        return;
    }
    let _lock = common::timing_lock();
    let root = tempfile::tempdir().unwrap();
    let origin = repository(root.path());
    let mut steps = steps(&workflow());
    // The metric stand-in (see the header): user time becomes the cost the
    // benchmark prints. Exactly one step names `--metric user`, or the docs
    // moved on and this test must follow.
    let timed: Vec<&mut Step> = steps
        .iter_mut()
        .filter(|s| {
            s.run
                .as_deref()
                .is_some_and(|r| r.contains("--metric user "))
        })
        .collect();
    assert_eq!(
        timed.len(),
        1,
        "the workflow's layout step names --metric user"
    );
    for step in timed {
        let run = step.run.take().unwrap();
        step.run = Some(run.replacen(
            "--metric user ",
            &format!("--metric '{}' ", common::PLACED_COST),
            1,
        ));
    }

    let first = run_job(root.path(), &origin, &steps, 1);
    let layout = "Layout experiment, main against the pull request";
    let code = first.codes.iter().find(|(n, _)| n == layout).map(|c| c.1);
    // Twice the work is a real regression: SLOWER at a ratio of 2 (the
    // placement term cancels: main's and pr's `hot` sit at the same offset in
    // each layout), and the gate fails the step.
    let comparison = first.report["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["build"] == "pr")
        .map(|r| r["comparison"].clone())
        .unwrap();
    assert_eq!(comparison["verdict"], "SLOWER", "{}", first.summary);
    let estimate = comparison["controlled"]["estimate"].as_f64().unwrap();
    assert!((estimate - 2.0).abs() < 1e-3, "{comparison}");
    assert_eq!(code, Some(6), "{:?}", first.codes);
    assert!(
        first.summary.contains("SLOWER") && first.summary.contains('|'),
        "{}",
        first.summary
    );
    assert!(
        first.summary.contains("### Recent results"),
        "{}",
        first.summary
    );
    let listed = |summary: &str| {
        summary
            .lines()
            .filter(|l| l.contains(" layout ") && l.contains("main, pr"))
            .count()
    };
    assert_eq!(listed(&first.summary), 1, "{}", first.summary);

    // The next run restores the cached store: its history has both results.
    let second = run_job(root.path(), &origin, &steps, 2);
    assert_eq!(listed(&second.summary), 2, "{}", second.summary);
}
