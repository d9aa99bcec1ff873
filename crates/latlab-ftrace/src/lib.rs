//! Pure decoders for Linux ftrace data: bytes in, events out.
//!
//! - [`page`]: ring-buffer pages as `trace_pipe_raw` delivers them (every
//!   header type: data, TIME_EXTEND, absolute TIME_STAMP, padding, and the
//!   missed-events flags of the commit word; 64- and 32-bit page layouts).
//! - [`format`]: event `format` files and field extraction (numbers of every
//!   width, signed or not, strings, `__data_loc`/`__rel_loc`, arrays, both
//!   byte orders), and the `header_page` layout.
//! - [`printfmt`]: the `print fmt` of a format file, compiled once and
//!   evaluated per record.
//! - [`dat`]: trace-cmd `.dat` files, versions 6 and 7 (zstd/zlib compressed),
//!   and [`stream`]: a time-ordered merge of all CPUs with bounded memory;
//!   [`compress`]: the block decompression both use.
//! - [`render`]: `trace-cmd report`-style text.
//! - [`text`]: ftrace text (tracefs `trace`, `trace-cmd report` output) and
//!   LTTng CTF through the `babeltrace2` program.
//!
//! The core decoders do no I/O; [`DatFile::open`] and the text readers are
//! thin layers on top.
//!
//! # Example
//!
//! Decode a hand-built page holding one `sched_waking` record:
//!
//! ```
//! use latlab_ftrace::format::{EventFormat, PageLayout, Value};
//! use latlab_ftrace::page::{Page, PageBuilder};
//! use latlab_ftrace::Endian;
//!
//! let format = EventFormat::parse("sched", "name: sched_waking
//! ID: 7
//! format:
//! \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
//! \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
//!
//! \tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;
//! print fmt: \"pid=%d\", REC->pid
//! ", 8)?;
//!
//! let mut record = vec![7, 0, 0, 0, 1, 0, 0, 0];
//! record.extend_from_slice(&42i32.to_le_bytes());
//! let page = PageBuilder::new(Endian::Little, PageLayout::LP64, 4096, 1_000)
//!     .time_extend(5_000_000_000)
//!     .event(10, &record, false)
//!     .build();
//!
//! let page = Page::parse(&page, &PageLayout::LP64, Endian::Little)?;
//! let rec = page.records().next().unwrap()?;
//! assert_eq!(rec.timestamp, 5_000_001_010);
//! let pid = format.field("pid").unwrap().value(rec.data, Endian::Little);
//! assert_eq!(pid, Some(Value::Int(42)));
//! # Ok::<(), latlab_ftrace::Error>(())
//! ```
#![warn(missing_docs)]

pub mod compress;
pub mod dat;
pub mod endian;
pub mod error;
pub mod filter;
pub mod format;
pub mod listing;
pub mod page;
pub(crate) mod printf;
pub mod printfmt;
pub mod render;
pub mod stats;
pub mod stream;
pub mod symbols;
pub mod text;
pub mod text_listing;
pub mod view;

pub use dat::{DatFile, Meta};
pub use endian::Endian;
pub use error::{Error, Result};
pub use stream::{CommTracker, Event, Events, OwnedEvent};
pub use text::TextEvent;
pub use view::{for_each_event, EventView, TraceKind};
