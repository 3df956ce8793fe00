//! Issue 23, items 5 and 7, through the binary: hostile names in Markdown,
//! the terminal and `history`; a password in `--store` written nowhere; a
//! plan directory with `${{ … }}` in a GitHub workflow and the printed
//! hints; and the misleading messages (a truncated shard, a missing `.dwo`,
//! a well-compressed zstd section, a directory, a character device, a FIFO,
//! a schema clash, a PostgreSQL error). Device nodes and FIFOs are made in a
//! temporary directory, never a real system path.

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    common::run_within(dir, args, std::time::Duration::from_secs(120))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The attack of issue 23: a tag, an `onerror` image, backticks, a pipe, a
/// line break that forges a FASTER bullet, an OSC title, a bell and a
/// screen clear.
const HOSTILE_A: &str = "A<script>alert(1)</script><img src=x onerror=alert(2)>";
const HOSTILE_B: &str = "B`x`|y\n- **FASTER** forged\x1b]0;pwned\x07\x1b[2J\u{9b}31m";

fn hostile_csv(dir: &Path) -> PathBuf {
    let csv = dir.join("hostile.csv");
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut rows = String::from("name,value\n");
    for i in 0..10 {
        rows += &format!(
            "{},{}\n{},{}\n",
            quote(HOSTILE_A),
            1.0 + 0.01 * i as f64,
            quote(HOSTILE_B),
            1.2 + 0.01 * i as f64
        );
    }
    std::fs::write(&csv, rows).unwrap();
    csv
}

/// No escape, bell or C1 control reaches the terminal but ghostbench's own
/// colours, and no line of the report is one a name forged.
fn assert_terminal_clean(out: &str, color: bool) {
    for (i, c) in out.char_indices() {
        if c == '\x1b' {
            assert!(color, "an escape with --color never: {out:?}");
            let rest = &out[i..];
            let end = rest.find('m').expect("an SGR sequence");
            assert!(
                rest[2..end].chars().all(|c| c.is_ascii_digit() || c == ';')
                    && rest.starts_with("\x1b["),
                "a foreign escape sequence: {:?}",
                &rest[..end.min(20)]
            );
        }
        assert!(
            !c.is_control() || matches!(c, '\n' | '\t' | '\x1b'),
            "control character {c:?} in {out:?}"
        );
    }
    assert!(!out.contains("]0;pwned\u{7}"), "{out}");
    assert!(
        !out.lines().any(|l| l.starts_with("- **FASTER** forged")),
        "a forged line: {out}"
    );
}

