//! Waiting for a started process: until it exits, its deadline passes, or
//! Ctrl-C; killing its whole process group when it must stop; and the
//! SIGINT/SIGTERM/SIGHUP handling that makes Ctrl-C safe (the signal itself
//! is recorded in `run::interrupt`).
//!
//! Every started process leads its own process group, so killing the group
//! also kills what it started (`sh -c` children, valgrind's traced children).
//! Ctrl-C has two meanings:
//! - after [`install_interrupt_handler`] (an experiment that writes partial
//!   results: `compare`, `layout`), it only sets [`interrupted`]; the waits
//!   here kill the running group and report [`Exit::Interrupted`], and no new
//!   launch starts;
//! - otherwise it still ends ghostbench, as the default action would, but
//!   first kills every process group ghostbench started and has not reaped
//!   (they are outside the terminal's foreground group, so the terminal's
//!   SIGINT does not reach them).

use crate::run::error::{signal_name, RunError};
use crate::run::interrupt;
pub use crate::run::interrupt::interrupted;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Whether an experiment handles Ctrl-C itself ([`install_interrupt_handler`]).
static CLAIMED: AtomicBool = AtomicBool::new(false);
/// Process groups started and not yet reaped (0 = free slot), for the handler.
const SLOTS: usize = 256;
static LIVE: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

extern "C" fn on_signal(signal: libc::c_int) {
    interrupt::record(signal);
    if CLAIMED.load(Ordering::SeqCst) {
        return;
    }
    for slot in &LIVE {
        let pid = slot.load(Ordering::SeqCst);
        if pid > 0 {
            kill_group(pid);
        }
    }
    // SAFETY: signal and raise are async-signal-safe; the signal is blocked
    // while this handler runs, so it is delivered (and ends the process with
    // its default action) as soon as the handler returns.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// Install the handler for SIGINT, SIGTERM and SIGHUP, without SA_RESTART so a
/// blocking wait returns EINTR. A signal this process was started with
/// ignored stays ignored unless `claim`; SIGHUP ignored (`nohup`) always.
fn install(claim: bool) {
    // SAFETY: the handler only touches atomics and calls async-signal-safe
    // functions; the sigaction structs are initialised before use.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in interrupt::SIGNALS {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut old);
            // `nohup` means SIGHUP stays ignored, even by an experiment.
            if (!claim || signal == libc::SIGHUP) && old.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Make Ctrl-C (and SIGTERM, SIGHUP) only set [`interrupted`], so an experiment can
/// stop its loop and write partial results.
pub fn install_interrupt_handler() {
    CLAIMED.store(true, Ordering::SeqCst);
    install(true);
}

/// Before the first process starts: the handler that kills started groups
/// on Ctrl-C (see the module header). Idempotent.
pub(super) fn ensure_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        super::orphans::become_subreaper();
        if !CLAIMED.load(Ordering::SeqCst) {
            install(false);
        }
    });
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    /// The run failure this end is, or None for exit code 0. `timeout` is the
    /// limit the process ran under (for the message).
    pub fn error(self, timeout: Option<Duration>) -> Option<RunError> {
        match self {
            Exit::Code(0) => None,
            Exit::Code(code) => Some(RunError::Exit(code)),
            Exit::Signal(signal) => Some(RunError::Signal(signal)),
            Exit::TimedOut => Some(RunError::Timeout(timeout.unwrap_or_default())),
            Exit::Interrupted => Some(RunError::Interrupted),
        }
    }
}

/// A started process: kills its group and reaps it if dropped unreaped (an
/// early return), and keeps it in the handler's list while it lives.
pub(super) struct ChildGuard {
    pub pid: i32,
    reaped: bool,
    slot: Option<usize>,
}

