//! Installing a signal handler: the one `sigaction` call every command's
//! Ctrl-C, Ctrl-Z and snapshot handling goes through.

/// A signal handler as `sigaction` takes it.
pub type Handler = extern "C" fn(libc::c_int);

/// Installs `handler` for `signal`, with `flags` such as `libc::SA_RESTART`
/// (interrupted system calls go on) or `libc::SA_RESETHAND` (a second signal
/// takes the default action), and no other signals blocked while it runs.
///
/// # Safety
///
/// `handler` must make only async-signal-safe calls (atomics, `kill`, `write`,
/// ...): it may run in any thread, between any two instructions.
pub unsafe fn set_handler(
    signal: libc::c_int,
    handler: Handler,
    flags: libc::c_int,
) -> std::io::Result<()> {
    // SAFETY: a zeroed sigaction is valid plain data, filled in below; the
    // caller vouches for the handler.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as *const () as usize;
        action.sa_flags = flags;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// True when `signal` is ignored (`SIG_IGN`), e.g. by whoever started us.
pub fn is_ignored(signal: libc::c_int) -> bool {
    // SAFETY: reads the current action into plain data; changes nothing.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    static CAUGHT: AtomicBool = AtomicBool::new(false);

    extern "C" fn catch(_: libc::c_int) {
        CAUGHT.store(true, Ordering::SeqCst);
    }

    #[test]
    fn an_installed_handler_catches_the_signal_and_an_ignored_one_is_seen() {
        // SIGURG: nothing else in the test process uses it.
        // SAFETY: the handler only stores to an atomic.
        unsafe { set_handler(libc::SIGURG, catch, libc::SA_RESTART) }.unwrap();
        assert!(!is_ignored(libc::SIGURG));
        // SAFETY: raise sends the signal to this thread.
        unsafe { libc::raise(libc::SIGURG) };
        assert!(CAUGHT.load(Ordering::SeqCst));
        // SAFETY: SIG_IGN is a valid disposition.
        unsafe { libc::signal(libc::SIGURG, libc::SIG_IGN) };
        assert!(is_ignored(libc::SIGURG));
        assert_eq!(
            // SAFETY: as above.
            unsafe { set_handler(0, catch, 0) }
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EINVAL),
            "an invalid signal is an error"
        );
    }
}
