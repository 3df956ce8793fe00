//! `layout --explain` for the terminal, Markdown and HTML: per build, the
//! counts, how much of the profile the table covers, the functions only one
//! default layout has, and the top moved functions. Reads the facts of
//! `layout::explain` and computes nothing new.

use super::label;
use crate::layout::explanation::{Explain, ExplainBuild, MovedFunction, OneSided, Ranking, Side};
use crate::report::table::Table;
use crate::report::{escape, html};
use std::fmt::Write;

/// From this share of a profile in functions only one build has, the report
/// says the placement table cannot show where the time went.
pub const ONE_SIDED_HINT: f64 = 0.2;

const COLUMNS: [&str; 7] = [
    "function",
    "hot",
    "address",
    "line offset",
    "window offset",
    "moved",
    "why",
];

fn percent(x: f64) -> String {
    match x {
        x if !x.is_finite() => "n/a".into(),
        x if x > 0.0 && x < 0.0005 => "<0.1%".into(),
        x => format!("{:.1}%", x * 100.0),
    }
}

/// The model placement was judged by, and why.
fn uarch_line(explain: &Explain) -> String {
    let name = explain.uarch.models.first().map_or("generic", |u| u.name());
    format!(
        "placement judged by the {name} model ({}), {}-byte windows",
        crate::code::render::why_words(&explain.uarch),
        explain.window
    )
}

/// How the moved functions were ranked, in words.
fn ranking_line(explain: &Explain, baseline: &str) -> String {
    match (&explain.profile, explain.ranking) {
        (Some(p), Ranking::Profile) => format!(
            "ranked by the callgrind {} of {baseline}'s default layout ({} of it in the binary's functions)",
            p.event,
            percent(p.matched_share)
        ),
        _ => "ranked by how far the code moved inside its cache lines (no profile)".to_string(),
    }
}

fn counts_line(b: &ExplainBuild, baseline: &str) -> String {
    let mut line = format!(
        "{} functions matched by name ({} only in {baseline}, {} only in {}), {} placed differently",
        b.matched, b.only_in_baseline, b.only_in_build, b.build, b.changed
    );
    if b.changed_not_run > 0 {
        let _ = write!(
            line,
            " ({} of them never ran in the profile)",
            b.changed_not_run
        );
    }
    line
}

/// "the table covers 31% of A's profile (35% is in functions both builds
/// have); 64% of A's profile is in functions only A has", or None without a profile.
fn coverage_line(b: &ExplainBuild, baseline: &str) -> Option<String> {
    let c = b.coverage.as_ref()?;
    let mut line = format!(
        "the table covers {} of {baseline}'s profile ({} is in functions both builds have)",
        percent(c.table_share),
        percent(c.matched_share)
    );
    if b.only_in_baseline > 0 {
        let _ = write!(
            line,
            "; {} of {baseline}'s profile is in functions only {baseline} has",
            percent(c.only_in_baseline_share)
        );
    }
    match c.only_in_build_share {
        Some(share) => {
            let _ = write!(
                line,
                "; {} of {}'s own profile is in functions only {} has",
                percent(share),
                b.build,
                b.build
            );
        }
        None if b.only_in_build > 0 => {
            let _ = write!(line, "; {}'s own profile was not taken", b.build);
        }
        None => {}
    }
    Some(line)
}

fn one_sided_entry(f: &OneSided, baseline: &str, build: &str) -> String {
    let side = match f.side {
        Side::Baseline => baseline,
        Side::Build => build,
    };
    match f.share {
        Some(share) => format!("{} ({side} only, {})", f.name, percent(share)),
        None => format!("{} ({side} only, {} B)", f.name, f.size),
    }
}

/// "only in one build: LZ4_decompress_generic (noforce only, 58.0%), …", or None.
fn one_sided_line(b: &ExplainBuild, baseline: &str) -> Option<String> {
    if b.one_sided.is_empty() {
        return None;
    }
    let shown: Vec<String> = b
        .one_sided
        .iter()
        .map(|f| one_sided_entry(f, baseline, &b.build))
        .collect();
    let total = b.only_in_baseline + b.only_in_build;
    let more = if total > shown.len() {
        format!(" ({} of {total} shown)", shown.len())
    } else {
        String::new()
    };
    Some(format!("only in one build{more}: {}", shown.join(", ")))
}

/// When a large share of a profile is in one-sided functions: say what that means.
fn one_sided_hint(b: &ExplainBuild, baseline: &str) -> Option<String> {
    let c = b.coverage.as_ref()?;
    let build_share = c.only_in_build_share.unwrap_or(0.0);
    let (share, who) = if c.only_in_baseline_share >= build_share {
        (c.only_in_baseline_share, baseline)
    } else {
        (build_share, b.build.as_str())
    };
    (share >= ONE_SIDED_HINT).then(|| {
        format!(
            "the table misses hot code: {} of {who}'s profile is in functions only {who} has \
             (inlining or outlining changed?); compare those functions' code, not their placement",
            percent(share)
        )
    })
}

fn offsets(old: u64, new: u64) -> String {
    if old == new {
        format!("{old}")
    } else {
        format!("{old} → {new}")
    }
}

