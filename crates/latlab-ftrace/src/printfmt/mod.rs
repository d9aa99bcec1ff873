//! The `print fmt` line of an event format: a C format string followed by C
//! expressions over `REC->field`, with the kernel's helpers (`__get_str`,
//! `__print_flags`, `__print_symbolic`, `__print_hex`, `__print_array`, ...).
//! Parsed once per event type, evaluated per record.
//!
//! One file per stage: `lex` (tokens), `expr` (the expression tree), `parse`
//! (tokens to trees), `fold` (constants and flag tables folded at compile
//! time), `plan` (pieces paired with arguments, direct reads), `eval` (an
//! expression over one record), `helpers` (the kernel helpers it calls) and
//! `flags` (flag text).

mod eval;
mod expr;
mod flags;
mod fold;
mod helpers;
mod lex;
mod parse;
mod plan;

use std::borrow::Cow;

use crate::endian::Endian;
use crate::format::{EventFormat, Value};
use crate::printf::{self, Arg, Ctx, Piece};

pub(crate) use eval::FlagMemo;
use eval::{Eval, V};
use expr::Expr;
use fold::{fold, number_flags};
use lex::{lex, Tok};
use parse::Parser;
use plan::{fixed_width_prec, plan_steps, Step};

/// A compiled `print fmt`.
#[derive(Debug, Clone)]
pub struct PrintFmt {
    pieces: Vec<Piece>,
    args: Vec<Expr>,
    /// The pieces with their arguments, when no conversion takes its width
    /// or precision from an argument (`%*d`): then every conversion has its
    /// own argument and the common ones read the record directly.
    steps: Option<Vec<Step>>,
    /// How many [`Expr::Flags`] the arguments hold.
    flag_slots: usize,
}

impl PrintFmt {
    /// Compiles the print fmt of `format`; `Err` names what could not be parsed.
    pub fn compile(format: &EventFormat, long_size: usize) -> Result<Self, String> {
        let toks = lex(format.print_fmt.as_bytes())?;
        let mut it = toks.into_iter();
        let fmt = match it.next() {
            Some(Tok::Str(s)) => s,
            _ => return Err("print fmt does not start with a string".into()),
        };
        let mut p = Parser {
            toks: it.collect(),
            pos: 0,
            depth: 0,
            fmt: format,
            long_size,
        };
        let mut args = Vec::new();
        while p.pos < p.toks.len() {
            p.expect(",")?;
            args.push(p.expr()?);
        }
        let folder = Eval {
            data: &[],
            endian: Endian::Little,
            memo: std::cell::RefCell::new(&mut []),
        };
        let mut args: Vec<Expr> = args.into_iter().map(|a| fold(a, &folder)).collect();
        let mut flag_slots = 0;
        for a in &mut args {
            number_flags(a, &mut flag_slots);
        }
        let pieces = printf::parse_format(&fmt);
        let steps = plan_steps(&pieces, &args);
        Ok(PrintFmt {
            pieces,
            args,
            steps,
            flag_slots,
        })
    }

    /// Formats one record into `out`; `%ps` symbols come from `kallsyms`.
    pub fn render_to(
        &self,
        out: &mut Vec<u8>,
        data: &[u8],
        endian: Endian,
        long_size: usize,
        kallsyms: &crate::symbols::Kallsyms,
    ) {
        let ctx = Ctx {
            long_size,
            kallsyms,
        };
        self.render(out, data, endian, &ctx, &mut Vec::new(), &mut Vec::new());
    }

    /// Formats one record into `out`; `tmp` is scratch space for strings
    /// computed on the way (kept between calls so that nothing is allocated
    /// per record).
    pub(crate) fn render(
        &self,
        out: &mut Vec<u8>,
        data: &[u8],
        endian: Endian,
        ctx: &Ctx<'_>,
        tmp: &mut Vec<u8>,
        memo: &mut Vec<FlagMemo>,
    ) {
        if memo.len() < self.flag_slots {
            memo.resize(self.flag_slots, None);
        }
        let ev = Eval {
            data,
            endian,
            memo: std::cell::RefCell::new(memo),
        };
        tmp.clear();
        if let Some(steps) = &self.steps {
            for step in steps {
                match step {
                    Step::Lit(i) => {
                        if let Piece::Lit(l) = &self.pieces[*i] {
                            out.extend_from_slice(l);
                        }
                    }
                    Step::Int(i, r) => {
                        if let Piece::Spec(spec) = &self.pieces[*i] {
                            printf::fmt_int(out, r.get(data, endian), spec, 0, None, ctx.long_size);
                        }
                    }
                    Step::Num(i, r) => {
                        if let Piece::Spec(spec) = &self.pieces[*i] {
                            let (width, prec) = fixed_width_prec(spec);
                            let v = Arg::Num(r.get(data, endian));
                            printf::format_one(out, spec, width, prec, v, ctx);
                        }
                    }
                    Step::Cond(i, c) => {
                        if let Piece::Spec(spec) = &self.pieces[*i] {
                            let (width, prec) = fixed_width_prec(spec);
                            let v = Arg::Num(c.get(data, endian));
                            printf::format_one(out, spec, width, prec, v, ctx);
                        }
                    }
                    Step::Str(f) => {
                        if let Some(Value::Str(s)) = f.value(data, endian) {
                            out.extend_from_slice(s);
                        }
                    }
                    Step::Spec(i, j) => {
                        if let Piece::Spec(spec) = &self.pieces[*i] {
                            let v = ev.eval(&self.args[*j], tmp);
                            let (width, prec) = fixed_width_prec(spec);
                            printf::format_one(out, spec, width, prec, arg(v, tmp), ctx);
                            tmp.clear();
                        }
                    }
                }
            }
            return;
        }
        let mut args = self.args.iter();
        // The next argument as a printf argument (strings borrow from `tmp`).
        fn arg<'t>(v: V<'t>, tmp: &'t [u8]) -> Arg<'t> {
            match v {
                V::Num(n, _) => Arg::Num(n),
                V::Str(s) => Arg::Str(Cow::Borrowed(s)),
                V::Tmp(a, b) => Arg::Str(Cow::Borrowed(&tmp[a..b])),
                V::Arr(Value::Array { data, .. }) => Arg::Str(Cow::Borrowed(data)),
                V::Arr(v) => Arg::Num(v.as_u64().unwrap_or(0)),
            }
        }
        for p in &self.pieces {
            match p {
                Piece::Lit(l) => out.extend_from_slice(l),
                Piece::Spec(spec) => {
                    let width = match spec.width {
                        printf::Num::Fixed(w) => w,
                        printf::Num::Star => args
                            .next()
                            .map(|e| {
                                let v = ev.eval(e, tmp);
                                arg(v, tmp).num() as i32
                            })
                            .unwrap_or(0)
                            .clamp(0, 4096) as usize,
                        printf::Num::None => 0,
                    };
                    let prec = match spec.prec {
                        printf::Num::Fixed(p) => Some(p),
                        printf::Num::Star => {
                            let p = args
                                .next()
                                .map(|e| {
                                    let v = ev.eval(e, tmp);
                                    arg(v, tmp).num() as i32
                                })
                                .unwrap_or(-1);
                            (p >= 0).then_some(p as usize)
                        }
                        printf::Num::None => None,
                    };
                    let Some(e) = args.next() else {
                        out.extend_from_slice(b"[MISSING ARG]");
                        continue;
                    };
                    let v = ev.eval(e, tmp);
                    printf::format_one(out, spec, width, prec, arg(v, tmp), ctx);
                    tmp.clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod print_flags_tests;
#[cfg(test)]
mod tests;
