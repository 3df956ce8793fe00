//! The machine-load findings on a report of fixed numbers: a busy machine
//! and a CPU the host slowed are named in the notes, every UNKNOWN's hint and
//! the JSON, in the same words.

use super::tests::report;
use super::*;
use crate::stats::verdict::Verdict;
use serde_json::Value;

#[test]
fn a_busy_machine_is_named_in_the_notes_the_hint_and_the_json() {
    let mut report = report();
    assert!(findings::busy_machine(&report).is_none());
    // Load 4.8 and 5.2 after the rounds, on 2 CPUs: other work averaged 4.0
    // beyond the benchmark's own 1, more than half the CPUs.
    report.load = crate::layout::MachineLoad {
        samples: vec![4.8, 5.2],
        cpus: 2,
        speed: Vec::new(),
    };
    let busy = findings::busy_machine(&report).unwrap();
    assert!(
        busy.starts_with(
            "the machine was busy during the runs: load average 5.0 (up to 5.2) on 2 CPUs"
        ),
        "{busy}"
    );
    assert!(prose::notes(&report).contains(&busy));
    let unknown = report
        .matrix
        .iter()
        .find_map(|r| {
            r.comparison
                .as_ref()
                .filter(|c| c.verdict == Verdict::Unknown)
        })
        .unwrap();
    let hint = prose::comparison_hint(&report, unknown).unwrap();
    assert!(
        hint.contains("the machine was busy (load average 5.0 on 2 CPUs)"),
        "{hint}"
    );
    let json: Value = crate::report::json::written(&json::document(&report));
    assert_eq!(json["load"]["busy"], true);
    assert_eq!(json["load"]["mean"], 5.0);
    // One process on a quiet 2-CPU machine is not busy.
    report.load.samples = vec![1.1, 1.6];
    assert!(findings::busy_machine(&report).is_none());
}

#[test]
fn a_cpu_the_host_slowed_is_named_with_what_pin_cannot_do() {
    let mut report = report();
    let unknown = report
        .matrix
        .iter()
        .find_map(|r| {
            r.comparison
                .as_ref()
                .filter(|c| c.verdict == Verdict::Unknown)
        })
        .unwrap()
        .clone();
    // Ten sentinel samples, best 2.0 ns: 4 of 10 over 2.2 (1.1×), the
    // slowest 3.0 (1.50×); sorted 2.0 2.0 2.0 2.0 2.1 2.1 2.3 2.4 2.8 3.0,
    // median (2.1 + 2.1) / 2 = 2.1, 1.05×.
    let speed = vec![2.0, 2.3, 2.0, 2.1, 3.0, 2.0, 2.4, 2.0, 2.8, 2.1];
    // Not busy (load 1.2 on 2 CPUs), but the CPU itself was slowed.
    report.load = crate::layout::MachineLoad {
        samples: vec![1.2, 1.2],
        cpus: 2,
        speed: speed.clone(),
    };
    let note = findings::busy_machine(&report).unwrap();
    assert!(
        note.starts_with(
            "the machine was not busy (load average 1.2 on 2 CPUs), but a register-only loop"
        ) && note.contains("after 40% of the 10 runs (median 1.05×, up to 1.50×)")
            && note.contains("--pin cannot remove"),
        "{note}"
    );
    assert!(prose::notes(&report).contains(&note));
    let hint = prose::comparison_hint(&report, &unknown).unwrap();
    assert!(
        hint.contains("the CPU itself ran slower at times although this machine was not busy")
            && hint.contains("up to 1.50×"),
        "{hint}"
    );
    let json: Value = crate::report::json::written(&json::document(&report));
    assert_eq!(json["load"]["cpu_speed"]["slowed"], true);
    assert_eq!(json["load"]["cpu_speed"]["best_ns"], 2.0);
    assert_eq!(json["load"]["cpu_speed"]["max_ratio"], 1.5);
    assert_eq!(json["load"]["cpu_speed"]["share_slowed"], 0.4);
    assert_eq!(
        json["load"]["cpu_speed"]["samples_ns"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
    // Busy as well: the busy hint no longer promises that --pin helps.
    report.load.samples = vec![4.8, 5.2];
    let hint = prose::comparison_hint(&report, &unknown).unwrap();
    assert!(
        hint.contains(
            "the machine was busy (load average 5.0 on 2 CPUs) and slowed the CPU itself"
        ) && hint.contains("--pin would not"),
        "{hint}"
    );
    let note = findings::busy_machine(&report).unwrap();
    assert!(
        note.contains("more rounds to decide; a register-only loop"),
        "{note}"
    );
    // A steady CPU on a quiet machine: nothing to say, and the JSON says
    // it was measured and not slowed.
    report.load.samples = vec![1.2, 1.2];
    report.load.speed = vec![2.0, 2.02, 2.0, 2.01, 2.0, 2.6, 2.0, 2.03];
    assert!(findings::busy_machine(&report).is_none());
    let json: Value = crate::report::json::written(&json::document(&report));
    assert_eq!(json["load"]["cpu_speed"]["slowed"], false);
}
