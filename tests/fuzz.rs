//! The fuzz harness, on stable Rust: a seeded, deterministic mutation loop
//! over seed inputs made at test time (C with -g, C with -gz=zlib compressed
//! debug sections, C++ with -g; a callgrind profile and `perf script` text of
//! the seed; an `analyze` CSV and hyperfine's JSON), fed to the library entry
//! points of `structs`, `code` (and `code --diff`), `code --hot` and the
//! `analyze` readers. Every input must end in a result or an error: no panic
//! (caught with `catch_unwind`), no hang (a watchdog aborts a case past
//! [`HANG`]), and the process's peak memory stays under [`MEMORY_LIMIT`].
//!
//! `GHOSTBENCH_FUZZ_CASES` sets the number of mutated inputs (default
//! [`CI_CASES`]); `GHOSTBENCH_FUZZ_SEED` the RNG seed. A failure names the
//! case, so `GHOSTBENCH_FUZZ_SEED=s GHOSTBENCH_FUZZ_CASES=n` replays it.

mod common;

use common::require_tool;
use ghostbench::analyze::{analysis as analyze, AnalyzeOptions};
use ghostbench::code::{self, CodeOptions};
use ghostbench::structs::{self, StructsOptions};
use object::{Object, ObjectSection};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Mutated inputs in CI.
const CI_CASES: usize = 10_000;
/// One input taking longer than this is a hang: the watchdog aborts the run.
const HANG: Duration = Duration::from_secs(60);
/// Peak resident memory allowed for the whole run.
const MEMORY_LIMIT: u64 = 1 << 30;

/// A seed ELF file and where its parts are.
struct Seed {
    name: String,
    path: PathBuf,
    bytes: Vec<u8>,
    /// (name, file offset, size, compressed) of sections with file data.
    sections: Vec<(String, usize, usize, bool)>,
    shoff: usize,
    shnum: usize,
}

fn compile(dir: &Path, name: &str, compiler: &str, args: &[&str]) -> Seed {
    let path = dir.join(name);
    let out = Command::new(compiler)
        .args(args)
        .arg("-o")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&path).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let sections = file
        .sections()
        .filter_map(|s| {
            let (offset, size) = s.file_range()?;
            let compressed = s
                .compressed_data()
                .is_ok_and(|c| c.format != object::CompressionFormat::None);
            Some((
                s.name().ok()?.to_string(),
                offset as usize,
                size as usize,
                compressed,
            ))
        })
        .collect();
    let le = |at: usize, n: usize| {
        bytes[at..at + n]
            .iter()
            .rev()
            .fold(0usize, |a, b| (a << 8) | usize::from(*b))
    };
    let (shoff, shnum) = (le(0x28, 8), le(0x3c, 2));
    Seed {
        name: name.to_string(),
        path,
        bytes,
        sections,
        shoff,
        shnum,
    }
}

/// A value a field is likely to break on.
fn nasty(rng: &mut ChaCha8Rng) -> u64 {
    match rng.random_range(0..8) {
        0 => 0,
        1 => u64::MAX,
        2 => u64::from(u32::MAX),
        3 => 1 << 34,
        4 => 1 << 31,
        5 => rng.random_range(1..64),
        6 => rng.random::<u64>(),
        _ => rng.random_range(0..1 << 20),
    }
}

fn put(bytes: &mut [u8], at: usize, width: usize, value: u64) {
    if let Some(slot) = bytes.get_mut(at..at + width) {
        slot.copy_from_slice(&value.to_le_bytes()[..width]);
    }
}

