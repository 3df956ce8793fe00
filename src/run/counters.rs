//! Hardware performance counters for one benchmarked command, via
//! `perf_event_open` (crate `perf-event2`, imported as `perf_event`).
//!
//! This module owns three things: deciding which counters this machine can
//! give us at all ([`availability`]), attaching counters to a freshly forked
//! child *before* it execs ([`attach`]), and reading them back, scaled for
//! multiplexing, once the child has exited ([`ChildCounters::read`]).
//!
//! It does not spawn anything itself. The runner's launcher (`run::spawn`)
//! forks the child, keeps it blocked on a gate pipe while [`attach`] runs,
//! and then releases it; the tests here start their children the same way. Because the counters are opened with
//! `enable_on_exec`, nothing the child does before `execve` is counted, and
//! because they are opened with `inherit`, everything the command forks is.
//!
//! Most virtual machines have no PMU. There the kernel refuses every hardware
//! event, [`availability`] returns [`Availability::Unavailable`] with one short
//! reason, and the report says "hardware counters unavailable: <reason>" once.

use std::io;

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware};
use perf_event::{Builder, Counter};

/// One hardware counter that `--counters` can report.
///
/// The set is deliberately small: the events that explain a layout effect
/// (front-end misses, TLB reach, branch prediction) next to the two that
/// every report needs (cycles and instructions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CounterKind {
    Cycles,
    Instructions,
    BranchMisses,
    CacheMisses,
    L1iMisses,
    DtlbMisses,
    ItlbMisses,
}

impl CounterKind {
    /// Every counter, in the order reports list them.
    pub const ALL: [CounterKind; 7] = [
        CounterKind::Cycles,
        CounterKind::Instructions,
        CounterKind::BranchMisses,
        CounterKind::CacheMisses,
        CounterKind::L1iMisses,
        CounterKind::DtlbMisses,
        CounterKind::ItlbMisses,
    ];

    /// The name `perf stat` uses for the same event, so users can
    /// cross-check a number with the tool they already know.
    pub fn name(self) -> &'static str {
        match self {
            CounterKind::Cycles => "cycles",
            CounterKind::Instructions => "instructions",
            CounterKind::BranchMisses => "branch-misses",
            CounterKind::CacheMisses => "cache-misses",
            CounterKind::L1iMisses => "L1i-misses",
            CounterKind::DtlbMisses => "dTLB-misses",
            CounterKind::ItlbMisses => "iTLB-misses",
        }
    }

    /// A builder for this event with our common settings (user space only,
    /// no hypervisor, disabled, total times in the read format).
    ///
    /// Kernel and hypervisor are excluded because `perf_event_paranoid=2`,
    /// the default on most distributions, forbids counting them for
    /// unprivileged users, and the benchmarked code is user code anyway.
    fn builder(self) -> Builder<'static> {
        match self {
            CounterKind::Cycles => Builder::new(Hardware::CPU_CYCLES),
            CounterKind::Instructions => Builder::new(Hardware::INSTRUCTIONS),
            CounterKind::BranchMisses => Builder::new(Hardware::BRANCH_MISSES),
            CounterKind::CacheMisses => Builder::new(Hardware::CACHE_MISSES),
            CounterKind::L1iMisses => Builder::new(read_miss(CacheId::L1I)),
            CounterKind::DtlbMisses => Builder::new(read_miss(CacheId::DTLB)),
            CounterKind::ItlbMisses => Builder::new(read_miss(CacheId::ITLB)),
        }
    }
}

/// `perf`'s `L1-icache-load-misses`, `dTLB-load-misses`, `iTLB-load-misses`
/// are all the "read / miss" cell of the generic cache event table.
fn read_miss(which: CacheId) -> Cache {
    Cache {
        which,
        operation: CacheOp::READ,
        result: CacheResult::MISS,
    }
}

/// What this machine can count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// The counters that opened, in [`CounterKind::ALL`] order. May be a
    /// subset: many PMUs have cycles and instructions but no iTLB event.
    Available(Vec<CounterKind>),
    /// No counter opened. The string is one short phrase for the report,
    /// e.g. "no PMU (cycles: not supported)".
    Unavailable(String),
}

