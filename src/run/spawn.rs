//! One run of one command: fork, exec, wait, and measure.
//!
//! We fork and exec by hand rather than through `std::process::Command` for two
//! reasons. Hardware counters must be attached to the child *before* it execs
//! (std's `spawn` only returns after exec), so the child can wait on a gate pipe.
//! And the child gets its own process group, so a timeout or Ctrl-C can kill
//! everything it started. Output goes to files (see [`super::capture`]), so
//! nothing is pumped while the command runs and wall time ends when the child
//! exits, whatever its background grandchildren do.

use super::capture::{Capture, Keep};
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
    /// The part of stdout kept: its head for metrics, else its tail for errors.
    pub stdout: Keep,
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
    /// The tail of stderr ([`super::capture::STDERR_TAIL`] bytes, or more when a metric reads it).
    pub stderr_tail: Vec<u8>,
}

/// Run once, with `capture` as the child's standard streams. `before_exec`,
/// when given, is called with the child's pid while the child is held before
/// exec (used to attach perf counters).
pub fn spawn(
    req: &SpawnRequest,
    capture: &mut Capture,
    before_exec: Option<&mut dyn FnMut(i32) -> Result<()>>,
) -> Result<Outcome> {
    let prepared = Prepared::new(req)?;
    capture.rewind_input()?;
    let streams = capture.child_fds();
    let start = Instant::now();
    let pid = match before_exec {
        None => spawn_direct(&prepared, streams, req.pin)
            .map_err(|e| anyhow!("cannot execute {}: {e}", req.program.display()))?,
        Some(callback) => fork_gated(&prepared, streams, req, callback)?,
    };
    let deadline = req.timeout.map(|t| start + t);
    let mut guard = ChildGuard { pid, reaped: false };
    let waited = wait_for_exit(pid, deadline)?;
    guard.reaped = true;
    let wall = waited.end.duration_since(start);
    let output = capture.collect(req.stdout)?;
    if group_alive(pid) {
        capture.renew()?;
    }
    Ok(Outcome {
        wall,
        user: timeval(waited.usage.ru_utime),
        sys: timeval(waited.usage.ru_stime),
        max_rss_kib: waited.usage.ru_maxrss.max(0) as u64,
        exit: waited.exit,
        stdout: output.stdout,
        stdout_truncated: output.stdout_truncated,
        stderr_tail: output.stderr_tail,
    })
}

/// Whether processes the child started still live in its process group (the
/// group's id is the child's pid, which the kernel does not reuse while the
/// group exists).
fn group_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    let r = unsafe { libc::kill(-pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}

/// The default path: posix_spawn, which glibc implements with a vfork-style
/// clone, so no page tables are copied and the run is as cheap to start as with
/// hyperfine. Pinning is inherited from the spawning thread's affinity.
fn spawn_direct(
    prepared: &Prepared,
    streams: [RawFd; 3],
    pin: Option<usize>,
) -> std::io::Result<i32> {
    let _pinned = pin.map(PinnedThread::new).transpose()?;
    // SAFETY: the attribute and file-action objects are initialised, used and
    // destroyed here; every pointer passed stays valid for the call.
    unsafe {
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        libc::posix_spawn_file_actions_init(&mut actions);
        libc::posix_spawnattr_init(&mut attr);
        for (target, fd) in streams.into_iter().enumerate() {
            libc::posix_spawn_file_actions_adddup2(&mut actions, fd, target as libc::c_int);
        }
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
        if status != 0 {
            return Err(std::io::Error::from_raw_os_error(status));
        }
        Ok(pid)
    }
}

/// Check `--pin CPU` before anything runs: the CPU must be one this process may
/// use, so a typo is a clear input error instead of a failed first run.
pub fn check_pin(cpu: usize) -> Result<()> {
    let allowed = allowed_cpus().context("cannot read this process's CPU affinity")?;
    if allowed.contains(&cpu) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(|c| c.to_string()).collect();
    Err(anyhow!(
        "--pin {cpu}: CPU {cpu} is not available to this process (allowed: {})",
        list.join(", ")
    ))
}

/// The CPUs this process may run on.
fn allowed_cpus() -> std::io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; the call gets a valid pointer and size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect())
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
    streams: [RawFd; 3],
    req: &SpawnRequest,
    callback: &mut dyn FnMut(i32) -> Result<()>,
) -> Result<i32> {
    let pipes = GatePipes::open()?;
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
        unsafe { child_exec(prepared, &pipes, streams, req.pin) }
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
        })
    }
}

