//! Ring-buffer pages as the kernel writes them to `trace_pipe_raw`.
//!
//! A page is a header (64-bit timestamp, commit word) followed by `commit`
//! bytes of events. Each event starts with a 32-bit word holding a 5-bit
//! `type_len` and a 27-bit time delta:
//!
//! | type_len | meaning |
//! |---|---|
//! | 0 | data; length in the next 32-bit word (including that word) |
//! | 1..=28 | data of `type_len * 4` bytes |
//! | 29 | padding (a discarded event; delta 0 means "rest of page unused") |
//! | 30 | TIME_EXTEND: delta += next word << 27 |
//! | 31 | TIME_STAMP: absolute time = next word << 27 + delta |
//!
//! The top bits of the commit word flag lost events: bit 31 "events were
//! missed before this page", bit 30 "their count is stored after the data".

use crate::endian::Endian;
use crate::error::{Error, Result};
use crate::format::PageLayout;

/// Flag in the commit word: events were lost before this page.
pub const MISSED_EVENTS: u64 = 1 << 31;
/// Flag in the commit word: the number of lost events is stored after the data.
pub const MISSED_STORED: u64 = 1 << 30;
/// Bits of the commit word that hold the data length.
pub const COMMIT_MASK: u64 = (1 << 27) - 1;

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const TS_SHIFT: u32 = 27;
const TS_MSB: u64 = 0xf8 << 56;

/// Events lost (ring-buffer overrun) before a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Missed {
    /// Nothing was lost.
    #[default]
    None,
    /// Events were lost; the kernel did not say how many.
    Unknown,
    /// This many events were lost.
    Count(u64),
}

/// A decoded page header with access to its events.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    data: &'a [u8],
    endian: Endian,
    data_offset: usize,
    /// Timestamp of the page (base for the first event's delta).
    pub timestamp: u64,
    /// Bytes of event data in the page.
    pub commit: usize,
    /// Events lost before this page.
    pub missed: Missed,
}

/// One event record in a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord<'a> {
    /// Absolute timestamp in trace-clock units (ns for most clocks).
    pub timestamp: u64,
    /// The record payload (starts with `common_type`).
    pub data: &'a [u8],
    /// Offset of the record header within the page.
    pub offset: usize,
}

impl<'a> Page<'a> {
    /// Decodes the header of one page. Offsets in errors are relative to the page start.
    pub fn parse(page: &'a [u8], layout: &PageLayout, endian: Endian) -> Result<Self> {
        let need = layout
            .data_offset
            .max(layout.commit_offset + layout.commit_size)
            .max(layout.timestamp_offset + 8);
        if page.len() < need {
            return Err(Error::Truncated {
                offset: 0,
                what: "ring-buffer page header",
                need: (need - page.len()) as u64,
            });
        }
        let timestamp = endian.uint(&page[layout.timestamp_offset..layout.timestamp_offset + 8]);
        let raw =
            endian.uint(&page[layout.commit_offset..layout.commit_offset + layout.commit_size]);
        let commit = (raw & COMMIT_MASK) as usize;
        let room = page.len() - layout.data_offset;
        if commit > room {
            return Err(Error::Corrupt {
                offset: layout.commit_offset as u64,
                what: format!("page commit {commit} larger than the page's {room} data bytes"),
            });
        }
        let missed = if raw & MISSED_EVENTS == 0 {
            Missed::None
        } else if raw & MISSED_STORED != 0 {
            let at = layout.data_offset + commit;
            match page.get(at..at + layout.commit_size) {
                Some(b) => Missed::Count(endian.uint(b)),
                None => Missed::Unknown,
            }
        } else {
            Missed::Unknown
        };
        Ok(Page {
            data: &page[..layout.data_offset + commit],
            endian,
            data_offset: layout.data_offset,
            timestamp,
            commit,
            missed,
        })
    }

    /// The page bytes up to the end of the committed data.
    pub fn committed(&self) -> &'a [u8] {
        self.data
    }

    /// Offset of the first event in the page.
    pub fn data_offset(&self) -> usize {
        self.data_offset
    }

    /// Iterates over the data records of the page with absolute timestamps.
    pub fn records(&self) -> Records<'a> {
        Records {
            data: self.data,
            endian: self.endian,
            pos: self.data_offset,
            ts: self.timestamp,
        }
    }
}

