//! The channels between the stimulus (the "measurement board") and the
//! responder, and the raw send/wait primitives both sides use.
//!
//! The primitives are plain system calls on file descriptors set up before
//! the responder is forked: they allocate nothing, so the forked responder
//! may use them (a forked child of a threaded process must not allocate).

use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use crate::gpio::{self, GpioWiring, LineEvent, LineValues, GPIO_V2_LINE_SET_VALUES_IOCTL};
use crate::RespondError;

/// How the stimulus reaches the responder (and, unless `--gpio` is given,
/// how the responder answers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Channel {
    /// A pseudo-terminal pair in raw mode: the kernel tty path (serial emulation).
    Pty,
    /// Two pipes.
    Pipe,
    /// Two eventfds.
    Eventfd,
    /// A connected UNIX stream socket pair.
    Unix,
    /// Two UDP sockets on 127.0.0.1.
    Udp,
    /// SIGUSR1 to the responder, SIGUSR2 back to the stimulus thread.
    Signal,
    /// Real serial ports: the stimulus writes on `tx`, the responder reads
    /// on `rx` (the same device with a loopback plug, or two ports joined by
    /// a null-modem cable, which also carries the answer back).
    Serial {
        /// Port the stimulus writes to.
        tx: PathBuf,
        /// Port the responder reads from.
        rx: PathBuf,
        /// Line speed.
        baud: u32,
    },
}

impl Channel {
    /// Real serial ports from `--serial TX[,RX]` (one device: a loopback
    /// plug) at `baud`.
    pub fn serial(spec: &str, baud: u32) -> Channel {
        let (tx, rx) = spec.split_once(',').unwrap_or((spec, spec));
        Channel::Serial {
            tx: PathBuf::from(tx.trim()),
            rx: PathBuf::from(rx.trim()),
            baud,
        }
    }

    /// The emulated channels, by name.
    pub const EMULATED: [&'static str; 6] = ["pty", "pipe", "eventfd", "unix", "udp", "signal"];

    /// Short name, as in `--channel` (`serial` for real ports).
    pub fn name(&self) -> &'static str {
        match self {
            Channel::Pty => "pty",
            Channel::Pipe => "pipe",
            Channel::Eventfd => "eventfd",
            Channel::Unix => "unix",
            Channel::Udp => "udp",
            Channel::Signal => "signal",
            Channel::Serial { .. } => "serial",
        }
    }

    /// What the stimulus and answer travel through, in words.
    pub fn describe(&self) -> String {
        match self {
            Channel::Pty => "pseudo-terminal pair, raw (kernel tty path)".into(),
            Channel::Pipe => "pipe".into(),
            Channel::Eventfd => "eventfd".into(),
            Channel::Unix => "UNIX stream socket pair".into(),
            Channel::Udp => "UDP on 127.0.0.1".into(),
            Channel::Signal => "SIGUSR1 / SIGUSR2".into(),
            Channel::Serial { tx, rx, baud } if tx == rx => {
                format!("serial {} at {baud} baud (loopback)", tx.display())
            }
            Channel::Serial { tx, rx, baud } => {
                format!("serial {} -> {} at {baud} baud", tx.display(), rx.display())
            }
        }
    }
}

impl std::str::FromStr for Channel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "pty" | "tty" => Channel::Pty,
            "pipe" => Channel::Pipe,
            "eventfd" => Channel::Eventfd,
            "unix" => Channel::Unix,
            "udp" => Channel::Udp,
            "signal" => Channel::Signal,
            _ => {
                return Err(format!(
                    "unknown channel {s:?} (known: {}; real hardware: --serial, --gpio)",
                    Channel::EMULATED.join(", ")
                ))
            }
        })
    }
}

/// Signal of the stimulus.
pub(crate) const STIMULUS_SIGNAL: i32 = libc::SIGUSR1;
/// Signal of the answer.
pub(crate) const ANSWER_SIGNAL: i32 = libc::SIGUSR2;

/// A sending end.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sender {
    /// One byte on a stream, datagram or tty.
    Bytes(RawFd),
    /// Adds 1 to an eventfd.
    Eventfd(RawFd),
    /// A signal to one thread (pid and tid filled in once both exist).
    Signal { pid: i32, tid: i32, sig: i32 },
    /// Toggles a GPIO output line.
    Gpio(RawFd),
}

/// A waiting end.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Receiver {
    /// One byte.
    Bytes(RawFd),
    /// An eventfd count.
    Eventfd(RawFd),
    /// A blocked signal, taken with sigtimedwait.
    Signal(i32),
    /// An edge event on a GPIO input line, with the kernel's timestamp.
    GpioEdge(RawFd),
}

