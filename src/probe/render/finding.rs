//! The words under each probe's table: its one-line finding and its notes,
//! written from the facts the probe returned (details, status, failure,
//! notes). The terminal, Markdown, HTML and JSON reports all take them from
//! here, so they say the same thing.

use crate::probe::timing::{bytes, ranges};
use crate::probe::types::{Failure, Note};
use crate::probe::{alias, alloc, code_align, misaligned, split_lock, tlb, Details, ProbeResult};
use crate::report::units::value;
use crate::run::metric::Unit;

/// The one-line finding of a probe.
pub fn finding(result: &ProbeResult) -> String {
    if let Some(failure) = &result.failure {
        return match cause(failure) {
            Cause::NotMeasured(reason) => format!("not measured: {reason}"),
            Cause::Wrong(text) => text,
        };
    }
    match &result.details {
        Details::SplitLock(d) => split_lock_finding(d),
        Details::Misaligned(d) => misaligned_finding(d),
        Details::CodeAlign(d) => code_align_finding(d),
        Details::Tlb(d) => tlb_finding(d),
        Details::Alloc(d) => alloc_finding(d),
        Details::Alias(d) => alias_finding(d),
    }
}

/// A probe's notes, one line each; a failure that left the probe unmeasured
/// comes first, so the reason stands in the notes as well as in the finding.
pub fn notes(result: &ProbeResult) -> Vec<String> {
    let reason = result.failure.as_ref().and_then(|f| match cause(f) {
        Cause::NotMeasured(reason) => Some(reason),
        Cause::Wrong(_) => None,
    });
    reason
        .into_iter()
        .chain(result.notes.iter().map(note))
        .collect()
}

/// How a failure is told: as the reason nothing was measured, or as a
/// finding of its own (a wrong result, a refused allocation).
enum Cause {
    NotMeasured(String),
    Wrong(String),
}

fn cause(failure: &Failure) -> Cause {
    use Cause::{NotMeasured, Wrong};
    match failure {
        Failure::CannotStart { exe, error } => NotMeasured(format!("cannot start {exe}: {error}")),
        Failure::Overran {
            elapsed_s,
            budget_s,
        } => NotMeasured(format!(
            "killed after {elapsed_s:.1} s: it overran its time bound ({budget_s:.1} s)"
        )),
        Failure::CannotWait { error } => {
            NotMeasured(format!("cannot wait for the probe process: {error}"))
        }
        Failure::Interrupted => NotMeasured(crate::run::interrupt::cause().to_string()),
        Failure::Signal { signal } => NotMeasured(format!(
            "the probe process died of {}",
            signal_name(*signal)
        )),
        Failure::Exited { code, last_line } => NotMeasured(format!(
            "the probe process exited with exit status: {}: {last_line}",
            code.map_or_else(|| "unknown".to_string(), |c| c.to_string())
        )),
        Failure::WrongProbe { answered } => {
            NotMeasured(format!("the probe process answered for {answered} instead"))
        }
        Failure::Unreadable { error } => NotMeasured(format!("unreadable probe output: {error}")),
        Failure::MapFailed { error } => NotMeasured(format!("mmap failed: {error}")),
        Failure::NoExecutableMemory { error } => NotMeasured(format!(
            "no permission for executable memory: mprotect(PROT_EXEC) failed: {error} \
             (SELinux deny_execmem, PaX MPROTECT or a seccomp policy?)"
        )),
        Failure::NoPages => Wrong("could not allocate two pages".to_string()),
        Failure::NoArenas => Wrong("could not allocate the arenas".to_string()),
        Failure::WrongCopy {
            offset,
            got,
            expected,
        } => Wrong(format!(
            "the copy at offset {offset} returned {got}, expected {expected}"
        )),
        Failure::WrongSum { sum, expected } => {
            Wrong(format!("list walk summed {sum}, expected {expected}"))
        }
    }
}

fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGBUS => "SIGBUS",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL (out of memory?)",
        libc::SIGABRT => "SIGABRT",
        libc::SIGFPE => "SIGFPE",
        _ => "",
    };
    if name.is_empty() {
        format!("signal {signal}")
    } else {
        format!("{name} (signal {signal})")
    }
}

