//! lab-wire: the lab's GPIO pair. Emulates a CP2112 over `/dev/uhid` (load
//! `uhid` and `hid-cp2112` first) whose pin OUT is wired to pin IN, and
//! serves the kernel driver's requests until SIGTERM or SIGINT. SIGUSR1
//! prints what the wire saw so far (see the crate docs); so does the end.
//!
//!     lab-wire [--out PIN] [--in PIN] [--verbose]

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use latlab_lab_wire::uhid::{self, Event};
use latlab_lab_wire::{report_descriptor, Chip, Refused, PRODUCT, VENDOR};

static STOP: AtomicBool = AtomicBool::new(false);
static SUMMARY: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGUSR1 {
        SUMMARY.store(true, Ordering::SeqCst);
    } else {
        STOP.store(true, Ordering::SeqCst);
    }
}

fn monotonic_ns() -> u64 {
    // SAFETY: timespec is plain data (zeroed: musl's 64-bit time_t on
    // 32-bit ARM adds padding fields), filled by clock_gettime.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn write_event(fd: &OwnedFd, event: &[u8]) -> std::io::Result<()> {
    // SAFETY: writes the whole buffer from a valid slice.
    let n = unsafe { libc::write(fd.as_raw_fd(), event.as_ptr().cast(), event.len()) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

struct Options {
    out: u8,
    input: u8,
    verbose: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        out: 0,
        input: 1,
        verbose: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut pin = |name: &str| -> Result<u8, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a pin number 0..7"))
        };
        match a.as_str() {
            "--out" => o.out = pin("--out")?,
            "--in" => o.input = pin("--in")?,
            "--verbose" | "-v" => o.verbose = true,
            "-h" | "--help" => {
                println!("usage: lab-wire [--out PIN] [--in PIN] [--verbose] (pins 0..7, default 0 and 1)");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    Ok(o)
}

fn run(o: Options) -> Result<(), String> {
    let mut chip = Chip::new(o.out, o.input)?;
    // SAFETY: plain open of a device node.
    let fd = unsafe { libc::open(c"/dev/uhid".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!(
            "cannot open /dev/uhid: {} (load the uhid module: modprobe uhid)",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: a new descriptor owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGUSR1] {
        // SAFETY: installs a handler that only stores to atomics; no
        // SA_RESTART, so a blocked read returns EINTR and the loop looks.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    let create = uhid::create2(
        "latlab lab wire (emulated CP2112)",
        uhid::BUS_USB,
        VENDOR,
        PRODUCT,
        &report_descriptor(),
    );
    write_event(&fd, &create).map_err(|e| format!("UHID_CREATE2: {e}"))?;
    println!(
        "lab-wire: CP2112 emulated on /dev/uhid, pin {} wired to pin {}",
        o.out, o.input
    );
    let mut buf = vec![0u8; uhid::EVENT_SIZE];
    let result = loop {
        if SUMMARY.swap(false, Ordering::SeqCst) {
            println!("{}", chip.summary());
        }
        if STOP.load(Ordering::SeqCst) {
            break Ok(());
        }
        // SAFETY: reads into a buffer of the length passed.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break Err(format!("reading /dev/uhid: {e}"));
        }
        let now = monotonic_ns();
        let Some(event) = uhid::decode(&buf[..n as usize]) else {
            continue;
        };
        if o.verbose {
            println!("lab-wire: {event:?}");
        }
        let reply = match event {
            Event::GetReport { id, report } => {
                let r = chip.get_report(report, now);
                uhid::get_report_reply(id, r.as_deref().map_err(|_| libc::EIO as u16))
            }
            Event::SetReport { id, data, .. } => {
                let errno = match chip.set_report(&data, now) {
                    Ok(()) => 0,
                    Err(Refused::UnknownReport(_) | Refused::TooShort(_)) => libc::EIO as u16,
                };
                uhid::set_report_reply(id, errno)
            }
            _ => continue,
        };
        if let Err(e) = write_event(&fd, &reply) {
            break Err(format!("answering on /dev/uhid: {e}"));
        }
    };
    let _ = write_event(&fd, &uhid::destroy());
    println!("{}", chip.summary());
    let _ = std::io::stdout().flush();
    result
}

fn main() {
    let code = match parse_args().and_then(run) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("lab-wire: error: {e}");
            1
        }
    };
    std::process::exit(code);
}
