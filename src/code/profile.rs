//! Profiles for `--hot`: callgrind and cachegrind output files, and `perf script`
//! text. Each becomes a list of (object, function, cost), so functions of the
//! binary can be ranked by their share of the whole profile.

use crate::limits::{self, Input};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileFormat {
    /// callgrind or cachegrind output (the same "events:" file format).
    Callgrind,
    PerfScript,
}

/// A flat self-cost profile.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    pub path: String,
    pub format: ProfileFormat,
    /// The event ranked on: the first event of a callgrind file (usually Ir), or "samples".
    pub event: String,
    /// Total cost of the whole profile, all objects included.
    pub total: f64,
    /// Self cost per (object file name, function name).
    #[serde(skip)]
    pub entries: HashMap<(String, String), f64>,
}

pub fn read(path: &Path) -> Result<Profile> {
    let bytes = limits::read_capped(path, Input::Profile)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let display = path.display().to_string();
    let profile = if looks_like_callgrind(&text) {
        parse_callgrind(&text, display)?
    } else {
        parse_perf_script(&text, display)
    };
    if !profile.total.is_finite() {
        bail!(
            "{}: its costs add up past the largest number",
            path.display()
        );
    }
    if profile.total <= 0.0 || profile.entries.is_empty() {
        bail!(
            "{}: no costs or samples found (expected a callgrind/cachegrind output file or `perf script` text)",
            path.display()
        );
    }
    Ok(profile)
}

fn looks_like_callgrind(text: &str) -> bool {
    text.lines()
        .take(50)
        .any(|l| l.starts_with("events:") || l.starts_with("# callgrind format"))
}

/// The file name of an object path, the key profiles and binaries share.
pub fn object_key(path: &str) -> String {
    path.trim()
        .trim_end_matches(" (deleted)")
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_string()
}

/// A function name as profilers print it, reduced to what symbols give us:
/// no recursion suffix ("'2") and no offset ("+0x1a").
pub fn clean_name(name: &str) -> String {
    let mut name = name.trim();
    if let Some((base, depth)) = name.rsplit_once('\'') {
        if !depth.is_empty() && depth.bytes().all(|b| b.is_ascii_digit()) {
            name = base;
        }
    }
    if let Some((base, offset)) = name.rsplit_once("+0x") {
        if !offset.is_empty() && offset.bytes().all(|b| b.is_ascii_hexdigit()) {
            name = base;
        }
    }
    name.to_string()
}

/// Name-compression tables of the callgrind format: "(id) name" defines, "(id)" refers.
#[derive(Default)]
struct Names(HashMap<u64, String>);

impl Names {
    fn resolve(&mut self, text: &str) -> String {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix('(') {
            if let Some((id, name)) = rest.split_once(')') {
                if let Ok(id) = id.parse::<u64>() {
                    let name = name.trim();
                    if name.is_empty() {
                        return self.0.get(&id).cloned().unwrap_or_default();
                    }
                    self.0.insert(id, name.to_string());
                    return name.to_string();
                }
            }
        }
        text.to_string()
    }
}

