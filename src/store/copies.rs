//! What a baseline keeps so that `compare --baseline` can run it again, next
//! to the store (docs/store.md): a content-addressed copy of its program
//! under `baselines/<sha256>` (owner-only), and the SHA-256 of every other
//! word of its command that names a file. [`Rerun`] is recorded with the
//! baseline; [`check`] tells before a gate whether what it names is still
//! there and unchanged. Paths come resolved from the caller: the store knows
//! no command syntax.

use super::{hex, Location, StoreError};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where the copies of the store at `location` live: `baselines/` beside a
/// SQLite file; `.ghostbench/baselines/` in the working directory for a
/// PostgreSQL server (the copies stay on the machine that saved them).
pub fn directory(location: &Location) -> PathBuf {
    match location {
        Location::Sqlite(path) => path
            .parent()
            .unwrap_or_else(|| Path::new(""))
            .join("baselines"),
        Location::Postgres(_) => PathBuf::from(".ghostbench/baselines"),
    }
}

/// A file and its SHA-256 (lower-case hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hashed {
    /// The path as the command names it (relative to the working directory
    /// when it is relative), or the program's resolved path.
    pub path: String,
    pub sha256: String,
}

/// What re-running a baseline's command needs: its argv and how it is run,
/// the program's copy (None when the program is not a file ghostbench runs
/// itself: `--shell`), and the hashes of the other files the command names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rerun {
    pub argv: Vec<String>,
    pub shell: bool,
    /// The program as resolved when saved, and its copy's hash.
    pub program: Option<Hashed>,
    /// Other words of the command that named regular files when saved.
    pub files: Vec<Hashed>,
}

/// Why a baseline cannot be run again as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// The copy of the program is gone.
    CopyGone(PathBuf),
    /// The copy of the program no longer has its hash.
    CopyChanged(PathBuf),
    /// A file the command names is gone.
    FileGone(String),
    /// A file the command names changed since the baseline was saved.
    FileChanged(String),
}

/// The SHA-256 of the file at `path`.
pub fn hash(path: &Path) -> std::io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn io(what: &str, path: &Path, error: std::io::Error) -> StoreError {
    StoreError::Io(format!("{what} {}: {error}", path.display()))
}

/// Copy `program` into `dir` as `dir/<sha256>` (the directory created
/// owner-only, the copy owner-only and executable), unless a copy with that
/// hash is there already; its hash. The copy is written to a temporary
/// sibling and renamed, so a copy under its hash is always whole.
pub fn keep(dir: &Path, program: &Path) -> Result<String, StoreError> {
    // Owner-only, and not through a link: the file-safety rule for work
    // directories (a planted `baselines` link would put the copy elsewhere).
    // Under ghostbench's own `.ghostbench` (the default store's, or a
    // PostgreSQL store's copies) the walk starts at the working directory,
    // so a `.ghostbench` that is a link is refused too.
    let plain: PathBuf = dir
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect();
    let walked = if plain.starts_with(".ghostbench") {
        crate::safe_file::private_dir(Path::new("."), &plain)
    } else {
        crate::safe_file::private_tail(dir, 1)
    };
    walked.map_err(|e| io("cannot create", dir, e))?;
    let bytes = fs::read(program).map_err(|e| io("cannot read", program, e))?;
    let sha = hex(&Sha256::digest(&bytes));
    let target = dir.join(&sha);
    if hash(&target).ok().as_deref() == Some(sha.as_str()) {
        return Ok(sha);
    }
    let temporary = dir.join(format!(".{sha}.{}", std::process::id()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o700)
            .open(&temporary)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        fs::set_permissions(&temporary, fs::Permissions::from_mode(0o700))?;
        fs::rename(&temporary, &target)
    })();
    if let Err(error) = written {
        let _ = fs::remove_file(&temporary);
        return Err(io("cannot write", &target, error));
    }
    Ok(sha)
}