/// One mutation of a seed ELF file, and what it did.
fn mutate_elf(seed: &Seed, rng: &mut ChaCha8Rng) -> (Vec<u8>, String) {
    let mut bytes = seed.bytes.clone();
    let pick = |rng: &mut ChaCha8Rng, prefixes: &[&str]| {
        let wanted: Vec<_> = seed
            .sections
            .iter()
            .filter(|(n, _, size, _)| *size > 0 && prefixes.iter().any(|p| n.starts_with(p)))
            .collect();
        wanted[rng.random_range(0..wanted.len())].clone()
    };
    match rng.random_range(0..8) {
        0 | 1 => {
            // Byte flips in DWARF, symbol or code sections.
            let group: &[&str] = match rng.random_range(0..3) {
                0 => &[".debug_"],
                1 => &[".symtab", ".strtab", ".dynsym", ".dynstr"],
                _ => &[".text"],
            };
            let (name, offset, size, _) = pick(rng, group);
            let flips = rng.random_range(1..=16);
            for _ in 0..flips {
                let at = offset + rng.random_range(0..size);
                bytes[at] ^= 1 << rng.random_range(0..8);
            }
            (bytes, format!("{flips} bit flips in {name}"))
        }
        2 => {
            // A word of a DWARF section set to a value that breaks lengths and offsets.
            let (name, offset, size, _) = pick(rng, &[".debug_"]);
            let at = offset + rng.random_range(0..size);
            let value = nasty(rng);
            put(&mut bytes, at, 4, value);
            (bytes, format!("{name}+{}: u32 {value:#x}", at - offset))
        }
        3 => {
            let len = rng.random_range(0..bytes.len());
            bytes.truncate(len);
            (bytes, format!("truncated to {len} bytes"))
        }
        4 => {
            // A section header field: type, offset, size, link, entry size.
            let index = rng.random_range(0..seed.shnum);
            let (field, at, width) = [
                ("sh_name", 0, 4),
                ("sh_type", 4, 4),
                ("sh_offset", 24, 8),
                ("sh_size", 32, 8),
                ("sh_link", 40, 4),
                ("sh_entsize", 56, 8),
            ][rng.random_range(0..6)];
            let value = nasty(rng);
            put(&mut bytes, seed.shoff + index * 64 + at, width, value);
            (
                bytes,
                format!("section header {index}: {field} = {value:#x}"),
            )
        }
        5 => {
            // The ELF header's section table fields, or the table zeroed.
            let (field, at, width) = [
                ("e_shoff", 0x28, 8),
                ("e_shentsize", 0x3a, 2),
                ("e_shnum", 0x3c, 2),
                ("e_shstrndx", 0x3e, 2),
                ("table zeroed", 0, 0),
            ][rng.random_range(0..5)];
            if width == 0 {
                let end = (seed.shoff + seed.shnum * 64).min(bytes.len());
                bytes[seed.shoff..end].fill(0);
                return (bytes, "section header table zeroed".to_string());
            }
            let value = nasty(rng);
            put(&mut bytes, at, width, value);
            (bytes, format!("{field} = {value:#x}"))
        }
        _ => {
            // Compressed sections: a lying ch_size, a wrong ch_type, or a broken
            // stream; on a seed without them, a lying sh_size instead.
            let compressed: Vec<_> = seed.sections.iter().filter(|s| s.3).collect();
            if compressed.is_empty() {
                let index = rng.random_range(0..seed.shnum);
                let value = nasty(rng);
                put(&mut bytes, seed.shoff + index * 64 + 32, 8, value);
                return (
                    bytes,
                    format!("section header {index}: sh_size = {value:#x}"),
                );
            }
            let (name, offset, size, _) = compressed[rng.random_range(0..compressed.len())].clone();
            match rng.random_range(0..3) {
                0 => {
                    let claim =
                        [1u64 << 34, 1 << 31, 1 << 40, 1, 0, u64::MAX][rng.random_range(0..6)];
                    put(&mut bytes, offset + 8, 8, claim);
                    (bytes, format!("{name}: ch_size = {claim:#x}"))
                }
                1 => {
                    let kind = rng.random_range(0..4u64);
                    put(&mut bytes, offset, 4, kind);
                    (bytes, format!("{name}: ch_type = {kind}"))
                }
                _ => {
                    let at = offset + 24 + rng.random_range(0..size.saturating_sub(24).max(1));
                    if at < bytes.len() {
                        bytes[at] ^= 0xff;
                    }
                    (
                        bytes,
                        format!("{name}: stream byte {} inverted", at - offset),
                    )
                }
            }
        }
    }
}

