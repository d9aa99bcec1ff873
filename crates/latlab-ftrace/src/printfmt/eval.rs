//! The evaluator: an argument expression over one record to a value.

use super::expr::{Expr, Op};
use super::flags::{known_flag, push_hex, write_flags};
use crate::endian::Endian;
use crate::format::{Field, FieldKind, Value};

/// Evaluated value. Strings computed per record (flags, hex dumps, ...)
/// live in the caller's scratch buffer: `Tmp(start, end)`.
#[derive(Debug, Clone)]
pub(super) enum V<'a> {
    Num(u64, bool),
    Str(&'a [u8]),
    Tmp(usize, usize),
    Arr(Value<'a>),
}

impl V<'_> {
    pub(super) fn num(&self) -> u64 {
        match self {
            V::Num(v, _) => *v,
            V::Str(s) => (!s.is_empty()) as u64,
            V::Tmp(a, b) => (a != b) as u64,
            V::Arr(Value::Array { data, .. }) => (!data.is_empty()) as u64,
            V::Arr(v) => v.as_u64().unwrap_or(0),
        }
    }
    pub(super) fn signed(&self) -> bool {
        matches!(self, V::Num(_, true))
    }
}

/// The last value of a constant flag list and the text it printed.
pub(crate) type FlagMemo = Option<(u64, Vec<u8>)>;

pub(super) struct Eval<'a, 'm> {
    pub(super) data: &'a [u8],
    pub(super) endian: Endian,
    /// One memo per [`Expr::Flags`] (consecutive records often repeat flags).
    pub(super) memo: std::cell::RefCell<&'m mut [FlagMemo]>,
}

