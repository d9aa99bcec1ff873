//! GPIO character device, uAPI v2 (`linux/gpio.h`): an output line the
//! responder toggles and an input line whose edges the stimulus reads with
//! the kernel's CLOCK_MONOTONIC timestamp (the measurement board's view).

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::RespondError;

/// One GPIO line: a chip device and a line offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpioLine {
    /// The chip's character device, e.g. `/dev/gpiochip0`.
    pub chip: PathBuf,
    /// Line offset on that chip.
    pub line: u32,
}

impl std::str::FromStr for GpioLine {
    type Err = RespondError;

    /// Parses `gpiochip0:17`, `/dev/gpiochip0:17` or `0:17`.
    fn from_str(text: &str) -> Result<Self, RespondError> {
        let bad = |reason: &str| RespondError::GpioSpec {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let (chip, line) = text.rsplit_once(':').ok_or_else(|| bad("no ':'"))?;
        let line: u32 = line
            .trim()
            .parse()
            .map_err(|_| bad("the line is not a number"))?;
        let chip = chip.trim();
        if chip.is_empty() {
            return Err(bad("no chip"));
        }
        let chip = if chip.starts_with('/') {
            PathBuf::from(chip)
        } else if chip.bytes().all(|b| b.is_ascii_digit()) {
            PathBuf::from(format!("/dev/gpiochip{chip}"))
        } else {
            Path::new("/dev").join(chip)
        };
        Ok(GpioLine { chip, line })
    }
}

impl std::fmt::Display for GpioLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.chip.display(), self.line)
    }
}

/// The reply wiring: the responder drives `output`, which is wired to `input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpioWiring {
    /// Line the responder toggles.
    pub output: GpioLine,
    /// Line, wired to `output`, whose edges the stimulus times.
    pub input: GpioLine,
}

impl std::str::FromStr for GpioWiring {
    type Err = RespondError;

    /// Parses `OUT,IN`, e.g. `gpiochip0:17,gpiochip0:27`.
    fn from_str(text: &str) -> Result<Self, RespondError> {
        let (out, input) = text.split_once(',').ok_or_else(|| {
            RespondError::Wiring(format!(
                "--gpio {text}: give two lines wired together, OUT,IN (e.g. \
                 gpiochip0:17,gpiochip0:27): the responder toggles OUT and the edge is \
                 timed on IN (a GPIO v2 line cannot be both driven and watched)"
            ))
        })?;
        Ok(GpioWiring {
            output: out.parse()?,
            input: input.parse()?,
        })
    }
}

const GPIO_V2_LINES_MAX: usize = 64;
const GPIO_MAX_NAME_SIZE: usize = 32;
const GPIO_V2_LINE_NUM_ATTRS_MAX: usize = 10;
const FLAG_INPUT: u64 = 1 << 2;
const FLAG_OUTPUT: u64 = 1 << 3;
const FLAG_EDGE_RISING: u64 = 1 << 4;
const FLAG_EDGE_FALLING: u64 = 1 << 5;
const ATTR_ID_OUTPUT_VALUES: u32 = 2;

#[repr(C)]
#[derive(Clone, Copy)]
struct LineAttribute {
    id: u32,
    padding: u32,
    /// flags, values or debounce period (a union in C; all fit a u64).
    value: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct LineConfigAttribute {
    attr: LineAttribute,
    mask: u64,
}

#[repr(C)]
struct LineConfig {
    flags: u64,
    num_attrs: u32,
    padding: [u32; 5],
    attrs: [LineConfigAttribute; GPIO_V2_LINE_NUM_ATTRS_MAX],
}

#[repr(C)]
struct LineRequest {
    offsets: [u32; GPIO_V2_LINES_MAX],
    consumer: [u8; GPIO_MAX_NAME_SIZE],
    config: LineConfig,
    num_lines: u32,
    event_buffer_size: u32,
    padding: [u32; 5],
    fd: i32,
}

/// `struct gpio_v2_line_values`.
#[repr(C)]
pub(crate) struct LineValues {
    pub(crate) bits: u64,
    pub(crate) mask: u64,
}

/// `struct gpio_v2_line_event`.
#[repr(C)]
#[derive(Default)]
pub(crate) struct LineEvent {
    pub(crate) timestamp_ns: u64,
    pub(crate) id: u32,
    pub(crate) offset: u32,
    pub(crate) seqno: u32,
    pub(crate) line_seqno: u32,
    pub(crate) padding: [u32; 6],
}

const _: () = assert!(std::mem::size_of::<LineAttribute>() == 16);
const _: () = assert!(std::mem::size_of::<LineConfig>() == 272);
const _: () = assert!(std::mem::size_of::<LineRequest>() == 592);
const _: () = assert!(std::mem::size_of::<LineEvent>() == 48);

const fn iowr(nr: u64, size: usize) -> u64 {
    (3 << 30) | ((size as u64) << 16) | (0xB4 << 8) | nr
}
const GPIO_V2_GET_LINE_IOCTL: u64 = iowr(0x07, std::mem::size_of::<LineRequest>());
/// `GPIO_V2_LINE_SET_VALUES_IOCTL`.
pub(crate) const GPIO_V2_LINE_SET_VALUES_IOCTL: u64 = iowr(0x0F, std::mem::size_of::<LineValues>());

const _: () = assert!(GPIO_V2_GET_LINE_IOCTL == 0xC250_B407);

/// What the machine has, for the error message.
fn chips_present() -> String {
    let mut chips: Vec<String> = std::fs::read_dir("/dev")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("gpiochip"))
                .collect()
        })
        .unwrap_or_default();
    chips.sort();
    if chips.is_empty() {
        "this machine has no GPIO character device (no /dev/gpiochip*)".to_string()
    } else {
        format!("GPIO chips here: {}", chips.join(", "))
    }
}