/// What a wait brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// The event arrived; the kernel's timestamp of it when the channel has one (GPIO).
    Event(Option<u64>),
    /// Nothing before the timeout.
    Timeout,
    /// The other end closed.
    Closed,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

impl Sender {
    /// Sends once; `level` is the GPIO level to drive. Returns an errno on failure.
    #[inline]
    pub(crate) fn send(self, level: bool) -> Result<(), i32> {
        loop {
            // SAFETY: plain system calls on descriptors this process owns; buffers are locals.
            let rc = unsafe {
                match self {
                    Sender::Bytes(fd) => libc::write(fd, b"E".as_ptr().cast(), 1) as libc::c_long,
                    Sender::Eventfd(fd) => {
                        let one: u64 = 1;
                        libc::write(fd, (&one as *const u64).cast(), 8) as libc::c_long
                    }
                    Sender::Signal { pid, tid, sig } => {
                        libc::syscall(libc::SYS_tgkill, pid, tid, sig)
                    }
                    Sender::Gpio(fd) => {
                        let mut values = LineValues {
                            bits: u64::from(level),
                            mask: 1,
                        };
                        libc::ioctl(
                            fd,
                            GPIO_V2_LINE_SET_VALUES_IOCTL as _,
                            &mut values as *mut LineValues,
                        ) as libc::c_long
                    }
                }
            };
            if rc >= 0 {
                return Ok(());
            }
            let e = errno();
            if e != libc::EINTR {
                return Err(e);
            }
        }
    }
}

impl Receiver {
    /// Waits for one event, at most `timeout_ns` (forever when `None`).
    /// EINTR is returned as an error so the caller can check its stop flag.
    #[inline]
    pub(crate) fn wait(self, timeout_ns: Option<u64>) -> Result<Waited, i32> {
        match self {
            Receiver::Signal(sig) => {
                // SAFETY: sigset and siginfo are locals; the signal is blocked in this thread.
                unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, sig);
                    let mut info: libc::siginfo_t = std::mem::zeroed();
                    let rc = match timeout_ns {
                        Some(ns) => {
                            let ts = latlab_rt::clock::to_timespec(ns);
                            libc::sigtimedwait(&set, &mut info, &ts)
                        }
                        None => libc::sigwaitinfo(&set, &mut info),
                    };
                    if rc == sig {
                        Ok(Waited::Event(None))
                    } else if errno() == libc::EAGAIN {
                        Ok(Waited::Timeout)
                    } else {
                        Err(errno())
                    }
                }
            }
            Receiver::Bytes(fd) | Receiver::Eventfd(fd) | Receiver::GpioEdge(fd) => {
                if let Some(ns) = timeout_ns {
                    let mut pfd = libc::pollfd {
                        fd,
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    let ts = latlab_rt::clock::to_timespec(ns);
                    // SAFETY: one valid pollfd, a valid timespec, no signal mask change.
                    let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
                    if rc < 0 {
                        return Err(errno());
                    }
                    if rc == 0 {
                        return Ok(Waited::Timeout);
                    }
                }
                self.read_one(fd)
            }
        }
    }

    fn read_one(self, fd: RawFd) -> Result<Waited, i32> {
        // SAFETY: reads into locals of the exact sizes passed.
        unsafe {
            match self {
                Receiver::Bytes(_) => {
                    let mut byte = 0u8;
                    match libc::read(fd, (&mut byte as *mut u8).cast(), 1) {
                        1 => Ok(Waited::Event(None)),
                        0 => Ok(Waited::Closed),
                        _ => Err(errno()),
                    }
                }
                Receiver::Eventfd(_) => {
                    let mut count = 0u64;
                    match libc::read(fd, (&mut count as *mut u64).cast(), 8) {
                        8 => Ok(Waited::Event(None)),
                        _ => Err(errno()),
                    }
                }
                Receiver::GpioEdge(_) => {
                    let mut event = LineEvent::default();
                    let size = std::mem::size_of::<LineEvent>();
                    match libc::read(fd, (&mut event as *mut LineEvent).cast(), size) {
                        n if n == size as isize => Ok(Waited::Event(Some(event.timestamp_ns))),
                        0 => Ok(Waited::Closed),
                        _ => Err(errno()),
                    }
                }
                Receiver::Signal(_) => Err(libc::EINVAL),
            }
        }
    }

    /// Takes every event already pending (after a timeout, so a late answer
    /// is not taken for the next one).
    pub(crate) fn drain(self) {
        while let Ok(Waited::Event(_)) = self.wait(Some(0)) {}
    }
}

