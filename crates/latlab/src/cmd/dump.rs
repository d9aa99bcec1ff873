//! `latlab dump`: print the events of a trace one per line, like `trace-cmd report`.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use latlab_ftrace::render::Renderer;
use latlab_ftrace::DatFile;

/// Arguments of `latlab dump`.
#[derive(Debug, clap::Args)]
pub struct DumpArgs {
    /// Trace to read: a trace-cmd .dat (v6/v7), ftrace text (tracefs `trace` or
    /// `trace-cmd report` output), or an LTTng CTF directory (needs babeltrace2).
    pub file: PathBuf,
    /// Only these events (comma-separated names, `system:name` or `system:*`).
    #[arg(long, value_delimiter = ',')]
    pub events: Vec<String>,
    /// Only these CPUs (e.g. `0,2-3`).
    #[arg(long)]
    pub cpu: Option<String>,
    /// Skip events before this time (seconds, as printed).
    #[arg(long)]
    pub from: Option<f64>,
    /// Skip events after this time (seconds, as printed).
    #[arg(long)]
    pub to: Option<f64>,
    /// Print counts per event and per CPU, lost events and the time span instead of events.
    #[arg(long)]
    pub stats: bool,
}

/// Validated filters.
#[derive(Debug, Default)]
struct Filter {
    events: Vec<(Option<String>, String)>,
    cpus: Option<Vec<bool>>,
    from: u64,
    to: u64,
}

impl Filter {
    fn from_args(a: &DumpArgs) -> anyhow::Result<Self> {
        let mut events = Vec::new();
        for e in a.events.iter().filter(|e| !e.is_empty()) {
            match e.split_once([':', '/']) {
                Some((s, n)) => events.push((Some(s.to_string()), n.to_string())),
                None => events.push((None, e.to_string())),
            }
        }
        let cpus = match &a.cpu {
            None => None,
            Some(spec) => Some(parse_cpu_list(spec)?),
        };
        let secs = |v: f64, what: &str| -> anyhow::Result<u64> {
            if !(v.is_finite() && v >= 0.0) {
                bail!("--{what} {v}: want a time in seconds >= 0, as printed by `latlab dump`");
            }
            Ok((v * 1e9).round() as u64)
        };
        let from = a.from.map(|v| secs(v, "from")).transpose()?.unwrap_or(0);
        let to = a.to.map(|v| secs(v, "to")).transpose()?.unwrap_or(u64::MAX);
        if from > to {
            bail!("--from is after --to");
        }
        Ok(Filter {
            events,
            cpus,
            from,
            to,
        })
    }

    fn cpu_ok(&self, cpu: u32) -> bool {
        match &self.cpus {
            None => true,
            Some(v) => v.get(cpu as usize).copied().unwrap_or(false),
        }
    }

    fn event_ok(&self, system: &str, name: &str) -> bool {
        self.events.is_empty()
            || self
                .events
                .iter()
                .any(|(s, n)| (n == name || n == "*") && s.as_deref().is_none_or(|s| s == system))
    }
}

/// The CPUs `--cpu` keeps, as a table indexed by CPU number.
fn parse_cpu_list(spec: &str) -> anyhow::Result<Vec<bool>> {
    let mut keep = vec![false; latlab_rt::sched::MAX_CPU + 1];
    for cpu in latlab_rt::sched::parse_cpu_list(spec).with_context(|| format!("--cpu {spec:?}"))? {
        keep[cpu] = true;
    }
    Ok(keep)
}

