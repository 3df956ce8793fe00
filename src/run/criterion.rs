//! Rust benchmark harnesses' results as metrics: Criterion's `estimates.json`
//! files and its terminal or `--message-format=json` output (`criterion`,
//! `criterion:PATH`), and libtest's `bench: N ns/iter` lines (`libtest`).
//!
//! Every value is a time per iteration in nanoseconds, one metric per
//! benchmark, named by the benchmark's id: (name, nanoseconds) pairs, which
//! `metric` makes into metric values.
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// At most this many bytes of one `estimates.json`: Criterion's own are
/// about 1.5 KiB.
const ESTIMATES_BYTES: u64 = 1 << 20;
/// At most this many benchmarks read from one Criterion directory.
const MAX_BENCHMARKS: usize = 4096;
/// How deep below a Criterion directory a benchmark's `new/` may sit
/// (group / function / parameter / new).
const MAX_DEPTH: usize = 6;

/// Nanoseconds per `unit` as Criterion and libtest write units.
fn nanoseconds(unit: &str) -> Option<f64> {
    Some(match unit {
        "ps" => 1e-3,
        "ns" => 1.0,
        "us" | "µs" | "μs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    })
}

/// A benchmark's name and its time in nanoseconds.
pub type Timed = (String, f64);

fn value(name: &str, ns: f64) -> Timed {
    (name.to_string(), ns)
}

/// The time of one `estimates.json`: the `slope` (Criterion's headline
/// "time" when it has one: linear sampling) or else the `mean`, its
/// `point_estimate` in nanoseconds.
pub fn estimate(json: &serde_json::Value) -> Result<f64> {
    let point = |key: &str| {
        json.get(key)
            .and_then(|e| e.get("point_estimate"))
            .and_then(serde_json::Value::as_f64)
    };
    let ns = point("slope").or_else(|| point("mean")).ok_or_else(|| {
        anyhow!("no slope or mean point_estimate: is this Criterion's estimates.json?")
    })?;
    if !ns.is_finite() || ns < 0.0 {
        bail!("the point_estimate {ns} is not a time");
    }
    Ok(ns)
}

/// Criterion's results under `path`: one `estimates.json` (named by the
/// directory above its `new/`), or a Criterion directory
/// (`target/criterion`), every `…/new/estimates.json` below it, named by
/// the path between (`group/function/parameter`). A file older than
/// `since` is a previous run's, and refused.
pub fn read_estimates(path: &Path, since: Option<SystemTime>) -> Result<Vec<Timed>> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut files = Vec::new();
    if meta.is_dir() {
        find_estimates(path, 0, &mut files)?;
        files.sort();
        if files.is_empty() {
            bail!(
                "no */new/estimates.json under {} (is it Criterion's directory, e.g. target/criterion or $CRITERION_HOME?)",
                path.display()
            );
        }
    } else {
        files.push(path.to_path_buf());
    }
    let mut values = Vec::new();
    for file in files {
        let name = bench_name(path, &file);
        if let (Some(since), Ok(modified)) =
            (since, std::fs::metadata(&file).and_then(|m| m.modified()))
        {
            if modified < since {
                bail!(
                    "{} was not written by this run (it is older): did the benchmark {name:?} run?",
                    file.display()
                );
            }
        }
        let bytes = read_small(&file)?;
        let json: serde_json::Value = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not valid JSON", file.display()))?;
        let ns = estimate(&json).with_context(|| file.display().to_string())?;
        values.push(value(&name, ns));
    }
    Ok(values)
}

fn read_small(file: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let handle =
        std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut bytes = Vec::new();
    handle
        .take(ESTIMATES_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", file.display()))?;
    if bytes.len() as u64 > ESTIMATES_BYTES {
        bail!(
            "{} is larger than the {} KiB an estimates.json may have",
            file.display(),
            ESTIMATES_BYTES >> 10
        );
    }
    Ok(bytes)
}

/// `…/fib 20/new/estimates.json` under `root` → `fib 20`.
fn bench_name(root: &Path, file: &Path) -> String {
    let bench = file.parent().and_then(Path::parent).unwrap_or(file);
    let name = match bench.strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative,
        _ => bench.file_name().map(Path::new).unwrap_or(bench),
    };
    let name = name.to_string_lossy().into_owned();
    if name.is_empty() {
        "criterion".into()
    } else {
        name
    }
}

fn find_estimates(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> Result<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for entry in entries.flatten() {
        // Links are not followed: a Criterion directory has none.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if !kind.is_dir() {
            continue;
        }
        let path = entry.path();
        if entry.file_name() == "new" {
            let file = path.join("estimates.json");
            if file.is_file() {
                found.push(file);
            }
        } else if entry.file_name() != "report" && entry.file_name() != "base" {
            find_estimates(&path, depth + 1, found)?;
        }
        if found.len() > MAX_BENCHMARKS {
            bail!(
                "more than {MAX_BENCHMARKS} benchmarks under {}",
                dir.display()
            );
        }
    }
    Ok(())
}

