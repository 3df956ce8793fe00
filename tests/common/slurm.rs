//! A real one-node Slurm cluster in a temp dir, for the tests that submit
//! what `layout --emit slurm` writes: a munge key, `munged` on its own
//! socket, a `slurm.conf` naming this host with the CPUs and memory `slurmd
//! -C` reports, `slurmctld -D` and `slurmd -D` on a free port pair. Dropping
//! the [`Cluster`] stops the three daemons it started, by pid.
//!
//! Needs root (slurmd runs jobs as their submitter and munged checks the
//! ownership of its paths) and the Debian packages `slurm-wlm` and `munge`;
//! without them [`Cluster::start`] reports the test as skipped (a failure
//! under `CI=true`) and returns None.
//!
//! Quirks found bringing it up (Slurm 22.05, munge 0.5.15):
//! - munged refuses a socket whose directory is not executable by all
//!   ("Socket is inaccessible"), so the cluster dir is 0755, not tempfile's 0700.
//! - Clients and daemons find munged through `AuthInfo=socket=…` (read by
//!   both auth/munge and cred/munge); clients find the conf through `SLURM_CONF`.
//! - proctrack/linuxproc and task/none need no cgroups; select/cons_tres with
//!   CR_CPU gives each array task one CPU, so tasks run side by side.
//! - The node must not claim more memory than `slurmd -C` finds, or it is
//!   drained at registration: the conf copies `slurmd -C`'s NodeName line.
//! - `sbatch --wait` sleeps 2, 8, 32 s between polls while the sleep is under
//!   half of MinJobAge (default 300 s): 4 shards of 3 s took 42 s to "finish".
//!   MinJobAge=4 keeps it polling every 2 s.
//! - `/etc/slurm/plugstack.conf` may name SPANK plugins: the conf points
//!   PlugStackConfig at an empty file of its own.

