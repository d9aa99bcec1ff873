//! The built-in load workers: one function per kind, each counting its work.
//!
//! Every worker runs in its own thread, first made SCHED_OTHER / nice >= 0 and
//! pinned to the load's CPUs, then loops until the shared stop flag is set.
//! Blocking calls use 20 ms timeouts so a stop is seen quickly.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use latlab_rt::wait::Condvar;

use crate::sched::{make_background, set_affinity};
use crate::{LoadError, LoadKind};

/// How long a blocking socket call may wait before the stop flag is looked at
/// again: a stop (Ctrl-C) ends the load within about this.
const POLL: Duration = Duration::from_millis(20);
/// Counter increments between two publications of the cpu load's count.
const CPU_BATCH: u64 = 1 << 18;
/// System calls between two publications of the syscall load's count.
const SYSCALL_BATCH: u64 = 1024;
/// Bytes the mem load maps, touches and unmaps per round.
const MEM_CHUNK: usize = 16 << 20;
/// Pages of a mem chunk touched between two updates of its counter.
const MEM_BATCH_PAGES: usize = 64;
/// Size of the io load's write and read calls (and its smallest file).
pub(crate) const IO_CHUNK: u64 = 1 << 20;
/// Senders (and receivers) in one ipc group, as in a small hackbench group.
const IPC_GROUP_SIZE: usize = 8;
/// Size of one ipc message (hackbench's default).
const IPC_MESSAGE: usize = 100;

/// A work counter on its own cache line, so workers do not slow each other down.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// The work counted so far.
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What every worker thread shares.
pub(crate) struct Setup {
    /// Nice value of the workers (0..=19).
    pub nice: i32,
    /// CPUs the workers may run on (empty: leave affinity alone).
    pub cpus: Vec<usize>,
    /// The scratch directory (needed by `io`).
    pub dir: Option<PathBuf>,
    /// Largest file one `io` worker writes.
    pub io_file_cap: u64,
    /// Bytes per send of the `net` and `udp` loads.
    pub net_message_bytes: usize,
    /// Set to stop every worker.
    pub stop: Arc<AtomicBool>,
    /// Each thread reports the result of its scheduling setup here.
    pub ready: Arc<Readiness>,
    /// The first failure of a running worker, described.
    pub failure: Arc<Mutex<Option<String>>>,
}

/// Where worker threads report whether their scheduling setup worked, and
/// where the thread that starts them waits for every report. A condition
/// variable from latlab-rt, not a channel's `recv_timeout`: std's timed waits
/// end early on 32-bit ARM (see `latlab_rt::wait`).
#[derive(Default)]
pub(crate) struct Readiness {
    reports: Mutex<ReadyReports>,
    changed: Condvar,
}

/// What the worker threads have reported so far.
#[derive(Default)]
struct ReadyReports {
    /// Threads whose setup worked.
    ready: usize,
    /// The first setup that failed.
    failed: Option<LoadError>,
}

impl Readiness {
    /// Records one thread's setup result.
    pub fn report(&self, result: Result<(), LoadError>) {
        let mut reports = self.reports.lock().unwrap_or_else(|p| p.into_inner());
        match result {
            Ok(()) => reports.ready += 1,
            Err(e) => {
                reports.failed.get_or_insert(e);
            }
        }
        drop(reports);
        self.changed.notify_all();
    }

    /// Waits until `threads` threads have reported ready (`Ok(true)`), one
    /// has failed (its error), or `timeout` has passed (`Ok(false)`).
    pub fn wait_for(&self, threads: usize, timeout: Duration) -> Result<bool, LoadError> {
        let (mut reports, _) = self
            .changed
            .wait_timeout_while(&self.reports, timeout, |r| {
                r.failed.is_none() && r.ready < threads
            });
        match reports.failed.take() {
            Some(e) => Err(e),
            None => Ok(reports.ready >= threads),
        }
    }
}