/// Both directions, set up before the responder is forked.
pub(crate) struct Wires {
    /// The stimulus sends on this.
    pub(crate) stimulus: Sender,
    /// The stimulus waits for the answer on this.
    pub(crate) answer_in: Receiver,
    /// The responder waits for the stimulus on this.
    pub(crate) event_in: Receiver,
    /// The responder answers on this.
    pub(crate) answer: Sender,
    /// Descriptors only the stimulus side uses (the responder closes them).
    pub(crate) stimulus_only: Vec<OwnedFd>,
    /// Descriptors only the responder uses (the stimulus closes them after the fork).
    pub(crate) responder_only: Vec<OwnedFd>,
    /// Descriptors both use: only held, so they stay open while the wires live.
    #[allow(dead_code)]
    pub(crate) shared: Vec<OwnedFd>,
    /// True when the channel is a signal (the stimulus thread must block both signals).
    pub(crate) signals: bool,
}

fn channel_err(channel: &'static str, step: &'static str) -> RespondError {
    RespondError::Channel {
        channel,
        step,
        error: std::io::Error::last_os_error(),
    }
}

fn pipe(channel: &'static str) -> Result<(OwnedFd, OwnedFd), RespondError> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(channel_err(channel, "pipe2"));
    }
    // SAFETY: both descriptors were just created and are owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn eventfd() -> Result<OwnedFd, RespondError> {
    // SAFETY: eventfd has no memory preconditions.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(channel_err("eventfd", "eventfd"));
    }
    // SAFETY: a new descriptor owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Raw mode: no echo, no line editing, no CR/LF translation, 8 bits,
/// a read returns as soon as one byte is there.
fn make_raw(fd: RawFd, speed: Option<libc::speed_t>) -> std::io::Result<()> {
    // SAFETY: termios is plain data filled by tcgetattr.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(fd, &mut t) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::cfmakeraw(&mut t);
        t.c_cflag |= libc::CLOCAL | libc::CREAD;
        t.c_cflag &= !(libc::CRTSCTS | libc::CSTOPB);
        t.c_cc[libc::VMIN] = 1;
        t.c_cc[libc::VTIME] = 0;
        if let Some(speed) = speed {
            if libc::cfsetispeed(&mut t, speed) != 0 || libc::cfsetospeed(&mut t, speed) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if libc::tcsetattr(fd, libc::TCSANOW, &t) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::tcflush(fd, libc::TCIOFLUSH);
    }
    Ok(())
}

pub(crate) fn pty() -> Result<(OwnedFd, OwnedFd), RespondError> {
    // SAFETY: posix_openpt returns a new descriptor or -1.
    let master = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if master < 0 {
        return Err(channel_err("pty", "posix_openpt (is /dev/pts mounted?)"));
    }
    // SAFETY: a new descriptor owned here.
    let master = unsafe { OwnedFd::from_raw_fd(master) };
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: master is a pty master; name has the length passed.
    unsafe {
        if libc::grantpt(master.as_raw_fd()) != 0 || libc::unlockpt(master.as_raw_fd()) != 0 {
            return Err(channel_err("pty", "grantpt/unlockpt"));
        }
        let rc = libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len());
        if rc != 0 {
            return Err(RespondError::Channel {
                channel: "pty",
                step: "ptsname_r",
                error: std::io::Error::from_raw_os_error(rc),
            });
        }
    }
    // SAFETY: ptsname_r wrote a NUL-terminated path.
    let slave = unsafe {
        libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    if slave < 0 {
        return Err(channel_err("pty", "opening the pty slave"));
    }
    // SAFETY: a new descriptor owned here.
    let slave = unsafe { OwnedFd::from_raw_fd(slave) };
    for fd in [&master, &slave] {
        make_raw(fd.as_raw_fd(), None).map_err(|source| RespondError::Channel {
            channel: "pty",
            step: "setting raw mode",
            error: source,
        })?;
    }
    Ok((master, slave))
}

fn baud_constant(baud: u32) -> Option<libc::speed_t> {
    Some(match baud {
        1200 => libc::B1200,
        2400 => libc::B2400,
        4800 => libc::B4800,
        9600 => libc::B9600,
        19200 => libc::B19200,
        38400 => libc::B38400,
        57600 => libc::B57600,
        115200 => libc::B115200,
        230400 => libc::B230400,
        460800 => libc::B460800,
        921600 => libc::B921600,
        1000000 => libc::B1000000,
        2000000 => libc::B2000000,
        3000000 => libc::B3000000,
        4000000 => libc::B4000000,
        _ => return None,
    })
}

