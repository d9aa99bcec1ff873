//! Event `format` files (`events/<system>/<event>/format`) and `header_page`.
//!
//! A format file names each field of an event record with its C type,
//! byte offset, size and signedness, followed by the kernel's `print fmt`.

use crate::endian::Endian;
use crate::error::{Error, Result};

/// How a field's bytes are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A number of `size` bytes.
    Scalar,
    /// A fixed-size `char` array holding a NUL-padded string.
    String,
    /// A fixed-size array of `len` elements of `elem_size` bytes.
    Array {
        /// Number of elements.
        len: usize,
        /// Size of one element.
        elem_size: usize,
    },
    /// `__data_loc`: a 32-bit word (length << 16 | offset from record start).
    DataLoc {
        /// Size of one element (1 for strings).
        elem_size: usize,
        /// Whether the payload is a string.
        string: bool,
    },
    /// `__rel_loc`: like `__data_loc` but the offset counts from the end of the word.
    RelLoc {
        /// Size of one element.
        elem_size: usize,
        /// Whether the payload is a string.
        string: bool,
    },
    /// A field of size 0 that takes the rest of the record (e.g. `print`'s `buf`).
    Tail {
        /// Size of one element.
        elem_size: usize,
        /// Whether the payload is a string.
        string: bool,
    },
}

/// One field of an event record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Field name (`prev_pid`).
    pub name: String,
    /// C type as written in the format file, without the array suffix (`pid_t`).
    pub type_name: String,
    /// Byte offset in the record.
    pub offset: usize,
    /// Size in bytes as declared.
    pub size: usize,
    /// Whether numbers are signed.
    pub signed: bool,
    /// Layout.
    pub kind: FieldKind,
}

/// A field's decoded value, borrowing from the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// A signed number.
    Int(i64),
    /// An unsigned number.
    UInt(u64),
    /// A string (bytes up to the first NUL).
    Str(&'a [u8]),
    /// An array of numbers.
    Array {
        /// The raw element bytes.
        data: &'a [u8],
        /// Size of one element.
        elem_size: usize,
        /// Whether elements are signed.
        signed: bool,
        /// Byte order of the elements.
        endian: Endian,
    },
}

impl<'a> Value<'a> {
    /// The value as an unsigned number (strings and arrays: `None`).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Int(v) => Some(v as u64),
            Value::UInt(v) => Some(v),
            _ => None,
        }
    }
    /// The value as a signed number (strings and arrays: `None`).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v),
            Value::UInt(v) => Some(v as i64),
            _ => None,
        }
    }
    /// The value as text (numbers are not converted; strings lossily as UTF-8).
    pub fn as_str(&self) -> Option<std::borrow::Cow<'a, str>> {
        match *self {
            Value::Str(s) => Some(String::from_utf8_lossy(s)),
            _ => None,
        }
    }
    /// Element `i` of an array value.
    pub fn index(&self, i: usize) -> Option<Value<'a>> {
        match *self {
            Value::Array {
                data,
                elem_size,
                signed,
                endian,
            } => {
                let b = data.get(i * elem_size..(i + 1) * elem_size)?;
                Some(if signed {
                    Value::Int(endian.int(b))
                } else {
                    Value::UInt(endian.uint(b))
                })
            }
            Value::Str(s) => s.get(i).map(|&c| Value::UInt(c as u64)),
            _ => None,
        }
    }
}

fn trim_nul(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(n) => &b[..n],
        None => b,
    }
}

impl Field {
    /// Decodes this field from an event record; `None` when the record is too short
    /// or a `__data_loc` points outside it.
    pub fn value<'a>(&self, data: &'a [u8], endian: Endian) -> Option<Value<'a>> {
        let fixed = || data.get(self.offset..self.offset.checked_add(self.size)?);
        let dynamic = |start: usize, len: usize, elem_size: usize, string: bool| {
            let b = data.get(start..start.checked_add(len)?)?;
            Some(if string {
                Value::Str(trim_nul(b))
            } else {
                Value::Array {
                    data: b,
                    elem_size: elem_size.max(1),
                    signed: self.signed,
                    endian,
                }
            })
        };
        match self.kind {
            FieldKind::Scalar => {
                let b = fixed()?;
                Some(if self.signed {
                    Value::Int(endian.int(b))
                } else {
                    Value::UInt(endian.uint(b))
                })
            }
            FieldKind::String => Some(Value::Str(trim_nul(fixed()?))),
            FieldKind::Array { elem_size, .. } => Some(Value::Array {
                data: fixed()?,
                elem_size: elem_size.max(1),
                signed: self.signed,
                endian,
            }),
            FieldKind::DataLoc { elem_size, string } | FieldKind::RelLoc { elem_size, string } => {
                let w = endian.uint(data.get(self.offset..self.offset + 4)?) as usize;
                let mut start = w & 0xffff;
                if matches!(self.kind, FieldKind::RelLoc { .. }) {
                    start += self.offset + self.size.max(4);
                }
                dynamic(start, w >> 16, elem_size, string)
            }
            FieldKind::Tail { elem_size, string } => {
                let len = data.len().checked_sub(self.offset)?;
                dynamic(self.offset, len, elem_size, string)
            }
        }
    }
}