fn open_chip(path: &Path) -> Result<File, RespondError> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|source| RespondError::GpioOpen {
            path: path.to_path_buf(),
            error: source,
            hint: chips_present(),
        })
}

fn request(line: &GpioLine, flags: u64, output_low: bool) -> Result<OwnedFd, RespondError> {
    let chip = open_chip(&line.chip)?;
    // SAFETY: LineRequest is plain data; all-zero is a valid value.
    let mut req: LineRequest = unsafe { std::mem::zeroed() };
    req.offsets[0] = line.line;
    req.num_lines = 1;
    let consumer = b"latlab-respond";
    req.consumer[..consumer.len()].copy_from_slice(consumer);
    req.config.flags = flags;
    if output_low {
        req.config.num_attrs = 1;
        req.config.attrs[0] = LineConfigAttribute {
            attr: LineAttribute {
                id: ATTR_ID_OUTPUT_VALUES,
                padding: 0,
                value: 0,
            },
            mask: 1,
        };
    }
    req.event_buffer_size = 0;
    // SAFETY: the ioctl reads and writes a LineRequest of the size encoded in the request.
    let rc = unsafe {
        libc::ioctl(
            chip.as_raw_fd(),
            GPIO_V2_GET_LINE_IOCTL as _,
            &mut req as *mut LineRequest,
        )
    };
    if rc != 0 || req.fd < 0 {
        return Err(RespondError::GpioLine {
            path: line.chip.clone(),
            line: line.line,
            step: "requesting the line",
            error: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: the kernel returned a new file descriptor we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(req.fd) })
}

/// The requested lines: the responder's output, the stimulus's edge input.
pub(crate) struct GpioLines {
    pub(crate) output: OwnedFd,
    pub(crate) input: OwnedFd,
}

/// Requests both lines of a wiring (output driven low, input with both edges).
pub(crate) fn open(wiring: &GpioWiring) -> Result<GpioLines, RespondError> {
    let output = request(&wiring.output, FLAG_OUTPUT, true)?;
    let input = request(
        &wiring.input,
        FLAG_INPUT | FLAG_EDGE_RISING | FLAG_EDGE_FALLING,
        false,
    )?;
    Ok(GpioLines { output, input })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_spellings_resolve_to_the_chip_device() {
        let a: GpioLine = "gpiochip0:17".parse().unwrap();
        let b: GpioLine = "0:17".parse().unwrap();
        let c: GpioLine = "/dev/gpiochip0:17".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(a.line, 17);
        assert!("gpiochip0".parse::<GpioLine>().is_err());
        assert!("gpiochip0:x".parse::<GpioLine>().is_err());
    }

    #[test]
    fn one_line_is_refused_with_the_wiring_explained() {
        let err = "gpiochip0:17"
            .parse::<GpioWiring>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("OUT,IN"), "{err}");
    }

    #[test]
    fn missing_chip_says_so() {
        let wiring: GpioWiring = "gpiochip4242:1,gpiochip4242:2".parse().unwrap();
        let err = open(&wiring).err().unwrap().to_string();
        assert!(err.contains("/dev/gpiochip4242"), "{err}");
        assert!(err.contains("GPIO"), "{err}");
    }
}
