//! Starting a process in its own process group: posix_spawn for plain runs,
//! fork + a gate + execve when something must attach to the child before it
//! execs (hardware counters), with the argv and environment prepared as C
//! strings before either. `no_aslr` starts the child with
//! `ADDR_NO_RANDOMIZE` (personality(2), what `setarch -R` sets): set in the
//! forked child before exec, or, for posix_spawn, on the spawning thread
//! (a task's personality is copied into the child it clones) and restored.

use super::pin::PinnedThread;
use super::wait::ChildGuard;
use crate::run::error::RunError;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::RawFd;
use std::path::Path;

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
pub(super) struct ExecArgs {
    program: CString,
    /// The program as given, for messages.
    shown: String,
    _argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    _envp: Vec<CString>,
    envp_ptrs: Vec<*const libc::c_char>,
    /// The working directory to change to before exec.
    cwd: Option<CString>,
}

impl ExecArgs {
    /// `argv` run as `program`, with `extra_env` added to (and overriding)
    /// the inherited environment.
    pub fn new(
        program: &Path,
        argv: &[String],
        extra_env: &[(String, String)],
        cwd: Option<&Path>,
    ) -> Result<ExecArgs, RunError> {
        let shown = program.display().to_string();
        let cstr = |bytes: &[u8]| {
            CString::new(bytes).map_err(|_| RunError::Spawn {
                program: shown.clone(),
                cause: "an argument or variable contains a NUL byte".into(),
            })
        };
        let program = cstr(program.as_os_str().as_bytes())?;
        let cwd = cwd.map(|c| cstr(c.as_os_str().as_bytes())).transpose()?;
        let argv: Vec<CString> = argv
            .iter()
            .map(|a| cstr(a.as_bytes()))
            .collect::<Result<_, _>>()?;
        // Only the extra variables are allocated per run; the inherited ones are
        // prepared once per process.
        let envp: Vec<CString> = extra_env
            .iter()
            .map(|(k, v)| cstr(format!("{k}={v}").as_bytes()))
            .collect::<Result<_, _>>()?;
        let mut argv_ptrs: Vec<_> = argv.iter().map(|a| a.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());
        let overridden = |entry: &CString| {
            let bytes = entry.as_bytes();
            extra_env.iter().any(|(k, _)| {
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
        Ok(ExecArgs {
            program,
            shown,
            _argv: argv,
            argv_ptrs,
            _envp: envp,
            envp_ptrs,
            cwd,
        })
    }

    fn exec_failed(&self, err: std::io::Error) -> RunError {
        RunError::Spawn {
            program: self.shown.clone(),
            cause: err.to_string(),
        }
    }
}

/// The default path: posix_spawn, which glibc implements with a vfork-style
/// clone, so no page tables are copied and the run is as cheap to start as with
/// hyperfine. Pinning is inherited from the spawning thread's affinity.
pub(super) fn spawn_direct(
    args: &ExecArgs,
    streams: [RawFd; 3],
    pin: Option<usize>,
    no_aslr: bool,
) -> Result<ChildGuard, RunError> {
    let _pinned = pin
        .map(PinnedThread::new)
        .transpose()
        .map_err(|e| args.exec_failed(e))?;
    let _fixed = no_aslr
        .then(FixedLayoutThread::new)
        .transpose()
        .map_err(|e| RunError::Setup(format!("cannot turn ASLR off: {e}")))?;
    let _registering = super::orphans::spawning();
    // SAFETY: the attribute and file-action objects are initialised, used and
    // destroyed here; every pointer passed stays valid for the call.
    let pid = unsafe {
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        libc::posix_spawn_file_actions_init(&mut actions);
        libc::posix_spawnattr_init(&mut attr);
        for (target, fd) in streams.into_iter().enumerate() {
            libc::posix_spawn_file_actions_adddup2(&mut actions, fd, target as libc::c_int);
        }
        if let Some(cwd) = &args.cwd {
            libc::posix_spawn_file_actions_addchdir_np(&mut actions, cwd.as_ptr());
        }
        let mut defaults: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut defaults);
        for signal in [libc::SIGPIPE, libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
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
            args.program.as_ptr(),
            &actions,
            &attr,
            args.argv_ptrs.as_ptr() as *const *mut libc::c_char,
            args.envp_ptrs.as_ptr() as *const *mut libc::c_char,
        );
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attr);
        if status != 0 {
            return Err(args.exec_failed(std::io::Error::from_raw_os_error(status)));
        }
        pid
    };
    Ok(ChildGuard::new(pid))
}

/// The counters path: fork, hold the child at a gate while `callback` attaches
/// to it, then let it exec. Returns once exec has succeeded.
pub(super) fn fork_gated(
    args: &ExecArgs,
    streams: [RawFd; 3],
    pin: Option<usize>,
    no_aslr: bool,
    callback: &mut dyn FnMut(i32) -> Result<(), RunError>,
) -> Result<ChildGuard, RunError> {
    let pipes = GatePipes::open()?;
    let registering = super::orphans::spawning();
    // SAFETY: between fork and exec the child only calls async-signal-safe functions
    // on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let err = std::io::Error::last_os_error();
        pipes.close_child_ends();
        close_fd(pipes.gate_write);
        close_fd(pipes.exec_error_read);
        return Err(RunError::Setup(format!("fork failed: {err}")));
    }
    if pid == 0 {
        unsafe { child_exec(args, &pipes, streams, pin, no_aslr) }
    }
    pipes.close_child_ends();
    let mut guard = ChildGuard::new(pid);
    drop(registering);
    let attached = callback(pid);
    // Release the child whether or not attaching worked; on failure it is killed by the guard.
    close_fd(pipes.gate_write);
    if let Err(e) = attached {
        close_fd(pipes.exec_error_read);
        return Err(e);
    }
    if let Some(errno) = read_exec_error(pipes.exec_error_read) {
        guard.kill_and_reap();
        return Err(args.exec_failed(std::io::Error::from_raw_os_error(errno)));
    }
    Ok(guard)
}

