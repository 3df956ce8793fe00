//! Terminal (and Markdown) rendering of a `probe` report: per probe, its
//! facts, a table, the one-line finding and any notes (worded by `finding`).

use super::finding::{finding, notes};
use crate::probe::timing::{bytes, ranges};
use crate::probe::{
    alias, alloc, code_align, misaligned, split_lock, tlb, Details, ProbeReport, ProbeResult,
    Status,
};
use crate::report::style::paint;
use crate::report::table::Table;

fn ns(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => {
            if v >= 10_000.0 {
                format!("{:.1} µs", v / 1000.0)
            } else {
                format!("{v:.2} ns")
            }
        }
        _ => "n/a".to_string(),
    }
}

fn times(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.2}×"),
        _ => "n/a".to_string(),
    }
}

fn median(xs: Vec<f64>) -> Option<f64> {
    let m = crate::stats::descriptive::median(&xs);
    m.is_finite().then_some(m)
}

/// The whole report.
pub fn render(report: &ProbeReport, color: bool) -> String {
    let env = &report.environment;
    let mut out = format!(
        "ghostbench probe{}: {} ({} logical CPUs), kernel {}{}\n",
        if report.quick { " --quick" } else { "" },
        env.cpu_model.as_deref().unwrap_or("unknown CPU"),
        env.logical_cpus,
        env.kernel.as_deref().unwrap_or("n/a"),
        env.virtualization
            .as_deref()
            .map(|v| format!(", {v}"))
            .unwrap_or_default(),
    );
    for probe in &report.probes {
        out.push('\n');
        out.push_str(&render_probe(probe, color));
    }
    out.push_str(&format!("\nall probes: {:.2} s\n", report.elapsed_s));
    out
}