/// Self cost per function from callgrind or cachegrind output: cost lines add
/// to the current `fn=`, except the line after `calls=`, which is the inclusive
/// cost of a call and belongs to the callee. A cost that is not a finite,
/// non-negative number is an error naming its line: summed in, NaN, inf or a
/// negative cost made "NaN total Ir" and shares over 100%.
pub fn parse_callgrind(text: &str, path: String) -> Result<Profile> {
    let mut positions = 1usize;
    let mut event = String::from("Ir");
    let mut objects = Names::default();
    let mut functions = Names::default();
    let mut object = String::new();
    let mut function: Option<String> = None;
    let mut skip_next_cost = false;
    let mut entries: HashMap<(String, String), f64> = HashMap::new();
    let mut total = 0.0;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let first = line.as_bytes()[0];
        if first.is_ascii_digit() || first == b'+' || first == b'-' || first == b'*' {
            let mut fields = line.split_ascii_whitespace().skip(positions);
            let cost = match fields.next() {
                None => 0.0,
                Some(text) => match text.parse::<f64>() {
                    Ok(cost) if cost.is_finite() && cost >= 0.0 => cost,
                    _ => bail!(
                        "{path}:{}: cost {text:?} is not a finite non-negative number",
                        index + 1
                    ),
                },
            };
            if skip_next_cost {
                skip_next_cost = false;
                continue;
            }
            if let Some(f) = &function {
                *entries.entry((object.clone(), f.clone())).or_default() += cost;
                total += cost;
            }
            continue;
        }
        let Some((key, value)) = line.split_once(['=', ':']) else {
            continue;
        };
        match key {
            "positions" => positions = value.split_ascii_whitespace().count().max(1),
            "events" => {
                if let Some(e) = value.split_ascii_whitespace().next() {
                    event = e.to_string();
                }
            }
            "ob" => object = object_key(&objects.resolve(value)),
            "cob" => {
                objects.resolve(value);
            }
            "fn" => function = Some(clean_name(&functions.resolve(value))),
            "cfn" | "cfnc" => {
                functions.resolve(value);
            }
            "calls" => skip_next_cost = true,
            _ => {}
        }
    }
    Ok(Profile {
        path,
        format: ProfileFormat::Callgrind,
        event,
        total,
        entries,
    })
}

/// One sample per block of `perf script` output: the leaf frame is either at
/// the end of the header line (no call chains) or the first indented line.
pub fn parse_perf_script(text: &str, path: String) -> Profile {
    let mut entries: HashMap<(String, String), f64> = HashMap::new();
    let mut total = 0.0;
    let mut awaiting_leaf = false;
    let mut count = |object: &str, symbol: &str| {
        let key = (object_key(object), clean_name(symbol));
        *entries.entry(key).or_default() += 1.0;
        total += 1.0;
    };
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            awaiting_leaf = false;
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        let frame = parse_frame(line);
        if !indented {
            // A sample header; if it ends in a frame, that is the sample's leaf.
            match frame {
                Some((symbol, object)) => {
                    count(object, symbol);
                    awaiting_leaf = false;
                }
                None => awaiting_leaf = true,
            }
        } else if awaiting_leaf {
            if let Some((symbol, object)) = frame {
                count(object, symbol);
            }
            awaiting_leaf = false;
        }
    }
    Profile {
        path,
        format: ProfileFormat::PerfScript,
        event: "samples".to_string(),
        total,
        entries,
    }
}

/// "… ADDR SYMBOL+0xOFF (DSO)" at the end of a line → (symbol, dso).
fn parse_frame(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_end();
    let body = line.strip_suffix(')')?;
    let open = body.rfind(" (")?;
    let object = &body[open + 2..];
    let before = body[..open].trim_end();
    // The address is the last hex word before the symbol.
    let mut words = before.split_ascii_whitespace();
    let mut address_end = None;
    let mut offset = 0;
    for word in words.by_ref() {
        let start = before[offset..].find(word).map(|i| i + offset)?;
        offset = start + word.len();
        if word.len() >= 4 && word.bytes().all(|b| b.is_ascii_hexdigit()) {
            address_end = Some(offset);
        }
    }
    let symbol = before[address_end?..].trim();
    if symbol.is_empty() {
        return None;
    }
    Some((symbol, object))
}

impl Profile {
    /// Self cost per function name, restricted to `binary`'s object when the
    /// profile names objects and one of them is the binary.
    pub fn costs_for(&self, binary: &Path) -> HashMap<String, f64> {
        let key = object_key(&binary.to_string_lossy());
        let has_binary = self.entries.keys().any(|(object, _)| *object == key);
        let mut costs = HashMap::new();
        for ((object, name), cost) in &self.entries {
            if !has_binary || *object == key {
                *costs.entry(name.clone()).or_insert(0.0) += cost;
            }
        }
        costs
    }
}

