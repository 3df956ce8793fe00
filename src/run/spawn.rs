//! One run of one command: fork, exec, wait, and measure.
//!
//! We fork and exec by hand rather than through `std::process::Command` for two
//! reasons. Hardware counters must be attached to the child *before* it execs
//! (std's `spawn` only returns after exec), so the child can wait on a gate pipe.
//! And the child gets its own process group, so a timeout or Ctrl-C can kill
//! everything it started. Exit is observed through a pidfd, so wall time ends
//! when the child exits, not when some grandchild closes the output pipes.

use anyhow::{anyhow, Context, Result};
use serde::Serialize;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::RawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set by the SIGINT handler; checked by the wait loop and the experiment loop.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Install a SIGINT/SIGTERM handler that only sets [`INTERRUPTED`], so partial results can be written.
pub fn install_interrupt_handler() {
    extern "C" fn on_signal(_: libc::c_int) {
        INTERRUPTED.store(true, Ordering::SeqCst);
    }
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    Interrupted,
}

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }

    /// One phrase for error messages: "exit code 3", "killed by signal 11 (SIGSEGV)".
    pub fn describe(self) -> String {
        match self {
            Exit::Code(code) => format!("exit code {code}"),
            Exit::Signal(sig) => format!("killed by signal {sig} ({})", signal_name(sig)),
            Exit::TimedOut => "timed out".to_string(),
            Exit::Interrupted => "interrupted".to_string(),
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGPIPE => "SIGPIPE",
        _ => "signal",
    }
}

/// What to run and how.
pub struct SpawnRequest<'a> {
    pub program: &'a Path,
    pub argv: &'a [String],
    /// Added to (and overriding) the inherited environment.
    pub extra_env: &'a [(String, String)],
    pub pin: Option<usize>,
    pub timeout: Option<Duration>,
    /// Bytes of stdout kept for metric parsing; the rest is read and dropped.
    pub stdout_limit: usize,
}

/// What one run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub max_rss_kib: u64,
    pub exit: Exit,
    pub stdout: Vec<u8>,
    pub stdout_truncated: bool,
    /// The last [`STDERR_TAIL`] bytes of stderr.
    pub stderr_tail: Vec<u8>,
}

const STDERR_TAIL: usize = 64 * 1024;

/// Run once. `before_exec`, when given, is called with the child's pid while the
/// child is held before exec (used to attach perf counters).
pub fn spawn(
    req: &SpawnRequest,
    before_exec: Option<&mut dyn FnMut(i32) -> Result<()>>,
) -> Result<Outcome> {
    let prepared = Prepared::new(req)?;
    let gate = before_exec.is_some();
    let pipes = Pipes::open(gate)?;
    // Owns the read ends from here on, so an early error closes them.
    let mut streams = Streams::new(pipes.stdout_read, pipes.stderr_read, req.stdout_limit);
    let start = Instant::now();
    let pid = match before_exec {
        None => spawn_direct(&prepared, &pipes, req.pin)
            .map_err(|e| anyhow!("cannot execute {}: {e}", req.program.display()))?,
        Some(callback) => fork_gated(&prepared, &pipes, req, callback)?,
    };
    let deadline = req.timeout.map(|t| start + t);
    let mut guard = ChildGuard { pid, reaped: false };
    let waited = wait_for_exit(pid, &mut streams, deadline)?;
    guard.reaped = true;
    let wall = waited.end.duration_since(start);
    streams.drain();
    let (stdout, stdout_truncated, stderr_tail) = streams.finish();
    Ok(Outcome {
        wall,
        user: timeval(waited.usage.ru_utime),
        sys: timeval(waited.usage.ru_stime),
        max_rss_kib: waited.usage.ru_maxrss.max(0) as u64,
        exit: waited.exit,
        stdout,
        stdout_truncated,
        stderr_tail,
    })
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}

