//! Per-CPU readers: stream full ring-buffer pages from `trace_pipe_raw` to a
//! file with splice(2) (zero copy) on a timer, then flush the last partial
//! page with read(2) when tracing stops.
//!
//! The readers do not wait in poll(2) on the trace file: a waiting reader
//! makes the kernel check the fill level on every event and wake it through
//! irq_work (a self-interrupt) on the CPU that wrote the event, which is
//! often the CPU being measured. A timer costs nothing on the traced CPUs.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::{Result, TracefsError};

/// Drain interval when the buffer fills slowly.
const SLOW_INTERVAL_MS: i32 = 100;
/// Drain interval after a drain that found a quarter of the buffer full.
const FAST_INTERVAL_MS: i32 = 10;
/// Bytes moved per splice(2) call. Small on purpose: on kernels without
/// preemption (PREEMPT_NONE) a long splice delays real-time wake-ups on that
/// CPU until it returns, so 16 pages (64 KiB with 4 KiB pages) per call keep
/// each kernel section short.
const PIPE_BYTES: i32 = 64 * 1024;

/// A shared "stop now" signal: a flag plus an eventfd that wakes every poll(2).
#[derive(Debug)]
pub(crate) struct StopSignal {
    flag: AtomicBool,
    efd: OwnedFd,
}

impl StopSignal {
    pub(crate) fn new() -> std::io::Result<Arc<Self>> {
        // SAFETY: plain syscall; the fd is owned right away.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh, valid descriptor.
        let efd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Arc::new(StopSignal {
            flag: AtomicBool::new(false),
            efd,
        }))
    }

    pub(crate) fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our eventfd.
        unsafe { libc::write(self.efd.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    fn stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

/// Opens a `trace_pipe_raw` file non-blocking.
pub(crate) fn open_pipe_raw(path: &Path, cpu: usize) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| match source.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => TracefsError::PermissionDenied {
                path: path.to_path_buf(),
            },
            _ => TracefsError::Reader {
                cpu,
                path: path.to_path_buf(),
                source,
            },
        })
}

/// Reads every page still in the buffer (full or partial) with read(2) and
/// appends them to `out` (a file, or memory for a live reader). Returns the
/// bytes written.
pub(crate) fn read_remaining(
    src: &File,
    out: &mut impl Write,
    page_size: usize,
) -> std::io::Result<u64> {
    let mut buf = vec![0u8; page_size];
    let mut total = 0u64;
    loop {
        // SAFETY: buf is valid for page_size bytes.
        let n = unsafe { libc::read(src.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return Ok(total),
                _ => return Err(e),
            }
        }
        if n == 0 {
            return Ok(total);
        }
        let n = n as usize;
        // A short read still carries a whole page header; pad to a page.
        if n < page_size {
            buf[n..].fill(0);
        }
        out.write_all(&buf)?;
        total += page_size as u64;
    }
}

struct SplicePipe {
    r: OwnedFd,
    w: OwnedFd,
    cap: usize,
}

impl SplicePipe {
    fn new(page_size: usize) -> std::io::Result<Self> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: fds has room for two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both fds are fresh and valid.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: fcntl on our own pipe.
        let got = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES) };
        // SAFETY: fcntl on our own pipe.
        let cap = if got > 0 {
            got
        } else {
            unsafe { libc::fcntl(w.as_raw_fd(), libc::F_GETPIPE_SZ) }
        };
        let cap = (cap.max(page_size as i32) as usize) / page_size * page_size;
        Ok(SplicePipe { r, w, cap })
    }
}

enum Drain {
    /// Bytes moved.
    Moved(u64),
    /// splice(2) is not supported on this file; use read(2).
    Unsupported,
}

/// Moves every full page to `out` without copying. Never blocks.
fn drain_splice(src: &File, pipe: &SplicePipe, out: &File) -> std::io::Result<Drain> {
    let mut total = 0u64;
    loop {
        // SAFETY: valid fds, null offsets (use file positions).
        let n = unsafe {
            libc::splice(
                src.as_raw_fd(),
                std::ptr::null_mut(),
                pipe.w.as_raw_fd(),
                std::ptr::null_mut(),
                pipe.cap,
                libc::SPLICE_F_NONBLOCK | libc::SPLICE_F_MOVE,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => Ok(Drain::Moved(total)),
                Some(libc::EINVAL) | Some(libc::ENOSYS) if total == 0 => Ok(Drain::Unsupported),
                _ => Err(e),
            };
        }
        if n == 0 {
            return Ok(Drain::Moved(total));
        }
        let mut left = n as usize;
        while left > 0 {
            // SAFETY: valid fds, null offsets.
            let m = unsafe {
                libc::splice(
                    pipe.r.as_raw_fd(),
                    std::ptr::null_mut(),
                    out.as_raw_fd(),
                    std::ptr::null_mut(),
                    left,
                    libc::SPLICE_F_MOVE,
                )
            };
            if m < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(e);
            }
            if m == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WriteZero,
                    "splice to the data file wrote nothing",
                ));
            }
            left -= m as usize;
        }
        total += n as u64;
    }
}

