//! Kernel symbol table (`/proc/kallsyms`) and `trace_printk` formats.

use std::collections::HashMap;

/// Addresses to function names, from the text of `/proc/kallsyms`.
///
/// The text is kept and parsed on the first lookup, so readers that never
/// print a symbol (`latlab dump --stats`) do not pay for 5 MB of symbols.
#[derive(Debug, Clone, Default)]
pub struct Kallsyms {
    raw: Raw,
    table: std::sync::OnceLock<SymTable>,
}

/// Bytes shared with the file they were read from (the file's map).
pub(crate) type SharedBytes = std::sync::Arc<dyn AsRef<[u8]> + Send + Sync>;

/// The kallsyms text: a copy, or a range of the file's own bytes (no copy
/// of several MB for readers that never look a symbol up).
#[derive(Clone)]
enum Raw {
    Owned(Vec<u8>),
    Shared(SharedBytes, std::ops::Range<usize>),
    /// A compressed v7 section (`[u32 size][text]` once decompressed),
    /// decompressed on first use.
    Compressed(std::sync::Arc<Compressed>),
}

/// See [`Raw::Compressed`].
struct Compressed {
    bytes: SharedBytes,
    range: std::ops::Range<usize>,
    comp: crate::compress::Compression,
    size: usize,
    endian: crate::Endian,
    text: std::sync::OnceLock<Vec<u8>>,
}

impl Compressed {
    /// The kallsyms text; empty when the section does not decompress (the
    /// symbols then print as addresses, as for a file without kallsyms).
    fn text(&self) -> &[u8] {
        let body = self.text.get_or_init(|| {
            let data = &(*self.bytes).as_ref()[self.range.clone()];
            let mut out = Vec::new();
            if crate::compress::Decompressor::default()
                .decompress_into(self.comp, data, self.size, 0, &mut out)
                .is_err()
            {
                return Vec::new();
            }
            out
        });
        let Some(n) = body.get(..4).map(|b| self.endian.uint(b) as usize) else {
            return &[];
        };
        body.get(4..4 + n).unwrap_or(&body[4..])
    }
}

impl Default for Raw {
    fn default() -> Self {
        Raw::Owned(Vec::new())
    }
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes of kallsyms", self.bytes().len())
    }
}

