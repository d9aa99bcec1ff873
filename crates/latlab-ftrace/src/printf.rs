//! A C `printf` work-alike for kernel format strings (with `%ps`-style
//! symbol extensions), used for `print fmt` and `trace_printk` output.

use std::borrow::Cow;

use crate::symbols::Kallsyms;

/// Length modifier of a conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Len {
    None,
    HH,
    H,
    L,
    LL,
    Z,
}

/// Width or precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Num {
    None,
    Fixed(usize),
    Star,
}

/// One `%...` conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spec {
    pub minus: bool,
    pub plus: bool,
    pub space: bool,
    pub zero: bool,
    pub hash: bool,
    pub width: Num,
    pub prec: Num,
    pub len: Len,
    pub conv: u8,
    /// For `%p`: the extension letter(s) (`s`, `S`, `f`, `F`, `x`, `K`, ...).
    pub pext: Vec<u8>,
}

impl Spec {
    /// Bits of the C type this conversion reads.
    pub(crate) fn bits(&self, long_size: usize) -> u32 {
        match self.len {
            Len::None => 32,
            Len::HH => 8,
            Len::H => 16,
            Len::L | Len::Z => long_size as u32 * 8,
            Len::LL => 64,
        }
    }
}

/// A parsed format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Lit(Vec<u8>),
    Spec(Spec),
}

/// Splits a format string into literals and conversions.
pub(crate) fn parse_format(fmt: &[u8]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            lit.push(c);
            i += 1;
            continue;
        }
        if fmt.get(i + 1) == Some(&b'%') {
            lit.push(b'%');
            i += 2;
            continue;
        }
        let start = i;
        i += 1;
        let mut s = Spec {
            minus: false,
            plus: false,
            space: false,
            zero: false,
            hash: false,
            width: Num::None,
            prec: Num::None,
            len: Len::None,
            conv: 0,
            pext: Vec::new(),
        };
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => s.minus = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'0' => s.zero = true,
                b'#' => s.hash = true,
                _ => break,
            }
            i += 1;
        }
        let num = |i: &mut usize| -> Num {
            if fmt.get(*i) == Some(&b'*') {
                *i += 1;
                return Num::Star;
            }
            let st = *i;
            while fmt.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            if *i > st {
                Num::Fixed(
                    std::str::from_utf8(&fmt[st..*i])
                        .ok()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(0)
                        .min(4096),
                )
            } else {
                Num::None
            }
        };
        s.width = num(&mut i);
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            s.prec = match num(&mut i) {
                Num::None => Num::Fixed(0),
                n => n,
            };
        }
        loop {
            match fmt.get(i) {
                Some(b'h') => {
                    s.len = if s.len == Len::H { Len::HH } else { Len::H };
                }
                Some(b'l') => {
                    s.len = if s.len == Len::L { Len::LL } else { Len::L };
                }
                Some(b'L') | Some(b'q') | Some(b'j') => s.len = Len::LL,
                Some(b'z') | Some(b't') | Some(b'Z') => s.len = Len::Z,
                _ => break,
            }
            i += 1;
        }
        match fmt.get(i) {
            Some(&c @ (b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' | b's' | b'p')) => {
                s.conv = c;
                i += 1;
                if c == b'p' {
                    if let Some(&e) = fmt.get(i) {
                        if b"sSfFBbKxMmIiUhRraEegdDNtV".contains(&e) {
                            s.pext.push(e);
                            i += 1;
                            if matches!(e, b'I' | b'i' | b'M' | b'm' | b'U' | b'h' | b'B') {
                                while let Some(&n) = fmt.get(i) {
                                    if n.is_ascii_alphanumeric() && n != b' ' {
                                        s.pext.push(n);
                                        i += 1;
                                        if s.pext.len() > 4 {
                                            break;
                                        }
                                    } else {
                                        break;
                                    }
                                }
                            }
                        }
                    }
                }
                if !lit.is_empty() {
                    out.push(Piece::Lit(std::mem::take(&mut lit)));
                }
                out.push(Piece::Spec(s));
            }
            _ => {
                // Unknown conversion: keep it as text.
                let end = (i + 1).min(fmt.len());
                lit.extend_from_slice(&fmt[start..end]);
                i = end;
            }
        }
    }
    if !lit.is_empty() {
        out.push(Piece::Lit(lit));
    }
    out
}