/// personality(2)'s argument that only reads the current persona.
const QUERY_PERSONALITY: libc::c_ulong = 0xffff_ffff;

/// `ADDR_NO_RANDOMIZE` on the calling thread (so on the child posix_spawn
/// clones from it) until drop, which restores the persona it found.
struct FixedLayoutThread {
    saved: libc::c_int,
}

impl FixedLayoutThread {
    fn new() -> std::io::Result<FixedLayoutThread> {
        // SAFETY: personality(2) takes and returns plain integers.
        unsafe {
            let saved = libc::personality(QUERY_PERSONALITY);
            if saved < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::personality((saved | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(FixedLayoutThread { saved })
        }
    }
}

impl Drop for FixedLayoutThread {
    fn drop(&mut self) {
        // SAFETY: restoring the persona read in `new`.
        unsafe { libc::personality(self.saved as libc::c_ulong) };
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
    fn open() -> Result<GatePipes, RunError> {
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

fn pipe() -> Result<(RawFd, RawFd), RunError> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(RunError::Setup(format!("pipe2 failed: {err}")));
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
    args: &ExecArgs,
    pipes: &GatePipes,
    streams: [RawFd; 3],
    pin: Option<usize>,
    no_aslr: bool,
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
    libc::signal(libc::SIGHUP, libc::SIG_DFL);
    if let Some(cpu) = pin {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            report_errno_and_exit(pipes.exec_error_write);
        }
    }
    if no_aslr {
        let current = libc::personality(QUERY_PERSONALITY);
        if current < 0
            || libc::personality((current | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) < 0
        {
            report_errno_and_exit(pipes.exec_error_write);
        }
    }
    for (target, fd) in streams.into_iter().enumerate() {
        if libc::dup2(fd, target as libc::c_int) < 0 {
            report_errno_and_exit(pipes.exec_error_write);
        }
    }
    if let Some(cwd) = &args.cwd {
        if libc::chdir(cwd.as_ptr()) != 0 {
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
        args.program.as_ptr(),
        args.argv_ptrs.as_ptr(),
        args.envp_ptrs.as_ptr(),
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