/// One probe: header, facts, table, finding, notes.
pub fn render_probe(probe: &ProbeResult, color: bool) -> String {
    let status = match probe.status {
        Status::Ok => String::new(),
        Status::Partial => format!(" {}", paint("[partial]", "33", color)),
        Status::Unavailable => format!(" {}", paint("[unavailable]", "33", color)),
        Status::Failed => format!(" {}", paint("[failed]", "31", color)),
    };
    let mut out = format!(
        "{}{status}  ({:.2} s of {:.1} s)\n",
        paint(&format!("== {} ==", probe.kind()), "1", color),
        probe.elapsed_s,
        probe.budget_s
    );
    let (facts, table) = match &probe.details {
        Details::SplitLock(d) => split_lock_table(d),
        Details::Misaligned(d) => misaligned_table(d),
        Details::CodeAlign(d) => code_align_table(d),
        Details::Tlb(d) => tlb_table(d),
        Details::Alloc(d) => alloc_table(d),
        Details::Alias(d) => alias_table(d),
    };
    for fact in facts {
        out.push_str(&fact);
        out.push('\n');
    }
    if let Some(table) = table {
        out.push_str(&table.render());
    }
    out.push_str(&format!(
        "finding: {}\n",
        paint(&finding(probe), "1", color)
    ));
    for note in notes(probe) {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

type Rendered = (Vec<String>, Option<Table>);
/// A named class of misaligned-probe rows.
type RowClass<'a> = (&'a str, &'a dyn Fn(&misaligned::Row) -> bool);

fn split_lock_table(d: &split_lock::SplitLock) -> Rendered {
    let k = &d.kernel;
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let facts = vec![
        format!(
            "split_lock_detect (kernel command line): {}",
            k.cmdline_split_lock_detect.as_deref().unwrap_or("not set")
        ),
        format!(
            "split_lock_mitigate: {}",
            k.split_lock_mitigate
                .as_deref()
                .unwrap_or("n/a (no /proc/sys/kernel/split_lock_mitigate)")
        ),
        format!(
            "CPU flags: split_lock_detect {}, bus_lock_detect {}",
            yes_no(k.cpu_split_lock_detect),
            yes_no(k.cpu_bus_lock_detect)
        ),
        format!("handling: {}: {}", k.mode, k.meaning),
        format!(
            "split locks executed: {}{}",
            d.split_lock_ops,
            d.calibration_ns
                .map(|c| format!(" (the first alone: {})", ns(Some(c))))
                .unwrap_or_default()
        ),
    ];
    if d.rows.is_empty() {
        return (facts, None);
    }
    let mut t = Table::new(&["operand", "offsets", "kind", "ns/op", "× aligned", "ops"]);
    for size in [4u32, 8] {
        let rows: Vec<&split_lock::Row> = d.rows.iter().filter(|r| r.size == size).collect();
        let group = |kind: &str, pick: &dyn Fn(&split_lock::Row) -> bool, t: &mut Table| {
            let chosen: Vec<&&split_lock::Row> = rows.iter().filter(|r| pick(r)).collect();
            if chosen.is_empty() {
                return;
            }
            let offsets: Vec<u32> = chosen.iter().map(|r| r.offset).collect();
            let offsets_text = if offsets.len() > 8 {
                format!("{} offsets", offsets.len())
            } else {
                ranges(&offsets)
            };
            t.row(vec![
                format!("{size} B"),
                offsets_text,
                kind.to_string(),
                ns(median(chosen.iter().filter_map(|r| r.ns_per_op).collect())),
                times(median(
                    chosen.iter().filter_map(|r| r.ratio_to_aligned).collect(),
                )),
                chosen.iter().map(|r| r.ops).sum::<u64>().to_string(),
            ]);
        };
        group("aligned", &|r| r.aligned, &mut t);
        group(
            "misaligned, one line",
            &|r| !r.aligned && !r.crosses_line,
            &mut t,
        );
        for row in rows.iter().filter(|r| r.crosses_line) {
            t.row(vec![
                format!("{size} B"),
                row.offset.to_string(),
                "split lock".to_string(),
                ns(row.ns_per_op),
                times(row.ratio_to_aligned),
                row.ops.to_string(),
            ]);
        }
    }
    (facts, Some(t))
}

fn misaligned_table(d: &misaligned::Misaligned) -> Rendered {
    if d.rows.is_empty() {
        return (vec![], None);
    }
    let facts = vec![format!(
        "{}-byte loads (dependent chain: latency) and stores (same address: throughput)",
        d.operand_bytes
    )];
    let mut t = Table::new(&["op", "offsets in line", "kind", "ns/op", "× aligned"]);
    for op in [misaligned::Op::Load, misaligned::Op::Store] {
        let op_name = match op {
            misaligned::Op::Load => "load",
            misaligned::Op::Store => "store",
        };
        let classes: [RowClass; 4] = [
            ("aligned", &|r| r.offset % 8 == 0),
            ("misaligned, one line", &|r| {
                r.offset % 8 != 0 && !r.crosses_line
            }),
            ("line-crossing", &|r| r.crosses_line && !r.crosses_page),
            ("page-crossing", &|r| r.crosses_page),
        ];
        for (kind, pick) in classes {
            let chosen: Vec<&misaligned::Row> =
                d.rows.iter().filter(|r| r.op == op && pick(r)).collect();
            if chosen.is_empty() {
                continue;
            }
            let offsets: Vec<u32> = chosen.iter().map(|r| r.offset).collect();
            t.row(vec![
                op_name.to_string(),
                if offsets.len() > 8 {
                    format!("{} offsets", offsets.len())
                } else {
                    ranges(&offsets)
                },
                kind.to_string(),
                ns(median(chosen.iter().filter_map(|r| r.ns_per_op).collect())),
                times(median(
                    chosen.iter().filter_map(|r| r.ratio_to_aligned).collect(),
                )),
            ]);
        }
    }
    (facts, Some(t))
}

fn code_align_table(d: &code_align::CodeAlign) -> Rendered {
    if d.rows.is_empty() {
        return (vec![], None);
    }
    let facts = vec![format!(
        "a {}-byte function (a {}-iteration loop) copied to offsets 0–63, {} calls per sample",
        d.function_bytes, d.loop_iterations_per_call, d.calls_per_sample
    )];
    let fastest = d
        .rows
        .iter()
        .map(|r| r.ns_per_call)
        .fold(f64::INFINITY, f64::min);
    let mut t = Table::new(&[
        "offset",
        "mod 32",
        "loop crosses",
        "ns/call",
        "95% CI",
        "× fastest",
        "n",
    ]);
    for r in &d.rows {
        let crosses = match (r.loop_crosses_line, r.loop_crosses_window) {
            (true, _) => "line",
            (false, true) => "32B window",
            _ => "",
        };
        t.row(vec![
            r.offset.to_string(),
            r.window_offset.to_string(),
            crosses.to_string(),
            format!("{:.3}", r.ns_per_call),
            format!("[{:.3}, {:.3}]", r.ci_low, r.ci_high),
            format!("{:.3}", r.ns_per_call / fastest),
            r.samples.to_string(),
        ]);
    }
    (facts, Some(t))
}

fn tlb_table(d: &tlb::Tlb) -> Rendered {
    let facts = vec![format!(
        "transparent huge pages: enabled {}, defrag {}",
        d.thp.enabled.as_deref().unwrap_or("n/a"),
        d.thp.defrag.as_deref().unwrap_or("n/a")
    )];
    if d.rows.is_empty() {
        return (facts, None);
    }
    let mut t = Table::new(&[
        "working set",
        "4 KiB pages",
        "huge pages",
        "4K / huge",
        "huge obtained",
    ]);
    let mut sizes: Vec<u64> = d.rows.iter().map(|r| r.working_set_bytes).collect();
    sizes.dedup();
    for size in sizes {
        let find = |p: tlb::Pages| {
            d.rows
                .iter()
                .find(|r| r.working_set_bytes == size && r.pages == p)
        };
        let (small, huge) = (find(tlb::Pages::Small), find(tlb::Pages::Huge));
        t.row(vec![
            bytes(size),
            ns(small.map(|r| r.ns_per_access)),
            ns(huge.map(|r| r.ns_per_access)),
            times(
                small
                    .zip(huge)
                    .map(|(s, h)| s.ns_per_access / h.ns_per_access),
            ),
            huge.and_then(|h| h.huge_bytes)
                .map_or_else(|| "n/a".to_string(), bytes),
        ]);
    }
    (facts, Some(t))
}

fn alloc_table(d: &alloc::Alloc) -> Rendered {
    if d.rows.is_empty() {
        return (vec![], None);
    }
    let mut t = Table::new(&[
        "node",
        "bytes",
        "next at",
        "misaligned next",
        "straddling next",
        "create ns/node",
        "walk ns/node",
        "total",
        "× padded",
    ]);
    for r in &d.rows {
        t.row(vec![
            match r.node {
                alloc::Node::Packed => "packed".to_string(),
                alloc::Node::Padded => format!("padded, {}-aligned arena", r.arena_align),
            },
            r.node_bytes.to_string(),
            r.next_offset.to_string(),
            r.next_misaligned.to_string(),
            r.next_straddles_line.to_string(),
            format!("{:.2}", r.create_ns_per_node),
            format!("{:.2}", r.walk_ns_per_node),
            format!("{:.2}", r.total_ns_per_node),
            format!("{:.2}", r.ratio_to_padded),
        ]);
    }
    (vec![format!("{} list nodes", d.nodes)], Some(t))
}

fn alias_table(d: &alias::Alias) -> Rendered {
    if d.rows.is_empty() {
        return (vec![], None);
    }
    let mut t = Table::new(&["store → load", "aliased (same low 12 bits)", "ns per pair"]);
    for r in &d.rows {
        t.row(vec![
            format!("{} B", r.distance),
            if r.aliased { "yes" } else { "no" }.to_string(),
            ns(r.ns_per_pair),
        ]);
    }
    (
        vec!["a store, then a load at a distance, walking one page".to_string()],
        Some(t),
    )
}

/// Markdown: the terminal text in a code block, for a pull-request comment.
pub fn markdown(report: &ProbeReport) -> String {
    format!(
        "## ghostbench probe\n\n{}",
        crate::report::escape::markdown_block(&render(report, false), "text")
    )
}
