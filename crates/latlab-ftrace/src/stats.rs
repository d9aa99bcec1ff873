//! A trace in figures (`latlab dump --stats`): events per event name and
//! per CPU, lost events and the time span, counted from a `.dat` file or
//! from text events, and their text.

use std::collections::BTreeMap;
use std::io::Write;

use crate::filter::EventFilter;
use crate::text::TextEvent;
use crate::{DatFile, Endian, Meta, Result};

/// The counts of a trace's events (those a filter kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Events counted.
    pub total: u64,
    /// The first one's time, ns.
    pub first: u64,
    /// The last one's time, ns.
    pub last: u64,
    /// (count, `system:name`), most first, then by name.
    pub by_name: Vec<(u64, String)>,
    /// Events per CPU (`u32::MAX`: CPU unknown).
    pub per_cpu: BTreeMap<u32, u64>,
    /// Events the kernel counted as lost.
    pub lost: u64,
    /// Pages that lost an unknown number of events.
    pub lost_pages: u64,
}

impl TraceStats {
    /// Counts the events of a `.dat` file that `filter` keeps; a damaged
    /// record ends the count with its error.
    pub fn of_dat(file: &DatFile, filter: &EventFilter) -> Result<TraceStats> {
        let meta = &file.meta;
        let wanted: Vec<bool> = meta
            .events
            .iter()
            .map(|e| filter.event_ok(&e.system, &e.name))
            .collect();
        let mut events = file.events().retain_cpus(|c| filter.cpu_ok(c));
        let mut per_event = vec![0u64; meta.events.len()];
        let mut unknown = 0u64;
        // Counted in a vector by CPU number (a map lookup per event costs
        // more than decoding it); CPU numbers beyond it go to the map.
        let mut per_cpu_dense = vec![0u64; 256];
        let mut per_cpu: BTreeMap<u32, u64> = BTreeMap::new();
        let (mut first, mut last, mut total) = (u64::MAX, 0u64, 0u64);
        while let Some(ev) = events.next_event() {
            let ev = ev?;
            if !filter.time_ok(ev.ts) {
                continue;
            }
            match meta.event_index(ev.id()) {
                Some(i) => {
                    if !wanted[i] {
                        continue;
                    }
                    per_event[i] += 1;
                }
                None => {
                    if !filter.events.is_empty() {
                        continue;
                    }
                    unknown += 1;
                }
            }
            match per_cpu_dense.get_mut(ev.cpu as usize) {
                Some(n) => *n += 1,
                None => *per_cpu.entry(ev.cpu).or_default() += 1,
            }
            first = first.min(ev.ts);
            last = last.max(ev.ts);
            total += 1;
        }
        for (cpu, n) in per_cpu_dense.into_iter().enumerate() {
            if n > 0 {
                per_cpu.insert(cpu as u32, n);
            }
        }
        let lost = events.lost();
        let mut by_name: Vec<(u64, String)> = per_event
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| {
                let e = &meta.events[i];
                (n, format!("{}:{}", e.system, e.name))
            })
            .collect();
        if unknown > 0 {
            by_name.push((unknown, "unknown".into()));
        }
        by_name.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(TraceStats {
            total,
            first,
            last,
            by_name,
            per_cpu,
            lost: lost.counted,
            lost_pages: lost.uncounted_pages,
        })
    }

    /// The figures, one per line (`events: N`, the time span, lost events,
    /// then the counts per event and per CPU).
    pub fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "events: {}", self.total)?;
        if self.total > 0 {
            let us = |ns: u64| {
                let u = ns.saturating_add(500) / 1000;
                format!("{}.{:06}", u / 1_000_000, u % 1_000_000)
            };
            writeln!(
                out,
                "time span: {} .. {} ({} s)",
                us(self.first),
                us(self.last),
                us(self.last - self.first)
            )?;
        }
        if self.lost_pages > 0 {
            writeln!(
                out,
                "lost events: {} counted, plus {} page(s) with an unknown number lost",
                self.lost, self.lost_pages
            )?;
        } else {
            writeln!(out, "lost events: {}", self.lost)?;
        }
        writeln!(out, "per event:")?;
        for (n, name) in &self.by_name {
            writeln!(out, "  {n:>10}  {name}")?;
        }
        writeln!(out, "per CPU:")?;
        for (cpu, n) in &self.per_cpu {
            if *cpu == u32::MAX {
                writeln!(out, "  {n:>10}  CPU unknown")?;
            } else {
                writeln!(out, "  {n:>10}  CPU {cpu}")?;
            }
        }
        Ok(())
    }
}