/// The default path: posix_spawn, which glibc implements with a vfork-style
/// clone, so no page tables are copied and the run is as cheap to start as with
/// hyperfine. Pinning is inherited from the spawning thread's affinity.
fn spawn_direct(prepared: &Prepared, pipes: &Pipes, pin: Option<usize>) -> std::io::Result<i32> {
    let _pinned = pin.map(PinnedThread::new).transpose()?;
    // SAFETY: the attribute and file-action objects are initialised, used and
    // destroyed here; every pointer passed stays valid for the call.
    unsafe {
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        libc::posix_spawn_file_actions_init(&mut actions);
        libc::posix_spawnattr_init(&mut attr);
        libc::posix_spawn_file_actions_addopen(
            &mut actions,
            0,
            prepared.devnull.as_ptr(),
            libc::O_RDONLY,
            0,
        );
        libc::posix_spawn_file_actions_adddup2(&mut actions, pipes.stdout_write, 1);
        libc::posix_spawn_file_actions_adddup2(&mut actions, pipes.stderr_write, 2);
        let mut defaults: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut defaults);
        for signal in [libc::SIGPIPE, libc::SIGINT, libc::SIGTERM] {
            libc::sigaddset(&mut defaults, signal);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::posix_spawnattr_setsigdefault(&mut attr, &defaults);
        libc::posix_spawnattr_setsigmask(&mut attr, &empty);
        libc::posix_spawnattr_setpgroup(&mut attr, 0);
        let flags = libc::POSIX_SPAWN_SETPGROUP
            | libc::POSIX_SPAWN_SETSIGDEF
            | libc::POSIX_SPAWN_SETSIGMASK;
        libc::posix_spawnattr_setflags(&mut attr, flags as libc::c_short);
        let mut pid: libc::pid_t = 0;
        let status = libc::posix_spawn(
            &mut pid,
            prepared.program.as_ptr(),
            &actions,
            &attr,
            prepared.argv_ptrs.as_ptr() as *const *mut libc::c_char,
            prepared.envp_ptrs.as_ptr() as *const *mut libc::c_char,
        );
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attr);
        pipes.close_child_ends();
        if status != 0 {
            return Err(std::io::Error::from_raw_os_error(status));
        }
        Ok(pid)
    }
}

/// Pins the calling thread to one CPU and restores its affinity on drop.
struct PinnedThread {
    saved: libc::cpu_set_t,
}

impl PinnedThread {
    fn new(cpu: usize) -> std::io::Result<PinnedThread> {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: cpu_set_t is plain data; the calls get valid pointers and sizes.
        unsafe {
            let mut saved: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, size, &mut saved) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut only: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut only);
            if libc::sched_setaffinity(0, size, &only) != 0 {
                let err = std::io::Error::last_os_error();
                return Err(std::io::Error::new(
                    err.kind(),
                    format!("cannot pin to CPU {cpu}: {err}"),
                ));
            }
            Ok(PinnedThread { saved })
        }
    }
}

impl Drop for PinnedThread {
    fn drop(&mut self) {
        // SAFETY: restoring the affinity read in `new`.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.saved) };
    }
}

/// The counters path: fork, hold the child at a gate while `callback` attaches
/// to it, then let it exec. Returns the pid once exec has succeeded.
fn fork_gated(
    prepared: &Prepared,
    pipes: &Pipes,
    req: &SpawnRequest,
    callback: &mut dyn FnMut(i32) -> Result<()>,
) -> Result<i32> {
    // SAFETY: between fork and exec the child only calls async-signal-safe functions
    // on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let err = std::io::Error::last_os_error();
        pipes.close_child_ends();
        close_fd(pipes.gate_write);
        close_fd(pipes.exec_error_read);
        return Err(err).context("fork failed");
    }
    if pid == 0 {
        unsafe { child_exec(prepared, pipes, req.pin) }
    }
    pipes.close_child_ends();
    let mut guard = ChildGuard { pid, reaped: false };
    let attached = callback(pid);
    // Release the child whether or not attaching worked; on failure it is killed by the guard.
    close_fd(pipes.gate_write);
    attached?;
    if let Some(errno) = read_exec_error(pipes.exec_error_read) {
        guard.reap();
        return Err(anyhow!(
            "cannot execute {}: {}",
            req.program.display(),
            std::io::Error::from_raw_os_error(errno)
        ));
    }
    guard.reaped = true; // from here on, wait_for_exit reaps it
    Ok(pid)
}

