//! How latlab writes a quantity, the same way in every format (the terminal
//! text, the HTML report, JUnit and LAVA): one function per quantity.
//!
//! ```
//! use latlab_report::units::{rate, us};
//! assert_eq!(us(12_345), "12.3");
//! assert_eq!(rate(1.024e9, "bytes"), "1.02 GB/s");
//! ```

use latlab_document::comparable::Figure;
pub use latlab_measure::units::format_ns;

/// Nanoseconds as microseconds, a number (plot coordinates, the figure of a
/// JUnit or LAVA case).
pub fn micros(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// Nanoseconds as microseconds with one decimal and no unit (`12.3`), for
/// columns and lines that say "us" once.
pub fn us(ns: u64) -> String {
    us_f64(ns as f64)
}

/// A mean or a deviation in nanoseconds, written as [`us`] writes a whole
/// number of them (`12.3`).
pub fn us_f64(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

/// Nanoseconds as whole microseconds with the unit (`61 µs`), as the
/// delayed-locking paper's tables give them.
pub fn whole_us(ns: f64) -> String {
    format!("{:.0} µs", ns / 1e3)
}

/// A wall-clock length as `hh:mm:ss` (whole seconds).
pub fn hms(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

pub use latlab_load::{amount, short_number};

/// A rate with an SI prefix and three significant digits: `1.02 GB/s`,
/// `210 Mops/s`, `54.1 kpages/s` (latlab-load's, the one formula); a
/// command's `CPUs busy` as [`cpus_busy`].
pub fn rate(per_second: f64, unit: &str) -> String {
    if unit == "CPUs busy" {
        return cpus_busy(per_second);
    }
    latlab_load::rate(per_second, unit)
}

/// How many CPUs a command kept busy on average: `1.97 CPUs busy`.
pub fn cpus_busy(cpus: f64) -> String {
    format!("{cpus:.2} CPUs busy")
}

/// Transfer time per KiB in microseconds, three decimals (`1.820`).
pub fn us_per_kib(us: f64) -> String {
    format!("{us:.3}")
}

/// How a figure a file does not give is written.
pub const UNKNOWN: &str = "unknown";

/// A latency figure that may not be known exactly: the value (`3.42 ms`),
/// `≥ X` for one among a peer histogram's overflows, `past the histogram`,
/// or [`UNKNOWN`].
pub fn figure(figure: Figure) -> String {
    match figure {
        Figure::Known(ns) => format_ns(ns),
        Figure::Overflow(Some(from)) => format!("≥ {}", format_ns(from)),
        Figure::Overflow(None) => "past the histogram".into(),
        Figure::Unknown => UNKNOWN.into(),
    }
}

/// A mean latency in nanoseconds (`21.0 us`), or [`UNKNOWN`].
pub fn mean_or_unknown(ns: Option<f64>) -> String {
    ns.map_or_else(|| UNKNOWN.into(), |v| format_ns(v.round() as u64))
}

/// A count, or [`UNKNOWN`].
pub fn count_or_unknown(value: Option<u64>) -> String {
    value.map_or_else(|| UNKNOWN.into(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_keep_three_significant_digits_with_an_si_prefix() {
        assert_eq!(rate(1.024e9, "bytes"), "1.02 GB/s");
        assert_eq!(rate(285e6, "bytes"), "285 MB/s");
        assert_eq!(rate(562.5e6, "bytes"), "562 MB/s");
        assert_eq!(rate(1.5e9, "ops"), "1.5 Gops/s");
        assert_eq!(rate(54_127.0, "pages"), "54.1 kpages/s");
        assert_eq!(rate(12.0, "ops"), "12 ops/s");
        assert_eq!(rate(1.966, "CPUs busy"), "1.97 CPUs busy");
        assert_eq!(amount(2.048e9, "bytes"), "2.05 GB");
        assert_eq!(amount(3e9, "ops"), "3 Gops");
    }

    #[test]
    fn latencies_are_microseconds_with_one_decimal() {
        assert_eq!(us(12_345), "12.3");
        assert_eq!(us(0), "0.0");
        assert_eq!(us_f64(21_049.6), "21.0");
        assert_eq!(micros(1_500), 1.5);
        assert_eq!(hms(3_723_000_000_000), "01:02:03");
    }
}
