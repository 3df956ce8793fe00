//! Alignment variants without recompiling (docs/architecture.md §5).
//!
//! GCC's code does not depend on `-falign-functions`/`-falign-loops`: only
//! the `.p2align` directives it emits before functions and loop heads do
//! (measured on the SQLite amalgamation at -O2: the assemblies under
//! alignments 16, 32 and the default differ from one compiled with marker
//! alignments in exactly those lines). So the launcher compiles a source once
//! to assembly with *marker* alignments that no build asks for
//! (`-falign-functions=4096 -falign-loops=2048`, printed `.p2align 12` and
//! `.p2align 11`), and makes each variant's object by replacing the marker
//! lines and assembling: one compile serves every alignment.
//!
//! What a marker line becomes is not assumed: it is learned per compiler,
//! flags and alignment from a small probe source compiled both ways
//! ([`learn`]). When the two assemblies differ anywhere but at marker lines,
//! or a marker form the probe did not show turns up, the launcher compiles
//! for real. This module holds the pure parts (the split of the flags, the
//! learning, the rewrite, the probe's text) and the job that makes one
//! object; `launcher` decides when, and runs the compiler ([`Runner`]).

use super::cache::{self, Cache, Key, Kind};
use std::path::Path;

/// The marker flags, and the lines GCC prints for them.
pub const FUNCTION_MARKER: &str = "-falign-functions=4096";
pub const LOOP_MARKER: &str = "-falign-loops=2048";
const FUNCTION_LINE: &str = "\t.p2align 12";
const LOOP_LINE: &str = "\t.p2align 11";

/// Whether a compile flag sets function or loop alignment.
pub fn is_align_word(word: &str) -> bool {
    word.starts_with("-falign-functions")
        || word.starts_with("-falign-loops")
        || word == "-fno-align-functions"
        || word == "-fno-align-loops"
}

/// The compile flags without their alignment words, and those words; None
/// when realigning cannot apply (link-time optimisation: the object holds
/// the compiler's intermediate form, not code).
pub fn split(flags: &[String]) -> Option<(Vec<String>, Vec<String>)> {
    let lto = flags
        .iter()
        .rev()
        .find(|w| w.starts_with("-flto") || *w == "-fno-lto")
        .is_some_and(|w| w.starts_with("-flto"));
    if lto {
        return None;
    }
    let (align, rest): (Vec<String>, Vec<String>) =
        flags.iter().cloned().partition(|w| is_align_word(w));
    Some((rest, align))
}

/// The flags of the marker compile: the rest, then the markers.
pub fn marker_flags(rest: &[String]) -> Vec<String> {
    let mut flags = rest.to_vec();
    flags.push(FUNCTION_MARKER.into());
    flags.push(LOOP_MARKER.into());
    flags
}

/// The lines the markers become under one set of alignment flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub function: String,
    pub loops: String,
}

impl Mapping {
    /// Two lines, for the cache.
    pub fn to_text(&self) -> String {
        format!("{}\n{}\n", self.function, self.loops)
    }

    pub fn from_text(text: &str) -> Option<Mapping> {
        let mut lines = text.lines();
        let function = lines.next()?.to_string();
        let loops = lines.next()?.to_string();
        (valid_directive(&function) && valid_directive(&loops))
            .then_some(Mapping { function, loops })
    }
}

/// A line the rewrite may put in: one `.p2align` directive, nothing else.
fn valid_directive(line: &str) -> bool {
    line.strip_prefix("\t.p2align ")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == ','))
}

/// What the markers become, from the same probe compiled with the markers
/// (`marked`) and with the alignment flags asked for (`target`). None when
/// the two differ anywhere but at marker lines, when a marker maps to two
/// different lines, or when the probe shows no function or no loop marker.
pub fn learn(marked: &str, target: &str) -> Option<Mapping> {
    let (marked, target): (Vec<&str>, Vec<&str>) =
        (marked.lines().collect(), target.lines().collect());
    if marked.len() != target.len() {
        return None;
    }
    let (mut function, mut loops): (Option<&str>, Option<&str>) = (None, None);
    for (m, t) in marked.iter().zip(&target) {
        let slot = match *m {
            FUNCTION_LINE => &mut function,
            LOOP_LINE => &mut loops,
            _ if m == t => continue,
            _ => return None,
        };
        if !valid_directive(t) || slot.is_some_and(|seen| seen != *t) {
            return None;
        }
        *slot = Some(t);
    }
    Some(Mapping {
        function: function?.to_string(),
        loops: loops?.to_string(),
    })
}