/// Iterator over the data records of a page (see [`Page::records`]).
#[derive(Debug, Clone)]
pub struct Records<'a> {
    data: &'a [u8],
    endian: Endian,
    pos: usize,
    ts: u64,
}

impl<'a> Records<'a> {
    /// Offset of the next record header within the page.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Timestamp of the last record read (the base for the next delta).
    pub fn timestamp(&self) -> u64 {
        self.ts
    }

    fn word(&self, at: usize) -> Option<u32> {
        self.data
            .get(at..at + 4)
            .map(|b| self.endian.uint(b) as u32)
    }

    /// The data event at `at` whose `len` bytes of payload begin at `start`,
    /// `delta` ns after the previous one; an error if it runs past the commit.
    fn event(
        &mut self,
        at: usize,
        start: usize,
        len: usize,
        delta: u64,
    ) -> Option<Result<RawRecord<'a>>> {
        let end = start + len;
        if end > self.data.len() {
            return self.corrupt(
                at,
                format!(
                    "event of {len} bytes runs past the page commit ({} bytes left)",
                    self.data.len() - start
                ),
            );
        }
        self.ts = self.ts.wrapping_add(delta);
        self.pos = end;
        Some(Ok(RawRecord {
            timestamp: self.ts,
            data: &self.data[start..end],
            offset: at,
        }))
    }

    fn corrupt(&mut self, at: usize, what: String) -> Option<Result<RawRecord<'a>>> {
        self.pos = self.data.len();
        Some(Err(Error::Corrupt {
            offset: at as u64,
            what,
        }))
    }

    fn truncated(&mut self, at: usize, what: &'static str) -> Option<Result<RawRecord<'a>>> {
        let need = (at + 8).saturating_sub(self.data.len()) as u64;
        self.pos = self.data.len();
        Some(Err(Error::Truncated {
            offset: at as u64,
            what,
            need: need.max(1),
        }))
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RawRecord<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let at = self.pos;
            if at >= self.data.len() {
                return None;
            }
            let Some(w) = self.word(at) else {
                return self.truncated(at, "event header");
            };
            let (type_len, delta) = match self.endian {
                Endian::Little => (w & 0x1f, (w >> 5) as u64),
                Endian::Big => (w >> 27, (w & 0x07ff_ffff) as u64),
            };
            match type_len {
                TYPE_PADDING => {
                    if delta == 0 {
                        // Null event: the rest of the page is unused.
                        self.pos = self.data.len();
                        return None;
                    }
                    let Some(len) = self.word(at + 4) else {
                        return self.truncated(at, "padding length");
                    };
                    self.ts = self.ts.wrapping_add(delta);
                    let next = at + 4 + len as usize;
                    if next > self.data.len() || len < 4 {
                        return self.corrupt(
                            at,
                            format!("padding of {len} bytes runs past the page commit"),
                        );
                    }
                    self.pos = next;
                }
                TYPE_TIME_EXTEND => {
                    let Some(ext) = self.word(at + 4) else {
                        return self.truncated(at, "TIME_EXTEND");
                    };
                    self.ts = self.ts.wrapping_add(((ext as u64) << TS_SHIFT) + delta);
                    self.pos = at + 8;
                }
                TYPE_TIME_STAMP => {
                    let Some(ext) = self.word(at + 4) else {
                        return self.truncated(at, "TIME_STAMP");
                    };
                    let mut abs = ((ext as u64) << TS_SHIFT) + delta;
                    // The kernel stores only 59 bits; the top bits come from the current time.
                    if self.ts & TS_MSB != 0 {
                        abs |= self.ts & TS_MSB;
                        if abs < self.ts {
                            abs = abs.wrapping_add(1 << 59);
                        }
                    }
                    self.ts = abs;
                    self.pos = at + 8;
                }
                0 => {
                    let Some(len) = self.word(at + 4) else {
                        return self.truncated(at, "event length");
                    };
                    if len < 4 {
                        return self.corrupt(at, format!("event length {len} below 4"));
                    }
                    let dlen = ((len as usize - 4) + 3) & !3;
                    let start = at + 8;
                    return self.event(at, start, dlen, delta);
                }
                n => {
                    let start = at + 4;
                    return self.event(at, start, n as usize * 4, delta);
                }
            }
        }
    }
}

