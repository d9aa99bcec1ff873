//! Durations as people write them on a command line: `40us`, `40µs`, `1ms`,
//! `2.5ms`, `500ns`, `30s`, `2m`, `1h`: the one parser behind every
//! duration-like option of every command (latencies, thresholds,
//! percentile limits, periods, intervals, gaps, timeouts, run lengths).
//!
//! The rule, the same everywhere: **a duration takes a unit** (ns, us or µs,
//! ms, s, m or min, h). A bare number is an error that names the units and
//! the two readings the number most likely had, because latlab's commands
//! once read it as seconds in some places and as microseconds in others (as
//! cyclictest and rtla do): `--max-latency 40` passed every run as 40 s.
//! A bare `0` is zero, where zero is allowed.
//!
//! ```
//! use latlab_rt::duration;
//!
//! assert_eq!(duration::latency("40us"), Ok(40_000));
//! assert_eq!(duration::length_ns("2m"), Ok(120_000_000_000));
//! let err = duration::latency("40").unwrap_err();
//! assert_eq!(err, "give a unit: 40us or 40ms (units: ns, us, ms, s, m, h)");
//! ```

use std::time::Duration;

/// The units a duration may take, as the errors list them.
pub const UNITS: &str = "ns, us, ms, s, m, h";

/// What a bare number most likely meant, for the error that refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// A latency, threshold, period or gap: `40` is `40us` (cyclictest's
    /// and rtla's unit) or `40ms`.
    Short,
    /// How long something runs or waits: `30` is `30s` or `30m`.
    Long,
}

impl Reading {
    /// The two units a bare number of this kind was most likely meant in.
    fn units(self) -> (&'static str, &'static str) {
        match self {
            Reading::Short => ("us", "ms"),
            Reading::Long => ("s", "m"),
        }
    }
}

/// Parses a duration with a unit into nanoseconds (zero allowed, as `0`
/// alone or with a unit). A number without a unit is an error naming the
/// units and the two likely readings (`reading`).
pub fn parse(text: &str, reading: Reading) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        format!("{text:?} is not a duration; write e.g. 40us, 1ms or 30s (units: {UNITS})")
    })?;
    let scale = match unit.trim() {
        "" if value == 0.0 => 0.0,
        "" => {
            let (a, b) = reading.units();
            return Err(format!(
                "give a unit: {number}{a} or {number}{b} (units: {UNITS})"
            ));
        }
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (units: {UNITS})"
            ))
        }
    };
    let ns = value * scale;
    if !ns.is_finite() || ns > u64::MAX as f64 {
        return Err(format!("duration {text:?} is too large"));
    }
    Ok(ns.round() as u64)
}

/// [`parse`], refusing zero.
fn positive(text: &str, reading: Reading) -> Result<u64, String> {
    match parse(text, reading)? {
        0 => Err(format!(
            "{:?} must be longer than zero (e.g. {})",
            text.trim(),
            match reading {
                Reading::Short => "1ms",
                Reading::Long => "30s",
            }
        )),
        ns => Ok(ns),
    }
}

/// A latency, threshold or short span such as `40us` or `1ms`, zero
/// allowed, in nanoseconds (a value parser for options).
pub fn latency(text: &str) -> Result<u64, String> {
    parse(text, Reading::Short)
}

/// A period or gap such as `1ms` or `100us`, longer than zero, in
/// nanoseconds (a value parser for options).
pub fn period(text: &str) -> Result<u64, String> {
    positive(text, Reading::Short)
}

/// How long something runs or waits, such as `30s` or `10m`, longer than
/// zero (a value parser for options).
pub fn length(text: &str) -> Result<Duration, String> {
    positive(text, Reading::Long).map(Duration::from_nanos)
}

/// [`length`] in nanoseconds.
pub fn length_ns(text: &str) -> Result<u64, String> {
    positive(text, Reading::Long)
}

/// How long something runs or waits, zero allowed (e.g. a warm-up), in
/// nanoseconds.
pub fn length_or_zero_ns(text: &str) -> Result<u64, String> {
    parse(text, Reading::Long)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_with_units_parse() {
        let short = |t| parse(t, Reading::Short);
        assert_eq!(short("30s"), Ok(30_000_000_000));
        assert_eq!(short("1ms"), Ok(1_000_000));
        assert_eq!(short("40us"), Ok(40_000));
        assert_eq!(short("40µs"), Ok(40_000));
        assert_eq!(short("2.5ms"), Ok(2_500_000));
        assert_eq!(short("2m"), Ok(120_000_000_000));
        assert_eq!(short("2min"), Ok(120_000_000_000));
        assert_eq!(short("1h"), Ok(3_600_000_000_000));
        assert_eq!(short(" 500ns "), Ok(500));
        assert_eq!(short("0"), Ok(0));
        assert_eq!(short("0us"), Ok(0));
        assert_eq!(short("0.0"), Ok(0));
        assert!(short("ten").unwrap_err().contains("not a duration"));
        assert!(short("s").is_err());
        assert!(short("-1s").is_err());
        assert!(short("5 parsecs").unwrap_err().contains("unknown unit"));
        assert!(short("1000000000000h").unwrap_err().contains("too large"));
    }

    #[test]
    fn a_bare_number_is_refused_with_the_units_and_its_two_readings() {
        assert_eq!(
            latency("40"),
            Err("give a unit: 40us or 40ms (units: ns, us, ms, s, m, h)".into())
        );
        assert_eq!(
            period("1000"),
            Err("give a unit: 1000us or 1000ms (units: ns, us, ms, s, m, h)".into())
        );
        assert_eq!(
            length("30"),
            Err("give a unit: 30s or 30m (units: ns, us, ms, s, m, h)".into())
        );
        assert_eq!(
            length_ns("1.5"),
            Err("give a unit: 1.5s or 1.5m (units: ns, us, ms, s, m, h)".into())
        );
        assert!(length_or_zero_ns("2").unwrap_err().contains("give a unit"));
    }

    #[test]
    fn zero_is_refused_where_it_makes_no_sense() {
        assert_eq!(latency("0"), Ok(0));
        assert_eq!(length_or_zero_ns("0"), Ok(0));
        assert!(period("0").unwrap_err().contains("longer than zero"));
        assert!(period("0us").unwrap_err().contains("longer than zero"));
        assert!(length("0s").unwrap_err().contains("longer than zero"));
        assert_eq!(length("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(length("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(length_ns("1h"), Ok(3_600_000_000_000));
        assert_eq!(period("100us"), Ok(100_000));
    }
}
