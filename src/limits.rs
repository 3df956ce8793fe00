//! Every upper bound on what a user or a plan can ask for, in one place
//! (issue 23, docs/reliability.md "Bounds"): the counts and durations a
//! command line or a plan file sets, checked before any work starts, and
//! the size cap of every file ghostbench reads. Floor 0: it depends on
//! nothing in the crate, so the command line (`cli`), the plan reader
//! (`layout::shard`) and every file reader use the same checks.
//!
//! A check returns the one-line reason as a [`Bound`] error; the caller
//! decides the exit code (`cli::exit`: a usage error, 2).

use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// A value outside its bounds: the one-line reason, naming the option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Bound(pub String);

/// The counts a command line or a plan sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// `--jobs`: parallel builds.
    Jobs,
    /// `--layouts`: variants per build (the default layout included).
    Layouts,
    /// `--max-layouts`: the most variants of `--layouts auto`.
    MaxLayouts,
    /// `--rounds`: measured runs of every (build, layout) pair.
    Rounds,
    /// `--warmup`: unmeasured runs first.
    Warmup,
    /// `--shards`: shards of a plan.
    Shards,
    /// `--min-runs` / `--max-runs` of `compare`.
    Runs,
    /// `--build`: builds of a layout experiment.
    Builds,
    /// `demo --max-compilers`.
    Compilers,
}

/// At most this many parallel builds per CPU this process may use: more
/// only queue on the CPUs, and each build is a process.
pub const JOBS_PER_CPU: usize = 4;
/// At most this many layout variants per build (`--layouts`,
/// `--max-layouts`, a plan's variants): 32 decide almost every comparison
/// (docs/methodology.md); 1,024 builds of each build are hours of linking.
pub const MAX_LAYOUTS: usize = 1024;
/// At most this many rounds, and warm-up runs.
pub const MAX_ROUNDS: usize = 10_000;
/// At most this many shards in a plan (never more than its variants).
pub const MAX_SHARDS: usize = MAX_LAYOUTS;
/// At most this many runs of each command in `compare`.
pub const MAX_RUNS: usize = 1_000_000;
/// At most this many builds in a layout experiment.
pub const MAX_BUILDS: usize = 64;
/// At most this many metrics in one experiment or `analyze`.
pub const MAX_METRICS: usize = 64;
/// At most this many compilers in `demo`.
pub const MAX_COMPILERS: usize = 16;
/// The longest duration any option takes: a year. Longer ones are typos,
/// and past about 10^19 s adding them to a clock overflows.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

impl Count {
    /// The option's name on the command line.
    pub fn flag(self) -> &'static str {
        match self {
            Count::Jobs => "--jobs",
            Count::Layouts => "--layouts",
            Count::MaxLayouts => "--max-layouts",
            Count::Rounds => "--rounds",
            Count::Warmup => "--warmup",
            Count::Shards => "--shards",
            Count::Runs => "--max-runs",
            Count::Builds => "--build",
            Count::Compilers => "--max-compilers",
        }
    }

    /// The smallest and the largest value allowed.
    pub fn range(self) -> (usize, usize) {
        match self {
            Count::Jobs => (1, JOBS_PER_CPU * cpus()),
            Count::Layouts | Count::MaxLayouts => (3, MAX_LAYOUTS),
            Count::Rounds => (1, MAX_ROUNDS),
            Count::Warmup => (0, MAX_ROUNDS),
            Count::Shards => (1, MAX_SHARDS),
            Count::Runs => (2, MAX_RUNS),
            Count::Builds => (2, MAX_BUILDS),
            Count::Compilers => (1, MAX_COMPILERS),
        }
    }

    /// `value` if it is in [`Count::range`], else why not.
    pub fn check(self, value: usize) -> Result<usize, Bound> {
        let (low, high) = self.range();
        let flag = self.flag();
        if value < low {
            return Err(Bound(format!("{flag} must be at least {low}, got {value}")));
        }
        if value > high {
            let why = match self {
                Count::Jobs => format!(
                    "{JOBS_PER_CPU} per CPU this process may use ({} CPUs)",
                    cpus()
                ),
                _ => "the most ghostbench takes".into(),
            };
            return Err(Bound(format!("{flag} {value} is more than {high}, {why}")));
        }
        Ok(value)
    }
}