/// Builds ring-buffer pages byte by byte (for tests, fuzzing and writers).
#[derive(Debug, Clone)]
pub struct PageBuilder {
    endian: Endian,
    layout: PageLayout,
    page_size: usize,
    timestamp: u64,
    body: Vec<u8>,
    flags: u64,
    stored_missed: Option<u64>,
}

impl PageBuilder {
    /// Starts an empty page.
    pub fn new(endian: Endian, layout: PageLayout, page_size: usize, timestamp: u64) -> Self {
        PageBuilder {
            endian,
            layout,
            page_size,
            timestamp,
            body: Vec::new(),
            flags: 0,
            stored_missed: None,
        }
    }

    fn word(&mut self, w: u32) {
        let b = match self.endian {
            Endian::Little => w.to_le_bytes(),
            Endian::Big => w.to_be_bytes(),
        };
        self.body.extend_from_slice(&b);
    }

    fn header(&mut self, type_len: u32, delta: u32) {
        assert!(delta < 1 << 27 && type_len < 32);
        let w = match self.endian {
            Endian::Little => type_len | (delta << 5),
            Endian::Big => (type_len << 27) | delta,
        };
        self.word(w);
    }

    /// Appends a data event; `payload` is padded to 4 bytes. Uses the compact
    /// header (type_len = words) when `long_form` is false and it fits.
    pub fn event(&mut self, delta: u32, payload: &[u8], long_form: bool) -> &mut Self {
        let words = payload.len().div_ceil(4);
        if !long_form && (1..=28).contains(&words) {
            self.header(words as u32, delta);
        } else {
            self.header(0, delta);
            self.word(payload.len() as u32 + 4);
        }
        self.body.extend_from_slice(payload);
        self.body.resize(self.body.len().div_ceil(4) * 4, 0);
        self
    }

    /// Appends a TIME_EXTEND record adding `delta` (which may exceed 27 bits).
    pub fn time_extend(&mut self, delta: u64) -> &mut Self {
        self.header(TYPE_TIME_EXTEND, (delta & ((1 << 27) - 1)) as u32);
        self.word((delta >> 27) as u32);
        self
    }

    /// Appends an absolute TIME_STAMP record.
    pub fn time_stamp(&mut self, abs: u64) -> &mut Self {
        self.header(TYPE_TIME_STAMP, (abs & ((1 << 27) - 1)) as u32);
        self.word((abs >> 27) as u32);
        self
    }

    /// Appends padding (a discarded event) of `len` payload bytes with a time delta.
    pub fn padding(&mut self, delta: u32, len: u32) -> &mut Self {
        self.header(TYPE_PADDING, delta);
        self.word(len);
        self.body
            .extend(std::iter::repeat_n(0, (len as usize).saturating_sub(4)));
        self
    }

    /// Marks events as missed before this page (`Some(n)`: count stored).
    pub fn missed(&mut self, count: Option<u64>) -> &mut Self {
        self.flags |= MISSED_EVENTS;
        if let Some(n) = count {
            self.flags |= MISSED_STORED;
            self.stored_missed = Some(n);
        }
        self
    }

