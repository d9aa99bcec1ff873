//! The lexer of a `print fmt`: the C tokens of the format string and its
//! argument expressions.

use crate::symbols::unescape_c;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Str(Vec<u8>),
    Num(u64),
    Ident(String),
    Punct(&'static str),
}

pub(super) const PUNCTS: [&str; 30] = [
    "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "[", "]", "{", "}", ",", "?",
    ":", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "<", ">",
];

pub(super) fn lex(s: &[u8]) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'"' {
                if s[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            if j >= s.len() {
                return Err("unterminated string".into());
            }
            let v = unescape_c(&s[i + 1..j]);
            // Adjacent literals concatenate.
            if let Some(Tok::Str(prev)) = out.last_mut() {
                prev.extend_from_slice(&v);
            } else {
                out.push(Tok::Str(v));
            }
            i = j + 1;
        } else if c == b'\'' {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'\'' {
                if s[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            let v = unescape_c(s.get(i + 1..j).unwrap_or(b""));
            out.push(Tok::Num(v.first().copied().unwrap_or(0) as u64));
            i = j + 1;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while j < s.len() && (s[j].is_ascii_alphanumeric() || s[j] == b'.') {
                j += 1;
            }
            let t = std::str::from_utf8(&s[i..j]).unwrap_or("0");
            let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
            let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                u64::from_str_radix(h, 16)
            } else if t.len() > 1 && t.starts_with('0') {
                u64::from_str_radix(&t[1..], 8)
            } else {
                t.parse::<u64>()
            }
            .map_err(|_| format!("bad number {t:?}"))?;
            out.push(Tok::Num(v));
            i = j;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = i;
            while j < s.len() && (s[j].is_ascii_alphanumeric() || s[j] == b'_') {
                j += 1;
            }
            out.push(Tok::Ident(String::from_utf8_lossy(&s[i..j]).into_owned()));
            i = j;
        } else {
            let rest = &s[i..];
            match PUNCTS.iter().find(|p| rest.starts_with(p.as_bytes())) {
                Some(p) => {
                    out.push(Tok::Punct(p));
                    i += p.len();
                }
                None => {
                    if c == b'.' {
                        out.push(Tok::Punct("->"));
                        i += 1;
                    } else {
                        return Err(format!("unexpected character {:?}", c as char));
                    }
                }
            }
        }
    }
    Ok(out)
}