/// One note as a line.
pub fn note(note: &Note) -> String {
    match note {
        Note::StoppedAfterRounds { rounds } => format!("stopped after {rounds} rounds: time bound"),
        Note::InLineSweepStopped => {
            "stopped the in-line sweep early: half the time bound was spent".to_string()
        }
        Note::SplitLocksFatal => "split_lock_detect=fatal: the kernel kills split lockers with \
                                  SIGBUS, so no split lock was executed"
            .to_string(),
        Note::SplitLocksKilled => "split locks not run: the first one killed the probe with \
                                   SIGBUS (the kernel treats split locks as fatal here)"
            .to_string(),
        Note::SplitLockStalled { after_s } => format!(
            "split locks not timed: they had not finished {after_s:.1} s after the first one \
             began, when the probe was killed at its bound; a split lock stalls this machine \
             for longer than that (a hypervisor throttling bus locks does this), so here one \
             costs more than the whole bound; the in-line costs above were measured"
        ),
        Note::NoTransparentHugePages { enabled } => format!(
            "no transparent huge pages (transparent_hugepage/enabled: {}): only 4 KiB pages \
             measured",
            enabled.as_deref().unwrap_or("missing")
        ),
        Note::StoppedBeforeSize {
            bytes: size,
            budget_s,
        } => format!(
            "stopped before {}: the time bound ({budget_s:.1} s) would be exceeded",
            bytes(*size)
        ),
        Note::MapFailed { bytes: size, error } => {
            format!("mmap of {} failed: {error}", bytes(*size))
        }
        Note::NoHugePagesObtained => "madvise(MADV_HUGEPAGE) was accepted but no huge pages were \
                                      obtained (fragmented memory or defrag=never?)"
            .to_string(),
    }
}

fn ns(x: Option<f64>) -> String {
    value(x.unwrap_or(f64::NAN), Unit::Nanoseconds)
}

fn split_lock_finding(d: &split_lock::SplitLock) -> String {
    let crossing = format!(
        "crossing offsets {} (4 B), {} (8 B)",
        ranges(&d.crossing_offsets_4),
        ranges(&d.crossing_offsets_8)
    );
    match (d.split_ns, d.split_ratio) {
        (Some(split), Some(ratio)) => format!(
            "a split lock costs {} = {ratio:.0}× an aligned locked add ({}); {crossing}; \
             kernel: {}",
            ns(Some(split)),
            ns(d.aligned_ns),
            d.kernel.mode
        ),
        _ => format!(
            "split locks not measured; an aligned locked add costs {}; {crossing}; kernel: {}",
            ns(d.aligned_ns),
            d.kernel.mode
        ),
    }
}

fn misaligned_finding(d: &misaligned::Misaligned) -> String {
    let ratio = |s: &misaligned::Summary, x: Option<f64>| {
        x.zip(s.aligned_ns)
            .map_or_else(|| "n/a".to_string(), |(v, a)| format!("{:.1}×", v / a))
    };
    let (load, store) = (&d.load, &d.store);
    format!(
        "loads: line-crossing {}, page-crossing {} an aligned load; stores: line-crossing {}, \
         page-crossing {}; misaligned inside a line: loads {}, stores {}",
        ratio(load, load.line_crossing_ns),
        ratio(load, load.page_crossing_ns),
        ratio(store, store.line_crossing_ns),
        ratio(store, store.page_crossing_ns),
        ratio(load, load.misaligned_in_line_ns),
        ratio(store, store.misaligned_in_line_ns),
    )
}

fn code_align_finding(d: &code_align::CodeAlign) -> String {
    let row = |offset: Option<u32>| offset.and_then(|o| d.rows.iter().find(|r| r.offset == o));
    let (Some(fast), Some(slow), Some(spread), Some(fraction)) = (
        row(d.fastest_offset),
        row(d.slowest_offset),
        d.spread_ns,
        d.spread_fraction,
    ) else {
        return "no measurement".to_string();
    };
    format!(
        "code offset moves a call by {spread:.2} ns ({:.1}%): fastest at offset {} ({:.2} ns), \
         slowest at {} ({:.2} ns){}",
        100.0 * fraction,
        fast.offset,
        fast.ns_per_call,
        slow.offset,
        slow.ns_per_call,
        if d.spread_significant {
            "; the CIs do not overlap, so placement matters here"
        } else {
            "; the CIs overlap, so this spread may be noise"
        }
    )
}

fn tlb_finding(d: &tlb::Tlb) -> String {
    let largest = d.largest_measured_bytes;
    let at = |pages: tlb::Pages| {
        d.rows
            .iter()
            .find(|r| r.working_set_bytes == largest && r.pages == pages)
            .map(|r| r.ns_per_access)
    };
    match (at(tlb::Pages::Small), at(tlb::Pages::Huge)) {
        (Some(s), Some(h)) => format!(
            "at {} a random access costs {:.1} ns on 4 KiB pages and {:.1} ns on huge pages \
             ({:.2}×): page walks add ~{:.1} ns; THP: {}",
            bytes(largest),
            s,
            h,
            s / h,
            s - h,
            d.thp.enabled.as_deref().unwrap_or("n/a")
        ),
        (Some(s), None) => format!(
            "at {} a random access costs {:.1} ns on 4 KiB pages; huge pages not available",
            bytes(largest),
            s
        ),
        _ => "no measurement".to_string(),
    }
}

