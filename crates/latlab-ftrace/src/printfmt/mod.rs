//! The `print fmt` line of an event format: a C format string followed by C
//! expressions over `REC->field`, with the kernel's helpers (`__get_str`,
//! `__print_flags`, `__print_symbolic`, `__print_hex`, `__print_array`, ...).
//! Parsed once per event type, evaluated per record.

use std::borrow::Cow;

use crate::endian::Endian;
use crate::format::{EventFormat, Field, FieldKind, Value};
use crate::printf::{self, Arg, Ctx, Piece};
use crate::symbols::unescape_c;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(Vec<u8>),
    Num(u64),
    Ident(String),
    Punct(&'static str),
}

const PUNCTS: [&str; 30] = [
    "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "[", "]", "{", "}", ",", "?",
    ":", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "<", ">",
];

fn lex(s: &[u8]) -> Result<Vec<Tok>, String> {
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

/// A C expression from a print fmt.
#[derive(Debug, Clone)]
enum Expr {
    Num(u64),
    Str(Vec<u8>),
    /// An identifier that is not a field (an unexpanded macro or enum name).
    Ident(String),
    Field(Box<Field>),
    Index(Box<Expr>, Box<Expr>),
    Unary(Op, Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast {
        bits: u32,
        signed: bool,
        e: Box<Expr>,
    },
    Call(Helper, Vec<Expr>),
    /// `{ value, "name" }` in flag and symbol lists.
    Pair(Box<Expr>, Box<Expr>),
    /// `__print_flags` whose values and names are all constants (compiled
    /// from a `Call` by [`fold`]): the pairs that can ever print, in order.
    Flags {
        value: Box<Expr>,
        delim: Vec<u8>,
        pairs: Vec<(u64, Vec<u8>)>,
        /// Index of this list's memo (the last value and its text).
        slot: usize,
    },
    /// `__print_symbolic` whose values and names are all constants.
    Symbols {
        value: Box<Expr>,
        pairs: Vec<(u64, Vec<u8>)>,
    },
}

/// A C operator, resolved once at parse time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    LogAnd,
    LogOr,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    Neg,
    Not,
    BitNot,
}

impl Op {
    fn of(p: &str) -> Op {
        match p {
            "+" => Op::Add,
            "-" => Op::Sub,
            "*" => Op::Mul,
            "/" => Op::Div,
            "%" => Op::Rem,
            "<<" => Op::Shl,
            ">>" => Op::Shr,
            "&" => Op::And,
            "|" => Op::Or,
            "^" => Op::Xor,
            "&&" => Op::LogAnd,
            "||" => Op::LogOr,
            "==" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            ">" => Op::Gt,
            "<=" => Op::Le,
            ">=" => Op::Ge,
            "!" => Op::Not,
            "~" => Op::BitNot,
            _ => Op::Neg,
        }
    }
}

/// The kernel helpers a print fmt may call, resolved once at parse time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Helper {
    /// `__get_str` and friends: the value of their first argument.
    First,
    DynamicArrayLen,
    Flags,
    Symbolic,
    Hex,
    HexStr,
    Array,
    /// Anything else evaluates to 0.
    Unknown,
}

impl Helper {
    fn of(name: &str) -> Helper {
        match name {
            "__get_str"
            | "__get_rel_str"
            | "__get_dynamic_array"
            | "__get_rel_dynamic_array"
            | "__get_bitmask"
            | "__get_cpumask"
            | "__get_sockaddr"
            | "__builtin_expect" => Helper::First,
            "__get_dynamic_array_len" | "__get_rel_dynamic_array_len" => Helper::DynamicArrayLen,
            "__print_flags" => Helper::Flags,
            "__print_symbolic" | "__print_symbolic_u64" => Helper::Symbolic,
            "__print_hex" => Helper::Hex,
            "__print_hex_str" => Helper::HexStr,
            "__print_array" => Helper::Array,
            _ => Helper::Unknown,
        }
    }
}

struct Parser<'f> {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
    fmt: &'f EventFormat,
    long_size: usize,
}