impl Rerun {
    /// What re-running needs: `program` (the resolved argv[0], None with
    /// `--shell`) copied into `dir`; every other word of `argv` that names a
    /// regular file, hashed. For `sh -c TEXT` the words of TEXT are looked at
    /// (`words`, split by the caller).
    pub fn keep(
        dir: &Path,
        argv: &[String],
        shell: bool,
        program: Option<&Path>,
        words: &[String],
    ) -> Result<Rerun, StoreError> {
        let program = match program {
            Some(path) => Some(Hashed {
                path: path.display().to_string(),
                sha256: keep(dir, path)?,
            }),
            None => None,
        };
        let mut files = Vec::new();
        for word in words {
            let path = Path::new(word);
            if !path.is_file() || files.iter().any(|f: &Hashed| &f.path == word) {
                continue;
            }
            let sha256 = hash(path).map_err(|e| io("cannot read", path, e))?;
            files.push(Hashed {
                path: word.clone(),
                sha256,
            });
        }
        Ok(Rerun {
            argv: argv.to_vec(),
            shell,
            program,
            files,
        })
    }

    /// The argv to run the baseline with now: the program's copy in `dir`
    /// (or the program itself while it still has the saved hash) in place
    /// of argv[0]; or why it cannot be run as it was.
    pub fn check(&self, dir: &Path) -> Result<Vec<String>, Missing> {
        let mut argv = self.argv.clone();
        if let Some(program) = &self.program {
            let original = hash(Path::new(&program.path)).ok();
            if original.as_deref() != Some(program.sha256.as_str()) {
                let copy = dir.join(&program.sha256);
                match hash(&copy) {
                    Err(_) => return Err(Missing::CopyGone(copy)),
                    Ok(sha) if sha != program.sha256 => return Err(Missing::CopyChanged(copy)),
                    Ok(_) => {}
                }
                if let Some(first) = argv.first_mut() {
                    *first = copy.display().to_string();
                }
            }
        }
        for file in &self.files {
            match hash(Path::new(&file.path)) {
                Err(_) => return Err(Missing::FileGone(file.path.clone())),
                Ok(sha) if sha != file.sha256 => {
                    return Err(Missing::FileChanged(file.path.clone()))
                }
                Ok(_) => {}
            }
        }
        Ok(argv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_sha256() {
        // FIPS 180-2 appendix B.1: SHA-256("abc").
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("abc");
        fs::write(&path, "abc").unwrap();
        assert_eq!(
            hash(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_kept_program_runs_from_its_copy_until_the_copy_is_gone_or_changed() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("bin");
        let input = dir.path().join("input");
        fs::write(&program, "v1").unwrap();
        fs::write(&input, "data").unwrap();
        let copies = dir.path().join("store/baselines");
        let argv: Vec<String> = vec![
            program.display().to_string(),
            input.display().to_string(),
            "-v".into(),
        ];
        let rerun = Rerun::keep(&copies, &argv, false, Some(&program), &argv[1..]).unwrap();
        assert_eq!(rerun.files.len(), 1);
        let sha = &rerun.program.as_ref().unwrap().sha256;
        let copy = copies.join(sha);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&copies), 0o700);
        assert_eq!(mode(&copy), 0o700);
        // Unchanged: the program itself.
        assert_eq!(rerun.check(&copies).unwrap(), argv);
        // Rebuilt: its copy.
        fs::write(&program, "v2").unwrap();
        let now = rerun.check(&copies).unwrap();
        assert_eq!(now[0], copy.display().to_string());
        assert_eq!(now[1..], argv[1..]);
        // The copy altered, then removed.
        fs::write(&copy, "v3").unwrap();
        assert_eq!(
            rerun.check(&copies),
            Err(Missing::CopyChanged(copy.clone()))
        );
        fs::remove_file(&copy).unwrap();
        assert_eq!(rerun.check(&copies), Err(Missing::CopyGone(copy.clone())));
        // Kept again under the same hash; then a file named in the command changed.
        fs::write(&program, "v1").unwrap();
        assert_eq!(&keep(&copies, &program).unwrap(), sha);
        assert_eq!(rerun.check(&copies).unwrap(), argv);
        fs::write(&input, "other").unwrap();
        assert_eq!(
            rerun.check(&copies),
            Err(Missing::FileChanged(argv[1].clone()))
        );
    }
}
