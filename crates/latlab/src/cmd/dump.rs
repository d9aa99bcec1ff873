//! `latlab dump`: print the events of a trace one per line, like `trace-cmd report`.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use latlab_ftrace::filter::EventFilter;
use latlab_ftrace::listing::{text_event_line, DatListing};
use latlab_ftrace::stats::{dat_format, TextCounter, TraceStats};
use latlab_ftrace::{DatFile, TextEvent, TraceKind};

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

/// The filter the options ask for.
fn filter_of(a: &DumpArgs) -> anyhow::Result<EventFilter> {
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
    Ok(EventFilter {
        events: EventFilter::parse_events(&a.events),
        cpus,
        from,
        to,
    })
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
    let filter = filter_of(&args)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let path = &args.file;
    match latlab_ftrace::view::detect(path)? {
        TraceKind::Dat => dump_dat(&args, &filter, &mut out)?,
        TraceKind::Ctf => {
            let mut sink = TextSink::new(&args, &filter);
            latlab_ftrace::text::for_each_ctf_event(path, |ev| {
                sink.push(ev, &mut out)
                    .map_err(|source| latlab_ftrace::Error::Io {
                        path: PathBuf::from("<stdout>"),
                        source,
                    })
            })
            .with_context(|| format!("reading CTF trace {}", path.display()))?;
            sink.finish(&mut out, "LTTng CTF (via babeltrace2)")?;
        }
        TraceKind::Text => {
            let events = latlab_ftrace::text::read_ftrace_text_file(path)
                .with_context(|| format!("reading ftrace text {}", path.display()))?;
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

/// Filters, prints or counts text events (ftrace text and CTF).
struct TextSink<'a> {
    args: &'a DumpArgs,
    filter: &'a EventFilter,
    line: Vec<u8>,
    counter: TextCounter,
}

impl<'a> TextSink<'a> {
    fn new(args: &'a DumpArgs, filter: &'a EventFilter) -> Self {
        TextSink {
            args,
            filter,
            line: Vec::new(),
            counter: TextCounter::default(),
        }
    }

    fn push(&mut self, ev: TextEvent, out: &mut impl Write) -> std::io::Result<()> {
        self.counter.lost_before(&ev);
        let kept = self
            .filter
            .event_ok(ev.system.as_deref().unwrap_or(""), &ev.name)
            && self.filter.cpu_ok(ev.cpu)
            && self.filter.time_ok(ev.ts);
        if !kept {
            return Ok(());
        }
        if self.args.stats {
            self.counter.count(&ev);
            return Ok(());
        }
        self.line.clear();
        text_event_line(&ev, &mut self.line);
        out.write_all(&self.line)
    }

    fn finish(self, out: &mut impl Write, format: &str) -> anyhow::Result<()> {
        if self.args.stats {
            write_stats(out, self.args, format, &self.counter.finish())?;
        }
        Ok(())
    }
}

fn write_stats(
    out: &mut impl Write,
    args: &DumpArgs,
    format: &str,
    stats: &TraceStats,
) -> std::io::Result<()> {
    writeln!(out, "file: {}", args.file.display())?;
    writeln!(out, "format: {format}")?;
    stats.write_text(out)
}

fn dump_dat(args: &DumpArgs, filter: &EventFilter, out: &mut impl Write) -> anyhow::Result<()> {
    let path = &args.file;
    let file = DatFile::open(path).with_context(|| format!("reading {}", path.display()))?;
    if let Some(shown) = filter.unknown_event(&file.meta) {
        bail!(
            "--events {shown}: {} has no such event format (see `latlab dump --stats` for the events it holds)",
            path.display()
        );
    }
    if args.stats {
        let stats = TraceStats::of_dat(&file, filter)
            .with_context(|| format!("decoding {}", path.display()))?;
        write_stats(out, args, &dat_format(&file.meta), &stats)?;
        out.flush()?;
        std::mem::forget(file); // see the end of this function
        return Ok(());
    }
    writeln!(out, "cpus={}", file.meta.cpu_count)?;
    let mut listing = DatListing::new(&file, filter);
    // Lines go into one large buffer written in big chunks (the BufWriter
    // passes writes larger than its own buffer straight through).
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    loop {
        let more = listing.fill(&mut buf, 1 << 20);
        out.write_all(&buf)?;
        buf.clear();
        match more {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                // Every event decoded before the bad spot is printed, then the error.
                out.flush()?;
                return Err(e).with_context(|| format!("decoding {}", path.display()));
            }
        }
    }
    out.flush()?;
    // The process ends next: freeing thousands of event formats one by one
    // would only cost time.
    std::mem::forget(listing);
    std::mem::forget(file);
    Ok(())
}
