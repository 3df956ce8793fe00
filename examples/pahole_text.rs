//! `pahole_text PAHOLE_TEXT GHOSTBENCH_TEXT [EXAMPLES]`: split both outputs into
//! per-struct blocks (a `struct|union|class NAME … {` line at column 0 to the next `}` at
//! column 0), match them by their first line, and count how many of the structs both
//! tools print are byte-identical. Each differing struct is classed by its first
//! differing line; the classes are printed biggest first with one example each (or
//! EXAMPLES of them). Used by benches/pahole_text.sh. Self-contained on purpose: it
//! shares no code with the crate it checks (the block splitter is the tests' own,
//! tests/common/pahole.rs).

#[path = "../tests/common/pahole.rs"]
mod pahole;

use pahole::blocks;
use std::collections::HashMap;

/// The class of a difference, from the first pair of lines that differ.
fn class(pahole: &str, ours: &str) -> &'static str {
    let either = |s: &str| pahole.contains(s) || ours.contains(s);
    if either("BRAIN FART") || either("<ERROR") {
        return "pahole error (BRAIN FART / <ERROR>)";
    }
    if either("sum members") {
        return "`sum members` line";
    }
    if either("forced alignments") {
        return "`forced alignments` line";
    }
    if either("paddings:") {
        return "`paddings` line";
    }
    if either("last struct has") {
        return "`last struct has N bytes of padding`";
    }
    if either("bit holes") || either("bit_padding") || either("bit hole") {
        return "bit holes / bit padding";
    }
    if either("Force alignment") || either(":0;") {
        return "zero-width bitfield";
    }
    if either("{...}") || pahole.trim_end().ends_with('{') || ours.trim_end().ends_with('{') {
        return "anonymous struct/union expansion";
    }
    if pahole.starts_with('}') || ours.starts_with('}') {
        return "closing line / struct attributes";
    }
    if either("__aligned__") {
        return "member __aligned__ attribute";
    }
    if either("cacheline") {
        return "cacheline boundary marker";
    }
    if either("[]") {
        return "flexible array";
    }
    if either("(*") {
        return "function pointer";
    }
    if either("  *") {
        return "pointer spacing";
    }
    if either("/* size:") || either("last cacheline") || either("padding:") {
        return "summary numbers";
    }
    if either("hole, try to pack") {
        return "holes";
    }
    if pahole.trim().is_empty() || ours.trim().is_empty() {
        return "blank lines";
    }
    "other member line"
}

fn first_difference<'a>(p: &'a str, o: &'a str) -> (&'a str, &'a str) {
    let mut pl = p.lines();
    let mut ol = o.lines();
    loop {
        match (pl.next(), ol.next()) {
            (Some(a), Some(b)) if a == b => continue,
            (a, b) => return (a.unwrap_or("<end>"), b.unwrap_or("<end>")),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: pahole_text PAHOLE_TEXT GHOSTBENCH_TEXT [EXAMPLES]");
        std::process::exit(2);
    }
    let read = |p: &str| match std::fs::read(p) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            eprintln!("error: {p}: {e}");
            std::process::exit(1);
        }
    };
    let examples: usize = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(1);
    let pahole = blocks(&read(&args[1]));
    let ours = blocks(&read(&args[2]));
    let mut by_head: HashMap<&str, Vec<&str>> = HashMap::new();
    for (head, body) in &ours {
        by_head
            .entry(head.as_str())
            .or_default()
            .push(body.as_str());
    }
    let (mut identical, mut differ, mut only_pahole) = (0usize, 0usize, 0usize);
    let mut classes: HashMap<&'static str, Vec<(String, String, String)>> = HashMap::new();
    for (head, body) in &pahole {
        let Some(candidates) = by_head.get(head.as_str()) else {
            only_pahole += 1;
            continue;
        };
        if candidates.iter().any(|c| c == body) {
            identical += 1;
            continue;
        }
        differ += 1;
        let (a, b) = first_difference(body, candidates[0]);
        classes
            .entry(class(a, b))
            .or_default()
            .push((head.clone(), a.to_string(), b.to_string()));
    }
    let both = identical + differ;
    println!(
        "structs both print: {both}  identical: {identical} ({:.1}%)  differ: {differ}  \
         only in pahole: {only_pahole}  ghostbench blocks: {}",
        100.0 * identical as f64 / both.max(1) as f64,
        ours.len()
    );
    let mut sorted: Vec<_> = classes.into_iter().collect();
    sorted.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    for (name, cases) in sorted {
        println!("{:>6}  {name}", cases.len());
        for (head, a, b) in cases.iter().take(examples) {
            println!("        {head}\n          pahole:     {a:?}\n          ghostbench: {b:?}");
        }
    }
}
