//! Byte order and bounds-checked reads.

use crate::error::{Error, Result};

/// Byte order of the traced machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Least significant byte first (x86, most arm64).
    Little,
    /// Most significant byte first.
    Big,
}

impl Endian {
    /// The byte order of the machine running this code.
    pub const fn native() -> Self {
        if cfg!(target_endian = "big") {
            Endian::Big
        } else {
            Endian::Little
        }
    }

    /// Reads an unsigned integer of 1, 2, 4 or 8 bytes (other sizes: the low
    /// `min(len, 8)` bytes in this byte order).
    #[inline]
    pub fn uint(self, b: &[u8]) -> u64 {
        match (b.len(), self) {
            (1, _) => b[0] as u64,
            (2, Endian::Little) => u16::from_le_bytes([b[0], b[1]]) as u64,
            (2, Endian::Big) => u16::from_be_bytes([b[0], b[1]]) as u64,
            (4, Endian::Little) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
            (4, Endian::Big) => u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64,
            (8, Endian::Little) => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
            (8, Endian::Big) => u64::from_be_bytes(b.try_into().unwrap_or([0; 8])),
            (n, Endian::Little) => b[..n.min(8)]
                .iter()
                .rev()
                .fold(0u64, |acc, &x| (acc << 8) | x as u64),
            (n, Endian::Big) => b[..n.min(8)]
                .iter()
                .fold(0u64, |acc, &x| (acc << 8) | x as u64),
        }
    }

    /// Reads a signed integer of `b.len()` bytes, sign-extended to 64 bits.
    #[inline]
    pub fn int(self, b: &[u8]) -> i64 {
        let n = b.len().min(8);
        let v = self.uint(b);
        if n == 0 || n >= 8 {
            v as i64
        } else {
            let shift = 64 - 8 * n as u32;
            ((v << shift) as i64) >> shift
        }
    }
}

/// A cursor over a byte slice whose reads fail with the absolute offset.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    pub(crate) endian: Endian,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8], base: u64, endian: Endian) -> Self {
        Reader {
            data,
            pos: 0,
            base,
            endian,
        }
    }

    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        match end {
            Some(end) => {
                let s = &self.data[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(Error::Truncated {
                offset: self.offset(),
                what,
                need: (n - (self.data.len() - self.pos)) as u64,
            }),
        }
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.bytes(1, what)?[0])
    }
    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16> {
        Ok(self.endian.uint(self.bytes(2, what)?) as u16)
    }
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(self.endian.uint(self.bytes(4, what)?) as u32)
    }
    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(self.endian.uint(self.bytes(8, what)?))
    }

    /// A NUL-terminated string (the NUL is consumed, not returned).
    pub(crate) fn cstr(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => Err(Error::Truncated {
                offset: self.offset(),
                what,
                need: 1,
            }),
        }
    }

    /// A length read from the file, checked against what remains.
    pub(crate) fn sized(&mut self, len: u64, what: &'static str) -> Result<&'a [u8]> {
        let remaining = (self.data.len() - self.pos) as u64;
        if len > remaining {
            return Err(Error::Truncated {
                offset: self.offset(),
                what,
                need: len - remaining,
            });
        }
        self.bytes(len as usize, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_extension_for_every_width() {
        assert_eq!(Endian::Little.int(&[0xff]), -1);
        assert_eq!(Endian::Little.int(&[0xfe, 0xff]), -2);
        assert_eq!(Endian::Big.int(&[0xff, 0xfe]), -2);
        assert_eq!(Endian::Little.int(&[0, 0, 0, 0x80]), i32::MIN as i64);
        assert_eq!(Endian::Big.int(&[0x80, 0, 0, 0]), i32::MIN as i64);
        assert_eq!(
            Endian::Little.int(&[1, 0, 0, 0, 0, 0, 0, 0x80]),
            i64::MIN + 1
        );
        assert_eq!(Endian::Little.uint(&[0x34, 0x12]), 0x1234);
        assert_eq!(Endian::Big.uint(&[0x12, 0x34, 0x56]), 0x123456);
        assert_eq!(Endian::Little.int(&[0xff, 0xff, 0x7f]), 0x7fffff);
    }

    #[test]
    fn reader_reports_offset_of_truncation() {
        let mut r = Reader::new(&[1, 2, 3], 100, Endian::Little);
        assert_eq!(r.u16("a").unwrap(), 0x0201);
        match r.u32("b") {
            Err(Error::Truncated { offset, need, .. }) => {
                assert_eq!(offset, 102);
                assert_eq!(need, 3);
            }
            other => panic!("expected truncation, got {other:?}"),
        }
    }
}