/// A parsed event `format` file.
#[derive(Debug, Clone)]
pub struct EventFormat {
    /// Event id (`common_type` of its records).
    pub id: u16,
    /// Subsystem (`sched`, `ftrace`, ...).
    pub system: String,
    /// Event name (`sched_switch`).
    pub name: String,
    /// The `common_*` fields.
    pub common_fields: Vec<Field>,
    /// The event's own fields.
    pub fields: Vec<Field>,
    /// The text after `print fmt: `.
    pub print_fmt: String,
}

impl EventFormat {
    /// Parses a format file; `system` is the directory it came from.
    ///
    /// `long_size` (4 or 8) sizes `long` elements of zero-size tail arrays.
    pub fn parse(system: &str, text: &str, long_size: usize) -> Result<Self> {
        let mut name = None;
        let mut id = None;
        let mut common_fields = Vec::new();
        let mut fields = Vec::new();
        let mut print_fmt = String::new();
        let mut in_common = true;
        for (i, line) in text.lines().enumerate() {
            let err = |msg: String| Error::Format {
                event: format!("{system}/{}", name.as_deref().unwrap_or("?")),
                line: i + 1,
                msg,
            };
            let t = line.trim();
            if let Some(v) = t.strip_prefix("name:") {
                name = Some(v.trim().to_string());
            } else if let Some(v) = t.strip_prefix("ID:") {
                let v: u32 = v.trim().parse().map_err(|_| err(format!("bad ID {v:?}")))?;
                id = Some(u16::try_from(v).map_err(|_| err(format!("ID {v} above 65535")))?);
            } else if t.starts_with("field:") || t.starts_with("field ") {
                let f = parse_field_line(t, long_size).map_err(err)?;
                if in_common && f.name.starts_with("common_") {
                    common_fields.push(f);
                } else {
                    in_common = false;
                    fields.push(f);
                }
            } else if let Some(v) = t.strip_prefix("print fmt:") {
                print_fmt = v.trim().to_string();
            } else if t.is_empty() && !common_fields.is_empty() {
                in_common = false;
            }
        }
        let name = name.ok_or_else(|| Error::Format {
            event: format!("{system}/?"),
            line: 1,
            msg: "no `name:` line".into(),
        })?;
        let id = id.ok_or_else(|| Error::Format {
            event: format!("{system}/{name}"),
            line: 1,
            msg: "no `ID:` line".into(),
        })?;
        Ok(EventFormat {
            id,
            system: system.to_string(),
            name,
            common_fields,
            fields,
            print_fmt,
        })
    }

    /// Finds an event field by name (event fields first, then `common_*`).
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields
            .iter()
            .chain(self.common_fields.iter())
            .find(|f| f.name == name)
    }
}

/// `s.trim_start_matches(prefix)` without building a substring searcher
/// (which costs more than the whole match for these short prefixes).
fn strip_all<'a>(mut s: &'a str, prefix: &str) -> &'a str {
    while let Some(rest) = s.strip_prefix(prefix) {
        s = rest;
    }
    s
}

/// `s.trim_end_matches(suffix)`, likewise.
fn strip_all_end<'a>(mut s: &'a str, suffix: &str) -> &'a str {
    while let Some(rest) = s.strip_suffix(suffix) {
        s = rest;
    }
    s
}

fn elem_size_of(type_name: &str, long_size: usize) -> usize {
    let t = strip_all(
        strip_all(strip_all(type_name, "const "), "unsigned "),
        "signed ",
    )
    .trim();
    if t.contains('*') {
        return long_size;
    }
    match t {
        "char" | "u8" | "s8" | "bool" | "__u8" | "__s8" => 1,
        "short" | "u16" | "s16" | "__u16" | "__s16" => 2,
        "int" | "u32" | "s32" | "__u32" | "__s32" | "pid_t" => 4,
        "long long" | "u64" | "s64" | "__u64" | "__s64" => 8,
        "long" => long_size,
        _ => 1,
    }
}

fn is_char_type(t: &str) -> bool {
    let t = strip_all(t, "const ").trim();
    t == "char" || t == "unsigned char" || t == "signed char"
}

