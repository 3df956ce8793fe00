//! What a result records about where it was made that the `--json` document
//! does not hold: the git commit, branch and dirty flag of the working
//! directory (when it is a git repository), and the host name.

use super::record::Git;

/// The arguments of the one git call whose output [`git_from_status`] reads:
/// commit, branch and dirty flag in one process.
pub const GIT_STATUS_ARGS: [&str; 4] = [
    "status",
    "--porcelain=v2",
    "--branch",
    // Changes to tracked files only: the reports and the store itself are
    // untracked files in the working directory, and would make every result dirty.
    "--untracked-files=no",
];

/// The git state in the output of `git status` run with [`GIT_STATUS_ARGS`],
/// or None when it names no commit (a repository without one yet).
pub fn git_from_status(status: &str) -> Option<Git> {
    let mut commit = None;
    let mut branch = None;
    let mut dirty = false;
    for line in status.lines() {
        if let Some(oid) = line.strip_prefix("# branch.oid ") {
            commit = Some(oid.trim()).filter(|o| *o != "(initial)");
        } else if let Some(head) = line.strip_prefix("# branch.head ") {
            branch = Some(head.trim()).filter(|h| *h != "(detached)" && !h.is_empty());
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            dirty = true;
        }
    }
    Some(Git {
        commit: commit?.to_string(),
        branch: branch.map(str::to_string),
        dirty,
    })
}

/// This machine's host name.
pub fn host() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    /// The git state of `dir` as `cli::store` reads it, or None when git fails
    /// there (not a work tree).
    fn git(dir: &Path) -> Option<Git> {
        let output = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(GIT_STATUS_ARGS)
            .output()
            .ok()?;
        output.status.success().then_some(())?;
        git_from_status(&String::from_utf8_lossy(&output.stdout))
    }

    #[test]
    fn a_directory_outside_git_has_no_git_state() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git(dir.path()), None);
    }

    #[test]
    fn status_lines_read_as_commit_branch_and_dirt() {
        let oid = "# branch.oid 0123456789abcdef0123456789abcdef01234567\n";
        let clean = git_from_status(&format!("{oid}# branch.head main\n")).unwrap();
        assert_eq!(
            (clean.branch.as_deref(), clean.dirty),
            (Some("main"), false)
        );
        let detached = git_from_status(&format!(
            "{oid}# branch.head (detached)\n1 .M N... 100644 100644 100644 a b f\n"
        ))
        .unwrap();
        assert_eq!((detached.branch, detached.dirty), (None, true));
        assert_eq!(
            git_from_status("# branch.oid (initial)\n# branch.head main\n"),
            None
        );
    }

    #[test]
    fn a_fresh_repository_reports_its_commit_branch_and_dirt() {
        let dir = tempfile::tempdir().unwrap();
        let git_in = |args: &[&str]| {
            Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        assert!(git_in(&["init", "-q", "-b", "work"]), "git init");
        std::fs::write(dir.path().join("f"), "1").unwrap();
        assert!(git_in(&["add", "f"]));
        assert!(git_in(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "one"
        ]));
        let clean = git(dir.path()).unwrap();
        assert_eq!(clean.commit.len(), 40);
        assert_eq!(
            (clean.branch.as_deref(), clean.dirty),
            (Some("work"), false)
        );
        std::fs::write(dir.path().join("f"), "2").unwrap();
        assert!(git(dir.path()).unwrap().dirty);
    }
}
