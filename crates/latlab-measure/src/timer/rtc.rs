//! `rtc`: `/dev/rtc` periodic interrupts (an hrtimer of the RTC core).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use latlab_rt::clock::{monotonic_ns, sleep_until};

use super::grid::KernelExpiries;
use super::{interrupted, os_error, Wake, WakeSource};
use crate::MeasureError;

/// `/dev/rtc` periodic interrupts. No driver makes them in hardware since
/// Linux 2.6.38: the RTC core emulates them with a CLOCK_MONOTONIC hrtimer
/// (`rtc_pie_update_irq`), started one period (`NSEC_PER_SEC / rate`) after
/// `RTC_PIE_ON` and forwarded in its callback, and each read returns how
/// many periods passed since the last. So the intended times are a
/// monotonic grid whose phase lies between the clock reads around
/// `RTC_PIE_ON` (latlab takes the earlier one: at most that call's duration
/// early, never late), and the kernel's count moves it on.
pub(super) struct Rtc {
    pub(super) fd: OwnedFd,
    pub(super) cpu: usize,
    pub(super) expiries: KernelExpiries,
}

// ioctl numbers: libc::Ioctl is c_ulong on glibc and c_int on musl;
// RTC_IRQP_SET = _IOW('p', 0x0c, unsigned long) encodes sizeof(unsigned long).
pub(super) const RTC_IRQP_SET: libc::Ioctl =
    0x4000_700c | ((std::mem::size_of::<libc::c_ulong>() as libc::Ioctl) << 16);
pub(super) const RTC_PIE_ON: libc::Ioctl = 0x7005;
pub(super) const RTC_PIE_OFF: libc::Ioctl = 0x7006;

/// The rate of `--interval` on the RTC (a power of two, 2..8192 Hz), and the
/// period the kernel's RTC core makes of it (`NSEC_PER_SEC / rate`, ns).
pub(super) fn rtc_rate(interval: u64) -> Result<(u64, u64), MeasureError> {
    let hz = (1e9 / interval.max(1) as f64).round() as u64;
    if !(2..=8192).contains(&hz) || !hz.is_power_of_two() {
        return Err(MeasureError::Config(format!(
            "the rtc timer runs at 2..8192 Hz in powers of two; --interval {interval} ns is \
             {hz} Hz (try 1024 Hz = --interval 976562ns, or 8192 Hz = --interval 122070ns)"
        )));
    }
    Ok((hz, 1_000_000_000 / hz))
}

impl Rtc {
    pub(super) fn new(
        cpu: usize,
        interval: u64,
        start: u64,
        device: &Path,
    ) -> Result<Self, MeasureError> {
        let (hz, period) = rtc_rate(interval)?;
        let file = std::fs::File::open(device).map_err(|source| MeasureError::NoRtc {
            path: PathBuf::from(device),
            source,
        })?;
        let fd = OwnedFd::from(file);
        // SAFETY: an RTC ioctl on an open RTC device with an integer argument.
        if unsafe { libc::ioctl(fd.as_raw_fd(), RTC_IRQP_SET, hz as libc::c_ulong) } != 0 {
            return Err(os_error("rtc", cpu, "RTC_IRQP_SET (raise max_user_freq?)"));
        }
        // Interrupts counted before this run (periodic interrupts left on by
        // another program) would shift every later sample: off, and drained.
        rtc_stop_and_drain(&fd);
        // The first interrupt comes one period after arming: arm one period
        // before the run's start, so the grid begins there as for the other
        // timers. The kernel's clock read lies inside the call, after this
        // one: intended times are at most the call's duration early. (Not
        // armed again when slow: switching the interrupts off
        // spins until a running callback is done, and under emulation that
        // livelocked a guest at 8192 Hz.)
        sleep_until(start.saturating_sub(period));
        let armed_at = monotonic_ns();
        // SAFETY: as above.
        if unsafe { libc::ioctl(fd.as_raw_fd(), RTC_PIE_ON, 0) } != 0 {
            return Err(os_error("rtc", cpu, "RTC_PIE_ON"));
        }
        Ok(Rtc {
            fd,
            cpu,
            expiries: KernelExpiries {
                next: armed_at + period,
                interval: period,
                uncertain: false,
            },
        })
    }
}

/// Switches an RTC's periodic interrupts off and drops the interrupts it
/// counted and nobody read.
pub(super) fn rtc_stop_and_drain(fd: &OwnedFd) {
    // SAFETY: RTC_PIE_OFF, fcntl and one non-blocking read of one unsigned
    // long on our own open RTC device.
    unsafe {
        libc::ioctl(fd.as_raw_fd(), RTC_PIE_OFF, 0);
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        let mut stale: libc::c_ulong = 0;
        libc::read(
            fd.as_raw_fd(),
            (&mut stale as *mut libc::c_ulong).cast(),
            std::mem::size_of::<libc::c_ulong>(),
        );
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags);
    }
}

impl Drop for Rtc {
    fn drop(&mut self) {
        // Switching the interrupts off (here, or the close) spins until a
        // running callback returns. On PREEMPT_RT that callback runs in the
        // `ktimers/N` thread (SCHED_FIFO 1), which the woken measurement
        // thread may have preempted mid-callback: spinning at a real-time
        // priority above it would never let it finish (a guest hung so).
        // The measurement is over: leave real-time priority first.
        let _ = latlab_rt::sched::set_current_thread(latlab_rt::sched::Policy::Other, 0);
        // SAFETY: turning periodic interrupts off on our own fd.
        unsafe { libc::ioctl(self.fd.as_raw_fd(), RTC_PIE_OFF, 0) };
    }
}

impl WakeSource for Rtc {
    fn wait(&mut self) -> Result<Option<Wake>, MeasureError> {
        let mut data: libc::c_ulong = 0;
        // SAFETY: the RTC read returns one unsigned long.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut data as *mut libc::c_ulong).cast(),
                std::mem::size_of::<libc::c_ulong>(),
            )
        };
        let now = monotonic_ns();
        if n < 0 {
            if interrupted() {
                return Ok(None);
            }
            return Err(os_error("rtc", self.cpu, "read"));
        }
        // Bits 8 and up: the periods since the last read.
        Ok(Some(self.expiries.wake(now, data as u64 >> 8)))
    }
}
