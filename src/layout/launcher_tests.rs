//! Unit tests of the compiler launcher (`launcher.rs`): the call reader, the
//! counts' log, and real compile-and-relink and realign runs.

use super::*;

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

#[test]
fn compilers_are_recognised_by_name() {
    for name in [
        "cc",
        "gcc",
        "g++-12",
        "/usr/bin/clang++",
        "x86_64-linux-gnu-gcc-12",
        "clang-16",
    ] {
        assert!(is_compiler(name), "{name}");
    }
    for name in ["make", "sh", "cmake", "ld", "gccgo"] {
        assert!(!is_compiler(name), "{name}");
    }
}

#[test]
fn a_call_splits_into_compile_flags_sources_and_link_words() {
    let argv = words("cc -O2 -Iinc -D X=1 /pad16.o -fuse-ld=mold -Wl,--shuffle-sections=3 -falign-functions=32 a.c b.cpp -o out -lm");
    let call = read(&argv).unwrap();
    assert_eq!(call.sources, [9, 10]);
    assert_eq!(
        call.compile_flags,
        words("-O2 -Iinc -D X=1 -falign-functions=32")
    );
    assert_eq!(call.output.as_deref(), Some("out"));
    assert!(!call.compile_only);
    assert!(read(&words("cc -E a.c")).is_none());
    assert!(read(&words("cc -c a.c b.c")).is_none());
    let link = read(&words("cc a.o b.o -o bin")).unwrap();
    assert!(link.sources.is_empty());
}

#[test]
fn counts_add_up_through_the_log() {
    let one = Counts {
        compiles: 2,
        compile_hits: 1,
        links: 1,
        compile_s: 0.5,
        link_s: 0.25,
        realigned: 3,
    };
    let text = format!("{}garbage\n{}", one.log_line(), one.log_line());
    let sum = Counts::from_log(&text);
    assert_eq!((sum.compiles, sum.compile_hits, sum.links), (4, 2, 2));
    assert_eq!(sum.realigned, 6);
    // A log of the five fields before `realigned` still reads.
    assert_eq!(Counts::from_log("1 2 3 0.5 0.5\n").links, 3);
    assert!((sum.compile_s - 1.0).abs() < 1e-9 && (sum.link_s - 0.5).abs() < 1e-9);
}

#[test]
fn link_only_variants_compile_once() {
    if !crate::test_skip::require_tool("cc") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::open(tmp.path()).unwrap();
    let src = tmp.path().join("x.c");
    std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    let mut total = Counts::default();
    for (seed, extra) in [(0, ""), (1, "-Wl,-z,norelro"), (2, "-no-pie")] {
        let dir = tmp.path().join(format!("v{seed}"));
        std::fs::create_dir(&dir).unwrap();
        let argv = words(&format!("cc -O2 {extra} {} -o bin", src.display()));
        let counts = run(&argv, &[], &dir, &cache, true, None).unwrap();
        assert!(dir.join("bin").exists(), "seed {seed}: {counts:?}");
        total.add(&counts);
    }
    assert_eq!((total.compiles, total.compile_hits, total.links), (1, 2, 3));
    // Another alignment is no compile: the assembly is realigned.
    let dir = tmp.path().join("v3");
    std::fs::create_dir(&dir).unwrap();
    let argv = words(&format!(
        "cc -O2 -falign-functions=64 {} -o bin",
        src.display()
    ));
    let counts = run(&argv, &[], &dir, &cache, true, None).unwrap();
    assert_eq!((counts.compiles, counts.realigned), (0, 1), "{counts:?}");
    // Another compile flag is another compile.
    let argv = words(&format!("cc -O2 -fno-inline {} -o bin", src.display()));
    assert_eq!(
        run(&argv, &[], &dir, &cache, true, None).unwrap().compiles,
        1
    );
    // A failing compile is the compiler's failure, with its output.
    std::fs::write(&src, "int main(void) { return }\n").unwrap();
    let failure = run(&argv, &[], &dir, &cache, true, None).unwrap_err();
    assert!(matches!(failure.error, RunError::Exit(_)), "{failure:?}");
}

