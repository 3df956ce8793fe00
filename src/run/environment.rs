//! Environment capture: the machine facts stored with every result
//! ([`Environment`], [`capture`]) and the warnings and summary lines the
//! terminal report prints from them.
//!
//! A benchmark number means little without the conditions it was taken
//! under: a `powersave` governor, turbo, a busy machine or a hypervisor can
//! each move timings by more than the effect being measured, and the
//! split-lock settings decide whether a misaligned atomic costs 100 ns or
//! 10 ms. Everything is read directly from /proc and /sys; anything missing
//! or unreadable becomes `None`, never an error, because capture must not
//! stop a benchmark.

use std::path::Path;

/// Machine and invocation facts for one result. `None` means "could not be
/// read here", which the report prints as "n/a".
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Environment {
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// CPUs this process may use (affinity and cgroup quota included), as
    /// `std::thread::available_parallelism` reports.
    pub logical_cpus: usize,
    /// Kernel release and version string, like `uname -rv`.
    pub kernel: Option<String>,
    /// cpufreq scaling governor; several values joined with "," if CPUs differ.
    pub governor: Option<String>,
    /// "on"/"off", from intel_pstate `no_turbo` or cpufreq `boost`.
    pub turbo: Option<String>,
    /// 1, 5 and 15 minute load averages.
    pub load_average: Option<[f64; 3]>,
    /// `randomize_va_space` with its meaning, e.g. "2 (full)".
    pub aslr: Option<String>,
    /// Content of /proc/sys/kernel/split_lock_mitigate ("1": a split lock
    /// also costs a trap and a ~10 ms sleep).
    pub split_lock_mitigate: Option<String>,
    /// `split_lock_detect=` from the kernel command line, or whether the CPU
    /// flag is present (then the kernel default applies).
    pub split_lock_detect: Option<String>,
    pub perf_event_paranoid: Option<i32>,
    /// The bracketed choice in transparent_hugepage/enabled, e.g. "madvise".
    pub transparent_hugepage: Option<String>,
    /// "hypervisor" when the CPU flag says so, with the vendor when CPUID
    /// gives it, e.g. "hypervisor (KVM)". `None` on bare metal.
    pub virtualization: Option<String>,
    pub tool_version: String,
    pub command_line: Vec<String>,
    /// Seconds since the Unix epoch when captured (0 if the clock is before 1970).
    pub timestamp_unix: u64,
}

/// Capture the environment now. Never fails: missing files give `None`.
pub fn capture(tool_version: &str, command_line: &[String]) -> Environment {
    capture_from(Path::new("/"), tool_version, command_line)
}

/// [`capture`] with every /proc and /sys path resolved under `root`, so
/// tests can feed a fake tree. The CPUID vendor probe and the CPU count are
/// always live.
fn capture_from(root: &Path, tool_version: &str, command_line: &[String]) -> Environment {
    let read = |p: &str| read_trimmed(&root.join(p));
    let cpuinfo = read("proc/cpuinfo");
    let cmdline = read("proc/cmdline");
    let flags = cpuinfo.as_deref().and_then(cpu_flags);

    let kernel = match (
        read("proc/sys/kernel/osrelease"),
        read("proc/sys/kernel/version"),
    ) {
        (Some(r), Some(v)) => Some(format!("{r} {v}")),
        (r, v) => r.or(v),
    };
    let logical_cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .ok()
        .or_else(|| cpuinfo.as_deref().map(count_processors).filter(|&n| n > 0))
        .unwrap_or(1);

    Environment {
        cpu_model: cpuinfo.as_deref().and_then(cpu_model),
        logical_cpus,
        kernel,
        governor: governor(root),
        turbo: turbo(root),
        load_average: read("proc/loadavg").as_deref().and_then(parse_loadavg),
        aslr: read("proc/sys/kernel/randomize_va_space").map(|v| describe_aslr(&v)),
        split_lock_mitigate: read("proc/sys/kernel/split_lock_mitigate"),
        split_lock_detect: split_lock_detect(cmdline.as_deref(), flags.as_deref()),
        perf_event_paranoid: read("proc/sys/kernel/perf_event_paranoid")
            .and_then(|v| v.parse().ok()),
        transparent_hugepage: read("sys/kernel/mm/transparent_hugepage/enabled")
            .as_deref()
            .and_then(bracketed),
        virtualization: flags.as_deref().and_then(|f| {
            has_flag(f, "hypervisor").then(|| match hypervisor_vendor() {
                Some(v) => format!("hypervisor ({v})"),
                None => "hypervisor".to_string(),
            })
        }),
        tool_version: tool_version.to_string(),
        command_line: command_line.to_vec(),
        timestamp_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    }
}