/// Sleeps for `ms` milliseconds or until the stop signal fires.
fn wait_interval(stop: &StopSignal, ms: i32) -> std::io::Result<()> {
    let mut fds = [libc::pollfd {
        fd: stop.efd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    // SAFETY: fds is a valid array of one pollfd.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    Ok(())
}

/// A CPU's ring-buffer size and how far its reader may grow it.
#[derive(Debug, Clone)]
pub(crate) struct Growth {
    /// The CPU's `per_cpu/cpuN/buffer_size_kb`.
    pub(crate) size_file: PathBuf,
    /// Size now, KiB.
    pub(crate) kb: u64,
    /// Largest size, KiB (equal to `kb`: no growth).
    pub(crate) max_kb: u64,
}

impl Growth {
    /// Doubles the buffer when a drain of `moved` bytes found it more than
    /// half full (see [`crate::ringbuf::grow_kb`]). A size the kernel refuses
    /// ends the growth; the capture goes on with the size it has.
    fn after_drain(&mut self, moved: u64) {
        if let Some(kb) = crate::ringbuf::grow_kb(self.kb, moved / 1024, self.max_kb) {
            match std::fs::write(&self.size_file, kb.to_string()) {
                // The kernel rounds to whole sub-buffers; keep what it took.
                Ok(()) => {
                    self.kb = std::fs::read_to_string(&self.size_file)
                        .ok()
                        .and_then(|t| crate::ringbuf::parse_buffer_size_kb(&t))
                        .unwrap_or(kb)
                        .max(kb)
                }
                Err(_) => self.max_kb = self.kb,
            }
        }
    }
}

/// One CPU's streaming reader thread.
pub(crate) struct CpuReader {
    pub(crate) cpu: usize,
    pub(crate) out_path: PathBuf,
    handle: Option<JoinHandle<std::io::Result<(u64, u64)>>>,
    src_path: PathBuf,
}

impl CpuReader {
    /// Opens the CPU's `trace_pipe_raw` and starts its thread.
    pub(crate) fn spawn(
        cpu: usize,
        src_path: PathBuf,
        out_path: PathBuf,
        page_size: usize,
        growth: Growth,
        stop: Arc<StopSignal>,
    ) -> Result<Self> {
        let src = open_pipe_raw(&src_path, cpu)?;
        let out = File::create(&out_path).map_err(|e| TracefsError::io("create", &out_path, e))?;
        let handle = std::thread::Builder::new()
            .name(format!("latlab-rd{cpu}"))
            .spawn(move || stream(src, out, page_size, growth, &stop))
            .map_err(|source| TracefsError::Reader {
                cpu,
                path: src_path.clone(),
                source,
            })?;
        Ok(CpuReader {
            cpu,
            out_path,
            handle: Some(handle),
            src_path,
        })
    }

    /// Waits for the thread (after [`StopSignal::stop`]); returns the bytes
    /// written and the CPU's ring-buffer size at the end (KiB).
    pub(crate) fn join(mut self) -> Result<(u64, u64)> {
        let cpu = self.cpu;
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(Ok(n))) => Ok(n),
            Some(Ok(Err(source))) => Err(TracefsError::Reader {
                cpu,
                path: self.src_path,
                source,
            }),
            Some(Err(_)) | None => Err(TracefsError::ReaderPanicked { cpu }),
        }
    }
}

fn stream(
    src: File,
    mut out: File,
    page_size: usize,
    mut growth: Growth,
    stop: &StopSignal,
) -> std::io::Result<(u64, u64)> {
    let mut total = 0u64;
    let pipe = SplicePipe::new(page_size).ok();
    let mut use_splice = pipe.is_some();
    loop {
        let moved = if use_splice {
            match drain_splice(&src, pipe.as_ref().expect("pipe exists"), &out)? {
                Drain::Moved(n) => n,
                Drain::Unsupported => {
                    use_splice = false;
                    0
                }
            }
        } else {
            // Without splice we take only what is there, partial pages included.
            read_remaining(&src, &mut out, page_size)?
        };
        total += moved;
        if stop.stopped() {
            break;
        }
        growth.after_drain(moved);
        let busy = moved.saturating_mul(4) >= growth.kb * 1024;
        wait_interval(
            stop,
            if busy {
                FAST_INTERVAL_MS
            } else {
                SLOW_INTERVAL_MS
            },
        )?;
    }
    // Tracing is off now: take the full pages, then the partial ones.
    if use_splice {
        if let Drain::Moved(n) = drain_splice(&src, pipe.as_ref().expect("pipe exists"), &out)? {
            total += n;
        }
    }
    total += read_remaining(&src, &mut out, page_size)?;
    out.flush()?;
    Ok((total, growth.kb))
}
