use std::path::PathBuf;

/// Errors of the measurement engine; each names the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MeasureError {
    /// The real-time environment refused something (policy, affinity, mlock).
    #[error(transparent)]
    Rt(#[from] latlab_rt::RtError),
    /// A timer source could not be set up or failed while waiting.
    #[error("{timer} timer on CPU {cpu}: {what}: {source}")]
    Timer {
        /// Timer name.
        timer: &'static str,
        /// CPU of the measurement thread.
        cpu: usize,
        /// The step that failed.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// No RTC device exists.
    #[error(
        "{path}: no RTC device on this machine ({source}); the rtc timer needs a real-time \
         clock with periodic interrupts (rtc-cmos on PCs, the SoC RTC on boards); \
         use another --timer, e.g. clock-nanosleep, or pass --rtc-device PATH"
    )]
    NoRtc {
        /// The device path tried.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The configuration cannot be measured as asked.
    #[error("{0}")]
    Config(String),
    /// The monitor stopped the measurement (e.g. a background load died).
    #[error("{0}")]
    Monitor(String),
    /// Writing the sample log failed.
    #[error("writing samples to {path}: {source}")]
    SampleLog {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}