/// This process's environment as `KEY=VALUE` C strings, read once: ghostbench
/// never changes its own environment, and rebuilding it for every run was a
/// measurable share of the per-run cost.
fn inherited_environment() -> &'static [CString] {
    static ENVIRONMENT: std::sync::OnceLock<Vec<CString>> = std::sync::OnceLock::new();
    ENVIRONMENT.get_or_init(|| {
        std::env::vars_os()
            .filter_map(|(k, v)| {
                let mut entry = k.as_bytes().to_vec();
                entry.push(b'=');
                entry.extend_from_slice(v.as_bytes());
                CString::new(entry).ok()
            })
            .collect()
    })
}

/// Everything the child needs, allocated before fork. `_argv` and `_envp` own
/// the strings that the pointer arrays point into.
struct Prepared {
    program: CString,
    _argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    _envp: Vec<CString>,
    envp_ptrs: Vec<*const libc::c_char>,
    devnull: CString,
}

impl Prepared {
    fn new(req: &SpawnRequest) -> Result<Prepared> {
        let cstr =
            |bytes: &[u8]| CString::new(bytes).map_err(|_| anyhow!("argument contains a NUL byte"));
        let program = cstr(req.program.as_os_str().as_bytes())?;
        let argv: Vec<CString> = req
            .argv
            .iter()
            .map(|a| cstr(a.as_bytes()))
            .collect::<Result<_>>()?;
        // Only the extra variables are allocated per run; the inherited ones are
        // prepared once per process.
        let envp: Vec<CString> = req
            .extra_env
            .iter()
            .map(|(k, v)| cstr(format!("{k}={v}").as_bytes()))
            .collect::<Result<_>>()?;
        let mut argv_ptrs: Vec<_> = argv.iter().map(|a| a.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());
        let overridden = |entry: &CString| {
            let bytes = entry.as_bytes();
            req.extra_env.iter().any(|(k, _)| {
                bytes.len() > k.len() && bytes.starts_with(k.as_bytes()) && bytes[k.len()] == b'='
            })
        };
        let mut envp_ptrs: Vec<_> = inherited_environment()
            .iter()
            .filter(|entry| !overridden(entry))
            .chain(&envp)
            .map(|e| e.as_ptr())
            .collect();
        envp_ptrs.push(std::ptr::null());
        Ok(Prepared {
            program,
            _argv: argv,
            argv_ptrs,
            _envp: envp,
            envp_ptrs,
            devnull: CString::new("/dev/null").expect("no NUL"),
        })
    }
}

struct Pipes {
    stdout_read: RawFd,
    stdout_write: RawFd,
    stderr_read: RawFd,
    stderr_write: RawFd,
    exec_error_read: RawFd,
    exec_error_write: RawFd,
    gate_read: RawFd,
    gate_write: RawFd,
}

impl Pipes {
    fn open(gate: bool) -> Result<Pipes> {
        let (stdout_read, stdout_write) = pipe()?;
        let (stderr_read, stderr_write) = pipe()?;
        // Only the fork path needs these: posix_spawn reports exec errors itself.
        let (exec_error_read, exec_error_write) = if gate { pipe()? } else { (-1, -1) };
        let (gate_read, gate_write) = if gate { pipe()? } else { (-1, -1) };
        Ok(Pipes {
            stdout_read,
            stdout_write,
            stderr_read,
            stderr_write,
            exec_error_read,
            exec_error_write,
            gate_read,
            gate_write,
        })
    }

    fn close_child_ends(&self) {
        for fd in [
            self.stdout_write,
            self.stderr_write,
            self.exec_error_write,
            self.gate_read,
        ] {
            close_fd(fd);
        }
    }
}

fn pipe() -> Result<(RawFd, RawFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("pipe2 failed");
    }
    Ok((fds[0], fds[1]))
}

fn close_fd(fd: RawFd) {
    if fd >= 0 {
        // SAFETY: closing a descriptor we own.
        unsafe { libc::close(fd) };
    }
}