/// One worker as the user counts them (`cpu:2` is two units): its threads and counter.
pub(crate) struct Unit {
    /// The kind.
    pub kind: LoadKind,
    /// Index within its kind.
    pub index: usize,
    /// The work it has done.
    pub counter: Arc<Counter>,
    /// Its threads (net, udp: sender + receiver; ipc: a group of senders and receivers).
    pub threads: Vec<JoinHandle<Result<(), LoadError>>>,
}

/// Starts worker `index` of `kind`. Its threads report readiness on `setup.ready`.
pub(crate) fn start_unit(kind: LoadKind, index: usize, setup: &Setup) -> Result<Unit, LoadError> {
    let counter = Arc::new(Counter::default());
    let mut unit = Unit {
        kind,
        index,
        counter: counter.clone(),
        threads: Vec::new(),
    };
    let stop = setup.stop.clone();
    match kind {
        LoadKind::Cpu => {
            unit.threads
                .push(spawn(setup, kind, index, "", move || cpu(&stop, &counter))?);
        }
        LoadKind::Syscall => {
            unit.threads.push(spawn(setup, kind, index, "", move || {
                syscalls(&stop, &counter)
            })?);
        }
        LoadKind::Mem => {
            unit.threads
                .push(spawn(setup, kind, index, "", move || mem(&stop, &counter))?);
        }
        LoadKind::Io => {
            let dir = setup.dir.clone().expect("io load needs the temp dir");
            let path = dir.join(format!("io-{index}.dat"));
            let cap = setup.io_file_cap;
            unit.threads.push(spawn(setup, kind, index, "", move || {
                io(&stop, &counter, &path, cap)
            })?);
        }
        LoadKind::Net => {
            let (tx, rx) = tcp_pair()?;
            let msg = setup.net_message_bytes;
            let stop2 = stop.clone();
            unit.threads.push(spawn(setup, kind, index, "s", move || {
                tcp_send(&stop2, tx, msg)
            })?);
            unit.threads.push(spawn(setup, kind, index, "r", move || {
                tcp_receive(&stop, &counter, rx)
            })?);
        }
        LoadKind::Udp => {
            let (tx, rx) = udp_pair()?;
            let msg = setup.net_message_bytes;
            let stop2 = stop.clone();
            unit.threads.push(spawn(setup, kind, index, "s", move || {
                udp_send(&stop2, &tx, msg)
            })?);
            unit.threads.push(spawn(setup, kind, index, "r", move || {
                udp_receive(&stop, &counter, &rx)
            })?);
        }
        LoadKind::Ipc => {
            let mut write_ends = Vec::with_capacity(IPC_GROUP_SIZE);
            for r in 0..IPC_GROUP_SIZE {
                let (a, b) = UnixStream::pair()
                    .map_err(|e| LoadError::socket("ipc", "socketpair(AF_UNIX)", e))?;
                for s in [&a, &b] {
                    s.set_read_timeout(Some(POLL))
                        .and_then(|()| s.set_write_timeout(Some(POLL)))
                        .map_err(|e| LoadError::socket("ipc", "set socket timeouts", e))?;
                }
                write_ends.push(a);
                let (stop, counter) = (stop.clone(), counter.clone());
                let role = format!("r{r}");
                unit.threads.push(spawn(setup, kind, index, &role, move || {
                    ipc_receive(&stop, &counter, b)
                })?);
            }
            for s in 0..IPC_GROUP_SIZE {
                let ends = write_ends
                    .iter()
                    .map(UnixStream::try_clone)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| LoadError::socket("ipc", "dup socket", e))?;
                let stop = stop.clone();
                let role = format!("s{s}");
                unit.threads.push(spawn(setup, kind, index, &role, move || {
                    ipc_send(&stop, ends)
                })?);
            }
        }
    }
    Ok(unit)
}