/// The class of an ELF mutation, from its description, for the counts.
fn kind_of(what: &str) -> &'static str {
    let classes = [
        ("bit flips in .debug", "bit flips in DWARF"),
        ("bit flips in .text", "bit flips in .text"),
        ("bit flips in", "bit flips in symbols"),
        (": u32 ", "DWARF word set"),
        ("truncated", "truncated"),
        ("table zeroed", "section table zeroed"),
        ("section header", "section header field"),
        ("e_sh", "ELF header e_sh* field"),
        ("ch_size", "lying ch_size"),
        ("ch_type", "compressed: wrong ch_type"),
        ("stream byte", "compressed: stream broken"),
    ];
    classes
        .iter()
        .find(|(key, _)| what.contains(key))
        .map_or("other", |(_, kind)| kind)
}

/// One mutation of a text input: flips, cuts, numbers made hostile, lines
/// repeated or dropped.
fn mutate_text(text: &str, rng: &mut ChaCha8Rng) -> (Vec<u8>, String) {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let i = rng.random_range(0..lines.len());
    match rng.random_range(0..6) {
        0 => {
            let mut bytes = text.as_bytes().to_vec();
            for _ in 0..rng.random_range(1..8) {
                let at = rng.random_range(0..bytes.len());
                bytes[at] = rng.random();
            }
            return (bytes, "random bytes".to_string());
        }
        1 => {
            let cut = rng.random_range(0..text.len());
            return (text.as_bytes()[..cut].to_vec(), format!("cut at {cut}"));
        }
        2 => {
            let bad = [
                "nan",
                "inf",
                "-inf",
                "-1",
                "1e309",
                "-0",
                "1e-320",
                "",
                "99999999999999999999",
            ][rng.random_range(0..9)];
            let line = &lines[i];
            let digits: Vec<usize> = line
                .char_indices()
                .filter(|(_, c)| c.is_ascii_digit())
                .map(|(k, _)| k)
                .collect();
            if let Some(&at) = digits.get(rng.random_range(0..digits.len().max(1))) {
                let end = line[at..]
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .map_or(line.len(), |e| at + e);
                lines[i] = format!("{}{bad}{}", &line[..at], &line[end..]);
            }
        }
        3 => {
            let copies = rng.random_range(1..200);
            let line = lines[i].clone();
            lines.splice(i..i, std::iter::repeat(line).take(copies));
        }
        4 => {
            lines.remove(i);
        }
        _ => {
            let j = rng.random_range(0..lines.len());
            lines.swap(i, j);
        }
    }
    (lines.join("\n").into_bytes(), format!("line {}", i + 1))
}

/// A callgrind profile of `seed`'s functions, as `valgrind --tool=callgrind` writes.
fn callgrind_of(seed: &Seed) -> String {
    let file = object::File::parse(&*seed.bytes).unwrap();
    let mut text = format!(
        "# callgrind format\nversion: 1\npositions: line\nevents: Ir Dr\nob=(1) {}\nfl=(1) seed.c\n",
        seed.path.display()
    );
    use object::ObjectSymbol;
    for (k, symbol) in file
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
        .enumerate()
    {
        let name = symbol.name().unwrap();
        text += &format!(
            "fn=({}) {name}\n{} {} 3\n+1 {}\n",
            k + 2,
            k + 1,
            1000 * (k + 1),
            k
        );
        if k > 0 {
            text += &format!("cfn=(2)\ncalls=1 0\n{} 500\n", k + 1);
        }
    }
    text
}

fn perf_script_of(seed: &Seed) -> String {
    let file = object::File::parse(&*seed.bytes).unwrap();
    use object::ObjectSymbol;
    let mut text = String::new();
    for (k, symbol) in file
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
        .enumerate()
    {
        text += &format!(
            "seed 123 [000] 1.{k:03}:     250000 cycles:u:      {:x} {}+0x4 ({})\n",
            symbol.address() + 4,
            symbol.name().unwrap(),
            seed.path.display()
        );
    }
    text
}

