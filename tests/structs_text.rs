//! `ghostbench structs` text against pahole 1.24's, byte for byte, on a C fixture
//! compiled at test time (tests/fixtures/structs/text.c): anonymous structs and unions
//! printed inline, function pointers, qualified pointers, flexible and zero-length
//! arrays, member and struct alignment attributes, packing, bitfields with bit holes and
//! "Bitfield combined" notes, last-struct paddings and cache-line markers inside nested
//! records, anonymous enums with their enumerators, and pahole's packed inference
//! (a packed struct embedded off its alignment, with and without holes). The one case
//! where pahole is wrong (`_Atomic`) is listed and kept ours.

mod common;

use common::{pahole, require_tool};
use std::path::{Path, PathBuf};
use std::process;

fn fixture_binary(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/structs/text.c");
    let bin = dir.join("text");
    let out = process::Command::new("gcc")
        .args(["-g", "-O0", "-o"])
        .arg(&bin)
        .arg(&source)
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

fn pahole_text(bin: &Path) -> String {
    let out = process::Command::new("pahole")
        .arg(bin)
        .output()
        .expect("pahole runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn our_text(bin: &Path) -> String {
    let out = common::ghostbench()
        .arg("structs")
        .arg(bin)
        .args(["--color", "never", "--quiet"])
        .output()
        .expect("ghostbench runs");
    assert!(out.status.success(), "ghostbench structs failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The structs of the fixture whose pahole text pahole itself gets wrong.
const PAHOLE_BUGS: &[&str] = &["struct with_atomic {"];

#[test]
fn text_is_byte_identical_to_pahole() {
    if !require_tool("pahole") || !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = fixture_binary(dir.path());
    let theirs = pahole::blocks(&pahole_text(&bin));
    let ours = pahole::blocks(&our_text(&bin));
    let mut compared = 0;
    for (head, body) in &theirs {
        if PAHOLE_BUGS.contains(&head.as_str()) {
            continue;
        }
        let mine = ours
            .iter()
            .find(|(h, _)| h == head)
            .unwrap_or_else(|| panic!("ghostbench printed no {head}"));
        assert_eq!(&mine.1, body, "{head} differs from pahole's text");
        compared += 1;
    }
    assert_eq!(compared, 19, "pahole printed {} structs", theirs.len());
    // Every construct the fixture is there for shows up in the shared text.
    let all: String = ours.iter().map(|(_, b)| b.as_str()).collect();
    for needle in [
        "\tunion {\n\t\tstruct {\n",
        "\t\t} halves;",
        "void                       (*func)(struct cb *, int);",
        "int                        (*op)(const char  *, ...);",
        "(*noargs)(void);",
        "const char  * const *      argv;",
        "char                       data[];",
        "char                       pad[0];",
        "d __attribute__((__aligned__(32)));",
        "/* forced alignments: 1, forced holes: 1, sum forced holes: 31 */",
        "} __attribute__((__aligned__(64)));",
        "} __attribute__((__packed__));",
        "/* Bitfield combined with next fields */",
        "/* XXX last struct has 7 bytes of padding */",
        "/* paddings: 2, sum paddings: 14 */",
        "bit holes: 1, sum bit holes: 24 bits */",
        "\t\t/* --- cacheline 1 boundary (64 bytes) --- */",
        "\tenum {\n\t\tSTATE_IDLE = 0,\n\t\tSTATE_BUSY = 4,\n\t\tSTATE_GONE = 5,\n\t} state;",
        "\t\tMODE_LONGER_NAME = 1,\n\t} mode:8;",
    ] {
        assert!(all.contains(needle), "no {needle:?} in:\n{all}");
    }
}

#[test]
fn pahole_atomic_bug_is_listed_and_not_copied() {
    if !require_tool("pahole") || !require_tool("gcc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = fixture_binary(dir.path());
    let block = |text: &str| {
        pahole::blocks(text)
            .into_iter()
            .find(|(h, _)| h == PAHOLE_BUGS[0])
            .map(|(_, b)| b)
            .unwrap_or_else(|| panic!("no {}", PAHOLE_BUGS[0]))
    };
    let theirs = block(&pahole_text(&bin));
    let ours = block(&our_text(&bin));
    // pahole 1.24 cannot name an _Atomic member and then finds its own sums wrong.
    assert!(theirs.contains("<ERROR("), "{theirs}");
    assert!(theirs.contains("BRAIN FART ALERT"), "{theirs}");
    assert!(
        ours.contains("\t_Atomic long int           count;                /*     8     8 */\n"),
        "{ours}"
    );
    assert!(
        ours.contains("/* sum members: 13, holes: 1, sum holes: 7 */"),
        "{ours}"
    );
    assert!(
        !ours.contains("ERROR") && !ours.contains("BRAIN FART"),
        "{ours}"
    );
}
