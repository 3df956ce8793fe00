//! Regression tests for the hostile inputs of issue 13: each gets a
//! documented exit code and a one-line cause, and loses nothing gathered.
//! (Durations past a year and unwritable report paths are in tests/cli.rs.)

mod common;

use common::{ghostbench, require_tool};
use std::path::{Path, PathBuf};
use std::process::Command;

fn gcc(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/structs/layouts.c");
    let status = Command::new("gcc")
        .args(["-g", "-O1"])
        .args(extra)
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    out
}

/// The exit code and the stderr of `ghostbench ARGS`, which must be one line.
fn fails(args: &[&str]) -> (i32, String) {
    let out = ghostbench().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    (out.status.code().unwrap(), stderr)
}

fn le(bytes: &[u8], at: usize, n: usize) -> u64 {
    bytes[at..at + n]
        .iter()
        .rev()
        .fold(0, |a, b| (a << 8) | u64::from(*b))
}

/// The file offset of section `name`'s header... and of its data.
fn section(bytes: &[u8], name: &str) -> (usize, usize) {
    let (shoff, shnum, shstrndx) = (
        le(bytes, 0x28, 8) as usize,
        le(bytes, 0x3c, 2) as usize,
        le(bytes, 0x3e, 2) as usize,
    );
    let names = le(bytes, shoff + shstrndx * 64 + 24, 8) as usize;
    (0..shnum)
        .map(|i| shoff + i * 64)
        .find(|&h| {
            let at = names + le(bytes, h, 4) as usize;
            bytes[at..].starts_with(name.as_bytes()) && bytes[at + name.len()] == 0
        })
        .map(|h| (h, le(bytes, h + 24, 8) as usize))
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn a_lying_compression_header_is_refused_before_any_allocation() {
    if !require_tool("gcc") || !require_tool("objcopy") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let plain = gcc(dir.path(), "plain", &[]);
    let zlib = dir.path().join("zlib");
    let status = Command::new("objcopy")
        .arg("--compress-debug-sections=zlib")
        .arg(&plain)
        .arg(&zlib)
        .status()
        .unwrap();
    assert!(status.success());
    let mut bytes = std::fs::read(&zlib).unwrap();
    let (_, data) = section(&bytes, ".debug_info");
    assert_eq!(le(&bytes, data, 4), 1, "ELFCOMPRESS_ZLIB");
    // Elf64_Chdr.ch_size: 16 GiB, as in the issue (it cost 16.8 GB before failing).
    bytes[data + 8..data + 16].copy_from_slice(&(16u64 << 30).to_le_bytes());
    let liar = dir.path().join("liar");
    std::fs::write(&liar, &bytes).unwrap();
    // Under a 1 GiB address-space limit a 16 GiB allocation could not even be tried.
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576; exec \"$0\" structs \"$1\"")
        .arg(assert_cmd::cargo::cargo_bin("ghostbench"))
        .arg(&liar)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("truncated or corrupt ELF: section .debug_info: its compression header claims 17179869184 bytes"),
        "{stderr}"
    );
    // The same file with its honest header reads.
    ghostbench().arg("structs").arg(&zlib).assert().success();
}