const CSV: &str = "name,layout,round,metric,value\nold,0,0,wall,1.00\nnew,0,0,wall,1.10\nold,1,0,wall,1.02\nnew,1,0,wall,1.12\nold,0,1,wall,0.99\nnew,0,1,wall,1.09\nold,1,1,wall,1.01\nnew,1,1,wall,1.11\nold,2,0,wall,1.03\nnew,2,0,wall,1.13\n";

/// Peak resident memory of this process so far, in bytes: the larger of
/// getrusage's ru_maxrss and /proc/self/status's VmHWM (both in KiB).
fn peak_rss() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .unwrap_or(0);
    (usage.ru_maxrss as u64).max(hwm) * 1024
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string panic)".to_string())
}

#[derive(Default)]
struct Tally {
    inputs: usize,
    by_target: std::collections::BTreeMap<&'static str, (usize, usize)>,
    panics: Vec<String>,
    /// ELF inputs per class of mutation.
    kinds: std::collections::BTreeMap<&'static str, usize>,
    slowest: (Duration, String),
}

impl Tally {
    /// Run `f` on one input under `catch_unwind`, counting an error or a success.
    fn run<T>(&mut self, target: &'static str, case: &str, f: impl FnOnce() -> anyhow::Result<T>) {
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(f));
        let took = started.elapsed();
        if took > self.slowest.0 {
            self.slowest = (took, format!("{target}: {case}"));
        }
        let entry = self.by_target.entry(target).or_default();
        match outcome {
            Ok(Ok(_)) => entry.0 += 1,
            Ok(Err(_)) => entry.1 += 1,
            Err(payload) => self
                .panics
                .push(format!("{target}: {case}: {}", panic_message(&*payload))),
        }
    }
}