/// Whether this CPU pays for 4K aliasing, in one sentence (also the
/// layout report's words for the heap source).
pub fn alias_finding(d: &alias::Alias) -> String {
    match (d.aliased_ns, d.unaliased_ns, d.ratio) {
        (Some(a), Some(u), Some(r)) if r >= alias::PENALTY_RATIO => format!(
            "this CPU pays for 4K aliasing: a load 4 KiB after a recent store takes {r:.2}× as long ({a:.2} vs {u:.2} ns per store and load), so heap buffers a multiple of 4 KiB apart can be slower"
        ),
        (Some(a), Some(u), Some(r)) => format!(
            "this CPU shows no 4K-aliasing penalty: a load 4 KiB after a recent store takes {r:.2}× as long ({a:.2} vs {u:.2} ns per store and load), under the {:.2}× that would count",
            alias::PENALTY_RATIO
        ),
        _ => "no measurement".to_string(),
    }
}

fn alloc_finding(d: &alloc::Alloc) -> String {
    let node = |kind: alloc::Node| d.rows.iter().find(|r| r.node == kind);
    let (Some(packed), Some(padded)) = (node(alloc::Node::Packed), node(alloc::Node::Padded))
    else {
        return "no measurement".to_string();
    };
    format!(
        "a list of packed nodes (next at offset {}, {} B) takes {:.2}× as long as {}-byte padded \
         nodes in a {}-byte aligned arena: {:.2} vs {:.2} ns per node ({} of {} packed pointers \
         straddle a line)",
        packed.next_offset,
        packed.node_bytes,
        packed.ratio_to_padded,
        padded.node_bytes,
        padded.arena_align,
        packed.total_ns_per_node,
        padded.total_ns_per_node,
        packed.next_straddles_line,
        d.nodes
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::types::Status;

    fn result(failure: Option<Failure>, notes: Vec<Note>, details: Details) -> ProbeResult {
        ProbeResult {
            status: Status::Ok,
            failure,
            notes,
            elapsed_s: 0.1,
            budget_s: 0.5,
            details,
        }
    }

    #[test]
    fn an_unmeasured_probe_says_why_in_its_finding_and_its_notes() {
        let r = result(
            Some(Failure::NoExecutableMemory {
                error: "Permission denied (os error 13)".into(),
            }),
            vec![],
            Details::CodeAlign(Default::default()),
        );
        assert_eq!(
            finding(&r),
            "not measured: no permission for executable memory: mprotect(PROT_EXEC) failed: \
             Permission denied (os error 13) (SELinux deny_execmem, PaX MPROTECT or a seccomp \
             policy?)"
        );
        assert_eq!(notes(&r).len(), 1);
        assert!(finding(&r).ends_with(&notes(&r)[0]));

        let r = result(
            Some(Failure::Signal {
                signal: libc::SIGSEGV,
            }),
            vec![],
            Details::Tlb(Default::default()),
        );
        assert_eq!(
            finding(&r),
            format!(
                "not measured: the probe process died of SIGSEGV (signal {})",
                libc::SIGSEGV
            )
        );
    }

    #[test]
    fn a_wrong_result_is_the_finding_and_keeps_the_notes() {
        let r = result(
            Some(Failure::WrongSum {
                sum: 3,
                expected: 6,
            }),
            vec![Note::StoppedAfterRounds { rounds: 2 }],
            Details::Alloc(Default::default()),
        );
        assert_eq!(finding(&r), "list walk summed 3, expected 6");
        assert_eq!(notes(&r), ["stopped after 2 rounds: time bound"]);
    }

    #[test]
    fn split_lock_finding_names_costs_crossings_and_kernel_mode() {
        let d = split_lock::SplitLock {
            kernel: crate::probe::kernel::SplitLockHandling {
                mode: "warn".into(),
                ..Default::default()
            },
            crossing_offsets_4: vec![61, 62, 63],
            crossing_offsets_8: (57..64).collect(),
            aligned_ns: Some(20.0),
            split_ns: Some(2400.0),
            split_ratio: Some(120.0),
            ..Default::default()
        };
        let r = result(None, vec![], Details::SplitLock(d.clone()));
        let text = finding(&r);
        assert!(text.starts_with("a split lock costs "), "{text}");
        assert!(text.contains("= 120× an aligned locked add"), "{text}");
        assert!(
            text.ends_with("crossing offsets 61–63 (4 B), 57–63 (8 B); kernel: warn"),
            "{text}"
        );
        let unmeasured = split_lock::SplitLock {
            split_ns: None,
            split_ratio: None,
            ..d
        };
        let text = finding(&result(None, vec![], Details::SplitLock(unmeasured)));
        assert!(text.starts_with("split locks not measured; "), "{text}");
    }

    #[test]
    fn notes_are_worded_from_their_facts() {
        assert_eq!(
            note(&Note::StoppedBeforeSize {
                bytes: 256 << 20,
                budget_s: 0.5
            }),
            "stopped before 256 MiB: the time bound (0.5 s) would be exceeded"
        );
        assert_eq!(
            note(&Note::NoTransparentHugePages { enabled: None }),
            "no transparent huge pages (transparent_hugepage/enabled: missing): only 4 KiB pages \
             measured"
        );
    }
}
