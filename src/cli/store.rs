//! The arguments every verb that stores results shares (`--store`,
//! `--no-store`, `--fail-on`), and the glue that records a verb's `--json`
//! document in the store: a store that cannot be written is a one-line
//! warning, never a failed experiment.

use super::exit::{usage, UsageError};
use super::output::errln;
use super::output::ReportFiles;
use crate::run::capture::Keep;
use crate::run::launch::{self, Launch};
use crate::safe_file;
use crate::stats::verdict::Verdict as Decision;
use crate::store::record::{Git, Verdict};
use crate::store::{context, Access, Location, Record, Store, StoreError, DEFAULT_PATH};
use anyhow::{bail, Result};
use clap::Args;
use serde_json::Value;

/// The environment variable that names the store when `--store` is not given.
pub const STORE_VAR: &str = "GHOSTBENCH_STORE";

#[derive(Debug, Clone, Default, Args)]
pub struct StoreArgs {
    /// The results store: a SQLite file, or postgresql://user@host:port/db
    /// [default: $GHOSTBENCH_STORE, else .ghostbench/results.db].
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Do not record this result.
    #[arg(long, conflicts_with = "store")]
    pub no_store: bool,
    /// Use a store database that holds tables ghostbench did not create
    /// (ghostbench's tables are added beside them); refused otherwise.
    #[arg(long, conflicts_with = "no_store")]
    pub store_foreign: bool,
}

impl StoreArgs {
    /// Where results go, or None with `--no-store`.
    pub fn location(&self) -> Option<Location> {
        if self.no_store {
            return None;
        }
        let text = self
            .store
            .clone()
            .or_else(|| std::env::var(STORE_VAR).ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| DEFAULT_PATH.to_string());
        Some(Location::parse(&text))
    }

    /// Open the store for reading (a baseline, `history`): read-only, so a
    /// store others may only read serves too; an error when it cannot be.
    pub fn open(&self) -> Result<Store> {
        self.open_as(true)
    }

    /// Open the store for writing (`history import`).
    pub fn open_for_writing(&self) -> Result<Store> {
        self.open_as(false)
    }

    fn open_as(&self, read_only: bool) -> Result<Store> {
        let Some(location) = self.location() else {
            bail!("--no-store: there is no store to read");
        };
        if let Some(why) = location.refusal() {
            return Err(usage(format!("--store: {why}")));
        }
        Store::open_as(&location, self.access(read_only))
            .map_err(|e| anyhow::anyhow!("store {location}: {e}"))
    }

    fn access(&self, read_only: bool) -> Access {
        Access {
            read_only,
            foreign: self.store_foreign,
        }
    }

    /// Before any work, for a verb that stores its result: the store is a
    /// place that keeps results (else a usage error, exit 2), no report file
    /// is the store itself (exit 2: the report would overwrite it), and an
    /// existing SQLite store is a file of ghostbench's (not a link, a special
    /// file or a foreign database: exit 1). Nothing is created or changed
    /// (but an older schema, migrated as the save after the work would).
    pub fn check(&self, files: &ReportFiles) -> Result<()> {
        let Some(location) = self.location() else {
            return Ok(());
        };
        if let Some(why) = location.refusal() {
            return Err(usage(format!("--store: {why}")));
        }
        let Location::Sqlite(path) = &location else {
            return Ok(());
        };
        for (format, file) in files.paths() {
            if safe_file::same_file(file, path) {
                return Err(usage(format!(
                    "{} {} is the results store; give another path (or --no-store)",
                    format.flag(),
                    file.display()
                )));
            }
        }
        // An empty file is made a store by the save after the work, as a
        // missing one is; reading it now would find no store. So is a
        // database with no table yet (another ghostbench creating the
        // store at this moment).
        let empty = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0);
        if std::fs::symlink_metadata(path).is_ok() && !empty {
            match Store::open_as(&location, self.access(true)) {
                // A newer schema is the store's warning after the work,
                // which the work's report files do not depend on.
                Ok(_) | Err(StoreError::Newer { .. }) | Err(StoreError::Empty) => {}
                Err(e) => bail!("store {location}: {e}"),
            }
        }
        Ok(())
    }
}