/// `markdown` with every code span's text left out (CommonMark: a run of N
/// backticks opens a span that the next run of exactly N closes).
fn outside_code_spans(markdown: &str) -> String {
    let mut out = String::new();
    for line in markdown.lines() {
        let mut rest = line;
        while let Some(open) = rest.find('`') {
            out.push_str(&rest[..open]);
            let n = rest[open..].chars().take_while(|&c| c == '`').count();
            let after = &rest[open + n..];
            let mut close = None;
            let mut from = 0;
            while let Some(at) = after[from..].find('`') {
                let at = from + at;
                let run = after[at..].chars().take_while(|&c| c == '`').count();
                if run == n {
                    close = Some(at);
                    break;
                }
                from = at + run;
            }
            match close {
                Some(at) => rest = &after[at + n..],
                None => {
                    out.push_str(&rest[open..open + n]);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

#[test]
fn hostile_names_are_escaped_in_markdown_the_terminal_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let csv = hostile_csv(dir.path());
    let csv = csv.to_str().unwrap();
    let md = dir.path().join("r.md");
    for color in ["never", "always"] {
        let out = run(
            dir.path(),
            &[
                "analyze",
                csv,
                "--color",
                color,
                "--markdown",
                md.to_str().unwrap(),
                "--store",
                "s.db",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_terminal_clean(&text(&out.stdout), color == "always");
        assert_terminal_clean(&text(&out.stderr), false);
    }
    let markdown = std::fs::read_to_string(&md).unwrap();
    // Outside code spans (which show their text, never run it) no tag.
    let outside = outside_code_spans(&markdown);
    for tag in ["<script", "<img", "</script"] {
        assert!(!outside.contains(tag), "{tag} in the Markdown:\n{markdown}");
    }
    assert!(!markdown.contains('\x1b') && !markdown.contains('\x07'));
    // One verdict bullet, ghostbench's own; the forged one is text in it.
    let bullets: Vec<&str> = markdown.lines().filter(|l| l.starts_with("- **")).collect();
    assert_eq!(bullets.len(), 1, "{markdown}");
    assert!(bullets[0].starts_with("- **SLOWER** "), "{markdown}");
    // The heading's code spans are not closed early by the name's backticks.
    let heading = markdown.lines().next().unwrap();
    assert!(heading.contains("``B`x`\\|y\\n"), "{heading}");

    // history: one row per result, however many line breaks a name holds.
    let out = run(dir.path(), &["history", "--store", "s.db"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert_terminal_clean(&table, false);
    assert_eq!(table.lines().count(), 3, "a header and two rows:\n{table}");
}

#[test]
fn a_password_in_the_store_url_is_written_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let csv = hostile_csv(dir.path());
    // Nothing listens on port 1: the store fails, and says why.
    let url = "postgresql://u:s3cret@127.0.0.1:1/db";
    let out = run(
        dir.path(),
        &[
            "analyze",
            csv.to_str().unwrap(),
            "--color",
            "never",
            "--json",
            "r.json",
            "--markdown",
            "r.md",
            "--html",
            "r.html",
            "--store",
            url,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("postgresql://u:***@127.0.0.1:1/db")
            && stderr.contains("error connecting to server: ")
            && stderr.lines().count() == 1,
        "the store's cause on one line: {stderr}"
    );
    for file in ["r.json", "r.md", "r.html"] {
        let written = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(!written.contains("s3cret"), "the password in {file}");
    }
    let json = common::read_json(&dir.path().join("r.json"));
    assert!(json
        .to_string()
        .contains("postgresql://u:***@127.0.0.1:1/db"));

    // A document made elsewhere, password and all, is stored without it.
    let doc = std::fs::read_to_string(dir.path().join("r.json"))
        .unwrap()
        .replace("u:***@", "u:s3cret@");
    std::fs::write(dir.path().join("elsewhere.json"), doc).unwrap();
    let out = run(
        dir.path(),
        &["history", "import", "elsewhere.json", "--store", "s.db"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let conn = rusqlite::Connection::open(dir.path().join("s.db")).unwrap();
    let stored: String = conn
        .query_row(
            "SELECT command_line || environment || document FROM experiments",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!stored.contains("s3cret"), "the password in the store");
    assert!(stored.contains("u:***@"));
}

/// A plan directory, made with `--plan-only`, whose name is `name`.
fn plan_named(dir: &Path, name: &str) {
    let out = run(
        dir,
        &[
            "layout",
            "-b",
            "A=cc -O2 {cflags} {ldflags} a.c -o {out}",
            "-b",
            "B=cc -O3 {cflags} {ldflags} a.c -o {out}",
            "--layouts",
            "8",
            "--shards",
            "4",
            "--plan-only",
            name,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_workflow_evaluates_only_its_own_expressions_and_hints_are_shell_words() {
    let dir = tempfile::tempdir().unwrap();
    let name = "p${{ secrets.TOKEN }}$(touch pwned) x";
    plan_named(dir.path(), name);
    let plan = format!("{name}/plan.json");
    let out = run(dir.path(), &["layout", "--plan", &plan, "--emit", "github"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let workflow = std::fs::read_to_string(dir.path().join(name).join("shards.yml")).unwrap();
    // Every expression is ghostbench's: the matrix's shard, or the one that
    // writes a literal `${{`.
    let mut rest = workflow.as_str();
    let mut literal = 0;
    while let Some(at) = rest.find("${{") {
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("${{ '${{' }}") {
            literal += 1;
            rest = after;
        } else {
            assert!(
                tail.starts_with("${{ matrix.shard }}"),
                "an expression from the path: {}",
                &tail[..tail.len().min(40)]
            );
            rest = &tail[3..];
        }
    }
    assert!(literal >= 4, "{workflow}");
    // The printed hints paste into sh as one word per path.
    let stdout = text(&out.stdout);
    let submit = stdout
        .lines()
        .find_map(|l| l.strip_prefix("submit: "))
        .expect("a submit line");
    let words = shlex::split(submit).expect("sh words");
    assert_eq!(words[1], format!("{name}/shards.yml"), "{submit}");

    let abs = dir.path().join(&plan);
    let out = run(
        dir.path(),
        &[
            "layout",
            "--plan",
            abs.to_str().unwrap(),
            "--emit",
            "k8s",
            "--image",
            "bench:1",
            "--volume-claim",
            "plans",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let submit = stdout
        .lines()
        .find_map(|l| l.strip_prefix("submit: "))
        .expect("a submit line");
    let words = shlex::split(submit).expect("sh words");
    assert_eq!(words.len(), 4, "{submit}");
    assert_eq!(
        Path::new(&words[3]),
        dir.path().join(name).join("job.yaml"),
        "{submit}"
    );
    assert!(!dir.path().join("pwned").exists());
}

#[test]
fn a_truncated_shard_result_is_named_truncated_not_missing() {
    if !common::require_tool("cc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.c"),
        "int main(void){volatile long s=0; for(long i=0;i<1000;i++) s+=i; return 0;}\n",
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "layout",
            "-b",
            "A=cc -O2 {cflags} {ldflags} t.c -o {out}",
            "-b",
            "B=cc -O1 {cflags} {ldflags} t.c -o {out}",
            "--layouts",
            "4",
            "--shards",
            "2",
            "--rounds",
            "2",
            "--plan-only",
            "P",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for k in ["1/2", "2/2"] {
        let out = run(
            dir.path(),
            &["layout", "--plan", "P/plan.json", "--shard", k, "--quiet"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let shard = dir.path().join("P/results/shard-2.json");
    let full = std::fs::read(&shard).unwrap();
    std::fs::write(&shard, &full[..full.len() / 3]).unwrap();
    let out = run(dir.path(), &["analyze", "P/results/", "--color", "never"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains("shard-2.json unreadable: truncated: its JSON stops at line"),
        "{stderr}"
    );
    assert!(!stderr.contains("missing"), "{stderr}");
}

#[test]
fn a_split_dwarf_unit_without_its_dwo_exits_4_and_says_so() {
    if !common::require_tool("cc") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.c"),
        "struct s { char c; long l; int i; };\nstruct s g;\nint main(void){return g.i;}\n",
    )
    .unwrap();
    for args in [
        &["-g", "-gsplit-dwarf", "-c", "a.c", "-o", "a.o"][..],
        &["a.o", "-o", "a"][..],
    ] {
        let status = Command::new("cc")
            .current_dir(dir.path())
            .args(args)
            .status()
            .unwrap();
        assert!(status.success());
    }
    let out = run(dir.path(), &["structs", "a"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("struct s"));
    std::fs::remove_file(dir.path().join("a.dwo")).unwrap();
    let out = run(dir.path(), &["structs", "a", "--json", "r.json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("error: a: the split DWARF of 1 of 1 units is missing (a.dwo)"),
        "{stderr}"
    );
    let json = common::read_json(&dir.path().join("r.json"));
    assert_eq!(json["missing_split_units"][0], "a.dwo");
}

#[test]
fn a_well_compressed_zstd_section_is_read() {
    if !common::require_tool("cc") || !common::require_tool("objcopy") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("z.c"),
        "struct s { char c; long l; };\nstruct s g;\nint main(void){return 0;}\n",
    )
    .unwrap();
    // 64 MiB of zeros as a debug section compress about 30,000 times.
    std::fs::write(d.join("zeros"), vec![0u8; 64 << 20]).unwrap();
    let sh = |args: &[&str]| {
        Command::new(args[0])
            .current_dir(d)
            .args(&args[1..])
            .output()
            .unwrap()
    };
    assert!(sh(&["cc", "-g", "z.c", "-o", "z"]).status.success());
    assert!(
        sh(&["objcopy", "--add-section", ".debug_loc=zeros", "z", "z2"])
            .status
            .success()
    );
    let zstd = sh(&["objcopy", "--compress-debug-sections=zstd", "z2", "z3"]);
    if !zstd.status.success() {
        common::skipped("objcopy with zstd (--compress-debug-sections=zstd)");
        return;
    }
    let size = std::fs::metadata(d.join("z3")).unwrap().len();
    assert!(size < 1 << 20, "the section is compressed: {size} bytes");
    let out = run(d, &["structs", "z3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("struct s"));
}

fn mknod(path: &Path, kind: libc::mode_t, dev: libc::dev_t) -> bool {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path in a temporary directory.
    unsafe { libc::mknod(c.as_ptr(), kind | 0o666, dev) == 0 }
}

#[test]
fn inputs_that_are_not_files_say_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("dir")).unwrap();
    assert!(mknod(&d.join("fifo"), libc::S_IFIFO, 0));
    let mut cases = vec![("dir", "a directory"), ("fifo", "a FIFO")];
    // A zero device like /dev/zero, made here (needs CAP_MKNOD).
    if mknod(&d.join("zero"), libc::S_IFCHR, libc::makedev(1, 5)) {
        cases.push(("zero", "a character device"));
    } else {
        common::skipped("CAP_MKNOD (root, to make a device node)");
    }
    for (name, what) in cases {
        for verb in ["structs", "code"] {
            let out = run(d, &[verb, name]);
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{verb} {name}: {stderr}");
            assert!(
                stderr.contains(&format!("it is {what}, not a regular file"))
                    && stderr.lines().count() == 1,
                "{verb} {name}: {stderr}"
            );
        }
    }
}

#[test]
fn a_schema_clash_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("clash.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("CREATE TABLE experiments (id INTEGER)", [])
        .unwrap();
    drop(conn);
    let csv = hostile_csv(dir.path());
    let out = run(
        dir.path(),
        &["analyze", csv.to_str().unwrap(), "--store", "clash.db"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("table experiments already exists (in `CREATE TABLE experiments (`)"),
        "{stderr}"
    );
}
