//! Where a run's standard streams go: stdin from /dev/null (or `--input`, rewound
//! for every run), stdout and stderr into two in-memory files (memfd) that live
//! for the whole experiment (stdout to /dev/null for a tool whose output
//! nobody reads).
//!
//! Files instead of pipes, because a pipe must be created, pumped while the
//! command runs and closed for every run: that was most of what ghostbench paid
//! per run beyond hyperfine (which discards output). A file costs nothing while
//! the command runs; afterwards we read what the metrics need and empty it.
//! The price is memory: one run's output is held until the run ends.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Bytes of stderr kept for error messages: its tail.
pub const STDERR_TAIL: usize = 64 * 1024;

/// Which part of stdout to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The first N bytes, for metrics that parse output.
    Head(usize),
    /// The last N bytes, for error messages.
    Tail(usize),
}

/// What one run wrote, as far as anything reads it.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    /// The part of stdout asked for.
    pub stdout: Vec<u8>,
    pub stdout_truncated: bool,
    /// The tail of stderr: [`STDERR_TAIL`] bytes unless [`Capture::keep_stderr`] said more.
    pub stderr_tail: Vec<u8>,
}

/// The three descriptors every run's child gets as 0, 1 and 2.
pub struct Capture {
    stdin: File,
    /// True when stdin is a user's file that each run must read from its start.
    rewind_stdin: bool,
    stdout: File,
    stderr: File,
    /// Bytes of stderr's tail kept per run.
    stderr_keep: usize,
    /// stdout goes to /dev/null ([`Capture::discard_stdout`]).
    discard_stdout: bool,
}

impl Capture {
    /// Streams for runs that read `input` on stdin, or /dev/null without one.
    pub fn new(input: Option<&Path>) -> Result<Capture> {
        let path = input.unwrap_or(Path::new("/dev/null"));
        let stdin = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Capture {
            stdin: File::from(above_standard(stdin.into())?),
            rewind_stdin: input.is_some(),
            stdout: output_file(c"ghostbench-stdout")?,
            stderr: output_file(c"ghostbench-stderr")?,
            stderr_keep: STDERR_TAIL,
            discard_stdout: false,
        })
    }

    /// Send stdout to /dev/null (a tool whose output nobody reads, which may
    /// write a lot of it).
    pub fn discard_stdout(&mut self) -> Result<()> {
        self.stdout = null_output()?;
        self.discard_stdout = true;
        Ok(())
    }

    /// Keep up to `bytes` of stderr's tail per run instead of [`STDERR_TAIL`]
    /// (metrics that read stderr need more than error messages do).
    pub fn keep_stderr(&mut self, bytes: usize) {
        self.stderr_keep = bytes;
    }

    /// Before a run: put a `--input` file back at its start (the previous run
    /// shared and advanced its offset).
    pub fn rewind_input(&mut self) -> Result<()> {
        if self.rewind_stdin {
            self.stdin
                .seek(SeekFrom::Start(0))
                .context("cannot rewind --input")?;
        }
        Ok(())
    }

    /// The descriptors for the child's 0, 1 and 2.
    pub fn child_fds(&self) -> [RawFd; 3] {
        [
            self.stdin.as_raw_fd(),
            self.stdout.as_raw_fd(),
            self.stderr.as_raw_fd(),
        ]
    }

    /// Read what the last run wrote (the part of stdout asked for, the tail of
    /// stderr) and empty both files for the next run.
    pub fn collect(&mut self, stdout: Keep) -> Result<Collected> {
        let (stdout, written) = take(&mut self.stdout, stdout)?;
        let (stderr_tail, _) = take(&mut self.stderr, Keep::Tail(self.stderr_keep))?;
        Ok(Collected {
            stdout_truncated: written > stdout.len() as u64,
            stdout,
            stderr_tail,
        })
    }

    /// Fresh output files, for when processes the run left behind still hold
    /// the old ones: their later writes must not land in the next run's output.
    pub fn renew(&mut self) -> Result<()> {
        self.stdout = if self.discard_stdout {
            null_output()?
        } else {
            output_file(c"ghostbench-stdout")?
        };
        self.stderr = output_file(c"ghostbench-stderr")?;
        Ok(())
    }
}