/// The git state of the working directory and the host, for a record. Git is
/// one `git status` on the launcher; None outside a work tree or without git.
fn context() -> (Option<Git>, Option<String>) {
    let argv: Vec<String> = std::iter::once("git")
        .chain(context::GIT_STATUS_ARGS)
        .map(String::from)
        .collect();
    // The branch lines come first, and any line after them makes it dirty,
    // so the head of the output is all that is read.
    let git = Launch {
        stdout: Some(Keep::Head(launch::STDOUT_TAIL)),
        ..Launch::new(&argv)
    }
    .run_ok()
    .ok()
    .and_then(|o| context::git_from_status(&String::from_utf8_lossy(&o.stdout)));
    (git, context::host())
}

/// The record of `document` made by `verb` here and now; the git state and
/// host only when it is `stored` (for `--fail-on` alone no `git` runs).
pub fn record_of(verb: &str, document: &Value, stored: bool) -> Result<Record> {
    let (git, host) = if stored { context() } else { (None, None) };
    Ok(Record::from_document(verb, document, git, host)?)
}

/// A baseline to name when storing a result: its name, the command's index,
/// and what re-running it needs (`copies::Rerun` as JSON) when kept.
pub type Naming<'a> = (&'a str, usize, Option<&'a str>);

/// Store `record` (naming `baseline` when given). Prints where it went, or a
/// one-line warning; never fails.
pub fn save(store: &StoreArgs, record: &Record, baseline: Option<Naming>) -> Option<i64> {
    let location = store.location()?;
    let saved = Store::open_as(&location, store.access(false)).and_then(|mut s| match baseline {
        Some((name, command, rerun)) => s.save_with_baseline(record, name, command, rerun),
        None => s.save(record),
    });
    match saved {
        Ok(id) => {
            match baseline {
                Some((name, _, _)) => {
                    errln!("stored result #{id} in {location}, as baseline {name:?}")
                }
                None => errln!("stored result #{id} in {location}"),
            }
            Some(id)
        }
        Err(error) => {
            errln!("warning: result not stored in {location}: {error}");
            None
        }
    }
}

/// `--fail-on LIST`: the verdicts that fail the command (exit 6).
#[derive(Debug, Clone, Default, Args)]
pub struct FailOnArgs {
    /// Exit 6 (after writing every report) when any verdict is one of these:
    /// a comma-separated list of faster, slower, same, unknown, artifact,
    /// and fragile (`layout`: a build reproducibly worse than typical in some
    /// layouts, whatever its verdict).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub fail_on: Vec<String>,
}

/// What `--fail-on` can name: a verdict, or FRAGILE (a build reproducibly
/// worse than typical in some layouts, whatever its verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    Verdict(Decision),
    Fragile,
}

impl FailOn {
    /// Every name `--fail-on` takes, upper-case.
    pub fn names() -> Vec<String> {
        Decision::ALL
            .iter()
            .map(ToString::to_string)
            .chain(["FRAGILE".to_string()])
            .collect()
    }

    fn parse(text: &str) -> Option<FailOn> {
        if text.eq_ignore_ascii_case("fragile") {
            return Some(FailOn::Fragile);
        }
        text.parse().ok().map(FailOn::Verdict)
    }

    fn name(self) -> String {
        match self {
            FailOn::Verdict(v) => v.to_string(),
            FailOn::Fragile => "FRAGILE".into(),
        }
    }
}

impl FailOnArgs {
    /// What is asked for; a usage error for a name that is none of them.
    pub fn verdicts(&self) -> Result<Vec<FailOn>> {
        self.fail_on
            .iter()
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(|v| {
                FailOn::parse(v).ok_or_else(|| {
                    UsageError(format!(
                        "--fail-on: unknown verdict {:?}; use {}",
                        v.to_lowercase(),
                        FailOn::names().join(",").to_lowercase()
                    ))
                    .into()
                })
            })
            .collect()
    }

    /// `code`, or [`exit::FAIL_ON`](super::exit::FAIL_ON) when it is OK and a
    /// verdict is in the list, or FRAGILE is and a build is fragile (each
    /// named on stderr).
    pub fn exit_code(&self, code: i32, verdicts: &[Verdict]) -> i32 {
        let (list, hits) = self.hits(verdicts);
        if code != super::exit::OK || hits.is_empty() {
            return code;
        }
        errln!(
            "--fail-on {}: {}",
            list.join(",").to_lowercase(),
            hits.join("; ")
        );
        super::exit::FAIL_ON
    }