/// The CPUs this process may use (1 when unknown).
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A duration option (`--timeout`, `--max-time`, `--budget`, a plan's
/// timeout): above 0 and at most [`MAX_DURATION`].
pub fn duration(flag: &str, value: Duration) -> Result<Duration, Bound> {
    if value.is_zero() {
        return Err(Bound(format!("{flag} must be longer than 0")));
    }
    if value > MAX_DURATION {
        return Err(Bound(format!(
            "{flag} is longer than a year, the most any option takes"
        )));
    }
    Ok(value)
}

/// A duration in seconds as a plan stores it, checked like [`duration`].
pub fn seconds(flag: &str, value: f64) -> Result<Duration, Bound> {
    if !value.is_finite() || value <= 0.0 {
        return Err(Bound(format!("{flag} must be longer than 0, got {value}")));
    }
    if value > MAX_DURATION.as_secs_f64() {
        return Err(Bound(format!(
            "{flag} is longer than a year, the most any option takes"
        )));
    }
    Ok(Duration::from_secs_f64(value))
}

/// `--margin` as a fraction (0.01 = ±1%): in [0, 1), i.e. [0, 100) percent.
pub fn margin(fraction: f64) -> Result<f64, Bound> {
    if (0.0..1.0).contains(&fraction) {
        Ok(fraction)
    } else {
        Err(Bound(format!(
            "--margin is a percentage in [0, 100), got {}",
            fraction * 100.0
        )))
    }
}

/// `--alpha`: in (0, 1).
pub fn alpha(alpha: f64) -> Result<f64, Bound> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(alpha)
    } else {
        Err(Bound(format!("--alpha must be in (0, 1), got {alpha}")))
    }
}

/// The most bytes ghostbench reads from one file of each kind. A regular
/// file larger than its cap is refused by its size before it is read; any
/// other file (a device, a pipe) is read up to the cap and refused past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// `analyze`'s CSV, hyperfine JSON or ghostbench `--json`.
    Table,
    /// `history import`'s document, and a ghostbench `--json` that `analyze`
    /// re-analyzes (read as an analyze input, then held to this cap).
    Document,
    /// A plan file (`plan.json`).
    Plan,
    /// A shard's result file.
    Shard,
    /// `code --hot`'s profile (callgrind, cachegrind, `perf script`).
    Profile,
}

const MIB: u64 = 1024 * 1024;

/// At most this many rows in the files of one `analyze`, and in its
/// comparisons with the baseline's rows counted once per candidate (each
/// comparison holds its own copy of the baseline's runs): 2.5 million, a
/// million rows a side and room to spare. A row costs about 300 bytes at the
/// peak (the row, its run, the run's value), so `analyze` stays within
/// about 750 MB whatever the file (BENCHMARKS.md).
pub const MAX_ROWS: usize = 2_500_000;

/// At most this many values (numbers, strings, arrays, objects, …) in a
/// JSON file `analyze` or `history import` reads, counted before the file
/// is parsed into a value (32 bytes a number, about 130 an object's entry):
/// hyperfine's times, a ghostbench report's runs, or anything else, stay
/// within about 500 MB. A 256 MiB file of `1,` would otherwise become 4 GB.
pub const MAX_JSON_VALUES: usize = 4_000_000;

/// At most this many runs of one `analyze` result are stored with it (in
/// the stored document's `runs` and the store's `runs` table). A result past
/// it is stored without its runs, saying so (`runs_left_out`): every run
/// costs the store about 2 KB of memory while it is recorded (the document
/// as a JSON value, its text, a row per value), so a million rows a side
/// would need 5 GB (docs/store.md).
pub const MAX_STORED_RUNS: usize = 100_000;

impl Input {
    /// The cap in bytes.
    pub fn cap(self) -> u64 {
        match self {
            Input::Table | Input::Shard => 256 * MIB,
            // A ghostbench document is parsed whole as a JSON value, about
            // six times its text (every run an object of 11 keys): 64 MiB
            // (some 180,000 runs) takes 460 MB to re-analyze, 630 MB to import.
            Input::Document => 64 * MIB,
            Input::Plan => 16 * MIB,
            Input::Profile => 512 * MIB,
        }
    }