/// Parses one `field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;` line.
fn parse_field_line(line: &str, long_size: usize) -> std::result::Result<Field, String> {
    let mut decl = None;
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for part in line.split(';') {
        let part = part.trim();
        if let Some(v) = part.strip_prefix("field:") {
            decl = Some(v.trim());
        } else if let Some(v) = part.strip_prefix("field ") {
            decl = Some(v.trim());
        } else if let Some(v) = part.strip_prefix("offset:") {
            offset = Some(
                v.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("bad offset {v:?}"))?,
            );
        } else if let Some(v) = part.strip_prefix("size:") {
            size = Some(
                v.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("bad size {v:?}"))?,
            );
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let decl = decl.ok_or("no field declaration")?;
    let offset = offset.ok_or("no offset")?;
    let size = size.ok_or("no size")?;
    if offset > 1 << 20 || size > 1 << 20 {
        return Err(format!("offset {offset} / size {size} out of range"));
    }
    let (data_loc, rel_loc, decl) = if let Some(d) = decl.strip_prefix("__data_loc ") {
        (true, false, d.trim())
    } else if let Some(d) = decl.strip_prefix("__rel_loc ") {
        (false, true, d.trim())
    } else {
        (false, false, decl)
    };
    // Split off a trailing `[N]` that belongs to the name.
    let mut array: Option<Option<usize>> = None;
    let mut head = decl;
    if decl.ends_with(']') {
        if let Some(open) = decl.rfind('[') {
            let inner = decl[open + 1..decl.len() - 1].trim();
            let before = decl[..open].trim_end();
            // `char[] name` (data_loc) has the brackets in the type, not after the name.
            head = before;
            array = Some(inner.parse::<usize>().ok());
        }
    }
    let (type_name, name) = match head.rfind(|c: char| c.is_whitespace() || c == '*') {
        Some(p) => (head[..=p].trim(), head[p + 1..].trim()),
        None => ("", head),
    };
    if name.is_empty() {
        return Err(format!("no field name in {decl:?}"));
    }
    let name = name.to_string();
    let base_type = strip_all_end(type_name, "[]").trim().to_string();
    let string_type = is_char_type(&base_type);
    let elem = elem_size_of(&base_type, long_size);
    let kind = if data_loc || rel_loc {
        let elem_size = if string_type { 1 } else { elem };
        if data_loc {
            FieldKind::DataLoc {
                elem_size,
                string: string_type,
            }
        } else {
            FieldKind::RelLoc {
                elem_size,
                string: string_type,
            }
        }
    } else if size == 0 {
        FieldKind::Tail {
            elem_size: elem,
            string: string_type,
        }
    } else if let Some(len) = array {
        if string_type {
            FieldKind::String
        } else {
            let len = len.unwrap_or(size / elem.max(1));
            let elem_size = size.checked_div(len).unwrap_or(elem);
            FieldKind::Array {
                len,
                elem_size: elem_size.max(1),
            }
        }
    } else {
        FieldKind::Scalar
    };
    Ok(Field {
        name,
        type_name: base_type,
        offset,
        size,
        signed,
        kind,
    })
}

/// Where the page header fields sit, from the `header_page` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// Offset of the 64-bit page timestamp.
    pub timestamp_offset: usize,
    /// Offset of the commit word.
    pub commit_offset: usize,
    /// Size of the commit word (8 on 64-bit kernels, 4 on 32-bit).
    pub commit_size: usize,
    /// Offset of the first event.
    pub data_offset: usize,
}

impl PageLayout {
    /// The layout of a 64-bit kernel.
    pub const LP64: PageLayout = PageLayout {
        timestamp_offset: 0,
        commit_offset: 8,
        commit_size: 8,
        data_offset: 16,
    };
    /// The layout of a 32-bit kernel.
    pub const ILP32: PageLayout = PageLayout {
        timestamp_offset: 0,
        commit_offset: 8,
        commit_size: 4,
        data_offset: 12,
    };