fn type_bits(words: &[String], long_size: usize) -> Option<(u32, bool)> {
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

fn is_type_word(w: &str) -> bool {
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
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn peek_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }
    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.peek_punct(p) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected {p:?} at token {}", self.pos))
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.cond()
    }

    fn cond(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > 256 {
            return Err("expression nested too deeply".into());
        }
        let r = self.cond_inner();
        self.depth -= 1;
        r
    }

    fn cond_inner(&mut self) -> Result<Expr, String> {
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

    fn binary(&mut self, min: u8) -> Result<Expr, String> {
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

    fn try_cast(&mut self) -> Option<(u32, bool)> {
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

    fn unary(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > 256 {
            return Err("expression nested too deeply".into());
        }
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<Expr, String> {
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

    fn postfix(&mut self, mut e: Expr) -> Result<Expr, String> {
        while self.peek_punct("[") {
            self.pos += 1;
            let i = self.expr()?;
            self.expect("]")?;
            e = Expr::Index(Box::new(e), Box::new(i));
        }
        Ok(e)
    }

    fn field(&self, name: &str) -> Result<Expr, String> {
        self.fmt
            .field(name)
            .map(|f| Expr::Field(Box::new(f.clone())))
            .ok_or_else(|| format!("no field {name:?}"))
    }

    fn primary(&mut self) -> Result<Expr, String> {
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

/// One piece of a print fmt with its argument (see [`PrintFmt::steps`]).
#[derive(Debug, Clone)]
enum Step {
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
enum Operand {
    Read(Read),
    Const(u64),
}

impl Operand {
    fn of(e: &Expr) -> Option<Operand> {
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
    fn get(&self, data: &[u8], endian: Endian) -> u64 {
        match self {
            Operand::Read(r) => r.get(data, endian),
            Operand::Const(n) => *n,
        }
    }
}

/// See [`Step::Cond`]. Equality does not depend on signedness, and the
/// chosen number reaches printf as its raw bits, as through the evaluator.
#[derive(Debug, Clone, Copy)]
struct CondNum {
    x: Operand,
    k: Operand,
    equal: bool,
    then: Operand,
    other: Operand,
}

impl CondNum {
    fn of(e: &Expr) -> Option<CondNum> {
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
    fn get(&self, data: &[u8], endian: Endian) -> u64 {
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
struct Read {
    /// Where the whole field must fit for the value to exist.
    field_end: usize,
    offset: usize,
    size: usize,
    signed: bool,
}

impl Read {
    /// The value as the evaluator would produce it (0 when the record is short).
    #[inline]
    fn get(&self, data: &[u8], endian: Endian) -> u64 {
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

    fn of(e: &Expr) -> Option<Read> {
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
fn fixed_width_prec(spec: &printf::Spec) -> (usize, Option<usize>) {
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
fn plan_steps(pieces: &[Piece], args: &[Expr]) -> Option<Vec<Step>> {
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

/// Evaluated value. Strings computed per record (flags, hex dumps, ...)
/// live in the caller's scratch buffer: `Tmp(start, end)`.
#[derive(Debug, Clone)]
enum V<'a> {
    Num(u64, bool),
    Str(&'a [u8]),
    Tmp(usize, usize),
    Arr(Value<'a>),
}

impl V<'_> {
    fn num(&self) -> u64 {
        match self {
            V::Num(v, _) => *v,
            V::Str(s) => (!s.is_empty()) as u64,
            V::Tmp(a, b) => (a != b) as u64,
            V::Arr(Value::Array { data, .. }) => (!data.is_empty()) as u64,
            V::Arr(v) => v.as_u64().unwrap_or(0),
        }
    }
    fn signed(&self) -> bool {
        matches!(self, V::Num(_, true))
    }
}

/// Softirq and hrtimer names that trace-cmd knows even when the format file
/// does not resolve them.
fn known_flag(name: &str) -> Option<u64> {
    Some(match name {
        "HI_SOFTIRQ" => 0,
        "TIMER_SOFTIRQ" => 1,
        "NET_TX_SOFTIRQ" => 2,
        "NET_RX_SOFTIRQ" => 3,
        "BLOCK_SOFTIRQ" => 4,
        "IRQ_POLL_SOFTIRQ" => 5,
        "TASKLET_SOFTIRQ" => 6,
        "SCHED_SOFTIRQ" => 7,
        "HRTIMER_SOFTIRQ" => 8,
        "RCU_SOFTIRQ" => 9,
        "HRTIMER_NORESTART" => 0,
        "HRTIMER_RESTART" => 1,
        _ => return None,
    })
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

/// Writes the names of the set flags of `val` like the kernel's
/// `__print_flags`: names joined by `delim`, leftover bits as hex.
fn write_flags<'p>(
    out: &mut Vec<u8>,
    val: u64,
    delim: &[u8],
    pairs: impl Iterator<Item = (u64, &'p [u8])>,
) {
    let start = out.len();
    let mut rest = val;
    for (fv, label) in pairs {
        if val == 0 && fv == 0 {
            out.extend_from_slice(label);
            break;
        }
        if fv != 0 && rest & fv == fv {
            if out.len() > start {
                out.extend_from_slice(delim);
            }
            out.extend_from_slice(label);
            rest &= !fv;
        }
    }
    if rest != 0 {
        if out.len() > start {
            out.extend_from_slice(delim);
        }
        push_hex(out, rest);
    }
}

/// The last value of a constant flag list and the text it printed.
pub(crate) type FlagMemo = Option<(u64, Vec<u8>)>;

struct Eval<'a, 'm> {
    data: &'a [u8],
    endian: Endian,
    /// One memo per [`Expr::Flags`] (consecutive records often repeat flags).
    memo: std::cell::RefCell<&'m mut [FlagMemo]>,
}

impl<'a> Eval<'a, '_> {
    #[inline]
    fn field(&self, f: &Field) -> V<'a> {
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

    fn flag_value(&self, e: &'a Expr, tmp: &mut Vec<u8>) -> Option<u64> {
        match e {
            Expr::Ident(name) => known_flag(name),
            e => Some(self.eval(e, tmp).num()),
        }
    }

    /// The bytes of a string value (empty for numbers).
    fn text<'t>(v: &V<'a>, tmp: &'t [u8]) -> &'t [u8]
    where
        'a: 't,
    {
        match v {
            V::Str(s) => s,
            V::Tmp(a, b) => &tmp[*a..*b],
            _ => b"",
        }
    }

    fn eval(&self, e: &'a Expr, tmp: &mut Vec<u8>) -> V<'a> {
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

    fn call(&self, name: Helper, args: &'a [Expr], tmp: &mut Vec<u8>) -> V<'a> {
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
    fn bytes_of(&self, v: Option<V<'a>>, tmp: &[u8]) -> Cow<'a, [u8]> {
        match v {
            Some(V::Arr(Value::Array { data, .. })) => Cow::Borrowed(data),
            Some(V::Str(s)) => Cow::Borrowed(s),
            Some(V::Tmp(a, b)) => Cow::Owned(tmp[a..b].to_vec()),
            _ => Cow::Borrowed(b""),
        }
    }
}

/// Whether `e` depends on the record (fields) or on helpers.
fn is_const(e: &Expr) -> bool {
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
fn const_flag_value(e: &Expr, ev: &Eval<'_, '_>) -> Option<Option<u64>> {
    match e {
        Expr::Ident(name) => Some(known_flag(name)),
        e if is_const(e) => Some(Some(ev.eval(e, &mut Vec::new()).num())),
        _ => None,
    }
}

/// The constant `(value, name)` pairs of a flag or symbol list, or `None`
/// when a value or a name depends on the record. Pairs the evaluator would
/// skip (unknown names, labels that are not strings) are left out.
fn const_pairs(args: &[Expr], ev: &Eval<'_, '_>) -> Option<Vec<(u64, Vec<u8>)>> {
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
fn number_flags(e: &mut Expr, next: &mut usize) {
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
fn compile_call(name: Helper, args: Vec<Expr>, ev: &Eval<'_, '_>) -> Expr {
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
fn fold(e: Expr, ev: &Eval<'_, '_>) -> Expr {
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
mod tests {
    use super::*;
    use crate::symbols::Kallsyms;

    fn render(format_text: &str, rec: &[u8]) -> String {
        let f = EventFormat::parse("test", format_text, 8).unwrap();
        let p = PrintFmt::compile(&f, 8).unwrap();
        let k = Kallsyms::parse(b"ffffffff81000000 T do_thing\n");
        let mut out = Vec::new();
        p.render(
            &mut out,
            rec,
            Endian::Little,
            &Ctx {
                long_size: 8,
                kallsyms: &k,
            },
            &mut Vec::new(),
            &mut Vec::new(),
        );
        String::from_utf8(out).unwrap()
    }

    const HDR: &str = "name: t\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

    #[test]
    fn sched_switch_state_expression() {
        let text = format!(
            "{HDR}\tfield:long prev_state;\toffset:8;\tsize:8;\tsigned:1;\nprint fmt: \"prev_state=%s%s\", (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002) + 1) << 1) - 1), \"|\", {{ 0x00000001, \"S\" }}, {{ 0x00000002, \"D\" }}) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002) + 1) << 1) ? \"+\" : \"\"\n"
        );
        let mut rec = vec![0u8; 16];
        assert_eq!(render(&text, &rec), "prev_state=R");
        rec[8] = 1;
        assert_eq!(render(&text, &rec), "prev_state=S");
        rec[8] = 3;
        assert_eq!(render(&text, &rec), "prev_state=S|D");
        rec[8] = 8;
        assert_eq!(render(&text, &rec), "prev_state=R+");
    }

    #[test]
    fn symbolic_strings_casts_and_symbols() {
        let text = format!(
            "{HDR}\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n\tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\nprint fmt: \"vec=%u [action=%s] name=%s fn=%ps neg=%lld x=%d\", REC->vec, __print_symbolic(REC->vec, {{ 0, \"HI\" }}, {{ 1, \"TIMER\" }}), __get_str(name), REC->function, (long long)(int)REC->vec - 5, UNKNOWN_MACRO\n"
        );
        let mut rec = vec![0u8; 32];
        rec[8] = 1;
        rec[12..16].copy_from_slice(&((3u32 << 16) | 24).to_le_bytes());
        rec[24..27].copy_from_slice(b"ab\0");
        rec[16..24].copy_from_slice(&0xffffffff81000000u64.to_le_bytes());
        assert_eq!(
            render(&text, &rec),
            "vec=1 [action=TIMER] name=ab fn=do_thing neg=-4 x=0"
        );
        rec[8] = 7;
        assert_eq!(
            render(&text, &rec),
            "vec=7 [action=0x7] name=ab fn=do_thing neg=2 x=0"
        );
    }

    #[test]
    fn hex_and_arrays() {
        let text = format!(
            "{HDR}\tfield:u8 mac[4];\toffset:8;\tsize:4;\tsigned:0;\n\tfield:u16 v[2];\toffset:12;\tsize:4;\tsigned:0;\nprint fmt: \"%s %s %s %d\", __print_hex(REC->mac, 4), __print_hex_str(REC->mac, 2), __print_array(REC->v, 2, 2), REC->v[1]\n"
        );
        let mut rec = vec![0u8; 16];
        rec[8..12].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        rec[12..16].copy_from_slice(&[1, 0, 2, 0]);
        assert_eq!(render(&text, &rec), "de ad be ef dead {0x1,0x2} 2");
    }

    /// The direct steps print what the evaluator prints, for every shape
    /// they take over (plain fields, array elements, `x != k ? a : b`).
    #[test]
    fn direct_steps_equal_the_evaluator() {
        let text = format!(
            "{HDR}\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:int order;\toffset:16;\tsize:4;\tsigned:1;\n\tfield:u16 v[2];\toffset:20;\tsize:4;\tsigned:0;\n\tfield:char comm[4];\toffset:24;\tsize:4;\tsigned:0;\nprint fmt: \"page=%p pfn=0x%lx order=%d o2=%5d v1=%u c=%s eq=%d\", REC->pfn != -1UL ? (((struct page *)vmemmap_base) + (REC->pfn)) : ((void *)0), REC->pfn != -1UL ? REC->pfn : 0, REC->order, REC->order, REC->v[1], REC->comm, REC->order == 3 ? REC->v[0] : -2\n"
        );
        let f = EventFormat::parse("test", &text, 8).unwrap();
        let p = PrintFmt::compile(&f, 8).unwrap();
        let steps = p.steps.as_ref().unwrap();
        assert!(steps.iter().any(|s| matches!(s, Step::Cond(..))));
        assert!(steps.iter().any(|s| matches!(s, Step::Int(..))));
        let mut plain = p.clone();
        plain.steps = None;
        let k = Kallsyms::default();
        let ctx = Ctx {
            long_size: 8,
            kallsyms: &k,
        };
        let mut recs = Vec::new();
        for (pfn, order) in [(5u64, 3i32), (u64::MAX, -7), (0, 0)] {
            let mut r = vec![0u8; 28];
            r[8..16].copy_from_slice(&pfn.to_le_bytes());
            r[16..20].copy_from_slice(&order.to_le_bytes());
            r[20..24].copy_from_slice(&[1, 0, 0xff, 0xff]);
            r[24..28].copy_from_slice(b"ab\0\0");
            recs.push(r);
        }
        recs.push(vec![0u8; 12]); // a record shorter than its fields
        for r in &recs {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            p.render(
                &mut a,
                r,
                Endian::Little,
                &ctx,
                &mut Vec::new(),
                &mut Vec::new(),
            );
            plain.render(
                &mut b,
                r,
                Endian::Little,
                &ctx,
                &mut Vec::new(),
                &mut Vec::new(),
            );
            assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
        }
    }

    #[test]
    fn unknown_field_is_a_compile_error() {
        let text = format!("{HDR}print fmt: \"%d\", REC->nope\n");
        let f = EventFormat::parse("test", &text, 8).unwrap();
        assert!(PrintFmt::compile(&f, 8).unwrap_err().contains("nope"));
    }
}

#[cfg(test)]
mod more_tests {
    use super::*;
    use crate::symbols::Kallsyms;

    /// Regression: timer_start's `flags=` came out empty.
    #[test]
    fn print_flags_of_masked_value() {
        let real = "name: timer_start\nID: 466\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:void * timer;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:unsigned long expires;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:unsigned long bucket_expiry;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:unsigned long now;\toffset:40;\tsize:8;\tsigned:0;\n\tfield:unsigned int flags;\toffset:48;\tsize:4;\tsigned:0;\n\nprint fmt: \"timer=%p function=%ps expires=%lu [timeout=%ld] bucket_expiry=%lu cpu=%u idx=%u flags=%s\", REC->timer, REC->function, REC->expires, (long)REC->expires - REC->now, REC->bucket_expiry, REC->flags & 0x0003FFFF, REC->flags >> 22, __print_flags(REC->flags & (0x00040000 | 0x00080000 | 0x00100000 | 0x00200000), \"|\", { 0x00040000, \"M\" }, { 0x00080000, \"D\" }, { 0x00100000, \"P\" }, { 0x00200000, \"I\" })\n";
        let f = EventFormat::parse("timer", real, 8).unwrap();
        let p = PrintFmt::compile(&f, 8).unwrap();
        let k = Kallsyms::default();
        let mut rec = vec![0u8; 52];
        rec[48..52].copy_from_slice(&((23u32 << 22) | 0x380000 | 1).to_le_bytes());
        let mut out = Vec::new();
        p.render(
            &mut out,
            &rec,
            Endian::Little,
            &Ctx {
                long_size: 8,
                kallsyms: &k,
            },
            &mut Vec::new(),
            &mut Vec::new(),
        );
        assert!(String::from_utf8(out)
            .unwrap()
            .ends_with("idx=23 flags=D|P|I"));
        let text = "name: timer_start\nID: 9\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:unsigned int flags;\toffset:8;\tsize:4;\tsigned:0;\nprint fmt: \"idx=%u flags=%s\", REC->flags >> 22, __print_flags(REC->flags & (0x00040000 | 0x00080000 | 0x00100000 | 0x00200000), \"|\", { 0x00040000, \"M\" }, { 0x00080000, \"D\" }, { 0x00100000, \"P\" }, { 0x00200000, \"I\" })\n";
        let f = EventFormat::parse("timer", text, 8).unwrap();
        let p = PrintFmt::compile(&f, 8).unwrap();
        let k = Kallsyms::default();
        let mut rec = vec![0u8; 12];
        rec[8..12].copy_from_slice(&((23u32 << 22) | 0x380000 | 1).to_le_bytes());
        let mut out = Vec::new();
        p.render(
            &mut out,
            &rec,
            Endian::Little,
            &Ctx {
                long_size: 8,
                kallsyms: &k,
            },
            &mut Vec::new(),
            &mut Vec::new(),
        );
        assert_eq!(String::from_utf8(out).unwrap(), "idx=23 flags=D|P|I");
    }
}