/// The fork path's pipes: the gate holds the child before exec, and the child
/// reports a failed exec through the other (posix_spawn does both itself).
struct GatePipes {
    exec_error_read: RawFd,
    exec_error_write: RawFd,
    gate_read: RawFd,
    gate_write: RawFd,
}

impl GatePipes {
    fn open() -> Result<GatePipes> {
        let (exec_error_read, exec_error_write) = pipe()?;
        let (gate_read, gate_write) = pipe().inspect_err(|_| {
            close_fd(exec_error_read);
            close_fd(exec_error_write);
        })?;
        Ok(GatePipes {
            exec_error_read,
            exec_error_write,
            gate_read,
            gate_write,
        })
    }

    fn close_child_ends(&self) {
        close_fd(self.exec_error_write);
        close_fd(self.gate_read);
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
unsafe fn child_exec(
    prepared: &Prepared,
    pipes: &GatePipes,
    streams: [RawFd; 3],
    pin: Option<usize>,
) -> ! {
    // The parent's ends: our copy of the gate's write end would keep the gate shut forever.
    libc::close(pipes.gate_write);
    libc::close(pipes.exec_error_read);
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
    for (target, fd) in streams.into_iter().enumerate() {
        if libc::dup2(fd, target as libc::c_int) < 0 {
            report_errno_and_exit(pipes.exec_error_write);
        }
    }
    let mut byte = 0u8;
    // Returns 0 when the parent closes its end: that is the release.
    while libc::read(
        pipes.gate_read,
        &mut byte as *mut u8 as *mut libc::c_void,
        1,
    ) < 0
        && *libc::__errno_location() == libc::EINTR
    {}
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

struct Waited {
    end: Instant,
    exit: Exit,
    usage: libc::rusage,
}

/// Wait until the child exits, the deadline passes, or Ctrl-C.
fn wait_for_exit(pid: i32, deadline: Option<Instant>) -> Result<Waited> {
    let mut forced = None;
    if let Some(deadline) = deadline {
        forced = wait_until(pid, deadline)?;
    }
    reap(pid, forced)
}

/// With a deadline: sleep on a pidfd (or poll wait4 every millisecond on kernels
/// without one) until the child exits, killing its group at the deadline or on
/// Ctrl-C. Returns the forced end, if any; the child is left to [`reap`].
fn wait_until(pid: i32, deadline: Instant) -> Result<Option<(Exit, Instant)>> {
    // SAFETY: pidfd_open on our own child; -1 on kernels without it.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    let result = loop {
        let now = Instant::now();
        let forced = if interrupted() {
            Some(Exit::Interrupted)
        } else if now >= deadline {
            Some(Exit::TimedOut)
        } else {
            None
        };
        if let Some(exit) = forced {
            kill_group(pid);
            break Ok(Some((exit, now)));
        }
        let remaining_ms = deadline.saturating_duration_since(now).as_millis() as i32 + 1;
        if pidfd < 0 {
            if exited_without_reaping(pid) {
                break Ok(None);
            }
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let mut fds = [libc::pollfd {
            fd: pidfd,
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: fds is a valid one-element array.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, remaining_ms.min(200)) };
        if ready > 0 {
            break Ok(None);
        }
        if ready < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                break Err(err).context("poll failed");
            }
        }
    };
    close_fd(pidfd);
    result
}

/// Whether the child has exited, leaving it to be reaped (with its rusage) by [`reap`].
fn exited_without_reaping(pid: i32) -> bool {
    // SAFETY: siginfo_t is plain data; waitid with WNOWAIT only inspects our child.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) == 0 && info.si_pid() == pid
    }
}

