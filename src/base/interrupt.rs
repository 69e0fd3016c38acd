//! Ctrl-C and SIGTERM: the command stops where it writes, and goes the way
//! a failed command goes (its temporary files and scratch removed, the
//! complete outputs of earlier stages kept), so that running it again
//! resumes.
//!
//! The signal handler only records the signal. The stages look at it
//! where they create or fill files ([`check`]: a temporary file or
//! scratch directory created, a buffer of output handed to the disk, a
//! spill run written, a batch of records read), and stop there with an
//! error, which comes back through every thread's join before the command
//! removes what it left. Removing the files from the handler, while
//! worker threads went on making new ones, left scratch files behind;
//! here nothing is removed until no thread is writing. A second signal
//! ends the process at once, as the default action would (what it leaves,
//! the next command on the directory removes).

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal received, 0 before any.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Handles SIGINT and SIGTERM from now on for a command that writes: the
/// first is recorded for [`check`], the second ends the process. A command
/// that only reads keeps the default action, which stops it at once.
pub(crate) fn install() {
    #[cfg(unix)]
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `on_signal` only touches an atomic and calls
        // async-signal-safe functions (write, signal, raise); the
        // sigaction structure is zeroed, then filled as sigaction(2) asks.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            // Interrupted system calls are restarted: a read of a pipe
            // must not fail with EINTR on the way to the next check.
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

#[cfg(unix)]
extern "C" fn on_signal(signal: libc::c_int) {
    if SIGNAL.swap(signal, Ordering::SeqCst) != 0 {
        // SAFETY: signal(2) and raise(3) are async-signal-safe.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
        return;
    }
    const NOTE: &[u8] = b"overlap: stopping (press Ctrl-C again to stop at once)\n";
    // SAFETY: write(2) is async-signal-safe; a failed write is ignored.
    unsafe {
        libc::write(libc::STDERR_FILENO, NOTE.as_ptr().cast(), NOTE.len());
    }
}

/// The signal that asked the command to stop, if one did.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        signal => Some(signal),
    }
}

/// An error once a signal asked the command to stop; called where the
/// stages write, so that they stop there.
#[inline]
pub(crate) fn check() -> std::io::Result<()> {
    if SIGNAL.load(Ordering::Relaxed) == 0 {
        Ok(())
    } else {
        // Not `ErrorKind::Interrupted`, which `write_all` retries.
        Err(std::io::Error::other("interrupted"))
    }
}