impl Environment {
    /// Conditions that hurt benchmarking, one short sentence each: a 1-minute
    /// load average above 1 per logical CPU (other work competes for the
    /// cores), a readable governor that is not "performance" (frequency
    /// ramps add noise), and turbo on (frequency depends on temperature and
    /// on what the other cores do).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some([one, _, _]) = self.load_average {
            let cpus = self.logical_cpus.max(1) as f64;
            if one / cpus > 1.0 {
                w.push(format!(
                    "load average {one:.2} is above 1 per CPU ({} logical): other work competes with the benchmark",
                    self.logical_cpus
                ));
            }
        }
        if let Some(g) = &self.governor {
            if g != "performance" {
                w.push(format!(
                    "CPU frequency governor is \"{g}\", not \"performance\": frequency changes add noise"
                ));
            }
        }
        if self.turbo.as_deref() == Some("on") {
            w.push(
                "turbo boost is on: clock speed depends on temperature and load on other cores"
                    .to_string(),
            );
        }
        w
    }

    /// Short human lines for the terminal report, e.g.
    /// "cpu: AMD EPYC (2 logical)", "governor: n/a",
    /// "split-lock mitigation: 1".
    pub fn lines(&self) -> Vec<String> {
        fn or_na(v: &Option<String>) -> &str {
            v.as_deref().unwrap_or("n/a")
        }
        let load = match self.load_average {
            Some([a, b, c]) => format!("{a:.2} {b:.2} {c:.2}"),
            None => "n/a".to_string(),
        };
        let paranoid = self
            .perf_event_paranoid
            .map_or_else(|| "n/a".to_string(), |p| p.to_string());
        vec![
            format!(
                "cpu: {} ({} logical)",
                or_na(&self.cpu_model),
                self.logical_cpus
            ),
            format!("kernel: {}", or_na(&self.kernel)),
            format!("virtualization: {}", or_na(&self.virtualization)),
            format!("governor: {}", or_na(&self.governor)),
            format!("turbo: {}", or_na(&self.turbo)),
            format!("load average: {load}"),
            format!("ASLR: {}", or_na(&self.aslr)),
            format!(
                "split-lock mitigation: {}",
                or_na(&self.split_lock_mitigate)
            ),
            format!("split-lock detect: {}", or_na(&self.split_lock_detect)),
            format!("perf_event_paranoid: {paranoid}"),
            format!(
                "transparent hugepages: {}",
                or_na(&self.transparent_hugepage)
            ),
            format!("ghostbench: {}", self.tool_version),
        ]
    }
}

/// File content without surrounding whitespace; `None` if unreadable or empty.
fn read_trimmed(path: &Path) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&text).trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// The value of the first `key : value` line of /proc/cpuinfo with that key.
fn cpuinfo_field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key)
            .then(|| v.trim())
            .filter(|v| !v.is_empty())
    })
}

/// x86 says "model name"; other architectures use other keys.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Processor", "cpu model", "Hardware", "cpu"]
        .iter()
        .find_map(|k| cpuinfo_field(cpuinfo, k))
        .map(str::to_string)
}

fn cpu_flags(cpuinfo: &str) -> Option<String> {
    cpuinfo_field(cpuinfo, "flags")
        .or_else(|| cpuinfo_field(cpuinfo, "Features"))
        .map(str::to_string)
}

fn has_flag(flags: &str, flag: &str) -> bool {
    flags.split_whitespace().any(|f| f == flag)
}

fn count_processors(cpuinfo: &str) -> usize {
    cpuinfo
        .lines()
        .filter(|l| {
            l.split_once(':')
                .is_some_and(|(k, _)| k.trim() == "processor")
        })
        .count()
}

/// Distinct `scaling_governor` values over all CPUs, in CPU order.
fn governor(root: &Path) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    for dir in cpu_dirs(root) {
        if let Some(g) = read_trimmed(&dir.join("cpufreq/scaling_governor")) {
            if !found.contains(&g) {
                found.push(g);
            }
        }
    }
    (!found.is_empty()).then(|| found.join(","))
}

/// `sys/devices/system/cpu/cpuN` directories, sorted by N.
fn cpu_dirs(root: &Path) -> Vec<std::path::PathBuf> {
    let base = root.join("sys/devices/system/cpu");
    let Ok(entries) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut cpus: Vec<(u32, std::path::PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let n = name.to_str()?.strip_prefix("cpu")?.parse::<u32>().ok()?;
            Some((n, e.path()))
        })
        .collect();
    cpus.sort_by_key(|(n, _)| *n);
    cpus.into_iter().map(|(_, p)| p).collect()
}