/// Try each counter on the current process; those that open are available.
///
/// Opening (not enabling) a counter on ourselves is the cheapest honest
/// probe: it goes through the same permission and PMU checks as opening it
/// on a child, and it needs no child. The reason is one short phrase such as
/// "no PMU (cycles: not supported)", "perf_event_paranoid=3 forbids it" or
/// "permission denied".
pub fn availability() -> Availability {
    let mut available = Vec::new();
    let mut first_error: Option<(CounterKind, io::Error)> = None;
    for kind in CounterKind::ALL {
        match kind.builder().observe_self().build() {
            Ok(_counter) => available.push(kind),
            Err(e) => {
                if first_error.is_none() {
                    first_error = Some((kind, e));
                }
            }
        }
    }
    if !available.is_empty() {
        return Availability::Available(available);
    }
    match first_error {
        Some((kind, e)) => Availability::Unavailable(reason(kind, &e, read_paranoid())),
        // Unreachable with a non-empty ALL, but an answer beats a panic.
        None => Availability::Unavailable("no counters requested".to_string()),
    }
}

/// `/proc/sys/kernel/perf_event_paranoid`, if readable.
fn read_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Turn a `perf_event_open` failure into the short phrase the report shows.
///
/// The kernel's errno is terse and overloaded, so this maps the common cases
/// to what the user can act on: a missing PMU (nothing to do but use
/// `--simulate`), paranoid level 3 (a Debian/Android patch that blocks all
/// unprivileged use), or a plain permission problem (sysctl or seccomp).
fn reason(kind: CounterKind, e: &io::Error, paranoid: Option<i32>) -> String {
    let name = kind.name();
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            format!("no PMU ({name}: not supported)")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => match paranoid {
            Some(p) if p >= 3 => format!("perf_event_paranoid={p} forbids it"),
            Some(p) => format!("permission denied (perf_event_paranoid={p})"),
            None => "permission denied".to_string(),
        },
        Some(libc::ENOSYS) => "perf_event_open is not supported by this kernel".to_string(),
        _ => format!("{name}: {e}"),
    }
}

/// Counters attached to one child process. Dropping it closes them.
#[derive(Debug)]
pub struct ChildCounters {
    counters: Vec<(CounterKind, Counter)>,
}

/// Open the given counters for an already-spawned child that has NOT exec'd
/// yet (the runner keeps it waiting on a pipe), with `enable_on_exec` and
/// `inherit`, so the whole command including its children is counted from
/// exec on.
///
/// Fails if any requested counter does not open; the error names it. Pass
/// the list from [`availability`] so that only a real problem (the child
/// died, a permission changed) fails here. An empty list gives an empty,
/// valid [`ChildCounters`].
pub fn attach(pid: i32, kinds: &[CounterKind]) -> io::Result<ChildCounters> {
    let mut counters = Vec::with_capacity(kinds.len());
    for &kind in kinds {
        let counter = open_on_child(pid, kind.builder(), true).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("opening {} for pid {pid}: {e}", kind.name()),
            )
        })?;
        counters.push((kind, counter));
    }
    Ok(ChildCounters { counters })
}

impl ChildCounters {
    /// After the child exited: values scaled for multiplexing
    /// (`count × time_enabled / time_running`). Counters that never ran
    /// (time_running = 0, e.g. the PMU was busy all the time) or that fail
    /// to read are omitted rather than reported as a misleading zero.
    pub fn read(self) -> Vec<(CounterKind, u64)> {
        self.counters
            .into_iter()
            .filter_map(|(kind, mut counter)| scaled_value(&mut counter).map(|v| (kind, v)))
            .collect()
    }
}

/// Build any event as a counter on a not-yet-exec'd child.
///
/// Generic over the event so the counting path can be tested with software
/// events on machines (like most VMs) without a PMU. `inherit` is a
/// parameter only so a test can show what inheritance adds.
fn open_on_child(pid: i32, mut builder: Builder<'_>, inherit: bool) -> io::Result<Counter> {
    // pid 0 means "ourselves" and -1 "every process" to the kernel; neither
    // is a child, and counting ourselves by mistake would be silently wrong.
    if pid <= 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid child pid {pid}"),
        ));
    }
    builder
        .observe_pid(pid)
        .any_cpu()
        .enabled(false)
        .enable_on_exec(true)
        .inherit(inherit)
        .build()
}

