//! The kernel helpers a print fmt calls (`__get_str`, `__print_flags`,
//! `__print_symbolic`, `__print_hex`, `__print_array`, ...), evaluated over
//! one record.

use std::borrow::Cow;

use super::expr::{Expr, Helper};
use super::flags::{push_hex, write_flags};
use crate::format::Value;

use super::eval::{Eval, V};

impl<'a> Eval<'a, '_> {
    /// A kernel helper called with `args`.
    pub(super) fn call(&self, name: Helper, args: &'a [Expr], tmp: &mut Vec<u8>) -> V<'a> {
        match name {
            Helper::First => match args.first() {
                Some(e) => self.eval(e, tmp),
                None => V::Num(0, false),
            },
            Helper::DynamicArrayLen => match args.first().map(|e| self.eval(e, tmp)) {
                Some(V::Arr(Value::Array { data, .. })) => V::Num(data.len() as u64, false),
                Some(V::Str(s)) => V::Num(s.len() as u64, false),
                Some(V::Tmp(a, b)) => V::Num((b - a) as u64, false),
                _ => V::Num(0, false),
            },
            Helper::Flags => {
                let val = args.first().map(|e| self.eval(e, tmp).num()).unwrap_or(0);
                let delim = match args.get(1).map(|e| self.eval(e, tmp)) {
                    Some(v @ (V::Str(_) | V::Tmp(..))) => Self::text(&v, tmp).to_vec(),
                    _ => Vec::new(),
                };
                let mut pairs: Vec<(u64, Vec<u8>)> = Vec::new();
                for p in args.iter().skip(2) {
                    let Expr::Pair(v, n) = p else { continue };
                    let Some(fv) = self.flag_value(v, tmp) else {
                        continue;
                    };
                    let label = match self.eval(n, tmp) {
                        l @ (V::Str(_) | V::Tmp(..)) => Self::text(&l, tmp).to_vec(),
                        _ => continue,
                    };
                    pairs.push((fv, label));
                }
                let start = tmp.len();
                write_flags(
                    tmp,
                    val,
                    &delim,
                    pairs.iter().map(|(v, l)| (*v, l.as_slice())),
                );
                V::Tmp(start, tmp.len())
            }
            Helper::Symbolic => {
                let val = args.first().map(|e| self.eval(e, tmp).num()).unwrap_or(0);
                for p in args.iter().skip(1) {
                    let Expr::Pair(v, n) = p else { continue };
                    if self.flag_value(v, tmp) == Some(val) {
                        if let l @ (V::Str(_) | V::Tmp(..)) = self.eval(n, tmp) {
                            return l;
                        }
                    }
                }
                let start = tmp.len();
                push_hex(tmp, val);
                V::Tmp(start, tmp.len())
            }
            Helper::Hex | Helper::HexStr => {
                let v0 = args.first().map(|e| self.eval(e, tmp));
                let bytes = self.bytes_of(v0, tmp);
                let len = args
                    .get(1)
                    .map(|e| self.eval(e, tmp).num() as usize)
                    .unwrap_or(bytes.len())
                    .min(bytes.len());
                let start = tmp.len();
                for (i, b) in bytes[..len].iter().enumerate() {
                    if i > 0 && name == Helper::Hex {
                        tmp.push(b' ');
                    }
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    tmp.push(HEX[(b >> 4) as usize]);
                    tmp.push(HEX[(b & 15) as usize]);
                }
                V::Tmp(start, tmp.len())
            }
            Helper::Array => {
                let v0 = args.first().map(|e| self.eval(e, tmp));
                let bytes = self.bytes_of(v0, tmp);
                let count = args
                    .get(1)
                    .map(|e| self.eval(e, tmp).num() as usize)
                    .unwrap_or(0);
                let el = args
                    .get(2)
                    .map(|e| self.eval(e, tmp).num() as usize)
                    .unwrap_or(1)
                    .clamp(1, 8);
                let start = tmp.len();
                tmp.push(b'{');
                for i in 0..count {
                    let Some(b) = bytes.get(i * el..(i + 1) * el) else {
                        break;
                    };
                    if i > 0 {
                        tmp.push(b',');
                    }
                    push_hex(tmp, self.endian.uint(b));
                }
                tmp.push(b'}');
                V::Tmp(start, tmp.len())
            }
            Helper::Unknown => V::Num(0, false),
        }
    }

    /// The bytes of an array or string argument.
    pub(super) fn bytes_of(&self, v: Option<V<'a>>, tmp: &[u8]) -> Cow<'a, [u8]> {
        match v {
            Some(V::Arr(Value::Array { data, .. })) => Cow::Borrowed(data),
            Some(V::Str(s)) => Cow::Borrowed(s),
            Some(V::Tmp(a, b)) => Cow::Owned(tmp[a..b].to_vec()),
            _ => Cow::Borrowed(b""),
        }
    }
}