    /// `code` whatever the verdicts, for verdicts on a stored baseline's runs
    /// against another session's (docs/methodology.md §13): drift between
    /// sessions can make any of them, so none fails the command; one line
    /// names those that would have.
    pub fn not_applied(&self, code: i32, verdicts: &[Verdict]) -> i32 {
        let (list, hits) = self.hits(verdicts);
        if !hits.is_empty() {
            errln!(
                "--fail-on {}: not applied to stored runs from another session (not interleaved, so drift could have made it): {}",
                list.join(",").to_lowercase(),
                hits.join("; ")
            );
        }
        code
    }

    /// The verdicts asked for, and the given verdicts that are among them, named.
    fn hits(&self, verdicts: &[Verdict]) -> (Vec<String>, Vec<String>) {
        let asked = self.verdicts().unwrap_or_default();
        let fragile = asked.contains(&FailOn::Fragile);
        let list: Vec<String> = asked.iter().map(|f| f.name()).collect();
        let hits: Vec<String> = verdicts
            .iter()
            .flat_map(|v| {
                let verdict = asked.contains(&FailOn::Verdict(v.verdict)).then(|| {
                    format!(
                        "{} of {} vs {} is {}",
                        v.metric, v.name, v.baseline, v.verdict
                    )
                });
                let fragility = (fragile && v.fragile).then(|| {
                    format!(
                        "{} of {} vs {} is FRAGILE (reproducibly worse in some layouts)",
                        v.metric, v.name, v.baseline
                    )
                });
                verdict.into_iter().chain(fragility)
            })
            .collect();
        (list, hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(v: &str) -> Verdict {
        Verdict {
            metric: "wall".into(),
            baseline: "A".into(),
            name: "B".into(),
            verdict: v.parse().unwrap(),
            ratio: Some(1.3),
            ci_low: Some(1.2),
            ci_high: Some(1.4),
            fragile: false,
        }
    }

    #[test]
    fn fail_on_turns_a_listed_verdict_into_exit_6_only_when_all_else_went_well() {
        let args = FailOnArgs {
            fail_on: vec!["slower".into(), "Unknown".into()],
        };
        assert_eq!(
            args.verdicts().unwrap(),
            [
                FailOn::Verdict(Decision::Slower),
                FailOn::Verdict(Decision::Unknown)
            ]
        );
        assert_eq!(
            args.exit_code(0, &[verdict("SLOWER")]),
            super::super::exit::FAIL_ON
        );
        assert_eq!(args.exit_code(0, &[verdict("ARTIFACT")]), 0);
        assert_eq!(args.exit_code(0, &[verdict("SAME"), verdict("UNKNOWN")]), 6);
        // A failed run keeps its own code.
        assert_eq!(args.exit_code(3, &[verdict("SLOWER")]), 3);
        // Stored runs against another session's: never fired.
        assert_eq!(args.not_applied(0, &[verdict("SLOWER")]), 0);
        // FRAGILE fails on a fragile build whatever its verdict, and only
        // when asked.
        let mut fragile_same = verdict("SAME");
        fragile_same.fragile = true;
        assert_eq!(args.exit_code(0, std::slice::from_ref(&fragile_same)), 0);
        let args = FailOnArgs {
            fail_on: vec!["fragile".into()],
        };
        assert_eq!(args.exit_code(0, std::slice::from_ref(&fragile_same)), 6);
        assert_eq!(args.exit_code(0, &[verdict("SLOWER")]), 0);
        let bad = FailOnArgs {
            fail_on: vec!["slow".into()],
        };
        assert!(bad
            .verdicts()
            .unwrap_err()
            .downcast_ref::<UsageError>()
            .is_some());
    }

    #[test]
    fn the_store_is_the_flag_then_the_variable_then_the_default() {
        let args = StoreArgs {
            store: Some("postgresql://u:secret@h:5/db".into()),
            no_store: false,
            store_foreign: false,
        };
        let location = args.location().unwrap();
        assert!(matches!(location, Location::Postgres(_)));
        assert_eq!(location.to_string(), "postgresql://u:***@h:5/db");
        let off = StoreArgs {
            store: None,
            no_store: true,
            store_foreign: false,
        };
        assert_eq!(off.location(), None);
    }
}
