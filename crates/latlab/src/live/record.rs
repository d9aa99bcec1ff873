//! `latlab record`'s summary: the file, the events per CPU, the ring buffer.

use latlab_tracefs::CaptureReport;

use crate::config::record::cpu_list;

fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / f64::from(1 << 20))
    } else {
        format!("{:.1} KiB", n as f64 / 1024.0)
    }
}

/// Prints the summary of a recording (`interrupted`: by Ctrl-C or SIGTERM).
pub fn print_summary(r: &CaptureReport, interrupted: bool) {
    println!(
        "latlab record: wrote {} ({}) after {:.2} s{}; instance {}, clock {}, {} events enabled",
        r.path.display(),
        human_bytes(r.file_bytes),
        r.duration_s,
        if interrupted { " (interrupted)" } else { "" },
        r.instance,
        r.trace_clock,
        r.events_enabled.len()
    );
    let lost_label = if r.flight_recorder {
        "overwritten"
    } else {
        "lost"
    };
    println!(
        "{:>5} {:>12} {:>12} {:>8}",
        "CPU", "events", lost_label, "pages"
    );
    for c in &r.cpus {
        println!(
            "{:>5} {:>12} {:>12} {:>8}",
            c.cpu, c.events, c.lost, c.pages
        );
    }
    let pages: u64 = r.cpus.iter().map(|c| c.pages).sum();
    println!(
        "{:>5} {:>12} {:>12} {:>8}",
        "all", r.total_events, r.lost_events, pages
    );
    if let Some(cpus) = &r.kmem_cpus {
        println!(
            "page events (kmem) on CPUs {} only (--rt-cpus)",
            cpu_list(cpus)
        );
    }
    println!("ring buffer: {}", r.ring_buffer.summary);
}