    /// Returns the page bytes (zero-filled to the page size).
    pub fn build(&self) -> Vec<u8> {
        let mut page = vec![0u8; self.page_size];
        let put = |page: &mut [u8], at: usize, size: usize, v: u64| {
            let b = match self.endian {
                Endian::Little => v.to_le_bytes(),
                Endian::Big => v.to_be_bytes(),
            };
            match self.endian {
                Endian::Little => page[at..at + size].copy_from_slice(&b[..size]),
                Endian::Big => page[at..at + size].copy_from_slice(&b[8 - size..]),
            }
        };
        put(&mut page, self.layout.timestamp_offset, 8, self.timestamp);
        let commit = self.body.len() as u64 | self.flags;
        put(
            &mut page,
            self.layout.commit_offset,
            self.layout.commit_size,
            commit,
        );
        let d = self.layout.data_offset;
        page[d..d + self.body.len()].copy_from_slice(&self.body);
        if let Some(n) = self.stored_missed {
            put(&mut page, d + self.body.len(), self.layout.commit_size, n);
        }
        page
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(page: &[u8], layout: PageLayout, endian: Endian) -> (Page<'_>, Vec<(u64, Vec<u8>)>) {
        let p = Page::parse(page, &layout, endian).unwrap();
        let recs = p
            .records()
            .map(|r| r.map(|r| (r.timestamp, r.data.to_vec())))
            .collect::<Result<Vec<_>>>()
            .unwrap();
        (p, recs)
    }

    #[test]
    fn every_header_type_64_and_32_bit_both_endians() {
        for layout in [PageLayout::LP64, PageLayout::ILP32] {
            for endian in [Endian::Little, Endian::Big] {
                let mut b = PageBuilder::new(endian, layout, 4096, 1_000);
                b.event(5, &[1, 2, 3, 4], false) // ts 1005
                    .time_extend(1 << 30) // +2^30
                    .event(7, &[9; 8], false) // ts 1005 + 2^30 + 7
                    .padding(3, 12) // discarded event, its delta counts
                    .event(1, &[7; 200], true) // long form, ts +1 +3
                    .time_stamp(5_000_000_000)
                    .event(2, &[8; 4], false);
                let page = b.build();
                let (p, recs) = decode(&page, layout, endian);
                assert_eq!(p.timestamp, 1_000);
                assert_eq!(p.missed, Missed::None);
                let ts: Vec<u64> = recs.iter().map(|r| r.0).collect();
                let t2 = 1005 + (1u64 << 30) + 7;
                assert_eq!(
                    ts,
                    vec![1005, t2, t2 + 3 + 1, 5_000_000_002],
                    "{layout:?} {endian:?}"
                );
                assert_eq!(recs[0].1, vec![1, 2, 3, 4]);
                assert_eq!(recs[1].1, vec![9; 8]);
                assert_eq!(recs[2].1, vec![7; 200]);
            }
        }
    }

    #[test]
    fn missed_events_flags() {
        for layout in [PageLayout::LP64, PageLayout::ILP32] {
            let mut b = PageBuilder::new(Endian::Little, layout, 256, 0);
            b.event(1, &[0; 4], false).missed(Some(42));
            let page = b.build();
            let (p, recs) = decode(&page, layout, Endian::Little);
            assert_eq!(p.missed, Missed::Count(42));
            assert_eq!(recs.len(), 1);
            let mut b = PageBuilder::new(Endian::Little, layout, 256, 0);
            b.event(1, &[0; 4], false).missed(None);
            let page = b.build();
            assert_eq!(
                Page::parse(&page, &layout, Endian::Little).unwrap().missed,
                Missed::Unknown
            );
        }
    }

    #[test]
    fn null_padding_ends_the_page() {
        let mut b = PageBuilder::new(Endian::Little, PageLayout::LP64, 128, 10);
        b.event(1, &[1; 4], false);
        let mut page = b.build();
        // Append a null event (padding, delta 0) and bump commit over it and junk.
        page[24..28].copy_from_slice(&29u32.to_le_bytes());
        page[28..32].copy_from_slice(&0xdead_beefu32.to_le_bytes());
        page[8..16].copy_from_slice(&16u64.to_le_bytes());
        let (_, recs) = decode(&page, PageLayout::LP64, Endian::Little);
        assert_eq!(recs.len(), 1);
    }

    #[test]
    fn corrupt_commit_and_lengths_are_errors_with_offsets() {
        let mut page = vec![0u8; 64];
        page[8..16].copy_from_slice(&100u64.to_le_bytes());
        match Page::parse(&page, &PageLayout::LP64, Endian::Little) {
            Err(Error::Corrupt { offset: 8, .. }) => {}
            other => panic!("{other:?}"),
        }
        // An event claiming 28 words in an 8-byte commit.
        page[8..16].copy_from_slice(&8u64.to_le_bytes());
        page[16..20].copy_from_slice(&28u32.to_le_bytes());
        let p = Page::parse(&page, &PageLayout::LP64, Endian::Little).unwrap();
        let errs: Vec<_> = p.records().collect();
        assert_eq!(errs.len(), 1);
        assert!(matches!(errs[0], Err(Error::Corrupt { offset: 16, .. })));
        // Too short for a header.
        assert!(matches!(
            Page::parse(&page[..10], &PageLayout::LP64, Endian::Little),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn time_stamp_keeps_top_bits() {
        let base = 0xf800_0000_0000_0000u64 + 100;
        let mut b = PageBuilder::new(Endian::Little, PageLayout::LP64, 128, base);
        b.time_stamp(500).event(0, &[0; 4], false);
        let page = b.build();
        let (_, recs) = decode(&page, PageLayout::LP64, Endian::Little);
        assert_eq!(recs[0].0, 0xf800_0000_0000_0000u64 + 500);
    }
}
