//! One view of an event whatever the source (.dat, ftrace text, CTF), and a
//! reader that detects the source: what an analyzer consumes.

use std::borrow::Cow;
use std::path::Path;

use crate::dat::{DatFile, MAGIC};
use crate::error::{Error, Result};
use crate::stream::Event;
use crate::text::TextEvent;

/// What every event offers, whatever file it came from.
pub trait EventView {
    /// Timestamp in ns.
    fn ts(&self) -> u64;
    /// CPU (`u32::MAX` when unknown).
    fn cpu(&self) -> u32;
    /// Running task id (`-1` when unknown).
    fn pid(&self) -> i32;
    /// Running task name (`<...>` when unknown).
    fn comm(&self) -> Cow<'_, str>;
    /// Event name (`sched_switch`).
    fn name(&self) -> &str;
    /// A numeric field.
    fn field_i64(&self, name: &str) -> Option<i64>;
    /// A field as text (numbers formatted in decimal).
    fn field_str(&self, name: &str) -> Option<Cow<'_, str>>;
}

impl EventView for Event<'_> {
    fn ts(&self) -> u64 {
        self.ts
    }
    fn cpu(&self) -> u32 {
        self.cpu
    }
    fn pid(&self) -> i32 {
        Event::pid(self)
    }
    fn comm(&self) -> Cow<'_, str> {
        Cow::Borrowed(Event::comm(self))
    }
    fn name(&self) -> &str {
        Event::name(self)
    }
    fn field_i64(&self, name: &str) -> Option<i64> {
        self.i64(name)
    }
    fn field_str(&self, name: &str) -> Option<Cow<'_, str>> {
        match self.field(name)? {
            crate::format::Value::Int(v) => Some(Cow::Owned(v.to_string())),
            crate::format::Value::UInt(v) => Some(Cow::Owned(v.to_string())),
            v => v.as_str(),
        }
    }
}

impl EventView for TextEvent {
    fn ts(&self) -> u64 {
        self.ts
    }
    fn cpu(&self) -> u32 {
        self.cpu
    }
    fn pid(&self) -> i32 {
        self.pid
    }
    fn comm(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.comm)
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn field_i64(&self, name: &str) -> Option<i64> {
        TextEvent::field_i64(self, name)
    }
    fn field_str(&self, name: &str) -> Option<Cow<'_, str>> {
        self.field(name).map(|v| Cow::Borrowed(v.trim_matches('"')))
    }
}

/// The kinds of trace file this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// trace-cmd `.dat` (v6 or v7).
    Dat,
    /// LTTng CTF directory (read through `babeltrace2`).
    Ctf,
    /// ftrace text (tracefs `trace`, `trace-cmd report` output).
    Text,
}

/// Tells what `path` holds from its first bytes (or, for a directory, its files).
pub fn detect(path: &Path) -> Result<TraceKind> {
    if path.is_dir() {
        return if crate::text::is_ctf_dir(path) {
            Ok(TraceKind::Ctf)
        } else {
            Err(Error::Tool {
                program: "latlab",
                msg: format!(
                    "{}: a directory but not a CTF trace (no `metadata` file)",
                    path.display()
                ),
            })
        };
    }
    let mut head = [0u8; 10];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(if n == 10 && &head == MAGIC {
        TraceKind::Dat
    } else {
        TraceKind::Text
    })
}

/// Calls `f` for every event of the trace at `path`, in time order for .dat
/// files (CPUs merged) and in file order for text and CTF.
pub fn for_each_event(path: &Path, mut f: impl FnMut(&dyn EventView) -> Result<()>) -> Result<()> {
    match detect(path)? {
        TraceKind::Dat => {
            let file = DatFile::open(path)?;
            let mut ev = file.events();
            while let Some(e) = ev.next_event() {
                f(&e?)?;
            }
            Ok(())
        }
        TraceKind::Ctf => crate::text::for_each_ctf_event(path, |e| f(&e)),
        TraceKind::Text => {
            for e in crate::text::read_ftrace_text_file(path)? {
                f(&e)?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_binary_events_answer_the_same_questions() {
        let dir = std::env::temp_dir().join(format!("latlab-view-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.txt");
        std::fs::write(
            &p,
            "  bash-7 [001] 5.000001: sched_waking: comm=x pid=9 prio=120 target_cpu=001\n",
        )
        .unwrap();
        assert_eq!(detect(&p).unwrap(), TraceKind::Text);
        let mut seen = Vec::new();
        for_each_event(&p, |e| {
            seen.push((
                e.ts(),
                e.cpu(),
                e.pid(),
                e.comm().into_owned(),
                e.name().to_string(),
                e.field_i64("pid"),
                e.field_str("comm").map(|c| c.into_owned()),
            ));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![(
                5_000_001_000,
                1,
                7,
                "bash".to_string(),
                "sched_waking".to_string(),
                Some(9),
                Some("x".to_string())
            )]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