/// The serial ports this machine has, for error messages.
fn serial_ports_present() -> String {
    let mut ports: Vec<String> = std::fs::read_dir("/dev")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    ["ttyS", "ttyUSB", "ttyACM", "ttyAMA"]
                        .iter()
                        .any(|p| n.starts_with(p))
                })
                .map(|n| format!("/dev/{n}"))
                .collect()
        })
        .unwrap_or_default();
    ports.sort();
    if ports.is_empty() {
        "this machine has no serial port device".to_string()
    } else {
        format!("device nodes here: {}", ports.join(", "))
    }
}

/// Opens a real serial port raw at `baud`.
pub fn open_serial(path: &Path, baud: u32) -> Result<OwnedFd, RespondError> {
    let speed = baud_constant(baud).ok_or_else(|| {
        RespondError::Wiring(format!(
            "unsupported --baud {baud} (use a standard rate such as 9600 or 115200)"
        ))
    })?;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)
        .map_err(|source| {
            let hint = if source.raw_os_error() == Some(libc::EIO) {
                "the node exists but no UART answers behind it".to_string()
            } else {
                serial_ports_present()
            };
            RespondError::SerialOpen {
                path: path.to_path_buf(),
                error: source,
                hint,
            }
        })?;
    let fd: OwnedFd = file.into();
    // SAFETY: isatty and fcntl only query/flip flags of an owned descriptor.
    unsafe {
        if libc::isatty(fd.as_raw_fd()) != 1 {
            return Err(RespondError::NotATerminal {
                path: path.to_path_buf(),
            });
        }
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
    }
    make_raw(fd.as_raw_fd(), Some(speed)).map_err(|source| RespondError::SerialConfig {
        path: path.to_path_buf(),
        baud,
        error: source,
    })?;
    Ok(fd)
}

impl Wires {
    /// One connection used both ways (a pty, a socket pair): the stimulus
    /// writes the event into and reads the answer from `stimulus_end`, the
    /// responder the other way round on `responder_end`.
    fn both_ways(stimulus_end: OwnedFd, responder_end: OwnedFd) -> Wires {
        Wires {
            stimulus: Sender::Bytes(stimulus_end.as_raw_fd()),
            answer_in: Receiver::Bytes(stimulus_end.as_raw_fd()),
            event_in: Receiver::Bytes(responder_end.as_raw_fd()),
            answer: Sender::Bytes(responder_end.as_raw_fd()),
            stimulus_only: vec![stimulus_end],
            responder_only: vec![responder_end],
            shared: Vec::new(),
            signals: false,
        }
    }
}

