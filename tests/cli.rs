//! The command line's shared behaviour: report files are checked before any
//! work (an unwritable path fails fast with exit 1 and nothing run), a format
//! a verb does not write is a usage error (exit 2), durations have an upper
//! bound instead of a panic, written report files leave no temporary file,
//! and a shared option reads the same in every verb's help.

mod common;

use std::path::{Path, PathBuf};

fn ghostbench(dir: &Path) -> assert_cmd::Command {
    let mut command = common::ghostbench();
    command.current_dir(dir);
    command
}

/// Run `args` in `dir`; it must fail with `code` and one line on stderr,
/// which is returned, and print nothing on stdout (no report was made).
fn fails(dir: &Path, args: &[&str], code: i32) -> String {
    let output = ghostbench(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: one line, got {stderr:?}"
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "", "{args:?}");
    stderr
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn an_unwritable_report_file_fails_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let marker = |name: &str| d.join(name);
    std::fs::write(d.join("a-file"), "").unwrap();
    std::fs::write(
        d.join("ab.csv"),
        "name,value\nA,1\nA,2\nA,3\nB,1\nB,2\nB,3\n",
    )
    .unwrap();
    // A directory that does not exist, and a "directory" that is a file.
    let unwritable = [
        d.join("missing").join("report"),
        d.join("a-file").join("report"),
    ];
    let touch = |name: &str| format!("touch {}", text(&marker(name)));
    for path in &unwritable {
        let path = text(path);
        let cases: Vec<Vec<String>> = vec![
            vec![
                "compare".into(),
                touch("ran-a"),
                touch("ran-b"),
                "--setup".into(),
                touch("ran-setup"),
                "--json".into(),
                path.into(),
            ],
            vec![
                "compare".into(),
                touch("ran-a"),
                touch("ran-b"),
                "--markdown".into(),
                path.into(),
            ],
            vec![
                "layout".into(),
                "--build".into(),
                format!("A={} {{out}}", touch("built-a")),
                "--build".into(),
                format!("B={} {{out}}", touch("built-b")),
                "--html".into(),
                path.into(),
            ],
            vec![
                "analyze".into(),
                "ab.csv".into(),
                "--json".into(),
                path.into(),
            ],
            vec![
                "probe".into(),
                "--only".into(),
                "tlb".into(),
                "--quick".into(),
                "--markdown".into(),
                path.into(),
            ],
            vec!["demo".into(), "--html".into(), path.into()],
            // The check comes before the binary is even opened.
            vec![
                "code".into(),
                "no-such-binary".into(),
                "--json".into(),
                path.into(),
            ],
            vec![
                "structs".into(),
                "no-such-binary".into(),
                "--sarif".into(),
                path.into(),
            ],
        ];
        for args in cases {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let stderr = fails(d, &args, 1);
            assert!(
                stderr.starts_with(&format!("error: cannot write {path}: ")),
                "{args:?}: {stderr}"
            );
        }
    }
    for name in ["ran-a", "ran-b", "ran-setup", "built-a", "built-b"] {
        assert!(!marker(name).exists(), "{name}: something ran");
    }
    // Nothing was built (demo and layout work under .ghostbench/) and no
    // temporary file was left behind.
    let mut left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["a-file", "ab.csv"]);
}

#[test]
fn a_report_file_the_verb_does_not_write_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (
            "code",
            "--html",
            "--html is not supported by code; use --json or --markdown",
        ),
        (
            "structs",
            "--html",
            "--html is not supported by structs; use --json or --sarif",
        ),
        (
            "structs",
            "--markdown",
            "--markdown is not supported by structs; use --json or --sarif",
        ),
    ];
    for (verb, flag, message) in cases {
        let stderr = fails(d, &[verb, "no-such-binary", flag, "out"], 2);
        assert_eq!(stderr, format!("error: {message}\n"));
        // Not offered in the help either.
        let help = ghostbench(d).args([verb, "--help"]).output().unwrap();
        assert!(
            !String::from_utf8_lossy(&help.stdout).contains(flag),
            "{verb} --help shows {flag}"
        );
    }
    assert!(!d.join("out").exists());
}

