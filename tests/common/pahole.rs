//! pahole as an oracle: parse its text output and compare it, struct by struct, with
//! ghostbench's `--json` layouts. Shared by tests/structs.rs, examples/pahole_agree.rs
//! and examples/pahole_text.rs (used by benches/structs.sh and benches/pahole_text.sh).

#![allow(dead_code)]

use serde_json::Value;
use std::collections::HashMap;

/// One struct as pahole printed it: top-level members (offset, size), byte holes, size.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PaholeStruct {
    pub name: String,
    pub size: Option<u64>,
    pub members: Vec<(u64, u64)>,
    pub holes: Vec<u64>,
    /// pahole printed `<ERROR…>` or a line it could not finish.
    pub error: bool,
}

fn position(line: &str) -> Option<(u64, u64)> {
    // "/*    12     4 */" or "/*    12: 3  4 */"
    let end = line.trim_end().strip_suffix("*/")?;
    let start = end.rfind("/*")?;
    let inner = &end[start + 2..];
    // A bitfield prints "offset:bit size"; drop the bit part.
    let inner = match inner.find(':') {
        Some(colon) => {
            let after = inner[colon + 1..].trim_start();
            let bit_len = after.find(char::is_whitespace)?;
            format!("{} {}", &inner[..colon], &after[bit_len..])
        }
        None => inner.to_string(),
    };
    let parts: Vec<&str> = inner.split_whitespace().collect();
    match parts.as_slice() {
        [off, size] => Some((off.parse().ok()?, size.parse().ok()?)),
        _ => None,
    }
}

/// Parse pahole's default output.
pub fn parse(text: &str) -> Vec<PaholeStruct> {
    let mut out = Vec::new();
    let mut current: Option<PaholeStruct> = None;
    let mut depth = 0usize;
    for line in text.lines() {
        if current.is_none() {
            for kw in ["struct ", "class ", "union "] {
                if let Some(rest) = line.strip_prefix(kw) {
                    if let Some(head) = rest.strip_suffix(" {") {
                        let name = head.split(" : ").next().unwrap_or(head).trim().to_string();
                        current = Some(PaholeStruct {
                            name,
                            ..Default::default()
                        });
                        depth = 1;
                    }
                }
            }
            continue;
        }
        let Some(s) = current.as_mut() else { continue };
        let trimmed = line.trim();
        // pahole says itself when its numbers do not add up.
        if trimmed.contains("<ERROR") || trimmed.contains("BRAIN FART ALERT") {
            s.error = true;
        }
        if depth == 1 && line.starts_with('}') {
            out.push(current.take().unwrap_or_default());
            depth = 0;
            continue;
        }
        let tabs = line.len() - line.trim_start_matches('\t').len();
        if trimmed.ends_with('{') && !trimmed.starts_with("/*") {
            depth += 1;
            continue;
        }
        if trimmed.starts_with('}') && depth > 1 {
            depth -= 1;
            if depth == 1 {
                if let Some(p) = position(trimmed) {
                    s.members.push(p);
                }
            }
            continue;
        }
        if depth != 1 || tabs != 1 {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("/* XXX ") {
            if let Some(n) = rest
                .strip_suffix(" bytes hole, try to pack */")
                .or_else(|| rest.strip_suffix(" byte hole, try to pack */"))
            {
                if let Ok(n) = n.parse() {
                    s.holes.push(n);
                }
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("/* size: ") {
            s.size = rest.split(',').next().and_then(|n| n.trim().parse().ok());
            continue;
        }
        if trimmed.starts_with("/*") && !trimmed.contains("<ancestor>") {
            continue;
        }
        if let Some(p) = position(trimmed) {
            s.members.push(p);
        }
    }
    out
}

/// ghostbench's view of a struct in the same shape.
pub fn from_json(s: &Value) -> PaholeStruct {
    let members = s["members"].as_array().cloned().unwrap_or_default();
    PaholeStruct {
        name: s["name"].as_str().unwrap_or("").to_string(),
        size: s["size"].as_u64(),
        members: members
            .iter()
            .map(|m| {
                (
                    m["offset"].as_u64().unwrap_or(0),
                    m["size"].as_u64().unwrap_or(0),
                )
            })
            .collect(),
        holes: members
            .iter()
            .filter_map(|m| m["hole_after"].as_u64())
            .filter(|h| *h > 0)
            .collect(),
        error: false,
    }
}

/// The unqualified name (pahole prints no namespaces).
pub fn short(name: &str) -> String {
    ghostbench::structs::dwarf::unqualified(name).to_string()
}

/// pahole prints no size line for unions; everything else must match exactly.
pub fn same_layout(pahole: &PaholeStruct, ours: &PaholeStruct) -> bool {
    (pahole.size.is_none() || pahole.size == ours.size)
        && pahole.members == ours.members
        && pahole.holes == ours.holes
}

/// The first point where two layouts differ, for messages.
pub fn first_difference(pahole: &PaholeStruct, ours: &PaholeStruct) -> String {
    if pahole.size.is_some() && pahole.size != ours.size {
        return format!("size: pahole {:?}, ghostbench {:?}", pahole.size, ours.size);
    }
    for (k, (a, b)) in pahole.members.iter().zip(&ours.members).enumerate() {
        if a != b {
            return format!("member {k}: pahole {a:?}, ghostbench {b:?}");
        }
    }
    if pahole.members.len() != ours.members.len() {
        return format!(
            "members: pahole {}, ghostbench {}",
            pahole.members.len(),
            ours.members.len()
        );
    }
    format!(
        "holes: pahole {:?}, ghostbench {:?}",
        pahole.holes, ours.holes
    )
}

#[derive(Debug, Default)]
pub struct Agreement {
    pub agree: usize,
    pub differ: Vec<(PaholeStruct, Vec<PaholeStruct>)>,
    pub pahole_errors: Vec<String>,
    pub missing: Vec<String>,
}

/// Compare every struct pahole printed with ghostbench's struct(s) of that name.
pub fn compare(pahole: &[PaholeStruct], ours: &[Value]) -> Agreement {
    let mut by_name: HashMap<String, Vec<PaholeStruct>> = HashMap::new();
    for s in ours {
        let p = from_json(s);
        by_name.entry(short(&p.name)).or_default().push(p);
    }
    let mut result = Agreement::default();
    for p in pahole {
        if p.error {
            result.pahole_errors.push(p.name.clone());
            continue;
        }
        match by_name.get(&p.name) {
            None => result.missing.push(p.name.clone()),
            Some(candidates) => {
                let same = candidates.iter().any(|c| same_layout(p, c));
                if same {
                    result.agree += 1;
                } else {
                    result.differ.push((p.clone(), candidates.clone()));
                }
            }
        }
    }
    result
}

/// pahole-style text split into its top-level blocks (first line, whole block): from a
/// `struct|union|class … {` line at column 0 to the next `}` at column 0.
pub fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        match current.as_mut() {
            None => {
                let opens = ["struct ", "union ", "class "]
                    .iter()
                    .any(|k| line.starts_with(k))
                    && line.ends_with('{');
                if opens {
                    current = Some((line.to_string(), format!("{line}\n")));
                }
            }
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
                if line.starts_with('}') {
                    out.extend(current.take());
                }
            }
        }
    }
    out
}
