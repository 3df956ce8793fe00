//! What the kernel does about split locks and huge pages, read from /proc and
//! /sys: the facts the split-lock and tlb probes print before their timings.
//!
//! A split lock's price is set as much by the kernel as by the hardware:
//! with `split_lock_detect=warn` and `split_lock_mitigate=1` every split lock
//! traps and the task sleeps ~10 ms; under `fatal` it gets SIGBUS; on a CPU
//! with neither `split_lock_detect` nor `bus_lock_detect` the kernel never
//! sees it and the cost is the bare bus lock. Missing files become `None`.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The kernel's split-lock handling.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitLockHandling {
    /// `split_lock_detect=` on the kernel command line, if given.
    pub cmdline_split_lock_detect: Option<String>,
    /// Content of /proc/sys/kernel/split_lock_mitigate.
    pub split_lock_mitigate: Option<String>,
    /// The `split_lock_detect` CPU flag (the CPU can trap before the lock).
    pub cpu_split_lock_detect: bool,
    /// The `bus_lock_detect` CPU flag (the CPU reports after the lock).
    pub cpu_bus_lock_detect: bool,
    /// The effective mode: off, warn, fatal, ratelimit:N, or "undetected".
    pub mode: String,
    /// True when a split lock kills the process (SIGBUS).
    pub fatal: bool,
    /// One sentence on what a split lock costs beyond the hardware.
    pub meaning: String,
}

/// Read the split-lock handling of this machine.
pub fn split_lock_handling() -> SplitLockHandling {
    split_lock_handling_from(Path::new("/"))
}

/// [`split_lock_handling`] with /proc resolved under `root` (tests).
pub fn split_lock_handling_from(root: &Path) -> SplitLockHandling {
    let read = |p: &str| std::fs::read_to_string(root.join(p)).ok();
    let cmdline = read("proc/cmdline").unwrap_or_default();
    let flags = read("proc/cpuinfo")
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("flags"))
                .map(|l| l.split(':').nth(1).unwrap_or("").to_string())
        })
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    let cmdline_value = cmdline
        .split_whitespace()
        .find_map(|a| a.strip_prefix("split_lock_detect="))
        .map(str::to_string);
    let mitigate = read("proc/sys/kernel/split_lock_mitigate").map(|s| s.trim().to_string());
    let (sld, bld) = (has("split_lock_detect"), has("bus_lock_detect"));
    let mode = match (&cmdline_value, sld || bld) {
        (_, false) => "undetected".to_string(),
        (Some(v), true) => v.clone(),
        (None, true) => "warn".to_string(),
    };
    let mitigated = mitigate.as_deref() == Some("1");
    let fatal = mode == "fatal" && sld;
    let meaning = match mode.as_str() {
        "undetected" => "the CPU reports neither split_lock_detect nor bus_lock_detect, so the \
                         kernel never sees a split lock: its cost is the hardware bus lock alone"
            .to_string(),
        "off" => "detection is off: a split lock costs the hardware bus lock alone".to_string(),
        "fatal" if sld => "a split lock kills the process with SIGBUS".to_string(),
        "fatal" => {
            "the CPU can only report bus locks after the fact: the process gets SIGBUS".to_string()
        }
        "warn" if sld && mitigated => "each split lock traps, is logged, and the task sleeps \
                                       ~10 ms (split_lock_mitigate=1)"
            .to_string(),
        "warn" if sld => "each split lock traps and is logged (once per task)".to_string(),
        "warn" => "each bus lock raises a debug trap after the fact and is logged".to_string(),
        other => format!("bus locks are rate-limited ({other})"),
    };
    SplitLockHandling {
        cmdline_split_lock_detect: cmdline_value,
        split_lock_mitigate: mitigate,
        cpu_split_lock_detect: sld,
        cpu_bus_lock_detect: bld,
        mode,
        fatal,
        meaning,
    }
}

/// Transparent huge pages as sysfs describes them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thp {
    /// The bracketed choice of transparent_hugepage/enabled: always, madvise, never.
    pub enabled: Option<String>,
    /// The bracketed choice of transparent_hugepage/defrag.
    pub defrag: Option<String>,
    /// True when `madvise(MADV_HUGEPAGE)` can give huge pages (always or madvise).
    pub available: bool,
}

pub fn thp() -> Thp {
    thp_from(Path::new("/"))
}

pub fn thp_from(root: &Path) -> Thp {
    let read = |p: &str| {
        std::fs::read_to_string(root.join("sys/kernel/mm/transparent_hugepage").join(p))
            .ok()
            .and_then(|t| bracketed(&t))
    };
    let enabled = read("enabled");
    let available = matches!(enabled.as_deref(), Some("always" | "madvise"));
    Thp {
        enabled,
        defrag: read("defrag"),
        available,
    }
}

/// "[madvise]" in "always [madvise] never" → "madvise".
fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    Some(text[start..start + len].to_string()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn fatal_on_a_cpu_with_the_flag() {
        let t = tree(&[
            ("proc/cmdline", "ro split_lock_detect=fatal quiet\n"),
            ("proc/cpuinfo", "flags\t: fpu split_lock_detect\n"),
            ("proc/sys/kernel/split_lock_mitigate", "1\n"),
        ]);
        let h = split_lock_handling_from(t.path());
        assert_eq!(h.mode, "fatal");
        assert!(h.fatal);
        assert_eq!(h.split_lock_mitigate.as_deref(), Some("1"));
    }

    #[test]
    fn default_warn_with_mitigation_sleeps() {
        let t = tree(&[
            ("proc/cmdline", "ro\n"),
            (
                "proc/cpuinfo",
                "flags\t: fpu split_lock_detect bus_lock_detect\n",
            ),
            ("proc/sys/kernel/split_lock_mitigate", "1\n"),
        ]);
        let h = split_lock_handling_from(t.path());
        assert_eq!(h.mode, "warn");
        assert!(!h.fatal);
        assert!(h.meaning.contains("10 ms"), "{}", h.meaning);
    }

    #[test]
    fn no_flags_means_undetected_and_empty_root_is_fine() {
        let t = tree(&[("proc/cpuinfo", "flags\t: fpu sse2\n")]);
        let h = split_lock_handling_from(t.path());
        assert_eq!(h.mode, "undetected");
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            split_lock_handling_from(empty.path()).split_lock_mitigate,
            None
        );
        assert!(!thp_from(empty.path()).available);
    }

    #[test]
    fn thp_modes() {
        let t = tree(&[
            (
                "sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never\n",
            ),
            (
                "sys/kernel/mm/transparent_hugepage/defrag",
                "always defer [never]\n",
            ),
        ]);
        let thp = thp_from(t.path());
        assert_eq!(thp.enabled.as_deref(), Some("madvise"));
        assert_eq!(thp.defrag.as_deref(), Some("never"));
        assert!(thp.available);
    }
}
