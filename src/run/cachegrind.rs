//! `--simulate`: run a command once under valgrind's cachegrind and turn its
//! output file into simulated counters ([`Simulated`]).
//!
//! Simulated counts are deterministic evidence where timing is noisy and
//! where hardware counters are missing (most VMs): if instructions and
//! simulated misses are unchanged between two builds but time changed, the
//! difference is in layout or the front end, which cachegrind does not model.
//!
//! This module owns: checking that valgrind is usable ([`availability`]),
//! running one simulation with a timeout ([`simulate`], started by
//! [`super::launch`]), and parsing cachegrind's out-file format
//! ([`parse_out_file`]). It does not decide when to simulate; the runner does.

use std::path::Path;
use std::time::Duration;

use super::capture::Keep;
use super::error::{RunError, ToolError};
use super::launch::{self, Launch};
use super::spawn::{self, Exit};
use anyhow::{bail, Context};

/// Cachegrind's counts for one command, plus the derived cycle estimate.
///
/// Field names follow cachegrind's event names: `ir` = Ir, `i1_misses` =
/// I1mr, `ill_misses` = ILmr, `dr` = Dr, `d1r_misses` = D1mr, `dlr_misses` =
/// DLmr, `dw` = Dw, `d1w_misses` = D1mw, `dlw_misses` = DLmw. When the
/// command forks and execs, the counts of every traced process are summed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Simulated {
    pub ir: u64,
    pub i1_misses: u64,
    pub ill_misses: u64,
    pub dr: u64,
    pub d1r_misses: u64,
    pub dlr_misses: u64,
    pub dw: u64,
    pub d1w_misses: u64,
    pub dlw_misses: u64,
    /// L1 hits cost 1, LL hits 5, RAM accesses 35 (see [`Simulated::estimate_cycles`]).
    pub estimated_cycles: u64,
}

impl Simulated {
    /// The design's simple cost model: every access that hits L1 costs 1
    /// cycle, one that misses L1 but hits LL costs 5, one that goes to RAM
    /// costs 35. Crude, but it ranks "more misses" correctly and is what the
    /// report labels as an estimate. Saturating, so absurd inputs give
    /// `u64::MAX` or 0 rather than a panic or a wrap-around.
    pub fn estimate_cycles(&self) -> u64 {
        let accesses = self.ir.saturating_add(self.dr).saturating_add(self.dw);
        let l1_misses = self
            .i1_misses
            .saturating_add(self.d1r_misses)
            .saturating_add(self.d1w_misses);
        let ll_misses = self
            .ill_misses
            .saturating_add(self.dlr_misses)
            .saturating_add(self.dlw_misses);
        let l1_hits = accesses.saturating_sub(l1_misses);
        let ll_hits = l1_misses.saturating_sub(ll_misses);
        l1_hits
            .saturating_add(ll_hits.saturating_mul(5))
            .saturating_add(ll_misses.saturating_mul(35))
    }

    /// Add another process's counts (for commands that fork), then
    /// recompute the estimate from the totals.
    fn add(&mut self, other: &Simulated) {
        self.ir = self.ir.saturating_add(other.ir);
        self.i1_misses = self.i1_misses.saturating_add(other.i1_misses);
        self.ill_misses = self.ill_misses.saturating_add(other.ill_misses);
        self.dr = self.dr.saturating_add(other.dr);
        self.d1r_misses = self.d1r_misses.saturating_add(other.d1r_misses);
        self.dlr_misses = self.dlr_misses.saturating_add(other.dlr_misses);
        self.dw = self.dw.saturating_add(other.dw);
        self.d1w_misses = self.d1w_misses.saturating_add(other.d1w_misses);
        self.dlw_misses = self.dlw_misses.saturating_add(other.dlw_misses);
        self.estimated_cycles = self.estimate_cycles();
    }
}

/// `valgrind --version` (e.g. "valgrind-3.19.0"), or why it is unusable
/// ([`ToolError::Missing`] when it is not on PATH). Cheap enough to call once
/// per experiment so the report can say which valgrind produced the numbers.
pub fn availability() -> Result<String, ToolError> {
    let unusable = |cause: String| ToolError::Unusable {
        tool: "valgrind".into(),
        cause,
    };
    let argv = ["valgrind".to_string(), "--version".to_string()];
    let version = Launch {
        stdout: Some(Keep::Head(4096)),
        ..Launch::new(&argv)
    };
    match version.run_ok() {
        Err((RunError::NotFound { .. }, _)) => Err(ToolError::Missing {
            tool: "valgrind".into(),
        }),
        Err((e, _)) => Err(unusable(format!("`valgrind --version`: {e}"))),
        Ok(out) => {
            let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if version.is_empty() {
                Err(unusable("`valgrind --version` printed nothing".into()))
            } else {
                Ok(version)
            }
        }
    }
}

