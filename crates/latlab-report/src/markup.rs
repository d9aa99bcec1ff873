//! Text for XML and HTML: the one escaper of every markup latlab writes
//! (the HTML report and its SVG plots, JUnit XML, the board's pages).

/// `text` escaped for XML and HTML text and attribute values: `&`, `<`,
/// `>`, `"` and `'` as references (`'` as `&#39;`, which both XML and HTML
/// know); characters XML 1.0 cannot hold at all (C0 controls but tab and
/// line ends, U+FFFE, U+FFFF) become U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_control_characters() {
        assert_eq!(
            escape("<a href=\"x\">&'\u{1}\t\n"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\u{fffd}\t\n"
        );
    }
}
