//! `--pin CPU`: checking the CPU before anything runs, and pinning the thread
//! that starts a run (a child started by posix_spawn inherits its affinity).

use anyhow::{anyhow, Context, Result};

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
pub fn allowed_cpus() -> std::io::Result<Vec<usize>> {
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
pub(super) struct PinnedThread {
    saved: libc::cpu_set_t,
}

impl PinnedThread {
    pub fn new(cpu: usize) -> std::io::Result<PinnedThread> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_accepts_allowed_cpus_and_names_them_otherwise() {
        let allowed = allowed_cpus().unwrap();
        assert!(check_pin(allowed[0]).is_ok());
        let err = check_pin(100_000).unwrap_err().to_string();
        assert!(err.contains("CPU 100000 is not available"), "{err}");
        assert!(err.contains(&allowed[0].to_string()), "{err}");
    }
}
