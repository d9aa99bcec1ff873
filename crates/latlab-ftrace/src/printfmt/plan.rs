//! The plan of a compiled `print fmt`: each piece paired with its argument,
//! common conversions reading the record directly instead of evaluating.

use super::expr::{Expr, Op};
use crate::endian::Endian;
use crate::format::{Field, FieldKind};
use crate::printf::{self, Piece};

/// One piece of a print fmt with its argument (see [`PrintFmt::steps`]).
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// `pieces[i]` is a literal.
    Lit(usize),
    /// `pieces[i]` is an integer conversion without flags, width or precision
    /// of a number read straight from the record.
    Int(usize, Read),
    /// `pieces[i]` (any conversion) of a number read straight from the record.
    Num(usize, Read),
    /// `%s` without width or precision of a string field.
    Str(Box<Field>),
    /// `pieces[i]` of `x == k ? a : b` or `x != k ? a : b` over numbers read
    /// from the record or constants (`REC->pfn != -1UL ? REC->pfn : 0`).
    Cond(usize, Box<CondNum>),
    /// `pieces[i]` with `args[j]`, through the evaluator.
    Spec(usize, usize),
}

/// A number read from the record, or a constant (its raw 64 bits).
#[derive(Debug, Clone, Copy)]
pub(super) enum Operand {
    Read(Read),
    Const(u64),
}

impl Operand {
    pub(super) fn of(e: &Expr) -> Option<Operand> {
        match e {
            Expr::Num(n) => Some(Operand::Const(*n)),
            // A folded signed constant (`-1UL` folds to this).
            Expr::Cast { bits: 64, e, .. } => match **e {
                Expr::Num(n) => Some(Operand::Const(n)),
                _ => None,
            },
            e => Read::of(e).map(Operand::Read),
        }
    }

    #[inline]
    pub(super) fn get(&self, data: &[u8], endian: Endian) -> u64 {
        match self {
            Operand::Read(r) => r.get(data, endian),
            Operand::Const(n) => *n,
        }
    }
}

/// See [`Step::Cond`]. Equality does not depend on signedness, and the
/// chosen number reaches printf as its raw bits, as through the evaluator.
#[derive(Debug, Clone, Copy)]
pub(super) struct CondNum {
    pub(super) x: Operand,
    pub(super) k: Operand,
    pub(super) equal: bool,
    pub(super) then: Operand,
    pub(super) other: Operand,
}

impl CondNum {
    pub(super) fn of(e: &Expr) -> Option<CondNum> {
        let Expr::Cond(c, a, b) = e else { return None };
        let Expr::Binary(op @ (Op::Eq | Op::Ne), x, k) = &**c else {
            return None;
        };
        Some(CondNum {
            x: Operand::of(x)?,
            k: Operand::of(k)?,
            equal: *op == Op::Eq,
            then: Operand::of(a)?,
            other: Operand::of(b)?,
        })
    }

    #[inline]
    pub(super) fn get(&self, data: &[u8], endian: Endian) -> u64 {
        let same = self.x.get(data, endian) == self.k.get(data, endian);
        if same == self.equal {
            self.then.get(data, endian)
        } else {
            self.other.get(data, endian)
        }
    }
}

/// A number at a fixed place in the record: a scalar field, or a constant
/// index into a fixed-size array field.
#[derive(Debug, Clone, Copy)]
pub(super) struct Read {
    /// Where the whole field must fit for the value to exist.
    pub(super) field_end: usize,
    pub(super) offset: usize,
    pub(super) size: usize,
    pub(super) signed: bool,
}

impl Read {
    /// The value as the evaluator would produce it (0 when the record is short).
    #[inline]
    pub(super) fn get(&self, data: &[u8], endian: Endian) -> u64 {
        if data.len() < self.field_end {
            return 0;
        }
        let b = &data[self.offset..self.offset + self.size];
        if self.signed {
            endian.int(b) as u64
        } else {
            endian.uint(b)
        }
    }

    pub(super) fn of(e: &Expr) -> Option<Read> {
        match e {
            Expr::Field(f) if f.kind == FieldKind::Scalar && f.size > 0 => Some(Read {
                field_end: f.offset + f.size,
                offset: f.offset,
                size: f.size,
                signed: f.signed,
            }),
            Expr::Index(a, i) => {
                let (Expr::Field(f), Expr::Num(i)) = (&**a, &**i) else {
                    return None;
                };
                let FieldKind::Array { elem_size, .. } = f.kind else {
                    return None;
                };
                let es = elem_size.max(1);
                let i = usize::try_from(*i).ok()?;
                let start = i.checked_mul(es)?;
                (start + es <= f.size).then_some(Read {
                    field_end: f.offset + f.size,
                    offset: f.offset + start,
                    size: es,
                    signed: f.signed,
                })
            }
            _ => None,
        }
    }
}

/// Width and precision of a conversion that takes neither from an argument.
pub(super) fn fixed_width_prec(spec: &printf::Spec) -> (usize, Option<usize>) {
    let width = match spec.width {
        printf::Num::Fixed(w) => w,
        _ => 0,
    };
    let prec = match spec.prec {
        printf::Num::Fixed(p) => Some(p),
        _ => None,
    };
    (width, prec)
}

/// Pairs each piece with its argument and picks the direct forms.
pub(super) fn plan_steps(pieces: &[Piece], args: &[Expr]) -> Option<Vec<Step>> {
    let mut steps = Vec::with_capacity(pieces.len());
    let mut next = 0;
    for (i, p) in pieces.iter().enumerate() {
        match p {
            Piece::Lit(_) => steps.push(Step::Lit(i)),
            Piece::Spec(spec) => {
                if spec.width == printf::Num::Star || spec.prec == printf::Num::Star {
                    return None;
                }
                let Some(arg) = args.get(next) else {
                    // [MISSING ARG] from here on: leave it to the evaluator.
                    return None;
                };
                let plain = spec.width == printf::Num::None
                    && spec.prec == printf::Num::None
                    && !(spec.minus || spec.plus || spec.space || spec.zero || spec.hash);
                let string_field = match arg {
                    Expr::Field(f) => matches!(
                        f.kind,
                        FieldKind::String
                            | FieldKind::DataLoc { string: true, .. }
                            | FieldKind::RelLoc { string: true, .. }
                            | FieldKind::Tail { string: true, .. }
                    )
                    .then(|| f.clone()),
                    _ => None,
                };
                let read = Read::of(arg);
                match (spec.conv, read, string_field) {
                    (b'd' | b'i' | b'u' | b'x' | b'X' | b'o', Some(r), _) if plain => {
                        steps.push(Step::Int(i, r))
                    }
                    (b's', _, Some(f)) if plain => steps.push(Step::Str(f)),
                    (_, Some(r), _) => steps.push(Step::Num(i, r)),
                    _ if CondNum::of(arg).is_some() => {
                        steps.push(Step::Cond(i, Box::new(CondNum::of(arg).expect("checked"))))
                    }
                    _ => steps.push(Step::Spec(i, next)),
                }
                next += 1;
            }
        }
    }
    Some(steps)
}