/// The part of a demangled name before its parameter list, so "f(int)" from
/// the binary matches "f" from a profiler that drops parameters.
pub fn base_name(name: &str) -> &str {
    // "(anonymous namespace)" has the same length as its mask, so indices agree.
    let masked = name.replace("(anonymous namespace)", "_anonymous_namespace_");
    match masked.find('(') {
        Some(i) => &name[..i],
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALLGRIND: &str = "# callgrind format\nversion: 1\npositions: line\nevents: Ir\n\
ob=(1) /tmp/fixture\nfl=(1) hot.c\nfn=(1) main\n5 10\n+1 4\ncfn=(2) hot_loop\ncalls=1 0\n7 9000\n\
fn=(2)\n3 8000\n+1 1000\n\nob=(2) /usr/lib/libc.so.6\nfl=(2) ???\nfn=(3) memset'2\n0 50\n";

    #[test]
    fn callgrind_self_cost_excludes_call_lines() {
        let p = parse_callgrind(CALLGRIND, "x".into()).unwrap();
        assert_eq!(p.event, "Ir");
        assert_eq!(p.total, 9064.0);
        let costs = p.costs_for(Path::new("/elsewhere/fixture"));
        assert_eq!(costs["hot_loop"], 9000.0);
        assert_eq!(costs["main"], 14.0);
        assert!(!costs.contains_key("memset"));
        let all = p.costs_for(Path::new("other"));
        assert_eq!(all["memset"], 50.0);
    }

    #[test]
    fn non_finite_or_negative_costs_are_refused_with_their_line() {
        for (bad, line) in [("nan", 8), ("inf", 8), ("-100", 8), ("1e999", 8), ("x1", 8)] {
            let text = CALLGRIND.replacen("5 10", &format!("5 {bad}"), 1);
            let error = parse_callgrind(&text, "p.out".into())
                .unwrap_err()
                .to_string();
            assert_eq!(
                error,
                format!("p.out:{line}: cost {bad:?} is not a finite non-negative number")
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let huge = dir.path().join("huge.out");
        let text = "events: Ir\nfn=a\n1 1e308\n2 1e308\n";
        std::fs::write(&huge, text).unwrap();
        let error = read(&huge).unwrap_err().to_string();
        assert!(
            error.ends_with("its costs add up past the largest number"),
            "{error}"
        );
    }

    #[test]
    fn perf_script_with_and_without_call_chains() {
        let flat = "bench 123 [000] 1.000:     250000 cycles:u:      5581cd2b7149 hot_loop+0x19 (/tmp/bench)\n\
bench 123 [000] 1.001:     250000 cycles:u:      5581cd2b7150 hot_loop+0x20 (/tmp/bench)\n\
bench 123 [000] 1.002:     250000 cycles:u:      7f00aa001000 memcpy (/usr/lib/libc.so.6)\n";
        let p = parse_perf_script(flat, "x".into());
        assert_eq!(p.total, 3.0);
        assert_eq!(p.costs_for(Path::new("bench"))["hot_loop"], 2.0);
        let chains = "bench 123 1.000: 1 cycles:\n\tffffffff81000000 cold(int)+0x4 (/tmp/bench)\n\t1234 main+0x1 (/tmp/bench)\n\n\
bench 123 1.001: 1 cycles:\n\t5555 [unknown] ([unknown])\n\n";
        let p = parse_perf_script(chains, "x".into());
        assert_eq!(p.total, 2.0);
        assert_eq!(p.costs_for(Path::new("bench"))["cold(int)"], 1.0);
    }

    #[test]
    fn names() {
        assert_eq!(clean_name("f'2"), "f");
        assert_eq!(clean_name("f+0x1a"), "f");
        assert_eq!(base_name("ns::f(int)"), "ns::f");
        assert_eq!(
            base_name("(anonymous namespace)::g(long)"),
            "(anonymous namespace)::g"
        );
        assert_eq!(base_name("plain"), "plain");
    }
}
