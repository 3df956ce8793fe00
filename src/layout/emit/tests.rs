//! The job files, read back: the Slurm script's directives and its shard
//! command split as `sh` would, the Kubernetes Job and the GitHub workflow
//! parsed as YAML (yaml-rust2) and checked field by field, the Job against
//! the fields the batch/v1 API requires.
use super::*;
use yaml_rust2::{Yaml, YamlLoader};

fn spec(engine: Engine) -> EmitSpec {
    EmitSpec {
        engine,
        plan_dir: PathBuf::from("/shared/exp"),
        plan_hash: "3f9a0c1d2e4b5a6978".to_string(),
        wave: 1,
        first_shard: 1,
        last_shard: 4,
        total_shards: 4,
        concurrency: None,
        ghostbench: "/opt/gb/bin/ghostbench".to_string(),
        build_cache: None,
        partition: None,
        time_limit: None,
        image: Some("registry.example/bench:1".to_string()),
        volume_claim: Some("bench-plans".to_string()),
        mount: None,
    }
}

fn yaml(text: &str) -> Yaml {
    let mut docs = YamlLoader::load_from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(docs.len(), 1, "one YAML document");
    docs.remove(0)
}

fn directives(script: &str) -> Vec<&str> {
    script
        .lines()
        .filter_map(|l| l.strip_prefix("#SBATCH "))
        .collect()
}

fn exec_line(script: &str) -> Vec<String> {
    let line = script
        .lines()
        .find_map(|l| l.strip_prefix("exec "))
        .expect("an exec line");
    shlex::split(line).expect("sh words")
}

#[test]
fn slurm_is_a_job_array_of_the_waves_shards_with_a_log_per_task() {
    let mut s = spec(Engine::Slurm);
    s.concurrency = Some(2);
    s.partition = Some("bench".to_string());
    s.time_limit = Some("02:00:00".to_string());
    let script = slurm(&s);
    assert!(script.starts_with("#!/bin/sh\n"));
    assert_eq!(
        directives(&script),
        [
            "--job-name=ghostbench-3f9a0c1d-w1",
            "--array=1-4%2",
            "--ntasks=1",
            "--output=/shared/exp/logs/shard-%a.out",
            "--partition=bench",
            "--time=02:00:00",
        ]
    );
    // sbatch stops reading #SBATCH lines at the first command.
    let lines: Vec<&str> = script.lines().collect();
    let last_directive = lines
        .iter()
        .rposition(|l| l.starts_with("#SBATCH"))
        .unwrap();
    let first_command = lines.iter().position(|l| !l.starts_with('#')).unwrap();
    assert!(last_directive < first_command);
    // shlex leaves "$VAR" as written: sh expands it, and only it.
    assert_eq!(
        exec_line(&script),
        [
            "/opt/gb/bin/ghostbench",
            "layout",
            "--plan",
            "/shared/exp/plan.json",
            "--shard",
            "${SLURM_ARRAY_TASK_ID}/4",
        ]
    );
}

#[test]
fn slurm_of_a_later_wave_runs_its_own_shards_of_the_whole_plan() {
    let mut s = spec(Engine::Slurm);
    s.wave = 2;
    s.first_shard = 5;
    s.last_shard = 12;
    s.total_shards = 12;
    s.ghostbench = "/opt/my tools/ghostbench".to_string();
    s.build_cache = Some(PathBuf::from("/shared/cache dir"));
    let script = slurm(&s);
    assert!(directives(&script).contains(&"--array=5-12"));
    assert!(directives(&script).contains(&"--job-name=ghostbench-3f9a0c1d-w2"));
    assert_eq!(
        exec_line(&script),
        [
            "/opt/my tools/ghostbench",
            "layout",
            "--plan",
            "/shared/exp/plan.json",
            "--shard",
            "${SLURM_ARRAY_TASK_ID}/12",
            "--build-cache",
            "/shared/cache dir",
        ]
    );
    assert_eq!(Engine::Slurm.file_name(2), "submit-wave2.sbatch");
    assert_eq!(Engine::Slurm.file_name(1), "submit.sbatch");
}