/// A printf argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arg<'a> {
    /// A number (the raw 64 bits; conversions truncate or extend).
    Num(u64),
    /// A string.
    Str(Cow<'a, [u8]>),
}

impl Arg<'_> {
    pub(crate) fn num(&self) -> u64 {
        match self {
            Arg::Num(v) => *v,
            Arg::Str(s) => {
                let t = String::from_utf8_lossy(s);
                t.trim().parse::<i64>().map(|v| v as u64).unwrap_or(0)
            }
        }
    }
}

/// Where symbol names come from, and the traced machine's `long` size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub long_size: usize,
    pub kallsyms: &'a Kallsyms,
}

fn pad(out: &mut Vec<u8>, n: usize, c: u8) {
    if n > 0 {
        out.extend(std::iter::repeat_n(c, n));
    }
}

/// Two decimal digits for each value below 100.
pub(crate) static DEC2: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Appends the decimal digits of `v`, two at a time.
#[inline]
pub(crate) fn push_dec(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DEC2[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DEC2[d..d + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `0x` and the lowercase hex digits of `v`.
fn push_hex(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(b"0x");
    push_hex_digits(out, v);
}

/// Appends the lowercase hex digits of `v` (no prefix).
pub(crate) fn push_hex_digits(out: &mut Vec<u8>, v: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = HEX[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Pads what was written since `start` to `width` (left or right, as `spec` says).
fn pad_in_place(out: &mut Vec<u8>, start: usize, spec: &Spec, width: usize) {
    let len = out.len() - start;
    if len >= width {
        return;
    }
    let n = width - len;
    if spec.minus {
        pad(out, n, b' ');
    } else {
        out.splice(start..start, std::iter::repeat_n(b' ', n));
    }
}

fn write_padded(out: &mut Vec<u8>, body: &[u8], spec: &Spec, width: usize) {
    if body.len() >= width {
        out.extend_from_slice(body);
    } else if spec.minus {
        out.extend_from_slice(body);
        pad(out, width - body.len(), b' ');
    } else {
        pad(out, width - body.len(), b' ');
        out.extend_from_slice(body);
    }
}

/// Formats an integer like C printf does for `d i u x X o`.
pub(crate) fn fmt_int(
    out: &mut Vec<u8>,
    raw: u64,
    spec: &Spec,
    width: usize,
    prec: Option<usize>,
    long_size: usize,
) {
    let bits = spec.bits(long_size);
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let signed = matches!(spec.conv, b'd' | b'i');
    let (neg, mag) = if signed {
        let shift = 64 - bits;
        let v = ((raw << shift) as i64) >> shift;
        (v < 0, v.unsigned_abs())
    } else {
        (false, raw & mask)
    };
    // The common case: no flags, width or precision.
    if width == 0
        && prec.is_none()
        && !(spec.minus || spec.plus || spec.space || spec.zero || spec.hash)
        && matches!(spec.conv, b'd' | b'i' | b'u')
    {
        if neg {
            out.push(b'-');
        }
        push_dec(out, mag);
        return;
    }
    let mut digits = [0u8; 24];
    let mut n = 0;
    let hex: &[u8; 16] = if spec.conv == b'X' {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut m = mag;
    if !(m == 0 && prec == Some(0)) {
        // Constant divisors: the compiler turns them into multiplications.
        match spec.conv {
            b'x' | b'X' => loop {
                digits[n] = hex[(m & 15) as usize];
                n += 1;
                m >>= 4;
                if m == 0 {
                    break;
                }
            },
            b'o' => loop {
                digits[n] = b'0' + (m & 7) as u8;
                n += 1;
                m >>= 3;
                if m == 0 {
                    break;
                }
            },
            _ => loop {
                digits[n] = b'0' + (m % 10) as u8;
                n += 1;
                m /= 10;
                if m == 0 {
                    break;
                }
            },
        }
    }
    let mut prefix: &[u8] = b"";
    if neg {
        prefix = b"-";
    } else if signed && spec.plus {
        prefix = b"+";
    } else if signed && spec.space {
        prefix = b" ";
    }
    if spec.hash && mag != 0 {
        prefix = match spec.conv {
            b'x' => b"0x",
            b'X' => b"0X",
            _ => prefix,
        };
    }
    let mut zeros = prec.unwrap_or(0).saturating_sub(n);
    if spec.conv == b'o' && spec.hash && zeros == 0 && (n == 0 || digits[n - 1] != b'0') {
        zeros = 1;
    }
    let body_len = prefix.len() + zeros + n;
    if spec.zero && !spec.minus && prec.is_none() && body_len < width {
        zeros += width - body_len;
    }
    let total = prefix.len() + zeros + n;
    if !spec.minus && total < width {
        pad(out, width - total, b' ');
    }
    out.extend_from_slice(prefix);
    pad(out, zeros, b'0');
    digits[..n].reverse();
    out.extend_from_slice(&digits[..n]);
    if spec.minus && total < width {
        pad(out, width - total, b' ');
    }
}

/// Formats `pieces` with `args` (taken in order) into `out`.
pub(crate) fn format<'a, I>(out: &mut Vec<u8>, pieces: &[Piece], args: I, ctx: &Ctx<'_>)
where
    I: IntoIterator<Item = Arg<'a>>,
{
    let mut args = args.into_iter();
    for p in pieces {
        match p {
            Piece::Lit(l) => out.extend_from_slice(l),
            Piece::Spec(spec) => {
                let width = match spec.width {
                    Num::Fixed(w) => w,
                    Num::Star => args
                        .next()
                        .map(|a| a.num() as i32)
                        .unwrap_or(0)
                        .clamp(0, 4096) as usize,
                    Num::None => 0,
                };
                let prec = match spec.prec {
                    Num::Fixed(p) => Some(p),
                    Num::Star => {
                        let p = args.next().map(|a| a.num() as i32).unwrap_or(-1);
                        (p >= 0).then_some(p as usize)
                    }
                    Num::None => None,
                };
                let Some(arg) = args.next() else {
                    out.extend_from_slice(b"[MISSING ARG]");
                    continue;
                };
                format_one(out, spec, width, prec, arg, ctx);
            }
        }
    }
}

pub(crate) fn format_one(
    out: &mut Vec<u8>,
    spec: &Spec,
    width: usize,
    prec: Option<usize>,
    arg: Arg<'_>,
    ctx: &Ctx<'_>,
) {
    match spec.conv {
        b's' => {
            let s: Cow<[u8]> = match arg {
                Arg::Str(s) => s,
                Arg::Num(v) => Cow::Owned(v.to_string().into_bytes()),
            };
            let s = match prec {
                Some(p) if p < s.len() => &s[..p],
                _ => &s[..],
            };
            write_padded(out, s, spec, width);
        }
        b'c' => {
            let c = [arg.num() as u8];
            write_padded(out, &c, spec, width);
        }
        b'p' => {
            let v = arg.num();
            let v = if ctx.long_size == 4 {
                v & 0xffff_ffff
            } else {
                v
            };
            // Written in place, then padded (no allocation).
            let start = out.len();
            match spec.pext.first() {
                Some(b's' | b'f') => match ctx.kallsyms.lookup(v) {
                    Some((name, _)) => out.extend_from_slice(name.as_bytes()),
                    None => push_hex(out, v),
                },
                Some(b'S' | b'F' | b'B') => match ctx.kallsyms.lookup(v) {
                    Some((name, a)) if a == v => out.extend_from_slice(name.as_bytes()),
                    Some((name, a)) => {
                        out.extend_from_slice(name.as_bytes());
                        out.push(b'+');
                        push_hex(out, v - a);
                    }
                    None => push_hex(out, v),
                },
                _ => {
                    if v == 0 && spec.pext.is_empty() {
                        out.extend_from_slice(b"(nil)");
                    } else {
                        push_hex(out, v);
                    }
                }
            }
            pad_in_place(out, start, spec, width);
        }
        _ => fmt_int(out, arg.num(), spec, width, prec, ctx.long_size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: Vec<Arg<'static>>) -> String {
        let k = Kallsyms::parse(b"1000 T foo\n2000 T bar\n3000 T end\n");
        let mut out = Vec::new();
        format(
            &mut out,
            &parse_format(fmt.as_bytes()),
            args,
            &Ctx {
                long_size: 8,
                kallsyms: &k,
            },
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_like_c() {
        assert_eq!(
            f(
                "%d|%5d|%-5d|%05d",
                vec![
                    Arg::Num(-1i64 as u64),
                    Arg::Num(42),
                    Arg::Num(42),
                    Arg::Num(42)
                ]
            ),
            "-1|   42|42   |00042"
        );
        assert_eq!(f("%u", vec![Arg::Num(-1i64 as u64)]), "4294967295");
        assert_eq!(
            f(
                "%lu %llx %#x %X",
                vec![
                    Arg::Num(-1i64 as u64),
                    Arg::Num(255),
                    Arg::Num(255),
                    Arg::Num(255)
                ]
            ),
            "18446744073709551615 ff 0xff FF"
        );
        assert_eq!(f("%03d %03u", vec![Arg::Num(7), Arg::Num(1)]), "007 001");
        assert_eq!(
            f("%hhd %hd", vec![Arg::Num(0xff), Arg::Num(0xfffe)]),
            "-1 -2"
        );
        assert_eq!(
            f("%.3d %+d % d", vec![Arg::Num(5), Arg::Num(5), Arg::Num(5)]),
            "005 +5  5"
        );
        assert_eq!(f("%o %#o", vec![Arg::Num(8), Arg::Num(8)]), "10 010");
        assert_eq!(f("100%%", vec![]), "100%");
    }

    #[test]
    fn decimal_digits_two_at_a_time() {
        for v in [
            0u64,
            7,
            10,
            99,
            100,
            101,
            999,
            1000,
            12345,
            u64::MAX,
            10u64.pow(19),
        ] {
            let mut out = Vec::new();
            push_dec(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
        }
        assert_eq!(
            f(
                "%d %i %u",
                vec![Arg::Num(-5i64 as u64), Arg::Num(0), Arg::Num(42)]
            ),
            "-5 0 42"
        );
    }

    #[test]
    fn strings_chars_pointers() {
        assert_eq!(
            f("%s|%5s|%-5s|%.2s", vec![Arg::Str(Cow::Borrowed(b"abc")); 4]),
            "abc|  abc|abc  |ab"
        );
        assert_eq!(f("%*d", vec![Arg::Num(4), Arg::Num(1)]), "   1");
        assert_eq!(f("%c", vec![Arg::Num(b'x' as u64)]), "x");
        assert_eq!(
            f("%p %p", vec![Arg::Num(0xdead), Arg::Num(0)]),
            "0xdead (nil)"
        );
        assert_eq!(
            f(
                "%ps %pS %ps",
                vec![Arg::Num(0x1010), Arg::Num(0x1010), Arg::Num(0x5)]
            ),
            "foo foo+0x10 0x5"
        );
        assert_eq!(f("%d", vec![]), "[MISSING ARG]");
    }
}