/// Reap the child with its resource usage. Without a deadline this is the only
/// wait: a blocking wait4, which Ctrl-C interrupts (the handler is installed
/// without SA_RESTART) so the child's group can be killed.
fn reap(pid: i32, mut forced: Option<(Exit, Instant)>) -> Result<Waited> {
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        if forced.is_none() && interrupted() {
            kill_group(pid);
            forced = Some((Exit::Interrupted, Instant::now()));
        }
        // SAFETY: waiting on our own child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let end = Instant::now();
        if r >= 0 {
            let (exit, end) = forced.unwrap_or_else(|| (decode_status(status), end));
            return Ok(Waited { end, exit, usage });
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
    // `\r` ends a line too: progress rewritten in place shows as its updates.
    let lines: Vec<&str> = text
        .split(['\n', '\r'])
        .filter(|l| !l.trim().is_empty())
        .collect();
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
                stdout: Keep::Head(1 << 20),
            },
            &mut Capture::new(None)?,
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
    fn output_larger_than_a_pipe_buffer_is_kept_whole() {
        // 1 MiB: a pipe nobody pumped would stall the command at 64 KiB.
        let out = run(&["head", "-c", "1048576", "/dev/zero"], None).unwrap();
        assert!(out.exit.success());
        assert_eq!(out.stdout.len(), 1 << 20);
        assert!(!out.stdout_truncated);
    }

    #[test]
    fn late_output_of_a_lingering_grandchild_stays_out_of_the_next_run() {
        let argv = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let sh = crate::run::command::resolve_program("sh", std::env::var_os("PATH")).unwrap();
        let mut capture = Capture::new(None).unwrap();
        let mut run_in = |words: Vec<String>| {
            let req = SpawnRequest {
                program: &sh,
                argv: &words,
                extra_env: &[],
                pin: None,
                timeout: None,
                stdout: Keep::Head(1 << 20),
            };
            spawn(&req, &mut capture, None).unwrap()
        };
        let first = run_in(argv(&["sh", "-c", "(sleep 0.3; echo late) & echo first"]));
        assert_eq!(String::from_utf8_lossy(&first.stdout), "first\n");
        let second = run_in(argv(&["sh", "-c", "sleep 0.6; echo second"]));
        assert_eq!(String::from_utf8_lossy(&second.stdout), "second\n");
        // Without a lingering process the same files are reused and emptied.
        let third = run_in(argv(&["sh", "-c", "echo third"]));
        assert_eq!(String::from_utf8_lossy(&third.stdout), "third\n");
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
            stdout: Keep::Head(10),
        };
        let err = spawn(&req, &mut Capture::new(None).unwrap(), None)
            .unwrap_err()
            .to_string();
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
            stdout: Keep::Head(10),
        };
        let mut seen = 0;
        let mut callback = |pid: i32| {
            seen = pid;
            Ok(())
        };
        let out = spawn(&req, &mut Capture::new(None).unwrap(), Some(&mut callback)).unwrap();
        assert!(out.exit.success());
        assert!(seen > 0);
    }

    #[test]
    fn pin_accepts_allowed_cpus_and_names_them_otherwise() {
        let allowed = allowed_cpus().unwrap();
        assert!(check_pin(allowed[0]).is_ok());
        let err = check_pin(100_000).unwrap_err().to_string();
        assert!(err.contains("CPU 100000 is not available"), "{err}");
        assert!(err.contains(&allowed[0].to_string()), "{err}");
    }

    #[test]
    fn last_lines_skips_blank_lines() {
        assert_eq!(last_lines(b"a\n\nb\nc\n", 2), vec!["b", "c"]);
    }
}
