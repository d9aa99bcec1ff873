//! The listing of a text trace (ftrace text, LTTng CTF through
//! babeltrace2) as `latlab dump` prints it: each event the filter keeps,
//! one line each, or only counted for `--stats`.

use std::io::Write;
use std::path::Path;

use crate::filter::EventFilter;
use crate::listing::text_event_line;
use crate::stats::{TextCounter, TraceStats};
use crate::text::TextEvent;

/// Lists (or, with `stats`, counts) the events of a text trace that
/// `filter` keeps.
pub struct TextSink<'a> {
    filter: &'a EventFilter,
    stats: bool,
    line: Vec<u8>,
    counter: TextCounter,
}

impl<'a> TextSink<'a> {
    /// A listing of the events `filter` keeps; with `stats`, counted only.
    pub fn new(filter: &'a EventFilter, stats: bool) -> Self {
        TextSink {
            filter,
            stats,
            line: Vec::new(),
            counter: TextCounter::default(),
        }
    }

    /// Writes `ev`'s line to `out` (or counts it) when the filter keeps it.
    pub fn push(&mut self, ev: TextEvent, out: &mut impl Write) -> std::io::Result<()> {
        self.counter.lost_before(&ev);
        let kept = self
            .filter
            .event_ok(ev.system.as_deref().unwrap_or(""), &ev.name)
            && self.filter.cpu_ok(ev.cpu)
            && self.filter.time_ok(ev.ts);
        if !kept {
            return Ok(());
        }
        if self.stats {
            self.counter.count(&ev);
            return Ok(());
        }
        self.line.clear();
        text_event_line(&ev, &mut self.line);
        out.write_all(&self.line)
    }

    /// Ends the listing: with `stats`, writes the counts of the trace at
    /// `path` (its `format` named).
    pub fn finish(self, out: &mut impl Write, path: &Path, format: &str) -> std::io::Result<()> {
        if self.stats {
            write_stats(out, path, format, &self.counter.finish())?;
        }
        Ok(())
    }
}

/// `--stats`: the file, its format, then the counts.
pub fn write_stats(
    out: &mut impl Write,
    path: &Path,
    format: &str,
    stats: &TraceStats,
) -> std::io::Result<()> {
    writeln!(out, "file: {}", path.display())?;
    writeln!(out, "format: {format}")?;
    stats.write_text(out)
}