/// Criterion's output on stdout: `cargo criterion --message-format=json`
/// lines (`"reason":"benchmark-complete"`, the `typical` estimate), or the
/// terminal's `ID  time: [LOW ESTIMATE HIGH]` lines (the middle value). The
/// last value of a benchmark id counts.
pub fn parse_output(stdout: &str) -> Result<Vec<Timed>> {
    let mut values: Vec<Timed> = Vec::new();
    let mut put = |name: &str, ns: f64| match values.iter_mut().find(|v| v.0 == name) {
        Some(v) => v.1 = ns,
        None => values.push(value(name, ns)),
    };
    let mut pending: Option<String> = None;
    for line in stdout.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('{') {
            if let Ok(json) = serde_json::from_str::<serde_json::Value>(trimmed) {
                if json.get("reason").and_then(|r| r.as_str()) == Some("benchmark-complete") {
                    let id = json
                        .get("id")
                        .and_then(|i| i.as_str())
                        .unwrap_or("criterion");
                    let typical = json.get("typical");
                    let estimate = typical
                        .and_then(|t| t.get("estimate"))
                        .and_then(serde_json::Value::as_f64);
                    let unit = typical
                        .and_then(|t| t.get("unit"))
                        .and_then(|u| u.as_str())
                        .unwrap_or("ns");
                    if let (Some(estimate), Some(scale)) = (estimate, nanoseconds(unit)) {
                        put(id, estimate * scale);
                    }
                }
            }
            continue;
        }
        // `ID time: [..]` on one line, or a long ID alone on the line before.
        if let Some((head, rest)) = line.split_once("time:") {
            let name = match head.trim() {
                "" => pending.take(),
                id => Some(id.to_string()),
            };
            if let (Some(name), Some(ns)) = (name, middle_time(rest)) {
                put(&name, ns);
            }
            pending = None;
        } else if !line.starts_with(char::is_whitespace) && !trimmed.is_empty() {
            pending = Some(trimmed.to_string());
        }
    }
    if values.is_empty() {
        bail!("no Criterion result in the output: expected `NAME time: [LOW ESTIMATE HIGH]` lines or `cargo criterion --message-format=json` messages");
    }
    Ok(values)
}

/// `[26.029 µs 26.251 µs 26.505 µs]` → 26251.
fn middle_time(text: &str) -> Option<f64> {
    let inner = text.trim().strip_prefix('[')?.split(']').next()?;
    let words: Vec<&str> = inner.split_whitespace().collect();
    if words.len() != 6 {
        return None;
    }
    let number: f64 = words[2].parse().ok()?;
    Some(number * nanoseconds(words[3])?)
}