/// Spawns one worker thread: background scheduling, affinity, readiness, then `body`.
fn spawn(
    setup: &Setup,
    kind: LoadKind,
    index: usize,
    role: &str,
    body: impl FnOnce() -> Result<(), LoadError> + Send + 'static,
) -> Result<JoinHandle<Result<(), LoadError>>, LoadError> {
    let ready = setup.ready.clone();
    let failure = setup.failure.clone();
    let stop = setup.stop.clone();
    let (nice, cpus) = (setup.nice, setup.cpus.clone());
    std::thread::Builder::new()
        // Linux keeps 15 bytes of a thread name; this fits for every kind.
        .name(format!("ld-{}{index}{role}", kind.name()))
        .stack_size(256 << 10)
        .spawn(move || {
            let prepared =
                make_background(kind.name(), nice).and_then(|()| set_affinity(kind.name(), &cpus));
            let ok = prepared.is_ok();
            ready.report(prepared);
            drop(ready);
            if !ok {
                return Ok(());
            }
            let result = body();
            if let Err(err) = &result {
                // A peer that stopped first (EPIPE, EOF) is not a failure.
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                failure
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert_with(|| format!("{kind} load worker {index}: {err}"));
            }
            result
        })
        .map_err(|e| LoadError::WorkerStart {
            kind: kind.name(),
            index,
            reason: format!("cannot create a thread: {e} (too many workers for this machine?)"),
        })
}

fn cpu(stop: &AtomicBool, counter: &Counter) -> Result<(), LoadError> {
    let mut x = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..CPU_BATCH {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        counter.add(CPU_BATCH);
    }
    Ok(())
}

fn syscalls(stop: &AtomicBool, counter: &Counter) -> Result<(), LoadError> {
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..SYSCALL_BATCH {
            // SAFETY: getppid has no arguments and cannot fail; the raw syscall
            // makes sure the kernel is entered every time (no libc caching).
            unsafe { libc::syscall(libc::SYS_getppid) };
        }
        counter.add(SYSCALL_BATCH);
    }
    Ok(())
}

fn mem(stop: &AtomicBool, counter: &Counter) -> Result<(), LoadError> {
    // SAFETY: sysconf has no memory effects.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => 4096,
    };
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: a fresh private anonymous mapping, written only inside its
        // bounds and unmapped before the loop goes on.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                MEM_CHUNK,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if base == libc::MAP_FAILED {
                let source = std::io::Error::last_os_error();
                let hint = if source.raw_os_error() == Some(libc::EAGAIN) {
                    "; the process locks its memory (mlockall) and RLIMIT_MEMLOCK is too small: run as root or raise `ulimit -l`"
                } else {
                    "; is memory short? run fewer mem workers"
                };
                return Err(LoadError::Sys {
                    kind: "mem",
                    call: "mmap",
                    source,
                    hint,
                });
            }
            let base = base.cast::<u8>();
            touch_pages(base, MEM_CHUNK, page, counter);
            if libc::munmap(base.cast(), MEM_CHUNK) != 0 {
                return Err(LoadError::sys("mem", "munmap"));
            }
        }
    }
    Ok(())
}

/// Writes one byte into every page of `len` bytes at `base`, counting the
/// pages in batches as they are touched, not once per chunk: a slow CPU (an
/// emulated armv7 took more than 3 s for one 16 MiB chunk, and reported 0
/// pages) still shows its throughput, per interval too.
///
/// # Safety
/// `base..base + len` must be writable memory.
unsafe fn touch_pages(base: *mut u8, len: usize, page: usize, counter: &Counter) {
    let mut pending = 0;
    for offset in (0..len).step_by(page) {
        // SAFETY: offset < len, inside the caller's writable range.
        unsafe { base.add(offset).write_volatile(1) };
        pending += 1;
        if pending == MEM_BATCH_PAGES {
            counter.add(pending as u64);
            pending = 0;
        }
    }
    counter.add(pending as u64);
}