/// Runs `latlab dump`.
pub fn execute(args: DumpArgs) -> anyhow::Result<ExitCode> {
    let filter = Filter::from_args(&args)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    match kind_of(&args.file)? {
        Kind::Dat => dump_dat(&args, &filter, &mut out)?,
        Kind::Ctf => {
            let mut sink = TextSink::new(&args, &filter);
            latlab_ftrace::text::for_each_ctf_event(&args.file, |ev| {
                sink.push(ev, &mut out).map_err(io_to_tool)
            })
            .with_context(|| format!("reading CTF trace {}", args.file.display()))?;
            sink.finish(&mut out, "LTTng CTF (via babeltrace2)")?;
        }
        Kind::Text => {
            let events = latlab_ftrace::text::read_ftrace_text_file(&args.file)
                .with_context(|| format!("reading ftrace text {}", args.file.display()))?;
            let mut sink = TextSink::new(&args, &filter);
            for ev in events {
                sink.push(ev, &mut out)?;
            }
            sink.finish(&mut out, "ftrace text")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

enum Kind {
    Dat,
    Ctf,
    Text,
}

fn io_to_tool(e: std::io::Error) -> latlab_ftrace::Error {
    latlab_ftrace::Error::Io {
        path: PathBuf::from("<stdout>"),
        source: e,
    }
}

/// Filters, prints or counts text events (ftrace text and CTF).
struct TextSink<'a> {
    args: &'a DumpArgs,
    filter: &'a Filter,
    line: Vec<u8>,
    per_event: BTreeMap<String, u64>,
    per_cpu: BTreeMap<u32, u64>,
    first: u64,
    last: u64,
    total: u64,
    lost: u64,
}

impl<'a> TextSink<'a> {
    fn new(args: &'a DumpArgs, filter: &'a Filter) -> Self {
        TextSink {
            args,
            filter,
            line: Vec::new(),
            per_event: BTreeMap::new(),
            per_cpu: BTreeMap::new(),
            first: u64::MAX,
            last: 0,
            total: 0,
            lost: 0,
        }
    }

    fn push(
        &mut self,
        ev: latlab_ftrace::text::TextEvent,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        if let Some(n) = ev.lost_before {
            self.lost += n;
        }
        let sys = ev.system.as_deref().unwrap_or("");
        let name_ok =
            self.filter.events.is_empty()
                || self.filter.events.iter().any(|(s, n)| {
                    (n == &ev.name || n == "*") && s.as_deref().is_none_or(|s| s == sys)
                });
        if !name_ok
            || !self.filter.cpu_ok(ev.cpu)
            || ev.ts < self.filter.from
            || ev.ts > self.filter.to
        {
            return Ok(());
        }
        if self.args.stats {
            let key = match &ev.system {
                Some(s) => format!("{s}:{}", ev.name),
                None => ev.name.clone(),
            };
            *self.per_event.entry(key).or_default() += 1;
            *self.per_cpu.entry(ev.cpu).or_default() += 1;
            self.first = self.first.min(ev.ts);
            self.last = self.last.max(ev.ts);
            self.total += 1;
            return Ok(());
        }
        if let Some(n) = ev.lost_before {
            writeln!(out, "CPU:{} [{n} EVENTS DROPPED]", ev.cpu)?;
        }
        self.line.clear();
        latlab_ftrace::text::render_line(&ev, &mut self.line);
        out.write_all(&self.line)
    }

    fn finish(self, out: &mut impl Write, format: &str) -> anyhow::Result<()> {
        if !self.args.stats {
            return Ok(());
        }
        let mut by_name: Vec<(u64, String)> =
            self.per_event.into_iter().map(|(k, v)| (v, k)).collect();
        by_name.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        writeln!(out, "file: {}", self.args.file.display())?;
        writeln!(out, "format: {format}")?;
        write_stats(
            out,
            self.total,
            self.first,
            self.last,
            &by_name,
            &self.per_cpu,
            self.lost,
            0,
        )
    }
}

fn kind_of(path: &Path) -> anyhow::Result<Kind> {
    if path.is_dir() {
        if latlab_ftrace::text::is_ctf_dir(path) {
            return Ok(Kind::Ctf);
        }
        bail!(
            "{}: a directory but not a CTF trace (no `metadata` file inside)",
            path.display()
        );
    }
    let mut head = [0u8; 10];
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    use std::io::Read;
    let n = f.read(&mut head).unwrap_or(0);
    if n == 10 && &head == latlab_ftrace::dat::MAGIC {
        return Ok(Kind::Dat);
    }
    Ok(Kind::Text)
}

fn dump_dat(args: &DumpArgs, filter: &Filter, out: &mut impl Write) -> anyhow::Result<()> {
    let file =
        DatFile::open(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let meta = &file.meta;
    let wanted: Vec<bool> = meta
        .events
        .iter()
        .map(|e| filter.event_ok(&e.system, &e.name))
        .collect();
    for (sys, name) in &filter.events {
        let known = meta.events.iter().any(|e| {
            (name == "*" || &e.name == name) && sys.as_deref().is_none_or(|s| s == e.system)
        });
        if !known {
            let shown = sys
                .as_ref()
                .map(|s| format!("{s}:{name}"))
                .unwrap_or_else(|| name.clone());
            bail!(
                "--events {shown}: {} has no such event format (see `latlab dump --stats` for the events it holds)",
                args.file.display()
            );
        }
    }
    let mut events = file.events().retain_cpus(|c| filter.cpu_ok(c));
    if args.stats {
        let mut per_event = vec![0u64; meta.events.len()];
        let mut unknown = 0u64;
        // Counted in a vector by CPU number (a map lookup per event costs
        // more than decoding it); CPU numbers beyond it go to the map.
        let mut per_cpu_dense = vec![0u64; 256];
        let mut per_cpu: BTreeMap<u32, u64> = BTreeMap::new();
        let (mut first, mut last, mut total) = (u64::MAX, 0u64, 0u64);
        while let Some(ev) = events.next_event() {
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) => {
                    return Err(e).with_context(|| format!("decoding {}", args.file.display()))
                }
            };
            if ev.ts < filter.from || ev.ts > filter.to {
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
                (
                    n,
                    format!("{}:{}", meta.events[i].system, meta.events[i].name),
                )
            })
            .collect();
        if unknown > 0 {
            by_name.push((unknown, "unknown".into()));
        }
        by_name.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        writeln!(out, "file: {}", args.file.display())?;
        writeln!(
            out,
            "format: trace-cmd .dat v{}, {} endian, {}-bit long, page size {}, clock {}",
            meta.version,
            if meta.endian == latlab_ftrace::Endian::Little {
                "little"
            } else {
                "big"
            },
            meta.long_size * 8,
            meta.page_size,
            meta.clock().unwrap_or("unknown")
        )?;
        write_stats(
            out,
            total,
            first,
            last,
            &by_name,
            &per_cpu,
            lost.counted,
            lost.uncounted_pages,
        )?;
        out.flush()?;
        drop(events);
        std::mem::forget(file); // see the end of this function
        return Ok(());
    }
    writeln!(out, "cpus={}", meta.cpu_count)?;
    let mut r = Renderer::new(meta);
    // Lines go into one large buffer written in big chunks (the BufWriter
    // passes writes larger than its own buffer straight through).
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    while let Some(ev) = events.next_event() {
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => {
                // Print every event decoded before the bad spot, then the error.
                out.write_all(&buf)?;
                out.flush()?;
                return Err(e).with_context(|| format!("decoding {}", args.file.display()));
            }
        };
        if ev.ts < filter.from || ev.ts > filter.to {
            continue;
        }
        if let Some(i) = meta.event_index(ev.id()) {
            if !wanted[i] {
                continue;
            }
        } else if !filter.events.is_empty() {
            continue;
        }
        match ev.missed {
            latlab_ftrace::page::Missed::None => {}
            latlab_ftrace::page::Missed::Unknown => {
                writeln!(buf, "CPU:{} [EVENTS DROPPED]", ev.cpu)?;
            }
            latlab_ftrace::page::Missed::Count(n) => {
                writeln!(buf, "CPU:{} [{n} EVENTS DROPPED]", ev.cpu)?;
            }
        }
        r.line(&ev, &mut buf);
        if buf.len() >= (1 << 20) - 8192 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()?;
    // The process ends next: freeing thousands of event formats one by one
    // would only cost time.
    drop(events);
    std::mem::forget(r);
    std::mem::forget(file);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn write_stats(
    out: &mut impl Write,
    total: u64,
    first: u64,
    last: u64,
    by_name: &[(u64, String)],
    per_cpu: &BTreeMap<u32, u64>,
    lost: u64,
    lost_pages: u64,
) -> anyhow::Result<()> {
    writeln!(out, "events: {total}")?;
    if total > 0 {
        let us = |ns: u64| {
            let u = ns.saturating_add(500) / 1000;
            format!("{}.{:06}", u / 1_000_000, u % 1_000_000)
        };
        writeln!(
            out,
            "time span: {} .. {} ({} s)",
            us(first),
            us(last),
            us(last - first)
        )?;
    }
    if lost_pages > 0 {
        writeln!(
            out,
            "lost events: {lost} counted, plus {lost_pages} page(s) with an unknown number lost"
        )?;
    } else {
        writeln!(out, "lost events: {lost}")?;
    }
    writeln!(out, "per event:")?;
    for (n, name) in by_name {
        writeln!(out, "  {n:>10}  {name}")?;
    }
    writeln!(out, "per CPU:")?;
    for (cpu, n) in per_cpu {
        if *cpu == u32::MAX {
            writeln!(out, "  {n:>10}  CPU unknown")?;
        } else {
            writeln!(out, "  {n:>10}  CPU {cpu}")?;
        }
    }
    Ok(())
}
