//! Kernel symbol table (`/proc/kallsyms`) and `trace_printk` formats.

use std::collections::HashMap;

/// Addresses to function names, from the text of `/proc/kallsyms`.
///
/// The text is kept and parsed on the first lookup, so readers that never
/// print a symbol (`latlab dump --stats`) do not pay for 5 MB of symbols.
#[derive(Debug, Clone, Default)]
pub struct Kallsyms {
    raw: Vec<u8>,
    table: std::sync::OnceLock<SymTable>,
}

#[derive(Debug, Clone, Default)]
struct SymTable {
    addrs: Vec<u64>,
    names: Vec<String>,
}

impl Kallsyms {
    /// Keeps `ADDR TYPE NAME [MODULE]` lines for lookup (malformed lines are skipped).
    pub fn parse(text: &[u8]) -> Self {
        Kallsyms {
            raw: text.to_vec(),
            table: std::sync::OnceLock::new(),
        }
    }

    fn table(&self) -> &SymTable {
        self.table.get_or_init(|| SymTable::parse(&self.raw))
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.table().addrs.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.table().addrs.is_empty()
    }

    /// The function containing `addr` and its start address. Like trace-cmd, an
    /// address past the last symbol matches only that symbol's exact address.
    pub fn lookup(&self, addr: u64) -> Option<(&str, u64)> {
        self.table().lookup(addr)
    }
}

impl SymTable {
    fn parse(text: &[u8]) -> Self {
        let mut pairs: Vec<(u64, String)> = Vec::new();
        for line in text.split(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(line);
            let mut it = line.split_whitespace();
            let (Some(addr), Some(_ty), Some(name)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            pairs.push((addr, name.to_string()));
        }
        pairs.sort_by_key(|p| p.0);
        let (addrs, names) = pairs.into_iter().unzip();
        SymTable { addrs, names }
    }

    fn lookup(&self, addr: u64) -> Option<(&str, u64)> {
        let i = match self.addrs.binary_search(&addr) {
            Ok(mut i) => {
                while i + 1 < self.addrs.len() && self.addrs[i + 1] == addr {
                    i += 1;
                }
                return Some((&self.names[i], addr));
            }
            Err(0) => return None,
            Err(i) => i - 1,
        };
        if i + 1 >= self.addrs.len() {
            return None;
        }
        Some((&self.names[i], self.addrs[i]))
    }
}

/// `trace_printk` format strings by address, from `printk_formats`.
#[derive(Debug, Clone, Default)]
pub struct PrintkFormats {
    map: HashMap<u64, Vec<u8>>,
}

impl PrintkFormats {
    /// Parses `0xADDR : "format"` lines (C escapes in the format are decoded).
    pub fn parse(text: &[u8]) -> Self {
        let mut map = HashMap::new();
        for line in text.split(|&b| b == b'\n') {
            let Some(colon) = line.windows(3).position(|w| w == b" : ") else {
                continue;
            };
            let addr = String::from_utf8_lossy(&line[..colon]);
            let addr = addr.trim().trim_start_matches("0x");
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            let mut fmt = &line[colon + 3..];
            if fmt.first() == Some(&b'"') {
                fmt = &fmt[1..];
            }
            if fmt.last() == Some(&b'"') {
                fmt = &fmt[..fmt.len() - 1];
            }
            map.insert(addr, unescape_c(fmt));
        }
        PrintkFormats { map }
    }

    /// The format string stored at `addr`.
    pub fn get(&self, addr: u64) -> Option<&[u8]> {
        self.map.get(&addr).map(|v| v.as_slice())
    }
}

/// Decodes C string escapes (`\n`, `\t`, `\\`, `\"`, octal).
pub fn unescape_c(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\' && i + 1 < s.len() {
            i += 1;
            match s[i] {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'a' => out.push(7),
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'v' => out.push(11),
                b'0'..=b'7' => {
                    let mut v = 0u32;
                    let mut n = 0;
                    while n < 3 && i < s.len() && (b'0'..=b'7').contains(&s[i]) {
                        v = v * 8 + (s[i] - b'0') as u32;
                        i += 1;
                        n += 1;
                    }
                    out.push(v as u8);
                    continue;
                }
                c => out.push(c),
            }
            i += 1;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kallsyms_lookup_matches_trace_cmd_rules() {
        let k = Kallsyms::parse(b"ffff0010 T b\nffff0000 t a\nffff0020 T c [mod]\nbad line\n");
        assert_eq!(k.len(), 3);
        assert_eq!(k.lookup(0xffff0000), Some(("a", 0xffff0000)));
        assert_eq!(k.lookup(0xffff0005), Some(("a", 0xffff0000)));
        assert_eq!(k.lookup(0xffff0010), Some(("b", 0xffff0010)));
        assert_eq!(k.lookup(0xffff0020), Some(("c", 0xffff0020)));
        assert_eq!(k.lookup(0xffff0021), None);
        assert_eq!(k.lookup(0x10), None);
    }

    #[test]
    fn printk_formats_are_unescaped() {
        let p = PrintkFormats::parse(b"0xffffffc0008f3da0 : \"a=%d\\n\"\n0x10 : \"x\\ty\"\n");
        assert_eq!(p.get(0xffffffc0008f3da0), Some(&b"a=%d\n"[..]));
        assert_eq!(p.get(0x10), Some(&b"x\ty"[..]));
        assert_eq!(p.get(0x11), None);
    }
}
