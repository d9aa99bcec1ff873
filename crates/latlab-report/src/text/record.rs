//! `latlab record`'s summary: the file, the events per CPU, the ring buffer.

use std::fmt::Write;

use latlab_tracefs::{CaptureReport, EVENT_SETS};

/// `0,2,3`: a CPU list as `--rt-cpus` takes it.
pub fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `latlab record --list-events`: each event set (`*`: one of the
/// defaults) with what it is for, then its events.
pub fn event_sets() -> String {
    let mut s = String::new();
    for set in EVENT_SETS {
        let mark = if set.default { "*" } else { " " };
        let _ = writeln!(s, "{mark} {:<12} {}", set.name, set.about);
        let _ = writeln!(s, "    {}", set.events.join(" "));
    }
    s
}

fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / f64::from(1 << 20))
    } else {
        format!("{:.1} KiB", n as f64 / 1024.0)
    }
}

/// The summary of a recording (`interrupted`: by Ctrl-C or SIGTERM).
pub fn summary(r: &CaptureReport, interrupted: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
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
    let _ = writeln!(
        s,
        "{:>5} {:>12} {:>12} {:>8}",
        "CPU", "events", lost_label, "pages"
    );
    for c in &r.cpus {
        let _ = writeln!(
            s,
            "{:>5} {:>12} {:>12} {:>8}",
            c.cpu, c.events, c.lost, c.pages
        );
    }
    let pages: u64 = r.cpus.iter().map(|c| c.pages).sum();
    let _ = writeln!(
        s,
        "{:>5} {:>12} {:>12} {:>8}",
        "all", r.total_events, r.lost_events, pages
    );
    if let Some(cpus) = &r.kmem_cpus {
        let _ = writeln!(
            s,
            "page events (kmem) on CPUs {} only (--rt-cpus)",
            cpu_list(cpus)
        );
    }
    let _ = writeln!(s, "ring buffer: {}", r.ring_buffer.summary);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_set_is_listed_with_its_events_and_the_defaults_marked() {
        let text = event_sets();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2 * EVENT_SETS.len());
        for (set, pair) in EVENT_SETS.iter().zip(lines.chunks(2)) {
            let mark = if set.default { '*' } else { ' ' };
            assert!(
                pair[0].starts_with(&format!("{mark} {}", set.name)),
                "{}",
                pair[0]
            );
            assert_eq!(pair[1], format!("    {}", set.events.join(" ")));
        }
    }
}
