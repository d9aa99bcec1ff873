//! Byte counts as the load options are given (`--load-disk-cap`,
//! `--net-msg-size`): a number with an optional binary suffix.

/// Parses a byte count with an optional binary suffix: `4096`, `64K`, `256M`, `1G`.
///
/// ```
/// assert_eq!(latlab_load::parse_size("256M"), Ok(256 << 20));
/// ```
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, factor) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let factor: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'B' => 1,
                _ => return Err(format!("unknown size suffix in {text:?}; use K, M or G")),
            };
            (&t[..i], factor)
        }
        _ => (t, 1),
    };
    number
        .trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .ok_or_else(|| format!("{text:?} is not a size; write e.g. 4096, 64K, 256M, 1G"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("12Q").is_err());
    }
}