/// intel_pstate's `no_turbo` is inverted (1 = off); acpi-cpufreq and
/// amd-pstate expose `boost` (1 = on), globally or per policy.
fn turbo(root: &Path) -> Option<String> {
    let cpu = root.join("sys/devices/system/cpu");
    let on_off = |on: bool| if on { "on" } else { "off" }.to_string();
    if let Some(v) = read_trimmed(&cpu.join("intel_pstate/no_turbo")) {
        return match v.as_str() {
            "0" => Some(on_off(true)),
            "1" => Some(on_off(false)),
            _ => None,
        };
    }
    for path in [cpu.join("cpufreq/boost"), cpu.join("cpufreq/policy0/boost")] {
        if let Some(v) = read_trimmed(&path) {
            return match v.as_str() {
                "1" => Some(on_off(true)),
                "0" => Some(on_off(false)),
                _ => None,
            };
        }
    }
    None
}

/// The 1-minute load average now (`/proc/loadavg`), for sampling during runs;
/// `None` where it cannot be read.
pub fn load_now() -> Option<f64> {
    read_trimmed(Path::new("/proc/loadavg"))
        .as_deref()
        .and_then(parse_loadavg)
        .map(|[one, _, _]| one)
}

fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|v| v.parse::<f64>().ok());
    let a = it.next()??;
    let b = it.next()??;
    let c = it.next()??;
    [a, b, c]
        .iter()
        .all(|v| v.is_finite() && *v >= 0.0)
        .then_some([a, b, c])
}

fn describe_aslr(value: &str) -> String {
    let meaning = match value {
        "0" => "off",
        "1" => "partial: stack, mmap, vdso",
        "2" => "full",
        _ => "unknown",
    };
    format!("{value} ({meaning})")
}

/// The kernel command line wins; otherwise the CPU flag says whether the
/// kernel's default (`warn`) can apply at all.
fn split_lock_detect(cmdline: Option<&str>, flags: Option<&str>) -> Option<String> {
    if let Some(v) = cmdline.and_then(|c| {
        c.split_whitespace()
            .find_map(|arg| arg.strip_prefix("split_lock_detect="))
    }) {
        return Some(format!("{v} (kernel command line)"));
    }
    let flags = flags?;
    Some(if has_flag(flags, "split_lock_detect") {
        "supported by CPU (kernel default: warn)".to_string()
    } else {
        "not reported by CPU".to_string()
    })
}

/// "[madvise]" in "always [madvise] never" → "madvise".
fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    Some(text[start..start + len].to_string()).filter(|s| !s.is_empty())
}

/// The hypervisor vendor from CPUID leaf 0x4000_0000 (e.g. "KVMKVMKVM" →
/// "KVM"). Only called when the `hypervisor` flag is set: on bare metal
/// that leaf returns unrelated data.
#[cfg(target_arch = "x86_64")]
fn hypervisor_vendor() -> Option<String> {
    // SAFETY: CPUID exists on every x86-64 CPU and has no side effects.
    #[allow(unused_unsafe)]
    let r = unsafe { std::arch::x86_64::__cpuid(0x4000_0000) };
    let mut bytes = Vec::with_capacity(12);
    for reg in [r.ebx, r.ecx, r.edx] {
        bytes.extend_from_slice(&reg.to_le_bytes());
    }
    let raw = String::from_utf8_lossy(&bytes)
        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .to_string();
    let known = [
        ("KVMKVMKVM", "KVM"),
        ("Microsoft Hv", "Hyper-V"),
        ("VMwareVMware", "VMware"),
        ("XenVMMXenVMM", "Xen"),
        ("TCGTCGTCGTCG", "QEMU TCG"),
        ("bhyve bhyve", "bhyve"),
        ("ACRNACRNACRN", "ACRN"),
        ("VBoxVBoxVBox", "VirtualBox"),
        ("prl hyperv", "Parallels"),
        ("QNXQVMBSQG", "QNX"),
    ];
    if let Some((_, name)) = known.iter().find(|(sig, _)| raw == *sig) {
        return Some(name.to_string());
    }
    let printable = !raw.is_empty() && raw.chars().all(|c| c.is_ascii_graphic() || c == ' ');
    printable.then_some(raw)
}