impl Raw {
    fn bytes(&self) -> &[u8] {
        match self {
            Raw::Owned(v) => v,
            Raw::Shared(b, r) => &(**b).as_ref()[r.clone()],
            Raw::Compressed(c) => c.text(),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct SymTable {
    /// (address, name start, name length), sorted by address. A name lies in
    /// the kallsyms text itself, or (start with [`IN_EXTRA`] set) in `extra`.
    syms: Vec<(u64, u32, u32)>,
    /// The address of every [`BLOCK`]th symbol: a lookup searches this small
    /// array, then one block (two cache-friendly searches instead of one
    /// over megabytes).
    index: Vec<u64>,
    /// Names of lines that were not ASCII, as lossy UTF-8.
    extra: String,
}

/// Symbols per [`SymTable::index`] entry.
const BLOCK: usize = 32;

/// Flag on a name's start: the name is in [`SymTable::extra`].
const IN_EXTRA: u32 = 1 << 31;

impl Kallsyms {
    /// Keeps `ADDR TYPE NAME [MODULE]` lines for lookup (malformed lines are skipped).
    pub fn parse(text: &[u8]) -> Self {
        Kallsyms {
            raw: Raw::Owned(text.to_vec()),
            table: std::sync::OnceLock::new(),
        }
    }

    /// Kallsyms in a compressed section `bytes[range]` of `size` bytes once
    /// decompressed, decompressed on the first lookup.
    pub(crate) fn compressed(
        bytes: SharedBytes,
        range: std::ops::Range<usize>,
        comp: crate::compress::Compression,
        size: usize,
        endian: crate::Endian,
    ) -> Self {
        Kallsyms {
            raw: Raw::Compressed(std::sync::Arc::new(Compressed {
                bytes,
                range,
                comp,
                size,
                endian,
                text: std::sync::OnceLock::new(),
            })),
            table: std::sync::OnceLock::new(),
        }
    }

    /// Like [`Kallsyms::parse`] on `bytes[range]`, without copying them.
    pub(crate) fn shared(bytes: SharedBytes, range: std::ops::Range<usize>) -> Self {
        Kallsyms {
            raw: Raw::Shared(bytes, range),
            table: std::sync::OnceLock::new(),
        }
    }

    fn table(&self) -> &SymTable {
        self.table.get_or_init(|| SymTable::parse(self.raw.bytes()))
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.table().syms.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.table().syms.is_empty()
    }

    /// The function containing `addr` and its start address. Like trace-cmd, an
    /// address past the last symbol matches only that symbol's exact address.
    pub fn lookup(&self, addr: u64) -> Option<(&str, u64)> {
        self.table().lookup(self.raw.bytes(), addr)
    }
}

impl SymTable {
    fn parse(text: &[u8]) -> Self {
        // About 40 bytes a line in /proc/kallsyms; names are not copied.
        let mut syms: Vec<(u64, u32, u32)> = Vec::with_capacity(text.len() / 32);
        let mut extra = String::new();
        let ascii = text.is_ascii() && text.len() < IN_EXTRA as usize;
        let mut sorted = true;
        let mut last = 0u64;
        let n = text.len();
        let mut start = 0;
        // Lines as `split(b'\n')` gives them, the kernel's own layout read
        // without first looking for the line's end.
        while start <= n {
            if ascii {
                if let Some((addr, name_at, name_len, end)) = kernel_line(text, start) {
                    sorted &= addr >= last;
                    last = addr;
                    syms.push((addr, name_at as u32, name_len as u32));
                    start = end + 1;
                    continue;
                }
            }
            let end = memchr::memchr(b'\n', &text[start..]).map_or(n, |e| start + e);
            let line = &text[start..end];
            let line_at = start;
            start = end + 1;
            let (addr, name_start, name_len) = if ascii {
                // Without a UTF-8 pass: ASCII whitespace is all the
                // whitespace there is.
                let Some((addr, rest)) = token(line) else {
                    continue;
                };
                let Some((_ty, rest)) = token(rest) else {
                    continue;
                };
                let Some((name, _)) = token(rest) else {
                    continue;
                };
                let Some(addr) = parse_hex(addr) else {
                    continue;
                };
                let at = line_at + (name.as_ptr() as usize - line.as_ptr() as usize);
                (addr, at as u32, name.len() as u32)
            } else {
                let line = String::from_utf8_lossy(line);
                let mut it = line.split_whitespace();
                let (Some(addr), Some(_ty), Some(name)) = (it.next(), it.next(), it.next()) else {
                    continue;
                };
                let Ok(addr) = u64::from_str_radix(addr, 16) else {
                    continue;
                };
                let at = extra.len() as u32 | IN_EXTRA;
                extra.push_str(name);
                (addr, at, name.len() as u32)
            };
            sorted &= addr >= last;
            last = addr;
            syms.push((addr, name_start, name_len));
        }
        // Stable: of several symbols at one address the last listed wins.
        if !sorted {
            syms.sort_by_key(|p| p.0);
        }
        let index = syms.iter().step_by(BLOCK).map(|s| s.0).collect();
        SymTable { syms, index, extra }
    }

    fn name<'s>(&'s self, text: &'s [u8], i: usize) -> &'s str {
        let (_, start, len) = self.syms[i];
        if start & IN_EXTRA != 0 {
            let start = (start & !IN_EXTRA) as usize;
            return &self.extra[start..start + len as usize];
        }
        let b = &text[start as usize..start as usize + len as usize];
        std::str::from_utf8(b).unwrap_or("?")
    }

    fn lookup<'s>(&'s self, text: &'s [u8], addr: u64) -> Option<(&'s str, u64)> {
        let n = self.syms.len();
        // p: how many symbols are at or below `addr`.
        let q = self.index.partition_point(|&a| a <= addr);
        if q == 0 {
            return None;
        }
        let from = (q - 1) * BLOCK;
        let to = (q * BLOCK).min(n);
        let p = from + self.syms[from..to].partition_point(|s| s.0 <= addr);
        let i = p - 1;
        // The last of several symbols at one address; an address past the
        // last symbol matches only that symbol's exact address.
        if self.syms[i].0 == addr {
            return Some((self.name(text, i), addr));
        }
        if i + 1 >= n {
            return None;
        }
        Some((self.name(text, i), self.syms[i].0))
    }
}

/// Hex digit values, 0xff for anything else.
const HEX_DIGIT: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// The line starting at `text[start]` when it is laid out as the kernel
/// prints it, `%016lx %c %s` (or `%08lx` on 32-bit machines), optionally
/// followed by whitespace and a module: (address, name offset, name
/// length, offset of the line's end). `None` for anything else (the
/// general tokenizer then reads the line the same way, only slower).
#[inline]
fn kernel_line(text: &[u8], start: usize) -> Option<(u64, usize, usize, usize)> {
    let line = &text[start..];
    let w = if line.get(16) == Some(&b' ') {
        16
    } else if line.get(8) == Some(&b' ') {
        8
    } else {
        return None;
    };
    // One type letter between single spaces, then the name.
    if line.len() <= w + 3 || line[w + 2] != b' ' || line[w + 1].is_ascii_whitespace() {
        return None;
    }
    let mut addr = 0u64;
    for &c in &line[..w] {
        let d = HEX_DIGIT[c as usize];
        if d == 0xff {
            return None;
        }
        addr = addr << 4 | d as u64;
    }
    let name = &line[w + 3..];
    if name[0].is_ascii_whitespace() {
        return None;
    }
    let len = name
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(name.len());
    let after = w + 3 + len;
    let end = match line.get(after) {
        None => text.len(),
        Some(b'\n') => start + after,
        Some(_) => memchr::memchr(b'\n', &line[after..]).map_or(text.len(), |e| start + after + e),
    };
    Some((addr, start + w + 3, len, end))
}

/// The first run of non-whitespace bytes in `s` and what follows it.
#[inline]
fn token(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let start = s.iter().position(|b| !b.is_ascii_whitespace())?;
    let s = &s[start..];
    let end = s
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(s.len());
    Some((&s[..end], &s[end..]))
}

/// `u64::from_str_radix(s, 16)` on ASCII bytes: an optional `+`, then hex
/// digits, no overflow.
fn parse_hex(s: &[u8]) -> Option<u64> {
    let digits = s.strip_prefix(b"+").unwrap_or(s);
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v.checked_mul(16)?.checked_add(d as u64)?;
    }
    Some(v)
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
    fn hex_like_from_str_radix() {
        for t in [
            "ffffffff81000000",
            "+1f",
            "0",
            "",
            "+",
            "-1",
            "x1",
            "1ffffffffffffffff",
            "FfA",
        ] {
            assert_eq!(
                parse_hex(t.as_bytes()),
                u64::from_str_radix(t, 16).ok(),
                "{t:?}"
            );
        }
    }

    #[test]
    fn kernel_lines_read_like_the_tokenizer() {
        for l in [
            "ffffffff81000000 T _text",
            "ffffffffc0a01000 t fn\t[mod]",
            "c0008000 T stext",
            "ffffffff81000000  T two_spaces",
            "ffffffff8100000g T bad_hex",
            "ffffffff81000000 T ",
            " ffffffff81000000 T lead",
            "ffffffff81000000 TT x",
        ] {
            let b = l.as_bytes();
            let slow = token(b).and_then(|(a, r)| {
                let (_, r) = token(r)?;
                let (n, _) = token(r)?;
                Some((parse_hex(a)?, n))
            });
            // A line kernel_line does not take, the tokenizer reads.
            if let Some((a, at, len, end)) = kernel_line(b, 0) {
                assert_eq!(Some((a, &b[at..at + len])), slow, "{l:?}");
                assert_eq!(end, b.len());
            }
        }
        assert!(kernel_line(b"ffffffff81000000 T _text", 0).is_some());
        assert!(kernel_line(b"c0008000 T stext", 0).is_some());
        let two = b"1 T x\nffffffff81000000 T a\tb\nc0008000 T s\n";
        assert_eq!(kernel_line(two, 6), Some((0xffffffff81000000, 25, 1, 28)));
        assert_eq!(kernel_line(two, 29), Some((0xc0008000, 40, 1, 41)));
        let k = Kallsyms::parse(two);
        assert_eq!(k.len(), 3);
        assert_eq!(
            k.lookup(0xffffffff81000000),
            Some(("a", 0xffffffff81000000))
        );
        assert_eq!(k.lookup(0xc0008001), Some(("s", 0xc0008000)));
        assert_eq!(k.lookup(1), Some(("x", 1)));
    }

    #[test]
    fn block_index_lookup_equals_a_plain_search() {
        // Many symbols with duplicates across block boundaries, unsorted input.
        let mut text = String::new();
        for i in (0..500u64).rev() {
            let a = 0x1000 + (i / 3) * 16;
            text.push_str(&format!("{a:016x} T s{i}\n"));
        }
        let k = Kallsyms::parse(text.as_bytes());
        let mut pairs: Vec<(u64, String)> = (0..500u64)
            .rev()
            .map(|i| (0x1000 + (i / 3) * 16, format!("s{i}")))
            .collect();
        pairs.sort_by_key(|p| p.0);
        let plain = |addr: u64| -> Option<(String, u64)> {
            let p = pairs.partition_point(|s| s.0 <= addr);
            let i = p.checked_sub(1)?;
            if pairs[i].0 == addr {
                return Some((pairs[i].1.clone(), addr));
            }
            (i + 1 < pairs.len()).then(|| (pairs[i].1.clone(), pairs[i].0))
        };
        for addr in (0xff0..0x1000 + 170 * 16 + 40).step_by(3) {
            assert_eq!(
                k.lookup(addr).map(|(n, a)| (n.to_string(), a)),
                plain(addr),
                "{addr:x}"
            );
        }
    }

    #[test]
    fn non_ascii_lines_and_duplicates() {
        let k = Kallsyms::parse("10 T a\n10 T b\n20 T \u{e9}t\u{e9}\n30 T z\n".as_bytes());
        assert_eq!(k.lookup(0x10), Some(("b", 0x10)));
        assert_eq!(k.lookup(0x25), Some(("\u{e9}t\u{e9}", 0x20)));
    }

    #[test]
    fn printk_formats_are_unescaped() {
        let p = PrintkFormats::parse(b"0xffffffc0008f3da0 : \"a=%d\\n\"\n0x10 : \"x\\ty\"\n");
        assert_eq!(p.get(0xffffffc0008f3da0), Some(&b"a=%d\n"[..]));
        assert_eq!(p.get(0x10), Some(&b"x\ty"[..]));
        assert_eq!(p.get(0x11), None);
    }
}