    /// What the file is, in the error message.
    fn what(self) -> &'static str {
        match self {
            Input::Table => "an analyze input",
            Input::Document => "a document to import",
            Input::Plan => "a plan",
            Input::Shard => "a shard result",
            Input::Profile => "a profile",
        }
    }

    /// Whether `bytes` already read are within the cap: a file read under
    /// a larger cap (an analyze input) held to this one once its kind is
    /// known. The error says why in one line; the caller names the file.
    pub fn check_read(self, bytes: usize) -> Result<(), Bound> {
        if bytes as u64 > self.cap() {
            return Err(self.too_big(Some(bytes as u64)));
        }
        Ok(())
    }

    /// The reason a file of `size` bytes is refused; `None`: a device or
    /// pipe that went on past the cap.
    fn too_big(self, size: Option<u64>) -> Bound {
        let (cap, what) = (mib(self.cap()), self.what());
        Bound(match size {
            Some(size) => format!(
                "it has {}, more than the {cap} ghostbench reads from {what}",
                mib(size)
            ),
            None => format!("it goes on past the {cap} ghostbench reads from {what}"),
        })
    }
}

fn mib(bytes: u64) -> String {
    if bytes >= 1024 * MIB {
        format!("{:.1} GiB", bytes as f64 / (1024 * MIB) as f64)
    } else {
        format!("{} MiB", bytes.div_ceil(MIB))
    }
}

/// How long a reader waits for a named FIFO's writer: nothing written to it
/// (and no writer that opened and closed it) within this is an error, not a
/// hang. An anonymous pipe (`analyze <(cmd)`, `/dev/stdin`) has its writer
/// already and is read without a wait.
pub const FIFO_WAIT: Duration = Duration::from_secs(10);

/// Why an input of this type is refused without being opened: a directory,
/// a block device (a disk is never read) or a socket; None for a regular
/// file, a character device or a pipe.
fn refused_input(kind: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        Some("it is a directory")
    } else if kind.is_block_device() {
        Some("it is a block device, not a file or a pipe (copy what you need to a file first)")
    } else if kind.is_socket() {
        Some("it is a socket, not a file or a pipe")
    } else {
        None
    }
}

/// The bytes of `path`, at most `kind`'s cap: a regular file over the cap is
/// refused by its size without reading it; a device or pipe is read up to
/// the cap and refused past it (`/dev/zero` ends, with an error). A
/// directory, block device or socket is refused by its metadata before it
/// is opened; a named FIFO that nothing writes to within [`FIFO_WAIT`] is
/// an error (it is opened `O_NONBLOCK`, so the open cannot block). The error
/// says why in one line; the caller names the file.
pub fn read_capped(path: &Path, kind: Input) -> std::io::Result<Vec<u8>> {
    read_capped_waiting(path, kind, FIFO_WAIT)
}

/// [`read_capped`], waiting `wait` for a named FIFO's writer.
fn read_capped_waiting(path: &Path, kind: Input, wait: Duration) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    if let Some(why) = refused_input(std::fs::metadata(path)?.file_type()) {
        return Err(std::io::Error::other(why));
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    // Again on what was opened: the path may have changed in between.
    if let Some(why) = refused_input(meta.file_type()) {
        return Err(std::io::Error::other(why));
    }
    if meta.file_type().is_fifo() {
        wait_for_writer(&file, wait)?;
    }
    blocking(&file)?;
    let cap = kind.cap();
    if meta.is_file() && meta.len() > cap {
        return Err(std::io::Error::other(kind.too_big(Some(meta.len()))));
    }
    let mut bytes = Vec::new();
    if meta.is_file() {
        bytes.reserve_exact(meta.len() as usize);
    }
    (&mut file).take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::other(kind.too_big(None)));
    }
    Ok(bytes)
}

/// For a named FIFO: wait up to `wait` for something to read (or a writer
/// that came and went). An anonymous pipe is not waited on.
fn wait_for_writer(file: &std::fs::File, wait: Duration) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let anonymous = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .is_ok_and(|target| target.to_string_lossy().starts_with("pipe:"));
    if anonymous {
        return Ok(());
    }
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let deadline = std::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::other(format!(
                "it is a FIFO that nothing wrote to within {} s",
                wait.as_secs_f64()
            )));
        }
        // SAFETY: one valid pollfd for an open descriptor.
        let ready = unsafe { libc::poll(&mut poll, 1, left.as_millis().min(1000) as i32) };
        if ready > 0 {
            return Ok(());
        }
        if ready < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

