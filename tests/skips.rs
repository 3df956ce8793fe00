//! The skip path, proved (issue 23, must-show 6): a test that needs mold
//! (or ld.lld) runs when it is on PATH, and with mold, ld.lld, clang and
//! valgrind taken off PATH it reports itself `SKIPPED … missing …` and
//! passes, or fails under `CI=true`, as `tests/common/skip.rs` promises.
//! The proof runs this same test binary again on the mold test alone, with
//! a PATH of links to every program on the current PATH but those.

mod common;

use object::{Object, ObjectSymbol};
use std::path::Path;
use std::process::Command;

/// The programs taken off PATH: the linkers that shuffle sections, clang's
/// and valgrind's.
fn removed(name: &str) -> bool {
    name.contains("mold")
        || name == "ld.lld"
        || name == "lld"
        || name.starts_with("clang")
        || name.starts_with("valgrind")
}

/// A directory of links to every program on PATH except the [`removed`] ones.
fn reduced_path(dir: &Path) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for from in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&from) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let link = dir.join(&name);
            if removed(&name.to_string_lossy()) || link.symlink_metadata().is_ok() {
                continue;
            }
            std::os::unix::fs::symlink(entry.path(), link).unwrap();
        }
    }
}

/// The order of `f0` … `f7` in a binary linked with `--shuffle-sections`
/// and `seed`.
fn function_order(dir: &Path, linker: &str, seed: u32) -> Vec<String> {
    let source = dir.join("f.c");
    let mut c = String::new();
    for i in 0..8 {
        c += &format!("__attribute__((noinline)) int f{i}(int x) {{ return x * {i} + 1; }}\n");
    }
    c += "int main(int argc, char **argv) { (void)argv; return f0(argc) + f1(argc) + f2(argc) + f3(argc) + f4(argc) + f5(argc) + f6(argc) + f7(argc); }\n";
    std::fs::write(&source, c).unwrap();
    let out = dir.join(format!("f{seed}"));
    let (fuse, shuffle) = if linker == "mold" {
        ("-fuse-ld=mold", format!("-Wl,--shuffle-sections={seed}"))
    } else {
        ("-fuse-ld=lld", format!("-Wl,--shuffle-sections=*={seed}"))
    };
    let status = Command::new("cc")
        .args(["-O1", "-ffunction-sections", fuse, &shuffle, "-o"])
        .arg(&out)
        .arg(&source)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc with {linker} failed");
    let bytes = std::fs::read(&out).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let mut functions: Vec<(u64, String)> = file
        .symbols()
        .filter_map(|s| {
            let name = s.name().ok()?;
            (name.len() == 2 && name.starts_with('f')).then(|| (s.address(), name.to_string()))
        })
        .collect();
    functions.sort();
    assert_eq!(functions.len(), 8, "{functions:?}");
    functions.into_iter().map(|(_, n)| n).collect()
}

/// The layout source `shuffle` rests on this: two seeds, two orders.
#[test]
fn shuffle_sections_reorder_functions_by_seed() {
    let Some(linker) = common::require_any(&["mold", "ld.lld"]) else {
        return;
    };
    if !common::require_tool("cc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let one = function_order(dir.path(), linker, 1);
    let two = function_order(dir.path(), linker, 2);
    assert_ne!(one, two, "seeds 1 and 2 gave the same order");
    assert_eq!(one, function_order(dir.path(), linker, 1), "seed 1 twice");
}

#[test]
fn without_mold_clang_and_valgrind_the_test_is_skipped_visibly() {
    if std::env::var_os("GHOSTBENCH_SKIPS_CHILD").is_some() {
        return; // the run below, of this binary, runs the mold test only
    }
    let dir = tempfile::tempdir().unwrap();
    reduced_path(dir.path());
    for tool in ["mold", "ld.mold", "clang", "valgrind"] {
        assert!(!dir.path().join(tool).exists(), "{tool} left on PATH");
    }
    let child = |ci: Option<&str>| {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["shuffle_sections_reorder_functions_by_seed", "--exact"])
            .env("PATH", dir.path())
            .env("GHOSTBENCH_SKIPS_CHILD", "1")
            .env_remove("CI");
        if let Some(ci) = ci {
            command.env("CI", ci);
        }
        let out = command.output().expect("the test binary runs");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), all)
    };
    let (passed, output) = child(None);
    assert!(passed, "a skip must not fail the run: {output}");
    assert!(
        output
            .contains("SKIPPED shuffle_sections_reorder_functions_by_seed: missing mold or ld.lld"),
        "{output}"
    );
    assert!(
        output.contains(
            "1 skipped (missing: mold or ld.lld): shuffle_sections_reorder_functions_by_seed"
        ),
        "{output}"
    );
    assert!(output.contains("test result: ok. 1 passed"), "{output}");
    // Under CI=true, where every tool is installed, the same skip fails.
    let (passed, output) = child(Some("true"));
    assert!(!passed, "CI=true must fail a skip: {output}");
    assert!(
        output.contains("CI=true and test shuffle_sections_reorder_functions_by_seed would be skipped: missing mold or ld.lld"),
        "{output}"
    );
}
