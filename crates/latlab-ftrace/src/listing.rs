//! A trace's events as text lines, one per event, like `trace-cmd report`
//! (what `latlab dump` prints): the events a filter keeps, and a line for
//! each run of lost events. Lines go into the caller's buffer; the caller
//! writes them.

use std::io::Write as _;

use crate::filter::EventFilter;
use crate::page::Missed;
use crate::render::Renderer;
use crate::text::{render_line, TextEvent};
use crate::{DatFile, Events, Meta, Result};

/// The lines of a `.dat` file's events, in time order (CPUs merged).
#[derive(Debug)]
pub struct DatListing<'t> {
    meta: &'t Meta,
    events: Events<'t>,
    filter: &'t EventFilter,
    /// Kept or not, by event format index.
    wanted: Vec<bool>,
    renderer: Renderer<'t>,
}

impl<'t> DatListing<'t> {
    /// The listing of `file`'s events that `filter` keeps (the CPUs it
    /// drops are not decoded).
    pub fn new(file: &'t DatFile, filter: &'t EventFilter) -> Self {
        let meta = &file.meta;
        DatListing {
            meta,
            events: file.events().retain_cpus(|c| filter.cpu_ok(c)),
            filter,
            wanted: meta
                .events
                .iter()
                .map(|e| filter.event_ok(&e.system, &e.name))
                .collect(),
            renderer: Renderer::new(meta),
        }
    }

    /// Appends the next lines to `buf` until it holds at least `size` bytes
    /// (less 8 KiB) or the trace ends; `Ok(false)` at the end. On a damaged
    /// record `buf` holds every line before it, and the error is returned.
    pub fn fill(&mut self, buf: &mut Vec<u8>, size: usize) -> Result<bool> {
        while let Some(ev) = self.events.next_event() {
            let ev = ev?;
            if !self.filter.time_ok(ev.ts) {
                continue;
            }
            if let Some(i) = self.meta.event_index(ev.id()) {
                if !self.wanted[i] {
                    continue;
                }
            } else if !self.filter.events.is_empty() {
                continue;
            }
            match ev.missed {
                Missed::None => {}
                Missed::Unknown => {
                    let _ = writeln!(buf, "CPU:{} [EVENTS DROPPED]", ev.cpu);
                }
                Missed::Count(n) => {
                    let _ = writeln!(buf, "CPU:{} [{n} EVENTS DROPPED]", ev.cpu);
                }
            }
            self.renderer.line(&ev, buf);
            if buf.len() >= size.saturating_sub(8192) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Appends the line of a text event (ftrace text, CTF) to `buf`, after a
/// line for the events lost before it.
pub fn text_event_line(ev: &TextEvent, buf: &mut Vec<u8>) {
    if let Some(n) = ev.lost_before {
        let _ = writeln!(buf, "CPU:{} [{n} EVENTS DROPPED]", ev.cpu);
    }
    render_line(ev, buf);
}