impl ChildGuard {
    /// Called with [`super::orphans::spawning`] held, right after the start.
    pub fn new(pid: i32) -> ChildGuard {
        super::orphans::register(pid);
        let slot = LIVE.iter().position(|s| {
            s.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        ChildGuard {
            pid,
            reaped: false,
            slot,
        }
    }

    /// Kill the group and reap the child (after a failed start).
    pub fn kill_and_reap(&mut self) {
        kill_group(self.pid);
        let mut status = 0;
        // SAFETY: waiting on our own child.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
        self.mark_reaped();
    }

    fn mark_reaped(&mut self) {
        if !self.reaped {
            super::orphans::unregister(self.pid);
        }
        self.reaped = true;
        if let Some(slot) = self.slot.take() {
            LIVE[slot].store(0, Ordering::SeqCst);
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill_and_reap();
        }
    }
}

pub(super) fn kill_group(pid: i32) {
    // SAFETY: signalling our child's process group (and the child, in case
    // setpgid had not run yet); kill is async-signal-safe.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Whether processes the child started still live in its process group (the
/// group's id is the child's pid, which the kernel does not reuse while the
/// group exists).
pub(super) fn group_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    let r = unsafe { libc::kill(-pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

pub(super) struct Waited {
    pub end: Instant,
    pub exit: Exit,
    pub usage: libc::rusage,
}

/// How to wait.
#[derive(Debug, Clone, Copy)]
pub(super) struct Until {
    pub deadline: Option<Instant>,
    /// Poll for Ctrl-C even without a deadline. A blocking wait is the
    /// cheapest, but Ctrl-C interrupts it only on the thread the signal lands
    /// on (the main thread); waits on other threads must poll.
    pub poll: bool,
}

/// Wait until the child exits, the deadline passes, or Ctrl-C, and reap it.
pub(super) fn wait_for_exit(guard: &mut ChildGuard, until: Until) -> Result<Waited, RunError> {
    let mut forced = None;
    if until.deadline.is_some() || until.poll {
        forced = watch(guard.pid, until.deadline)?;
    }
    let waited = reap(guard.pid, forced);
    guard.mark_reaped();
    waited
}

/// Sleep on a pidfd (or poll waitid every millisecond on kernels without
/// one) until the child exits, killing its group at the deadline or on
/// Ctrl-C. Returns the forced end, if any; the child is left to [`reap`].
fn watch(pid: i32, deadline: Option<Instant>) -> Result<Option<(Exit, Instant)>, RunError> {
    // SAFETY: pidfd_open on our own child; -1 on kernels without it.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    let result = loop {
        let now = Instant::now();
        let forced = if interrupted() {
            Some(Exit::Interrupted)
        } else if deadline.is_some_and(|d| now >= d) {
            Some(Exit::TimedOut)
        } else {
            None
        };
        if let Some(exit) = forced {
            kill_group(pid);
            break Ok(Some((exit, now)));
        }
        if pidfd < 0 {
            if exited_without_reaping(pid) {
                break Ok(None);
            }
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let remaining_ms = deadline.map_or(i32::MAX, |d| {
            d.saturating_duration_since(now)
                .as_millis()
                .min(i32::MAX as u128 - 1) as i32
                + 1
        });
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
                break Err(RunError::Setup(format!("poll failed: {err}")));
            }
        }
    };
    // SAFETY: closing the pidfd we opened (a no-op error for -1).
    unsafe { libc::close(pidfd) };
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

/// Reap the child with its resource usage. Without [`watch`] this is the
/// only wait: a blocking wait4, which Ctrl-C interrupts (the handler is
/// installed without SA_RESTART) so the child's group can be killed.
fn reap(pid: i32, mut forced: Option<(Exit, Instant)>) -> Result<Waited, RunError> {
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
            return Err(RunError::Setup(format!("wait4 failed: {err}")));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_map_to_errors_with_the_reports_wording() {
        assert_eq!(Exit::Code(0).error(None), None);
        let message = |exit: Exit, timeout| exit.error(timeout).unwrap().to_string();
        assert_eq!(message(Exit::Code(3), None), "command failed: exit code 3");
        assert_eq!(
            message(Exit::Signal(libc::SIGSEGV), None),
            "command failed: killed by signal 11 (SIGSEGV)"
        );
        assert_eq!(
            message(Exit::TimedOut, Some(Duration::from_millis(1500))),
            "command failed: timed out after 1.5 s"
        );
        assert_eq!(message(Exit::Interrupted, None), "interrupted by Ctrl-C");
    }
}