#[cfg(not(target_arch = "x86_64"))]
fn hypervisor_vendor() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd() -> Vec<String> {
        vec![
            "ghostbench".into(),
            "compare".into(),
            "a".into(),
            "b".into(),
        ]
    }

    #[test]
    fn capture_on_this_machine() {
        let env = capture("0.1.0-test", &cmd());
        for line in env.lines() {
            eprintln!("{line}");
        }
        for w in env.warnings() {
            eprintln!("warning: {w}");
        }
        if Path::new("/proc/cpuinfo").exists() {
            assert!(env.cpu_model.is_some());
        }
        let expected = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        assert_eq!(env.logical_cpus, expected);
        match std::fs::read_to_string("/proc/sys/kernel/split_lock_mitigate") {
            Ok(text) => assert_eq!(env.split_lock_mitigate.as_deref(), Some(text.trim())),
            Err(_) => assert_eq!(env.split_lock_mitigate, None),
        }
        assert_eq!(env.tool_version, "0.1.0-test");
        assert_eq!(env.command_line, cmd());
        assert!(env.timestamp_unix > 1_600_000_000);
        let json = serde_json::to_string(&env).unwrap();
        assert!(json.contains("\"logical_cpus\""));
    }

    #[test]
    fn empty_root_gives_nones_not_errors() {
        let dir = tempfile::tempdir().unwrap();
        let env = capture_from(dir.path(), "v", &[]);
        assert_eq!(env.cpu_model, None);
        assert_eq!(env.kernel, None);
        assert_eq!(env.governor, None);
        assert_eq!(env.turbo, None);
        assert_eq!(env.load_average, None);
        assert_eq!(env.aslr, None);
        assert_eq!(env.split_lock_mitigate, None);
        assert_eq!(env.split_lock_detect, None);
        assert_eq!(env.perf_event_paranoid, None);
        assert_eq!(env.transparent_hugepage, None);
        assert_eq!(env.virtualization, None);
        assert!(env.logical_cpus >= 1);
        assert!(env.warnings().is_empty());
        assert!(env.lines().iter().any(|l| l == "governor: n/a"));
    }

    #[test]
    fn fake_tree_is_read_and_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let put = |p: &str, text: &str| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        put(
            "proc/cpuinfo",
            "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6248\nflags\t\t: fpu sse2 split_lock_detect\n\n\
             processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6248\n",
        );
        put("proc/cmdline", "quiet split_lock_detect=fatal ro\n");
        put("proc/sys/kernel/osrelease", "6.1.0\n");
        put("proc/sys/kernel/version", "#1 SMP\n");
        put("proc/sys/kernel/randomize_va_space", "0\n");
        put("proc/sys/kernel/split_lock_mitigate", "0\n");
        put("proc/sys/kernel/perf_event_paranoid", "-1\n");
        put("proc/loadavg", "1000.50 0.40 0.30 2/300 1234\n");
        put(
            "sys/kernel/mm/transparent_hugepage/enabled",
            "[always] madvise never\n",
        );
        put(
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "powersave\n",
        );
        put(
            "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "performance\n",
        );
        put("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");

        let env = capture_from(root, "v", &[]);
        assert_eq!(env.cpu_model.as_deref(), Some("Intel(R) Xeon(R) Gold 6248"));
        assert_eq!(env.kernel.as_deref(), Some("6.1.0 #1 SMP"));
        assert_eq!(env.governor.as_deref(), Some("powersave,performance"));
        assert_eq!(env.turbo.as_deref(), Some("on"));
        assert_eq!(env.load_average, Some([1000.5, 0.4, 0.3]));
        assert_eq!(env.aslr.as_deref(), Some("0 (off)"));
        assert_eq!(env.split_lock_mitigate.as_deref(), Some("0"));
        assert_eq!(
            env.split_lock_detect.as_deref(),
            Some("fatal (kernel command line)")
        );
        assert_eq!(env.perf_event_paranoid, Some(-1));
        assert_eq!(env.transparent_hugepage.as_deref(), Some("always"));
        assert_eq!(env.virtualization, None);
        let w = env.warnings();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("load average"));
        assert!(w[1].contains("powersave"));
        assert!(w[2].contains("turbo"));
    }

    #[test]
    fn small_parsers() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("always madvise never"), None);
        assert_eq!(bracketed("]["), None);
        assert_eq!(parse_loadavg("0.1 0.2"), None);
        assert_eq!(parse_loadavg("a b c"), None);
        assert_eq!(describe_aslr("2"), "2 (full)");
        assert_eq!(
            split_lock_detect(None, Some("fpu")).as_deref(),
            Some("not reported by CPU")
        );
        assert_eq!(split_lock_detect(Some("quiet"), None), None);
    }
}