    /// Parses the `header_page` format text.
    pub fn parse(text: &str) -> Result<Self> {
        let mut ts = None;
        let mut commit = None;
        let mut data = None;
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if !t.starts_with("field") {
                continue;
            }
            let f = parse_field_line(t, 8).map_err(|msg| Error::Format {
                event: "header_page".into(),
                line: i + 1,
                msg,
            })?;
            match f.name.as_str() {
                "timestamp" => ts = Some(f),
                "commit" => commit = Some(f),
                "data" => data = Some(f),
                _ => {}
            }
        }
        let missing = |what: &str| Error::Format {
            event: "header_page".into(),
            line: 1,
            msg: format!("no `{what}` field"),
        };
        let ts = ts.ok_or_else(|| missing("timestamp"))?;
        let commit = commit.ok_or_else(|| missing("commit"))?;
        let data = data.ok_or_else(|| missing("data"))?;
        if !matches!(commit.size, 4 | 8) || ts.size != 8 {
            return Err(Error::Format {
                event: "header_page".into(),
                line: 1,
                msg: format!(
                    "unexpected sizes: timestamp {} commit {} (want 8 and 4 or 8)",
                    ts.size, commit.size
                ),
            });
        }
        Ok(PageLayout {
            timestamp_offset: ts.offset,
            commit_offset: commit.offset,
            commit_size: commit.size,
            data_offset: data.offset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch
ID: 372
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:__data_loc char[] name;\toffset:28;\tsize:4;\tsigned:0;
\tfield:__rel_loc char[] rel;\toffset:32;\tsize:4;\tsigned:0;
\tfield:u16 arr[3];\toffset:36;\tsize:6;\tsigned:0;
\tfield:s8 small;\toffset:42;\tsize:1;\tsigned:1;
\tfield:u32 buf[];\toffset:44;\tsize:0;\tsigned:0;

print fmt: \"prev_comm=%s\", REC->prev_comm
";

    #[test]
    fn parses_fields_of_every_kind() {
        let f = EventFormat::parse("sched", SWITCH, 8).unwrap();
        assert_eq!(f.id, 372);
        assert_eq!(f.common_fields.len(), 4);
        assert_eq!(f.fields.len(), 7);
        assert_eq!(f.field("prev_comm").unwrap().kind, FieldKind::String);
        assert_eq!(f.field("prev_pid").unwrap().type_name, "pid_t");
        assert_eq!(
            f.field("name").unwrap().kind,
            FieldKind::DataLoc {
                elem_size: 1,
                string: true
            }
        );
        assert_eq!(
            f.field("arr").unwrap().kind,
            FieldKind::Array {
                len: 3,
                elem_size: 2
            }
        );
        assert_eq!(
            f.field("buf").unwrap().kind,
            FieldKind::Tail {
                elem_size: 4,
                string: false
            }
        );
        assert_eq!(f.print_fmt, "\"prev_comm=%s\", REC->prev_comm");
    }

    #[test]
    fn extracts_values_little_and_big_endian() {
        let f = EventFormat::parse("sched", SWITCH, 8).unwrap();
        for endian in [Endian::Little, Endian::Big] {
            let mut rec = vec![0u8; 60];
            rec[8..11].copy_from_slice(b"abc");
            let put32 = |rec: &mut Vec<u8>, at: usize, v: u32| {
                let b = match endian {
                    Endian::Little => v.to_le_bytes(),
                    Endian::Big => v.to_be_bytes(),
                };
                rec[at..at + 4].copy_from_slice(&b);
            };
            put32(&mut rec, 24, (-7i32) as u32);
            // data_loc: "hi\0" at offset 48, length 3
            put32(&mut rec, 28, (3 << 16) | 48);
            rec[48..51].copy_from_slice(b"hi\0");
            // rel_loc: offset relative to end of the word (36): 52 - 36 = 16
            put32(&mut rec, 32, (2 << 16) | 16);
            rec[52..54].copy_from_slice(b"yo");
            let put16 = |rec: &mut Vec<u8>, at: usize, v: u16| {
                let b = match endian {
                    Endian::Little => v.to_le_bytes(),
                    Endian::Big => v.to_be_bytes(),
                };
                rec[at..at + 2].copy_from_slice(&b);
            };
            put16(&mut rec, 36, 1);
            put16(&mut rec, 38, 0xffff);
            rec[42] = 0x80;
            let v = |n: &str| f.field(n).unwrap().value(&rec, endian).unwrap();
            assert_eq!(v("prev_comm"), Value::Str(b"abc"));
            assert_eq!(v("prev_pid"), Value::Int(-7));
            assert_eq!(v("name"), Value::Str(b"hi"));
            assert_eq!(v("rel"), Value::Str(b"yo"));
            assert_eq!(v("arr").index(0), Some(Value::UInt(1)));
            assert_eq!(v("arr").index(1), Some(Value::UInt(0xffff)));
            assert_eq!(v("arr").index(3), None);
            assert_eq!(v("small"), Value::Int(-128));
            match v("buf") {
                Value::Array {
                    data, elem_size, ..
                } => {
                    assert_eq!(data.len(), 16);
                    assert_eq!(elem_size, 4);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn data_loc_outside_record_is_none() {
        let f = EventFormat::parse("sched", SWITCH, 8).unwrap();
        let mut rec = vec![0u8; 40];
        rec[28..32].copy_from_slice(&((200u32 << 16) | 30).to_le_bytes());
        assert_eq!(f.field("name").unwrap().value(&rec, Endian::Little), None);
    }

    #[test]
    fn header_page_64_and_32_bit() {
        let h64 = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;
";
        assert_eq!(PageLayout::parse(h64).unwrap(), PageLayout::LP64);
        let h32 = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;
";
        assert_eq!(PageLayout::parse(h32).unwrap(), PageLayout::ILP32);
        assert!(PageLayout::parse("garbage").is_err());
    }
}