fn run_campaign(cases: usize, rng_seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s = |p: &str| root.join(p).to_str().unwrap().to_string();
    let seeds = [
        compile(
            d,
            "hazards",
            "gcc",
            &["-g", "-O1", &s("assets/hazards.c"), "-lpthread"],
        ),
        compile(
            d,
            "layouts-zlib",
            "gcc",
            &[
                "-g",
                "-O1",
                "-gz=zlib",
                &s("tests/fixtures/structs/layouts.c"),
            ],
        ),
        compile(
            d,
            "hot",
            "gcc",
            &["-g", "-O2", &s("tests/fixtures/code/hot.c")],
        ),
        compile(
            d,
            "layouts-cpp",
            "g++",
            &["-g", "-O1", &s("tests/fixtures/structs/layouts.cpp")],
        ),
    ];
    assert!(
        seeds[1]
            .sections
            .iter()
            .any(|s| s.0 == ".debug_info" && s.3),
        "-gz=zlib left .debug_info uncompressed"
    );
    let profiles: Vec<(String, usize)> = seeds
        .iter()
        .enumerate()
        .flat_map(|(k, seed)| [(callgrind_of(seed), k), (perf_script_of(seed), k)])
        .collect();
    let hyperfine =
        std::fs::read_to_string(root.join("tests/fixtures/analyze/hyperfine.json")).unwrap();
    let tables = [(CSV.to_string(), "csv"), (hyperfine, "json")];

    // The watchdog: a case running past HANG aborts the process, naming it.
    let epoch = Instant::now();
    let started_ms = Arc::new(AtomicU64::new(u64::MAX));
    let current = Arc::new(std::sync::Mutex::new(String::new()));
    {
        let (started_ms, current) = (started_ms.clone(), current.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            let at = started_ms.load(Ordering::Relaxed);
            if at != u64::MAX && epoch.elapsed().as_millis() as u64 > at + HANG.as_millis() as u64 {
                eprintln!("HANG: {} ran past {HANG:?}", current.lock().unwrap());
                std::process::abort();
            }
        });
    }
    let begin = |case: &str| {
        *current.lock().unwrap() = case.to_string();
        started_ms.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    };

    let mut rng = ChaCha8Rng::seed_from_u64(rng_seed);
    let mut tally = Tally::default();
    let no_progress_s = |_: &structs::Progress| {};
    let no_progress_c = |_: &code::Progress| {};
    let started = Instant::now();
    for case in 0..cases {
        let input = d.join(format!("case{case}"));
        let roll = rng.random_range(0..100);
        if roll < 70 {
            let seed = &seeds[rng.random_range(0..seeds.len())];
            let (bytes, what) = mutate_elf(seed, &mut rng);
            *tally.kinds.entry(kind_of(&what)).or_default() += 1;
            let label = format!("case {case} ({}: {what})", seed.name);
            std::fs::write(&input, bytes).unwrap();
            begin(&label);
            tally.run("structs", &label, || {
                structs::run(
                    &StructsOptions {
                        binary: input.clone(),
                        suggest: case % 2 == 0,
                        ..StructsOptions::default()
                    },
                    &no_progress_s,
                )
            });
            tally.run("code", &label, || {
                code::run(
                    &CodeOptions {
                        binary: input.clone(),
                        diff: (case % 3 == 0).then(|| seed.path.clone()),
                        ..CodeOptions::default()
                    },
                    &no_progress_c,
                )
                .and_then(|report| Ok(serde_json::to_string(&report)?))
            });
        } else if roll < 85 {
            let (text, k) = &profiles[rng.random_range(0..profiles.len())];
            let (bytes, what) = mutate_text(text, &mut rng);
            let label = format!("case {case} (profile of {}: {what})", seeds[*k].name);
            std::fs::write(&input, bytes).unwrap();
            begin(&label);
            tally.run("code --hot", &label, || {
                code::run(
                    &CodeOptions {
                        binary: seeds[*k].path.clone(),
                        hot: Some(input.clone()),
                        ..CodeOptions::default()
                    },
                    &no_progress_c,
                )
            });
        } else {
            let (text, kind) = &tables[rng.random_range(0..tables.len())];
            let (bytes, what) = mutate_text(text, &mut rng);
            let label = format!("case {case} ({kind}: {what})");
            let input = input.with_extension(kind);
            std::fs::write(&input, bytes).unwrap();
            begin(&label);
            tally.run("analyze", &label, || {
                analyze::run(&AnalyzeOptions {
                    files: vec![input.clone()],
                    ..AnalyzeOptions::default()
                })
            });
        }
        started_ms.store(u64::MAX, Ordering::Relaxed);
        tally.inputs += 1;
        let _ = std::fs::remove_file(&input);
        let _ = std::fs::remove_file(input.with_extension("csv"));
        let _ = std::fs::remove_file(input.with_extension("json"));
    }
    let peak = peak_rss();
    // Straight to the terminal (past libtest's capture): the figures BENCHMARKS.md records.
    use std::io::Write;
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "fuzz: seed {rng_seed}, {} inputs in {:.1} s, {} panics, peak RSS {} MiB, slowest {:.2} s ({})",
        tally.inputs,
        started.elapsed().as_secs_f64(),
        tally.panics.len(),
        peak >> 20,
        tally.slowest.0.as_secs_f64(),
        tally.slowest.1
    );
    for (target, (ok, errors)) in &tally.by_target {
        let _ = writeln!(err, "fuzz:   {target}: {ok} results, {errors} errors");
    }
    for (kind, n) in &tally.kinds {
        let _ = writeln!(err, "fuzz:   ELF {kind}: {n}");
    }
    assert!(
        tally.panics.is_empty(),
        "panics:\n{}",
        tally.panics.join("\n")
    );
    assert!(peak > 0, "no peak RSS measured");
    assert!(peak < MEMORY_LIMIT, "peak RSS {} MiB", peak >> 20);
    assert!(tally.inputs >= cases);
}

#[test]
fn mutated_binaries_profiles_and_tables_never_panic_hang_or_blow_up_memory() {
    if !require_tool("gcc") || !require_tool("g++") {
        return;
    }
    let cases = std::env::var("GHOSTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CI_CASES);
    let seed = std::env::var("GHOSTBENCH_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(13);
    run_campaign(cases, seed);
}
