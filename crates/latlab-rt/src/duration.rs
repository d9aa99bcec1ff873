//! Durations as people write them on a command line: `30s`, `1ms`, `40us`,
//! `40µs`, `500ns`, `2m`, `1h`, or a plain number of seconds.

use std::time::Duration;

/// Parses a duration such as `30s`, `1ms`, `40us`, `40µs`, `500ns`, `2m`, `1h`
/// or a plain number of seconds. Returns nanoseconds (zero allowed).
pub fn parse_ns(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration {text:?} (expected e.g. 30s, 1ms, 40us)"))?;
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (use ns, us, ms, s, m or h)"
            ))
        }
    };
    let ns = value * scale;
    if !ns.is_finite() || ns > u64::MAX as f64 {
        return Err(format!("duration {text:?} is too large"));
    }
    Ok(ns.round() as u64)
}

/// Parses a duration like [`parse_ns`] that must be longer than zero.
pub fn parse_positive(text: &str) -> Result<Duration, String> {
    match parse_ns(text)? {
        0 => Err(format!("{:?} must be a positive duration", text.trim())),
        ns => Ok(Duration::from_nanos(ns)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_ns("30s"), Ok(30_000_000_000));
        assert_eq!(parse_ns("1ms"), Ok(1_000_000));
        assert_eq!(parse_ns("40us"), Ok(40_000));
        assert_eq!(parse_ns("40µs"), Ok(40_000));
        assert_eq!(parse_ns("2.5ms"), Ok(2_500_000));
        assert_eq!(parse_ns("10"), Ok(10_000_000_000));
        assert_eq!(parse_ns("2m"), Ok(120_000_000_000));
        assert_eq!(parse_ns("2min"), Ok(120_000_000_000));
        assert_eq!(parse_ns("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_ns(" 500ns "), Ok(500));
        assert_eq!(parse_ns("0"), Ok(0));
        assert!(parse_ns("ten").is_err());
        assert!(parse_ns("s").is_err());
        assert!(parse_ns("-1s").is_err());
        assert!(parse_ns("5 parsecs").unwrap_err().contains("unknown unit"));
        assert!(parse_ns("1000000000000h")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn positive_durations_refuse_zero() {
        assert_eq!(parse_positive("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_positive("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_positive("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_positive("0s").unwrap_err().contains("positive"));
        assert!(parse_positive("10x").is_err());
    }
}
