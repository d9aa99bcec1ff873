//! `posix-timer`: `timer_create` with a signal directed at the thread.

use latlab_rt::clock::{monotonic_ns, to_timespec};

use super::grid::KernelExpiries;
use super::signal::{block_signal, posix_timer_signal, si_overrun, wait_signal};
use super::{os_error, Wake, WakeSource};
use crate::MeasureError;

/// `timer_create` with a signal directed at the thread, armed on the
/// absolute grid: the kernel re-arms it as the signal is dequeued and
/// reports the expiries it skipped in the signal's `si_overrun`, so every
/// intended time is an expiry the kernel armed, exactly.
pub(super) struct PosixTimer {
    pub(super) id: libc::timer_t,
    pub(super) expiries: KernelExpiries,
}

impl PosixTimer {
    pub(super) fn new(cpu: usize, interval: u64, start: u64) -> Result<Self, MeasureError> {
        let signal = posix_timer_signal();
        block_signal(signal);
        // SAFETY: sigevent is plain data; gettid has no preconditions; the
        // timer id is written by the kernel.
        let id = unsafe {
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = signal;
            event.sigev_notify_thread_id = libc::gettid();
            let mut id: libc::timer_t = std::mem::zeroed();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut id) != 0 {
                return Err(os_error("posix-timer", cpu, "timer_create"));
            }
            id
        };
        let spec = libc::itimerspec {
            it_interval: to_timespec(interval),
            it_value: to_timespec(start),
        };
        // SAFETY: id was created above; spec is valid.
        if unsafe { libc::timer_settime(id, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut()) } != 0
        {
            let err = os_error("posix-timer", cpu, "timer_settime");
            unsafe { libc::timer_delete(id) };
            return Err(err);
        }
        Ok(PosixTimer {
            id,
            expiries: KernelExpiries {
                next: start,
                interval,
                uncertain: false,
            },
        })
    }
}

impl Drop for PosixTimer {
    fn drop(&mut self) {
        // SAFETY: the id is ours and deleted once.
        unsafe { libc::timer_delete(self.id) };
    }
}

impl WakeSource for PosixTimer {
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError> {
        let Some(info) = wait_signal(posix_timer_signal()) else {
            return Ok(None);
        };
        let now = monotonic_ns();
        Ok(Some(self.expiries.wake(now, 1 + si_overrun(&info))))
    }
}