impl<'a> Eval<'a, '_> {
    #[inline]
    pub(super) fn field(&self, f: &Field) -> V<'a> {
        match f.value(self.data, self.endian) {
            Some(Value::Int(v)) => V::Num(v as u64, true),
            Some(Value::UInt(v)) => V::Num(v, false),
            Some(Value::Str(s)) => V::Str(s),
            Some(a @ Value::Array { .. }) => V::Arr(a),
            None => match f.kind {
                FieldKind::Scalar => V::Num(0, false),
                _ => V::Str(b""),
            },
        }
    }

    pub(super) fn flag_value(&self, e: &'a Expr, tmp: &mut Vec<u8>) -> Option<u64> {
        match e {
            Expr::Ident(name) => known_flag(name),
            e => Some(self.eval(e, tmp).num()),
        }
    }

    /// The bytes of a string value (empty for numbers).
    pub(super) fn text<'t>(v: &V<'a>, tmp: &'t [u8]) -> &'t [u8]
    where
        'a: 't,
    {
        match v {
            V::Str(s) => s,
            V::Tmp(a, b) => &tmp[*a..*b],
            _ => b"",
        }
    }

    pub(super) fn eval(&self, e: &'a Expr, tmp: &mut Vec<u8>) -> V<'a> {
        match e {
            Expr::Num(v) => V::Num(*v, false),
            Expr::Str(s) => V::Str(s),
            Expr::Ident(name) => V::Num(known_flag(name).unwrap_or(0), false),
            Expr::Field(f) => self.field(f),
            Expr::Pair(v, _) => self.eval(v, tmp),
            Expr::Index(a, i) => {
                let i = self.eval(i, tmp).num() as usize;
                match self.eval(a, tmp) {
                    V::Arr(v) => match v.index(i) {
                        Some(Value::Int(x)) => V::Num(x as u64, true),
                        Some(Value::UInt(x)) => V::Num(x, false),
                        _ => V::Num(0, false),
                    },
                    V::Str(s) => V::Num(s.get(i).copied().unwrap_or(0) as u64, false),
                    V::Tmp(a, b) => V::Num(tmp[a..b].get(i).copied().unwrap_or(0) as u64, false),
                    V::Num(..) => V::Num(0, false),
                }
            }
            Expr::Unary(op, e) => {
                let v = self.eval(e, tmp);
                let (n, s) = (v.num(), v.signed());
                match op {
                    Op::Sub | Op::Neg => V::Num(n.wrapping_neg(), true),
                    Op::Not => V::Num((n == 0) as u64, false),
                    Op::BitNot => V::Num(!n, s),
                    _ => v,
                }
            }
            Expr::Binary(op, a, b) => {
                if *op == Op::LogAnd {
                    return V::Num(
                        (self.eval(a, tmp).num() != 0 && self.eval(b, tmp).num() != 0) as u64,
                        false,
                    );
                }
                if *op == Op::LogOr {
                    return V::Num(
                        (self.eval(a, tmp).num() != 0 || self.eval(b, tmp).num() != 0) as u64,
                        false,
                    );
                }
                let (va, vb) = (self.eval(a, tmp), self.eval(b, tmp));
                let signed = va.signed() && vb.signed();
                let (x, y) = (va.num(), vb.num());
                let cmp = |o: std::cmp::Ordering| -> bool {
                    let ord = if signed {
                        (x as i64).cmp(&(y as i64))
                    } else {
                        x.cmp(&y)
                    };
                    ord == o
                };
                use std::cmp::Ordering::*;
                let r = match op {
                    Op::Add => x.wrapping_add(y),
                    Op::Sub => x.wrapping_sub(y),
                    Op::Mul => x.wrapping_mul(y),
                    Op::Div => {
                        if y == 0 {
                            0
                        } else if signed {
                            (x as i64).wrapping_div(y as i64) as u64
                        } else {
                            x / y
                        }
                    }
                    Op::Rem => {
                        if y == 0 {
                            0
                        } else if signed {
                            (x as i64).wrapping_rem(y as i64) as u64
                        } else {
                            x % y
                        }
                    }
                    Op::Shl => x.checked_shl(y as u32).unwrap_or(0),
                    Op::Shr => {
                        if va.signed() {
                            ((x as i64) >> (y.min(63) as u32)) as u64
                        } else {
                            x.checked_shr(y as u32).unwrap_or(0)
                        }
                    }
                    Op::And => x & y,
                    Op::Or => x | y,
                    Op::Xor => x ^ y,
                    Op::Eq => return V::Num((x == y) as u64, false),
                    Op::Ne => return V::Num((x != y) as u64, false),
                    Op::Lt => return V::Num(cmp(Less) as u64, false),
                    Op::Gt => return V::Num(cmp(Greater) as u64, false),
                    Op::Le => return V::Num((!cmp(Greater)) as u64, false),
                    Op::Ge => return V::Num((!cmp(Less)) as u64, false),
                    _ => 0,
                };
                V::Num(r, va.signed() || vb.signed())
            }
            Expr::Cond(c, a, b) => {
                if self.eval(c, tmp).num() != 0 {
                    self.eval(a, tmp)
                } else {
                    self.eval(b, tmp)
                }
            }
            Expr::Cast { bits, signed, e } => {
                let v = self.eval(e, tmp);
                match v {
                    V::Num(n, _) => {
                        let b = *bits;
                        let n = if b >= 64 {
                            n
                        } else if *signed {
                            let sh = 64 - b;
                            (((n << sh) as i64) >> sh) as u64
                        } else {
                            n & ((1u64 << b) - 1)
                        };
                        V::Num(n, *signed)
                    }
                    other => other,
                }
            }
            Expr::Call(name, args) => self.call(*name, args, tmp),
            Expr::Flags {
                value,
                delim,
                pairs,
                slot,
            } => {
                let val = self.eval(value, tmp).num();
                let start = tmp.len();
                let mut memo = self.memo.borrow_mut();
                let memo = memo.get_mut(*slot);
                if let Some(Some((v, text))) = &memo {
                    if *v == val {
                        tmp.extend_from_slice(text);
                        return V::Tmp(start, tmp.len());
                    }
                }
                write_flags(
                    tmp,
                    val,
                    delim,
                    pairs.iter().map(|(v, l)| (*v, l.as_slice())),
                );
                if let Some(m) = memo {
                    let (v, text) = m.get_or_insert_with(|| (0, Vec::new()));
                    *v = val;
                    text.clear();
                    text.extend_from_slice(&tmp[start..]);
                }
                V::Tmp(start, tmp.len())
            }
            Expr::Symbols { value, pairs } => {
                let val = self.eval(value, tmp).num();
                match pairs.iter().find(|(v, _)| *v == val) {
                    Some((_, label)) => V::Str(label),
                    None => {
                        let start = tmp.len();
                        push_hex(tmp, val);
                        V::Tmp(start, tmp.len())
                    }
                }
            }
        }
    }
}