fn io(stop: &AtomicBool, counter: &Counter, path: &Path, cap: u64) -> Result<(), LoadError> {
    let err = |action, source| LoadError::Io {
        action,
        path: path.to_owned(),
        source,
    };
    let chunk = IO_CHUNK.min(cap) as usize;
    let mut buf = vec![0u8; chunk];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    let mut size = chunk as u64;
    while !stop.load(Ordering::Relaxed) {
        // Write the whole file and force it to the disk, as IOzone's write test does.
        let mut file = std::fs::File::create(path).map_err(|e| err("create", e))?;
        let mut written = 0;
        while written < size && !stop.load(Ordering::Relaxed) {
            file.write_all(&buf).map_err(|e| {
                err(
                    "write (is the disk full? lower the disk cap or choose another temp dir)",
                    e,
                )
            })?;
            // Start writeback of this chunk now, so dirty data never piles up
            // and the fsync below (which a stop cannot interrupt) stays short
            // even on a slow SD card.
            // SAFETY: valid fd and a range inside the file; no memory effects.
            unsafe {
                libc::sync_file_range(
                    file.as_raw_fd(),
                    written as libc::off64_t,
                    chunk as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                )
            };
            written += chunk as u64;
            counter.add(chunk as u64);
        }
        file.sync_all().map_err(|e| err("fsync", e))?;
        // Drop the cached pages so the read comes from the disk, not from memory.
        // SAFETY: valid fd; advice only.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        drop(file);
        let mut file = std::fs::File::open(path).map_err(|e| err("open", e))?;
        while !stop.load(Ordering::Relaxed) {
            let n = match file.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(err("read", e)),
            };
            if n == 0 {
                break;
            }
            counter.add(n as u64);
        }
        // Double the file each round (IOzone's growing file sizes), back to the
        // smallest once the cap is reached.
        size = if size * 2 <= cap {
            size * 2
        } else {
            chunk as u64
        };
    }
    let _ = std::fs::remove_file(path);
    Ok(())
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

fn loopback() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

fn tcp_pair() -> Result<(TcpStream, TcpStream), LoadError> {
    let e = |action: &'static str| move |err| LoadError::socket("net", action, err);
    let listener = TcpListener::bind(loopback()).map_err(e("bind 127.0.0.1"))?;
    let addr = listener.local_addr().map_err(e("getsockname"))?;
    let tx = TcpStream::connect(addr).map_err(e("connect to 127.0.0.1"))?;
    let (rx, _) = listener.accept().map_err(e("accept"))?;
    tx.set_write_timeout(Some(POLL))
        .map_err(e("set send timeout"))?;
    rx.set_read_timeout(Some(POLL))
        .map_err(e("set receive timeout"))?;
    Ok((tx, rx))
}

fn tcp_send(stop: &AtomicBool, mut tx: TcpStream, msg: usize) -> Result<(), LoadError> {
    let buf = vec![0x5au8; msg];
    let mut offset = 0;
    while !stop.load(Ordering::Relaxed) {
        match tx.write(&buf[offset..]) {
            Ok(n) => offset = (offset + n) % msg,
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(LoadError::socket("net", "send", e)),
        }
    }
    Ok(())
}

fn tcp_receive(stop: &AtomicBool, counter: &Counter, mut rx: TcpStream) -> Result<(), LoadError> {
    let mut buf = vec![0u8; 64 << 10];
    while !stop.load(Ordering::Relaxed) {
        match rx.read(&mut buf) {
            Ok(0) if stop.load(Ordering::Relaxed) => break,
            Ok(0) => {
                return Err(LoadError::socket(
                    "net",
                    "receive",
                    std::io::Error::other("the sender closed the connection"),
                ))
            }
            Ok(n) => counter.add(n as u64),
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(LoadError::socket("net", "receive", e)),
        }
    }
    Ok(())
}