/// [`open_on_child`] for an arbitrary event, for tests with software events.
#[cfg(test)]
fn open_event_on_child<E: perf_event::events::Event>(
    pid: i32,
    event: E,
    inherit: bool,
) -> io::Result<Counter> {
    open_on_child(pid, Builder::new(event), inherit)
}

/// Read one counter and scale it for multiplexing; `None` if it never ran.
fn scaled_value(counter: &mut Counter) -> Option<u64> {
    let data = counter.read_full().ok()?;
    let count = data.count();
    match (data.time_enabled(), data.time_running()) {
        (Some(enabled), Some(running)) => scale(count, enabled.as_nanos(), running.as_nanos()),
        // Our read format always asks for both times; if the kernel did not
        // give them, there was no multiplexing information to apply.
        _ => Some(count),
    }
}

/// `count × enabled / running` without overflow, saturating at `u64::MAX`.
fn scale(count: u64, enabled_ns: u128, running_ns: u128) -> Option<u64> {
    if running_ns == 0 {
        return None;
    }
    if enabled_ns <= running_ns {
        return Some(count);
    }
    let scaled = u128::from(count).saturating_mul(enabled_ns) / running_ns;
    Some(u64::try_from(scaled).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::capture::{Capture, Keep};
    use crate::run::spawn::{spawn, SpawnRequest};
    use perf_event::events::Software;
    use std::time::Duration;

    /// A shell that forks a busy grandchild and only waits for it itself.
    /// `; true` stops the outer shell from exec'ing the inner one, so the
    /// busy work really happens in a separate, inherited process. It is
    /// started the way the runner starts a run with `--counters`: held
    /// before exec while `attach` gets its pid. Returns what `attach`
    /// returned and the run's wall time.
    fn run_busy_grandchild<T>(iterations: u32, mut attach: impl FnMut(i32) -> T) -> (T, Duration) {
        let argv = vec![
            "sh".to_string(),
            "-c".to_string(),
            format!("sh -c 'i=0; while [ $i -lt {iterations} ]; do i=$((i+1)); done'; true"),
        ];
        let program =
            crate::run::command::resolve_program("sh", std::env::var_os("PATH")).expect("sh");
        let mut attached = None;
        let mut hook = |pid: i32| {
            attached = Some(attach(pid));
            Ok(())
        };
        let outcome = spawn(
            &SpawnRequest {
                program: &program,
                argv: &argv,
                extra_env: &[],
                pin: None,
                no_aslr: false,
                timeout: None,
                poll: false,
                stdout: Keep::Tail(1024),
                cwd: None,
            },
            &mut Capture::new(None).expect("capture"),
            Some(&mut hook),
        )
        .expect("spawn held child");
        assert!(outcome.exit.success(), "child failed: {:?}", outcome.exit);
        (attached.expect("the hook ran"), outcome.wall)
    }

    #[test]
    fn names_match_perf() {
        let names: Vec<_> = CounterKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            [
                "cycles",
                "instructions",
                "branch-misses",
                "cache-misses",
                "L1i-misses",
                "dTLB-misses",
                "iTLB-misses"
            ]
        );
    }

    #[test]
    fn availability_is_a_list_or_a_reason() {
        match availability() {
            Availability::Available(kinds) => {
                eprintln!("counters available: {kinds:?}");
                assert!(!kinds.is_empty());
            }
            Availability::Unavailable(reason) => {
                eprintln!("hardware counters unavailable: {reason}");
                assert!(!reason.trim().is_empty());
                // On a machine without a PMU (this project's VM), say so.
                if reason.starts_with("no PMU") {
                    assert!(reason.contains("cycles"));
                }
            }
        }
    }

    #[test]
    fn reasons_are_short_and_specific() {
        let k = CounterKind::Cycles;
        let err = |n| io::Error::from_raw_os_error(n);
        assert_eq!(
            reason(k, &err(libc::ENOENT), Some(2)),
            "no PMU (cycles: not supported)"
        );
        assert_eq!(
            reason(k, &err(libc::EOPNOTSUPP), Some(2)),
            "no PMU (cycles: not supported)"
        );
        assert_eq!(
            reason(k, &err(libc::EACCES), Some(3)),
            "perf_event_paranoid=3 forbids it"
        );
        assert_eq!(
            reason(k, &err(libc::EPERM), Some(2)),
            "permission denied (perf_event_paranoid=2)"
        );
        assert_eq!(reason(k, &err(libc::EPERM), None), "permission denied");
    }

    #[test]
    fn scaling_handles_multiplexing_and_edge_cases() {
        assert_eq!(scale(100, 10, 10), Some(100));
        assert_eq!(scale(100, 20, 10), Some(200));
        assert_eq!(scale(100, 10, 0), None);
        assert_eq!(scale(u64::MAX, 1_000_000, 1), Some(u64::MAX));
    }

    #[test]
    fn attach_to_bad_pids_fails_cleanly() {
        assert!(attach(0, &CounterKind::ALL).is_err());
        assert!(attach(-1, &CounterKind::ALL).is_err());
        assert!(open_event_on_child(0, Software::TASK_CLOCK, true).is_err());
        // No such process (pid_max is at most 2^22).
        assert!(open_event_on_child(i32::MAX, Software::TASK_CLOCK, true).is_err());
        // An empty request is valid and reads as nothing.
        assert!(attach(i32::MAX, &[])
            .expect("empty attach")
            .read()
            .is_empty());
    }

    #[test]
    fn attach_hardware_to_held_child_works_or_fails_cleanly() {
        let (attached, _) = run_busy_grandchild(1000, |pid| attach(pid, &CounterKind::ALL));
        match (attached, availability()) {
            (Ok(counters), _) => {
                // The busy loop ran between exec and exit: what was counted
                // is the kinds asked for, and work was counted.
                let values = counters.read();
                assert!(!values.is_empty(), "counters opened but none read");
                for (kind, value) in &values {
                    assert!(
                        CounterKind::ALL.contains(kind),
                        "{kind:?} was not asked for"
                    );
                    if matches!(kind, CounterKind::Cycles | CounterKind::Instructions) {
                        assert!(*value > 1000, "{kind:?} counted only {value}");
                    }
                }
            }
            (Err(e), Availability::Unavailable(_)) => {
                assert!(e.to_string().contains("cycles"), "{e}");
            }
            (Err(e), Availability::Available(kinds)) => {
                // Some kinds may be missing on this PMU; the listed ones must open and read.
                let (ok, _) = run_busy_grandchild(1000, |pid| attach(pid, &kinds));
                let values = ok.expect("available counters open").read();
                assert!(
                    !values.is_empty(),
                    "all-kinds attach failed ({e}) and the available ones read nothing"
                );
                assert!(values.iter().all(|(kind, _)| kinds.contains(kind)));
            }
        }
    }

    /// The counting path (open on a held child, enable on exec, inherit,
    /// read after exit) proven with a software event, which every Linux
    /// machine has.
    #[test]
    fn software_event_counts_whole_command_from_exec() {
        let ((inherited, own_only), wall) = run_busy_grandchild(100_000, |pid| {
            (
                open_event_on_child(pid, Software::TASK_CLOCK, true),
                open_event_on_child(pid, Software::TASK_CLOCK, false),
            )
        });
        let (mut inherited, mut own_only) = match (inherited, own_only) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => {
                crate::test_skip::skipped(&format!(
                    "perf software events (task-clock: {:?} / {:?})",
                    a.err(),
                    b.err()
                ));
                return;
            }
        };
        let total = scaled_value(&mut inherited).expect("task-clock ran");
        let outer = scaled_value(&mut own_only).unwrap_or(0);
        eprintln!(
            "task-clock: whole command {:.1} ms, outer shell alone {:.1} ms, wall {:.1} ms",
            total as f64 / 1e6,
            outer as f64 / 1e6,
            wall.as_secs_f64() * 1e3
        );
        // The busy loop runs in the grandchild, so only an inherited counter
        // sees it; the outer shell just forks and waits.
        assert!(total >= 10_000_000, "task-clock {total} ns too small");
        assert!(
            total > 3 * outer,
            "inherit added nothing: {total} vs {outer}"
        );
        // Counting starts at exec and stops at exit: never more CPU time
        // than the run's wall time (which starts before the fork) on one core each (two processes
        // never run at once here, so 1× wall plus slack is a hard bound).
        assert!(
            (total as u128) < wall.as_nanos() + 50_000_000,
            "task-clock {total} ns exceeds wall {wall:?}"
        );
    }
}
