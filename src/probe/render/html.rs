//! The `probe` page of `--html`: each probe's facts, table and finding, with its sweep drawn.

use super::finding::{finding, notes};
use crate::probe::misaligned::Op;
use crate::probe::tlb::Pages;
use crate::probe::{Details, ProbeReport};
use crate::report::escape::html as escape;
use crate::report::html::{figure, page, table};
use crate::report::svg;
use std::fmt::Write;

/// The `probe` page: each probe's finding, its sweep as a plot, and its notes.
pub fn probe(report: &ProbeReport) -> String {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<p class=\"note\">{} probes in {:.1} s{}.</p>",
        report.probes.len(),
        report.elapsed_s,
        if report.quick { " (--quick)" } else { "" }
    );
    for result in &report.probes {
        let kind = result.details.kind();
        let _ = writeln!(
            body,
            "<h2>{}</h2>\n<p><b>{:?}</b>: {}</p>",
            escape(kind.name()),
            result.status,
            escape(&finding(result))
        );
        if let Some((svg, caption)) = probe_plot(&result.details) {
            body.push_str(&figure(&svg, caption));
        }
        if let Details::Alloc(alloc) = &result.details {
            let rows: Vec<Vec<String>> = alloc
                .rows
                .iter()
                .map(|r| {
                    vec![
                        format!("{:?}", r.node),
                        r.node_bytes.to_string(),
                        r.next_misaligned.to_string(),
                        r.next_straddles_line.to_string(),
                        format!("{:.2}", r.total_ns_per_node),
                        format!("{:.2}", r.ratio_to_padded),
                    ]
                })
                .collect();
            body.push_str(&table(
                &[
                    "node",
                    "bytes",
                    "next misaligned",
                    "next straddles a line",
                    "ns per node",
                    "vs padded",
                ],
                &rows,
            ));
        }
        for note in notes(result) {
            let _ = writeln!(body, "<p class=\"note\">{}</p>", escape(&note));
        }
    }
    page("ghostbench probe", &body)
}

/// The sweep of one probe as (svg, caption); None for probes without a sweep.
fn probe_plot(details: &Details) -> Option<(String, &'static str)> {
    let by = |points: Vec<(f64, Option<f64>)>| -> Vec<(f64, f64)> {
        points
            .into_iter()
            .filter_map(|(x, y)| y.map(|y| (x, y)))
            .collect()
    };
    match details {
        Details::SplitLock(d) => {
            let size = |bytes: u32| {
                by(d.rows
                    .iter()
                    .filter(|r| r.size == bytes)
                    .map(|r| (f64::from(r.offset), r.ns_per_op))
                    .collect())
            };
            Some((
                svg::lines(
                    &[("4-byte lock add", size(4)), ("8-byte lock add", size(8))],
                    "offset in the 64-byte line",
                    "ns per locked add",
                ),
                "Offsets where the operand crosses into the next line are split locks.",
            ))
        }
        Details::Misaligned(d) => {
            let op = |want: Op, page: bool| {
                by(d.rows
                    .iter()
                    .filter(|r| r.op == want && r.crosses_page == page)
                    .map(|r| (f64::from(r.offset), r.ns_per_op))
                    .collect())
            };
            Some((
                svg::lines(
                    &[
                        ("load", op(Op::Load, false)),
                        ("store", op(Op::Store, false)),
                        ("load across a page", op(Op::Load, true)),
                        ("store across a page", op(Op::Store, true)),
                    ],
                    "offset of the 8-byte operand in its line",
                    "ns per operation",
                ),
                "Line-crossing offsets (57–63) pay for two lines; page-crossing ones more.",
            ))
        }
        Details::CodeAlign(d) => {
            let points = d
                .rows
                .iter()
                .map(|r| (f64::from(r.offset), r.ns_per_call))
                .collect();
            Some((
                svg::lines(
                    &[("median ns per call", points)],
                    "entry offset in the 64-byte line",
                    "ns per call",
                ),
                "The same function copied to each offset and called in a tight loop.",
            ))
        }
        Details::Tlb(d) => {
            let pages = |want: Pages| -> Vec<(f64, f64)> {
                d.rows
                    .iter()
                    .filter(|r| r.pages == want)
                    .map(|r| ((r.working_set_bytes as f64).log2(), r.ns_per_access))
                    .collect()
            };
            Some((
                svg::lines(
                    &[("4 KiB pages", pages(Pages::Small)), ("huge pages", pages(Pages::Huge))],
                    "working set (log2 bytes: 20 = 1 MiB, 30 = 1 GiB)",
                    "ns per dependent access",
                ),
                "A pointer chase over growing working sets: where 4 KiB pages leave the TLB's reach, huge pages keep going.",
            ))
        }
        Details::Alloc(_) | Details::Alias(_) => None,
    }
}