#[test]
fn durations_past_a_year_are_usage_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for args in [
        &["compare", "--timeout", "1e20", "true", "true"][..],
        &["compare", "--timeout", "1e19", "true", "true"],
        &[
            "compare",
            "--max-time",
            "18446744073709551616",
            "true",
            "true",
        ],
        &[
            "layout",
            "--build",
            "A=x",
            "--build",
            "B=y",
            "--max-time",
            "1e19",
        ],
        &[
            "layout",
            "--build",
            "A=x",
            "--build",
            "B=y",
            "--timeout",
            "9000h",
        ],
        &["probe", "--budget", "1e20"],
    ] {
        let output = ghostbench(d).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("longer than a year"), "{args:?}: {stderr}");
    }
}

#[test]
fn report_files_are_written_whole_and_leave_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("ab.csv"),
        "name,value\nA,10\nA,11\nA,12\nB,20\nB,21\nB,22\n",
    )
    .unwrap();
    let out = d.join("out");
    std::fs::create_dir(&out).unwrap();
    let file = |name: &str| -> PathBuf { out.join(name) };
    let output = ghostbench(d)
        .args(["analyze", "ab.csv", "--json"])
        .arg(file("r.json"))
        .arg("--markdown")
        .arg(file("r.md"))
        .arg("--html")
        .arg(file("r.html"))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["r.html", "r.json", "r.md"]);
    let json = common::read_json(&file("r.json"));
    assert_eq!(json["schema"], "ghostbench.compare");
    assert!(std::fs::read_to_string(file("r.html"))
        .unwrap()
        .contains("<html"));
    let markdown = std::fs::read_to_string(file("r.md")).unwrap();
    assert!(
        markdown.contains("B")
            && markdown.contains(json["metrics"][0]["verdict"].as_str().unwrap_or("?")),
        "{markdown}"
    );
}

/// Each option's help line (the text after the option and its value name) in `verb --help`.
fn help_lines(verb: &str) -> Vec<(String, String)> {
    let output = common::ghostbench()
        .args([verb, "--help"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let line = line
                .strip_prefix("-")
                .filter(|l| l.chars().nth(2) == Some(' '))
                .map_or(line, |l| &l[3..]);
            let rest = line.strip_prefix("--")?;
            let (flag, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            // `--higher-is-better[=<NAME>...]`: an optional value.
            let flag = flag.split("[=").next().unwrap_or(flag);
            let rest = rest.trim_start();
            let help = if rest.starts_with('<') || rest.starts_with("[<") {
                rest.split_once(' ').map_or("", |(_, h)| h)
            } else {
                rest
            };
            Some((format!("--{flag}"), help.trim().to_string()))
        })
        .collect()
}

#[test]
fn a_shared_option_reads_the_same_in_every_verb() {
    let verbs = [
        "compare", "layout", "analyze", "probe", "demo", "code", "structs", "noise",
    ];
    // noise's own -m (it adds user+sys) and --rounds (rounds of the design's
    // cells, not of layouts) share a name, not a meaning: left out of the check.
    let own = [("--metric", "noise"), ("--rounds", "noise")];
    let helps: Vec<(&str, Vec<(String, String)>)> =
        verbs.iter().map(|v| (*v, help_lines(v))).collect();
    let shared = [
        ("--metric", 2),
        ("--higher-is-better", 3),
        ("--margin", 3),
        ("--alpha", 3),
        ("--seed", 6),
        ("--shell", 3),
        ("--timeout", 3),
        ("--pin", 3),
        ("--layouts", 2),
        ("--max-layouts", 2),
        ("--rounds", 2),
        ("--jobs", 2),
        ("--json", 8),
        ("--markdown", 7),
        ("--html", 6),
        ("--color", 8),
        ("--quiet", 8),
    ];
    for (flag, verbs_with_it) in shared {
        let found: Vec<(&str, &str)> = helps
            .iter()
            .filter(|(verb, _)| !own.contains(&(flag, *verb)))
            .filter_map(|(verb, lines)| {
                lines
                    .iter()
                    .find(|(f, _)| f == flag)
                    .map(|(_, help)| (*verb, help.as_str()))
            })
            .collect();
        assert_eq!(found.len(), verbs_with_it, "{flag} in {found:?}");
        // `analyze` adds that a re-analyzed report keeps its own margin and alpha.
        let unify = |help: &str| help.replace(", or the report's own]", "]");
        let first = unify(found[0].1);
        assert!(!first.is_empty(), "{flag} has no help");
        for (verb, help) in &found {
            assert_eq!(
                unify(help),
                first,
                "{flag}: {verb} differs from {}",
                found[0].0
            );
        }
    }
}