fn reasons(m: &MovedFunction) -> String {
    let mut text: Vec<&str> = m.reasons.iter().map(|r| r.label()).collect();
    text.dedup();
    let mut out = text.join(", ");
    if m.loops_moved > 0 {
        let _ = write!(
            out,
            "; {} loop{} moved",
            m.loops_moved,
            if m.loops_moved == 1 { "" } else { "s" }
        );
    }
    out
}

fn share(m: &MovedFunction) -> String {
    m.hot_share.map_or("-".into(), percent)
}

/// One moved function's cells, in [`COLUMNS`] order.
fn cells(m: &MovedFunction) -> Vec<String> {
    vec![
        m.name.clone(),
        share(m),
        format!("{:#x} → {:#x}", m.old_address, m.new_address),
        offsets(m.old_line_offset, m.new_line_offset),
        offsets(m.old_window_offset, m.new_window_offset),
        format!("{} B", m.moved_bytes),
        reasons(m),
    ]
}

/// The lines under a build's counts: coverage, one-sided functions, the hint.
fn build_lines(b: &ExplainBuild, baseline: &str) -> Vec<String> {
    [
        coverage_line(b, baseline),
        one_sided_line(b, baseline),
        one_sided_hint(b, baseline),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `--explain` for the terminal.
pub fn render_explain(explain: &Explain, baseline: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} of the default layouts against {baseline}'s, {}:",
        label::EXPLAIN,
        ranking_line(explain, baseline)
    );
    let _ = writeln!(out, "  {}", uarch_line(explain));
    for b in &explain.builds {
        if let Some(error) = &b.error {
            let _ = writeln!(out, "  {}: not compared: {error}", b.build);
            continue;
        }
        let _ = writeln!(out, "  {}: {}", b.build, counts_line(b, baseline));
        for line in build_lines(b, baseline) {
            let _ = writeln!(out, "    {line}");
        }
        if b.functions.is_empty() {
            continue;
        }
        let mut table = Table::new(&COLUMNS);
        for m in &b.functions {
            table.row(cells(m));
        }
        for line in table.render().lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    for note in &explain.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    out
}

/// `--explain` for Markdown.
pub fn markdown_explain(explain: &Explain, baseline: &str) -> String {
    let escape = escape::markdown;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "#### {} of the default layouts against {}\n\n{}; {}.\n",
        label::EXPLAIN,
        escape::markdown_code(baseline),
        escape(&ranking_line(explain, baseline)),
        escape(&uarch_line(explain))
    );
    for b in &explain.builds {
        if let Some(error) = &b.error {
            let _ = writeln!(
                out,
                "- {}: not compared: {}",
                escape::markdown_code(&b.build),
                escape(error)
            );
            continue;
        }
        let _ = writeln!(
            out,
            "**{}**: {}.\n",
            escape(&b.build),
            escape(&counts_line(b, baseline))
        );
        for line in build_lines(b, baseline) {
            let _ = writeln!(out, "- {}", escape(&line));
        }
        if b.functions.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n| {} |", COLUMNS.join(" | "));
        let _ = writeln!(out, "|---|---:|---|---|---|---:|---|");
        for m in &b.functions {
            let cells = cells(m);
            let mut row: Vec<String> = cells.iter().map(|c| escape(c)).collect();
            row[0] = escape::markdown_code(&cells[0]);
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        let _ = writeln!(out);
    }
    for note in &explain.notes {
        let _ = writeln!(out, "- note: {}", escape(note));
    }
    out
}

/// `--explain` for the HTML page.
pub fn html_explain(explain: &Explain, baseline: &str) -> String {
    let mut out = format!(
        "<h2>{} of the default layouts against {}</h2>\n<p>{}; {}.</p>\n",
        label::EXPLAIN,
        escape::html(baseline),
        escape::html(&ranking_line(explain, baseline)),
        escape::html(&uarch_line(explain))
    );
    for b in &explain.builds {
        if let Some(error) = &b.error {
            let _ = writeln!(
                out,
                "<p><b>{}</b>: not compared: {}</p>",
                escape::html(&b.build),
                escape::html(error)
            );
            continue;
        }
        let _ = writeln!(
            out,
            "<h3>{}</h3>\n<p>{}.</p>",
            escape::html(&b.build),
            escape::html(&counts_line(b, baseline))
        );
        let lines = build_lines(b, baseline);
        if !lines.is_empty() {
            out.push_str("<ul>\n");
            for line in lines {
                let _ = writeln!(out, "<li>{}</li>", escape::html(&line));
            }
            out.push_str("</ul>\n");
        }
        if !b.functions.is_empty() {
            let rows: Vec<Vec<String>> = b.functions.iter().map(cells).collect();
            out.push_str(&html::table(&COLUMNS, &rows));
        }
    }
    if !explain.notes.is_empty() {
        out.push_str("<ul class=\"note\">\n");
        for note in &explain.notes {
            let _ = writeln!(out, "<li>{}</li>", escape::html(note));
        }
        out.push_str("</ul>\n");
    }
    out
}
