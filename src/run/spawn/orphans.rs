//! Processes a run leaves behind, found and killed after it ends.
//!
//! A run's process group is killed when the run ends, but a daemon that
//! calls `setsid` (or `setpgid`) leaves the group, and a background process
//! of a shell outlives it. So ghostbench makes itself the *child subreaper*
//! of everything it starts (`PR_SET_CHILD_SUBREAPER`, Linux ≥ 3.4): a
//! process whose parent dies is re-parented to ghostbench instead of init,
//! whatever session or group it moved to. After a run, a child of
//! ghostbench that ghostbench did not start itself is a leftover: it and
//! everything under it is killed (SIGKILL) and reaped, and counted.
//!
//! Children ghostbench started through [`super::spawn`] are registered here
//! while they live (under a lock held across the fork, so a sweep never
//! sees one unregistered), and a sweep runs only when none is running (a
//! build's compiler daemon is not killed while a sibling build uses it; the
//! builds' sweep comes after the last). Children started another way
//! (`std::process::Command`, e.g. `git`) stay in ghostbench's own process
//! group and are never touched.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

/// Held (shared) by a spawn from before the fork until the child is
/// registered; a sweep holds it exclusively.
static SPAWNING: RwLock<()> = RwLock::new(());
/// The children started through `spawn` and not yet reaped.
static STARTED: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// How long a sweep keeps killing (a process in uninterruptible sleep may
/// not die at once; it is then counted as a survivor).
const SWEEP_LIMIT: Duration = Duration::from_secs(2);

/// What a sweep found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Leftovers {
    /// Processes left running, killed.
    pub killed: usize,
    /// Processes left running that were still alive when the sweep gave up.
    pub survived: usize,
}

impl Leftovers {
    pub fn add(&mut self, other: Leftovers) {
        self.killed += other.killed;
        self.survived += other.survived;
    }
}

/// Make this process the subreaper of its descendants. Idempotent; a
/// kernel without it leaves leftovers that left their group to init.
pub(super) fn become_subreaper() {
    // SAFETY: prctl with an integer argument changes only this process's flag.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

/// Hold while starting a child and registering it.
pub(super) fn spawning() -> RwLockReadGuard<'static, ()> {
    SPAWNING.read().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn register(pid: i32) {
    STARTED.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
}

pub(super) fn unregister(pid: i32) {
    let mut started = STARTED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = started.iter().position(|&p| p == pid) {
        started.swap_remove(i);
    }
}

/// Kill and reap every leftover (see the module header), unless a child
/// ghostbench started is still running (then nothing is done: the sweep
/// after the last one finds them).
pub fn sweep() -> Leftovers {
    let _exclusive = SPAWNING.write().unwrap_or_else(|e| e.into_inner());
    if !STARTED.lock().unwrap_or_else(|e| e.into_inner()).is_empty() {
        return Leftovers::default();
    }
    // SAFETY: getpid and getpgrp cannot fail.
    let (me, own_group) = unsafe { (libc::getpid(), libc::getpgrp()) };
    let mut killed: HashSet<i32> = HashSet::new();
    let mut alive: HashSet<i32> = HashSet::new();
    let deadline = Instant::now() + SWEEP_LIMIT;
    loop {
        let orphans: Vec<i32> = own_children(me)
            .into_iter()
            .filter(|&pid| stat(pid).is_some_and(|s| s.group != own_group))
            .collect();
        if orphans.is_empty() {
            alive.clear();
            break;
        }
        let table = process_table();
        alive.clear();
        for &orphan in &orphans {
            for pid in subtree(orphan, &table) {
                if table.get(&pid).is_some_and(|s| !s.zombie) {
                    // SAFETY: SIGKILL to a descendant of this process.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    killed.insert(pid);
                    alive.insert(pid);
                }
            }
        }
        for &orphan in &orphans {
            let mut status = 0;
            // SAFETY: reaping our own (re-parented) child, without blocking.
            unsafe { libc::waitpid(orphan, &mut status, libc::WNOHANG) };
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Leftovers {
        killed: killed.len() - alive.len().min(killed.len()),
        survived: alive.len(),
    }
}

/// One process's facts from `/proc/PID/stat`.
#[derive(Debug, Clone, Copy)]
struct Stat {
    parent: i32,
    group: i32,
    zombie: bool,
}

fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After "(comm)", which may itself hold spaces and parentheses: state, ppid, pgrp.
    let mut fields = text.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some(Stat {
        parent,
        group,
        zombie: state == "Z" || state == "X",
    })
}

/// This process's children: from every thread's `children` file (cheap),
/// or a scan of /proc where the kernel has no such file.
fn own_children(me: i32) -> Vec<i32> {
    let mut children = Vec::new();
    let mut found_file = false;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                found_file = true;
                children.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<i32>().ok()),
                );
            }
        }
    }
    if !found_file {
        children = process_table()
            .into_iter()
            .filter(|(_, s)| s.parent == me)
            .map(|(pid, _)| pid)
            .collect();
    }
    children.sort_unstable();
    children.dedup();
    children
}

fn process_table() -> HashMap<i32, Stat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, stat(pid)?)))
        .collect()
}

/// `root` and every process under it.
fn subtree(root: i32, table: &HashMap<i32, Stat>) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, s) in table {
        children.entry(s.parent).or_default().push(pid);
    }
    let mut found = vec![root];
    let mut next = 0;
    while next < found.len() {
        if let Some(under) = children.get(&found[next]) {
            found.extend(under);
        }
        next += 1;
    }
    found
}