/// The child side of fork: redirect, pin, wait at the gate, exec. Never returns.
unsafe fn child_exec(prepared: &Prepared, pipes: &Pipes, pin: Option<usize>) -> ! {
    // The parent's ends: our copy of the gate's write end would keep the gate shut forever.
    for fd in [
        pipes.gate_write,
        pipes.stdout_read,
        pipes.stderr_read,
        pipes.exec_error_read,
    ] {
        if fd >= 0 {
            libc::close(fd);
        }
    }
    libc::setpgid(0, 0);
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    libc::signal(libc::SIGINT, libc::SIG_DFL);
    libc::signal(libc::SIGTERM, libc::SIG_DFL);
    if let Some(cpu) = pin {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            report_errno_and_exit(pipes.exec_error_write);
        }
    }
    let null = libc::open(prepared.devnull.as_ptr(), libc::O_RDONLY);
    if null < 0
        || libc::dup2(null, 0) < 0
        || libc::dup2(pipes.stdout_write, 1) < 0
        || libc::dup2(pipes.stderr_write, 2) < 0
    {
        report_errno_and_exit(pipes.exec_error_write);
    }
    if pipes.gate_read >= 0 {
        let mut byte = 0u8;
        // Returns 0 when the parent closes its end: that is the release.
        while libc::read(
            pipes.gate_read,
            &mut byte as *mut u8 as *mut libc::c_void,
            1,
        ) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
    }
    libc::execve(
        prepared.program.as_ptr(),
        prepared.argv_ptrs.as_ptr(),
        prepared.envp_ptrs.as_ptr(),
    );
    report_errno_and_exit(pipes.exec_error_write)
}

unsafe fn report_errno_and_exit(fd: RawFd) -> ! {
    let errno = *libc::__errno_location();
    let bytes = errno.to_ne_bytes();
    libc::write(fd, bytes.as_ptr() as *const libc::c_void, bytes.len());
    libc::_exit(127)
}

