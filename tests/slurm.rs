//! `layout` sharded on a real Slurm cluster: a one-node cluster brought up
//! in a temp dir (tests/common/slurm.rs) runs what `--emit slurm` writes.

mod common;

use common::slurm::Cluster;
use common::{fixture, ghostbench, read_json, require_tool};
use serde_json::Value;
use std::time::Duration;

/// The harness itself: a two-task job array submitted with `sbatch --wait`
/// runs both tasks, each writing its own log with its task id.
#[test]
fn a_one_node_cluster_runs_a_job_array() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let dir = cluster.dir().join("job");
    std::fs::create_dir(&dir).unwrap();
    let script = dir.join("hello.sbatch");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n#SBATCH --array=1-2\n#SBATCH --output={}/task-%a.out\n\
             echo \"task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT\"\n",
            dir.display()
        ),
    )
    .unwrap();
    let out = cluster.sbatch_wait(&script, &dir, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "sbatch --wait failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        cluster.logs()
    );
    for task in 1..=2 {
        let log = std::fs::read_to_string(dir.join(format!("task-{task}.out")))
            .unwrap_or_else(|e| panic!("task {task} wrote no log: {e}\n{}", cluster.logs()));
        assert_eq!(log.trim(), format!("task {task} of 2"));
    }
}

/// A 2-build × 8-layout plan in 4 shards of 2 variants, its job array
/// written by `--emit slurm` and submitted with `sbatch --wait`, then
/// merged: every merged verdict equals the verdict of the same plan run in
/// one process. The fixture reports a modelled cost that depends on where
/// each real build placed its hot function (tests/fixtures/layout/placed.c),
/// so both runs see the same numbers on a loaded machine and the verdicts
/// must match exactly; the wall-clock version is benches/scale_out.sh.
#[test]
fn four_slurm_shards_merge_to_the_one_process_verdicts() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    if !require_tool("cc") {
        return;
    }
    let src = fixture("layout", "placed.c");
    let src = src.display();
    let pairs: [(&str, &str, &[&str]); 2] = [
        ("layout-only", "-DCOLD=64", &["SAME", "ARTIFACT"]),
        ("thirty-percent", "-DWORK=130", &["SLOWER"]),
    ];
    for (name, flags, expected) in pairs {
        let dir = cluster.dir().join(name);
        let out = ghostbench()
            .current_dir(cluster.dir())
            .args([
                "layout",
                "--build",
                &format!("A=cc -O2 {{cflags}} {{ldflags}} {src} -o {{out}}"),
                "--build",
                &format!("B=cc -O2 {flags} {{cflags}} {{ldflags}} {src} -o {{out}}"),
                "--metric",
                common::PLACED_COST,
                "--layouts",
                "8",
                "--rounds",
                "2",
                "--warmup",
                "0",
                "--margin",
                "3",
                "--shards",
                "4",
                "--plan-only",
            ])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let plan = dir.join("plan.json");
        assert_eq!(read_json(&plan)["shards"], 4);

        let out = ghostbench()
            .args(["layout", "--plan"])
            .arg(&plan)
            .args(["--emit", "slurm", "--concurrency", "2"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let script = dir.join("submit.sbatch");
        assert!(text(&std::fs::read(&script).unwrap()).contains("#SBATCH --array=1-4%2"));

        let out = cluster.sbatch_wait(&script, cluster.dir(), Duration::from_secs(120));
        let logs: String = (1..=4)
            .map(|k| {
                let log = dir.join(format!("logs/shard-{k}.out"));
                format!(
                    "--- shard {k}\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                )
            })
            .collect();
        assert!(
            out.status.success(),
            "{name}: sbatch --wait failed: {}\n{logs}\n{}",
            text(&out.stderr),
            cluster.logs()
        );
        let mut spans = Vec::new();
        for k in 1..=4 {
            let shard = read_json(&dir.join(format!("results/shard-{k}.json")));
            assert_eq!(shard["status"], "ok", "{name}: shard {k}\n{logs}");
            assert_eq!(shard["shard"], k);
            assert_eq!(shard["seeds"].as_array().unwrap().len(), 2);
            let start = shard["started_unix"].as_f64().unwrap();
            spans.push((start, start + shard["elapsed_s"].as_f64().unwrap()));
        }
        // select/cons_tres with CR_CPU gives each task one CPU: with two or
        // more, the array's first two tasks start together and overlap.
        if cluster.cpus() >= 2 {
            let overlap = spans
                .iter()
                .enumerate()
                .any(|(i, a)| spans[i + 1..].iter().any(|b| a.0 < b.1 && b.0 < a.1));
            assert!(overlap, "{name}: no two shards ran at once: {spans:?}");
        }

        let merged = dir.join("merged.json");
        let out = ghostbench()
            .arg("analyze")
            .arg(dir.join("results"))
            .arg("--json")
            .arg(&merged)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: merge: {}", text(&out.stderr));

        // The same plan in one process, building in a directory of its own.
        let here = dir.join("one-process");
        std::fs::create_dir(&here).unwrap();
        let local = here.join("local.json");
        let out = ghostbench()
            .current_dir(&here)
            .args(["layout", "--quiet", "--plan"])
            .arg(&plan)
            .arg("--json")
            .arg(&local)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: one process: {}",
            text(&out.stderr)
        );

        let (merged, local) = (read_json(&merged), read_json(&local));
        let one = verdict(&local, "B", "cost");
        assert!(
            expected.contains(&one.as_str()),
            "{name}: one process gave {one}"
        );
        assert_eq!(
            verdict(&merged, "B", "cost"),
            one,
            "{name}: merged verdict differs from the one-process verdict"
        );
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The verdict of `build` against the baseline on `metric` in a layout report.
fn verdict(report: &Value, build: &str, metric: &str) -> String {
    report["matrix"]
        .as_array()
        .unwrap_or_else(|| panic!("no matrix in {report}"))
        .iter()
        .find(|r| r["build"] == build && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {build}/{metric} in {}", report["matrix"]))["comparison"]
        ["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}
