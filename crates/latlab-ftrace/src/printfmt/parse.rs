//! The parser of `print fmt` arguments: tokens to [`Expr`] trees, with C
//! types and casts resolved against the event's fields.

use super::expr::{Expr, Helper, Op};
use super::lex::Tok;
use crate::format::EventFormat;

pub(super) struct Parser<'f> {
    pub(super) toks: Vec<Tok>,
    pub(super) pos: usize,
    pub(super) depth: usize,
    pub(super) fmt: &'f EventFormat,
    pub(super) long_size: usize,
}

pub(super) fn type_bits(words: &[String], long_size: usize) -> Option<(u32, bool)> {
    let mut unsigned = false;
    let mut bits = None;
    let mut pointer = false;
    let mut longs = 0;
    for w in words {
        match w.as_str() {
            "*" => pointer = true,
            "unsigned" => unsigned = true,
            "signed" | "const" | "volatile" | "struct" | "enum" => {}
            "char" => bits = Some(8),
            "short" => bits = Some(16),
            "int" => bits = bits.or(Some(32)),
            "long" => longs += 1,
            "bool" | "_Bool" => {
                bits = Some(8);
                unsigned = true
            }
            "void" => bits = bits.or(Some(long_size as u32 * 8)),
            t => {
                let t = t.trim_start_matches("__");
                let (s, n) = t.split_at(t.find(|c: char| c.is_ascii_digit()).unwrap_or(t.len()));
                if (s == "u" || s == "s") && !n.is_empty() {
                    bits = n.parse().ok();
                    unsigned = s == "u";
                } else if t.ends_with("_t") {
                    // pid_t, gfp_t, size_t, ...: treat like the widest integer they name.
                    bits = Some(match t {
                        "pid_t" | "uid_t" | "gid_t" => 32,
                        _ => long_size as u32 * 8,
                    });
                    unsigned = !matches!(t, "pid_t" | "ssize_t" | "loff_t" | "ktime_t");
                } else {
                    // struct name or unknown typedef: pointer-sized
                    bits = bits.or(Some(long_size as u32 * 8));
                    unsigned = true;
                }
            }
        }
    }
    if pointer {
        return Some((long_size as u32 * 8, false));
    }
    if longs >= 2 {
        bits = Some(64);
    } else if longs == 1 {
        bits = Some(long_size as u32 * 8);
    }
    bits.map(|b| (b, !unsigned))
}

pub(super) fn is_type_word(w: &str) -> bool {
    matches!(
        w,
        "unsigned"
            | "signed"
            | "char"
            | "short"
            | "int"
            | "long"
            | "void"
            | "bool"
            | "_Bool"
            | "const"
            | "struct"
            | "enum"
    ) || w.ends_with("_t")
        || {
            let t = w.trim_start_matches("__");
            (t.starts_with('u') || t.starts_with('s'))
                && t.len() > 1
                && t[1..].chars().all(|c| c.is_ascii_digit())
        }
}