fn udp_pair() -> Result<(UdpSocket, UdpSocket), LoadError> {
    let e = |action: &'static str| move |err| LoadError::socket("udp", action, err);
    let rx = UdpSocket::bind(loopback()).map_err(e("bind 127.0.0.1"))?;
    let tx = UdpSocket::bind(loopback()).map_err(e("bind 127.0.0.1"))?;
    tx.connect(rx.local_addr().map_err(e("getsockname"))?)
        .map_err(e("connect to 127.0.0.1"))?;
    tx.set_write_timeout(Some(POLL))
        .map_err(e("set send timeout"))?;
    rx.set_read_timeout(Some(POLL))
        .map_err(e("set receive timeout"))?;
    Ok((tx, rx))
}

fn udp_send(stop: &AtomicBool, tx: &UdpSocket, msg: usize) -> Result<(), LoadError> {
    let buf = vec![0xa5u8; msg];
    while !stop.load(Ordering::Relaxed) {
        match tx.send(&buf) {
            Ok(_) => {}
            // A full socket buffer or a datagram refused while the receiver
            // drains is normal for UDP: the loss shows as lower throughput.
            Err(e) if is_timeout(&e) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOBUFS | libc::ECONNREFUSED)) => {}
            Err(e) => return Err(LoadError::socket("udp", "send", e)),
        }
    }
    Ok(())
}

fn udp_receive(stop: &AtomicBool, counter: &Counter, rx: &UdpSocket) -> Result<(), LoadError> {
    let mut buf = vec![0u8; 64 << 10];
    while !stop.load(Ordering::Relaxed) {
        match rx.recv(&mut buf) {
            Ok(n) => counter.add(n as u64),
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(LoadError::socket("udp", "receive", e)),
        }
    }
    Ok(())
}

fn ipc_send(stop: &AtomicBool, mut receivers: Vec<UnixStream>) -> Result<(), LoadError> {
    let msg = [0x33u8; IPC_MESSAGE];
    // Like hackbench: every sender writes one message to every receiver of its group.
    while !stop.load(Ordering::Relaxed) {
        for rx in &mut receivers {
            let mut offset = 0;
            while offset < IPC_MESSAGE {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                match rx.write(&msg[offset..]) {
                    Ok(n) => offset += n,
                    Err(e) if is_timeout(&e) => {}
                    Err(e) => return Err(LoadError::socket("ipc", "write message", e)),
                }
            }
        }
    }
    Ok(())
}

fn ipc_receive(stop: &AtomicBool, counter: &Counter, mut rx: UnixStream) -> Result<(), LoadError> {
    let mut buf = [0u8; 4096];
    let mut partial = 0usize;
    while !stop.load(Ordering::Relaxed) {
        match rx.read(&mut buf) {
            Ok(0) if stop.load(Ordering::Relaxed) => break,
            Ok(0) => {
                return Err(LoadError::socket(
                    "ipc",
                    "read message",
                    std::io::Error::other("every sender closed its socket"),
                ))
            }
            Ok(n) => {
                partial += n;
                counter.add((partial / IPC_MESSAGE) as u64);
                partial %= IPC_MESSAGE;
            }
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(LoadError::socket("ipc", "read message", e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found in the lab: the mem load counted its pages once per 16 MiB
    /// chunk, and an emulated armv7 finished none in 3 s: "0 pages".
    #[test]
    fn mem_pages_are_counted_as_they_are_touched() {
        let page = 4096;
        let pages = 2 * MEM_BATCH_PAGES + 3;
        let mut memory = vec![0u8; pages * page];
        let counter = Counter::default();
        // SAFETY: the vector is writable over its whole length.
        unsafe { touch_pages(memory.as_mut_ptr(), memory.len(), page, &counter) };
        assert_eq!(counter.get(), pages as u64);
        assert!(memory.chunks(page).all(|p| p[0] == 1));
        // A part of a chunk counts exactly the pages it touched.
        let counter = Counter::default();
        let part = MEM_BATCH_PAGES * page;
        // SAFETY: as above, the first `part` bytes.
        unsafe { touch_pages(memory.as_mut_ptr(), part, page, &counter) };
        assert_eq!(counter.get(), MEM_BATCH_PAGES as u64);
    }
}
