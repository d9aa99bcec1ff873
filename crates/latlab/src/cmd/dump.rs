//! `latlab dump`: print the events of a trace one per line, like `trace-cmd report`.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use latlab_ftrace::filter::EventFilter;
use latlab_ftrace::listing::DatListing;
use latlab_ftrace::stats::{dat_format, TraceStats};
use latlab_ftrace::text_listing::{write_stats, TextSink};
use latlab_ftrace::{DatFile, TraceKind};

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
            let mut sink = TextSink::new(&filter, args.stats);
            latlab_ftrace::text::for_each_ctf_event(path, |ev| {
                sink.push(ev, &mut out)
                    .map_err(|source| latlab_ftrace::Error::Io {
                        path: PathBuf::from("<stdout>"),
                        source,
                    })
            })
            .with_context(|| format!("reading CTF trace {}", path.display()))?;
            sink.finish(&mut out, path, "LTTng CTF (via babeltrace2)")?;
        }
        TraceKind::Text => {
            let events = latlab_ftrace::text::read_ftrace_text_file(path)
                .with_context(|| format!("reading ftrace text {}", path.display()))?;
            let mut sink = TextSink::new(&filter, args.stats);
            for ev in events {
                sink.push(ev, &mut out)?;
            }
            sink.finish(&mut out, path, "ftrace text")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
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
        write_stats(out, path, &dat_format(&file.meta), &stats)?;
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
