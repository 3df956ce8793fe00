//! Which signal asked ghostbench to stop (SIGINT, SIGTERM or SIGHUP), kept
//! where the handler in `spawn` sets it and every loop and message reads it:
//! [`interrupted`], [`signal`], and the one-line [`cause`] the reports print
//! ("interrupted by Ctrl-C", "interrupted by SIGTERM", …).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set by the signal handler.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The first stopping signal received (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signals that stop ghostbench gracefully.
pub const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Record `signal` (async-signal-safe: atomics only). The first one counts.
pub(crate) fn record(signal: libc::c_int) {
    let _ = SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether a stopping signal arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The stopping signal that arrived first, if any.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The one-line cause of an interruption by `signal` (Ctrl-C when unknown,
/// e.g. a scripted interruption in tests).
pub fn cause_of(signal: Option<i32>) -> &'static str {
    match signal {
        Some(libc::SIGTERM) => "interrupted by SIGTERM",
        Some(libc::SIGHUP) => "interrupted by SIGHUP (the terminal or session ended)",
        _ => "interrupted by Ctrl-C",
    }
}

/// The cause of this process's interruption.
pub fn cause() -> &'static str {
    cause_of(signal())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_has_its_own_words() {
        assert_eq!(cause_of(None), "interrupted by Ctrl-C");
        assert_eq!(cause_of(Some(libc::SIGINT)), "interrupted by Ctrl-C");
        assert_eq!(cause_of(Some(libc::SIGTERM)), "interrupted by SIGTERM");
        assert!(cause_of(Some(libc::SIGHUP)).starts_with("interrupted by SIGHUP"));
    }
}
