//! `layout` sharded on a real Slurm cluster: a one-node cluster brought up
//! in a temp dir (tests/common/slurm.rs) runs what `--emit slurm` writes.

mod common;

use common::slurm::Cluster;
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
    let out = cluster.sbatch_wait(&script, Duration::from_secs(60));
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