/// The assembly of a marker compile with its marker lines replaced; None
/// when a marker appears in a form the mapping does not cover (e.g. with a
/// maximum skip), so that the launcher compiles for real instead.
pub fn rewrite(marked: &str, mapping: &Mapping) -> Option<String> {
    let mut out = String::with_capacity(marked.len());
    for line in marked.split_inclusive('\n') {
        let (text, end) = match line.strip_suffix('\n') {
            Some(text) => (text, "\n"),
            None => (line, ""),
        };
        let replaced = match text {
            FUNCTION_LINE => mapping.function.as_str(),
            LOOP_LINE => mapping.loops.as_str(),
            _ if text.starts_with("\t.p2align 12,") || text.starts_with("\t.p2align 11,") => {
                return None
            }
            _ => text,
        };
        out.push_str(replaced);
        out.push_str(end);
    }
    Some(out)
}

/// Whether the launcher realigns sources of this extension (C and C++,
/// not assembly).
pub fn realignable(source: &str) -> bool {
    let ext = std::path::Path::new(source)
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    matches!(
        ext.as_str(),
        "c" | "cc" | "cpp" | "cxx" | "c++" | "C" | "i" | "ii"
    )
}

/// The probe: valid C and C++, with plain, nested, branchy and switch loops,
/// a cold function and `main` (which GCC puts in `.text.startup`), so that
/// every kind of aligned label the compiler emits appears in it.
pub const PROBE: &str = r#"#include <stdlib.h>
static int ghostbench_tab[256];
__attribute__((cold, noinline)) void ghostbench_fail(const char *m) { (void)m; abort(); }
static inline int ghostbench_sq(int x) { return x * x; }
int ghostbench_sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += ghostbench_sq(a[i]); return s; }
int ghostbench_branchy(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { if (a[i] > 5) s += a[i]; else if (a[i] < -3) s -= ghostbench_tab[a[i] & 255]; else ghostbench_fail("x"); } return s; }
int ghostbench_nested(int n) { int s = 0; for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) s += i ^ j; while (n > 1) n = (n & 1) ? 3 * n + 1 : n / 2; return s; }
int ghostbench_switch(int k, int n) { int s = 0; do { switch (k++ & 7) { case 0: s += 3; break; case 1: s ^= 5; break; case 2: s -= 7; break; case 3: s *= 3; break; default: s++; } } while (--n); return s; }
int main(int argc, char **argv) { int a[64]; (void)argv; for (int i = 0; i < 64; i++) a[i] = i - argc; if (argc > 3) ghostbench_fail("y"); return ghostbench_sum(a, 64) + ghostbench_branchy(a, 64) + ghostbench_nested(argc * 10) + ghostbench_switch(argc, 100); }
"#;

/// `PROGRAM FLAGS… MODE INPUT -o OUTPUT`: a compiler command (MODE is `-c`,
/// `-S` or `-E`).
pub fn command(
    program: &str,
    flags: &[String],
    mode: &str,
    input: &str,
    output: &Path,
) -> Vec<String> {
    let mut argv = vec![program.to_string()];
    argv.extend(flags.iter().cloned());
    argv.extend([
        mode.to_string(),
        input.to_string(),
        "-o".into(),
        output.display().to_string(),
    ]);
    argv
}

/// How the launcher runs a compiler command for a job: true when it exited
/// 0; `forward` passes its output on as a real compile's would be.
pub trait Runner {
    fn run(&self, argv: &[String], forward: bool) -> bool;
}

/// What realigning one object did.
#[derive(Debug, Default)]
pub struct Realigned {
    /// The marker assembly was compiled (not taken from the cache).
    pub compiled: bool,
    /// The object was made; false means compile it for real.
    pub done: bool,
}

/// One object to make from a marker assembly.
pub struct Job<'a> {
    pub program: &'a str,
    pub identity: &'a str,
    /// The compiler variables' values (part of the probe's key).
    pub variables: &'a [(&'static str, String)],
    pub source: &'a str,
    pub rest: &'a [String],
    pub align: &'a [String],
    pub marked: &'a [String],
    pub asm_key: &'a str,
    pub object: &'a Path,
    pub scratch: &'a Path,
    pub n: usize,
}