/// The part of `file` asked for, then empty it. Returns the bytes and how many
/// the file held.
fn take(file: &mut File, part: Keep) -> Result<(Vec<u8>, u64)> {
    let size = file
        .metadata()
        .context("cannot stat captured output")?
        .len();
    if size == 0 {
        return Ok((Vec::new(), 0));
    }
    let (limit, from_end) = match part {
        Keep::Head(n) => (n, false),
        Keep::Tail(n) => (n, true),
    };
    let keep = size.min(limit as u64);
    let from = if from_end { size - keep } else { 0 };
    let mut bytes = vec![0; keep as usize];
    file.read_exact_at(&mut bytes, from)
        .context("cannot read captured output")?;
    file.set_len(0).context("cannot empty captured output")?;
    // The child shared our file offset; without this the next run writes after a hole.
    file.seek(SeekFrom::Start(0))
        .context("cannot rewind captured output")?;
    Ok((bytes, size))
}

/// /dev/null for writing.
fn null_output() -> Result<File> {
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .context("cannot open /dev/null")?;
    Ok(File::from(above_standard(null.into())?))
}

/// An anonymous in-memory file; an unnamed temporary file where memfd is missing.
fn output_file(name: &std::ffi::CStr) -> Result<File> {
    // SAFETY: name is a valid C string; the call returns a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    let owned = if fd >= 0 {
        // SAFETY: fd was just created and is owned by nobody else.
        unsafe { OwnedFd::from_raw_fd(fd) }
    } else {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
            .open(std::env::temp_dir())
            .with_context(|| {
                format!(
                    "cannot create a file to capture output (memfd_create: {})",
                    std::io::Error::last_os_error()
                )
            })?
            .into()
    };
    Ok(File::from(above_standard(owned)?))
}

/// Moves a descriptor above 0–2: if ghostbench was started with a standard
/// stream closed, a new file could land there, and `dup2(fd, fd)` in the child
/// would leave it close-on-exec.
fn above_standard(fd: OwnedFd) -> Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicating a descriptor we own; the result is a new descriptor or -1.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if moved < 0 {
        return Err(std::io::Error::last_os_error()).context("cannot duplicate a descriptor");
    }
    // SAFETY: moved is a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write_through(fd: RawFd, bytes: &[u8]) {
        // A duplicate shares the file offset, as the child's descriptor does.
        // SAFETY: dup of a valid descriptor; the File owns the duplicate.
        let mut child = unsafe { File::from_raw_fd(libc::dup(fd)) };
        child.write_all(bytes).unwrap();
    }

    #[test]
    fn collects_head_of_stdout_tail_of_stderr_and_empties_both() {
        let mut capture = Capture::new(None).unwrap();
        let [_, out, err] = capture.child_fds();
        write_through(out, b"0123456789");
        write_through(err, &vec![b'e'; STDERR_TAIL + 5]);
        let got = capture.collect(Keep::Head(4)).unwrap();
        assert_eq!(got.stdout, b"0123");
        assert!(got.stdout_truncated);
        assert_eq!(got.stderr_tail.len(), STDERR_TAIL);

        // The next run starts at offset 0 of an empty file: no stale bytes, no hole.
        write_through(out, b"ab");
        let got = capture.collect(Keep::Head(100)).unwrap();
        assert_eq!(got.stdout, b"ab");
        assert!(!got.stdout_truncated);
        assert!(got.stderr_tail.is_empty());
    }

    #[test]
    fn input_is_read_from_its_start_by_every_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, b"abc").unwrap();
        let mut capture = Capture::new(Some(&path)).unwrap();
        let [stdin, _, _] = capture.child_fds();
        let read_all = || {
            // SAFETY: a duplicate shares the offset, as the child's stdin does.
            let mut child = unsafe { File::from_raw_fd(libc::dup(stdin)) };
            let mut text = String::new();
            std::io::Read::read_to_string(&mut child, &mut text).unwrap();
            text
        };
        capture.rewind_input().unwrap();
        assert_eq!(read_all(), "abc");
        assert_eq!(
            read_all(),
            "",
            "without a rewind the next run would see nothing"
        );
        capture.rewind_input().unwrap();
        assert_eq!(read_all(), "abc");
        assert!(Capture::new(Some(&dir.path().join("missing"))).is_err());
    }

    #[test]
    fn renewed_files_do_not_see_writes_to_the_old_ones() {
        let mut capture = Capture::new(None).unwrap();
        let [_, old_out, _] = capture.child_fds();
        // SAFETY: as in write_through; kept open like a lingering grandchild's copy.
        let mut lingering = unsafe { File::from_raw_fd(libc::dup(old_out)) };
        capture.renew().unwrap();
        lingering.write_all(b"late").unwrap();
        assert!(capture.collect(Keep::Head(100)).unwrap().stdout.is_empty());
    }
}