/// Creates both directions of `channel`, the answer replaced by the GPIO
/// wiring when one is given.
pub(crate) fn build(channel: &Channel, gpio: Option<&GpioWiring>) -> Result<Wires, RespondError> {
    let mut wires = match channel {
        Channel::Pty => {
            let (master, slave) = pty()?;
            Wires::both_ways(master, slave)
        }
        Channel::Pipe => {
            let (fwd_r, fwd_w) = pipe("pipe")?;
            let (rev_r, rev_w) = pipe("pipe")?;
            Wires {
                stimulus: Sender::Bytes(fwd_w.as_raw_fd()),
                answer_in: Receiver::Bytes(rev_r.as_raw_fd()),
                event_in: Receiver::Bytes(fwd_r.as_raw_fd()),
                answer: Sender::Bytes(rev_w.as_raw_fd()),
                stimulus_only: vec![fwd_w, rev_r],
                responder_only: vec![fwd_r, rev_w],
                shared: Vec::new(),
                signals: false,
            }
        }
        Channel::Eventfd => {
            let fwd = eventfd()?;
            let rev = eventfd()?;
            Wires {
                stimulus: Sender::Eventfd(fwd.as_raw_fd()),
                answer_in: Receiver::Eventfd(rev.as_raw_fd()),
                event_in: Receiver::Eventfd(fwd.as_raw_fd()),
                answer: Sender::Eventfd(rev.as_raw_fd()),
                stimulus_only: Vec::new(),
                responder_only: Vec::new(),
                shared: vec![fwd, rev],
                signals: false,
            }
        }
        Channel::Unix => {
            let (a, b) =
                std::os::unix::net::UnixStream::pair().map_err(|source| RespondError::Channel {
                    channel: "unix",
                    step: "socketpair",
                    error: source,
                })?;
            let (a, b): (OwnedFd, OwnedFd) = (a.into(), b.into());
            Wires::both_ways(a, b)
        }
        Channel::Udp => {
            let err = |step| {
                move |source| RespondError::Channel {
                    channel: "udp",
                    step,
                    error: source,
                }
            };
            let a = std::net::UdpSocket::bind("127.0.0.1:0").map_err(err("bind 127.0.0.1"))?;
            let b = std::net::UdpSocket::bind("127.0.0.1:0").map_err(err("bind 127.0.0.1"))?;
            a.connect(b.local_addr().map_err(err("getsockname"))?)
                .map_err(err("connect"))?;
            b.connect(a.local_addr().map_err(err("getsockname"))?)
                .map_err(err("connect"))?;
            let (a, b) = (
                // SAFETY: into_raw_fd hands over ownership.
                unsafe { OwnedFd::from_raw_fd(a.into_raw_fd()) },
                unsafe { OwnedFd::from_raw_fd(b.into_raw_fd()) },
            );
            Wires::both_ways(a, b)
        }
        Channel::Signal => Wires {
            stimulus: Sender::Signal {
                pid: 0,
                tid: 0,
                sig: STIMULUS_SIGNAL,
            },
            answer_in: Receiver::Signal(ANSWER_SIGNAL),
            event_in: Receiver::Signal(STIMULUS_SIGNAL),
            answer: Sender::Signal {
                pid: 0,
                tid: 0,
                sig: ANSWER_SIGNAL,
            },
            stimulus_only: Vec::new(),
            responder_only: Vec::new(),
            shared: Vec::new(),
            signals: true,
        },
        Channel::Serial { tx, rx, baud } => {
            if tx == rx && gpio.is_none() {
                return Err(RespondError::Wiring(format!(
                    "--serial {} alone cannot carry the answer: with a loopback plug add \
                     --gpio OUT,IN for the responder's toggle (the paper's wiring), or give two \
                     ports joined by a null-modem cable: --serial {},/dev/ttyS1",
                    tx.display(),
                    tx.display()
                )));
            }
            let tx_fd = open_serial(tx, *baud)?;
            if tx == rx {
                Wires {
                    stimulus: Sender::Bytes(tx_fd.as_raw_fd()),
                    answer_in: Receiver::Bytes(tx_fd.as_raw_fd()),
                    event_in: Receiver::Bytes(tx_fd.as_raw_fd()),
                    answer: Sender::Bytes(tx_fd.as_raw_fd()),
                    stimulus_only: Vec::new(),
                    responder_only: Vec::new(),
                    shared: vec![tx_fd],
                    signals: false,
                }
            } else {
                let rx_fd = open_serial(rx, *baud)?;
                Wires::both_ways(tx_fd, rx_fd)
            }
        }
    };
    if let Some(wiring) = gpio {
        let lines = gpio::open(wiring)?;
        wires.answer = Sender::Gpio(lines.output.as_raw_fd());
        wires.answer_in = Receiver::GpioEdge(lines.input.as_raw_fd());
        wires.responder_only.push(lines.output);
        wires.stimulus_only.push(lines.input);
    }
    Ok(wires)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_serial_device_says_so_and_names_the_emulation() {
        let wiring: GpioWiring = "gpiochip0:1,gpiochip0:2".parse().unwrap();
        let channel = Channel::Serial {
            tx: "/dev/ttyLATLABNONE".into(),
            rx: "/dev/ttyLATLABNONE".into(),
            baud: 115200,
        };
        let err = build(&channel, Some(&wiring)).err().unwrap().to_string();
        assert!(
            err.contains("cannot open serial device /dev/ttyLATLABNONE"),
            "{err}"
        );
        assert!(err.contains("--channel pty"), "{err}");
    }

    #[test]
    fn a_file_that_is_no_terminal_is_refused() {
        let err = open_serial(Path::new("/dev/null"), 115200)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not a serial (terminal) device"), "{err}");
    }

    #[test]
    fn one_loopback_port_without_gpio_is_refused_before_opening() {
        let channel = Channel::Serial {
            tx: "/dev/ttyS0".into(),
            rx: "/dev/ttyS0".into(),
            baud: 115200,
        };
        let err = build(&channel, None).err().unwrap().to_string();
        assert!(err.contains("null-modem"), "{err}");
    }

    #[test]
    fn a_pty_carries_a_byte_each_way_in_raw_mode() {
        let wires = build(&Channel::Pty, None).unwrap();
        wires.stimulus.send(false).unwrap();
        assert_eq!(
            wires.event_in.wait(Some(1_000_000_000)),
            Ok(Waited::Event(None))
        );
        wires.answer.send(false).unwrap();
        assert_eq!(
            wires.answer_in.wait(Some(1_000_000_000)),
            Ok(Waited::Event(None))
        );
        assert_eq!(wires.answer_in.wait(Some(1_000_000)), Ok(Waited::Timeout));
    }
}