/// libtest's `cargo bench` lines, `test NAME ... bench: 1,234 ns/iter (+/- 56)`
/// (also with decimals, as Rust ≥ 1.78 prints them).
pub fn parse_libtest(stdout: &str) -> Result<Vec<Timed>> {
    let mut values: Vec<Timed> = Vec::new();
    for line in stdout.lines() {
        let Some(rest) = line.trim().strip_prefix("test ") else {
            continue;
        };
        let Some((name, result)) = rest.split_once(" ... bench:") else {
            continue;
        };
        let Some(number) = result.split_whitespace().next() else {
            continue;
        };
        let unit = result.split_whitespace().nth(1).unwrap_or("");
        let Some(scale) = unit.strip_suffix("/iter").and_then(nanoseconds) else {
            continue;
        };
        let Ok(number) = number.replace(',', "").parse::<f64>() else {
            continue;
        };
        let name = name.trim();
        match values.iter_mut().find(|v| v.0 == name) {
            Some(v) => v.1 = number * scale,
            None => values.push(value(name, number * scale)),
        }
    }
    if values.is_empty() {
        bail!("no libtest benchmark result in the output: expected `test NAME ... bench: N ns/iter (+/- M)` lines (cargo bench with #[bench])");
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(values: &[Timed]) -> Vec<(&str, f64)> {
        values.iter().map(|v| (v.0.as_str(), v.1)).collect()
    }

    #[test]
    fn libtest_lines_with_and_without_decimals() {
        let out = "running 3 tests\n\
            test tests::sum   ... bench:       1,234 ns/iter (+/- 56)\n\
            test tests::fast  ... bench:          12.50 ns/iter (+/- 0.31)\n\
            test tests::plain ... ok\n\
            test result: ok. 0 passed; 0 failed; 1 ignored; 2 measured\n";
        let values = parse_libtest(out).unwrap();
        assert_eq!(
            pairs(&values),
            [("tests::sum", 1234.0), ("tests::fast", 12.5)]
        );
        let error = parse_libtest("test a ... ok\n").unwrap_err().to_string();
        assert!(error.contains("ns/iter"), "{error}");
    }

    #[test]
    fn criterion_terminal_and_json_messages() {
        // Criterion 0.5's terminal output, a long id on its own line.
        let text = "fib 20                  time:   [26.029 µs 26.251 µs 26.505 µs]\n\
                    \x20                       change: [-1.2% +0.3% +1.9%] (p = 0.70 > 0.05)\n\
            group/a-very-long-benchmark-name-that-wraps\n\
            \x20                       time:   [1.5000 ms 1.5100 ms 1.5200 ms]\n";
        let values = parse_output(text).unwrap();
        let got = pairs(&values);
        assert_eq!(got[0].0, "fib 20");
        assert!((got[0].1 - 26251.0).abs() < 1e-6, "{got:?}");
        assert_eq!(got[1].0, "group/a-very-long-benchmark-name-that-wraps");
        assert!((got[1].1 - 1.51e6).abs() < 1e-3, "{got:?}");
        let json = r#"{"reason":"benchmark-complete","id":"fib 20","typical":{"estimate":26.25,"lower_bound":26.0,"upper_bound":26.5,"unit":"us"}}
{"reason":"group-complete","group_name":"fib"}"#;
        assert_eq!(pairs(&parse_output(json).unwrap()), [("fib 20", 26250.0)]);
        assert!(parse_output("nothing here").is_err());
    }

    #[test]
    fn a_criterion_estimates_file_as_criterion_writes_it() {
        // tests/fixtures/rust/criterion: Criterion 0.5's estimates.json
        // format; its slope point estimate is the value.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rust/criterion");
        let values = read_estimates(&dir, None).unwrap();
        assert_eq!(pairs(&values), [("checksum", 26250.977530616823)]);
    }

    #[test]
    fn estimates_files_and_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |bench: &str, json: &str| {
            let dir = tmp.path().join(bench).join("new");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("estimates.json"), json).unwrap();
        };
        // The slope when Criterion has one, else the mean.
        write(
            "fib/20",
            r#"{"mean":{"point_estimate":110.0},"median":{"point_estimate":105.0},"slope":{"point_estimate":100.0}}"#,
        );
        write(
            "sum",
            r#"{"mean":{"point_estimate":42.5},"median":{"point_estimate":40.0},"slope":null}"#,
        );
        std::fs::create_dir_all(tmp.path().join("report")).unwrap();
        let values = read_estimates(tmp.path(), None).unwrap();
        assert_eq!(pairs(&values), [("fib/20", 100.0), ("sum", 42.5)]);
        let one = tmp.path().join("sum/new/estimates.json");
        assert_eq!(pairs(&read_estimates(&one, None).unwrap()), [("sum", 42.5)]);
        // A file from before the run is a stale result, not this run's.
        let later = SystemTime::now() + std::time::Duration::from_secs(3600);
        let error = read_estimates(&one, Some(later)).unwrap_err().to_string();
        assert!(error.contains("not written by this run"), "{error}");
        write("bad", r#"{"mean":{}}"#);
        assert!(read_estimates(tmp.path(), None).is_err());
        let empty = tempfile::tempdir().unwrap();
        let error = read_estimates(empty.path(), None).unwrap_err().to_string();
        assert!(error.contains("no */new/estimates.json"), "{error}");
    }
}
