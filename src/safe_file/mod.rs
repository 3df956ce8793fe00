//! The file-safety rule (docs/reliability.md "File safety"), in one place:
//! how every report file is written, how every work and cache directory is
//! made, and what a path that is not ours gets.
//!
//! - A report path that does not exist, or is a regular file, is written
//!   through a sibling temporary file and a rename; an existing file keeps its
//!   mode (and, as root, its owner).
//! - A symbolic link is followed to an existing target, which the rule is then
//!   applied to; the link stays a link. A link to nothing is refused.
//! - A character device or a FIFO (`/dev/null`, `/dev/stdout`, `>(jq .)`) is
//!   written in place, never replaced; a FIFO with no reader is refused rather
//!   than waited on. A directory, a block device or a socket is refused.
//! - Work directories are made owner-only (0700) by a walk that opens each
//!   component with `O_NOFOLLOW` from the one before it: a link, or a directory
//!   of another user or writable by others, is an error naming it.
//! - Temporary files `.NAME.PID.ghostbench-tmp` (and `-check`) of processes
//!   that are gone are removed when NAME is next written.
//!
//! Depends on nothing else in the crate, so every floor can use it.

use std::ffi::CString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

const TEMP_SUFFIX: &str = "ghostbench-tmp";
const CHECK_SUFFIX: &str = "ghostbench-check";

/// What a report path is, after following a link.
enum Target {
    /// Nothing there yet: a new file, by rename.
    New(PathBuf),
    /// A regular file (the link's target when it was a link): replaced by
    /// rename, keeping its mode and owner.
    Regular(PathBuf, Metadata),
    /// A character device or a FIFO: written in place.
    InPlace { path: PathBuf, followed: bool },
}

fn refused(why: impl Into<String>) -> io::Error {
    io::Error::other(why.into())
}

/// What may be done at `path`, or why nothing may.
fn classify(path: &Path) -> io::Result<Target> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::New(path.into())),
        Err(e) => return Err(e),
        Ok(meta) => meta,
    };
    if !meta.file_type().is_symlink() {
        return kind(path, meta, false);
    }
    let target =
        match std::fs::metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(refused(
                "it is a symbolic link to nothing (a link is followed only to an existing file)",
            )),
            Err(e) => return Err(e),
            Ok(target) => target,
        };
    if target.is_file() {
        // The rename goes onto the link's target, so the link stays.
        let real = std::fs::canonicalize(path)?;
        return Ok(Target::Regular(real, target));
    }
    kind(path, target, true)
}

fn kind(path: &Path, meta: Metadata, followed: bool) -> io::Result<Target> {
    let t = meta.file_type();
    if t.is_file() {
        Ok(Target::Regular(path.into(), meta))
    } else if t.is_char_device() || t.is_fifo() {
        Ok(Target::InPlace {
            path: path.into(),
            followed,
        })
    } else if t.is_dir() {
        Err(refused("it is a directory"))
    } else if t.is_block_device() {
        Err(refused(
            "it is a block device (reports go only to files, character devices and FIFOs)",
        ))
    } else {
        Err(refused(
            "it is a socket (reports go only to files, character devices and FIFOs)",
        ))
    }
}

/// Write `bytes` to `path` by the rule above. A crash leaves the old file or
/// the whole new one. Errors are the cause alone; the caller names the path.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, &mut |out| out.write_all(bytes))
}

/// [`write`] of what `fill` writes, piece by piece through a buffer, so a
/// report need not be held whole in memory first (a JSON document of a
/// million runs a side is 700 MB of text).
pub fn write_with(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    match classify(path)? {
        Target::New(path) => replace(&path, fill, None),
        Target::Regular(path, meta) => replace(&path, fill, Some(&meta)),
        Target::InPlace { path, followed } => {
            let mut out = io::BufWriter::new(open_in_place(&path, followed)?);
            fill(&mut out)?;
            out.flush()
        }
    }
}

/// Before any work: whether [`write`] could write `path` (a regular file's
/// directory takes a new file, created and removed again; a device or FIFO
/// is only classified, so no reader sees an early end of file).
pub fn check(path: &Path) -> io::Result<()> {
    let path = match classify(path)? {
        Target::InPlace { .. } => return Ok(()),
        Target::New(path) | Target::Regular(path, _) => path,
    };
    let (dir, name) = split(&path)?;
    let probe = dir.join(format!(".{name}.{}.{CHECK_SUFFIX}", std::process::id()));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

fn split(path: &Path) -> io::Result<(PathBuf, String)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| refused("it does not name a file"))?;
    Ok((dir.to_path_buf(), name.to_string_lossy().into_owned()))
}