/// The errno the child reported, or None when exec succeeded (the pipe closed on exec).
fn read_exec_error(fd: RawFd) -> Option<i32> {
    let mut bytes = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        // SAFETY: reading into a local buffer within bounds.
        let n = unsafe { libc::read(fd, bytes[got..].as_mut_ptr() as *mut libc::c_void, 4 - got) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    close_fd(fd);
    (got == 4).then(|| i32::from_ne_bytes(bytes))
}

/// Kills and reaps the child if we leave `spawn` early.
struct ChildGuard {
    pid: i32,
    reaped: bool,
}

impl ChildGuard {
    fn reap(&mut self) {
        let mut status = 0;
        // SAFETY: waiting on our own child.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
        self.reaped = true;
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if !self.reaped {
            kill_group(self.pid);
            self.reap();
        }
    }
}

fn kill_group(pid: i32) {
    // SAFETY: signalling our child's process group (and the child, in case setpgid had not run yet).
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Captured output: stdout up to a limit, stderr as a tail.
struct Streams {
    fds: [RawFd; 2],
    open: [bool; 2],
    stdout: Vec<u8>,
    stdout_limit: usize,
    stdout_truncated: bool,
    stderr: Vec<u8>,
    /// One read's worth of bytes; allocated once, never zeroed.
    scratch: Vec<u8>,
}

impl Streams {
    fn new(stdout: RawFd, stderr: RawFd, stdout_limit: usize) -> Streams {
        Streams {
            fds: [stdout, stderr],
            open: [true, true],
            stdout: Vec::new(),
            stdout_limit,
            stdout_truncated: false,
            stderr: Vec::new(),
            scratch: Vec::with_capacity(16384),
        }
    }

    /// Read once from stream `i`; marks it closed at EOF.
    fn read_from(&mut self, i: usize) {
        self.scratch.clear();
        // SAFETY: read() writes at most `capacity` bytes into the spare capacity,
        // and only the `n` bytes it wrote are made part of the vector.
        let n = unsafe {
            libc::read(
                self.fds[i],
                self.scratch.as_mut_ptr() as *mut libc::c_void,
                self.scratch.capacity(),
            )
        };
        if n > 0 {
            // SAFETY: the first n bytes were just written by read().
            unsafe { self.scratch.set_len(n as usize) };
        }
        if n <= 0 {
            let again = n < 0
                && matches!(
                    std::io::Error::last_os_error().kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                );
            if !again {
                self.close(i);
            }
            return;
        }
        let data = &self.scratch[..];
        if i == 0 {
            let room = self.stdout_limit.saturating_sub(self.stdout.len());
            self.stdout.extend_from_slice(&data[..data.len().min(room)]);
            self.stdout_truncated |= data.len() > room;
        } else {
            self.stderr.extend_from_slice(data);
            if self.stderr.len() > 2 * STDERR_TAIL {
                self.stderr.drain(..self.stderr.len() - STDERR_TAIL);
            }
        }
    }

    fn close(&mut self, i: usize) {
        if self.open[i] {
            close_fd(self.fds[i]);
            self.open[i] = false;
        }
    }

    /// After exit: read what is already buffered without waiting for writers that
    /// outlive the child (background grandchildren). A zero-timeout poll says
    /// which pipes have data or EOF, so no read can block.
    fn drain(&mut self) {
        loop {
            let mut fds: Vec<libc::pollfd> = (0..2)
                .filter(|&i| self.open[i])
                .map(|i| libc::pollfd {
                    fd: self.fds[i],
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            if fds.is_empty() {
                break;
            }
            // SAFETY: fds is a valid array of pollfd.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
            if ready <= 0 {
                break;
            }
            for pollfd in fds.iter().filter(|p| p.revents != 0) {
                let i = if pollfd.fd == self.fds[0] { 0 } else { 1 };
                self.read_from(i);
            }
        }
        self.close(0);
        self.close(1);
    }

    fn finish(mut self) -> (Vec<u8>, bool, Vec<u8>) {
        self.close(0);
        self.close(1);
        if self.stderr.len() > STDERR_TAIL {
            self.stderr.drain(..self.stderr.len() - STDERR_TAIL);
        }
        (
            std::mem::take(&mut self.stdout),
            self.stdout_truncated,
            std::mem::take(&mut self.stderr),
        )
    }
}

impl Drop for Streams {
    fn drop(&mut self) {
        self.close(0);
        self.close(1);
    }
}

struct Waited {
    end: Instant,
    exit: Exit,
    usage: libc::rusage,
}

/// Pump the output pipes until the child exits, the deadline passes, or Ctrl-C.
fn wait_for_exit(pid: i32, streams: &mut Streams, deadline: Option<Instant>) -> Result<Waited> {
    // SAFETY: pidfd_open on our own child; -1 on kernels without it.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    let mut forced: Option<Exit> = None;
    let exited = loop {
        if forced.is_none() {
            if interrupted() {
                forced = Some(Exit::Interrupted);
            } else if deadline.is_some_and(|d| Instant::now() >= d) {
                forced = Some(Exit::TimedOut);
            }
            if forced.is_some() {
                kill_group(pid);
            }
        }
        if forced.is_some() {
            break None;
        }
        let mut fds = Vec::with_capacity(3);
        for i in 0..2 {
            if streams.open[i] {
                fds.push(libc::pollfd {
                    fd: streams.fds[i],
                    events: libc::POLLIN,
                    revents: 0,
                });
            }
        }
        let pidfd_slot = fds.len();
        if pidfd >= 0 {
            fds.push(libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            });
        }
        let cap_ms: i64 = if pidfd >= 0 { 200 } else { 1 };
        let timeout_ms = deadline
            .map(|d| d.saturating_duration_since(Instant::now()).as_millis() as i64 + 1)
            .unwrap_or(cap_ms)
            .min(cap_ms);
        // SAFETY: fds is a valid array of pollfd.
        let ready = unsafe {
            libc::poll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                timeout_ms as i32,
            )
        };
        if ready < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            close_fd(pidfd);
            return Err(err).context("poll failed");
        }
        let child_done = if pidfd >= 0 {
            fds[pidfd_slot].revents != 0
        } else {
            try_reap(pid)?.is_some()
        };
        if child_done {
            break Some(Instant::now());
        }
        let stream_fds: Vec<(RawFd, i16)> = fds[..pidfd_slot]
            .iter()
            .map(|p| (p.fd, p.revents))
            .collect();
        for (fd, revents) in stream_fds {
            if revents != 0 {
                let i = if fd == streams.fds[0] { 0 } else { 1 };
                streams.read_from(i);
            }
        }
    };
    close_fd(pidfd);
    let (status, usage) = reap(pid)?;
    let end = exited.unwrap_or_else(Instant::now);
    let exit = forced.unwrap_or_else(|| decode_status(status));
    Ok(Waited { end, exit, usage })
}

thread_local! {
    /// Status reaped early by the no-pidfd fallback.
    static EARLY: std::cell::Cell<Option<(i32, libc::rusage)>> = const { std::cell::Cell::new(None) };
}

fn try_reap(pid: i32) -> Result<Option<()>> {
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting on our own child.
    let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
    if r < 0 {
        return Err(std::io::Error::last_os_error()).context("wait4 failed");
    }
    if r == 0 {
        return Ok(None);
    }
    EARLY.with(|early| early.set(Some((status, usage))));
    Ok(Some(()))
}

fn reap(pid: i32) -> Result<(i32, libc::rusage)> {
    if let Some(early) = EARLY.with(|early| early.take()) {
        return Ok(early);
    }
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waiting on our own child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r >= 0 {
            return Ok((status, usage));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err).context("wait4 failed");
        }
    }
}

