//! What a result records about where it was made that the `--json` document
//! does not hold: the git commit, branch and dirty flag of the working
//! directory (when it is a git repository), and the host name.

use super::record::Git;
use std::path::Path;
use std::process::{Command, Stdio};

/// The git state of `dir`, or None when it is not in a git work tree (or git
/// is not installed).
pub fn git(dir: &Path) -> Option<Git> {
    let out = |args: &[&str]| -> Option<String> {
        let output = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    let commit = out(&["rev-parse", "HEAD"])?;
    let branch = out(&["symbolic-ref", "--short", "-q", "HEAD"]).filter(|b| !b.is_empty());
    // Changes to tracked files only: the reports and the store itself are
    // untracked files in the working directory, and would make every result dirty.
    let dirty =
        out(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(Git {
        commit,
        branch,
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

    #[test]
    fn a_directory_outside_git_has_no_git_state() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git(dir.path()), None);
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