use super::skip::{require_tool, skipped};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long the daemons get to come up and the node to show idle.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running one-node cluster; its daemons stop when it is dropped.
pub struct Cluster {
    dir: tempfile::TempDir,
    /// (name, child) of each daemon started, in start order.
    daemons: Vec<(&'static str, Child)>,
}

impl Cluster {
    /// Bring the cluster up and wait until its node is idle. None (after
    /// [`skipped`]) when a tool is missing or this is not root; panics with
    /// the daemons' logs when they start but the node never comes up.
    pub fn start() -> Option<Cluster> {
        for tool in [
            "munged",
            "mungekey",
            "slurmctld",
            "slurmd",
            "sbatch",
            "sinfo",
        ] {
            if !require_tool(tool) {
                return None;
            }
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skipped("root (slurmd and munged run as root here)");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("ghostbench-slurm-")
            .tempdir()
            .expect("temp dir");
        set_mode(dir.path(), 0o755);
        for sub in ["state", "spool", "log"] {
            std::fs::create_dir(dir.path().join(sub)).expect("cluster subdir");
        }
        let mut cluster = Cluster {
            dir,
            daemons: Vec::new(),
        };
        let d = cluster.dir.path().to_path_buf();

        let key = d.join("munge.key");
        must(
            Command::new("mungekey")
                .arg("--create")
                .arg("--keyfile")
                .arg(&key)
                .output(),
            "mungekey --create",
        );
        cluster.spawn(
            "munged",
            Command::new("munged")
                .arg("--foreground")
                .arg(format!("--socket={}", d.join("munge.sock").display()))
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--log-file={}", d.join("log/munged.log").display()))
                .arg(format!("--pid-file={}", d.join("munged.pid").display()))
                .arg(format!("--seed-file={}", d.join("munged.seed").display())),
        );
        cluster.wait_for("munged's socket", || d.join("munge.sock").exists());

        let conf = slurm_conf(&d);
        std::fs::write(d.join("slurm.conf"), conf).expect("write slurm.conf");
        std::fs::write(d.join("plugstack.conf"), "").expect("write plugstack.conf");
        let conf_path = d.join("slurm.conf");
        cluster.spawn(
            "slurmctld",
            Command::new("slurmctld")
                .arg("-D")
                .arg("-f")
                .arg(&conf_path),
        );
        cluster.spawn(
            "slurmd",
            Command::new("slurmd").arg("-D").arg("-f").arg(&conf_path),
        );
        cluster.wait_for("the node to be idle", || {
            Command::new("sinfo")
                .env("SLURM_CONF", &conf_path)
                .args(["--noheader", "--format=%T"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        Some(cluster)
    }

    /// The cluster's directory (conf, state, logs); jobs may write here too.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The node's CPUs, as slurmctld counts them.
    pub fn cpus(&self) -> usize {
        let out = self
            .command("sinfo")
            .args(["--noheader", "--format=%c"])
            .output()
            .expect("sinfo");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("sinfo --format=%c: {:?}", out))
    }

    /// The cluster's slurm.conf, for `SLURM_CONF`.
    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// A Slurm client command (`sbatch`, `sinfo`, `squeue`…) talking to this
    /// cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", self.conf());
        cmd
    }

    /// `sbatch --wait script` run in `cwd` (where the tasks start): submits
    /// and waits for every task to end. Panics (with the daemons' logs) when
    /// it takes longer than `timeout`; otherwise returns sbatch's output (its
    /// exit status is the highest of the tasks').
    pub fn sbatch_wait(&self, script: &Path, cwd: &Path, timeout: Duration) -> Output {
        let mut child = self
            .command("sbatch")
            .current_dir(cwd)
            .arg("--wait")
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sbatch");
        let deadline = Instant::now() + timeout;
        loop {
            if child.try_wait().expect("poll sbatch").is_some() {
                return child.wait_with_output().expect("sbatch output");
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = self.command("scancel").arg("--user=root").status();
                panic!(
                    "sbatch --wait {} took over {timeout:?}\n{}",
                    script.display(),
                    self.logs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The tail of each daemon's log, for failure messages.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        for name in ["munged", "slurmctld", "slurmd"] {
            let path = self.dir.path().join(format!("log/{name}.log"));
            let log = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = &lines[lines.len().saturating_sub(20)..];
            text.push_str(&format!("--- {name} log (last {} lines)\n", tail.len()));
            for line in tail {
                text.push_str(line);
                text.push('\n');
            }
        }
        text
    }

    fn spawn(&mut self, name: &'static str, cmd: &mut Command) {
        let out = std::fs::File::create(self.dir.path().join(format!("log/{name}.out")))
            .expect("daemon output file");
        let err = out.try_clone().expect("dup daemon output file");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        self.daemons.push((name, child));
    }

    /// Poll `ready` until true; panic with the logs when a daemon exits or
    /// the start timeout passes.
    fn wait_for(&mut self, what: &str, mut ready: impl FnMut() -> bool) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if ready() {
                return;
            }
            for (name, child) in &mut self.daemons {
                if let Ok(Some(status)) = child.try_wait() {
                    let name = *name;
                    let out =
                        std::fs::read_to_string(self.dir.path().join(format!("log/{name}.out")))
                            .unwrap_or_default();
                    panic!(
                        "{name} exited ({status}) waiting for {what}\n{out}\n{}",
                        self.logs()
                    );
                }
            }
            if Instant::now() > deadline {
                panic!("no {what} after {START_TIMEOUT:?}\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Cluster {
    /// SIGTERM to each daemon, newest first, by the pid we started; SIGKILL
    /// for one still running after 10 s.
    fn drop(&mut self) {
        while let Some((_, mut child)) = self.daemons.pop() {
            // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() > deadline => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        }
    }
}

/// The slurm.conf of a one-node cluster whose files all live in `dir`.
fn slurm_conf(dir: &Path) -> String {
    let node = text(must(Command::new("slurmd").arg("-C").output(), "slurmd -C"));
    // "NodeName=vm CPUs=2 Boards=1 … RealMemory=24105" then "UpTime=…".
    let node = node
        .lines()
        .find(|l| l.starts_with("NodeName="))
        .unwrap_or_else(|| panic!("slurmd -C printed no NodeName line: {node}"))
        .to_string();
    // slurmd -C names the node as slurmd will look itself up: the short host name.
    let host = node["NodeName=".len()..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    let (ctld_port, slurmd_port) = free_port_pair();
    let d = dir.display();
    format!(
        "ClusterName=ghostbench\n\
         SlurmctldHost={host}(127.0.0.1)\n\
         SlurmctldPort={ctld_port}\n\
         SlurmdPort={slurmd_port}\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         AuthType=auth/munge\n\
         CredType=cred/munge\n\
         AuthInfo=socket={d}/munge.sock\n\
         StateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd.pid\n\
         SlurmctldLogFile={d}/log/slurmctld.log\n\
         SlurmdLogFile={d}/log/slurmd.log\n\
         PlugStackConfig={d}/plugstack.conf\n\
         MailProg=/bin/true\n\
         ProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_CPU\n\
         MpiDefault=none\n\
         SwitchType=switch/none\n\
         JobCompType=jobcomp/none\n\
         AccountingStorageType=accounting_storage/none\n\
         JobAcctGatherType=jobacct_gather/none\n\
         ReturnToService=2\n\
         SchedulerType=sched/backfill\n\
         MinJobAge=4\n\
         {node} NodeAddr=127.0.0.1 State=UNKNOWN\n\
         PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP\n"
    )
}

/// Two TCP ports free right now (the kernel's choice for port 0). Another
/// process could take one before slurmctld binds it; the start would then
/// fail loudly, not hang.
fn free_port_pair() -> (u16, u16) {
    let a = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    let b = TcpListener::bind("127.0.0.1:0").expect("bind a second free port");
    let ports = (
        a.local_addr().expect("port").port(),
        b.local_addr().expect("port").port(),
    );
    drop((a, b));
    ports
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn must(out: std::io::Result<Output>, what: &str) -> Output {
    let out = out.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(out: Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