/// Clear `O_NONBLOCK` again, so reading a pipe waits for its writer's data.
fn blocking(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on an open descriptor this function does not close.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// [`read_capped`] as text; invalid UTF-8 is an error naming its byte.
pub fn read_capped_text(path: &Path, kind: Input) -> std::io::Result<String> {
    let bytes = read_capped(path, kind)?;
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::other(format!(
            "not text (invalid UTF-8 at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_refused_below_and_above_their_range() {
        assert_eq!(Count::Rounds.check(5), Ok(5));
        let zero = Count::Rounds.check(0).unwrap_err().0;
        assert_eq!(zero, "--rounds must be at least 1, got 0");
        let huge = Count::Rounds.check(usize::MAX).unwrap_err().0;
        assert!(
            huge.starts_with("--rounds 18446744073709551615 is more than 10000"),
            "{huge}"
        );
        assert_eq!(Count::Warmup.check(0), Ok(0));
        assert!(Count::Warmup.check(usize::MAX).is_err());
        assert!(Count::Layouts.check(4_294_967_296).is_err());
        assert!(Count::Layouts.check(2).is_err());
        assert_eq!(Count::Layouts.check(MAX_LAYOUTS), Ok(MAX_LAYOUTS));
        let jobs = Count::Jobs.check(10_000_000).unwrap_err().0;
        assert!(jobs.contains("per CPU"), "{jobs}");
        assert_eq!(Count::Jobs.check(cpus()), Ok(cpus()));
        assert!(Count::Shards.check(0).is_err());
        assert!(Count::Runs.check(MAX_RUNS + 1).is_err());
    }

    #[test]
    fn durations_margins_and_alphas() {
        assert!(duration("--timeout", Duration::ZERO).is_err());
        assert!(duration("--timeout", MAX_DURATION).is_ok());
        assert!(duration("--timeout", MAX_DURATION + Duration::from_secs(1)).is_err());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e308] {
            assert!(seconds("timeout_s", bad).is_err(), "{bad}");
        }
        assert_eq!(seconds("timeout_s", 1.5), Ok(Duration::from_millis(1500)));
        for bad in [-0.05, 1.0, 1e306, f64::NAN] {
            assert!(margin(bad).is_err(), "margin {bad}");
        }
        assert_eq!(margin(0.0), Ok(0.0));
        for bad in [0.0, 1.0, 7.0, -0.1, f64::NAN] {
            assert!(alpha(bad).is_err(), "alpha {bad}");
        }
        assert_eq!(alpha(0.05), Ok(0.05));
    }

    fn mknod(path: &Path, kind: libc::mode_t, dev: libc::dev_t) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path in a temporary directory.
        unsafe { libc::mknod(c.as_ptr(), kind | 0o600, dev) == 0 }
    }

    #[test]
    fn a_fifo_without_a_writer_is_an_error_after_the_wait_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(mknod(&fifo, libc::S_IFIFO, 0));
        let start = std::time::Instant::now();
        let wait = Duration::from_millis(200);
        let error = read_capped_waiting(&fifo, Input::Table, wait).unwrap_err();
        assert_eq!(
            error.to_string(),
            "it is a FIFO that nothing wrote to within 0.2 s"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_fifo_with_a_writer_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(mknod(&fifo, libc::S_IFIFO, 0));
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, "name,value\nA,1\n").unwrap())
        };
        let bytes = read_capped_waiting(&fifo, Input::Table, Duration::from_secs(30)).unwrap();
        writer.join().unwrap();
        assert_eq!(bytes, b"name,value\nA,1\n");
    }

    #[test]
    fn a_block_device_and_a_directory_are_refused_by_their_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let error = read_capped(dir.path(), Input::Table).unwrap_err();
        assert_eq!(error.to_string(), "it is a directory");
        // Major 0 is no block driver's ("unnamed"): even opened, it reaches
        // no disk. The refusal comes before any open.
        let disk = dir.path().join("disk");
        if !mknod(&disk, libc::S_IFBLK, libc::makedev(0, 0)) {
            crate::test_skip::skipped("CAP_MKNOD (root, to make a device node)");
            return;
        }
        let error = read_capped(&disk, Input::Document).unwrap_err();
        assert!(
            error.to_string().starts_with("it is a block device"),
            "{error}"
        );
    }

    #[test]
    fn a_sparse_file_over_the_cap_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.csv");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(10 * 1024 * MIB).unwrap();
        let error = read_capped(&path, Input::Table).unwrap_err().to_string();
        assert_eq!(
            error,
            "it has 10.0 GiB, more than the 256 MiB ghostbench reads from an analyze input"
        );
        std::fs::write(&path, b"name,value\n").unwrap();
        assert_eq!(read_capped(&path, Input::Plan).unwrap(), b"name,value\n");
        let error = read_capped(dir.path(), Input::Plan)
            .unwrap_err()
            .to_string();
        assert_eq!(error, "it is a directory");
    }
}