/// How many lines of the command's stderr an error message shows.
const STDERR_TAIL_LINES: usize = 12;

/// Run `argv` once under `valgrind --tool=cachegrind --cache-sim=yes` with
/// the given extra environment, kill it after `timeout`, and parse the
/// `summary:` line of the out file(s).
///
/// Children are traced (`--trace-children=yes`, one out file per pid) and
/// summed, so a command run through `sh -c` or a wrapper script is measured
/// as a whole, like the hardware counters with `inherit`. valgrind runs in
/// its own process group so a timeout kills the whole tree. stdin is `input`
/// (or /dev/null) and stdout is discarded; stderr is kept (its tail) for error
/// messages.
///
/// Errors carry context: a command that fails under valgrind gives its exit
/// status and the last lines of its stderr (which include valgrind's own
/// complaints, such as "No such file or directory").
pub fn simulate(
    argv: &[String],
    env: &[(String, String)],
    input: Option<&Path>,
    timeout: Duration,
) -> anyhow::Result<Simulated> {
    let Some(program) = argv.first() else {
        bail!("cannot simulate an empty command");
    };
    if program.starts_with('-') {
        // valgrind would take it for one of its own options.
        bail!("cannot simulate `{program}`: program name starts with '-'");
    }
    let shown = argv.join(" ");
    let dir = launch::scratch_dir("ghostbench-cg-")
        .context("creating a directory for cachegrind output")?;
    let out_dir = dir
        .path()
        .to_str()
        .context("the temporary directory's path is not UTF-8")?;
    let mut words: Vec<String> = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--trace-children=yes",
        "--quiet",
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    words.push(format!("--cachegrind-out-file={out_dir}/cachegrind.out.%p"));
    words.extend(argv.iter().cloned());
    let run = Launch {
        env,
        stdin: input,
        timeout: Some(timeout),
        stdout: None,
        ..Launch::new(&words)
    };
    let outcome = match run.run() {
        Ok(outcome) => outcome,
        Err(RunError::NotFound { .. }) => {
            bail!("cannot simulate `{shown}`: valgrind not found on PATH")
        }
        Err(e) => return Err(e).context(format!("starting valgrind for `{shown}`")),
    };
    let tail = format_tail(&outcome.stderr_tail);
    match outcome.exit {
        Exit::Code(0) => {}
        Exit::TimedOut => bail!(
            "`{shown}` timed out after {:.1} s under valgrind (cachegrind runs \
             programs 20-100x slower; raise --timeout){tail}",
            timeout.as_secs_f64()
        ),
        Exit::Interrupted => bail!("`{shown}` under valgrind: interrupted by Ctrl-C"),
        exit => bail!(
            "`{shown}` failed under valgrind ({}){tail}",
            exit.describe()
        ),
    }
    read_out_files(dir.path()).with_context(|| format!("reading cachegrind output for `{shown}`"))
}

/// Sum every `cachegrind.out.<pid>` in `dir`.
fn read_out_files(dir: &Path) -> anyhow::Result<Simulated> {
    let mut total = Simulated::default();
    let mut found = 0usize;
    let entries = std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        let is_out = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("cachegrind.out."));
        if !is_out {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let one = parse_out_file(&text).with_context(|| format!("parsing {}", path.display()))?;
        total.add(&one);
        found += 1;
    }
    if found == 0 {
        bail!("valgrind exited successfully but wrote no cachegrind out file");
    }
    total.estimated_cycles = total.estimate_cycles();
    Ok(total)
}