/// A source with plain, nested and branchy loops and a cold path.
const LOOPS: &str = "#include <stdlib.h>\n\
static int t[64];\n\
__attribute__((cold, noinline)) static void die(void) { abort(); }\n\
int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * a[i]; return s; }\n\
int walk(int n) { int s = 0; for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) { if ((i ^ j) & 1) s += t[(i + j) & 63]; else if (j > 1000) die(); else s -= j; } return s; }\n\
int main(int argc, char **argv) { (void)argv; int a[32]; for (int i = 0; i < 32; i++) a[i] = i + argc; return sum(a, 32) + walk(argc * 9); }\n";

/// Every alignment of a source comes from one compile per other flag set,
/// and each object is byte for byte the one a real compile makes.
fn realigned_objects_equal_real_compiles(compiler: &str, file: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::open(tmp.path()).unwrap();
    let src = tmp.path().join(file);
    std::fs::write(&src, LOOPS).unwrap();
    let aligns = [
        "",
        "-falign-functions=16 -falign-loops=16",
        "-falign-functions=32 -falign-loops=32",
        "-falign-functions=64 -falign-loops=64",
        "-falign-functions=64 -falign-loops=64 -falign-functions=32",
    ];
    let mut total = Counts::default();
    for (s, sections) in ["", "-ffunction-sections"].iter().enumerate() {
        for (a, align) in aligns.iter().enumerate() {
            for debug in ["", "-g"] {
                let dir = tmp.path().join(format!("v{s}{a}{}", debug.len()));
                std::fs::create_dir(&dir).unwrap();
                let flags = format!("-O2 {debug} {sections} {align}");
                let argv = words(&format!("{compiler} {flags} -c {} -o x.o", src.display()));
                let counts = run(&argv, &[], &dir, &cache, true, None).unwrap();
                total.add(&counts);
                let real = words(&format!(
                    "{compiler} {flags} -c {} -o real.o",
                    src.display()
                ));
                exec_quiet(&real, &[], &dir, None).unwrap();
                let (ours, theirs) = (
                    std::fs::read(dir.join("x.o")).unwrap(),
                    std::fs::read(dir.join("real.o")).unwrap(),
                );
                assert!(
                    ours == theirs,
                    "{compiler} {flags}: the realigned object differs"
                );
            }
        }
    }
    // Without -g: one compile per sections setting, every object realigned.
    // With -g, GCC records its switches in DW_AT_producer (the markers would
    // be in it), so the probe refuses and all 10 compile for real.
    assert_eq!((total.compiles, total.realigned), (2 + 10, 10), "{total:?}");
}

#[test]
fn alignment_variants_are_realigned_from_one_compile() {
    for (compiler, file) in [("gcc", "x.c"), ("g++", "x.cpp"), ("g++-11", "x.cc")] {
        if crate::test_skip::require_tool(compiler) {
            realigned_objects_equal_real_compiles(compiler, file);
        }
    }
}

#[test]
fn a_compiler_whose_mapping_cannot_be_learned_compiles_for_real() {
    if !crate::test_skip::require_tool("cc") {
        return;
    }
    // A "compiler" whose assembly differs at more than alignment lines:
    // gcc that adds a comment naming its arguments.
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::open(tmp.path()).unwrap();
    let fake = tmp.path().join("cc");
    std::fs::write(
        &fake,
        "#!/bin/sh\nout=''; prev=''; for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\n\
         gcc \"$@\" || exit $?\ncase \"$*\" in *' -S '*) echo \"# $*\" >> \"$out\";; esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let src = tmp.path().join("x.c");
    std::fs::write(&src, LOOPS).unwrap();
    let mut total = Counts::default();
    for align in ["", "-falign-functions=32 -falign-loops=32"] {
        let argv = words(&format!(
            "{} -O2 {align} -c {} -o x.o",
            fake.display(),
            src.display()
        ));
        total.add(&run(&argv, &[], tmp.path(), &cache, true, None).unwrap());
        assert!(tmp.path().join("x.o").exists());
    }
    assert_eq!((total.compiles, total.realigned), (2, 0), "{total:?}");
}