fn decode_status(status: i32) -> Exit {
    if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(-1)
    }
}

/// The last `count` non-empty lines of some output, for error messages.
pub fn last_lines(bytes: &[u8], count: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|l| l.chars().take(300).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn run(argv: &[&str], timeout: Option<Duration>) -> Result<Outcome> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let program = crate::run::command::resolve_program(&argv[0], std::env::var_os("PATH"))?;
        spawn(
            &SpawnRequest {
                program: &program,
                argv: &argv,
                extra_env: &[("GHOSTBENCH_TEST".into(), "xyz".into())],
                pin: None,
                timeout,
                stdout_limit: 1 << 20,
            },
            None,
        )
    }

    #[test]
    fn captures_output_exit_code_and_environment() {
        let out = run(
            &[
                "sh",
                "-c",
                "echo out $GHOSTBENCH_TEST; echo err >&2; exit 3",
            ],
            None,
        )
        .unwrap();
        assert_eq!(out.exit, Exit::Code(3));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "out xyz\n");
        assert_eq!(String::from_utf8_lossy(&out.stderr_tail), "err\n");
    }

    #[test]
    fn reports_signals_and_timeouts() {
        let out = run(&["sh", "-c", "kill -SEGV $$"], None).unwrap();
        assert_eq!(out.exit, Exit::Signal(libc::SIGSEGV));
        let out = run(&["sleep", "5"], Some(Duration::from_millis(100))).unwrap();
        assert_eq!(out.exit, Exit::TimedOut);
        assert!(out.wall < Duration::from_secs(4));
    }

    #[test]
    fn wall_time_ends_at_exit_even_if_a_grandchild_keeps_the_pipe() {
        let out = run(
            &["sh", "-c", "sleep 3 & echo started"],
            Some(Duration::from_secs(10)),
        )
        .unwrap();
        assert!(out.exit.success());
        assert!(
            out.wall < Duration::from_secs(2),
            "waited for the grandchild: {:?}",
            out.wall
        );
    }

    #[test]
    fn exec_failure_is_an_error_not_a_run() {
        let argv = vec!["x".to_string()];
        let program = PathBuf::from("/etc/hostname");
        let req = SpawnRequest {
            program: &program,
            argv: &argv,
            extra_env: &[],
            pin: None,
            timeout: None,
            stdout_limit: 10,
        };
        let err = spawn(&req, None).unwrap_err().to_string();
        assert!(err.contains("cannot execute"), "{err}");
    }

    #[test]
    fn gate_callback_sees_the_child_before_exec() {
        let argv = vec!["true".to_string()];
        let program =
            crate::run::command::resolve_program("true", std::env::var_os("PATH")).unwrap();
        let req = SpawnRequest {
            program: &program,
            argv: &argv,
            extra_env: &[],
            pin: Some(0),
            timeout: None,
            stdout_limit: 10,
        };
        let mut seen = 0;
        let mut callback = |pid: i32| {
            seen = pid;
            Ok(())
        };
        let out = spawn(&req, Some(&mut callback)).unwrap();
        assert!(out.exit.success());
        assert!(seen > 0);
    }

    #[test]
    fn last_lines_skips_blank_lines() {
        assert_eq!(last_lines(b"a\n\nb\nc\n", 2), vec!["b", "c"]);
    }
}