/// Parse a cachegrind out file: the `events:` line names the columns, the
/// `summary:` line holds the totals in that order.
///
/// Columns are mapped by name, not position, because the set and order
/// depend on options (`--cache-sim`, `--branch-sim`) and valgrind version.
/// A summary may omit trailing zero counts (the format allows it). The nine
/// cache-simulation events are required: without them the cycle estimate
/// would be silently wrong.
pub fn parse_out_file(text: &str) -> anyhow::Result<Simulated> {
    let mut events: Option<Vec<&str>> = None;
    let mut summary: Option<&str> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            if events.is_none() {
                events = Some(rest.split_whitespace().collect());
            }
        } else if let Some(rest) = line.strip_prefix("summary:") {
            summary = Some(rest);
        }
    }
    let events = events.context("no `events:` line (not a cachegrind out file?)")?;
    let summary = summary.context("no `summary:` line (cachegrind did not finish?)")?;
    let values = summary
        .split_whitespace()
        .map(|v| {
            v.parse::<u64>()
                .with_context(|| format!("bad count `{v}` in summary line"))
        })
        .collect::<anyhow::Result<Vec<u64>>>()?;
    if values.len() > events.len() {
        bail!(
            "summary line has {} counts but `events:` names only {}",
            values.len(),
            events.len()
        );
    }
    let get = |name: &str| -> anyhow::Result<u64> {
        let idx = events.iter().position(|e| *e == name).with_context(|| {
            format!(
                "event {name} missing from `events: {}` (was --cache-sim=yes given?)",
                events.join(" ")
            )
        })?;
        Ok(values.get(idx).copied().unwrap_or(0))
    };
    let mut sim = Simulated {
        ir: get("Ir")?,
        i1_misses: get("I1mr")?,
        ill_misses: get("ILmr")?,
        dr: get("Dr")?,
        d1r_misses: get("D1mr")?,
        dlr_misses: get("DLmr")?,
        dw: get("Dw")?,
        d1w_misses: get("D1mw")?,
        dlw_misses: get("DLmw")?,
        estimated_cycles: 0,
    };
    sim.estimated_cycles = sim.estimate_cycles();
    Ok(sim)
}

