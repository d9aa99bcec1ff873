//! Compile-time folding: constants evaluated once, constant flag and symbol
//! lists turned into tables with a per-record memo.

use super::eval::{Eval, V};
use super::expr::{Expr, Helper, Op};
use super::flags::known_flag;
use crate::format::FieldKind;

/// Whether `e` depends on the record (fields) or on helpers.
pub(super) fn is_const(e: &Expr) -> bool {
    match e {
        // An identifier evaluates to trace-cmd's value for it, or 0.
        Expr::Num(_) | Expr::Ident(_) => true,
        Expr::Str(_) | Expr::Field(_) | Expr::Call(..) | Expr::Pair(..) => false,
        Expr::Index(a, b) => is_const(a) && is_const(b),
        Expr::Unary(_, a) => is_const(a),
        Expr::Binary(_, a, b) => is_const(a) && is_const(b),
        Expr::Cond(a, b, c) => is_const(a) && is_const(b) && is_const(c),
        Expr::Cast { e, .. } => is_const(e),
        Expr::Flags { .. } | Expr::Symbols { .. } => false,
    }
}

/// A flag or symbol value known at compile time: `Some(None)` for a name
/// trace-cmd does not know (the pair never prints), `None` when the value
/// depends on the record.
pub(super) fn const_flag_value(e: &Expr, ev: &Eval<'_, '_>) -> Option<Option<u64>> {
    match e {
        Expr::Ident(name) => Some(known_flag(name)),
        e if is_const(e) => Some(Some(ev.eval(e, &mut Vec::new()).num())),
        _ => None,
    }
}

/// The constant `(value, name)` pairs of a flag or symbol list, or `None`
/// when a value or a name depends on the record. Pairs the evaluator would
/// skip (unknown names, labels that are not strings) are left out.
pub(super) fn const_pairs(args: &[Expr], ev: &Eval<'_, '_>) -> Option<Vec<(u64, Vec<u8>)>> {
    let mut pairs = Vec::new();
    for p in args {
        let Expr::Pair(v, n) = p else { continue };
        let value = const_flag_value(v, ev)?;
        let label = match &**n {
            Expr::Str(s) => s.clone(),
            n if is_const(n) => continue,
            _ => return None,
        };
        if let Some(value) = value {
            pairs.push((value, label));
        }
    }
    Some(pairs)
}

/// Gives every [`Expr::Flags`] in `e` its own memo slot.
pub(super) fn number_flags(e: &mut Expr, next: &mut usize) {
    match e {
        Expr::Flags { value, slot, .. } => {
            *slot = *next;
            *next += 1;
            number_flags(value, next);
        }
        Expr::Symbols { value, .. } => number_flags(value, next),
        Expr::Index(a, b) | Expr::Binary(_, a, b) | Expr::Pair(a, b) => {
            number_flags(a, next);
            number_flags(b, next);
        }
        Expr::Unary(_, a) | Expr::Cast { e: a, .. } => number_flags(a, next),
        Expr::Cond(a, b, c) => {
            number_flags(a, next);
            number_flags(b, next);
            number_flags(c, next);
        }
        Expr::Call(_, args) => args.iter_mut().for_each(|a| number_flags(a, next)),
        Expr::Num(_) | Expr::Str(_) | Expr::Ident(_) | Expr::Field(_) => {}
    }
}

/// Turns `__print_flags`/`__print_symbolic` calls with constant lists into
/// [`Expr::Flags`]/[`Expr::Symbols`].
pub(super) fn compile_call(name: Helper, args: Vec<Expr>, ev: &Eval<'_, '_>) -> Expr {
    match name {
        Helper::Flags if !args.is_empty() => {
            let delim = match args.get(1) {
                None => Some(Vec::new()),
                Some(Expr::Str(s)) => Some(s.clone()),
                Some(e) if is_const(e) => Some(Vec::new()),
                Some(_) => None,
            };
            if let (Some(delim), Some(pairs)) =
                (delim, const_pairs(args.get(2..).unwrap_or(&[]), ev))
            {
                let value = Box::new(args.into_iter().next().expect("not empty"));
                return Expr::Flags {
                    value,
                    delim,
                    pairs,
                    slot: 0,
                };
            }
            Expr::Call(name, args)
        }
        Helper::Symbolic if !args.is_empty() => {
            if let Some(pairs) = const_pairs(&args[1..], ev) {
                let value = Box::new(args.into_iter().next().expect("not empty"));
                return Expr::Symbols { value, pairs };
            }
            Expr::Call(name, args)
        }
        _ => Expr::Call(name, args),
    }
}

/// Folds constant numeric sub-expressions (the flag masks of `__print_flags`
/// are long constant expressions evaluated for every record otherwise).
pub(super) fn fold(e: Expr, ev: &Eval<'_, '_>) -> Expr {
    if is_const(&e) {
        if let V::Num(n, signed) = ev.eval(&e, &mut Vec::new()) {
            return if signed {
                Expr::Cast {
                    bits: 64,
                    signed: true,
                    e: Box::new(Expr::Num(n)),
                }
            } else {
                Expr::Num(n)
            };
        }
    }
    let f = |x: Box<Expr>| Box::new(fold(*x, ev));
    let scalar = |x: &Expr| matches!(x, Expr::Field(fl) if fl.kind == FieldKind::Scalar);
    match e {
        Expr::Binary(Op::Add, a, b) => {
            let (a, b) = (f(a), f(b));
            // `(struct page *)vmemmap_base + REC->pfn` with an unknown base: the
            // field itself (adding an unsigned 0 changes neither value nor sign).
            if matches!(*a, Expr::Num(0)) && scalar(&b) {
                *b
            } else if matches!(*b, Expr::Num(0)) && scalar(&a) {
                *a
            } else {
                Expr::Binary(Op::Add, a, b)
            }
        }
        Expr::Index(a, b) => Expr::Index(f(a), f(b)),
        Expr::Unary(op, a) => Expr::Unary(op, f(a)),
        Expr::Binary(op, a, b) => Expr::Binary(op, f(a), f(b)),
        Expr::Cond(a, b, c) => Expr::Cond(f(a), f(b), f(c)),
        Expr::Cast { bits, signed, e } => Expr::Cast {
            bits,
            signed,
            e: f(e),
        },
        Expr::Call(n, args) => compile_call(n, args.into_iter().map(|a| fold(a, ev)).collect(), ev),
        // A pair's value names a flag: an unknown name is skipped, not 0.
        Expr::Pair(a, b) if matches!(*a, Expr::Ident(_)) => Expr::Pair(a, f(b)),
        Expr::Pair(a, b) => Expr::Pair(f(a), f(b)),
        other => other,
    }
}