/// A device or FIFO opened for writing in place: without following a link
/// unless the path was one, without becoming a controlling terminal, and
/// without waiting for a FIFO's reader (none is an error). Checked again on
/// the open file, so a path swapped meanwhile is not written.
fn open_in_place(path: &Path, followed: bool) -> io::Result<File> {
    let mut flags = libc::O_NOCTTY | libc::O_NONBLOCK;
    if !followed {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => refused("it is a FIFO that nothing reads"),
            _ => e,
        })?;
    let t = file.metadata()?.file_type();
    if !(t.is_char_device() || t.is_fifo()) {
        return Err(refused("it changed while being opened"));
    }
    // Writes block as usual from here on.
    // SAFETY: fcntl on a file descriptor this function owns.
    unsafe {
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// A new or regular file at `path`: a sibling temporary file with the old
/// file's mode (and owner, when root), fsynced, renamed over it.
fn replace(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    old: Option<&Metadata>,
) -> io::Result<()> {
    let (dir, name) = split(path)?;
    clean_stale(&dir, &name);
    let temp = dir.join(format!(".{name}.{}.{TEMP_SUFFIX}", std::process::id()));
    // A leftover of an earlier process with this PID.
    let _ = std::fs::remove_file(&temp);
    let mode = old.map_or(0o666, |m| m.mode() & 0o777);
    let mut written = || -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temp)?;
        if let Some(old) = old {
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()))?;
            }
            // The umask does not narrow an existing file's mode.
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        let mut out = io::BufWriter::new(&mut file);
        fill(&mut out)?;
        out.flush()?;
        drop(out);
        file.sync_all()?;
        std::fs::rename(&temp, path)
    };
    written().inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

/// Remove `.NAME.PID.ghostbench-tmp` and `.NAME.PID.ghostbench-check` in
/// `dir` whose process is gone (a writer killed with SIGKILL leaves them).
/// Best effort: what cannot be read or removed stays.
pub fn clean_stale(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let pid = [TEMP_SUFFIX, CHECK_SUFFIX]
            .iter()
            .find_map(|s| rest.strip_suffix(s)?.strip_suffix('.'))
            .and_then(|pid| pid.parse::<i32>().ok());
        let Some(pid) = pid.filter(|&p| p > 0 && p as u32 != std::process::id()) else {
            continue;
        };
        if !alive(pid)
            && entry
                .file_type()
                .is_ok_and(|t| t.is_file() || t.is_symlink())
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` exists (one of another user counts).
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether `a` and `b` are one file: the same device and inode when both
/// exist, else the same absolute path (directories resolved, names compared).
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return x.dev() == y.dev() && x.ino() == y.ino();
    }
    match (resolved(a), resolved(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(path) {
        return Some(real);
    }
    let (dir, name) = split(path).ok()?;
    Some(std::fs::canonicalize(dir).ok()?.join(name))
}

/// The directory `base/relative`, made owner-only where it is new. `base` is
/// the caller's (the working directory, `--root`) and is made as usual when
/// missing; below it each component is opened from the one before with
/// `O_NOFOLLOW` and must be a directory of this user that no one else can
/// write, else the error names it. `relative` has plain components only.
pub fn private_dir(base: &Path, relative: &Path) -> io::Result<PathBuf> {
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    std::fs::create_dir_all(base)?;
    let mut dir = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(base)?;
    let mut walked = base.to_path_buf();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for part in relative.components() {
        let Component::Normal(name) = part else {
            return Err(refused(format!(
                "{}: not a plain relative path",
                relative.display()
            )));
        };
        walked.push(name);
        let c_name = CString::new(name.as_bytes()).map_err(|_| refused("a NUL in a path"))?;
        dir = open_private(&dir, &c_name, &walked, me)?;
    }
    Ok(base.join(relative))
}

/// [`private_dir`] for the last `depth` components of `path`, below the
/// rest (a build's `WORK/BUILD/SEED` under the experiment's checked `WORK`).
pub fn private_tail(path: &Path, depth: usize) -> io::Result<PathBuf> {
    let parts: Vec<Component> = path.components().collect();
    let split = parts.len().saturating_sub(depth);
    let base: PathBuf = parts[..split].iter().collect();
    let tail: PathBuf = parts[split..].iter().collect();
    private_dir(&base, &tail)
}

/// One step of [`private_dir`]: `name` under `parent`, made 0700 if missing.
fn open_private(parent: &File, name: &CString, shown: &Path, me: u32) -> io::Result<File> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    for _ in 0..2 {
        // SAFETY: a NUL-terminated name, relative to a directory fd we own.
        let fd = unsafe { libc::openat(parent.as_raw_fd(), name.as_ptr(), flags) };
        if fd >= 0 {
            // SAFETY: a descriptor openat just returned, owned from here on.
            let dir = unsafe { File::from_raw_fd(fd) };
            let meta = dir.metadata()?;
            if meta.uid() != me {
                return Err(refused(format!(
                    "{} belongs to user {}, not to this user ({me}); ghostbench works only in directories of its own",
                    shown.display(),
                    meta.uid()
                )));
            }
            if meta.mode() & 0o022 != 0 {
                return Err(refused(format!(
                    "{} is writable by other users (mode {:o}); ghostbench's work directories are owner-only (chmod 700 it)",
                    shown.display(),
                    meta.mode() & 0o7777
                )));
            }
            return Ok(dir);
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::ENOENT) => {
                // SAFETY: as for openat above.
                let made = unsafe { libc::mkdirat(parent.as_raw_fd(), name.as_ptr(), 0o700) };
                let error = io::Error::last_os_error();
                if made != 0 && error.raw_os_error() != Some(libc::EEXIST) {
                    return Err(error);
                }
            }
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
                // Which of the two, for the message only (the open refused it).
                let link = std::fs::symlink_metadata(shown).is_ok_and(|m| m.is_symlink());
                let what = if link {
                    "is a symbolic link, where ghostbench keeps a directory of its own"
                } else {
                    "is not a directory, where ghostbench keeps one of its own"
                };
                return Err(refused(format!("{} {what} (remove it)", shown.display())));
            }
            _ => return Err(error),
        }
    }
    Err(refused(format!(
        "{} vanished while being made",
        shown.display()
    )))
}

#[cfg(test)]
mod tests;