impl Job<'_> {
    /// Make the object from the marker assembly (compiled, or from the
    /// cache), its marker lines replaced; not done when the compiler's
    /// mapping is unknown or anything fails (the caller compiles for real).
    pub fn run(&self, cache: &Cache, reuse: bool, runner: &dyn Runner) -> Realigned {
        let mut result = Realigned::default();
        let Some(mapping) = self.mapping(cache, runner) else {
            return result;
        };
        let marked = self.scratch.join(format!("{}.marked.s", self.n));
        {
            let slot = cache::key_lock(self.asm_key);
            let _compiling = slot.lock().unwrap_or_else(|e| e.into_inner());
            if !(reuse && cache.fetch(Kind::Assembly, self.asm_key, &marked)) {
                let compile = command(self.program, self.marked, "-S", self.source, &marked);
                result.compiled = true;
                if !runner.run(&compile, true) {
                    return result;
                }
                let _ = cache.put(Kind::Assembly, self.asm_key, &marked);
            }
        }
        let Some(text) = std::fs::read_to_string(&marked)
            .ok()
            .and_then(|text| rewrite(&text, &mapping))
        else {
            return result;
        };
        let assembly = self.scratch.join(format!("{}.s", self.n));
        if std::fs::write(&assembly, text).is_err() {
            return result;
        }
        let assemble = command(
            self.program,
            self.rest,
            "-c",
            &assembly.display().to_string(),
            self.object,
        );
        result.done = runner.run(&assemble, false);
        let _ = std::fs::remove_file(&assembly);
        let _ = std::fs::remove_file(&marked);
        result
    }

    /// What the marker lines become under this call's alignment flags, for
    /// this compiler and these flags: learned from the probe once and kept
    /// in this process and in the cache ("none" when it cannot be learned).
    fn mapping(&self, cache: &Cache, runner: &dyn Runner) -> Option<Mapping> {
        static KNOWN: std::sync::OnceLock<
            std::sync::Mutex<std::collections::HashMap<String, Option<Mapping>>>,
        > = std::sync::OnceLock::new();
        let cplusplus = !matches!(
            Path::new(self.source).extension().and_then(|e| e.to_str()),
            Some("c" | "i")
        );
        let mut key = Key::new(b"ghostbench realign probe, second half");
        key.write(PROBE.as_bytes());
        key.write(self.identity.as_bytes());
        key.write(if cplusplus { b"c++" } else { b"c" });
        for word in self.rest {
            key.write(word.as_bytes());
        }
        key.write(b"\0alignment:");
        for word in self.align {
            key.write(word.as_bytes());
        }
        for (name, value) in self.variables {
            key.write(name.as_bytes());
            key.write(value.as_bytes());
        }
        let key = key.finish();
        let slot = cache::key_lock(&key);
        let _probing = slot.lock().unwrap_or_else(|e| e.into_inner());
        let known = KNOWN.get_or_init(Default::default);
        if let Some(m) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return m.clone();
        }
        let stored = self.scratch.join("probe.map");
        let mapping = if cache.fetch(Kind::Probe, &key, &stored) {
            std::fs::read_to_string(&stored)
                .ok()
                .and_then(|text| Mapping::from_text(&text))
        } else {
            let learned = self.probe(cplusplus, runner);
            let text = learned.as_ref().map_or("none\n".into(), |m| m.to_text());
            if std::fs::write(&stored, text).is_ok() {
                let _ = cache.put(Kind::Probe, &key, &stored);
            }
            learned
        };
        known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, mapping.clone());
        mapping
    }

    /// Compile the probe with the markers and with this call's alignment
    /// (warnings off: the user's `-Werror` is not for the probe) and learn.
    fn probe(&self, cplusplus: bool, runner: &dyn Runner) -> Option<Mapping> {
        let source = self
            .scratch
            .join(if cplusplus { "probe.cpp" } else { "probe.c" });
        std::fs::write(&source, PROBE).ok()?;
        let assemble = |flags: Vec<String>, name: &str| -> Option<String> {
            let out = self.scratch.join(name);
            let mut flags = flags;
            flags.push("-w".into());
            let argv = command(
                self.program,
                &flags,
                "-S",
                &source.display().to_string(),
                &out,
            );
            runner.run(&argv, false).then_some(())?;
            std::fs::read_to_string(&out).ok()
        };
        let marked = assemble(self.marked.to_vec(), "probe.marked.s")?;
        let target = assemble(
            self.rest.iter().chain(self.align).cloned().collect(),
            "probe.target.s",
        )?;
        learn(&marked, &target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_flags_split_and_lto_is_left_alone() {
        let (rest, align) = split(&words(
            "-O2 -falign-functions=64 -Ifoo -ffunction-sections -falign-loops=32 -fno-align-functions",
        ))
        .unwrap();
        assert_eq!(rest, words("-O2 -Ifoo -ffunction-sections"));
        assert_eq!(
            align,
            words("-falign-functions=64 -falign-loops=32 -fno-align-functions")
        );
        assert!(split(&words("-O2 -flto -falign-functions=32")).is_none());
        assert!(split(&words("-O2 -flto=auto")).is_none());
        assert!(split(&words("-O2 -flto -fno-lto")).is_some());
        assert!(!is_align_word("-falign-jumps=16"));
        assert_eq!(
            marker_flags(&words("-O2")),
            words("-O2 -falign-functions=4096 -falign-loops=2048")
        );
    }

    // The assemblies below are GCC 12's for a function with one loop, cut
    // to the lines that matter (the real test compiles: tests/layout_builds.rs).
    const MARKED: &str =
        "\t.text\n\t.p2align 12\n\t.globl\tf\nf:\n\t.p2align 11\n\t.p2align 3\n.L3:\n\tret\n";

    #[test]
    fn a_mapping_is_learned_from_the_lines_that_differ() {
        let default =
            "\t.text\n\t.p2align 4\n\t.globl\tf\nf:\n\t.p2align 4,,10\n\t.p2align 3\n.L3:\n\tret\n";
        let m = learn(MARKED, default).unwrap();
        assert_eq!(m.function, "\t.p2align 4");
        assert_eq!(m.loops, "\t.p2align 4,,10");
        assert_eq!(rewrite(MARKED, &m).unwrap(), default);
        assert_eq!(Mapping::from_text(&m.to_text()), Some(m));
    }

    #[test]
    fn anything_but_a_marker_line_differing_is_refused() {
        // Other code: the compiler's output depends on the alignment.
        let other =
            "\t.text\n\t.p2align 5\n\t.globl\tf\nf:\n\t.p2align 5\n\t.p2align 3\n.L3:\n\tnop\n";
        assert_eq!(learn(MARKED, other), None);
        // A different length.
        assert_eq!(learn(MARKED, "\t.text\n"), None);
        // A marker mapped two ways.
        let two = format!("{MARKED}\t.p2align 12\n");
        let t = "\t.text\n\t.p2align 5\n\t.globl\tf\nf:\n\t.p2align 5\n\t.p2align 3\n.L3:\n\tret\n\t.p2align 6\n";
        assert_eq!(learn(&two, t), None);
        // A replacement that is not one directive.
        let odd = "\t.text\n\t.p2align 5\n\tnop\n\t.globl\tf\nf:\n";
        assert_eq!(
            learn("\t.text\n\t.p2align 12\n\t.globl\tf\nf:\n", odd),
            None
        );
        // No loop marker in the probe: the loop mapping is unknown.
        assert_eq!(
            learn("\t.p2align 12\nf:\n\tret\n", "\t.p2align 5\nf:\n\tret\n"),
            None
        );
        assert_eq!(Mapping::from_text("\t.p2align 5\nnop\n"), None);
    }

    #[test]
    fn a_marker_in_an_unlearned_form_stops_the_rewrite() {
        let m = Mapping {
            function: "\t.p2align 5".into(),
            loops: "\t.p2align 5".into(),
        };
        let text = rewrite(MARKED, &m).unwrap();
        assert!(!text.contains(".p2align 12") && !text.contains(".p2align 11"));
        assert_eq!(text.matches("\t.p2align 5\n").count(), 2);
        assert_eq!(rewrite("\t.p2align 11,,2047\n", &m), None);
        assert_eq!(rewrite("x", &m).as_deref(), Some("x"));
        assert!(realignable("a/b.cpp") && !realignable("x.s") && !realignable("x.S"));
    }
}
