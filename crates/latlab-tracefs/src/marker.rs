//! `trace_marker`: user-space lines in the kernel trace.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

/// A cheap, clonable handle on the capture instance's `trace_marker`.
///
/// [`TraceMarker::write`] is one write(2) with no allocation, fit for a
/// SCHED_FIFO measurement thread. Each write becomes one `ftrace:print`
/// event (`tracing_mark_write: ...` in `trace-cmd report`) on the writing
/// CPU, stamped with the instance's clock (`mono`, so it lines up with
/// `CLOCK_MONOTONIC`). When the capture stops, the descriptor is switched to
/// `/dev/null`: later writes succeed and go nowhere.
#[derive(Debug, Clone)]
pub struct TraceMarker {
    fd: Arc<OwnedFd>,
}

impl TraceMarker {
    pub(crate) fn new(fd: OwnedFd) -> Self {
        TraceMarker { fd: Arc::new(fd) }
    }

    pub(crate) fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Writes one marker line (the kernel adds a newline if missing; it cuts
    /// lines longer than about 4 KiB). Fails with EBADF while tracing is
    /// switched off (e.g. after [`TraceFreezer::freeze`]): a measurement
    /// loop should count such errors, not stop on them.
    pub fn write(&self, msg: &[u8]) -> std::io::Result<()> {
        // SAFETY: msg is valid for msg.len() bytes; the fd lives as long as self.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), msg.as_ptr().cast(), msg.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Writes `latlab: cycle=<c> intended=<ns> actual=<ns> latency=<ns>`
    /// formatted on the stack (no allocation): the line `latlab run --trace`
    /// writes for a sample over its threshold. Times are CLOCK_MONOTONIC ns.
    pub fn write_sample(
        &self,
        cycle: u64,
        intended_ns: u64,
        actual_ns: u64,
    ) -> std::io::Result<()> {
        let latency = actual_ns.saturating_sub(intended_ns);
        self.write_fields(
            b"latlab:",
            &[
                (b"cycle", cycle),
                (b"intended", intended_ns),
                (b"actual", actual_ns),
                (b"latency", latency),
            ],
        )
    }

    /// Writes `latlab: flight recorder stopped: cpu=<n> cycle=<c>
    /// latency=<ns> threshold=<ns>` formatted on the stack: the line
    /// `latlab run --flight-recorder` writes right before it stops tracing,
    /// naming the sample that stopped it (cyclictest's breaktrace writes
    /// "hit latency threshold" there).
    pub fn write_stop(
        &self,
        cpu: u64,
        cycle: u64,
        latency_ns: u64,
        threshold_ns: u64,
    ) -> std::io::Result<()> {
        self.write_fields(
            b"latlab: flight recorder stopped:",
            &[
                (b"cpu", cpu),
                (b"cycle", cycle),
                (b"latency", latency_ns),
                (b"threshold", threshold_ns),
            ],
        )
    }

    /// Writes `<prefix> name=value name=value ...` and a newline, formatted
    /// on the stack (at most 4 fields after a prefix of at most 40 bytes).
    fn write_fields(&self, prefix: &[u8], fields: &[(&[u8], u64)]) -> std::io::Result<()> {
        let mut buf = [0u8; 192];
        buf[..prefix.len()].copy_from_slice(prefix);
        let mut len = prefix.len();
        for (name, value) in fields {
            buf[len] = b' ';
            len += 1;
            buf[len..len + name.len()].copy_from_slice(name);
            len += name.len();
            buf[len] = b'=';
            len += 1;
            len += format_u64(*value, &mut buf[len..]);
        }
        buf[len] = b'\n';
        self.write(&buf[..len + 1])
    }
}

/// Writes `v` in decimal into `out` (at least 20 bytes); returns the length.
fn format_u64(mut v: u64, out: &mut [u8]) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let n = tmp.len() - i;
    out[..n].copy_from_slice(&tmp[i..]);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::FromRawFd;

    #[test]
    fn numbers_format() {
        let mut b = [0u8; 20];
        let n = format_u64(0, &mut b);
        assert_eq!(&b[..n], b"0");
        let n = format_u64(u64::MAX, &mut b);
        assert_eq!(&b[..n], u64::MAX.to_string().as_bytes());
    }

    #[test]
    fn sample_line_is_written_in_one_piece() {
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: fresh descriptors from pipe().
        let (r, w) = unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                OwnedFd::from_raw_fd(fds[1]),
            )
        };
        let m = TraceMarker::new(w);
        m.clone().write_sample(7, 1_000, 1_250).unwrap();
        drop(m);
        let mut s = String::new();
        let mut r = r;
        r.read_to_string(&mut s).unwrap();
        assert_eq!(s, "latlab: cycle=7 intended=1000 actual=1250 latency=250\n");
    }

    #[test]
    fn stop_line_names_the_sample() {
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: fresh descriptors from pipe().
        let (mut r, w) = unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                OwnedFd::from_raw_fd(fds[1]),
            )
        };
        let m = TraceMarker::new(w);
        m.write_stop(1, u64::MAX, u64::MAX, 100_000).unwrap();
        drop(m);
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!(
            s,
            format!(
                "latlab: flight recorder stopped: cpu=1 cycle={0} latency={0} threshold=100000\n",
                u64::MAX
            )
        );
    }
}

/// A cheap, clonable handle that stops tracing in the capture's instance
/// with one write(2) to its `tracing_on`, like cyclictest's breaktrace:
/// a measurement thread calls [`TraceFreezer::freeze`] the moment a
/// threshold is crossed, so the ring buffer keeps the events that led up
/// to it instead of overwriting them. [`crate::Capture::snapshot_to`] then
/// saves the frozen buffer and resumes tracing. No allocation; safe from a
/// SCHED_FIFO thread. After the capture stops, freezing does nothing.
#[derive(Debug, Clone)]
pub struct TraceFreezer {
    fd: Arc<OwnedFd>,
}

impl TraceFreezer {
    pub(crate) fn new(fd: OwnedFd) -> Self {
        TraceFreezer { fd: Arc::new(fd) }
    }

    pub(crate) fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Switches tracing off in the instance (the ring buffer keeps its content).
    pub fn freeze(&self) -> std::io::Result<()> {
        // SAFETY: writes one byte from a static buffer to our own fd.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), b"0".as_ptr().cast(), 1) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}