/// Counts text events (ftrace text, CTF) one at a time.
#[derive(Debug, Clone)]
pub struct TextCounter {
    per_event: BTreeMap<String, u64>,
    per_cpu: BTreeMap<u32, u64>,
    first: u64,
    last: u64,
    total: u64,
    lost: u64,
}

impl Default for TextCounter {
    fn default() -> Self {
        TextCounter {
            per_event: BTreeMap::new(),
            per_cpu: BTreeMap::new(),
            first: u64::MAX,
            last: 0,
            total: 0,
            lost: 0,
        }
    }
}

impl TextCounter {
    /// Counts the events lost before `ev` (every event's, kept or not).
    pub fn lost_before(&mut self, ev: &TextEvent) {
        self.lost += ev.lost_before.unwrap_or(0);
    }

    /// Counts `ev`, an event kept.
    pub fn count(&mut self, ev: &TextEvent) {
        let key = match &ev.system {
            Some(s) => format!("{s}:{}", ev.name),
            None => ev.name.clone(),
        };
        *self.per_event.entry(key).or_default() += 1;
        *self.per_cpu.entry(ev.cpu).or_default() += 1;
        self.first = self.first.min(ev.ts);
        self.last = self.last.max(ev.ts);
        self.total += 1;
    }

    /// The counts so far.
    pub fn finish(self) -> TraceStats {
        let mut by_name: Vec<(u64, String)> =
            self.per_event.into_iter().map(|(k, v)| (v, k)).collect();
        by_name.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        TraceStats {
            total: self.total,
            first: self.first,
            last: self.last,
            by_name,
            per_cpu: self.per_cpu,
            lost: self.lost,
            lost_pages: 0,
        }
    }
}

/// A `.dat` file's format in words: `trace-cmd .dat v7, little endian,
/// 64-bit long, page size 4096, clock mono`.
pub fn dat_format(meta: &Meta) -> String {
    format!(
        "trace-cmd .dat v{}, {} endian, {}-bit long, page size {}, clock {}",
        meta.version,
        if meta.endian == Endian::Little {
            "little"
        } else {
            "big"
        },
        meta.long_size * 8,
        meta.page_size,
        meta.clock().unwrap_or("unknown")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(ts: u64, cpu: u32, system: Option<&str>, name: &str, lost: Option<u64>) -> TextEvent {
        TextEvent {
            ts,
            cpu,
            pid: 1,
            comm: "t".into(),
            buffer: String::new(),
            flags: None,
            system: system.map(str::to_string),
            name: name.into(),
            info: String::new(),
            lost_before: lost,
        }
    }

    #[test]
    fn text_counts_are_sorted_most_first_and_lost_events_count_before_the_filter() {
        let mut counter = TextCounter::default();
        let events = [
            event(2_000_000_500, 1, Some("sched"), "sched_switch", None),
            event(1_000_000_000, 0, Some("irq"), "irq_handler_entry", Some(3)),
            event(3_000_000_000, 1, Some("sched"), "sched_switch", None),
            event(4_000_000_000, 0, None, "print", Some(2)),
        ];
        for (i, ev) in events.iter().enumerate() {
            counter.lost_before(ev);
            // The last event is filtered out: its lost events still count.
            if i < 3 {
                counter.count(ev);
            }
        }
        let mut text = Vec::new();
        counter.finish().write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "events: 3\n\
             time span: 1.000000 .. 3.000000 (2.000000 s)\n\
             lost events: 5\n\
             per event:\n           2  sched:sched_switch\n           1  irq:irq_handler_entry\n\
             per CPU:\n           1  CPU 0\n           2  CPU 1\n"
        );
    }
}