#[test]
fn slurm_refuses_a_directory_sbatch_directives_cannot_carry() {
    for dir in ["/shared/my exp", "/shared/100%", "relative/exp"] {
        let mut s = spec(Engine::Slurm);
        s.plan_dir = PathBuf::from(dir);
        let err = s.check().unwrap_err();
        assert!(matches!(err, EmitError::Unusable { .. }), "{dir}: {err}");
        assert!(err.to_string().contains(dir), "{err}");
    }
    let mut s = spec(Engine::Slurm);
    s.time_limit = Some("2 h".to_string());
    assert!(s.check().is_err());
    assert!(spec(Engine::Slurm).check().is_ok());
}

#[test]
fn shard_ranges_outside_the_plan_and_zero_concurrency_are_refused() {
    for (first, last, total) in [(0, 4, 4), (3, 2, 4), (1, 5, 4)] {
        let mut s = spec(Engine::Slurm);
        (s.first_shard, s.last_shard, s.total_shards) = (first, last, total);
        assert!(matches!(s.check(), Err(EmitError::NoShards { .. })));
    }
    let mut s = spec(Engine::Github);
    s.plan_dir = PathBuf::from("bench/exp");
    s.concurrency = Some(0);
    assert_eq!(s.check(), Err(EmitError::ZeroConcurrency));
}