impl Parser<'_> {
    pub(super) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    pub(super) fn peek_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }
    pub(super) fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.peek_punct(p) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected {p:?} at token {}", self.pos))
        }
    }

    pub(super) fn expr(&mut self) -> Result<Expr, String> {
        self.cond()
    }

    pub(super) fn cond(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > 256 {
            return Err("expression nested too deeply".into());
        }
        let r = self.cond_inner();
        self.depth -= 1;
        r
    }

    pub(super) fn cond_inner(&mut self) -> Result<Expr, String> {
        let c = self.binary(0)?;
        if self.peek_punct("?") {
            self.pos += 1;
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.cond()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    pub(super) fn binary(&mut self, min: u8) -> Result<Expr, String> {
        let mut lhs = self.unary()?;
        while let Some(Tok::Punct(p)) = self.peek() {
            let (op, prec) = {
                match *p {
                    "||" => ("||", 1),
                    "&&" => ("&&", 2),
                    "|" => ("|", 3),
                    "^" => ("^", 4),
                    "&" => ("&", 5),
                    "==" | "!=" => (*p, 6),
                    "<" | ">" | "<=" | ">=" => (*p, 7),
                    "<<" | ">>" => (*p, 8),
                    "+" | "-" => (*p, 9),
                    "*" | "/" | "%" => (*p, 10),
                    _ => break,
                }
            };
            if prec < min {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(prec + 1)?;
            lhs = Expr::Binary(Op::of(op), Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    pub(super) fn try_cast(&mut self) -> Option<(u32, bool)> {
        // at "(": look for "( type-words [*]* )"
        let mut j = self.pos + 1;
        let mut words = Vec::new();
        while let Some(t) = self.toks.get(j) {
            match t {
                Tok::Ident(w) => words.push(w.clone()),
                Tok::Punct("*") => words.push("*".into()),
                Tok::Punct(")") => break,
                _ => return None,
            }
            j += 1;
        }
        if words.is_empty() || self.toks.get(j) != Some(&Tok::Punct(")")) {
            return None;
        }
        let known = words.iter().any(|w| w == "*" || is_type_word(w));
        if !known {
            return None;
        }
        // A cast must be followed by an operand.
        match self.toks.get(j + 1) {
            None | Some(Tok::Punct(")" | "," | "]" | "}" | "?" | ":")) => return None,
            _ => {}
        }
        let r = type_bits(&words, self.long_size)?;
        self.pos = j + 1;
        Some(r)
    }

    pub(super) fn unary(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > 256 {
            return Err("expression nested too deeply".into());
        }
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    pub(super) fn unary_inner(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some(Tok::Punct(p @ ("-" | "!" | "~" | "+" | "*" | "&"))) => {
                let p = *p;
                self.pos += 1;
                let e = self.unary()?;
                Ok(match p {
                    "+" | "*" | "&" => e,
                    _ => Expr::Unary(Op::of(p), Box::new(e)),
                })
            }
            Some(Tok::Punct("(")) => {
                if let Some((bits, signed)) = self.try_cast() {
                    let e = self.unary()?;
                    return Ok(Expr::Cast {
                        bits,
                        signed,
                        e: Box::new(e),
                    });
                }
                self.pos += 1;
                let e = self.expr()?;
                // GNU comma expressions inside parentheses: keep the last.
                let mut e = e;
                while self.peek_punct(",") {
                    self.pos += 1;
                    e = self.expr()?;
                }
                self.expect(")")?;
                self.postfix(e)
            }
            _ => {
                let e = self.primary()?;
                self.postfix(e)
            }
        }
    }

    pub(super) fn postfix(&mut self, mut e: Expr) -> Result<Expr, String> {
        while self.peek_punct("[") {
            self.pos += 1;
            let i = self.expr()?;
            self.expect("]")?;
            e = Expr::Index(Box::new(e), Box::new(i));
        }
        Ok(e)
    }

    pub(super) fn field(&self, name: &str) -> Result<Expr, String> {
        self.fmt
            .field(name)
            .map(|f| Expr::Field(Box::new(f.clone())))
            .ok_or_else(|| format!("no field {name:?}"))
    }

    pub(super) fn primary(&mut self) -> Result<Expr, String> {
        let t = self.toks.get(self.pos).cloned().ok_or("unexpected end")?;
        self.pos += 1;
        match t {
            Tok::Num(v) => Ok(Expr::Num(v)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Punct("{") => {
                let v = self.expr()?;
                self.expect(",")?;
                let n = self.expr()?;
                self.expect("}")?;
                Ok(Expr::Pair(Box::new(v), Box::new(n)))
            }
            Tok::Ident(id) => {
                if id == "REC" && self.peek_punct("->") {
                    self.pos += 1;
                    match self.toks.get(self.pos).cloned() {
                        Some(Tok::Ident(f)) => {
                            self.pos += 1;
                            self.field(&f)
                        }
                        _ => Err("expected field name after REC->".into()),
                    }
                } else if self.peek_punct("(") {
                    self.pos += 1;
                    let mut args = Vec::new();
                    if !self.peek_punct(")") {
                        loop {
                            args.push(self.expr()?);
                            if self.peek_punct(",") {
                                self.pos += 1;
                                continue;
                            }
                            break;
                        }
                    }
                    self.expect(")")?;
                    if id == "sizeof" {
                        return Ok(Expr::Num(self.long_size as u64));
                    }
                    Ok(Expr::Call(Helper::of(&id), args))
                } else if self.peek_punct("->") {
                    // some_struct->member: unknown; skip the member.
                    self.pos += 2;
                    Ok(Expr::Ident(id))
                } else if self.fmt.field(&id).is_some() {
                    // `__get_str(name)` names the field without `REC->`.
                    self.field(&id)
                } else {
                    Ok(Expr::Ident(id))
                }
            }
            Tok::Punct(p) => Err(format!("unexpected {p:?}")),
        }
    }
}