/// "; last stderr lines:\n  …", or "; no stderr output".
fn format_tail(stderr: &[u8]) -> String {
    let lines = spawn::last_lines(stderr, STDERR_TAIL_LINES);
    if lines.is_empty() {
        return "; no stderr output".to_string();
    }
    let mut out = String::from("; last stderr lines:");
    for line in &lines {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Header and summary copied from a real run on this project's VM:
    /// `valgrind --tool=cachegrind --cache-sim=yes /bin/true` (3.19.0).
    const SAMPLE: &str = "\
desc: I1 cache:         65536 B, 64 B, 4-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         67108864 B, 64 B, 64-way associative
cmd: /bin/true
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw 
fl=./csu/../csu/libc-start.c
fn=__libc_start_main@@GLIBC_2.34
128 2 1 1 2 0 0 0 0 0
134 3 0 0 1 1 0 0 0 0
summary: 127679 1075 1072 29390 1225 1013 10265 344 311
";

    /// Whether valgrind is usable; says loudly when not, and under `CI=true`
    /// a missing or broken valgrind fails the test instead of skipping it.
    fn valgrind_or_skip() -> bool {
        match availability() {
            Ok(v) => {
                eprintln!("using {v}");
                true
            }
            Err(why) => {
                crate::test_skip::skipped(&format!("a working valgrind ({why})"));
                false
            }
        }
    }

    #[test]
    fn parses_real_sample() {
        let s = parse_out_file(SAMPLE).unwrap();
        assert_eq!(s.ir, 127_679);
        assert_eq!(s.i1_misses, 1075);
        assert_eq!(s.ill_misses, 1072);
        assert_eq!(s.dr, 29_390);
        assert_eq!(s.d1r_misses, 1225);
        assert_eq!(s.dlr_misses, 1013);
        assert_eq!(s.dw, 10_265);
        assert_eq!(s.d1w_misses, 344);
        assert_eq!(s.dlw_misses, 311);
        // accesses 167334, L1 misses 2644, LL misses 2396:
        // (167334-2644) + 5*(2644-2396) + 35*2396
        assert_eq!(s.estimated_cycles, 164_690 + 5 * 248 + 35 * 2396);
    }

    #[test]
    fn maps_columns_by_name_not_position() {
        let text = "events: Dw Ir Bc Bcm DLmw D1mw DLmr D1mr Dr ILmr I1mr\n\
                    summary: 7 100 55 5 1 2 3 4 50 5 6\n";
        let s = parse_out_file(text).unwrap();
        assert_eq!(
            (
                s.ir,
                s.i1_misses,
                s.ill_misses,
                s.dr,
                s.d1r_misses,
                s.dlr_misses
            ),
            (100, 6, 5, 50, 4, 3)
        );
        assert_eq!((s.dw, s.d1w_misses, s.dlw_misses), (7, 2, 1));
    }

    #[test]
    fn trailing_zero_counts_may_be_omitted() {
        let text = "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: 10 1\n";
        let s = parse_out_file(text).unwrap();
        assert_eq!((s.ir, s.i1_misses, s.dw), (10, 1, 0));
    }

    #[test]
    fn rejects_bad_files_without_panicking() {
        for bad in [
            "",
            "summary: 1 2 3\n",
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n",
            "events: Ir\nsummary: 5\n",
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: 1 x 3\n",
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: -1\n",
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: 1 2 3 4 5 6 7 8 9 10\n",
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: 99999999999999999999999\n",
        ] {
            let err = parse_out_file(bad).expect_err(bad);
            assert!(!err.to_string().is_empty());
        }
        let err = parse_out_file("events: Ir\nsummary: 5\n").unwrap_err();
        assert!(err.to_string().contains("--cache-sim=yes"), "{err}");
    }

    #[test]
    fn estimate_saturates_instead_of_overflowing() {
        let huge = Simulated {
            ir: u64::MAX,
            ill_misses: u64::MAX,
            ..Default::default()
        };
        assert_eq!(huge.estimate_cycles(), u64::MAX);
        // More misses than accesses (nonsense input) does not underflow.
        let odd = Simulated {
            i1_misses: 10,
            ..Default::default()
        };
        assert_eq!(odd.estimate_cycles(), 50);
    }

    #[test]
    fn empty_command_is_an_error() {
        assert!(simulate(&[], &[], None, Duration::from_secs(5)).is_err());
    }

    #[test]
    fn simulating_true_is_deterministic() {
        if !valgrind_or_skip() {
            return;
        }
        let argv = vec!["/bin/true".to_string()];
        let env = vec![("GHOSTBENCH_TEST".to_string(), "x".to_string())];
        let a = simulate(&argv, &env, None, Duration::from_secs(120)).unwrap();
        let b = simulate(&argv, &env, None, Duration::from_secs(120)).unwrap();
        eprintln!("/bin/true under cachegrind: {a:?}");
        assert!(a.ir > 0);
        assert_eq!(a.ir, b.ir);
        assert!(a.estimated_cycles >= a.ir);
    }

    #[test]
    fn children_are_traced_and_summed() {
        if !valgrind_or_skip() {
            return;
        }
        let t = Duration::from_secs(120);
        let one = simulate(&["/bin/true".to_string()], &[], None, t).unwrap();
        let script = "/bin/true; /bin/true; /bin/true".to_string();
        let sh = simulate(&["sh".to_string(), "-c".to_string(), script], &[], None, t).unwrap();
        eprintln!("true: Ir {}; sh running true thrice: Ir {}", one.ir, sh.ir);
        assert!(sh.ir > 3 * one.ir, "children not counted: {}", sh.ir);
    }

    #[test]
    fn missing_program_gives_clear_error() {
        if !valgrind_or_skip() {
            return;
        }
        let argv = vec!["/nonexistent/ghostbench-no-such-program".to_string()];
        let err = simulate(&argv, &[], None, Duration::from_secs(60)).unwrap_err();
        let msg = format!("{err:#}");
        eprintln!("{msg}");
        assert!(msg.contains("exit code"), "{msg}");
        assert!(msg.contains("No such file"), "{msg}");
    }

    #[test]
    fn failing_command_reports_status_and_stderr() {
        if !valgrind_or_skip() {
            return;
        }
        let argv: Vec<String> = ["sh", "-c", "echo first >&2; echo boom >&2; exit 3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let msg = format!(
            "{:#}",
            simulate(&argv, &[], None, Duration::from_secs(60)).unwrap_err()
        );
        assert!(msg.contains("exit code 3"), "{msg}");
        assert!(msg.contains("boom"), "{msg}");
    }

    #[test]
    fn timeout_kills_the_command() {
        if !valgrind_or_skip() {
            return;
        }
        let argv: Vec<String> = ["sleep", "30"].iter().map(|s| s.to_string()).collect();
        let start = Instant::now();
        let err = simulate(&argv, &[], None, Duration::from_millis(1500)).unwrap_err();
        assert!(err.to_string().contains("timed out"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
