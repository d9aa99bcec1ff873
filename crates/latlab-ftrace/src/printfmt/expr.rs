//! The expression tree of a `print fmt` argument: C operators and the kernel
//! helpers it may call.

use crate::format::Field;

/// A C expression from a print fmt.
#[derive(Debug, Clone)]
pub(super) enum Expr {
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
pub(super) enum Op {
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
    pub(super) fn of(p: &str) -> Op {
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
pub(super) enum Helper {
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
    pub(super) fn of(name: &str) -> Helper {
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