/// A Kubernetes object name: a DNS-1123 subdomain (lower-case alphanumerics,
/// '-' and '.', starting and ending alphanumeric, at most 253 characters).
fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[test]
fn k8s_is_an_indexed_job_with_the_fields_the_job_api_requires() {
    let mut s = spec(Engine::K8s);
    s.concurrency = Some(3);
    let doc = yaml(&k8s(&s));
    // Required by every object, and by batch/v1 Job.
    assert_eq!(doc["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(doc["kind"].as_str(), Some("Job"));
    let name = doc["metadata"]["name"].as_str().expect("metadata.name");
    assert!(is_dns_subdomain(name), "{name}");
    let job = &doc["spec"];
    assert_eq!(job["completionMode"].as_str(), Some("Indexed"));
    // Indexed Jobs must set completions; parallelism and backoffLimit are ints.
    assert_eq!(job["completions"].as_i64(), Some(4));
    assert_eq!(job["parallelism"].as_i64(), Some(3));
    assert!(job["backoffLimit"].as_i64().is_some_and(|b| b >= 0));
    let pod = &job["template"]["spec"];
    // A Job's pods must not restart Always.
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    let containers = pod["containers"].as_vec().expect("containers[]");
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    assert!(c["name"].as_str().is_some_and(is_dns_subdomain));
    assert_eq!(c["image"].as_str(), Some("registry.example/bench:1"));
    // The plan volume: mounted at the plan directory, from the claim.
    let mounts = c["volumeMounts"].as_vec().expect("volumeMounts[]");
    assert_eq!(mounts[0]["mountPath"].as_str(), Some("/shared/exp"));
    let volumes = pod["volumes"].as_vec().expect("volumes[]");
    assert_eq!(volumes[0]["name"], mounts[0]["name"]);
    assert_eq!(
        volumes[0]["persistentVolumeClaim"]["claimName"].as_str(),
        Some("bench-plans")
    );
    // Labels on the pod template (a Job's selector is generated from it).
    assert_eq!(
        job["template"]["metadata"]["labels"]["app.kubernetes.io/name"].as_str(),
        Some("ghostbench")
    );
}

/// The container's command as the kubelet then `sh` run it: `$$` becomes
/// `$`, `$(VAR)` of a defined variable its value (none here is), and the
/// shell does the arithmetic. `echo` stands in for ghostbench.
fn k8s_shard_command(s: &EmitSpec, index: usize) -> String {
    let doc = yaml(&k8s(s));
    let command: Vec<String> = doc["spec"]["template"]["spec"]["containers"][0]["command"]
        .as_vec()
        .expect("command[]")
        .iter()
        .map(|w| w.as_str().expect("a string").replace("$$", "$"))
        .collect();
    assert_eq!(command[0], "/bin/sh");
    let out = std::process::Command::new(&command[0])
        .args(&command[1..3])
        .arg("echo")
        .args(&command[4..])
        .env("JOB_COMPLETION_INDEX", index.to_string())
        .output()
        .expect("run sh");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn k8s_completion_index_zero_runs_the_waves_first_shard() {
    let s = spec(Engine::K8s);
    assert_eq!(
        k8s_shard_command(&s, 0),
        "layout --plan /shared/exp/plan.json --shard 1/4"
    );
    let mut s = spec(Engine::K8s);
    (s.wave, s.first_shard, s.last_shard, s.total_shards) = (2, 5, 12, 12);
    s.mount = Some(PathBuf::from("/plans/$(HOME)"));
    s.build_cache = Some(PathBuf::from("/cache"));
    let doc = yaml(&k8s(&s));
    assert_eq!(doc["spec"]["completions"].as_i64(), Some(8));
    assert_eq!(doc["spec"]["parallelism"].as_i64(), Some(8));
    // A `$(…)` in a path stays literal: the kubelet sees `$$(HOME)`.
    assert_eq!(
        k8s_shard_command(&s, 7),
        "layout --plan /plans/$(HOME)/plan.json --build-cache /cache --shard 12/12"
    );
}

#[test]
fn k8s_needs_an_image_and_a_volume_claim() {
    let mut s = spec(Engine::K8s);
    s.image = None;
    assert!(s.check().unwrap_err().to_string().contains("--image"));
    let mut s = spec(Engine::K8s);
    s.volume_claim = Some(String::new());
    assert!(s
        .check()
        .unwrap_err()
        .to_string()
        .contains("--volume-claim"));
    let mut s = spec(Engine::K8s);
    s.mount = Some(PathBuf::from("plans"));
    assert!(s.check().is_err());
    assert!(spec(Engine::K8s).check().is_ok());
}

#[test]
fn github_runs_a_matrix_job_per_shard_then_the_merge() {
    let mut s = spec(Engine::Github);
    s.plan_dir = PathBuf::from("bench/exp");
    s.concurrency = Some(2);
    s.ghostbench = "ghostbench".to_string();
    assert!(s.check().is_ok());
    let doc = yaml(&github(&s));
    assert!(doc["on"]["workflow_dispatch"].as_hash().is_some());
    let shard = &doc["jobs"]["shard"];
    assert!(shard["runs-on"].as_str().is_some());
    assert_eq!(shard["strategy"]["fail-fast"].as_bool(), Some(false));
    assert_eq!(shard["strategy"]["max-parallel"].as_i64(), Some(2));
    let matrix: Vec<i64> = shard["strategy"]["matrix"]["shard"]
        .as_vec()
        .expect("matrix.shard[]")
        .iter()
        .map(|k| k.as_i64().expect("a number"))
        .collect();
    assert_eq!(matrix, [1, 2, 3, 4]);
    let steps = shard["steps"].as_vec().expect("steps[]");
    let run = steps[1]["run"].as_str().expect("the shard step");
    assert_eq!(
        shlex::split(run).unwrap(),
        [
            "ghostbench",
            "layout",
            "--plan",
            "bench/exp/plan.json",
            "--shard",
            "${{ matrix.shard }}/4"
        ]
    );
    assert_eq!(
        steps[2]["uses"].as_str(),
        Some("actions/upload-artifact@v4")
    );
    assert_eq!(steps[2]["if"].as_str(), Some("always()"));
    assert_eq!(
        steps[2]["with"]["path"].as_str(),
        Some("bench/exp/results/shard-${{ matrix.shard }}.json")
    );
    let merge = &doc["jobs"]["merge"];
    assert_eq!(merge["needs"].as_str(), Some("shard"));
    let steps = merge["steps"].as_vec().expect("steps[]");
    assert_eq!(
        steps[1]["uses"].as_str(),
        Some("actions/download-artifact@v4")
    );
    assert_eq!(steps[1]["with"]["path"].as_str(), Some("bench/exp/results"));
    assert!(steps[2]["run"]
        .as_str()
        .unwrap()
        .starts_with("ghostbench analyze bench/exp/results/ "));
    // An absolute plan directory means nothing on a runner.
    assert!(spec(Engine::Github).check().is_err());
}
