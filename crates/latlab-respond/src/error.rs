use std::path::PathBuf;

/// Errors of a response-latency measurement; each names the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RespondError {
    /// Creating an emulated channel failed.
    #[error("cannot create the {channel} channel ({step}): {error}")]
    Channel {
        /// The channel.
        channel: &'static str,
        /// What was being done.
        step: &'static str,
        /// The OS error.
        error: std::io::Error,
    },
    /// The serial device does not exist or cannot be opened.
    #[error(
        "cannot open serial device {path}: {error}; {hint} \
         (serial ports are /dev/ttyS*, /dev/ttyUSB*, /dev/ttyAMA*; \
         without serial hardware use an emulated channel such as --channel pty)"
    )]
    SerialOpen {
        /// The device.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
        /// What this machine has.
        hint: String,
    },
    /// The path is not a terminal (serial) device.
    #[error(
        "{path} is not a serial (terminal) device: give a port such as /dev/ttyS0 or /dev/ttyUSB0"
    )]
    NotATerminal {
        /// The path.
        path: PathBuf,
    },
    /// Configuring a terminal (raw mode, speed) failed.
    #[error("cannot configure {path} as a raw {baud} baud line: {error}")]
    SerialConfig {
        /// The device.
        path: PathBuf,
        /// Requested speed.
        baud: u32,
        /// The OS error.
        error: std::io::Error,
    },
    /// A `--serial` or `--gpio` wiring that cannot work.
    #[error("{0}")]
    Wiring(String),
    /// A `--gpio` line could not be parsed.
    #[error("invalid GPIO line {text:?}: {reason} (expected CHIP:LINE such as gpiochip0:17)")]
    GpioSpec {
        /// The text given.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// The GPIO chip does not exist or cannot be opened.
    #[error(
        "cannot open GPIO chip {path}: {error}; {hint} \
         (GPIO character devices are /dev/gpiochipN; without GPIO hardware leave --gpio out \
         and the responder answers on the emulated channel)"
    )]
    GpioOpen {
        /// The chip device.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
        /// What this machine has.
        hint: String,
    },
    /// Requesting or driving a GPIO line failed.
    #[error("GPIO line {line} of {path}: {step} failed: {error}")]
    GpioLine {
        /// The chip device.
        path: PathBuf,
        /// The line offset.
        line: u32,
        /// What was being done.
        step: &'static str,
        /// The OS error.
        error: std::io::Error,
    },
    /// The responder process could not be started or failed while setting up.
    #[error("responder on CPU {cpu}: {step} failed: {error}{hint}")]
    Responder {
        /// The responder's CPU.
        cpu: usize,
        /// What it was doing.
        step: &'static str,
        /// The OS error.
        error: std::io::Error,
        /// How to fix it.
        hint: &'static str,
    },
    /// The responder died during the measurement.
    #[error(
        "the responder process (pid {pid}) ended unexpectedly ({status}) after {events} events"
    )]
    ResponderDied {
        /// Its process id.
        pid: i32,
        /// Exit status in words.
        status: String,
        /// Events answered before.
        events: u64,
    },
    /// Sending the stimulus or reading the answer failed.
    #[error("stimulus on CPU {cpu}: {step} failed after {events} events: {error}")]
    Stimulus {
        /// The stimulus CPU.
        cpu: usize,
        /// What was being done.
        step: &'static str,
        /// Events sent before.
        events: u64,
        /// The OS error.
        error: std::io::Error,
    },
    /// A gap so long that the run ends before its second event.
    #[error(
        "--gap {gap} is longer than --duration {}: the run would end before its second event; \
         shorten the gap or lengthen the duration",
        latlab_measure::units::format_ns(*duration_ns)
    )]
    GapOverDuration {
        /// The gap between events.
        gap: crate::measure::Gap,
        /// The run's length, ns.
        duration_ns: u64,
    },
    /// The scheduling environment (affinity, policy) could not be applied.
    #[error(transparent)]
    Rt(#[from] latlab_rt::RtError),
    /// The observer (progress, load) asked to stop with an error.
    #[error("{0}")]
    Observer(String),
}