#[test]
fn broken_section_headers_are_called_broken_not_stripped_or_without_debug_info() {
    if !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let good = gcc(dir.path(), "good", &[]);
    let bytes = std::fs::read(&good).unwrap();
    let shoff = le(&bytes, 0x28, 8) as usize;
    let shnum = le(&bytes, 0x3c, 2) as usize;
    let (_, text) = section(&bytes, ".text");
    type Break = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Break, &str)> = vec![
        (
            "zeroed",
            Box::new(move |b: &mut Vec<u8>| b[shoff..shoff + shnum * 64].fill(0)),
            "are empty (zeroed or a wrong e_shoff)",
        ),
        (
            "e_shoff",
            Box::new(move |b: &mut Vec<u8>| {
                b[0x28..0x30].copy_from_slice(&(text as u64).to_le_bytes())
            }),
            "broken section header table",
        ),
        (
            "e_shoff0",
            Box::new(|b: &mut Vec<u8>| b[0x28..0x30].fill(0)),
            "there is none (e_shoff 0",
        ),
        (
            "e_shnum1",
            Box::new(|b: &mut Vec<u8>| b[0x3c..0x3e].copy_from_slice(&1u16.to_le_bytes())),
            "1 entries (e_shnum 1)",
        ),
        (
            "e_shstrndx",
            Box::new(|b: &mut Vec<u8>| b[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes())),
            "e_shstrndx 1 is not a string table",
        ),
    ];
    for (name, break_it, expected) in cases {
        let mut broken = bytes.clone();
        break_it(&mut broken);
        let path = dir.path().join(name);
        std::fs::write(&path, &broken).unwrap();
        let p = path.to_str().unwrap();
        for verb in ["structs", "code"] {
            let (code, stderr) = fails(&[verb, p]);
            assert_eq!(code, 1, "{verb} {name}: {stderr}");
            assert!(stderr.contains("section header"), "{verb} {name}: {stderr}");
            assert!(stderr.contains(expected), "{verb} {name}: {stderr}");
            for wrong in ["no debug info", "stripped"] {
                assert!(!stderr.contains(wrong), "{verb} {name}: {stderr}");
            }
        }
    }
}

#[test]
fn hot_profiles_with_non_finite_or_negative_costs_are_refused_with_the_line() {
    if !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = gcc(dir.path(), "exe", &[]);
    for bad in ["nan", "inf", "-100"] {
        let profile = dir.path().join(format!("{bad}.out"));
        std::fs::write(
            &profile,
            format!(
                "events: Ir\nob={}\nfn=main\n1 100\n2 {bad}\n",
                exe.display()
            ),
        )
        .unwrap();
        let (code, stderr) = fails(&[
            "code",
            exe.to_str().unwrap(),
            "--hot",
            profile.to_str().unwrap(),
        ]);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "{}:5: cost \"{bad}\" is not a finite non-negative number",
                profile.display()
            )),
            "{stderr}"
        );
    }
}

#[test]
fn zero_rounds_compilers_and_a_single_build_are_usage_errors_in_every_verb() {
    for (args, expected) in [
        (
            &["demo", "--rounds", "0"][..],
            "--rounds must be at least 1",
        ),
        (
            &["demo", "--max-compilers", "0"][..],
            "--max-compilers must be at least 1",
        ),
        (
            &[
                "layout",
                "--build",
                "a=cc x.c -o {out}",
                "--run",
                "{bin}",
                "--rounds",
                "0",
            ][..],
            "give at least two --build",
        ),
        (
            &[
                "layout",
                "--build",
                "a=cc x.c -o {out}",
                "--build",
                "b=cc y.c -o {out}",
                "--run",
                "{bin}",
                "--rounds",
                "0",
            ][..],
            "--rounds must be at least 1",
        ),
        (
            &[
                "layout",
                "--build",
                "a",
                "--build",
                "b=cc -o {out}",
                "--run",
                "{bin}",
            ][..],
            "expected NAME=TEMPLATE",
        ),
    ] {
        let (code, stderr) = fails(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn a_regex_metric_past_the_read_limit_says_the_output_was_cut() {
    if !require_tool("head") {
        return;
    }
    // 300 MB of output before the line: past the 256 MiB read.
    let command = "head -c 300000000 /dev/zero; echo; echo 'v 5'";
    let out = ghostbench()
        .args([
            "compare",
            command,
            command,
            "--shell",
            "--metric",
            "regex@stdout:v ([0-9]+)",
            "--warmup",
            "0",
            "--quiet",
        ])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("matched nothing in stdout"), "{text}");
    assert!(
        text.contains("output cut: the run wrote more than ghostbench reads, so only the first 256 MiB of stdout were searched"),
        "{text}"
    );
}
