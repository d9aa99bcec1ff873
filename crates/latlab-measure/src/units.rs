//! Durations as latlab prints them, and percentages as people write them.
//! Durations as people write them (`1ms`, `40us`, `30s`: always with a unit)
//! have one parser, [`latlab_rt::duration`].

/// Parses a percentage such as `5%`, `0.05` or `5` (read as percent when > 1).
/// Returns a fraction.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let (number, percent) = match trimmed.strip_suffix('%') {
        Some(n) => (n, true),
        None => (trimmed, false),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("invalid percentage {text:?} (expected e.g. 5%)"))?;
    let fraction = if percent || value > 1.0 {
        value / 100.0
    } else {
        value
    };
    if !(0.0..=1.0).contains(&fraction) {
        return Err(format!("percentage {text:?} must be between 0 and 100 %"));
    }
    Ok(fraction)
}

/// Formats nanoseconds with a unit that keeps 3 significant digits: `850 ns`,
/// `42.1 us`, `3.42 ms`, `1.50 s`.
pub fn format_ns(ns: u64) -> String {
    let v = ns as f64;
    let (value, unit) = if ns < 1_000 {
        return format!("{ns} ns");
    } else if ns < 1_000_000 {
        (v / 1e3, "us")
    } else if ns < 1_000_000_000 {
        (v / 1e6, "ms")
    } else {
        (v / 1e9, "s")
    };
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_parse() {
        assert_eq!(parse_fraction("5%"), Ok(0.05));
        assert_eq!(parse_fraction("0.05"), Ok(0.05));
        assert_eq!(parse_fraction("5"), Ok(0.05));
        assert!(parse_fraction("150%").is_err());
    }

    #[test]
    fn formatting_keeps_three_digits() {
        assert_eq!(format_ns(850), "850 ns");
        assert_eq!(format_ns(42_123), "42.1 us");
        assert_eq!(format_ns(3_420_000), "3.42 ms");
        assert_eq!(format_ns(1_000_000), "1.00 ms");
        assert_eq!(format_ns(123_456_789), "123 ms");
        assert_eq!(format_ns(1_500_000_000), "1.50 s");
    }
}
