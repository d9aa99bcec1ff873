//! The terminal text of a background load's report (`latlab load`, and the
//! load part of run, respond and lockbench results).

use latlab_load::LoadReport;

use crate::units::{amount, cpus_busy, rate, us_per_kib};

/// One line for a summary that is about something else (e.g. a latency
/// run): `load full: cpu 2x 210 Mops/s, io 285 MB/s, net 562 MB/s
/// (1.820 µs/KiB), mem 54.1 kpages/s`.
pub fn summary_line(load: &LoadReport) -> String {
    let mut parts: Vec<String> = load
        .kinds
        .iter()
        .map(|k| {
            let workers = if k.workers > 1 {
                format!("{}x ", k.workers)
            } else {
                String::new()
            };
            let mut part = format!("{} {workers}{}", k.kind, rate(k.per_second, &k.unit));
            if k.us_per_kib.is_some() && k.total > 0 {
                part.push_str(&format!(
                    " ({} µs/KiB)",
                    us_per_kib(1024.0 * 1e6 / k.per_second)
                ));
            }
            part
        })
        .collect();
    if let Some(c) = &load.external {
        parts.push(format!("command {}", cpus_busy(c.cpus_busy)));
    }
    if parts.is_empty() {
        parts.push("nothing ran".to_owned());
    }
    format!("load {}: {}", load.name(), parts.join(", "))
}

/// A plain-text table: one line per kind (and the command), with the
/// units the HTML report writes too ([`crate::units`]: an SI prefix, 1 MB
/// = 10^6 bytes).
pub fn table(load: &LoadReport) -> String {
    let mut rows = vec![[
        "load".to_owned(),
        "workers".to_owned(),
        "total".to_owned(),
        "per second".to_owned(),
        "min..max per interval".to_owned(),
        "µs per KiB".to_owned(),
    ]];
    for k in &load.kinds {
        let range = match (min(&k.series), max(&k.series)) {
            (Some(lo), Some(hi)) => {
                format!("{}..{}", rate(lo, &k.unit), rate(hi, &k.unit))
            }
            _ => "-".to_owned(),
        };
        let per_kib = match &k.us_per_kib {
            Some(_) if k.total > 0 => us_per_kib(load.duration_s * 1e6 / (k.total as f64 / 1024.0)),
            _ => "-".to_owned(),
        };
        rows.push([
            k.kind.clone(),
            k.workers.to_string(),
            amount(k.total as f64, &k.unit),
            rate(k.per_second, &k.unit),
            range,
            per_kib,
        ]);
    }
    if let Some(c) = &load.external {
        let range = match (min(&c.series), max(&c.series)) {
            (Some(lo), Some(hi)) => format!("{lo:.2}..{hi:.2} CPUs"),
            _ => "-".to_owned(),
        };
        rows.push([
            "command".to_owned(),
            "1".to_owned(),
            format!("{:.1} CPU-s", c.cpu_seconds),
            cpus_busy(c.cpus_busy),
            range,
            "-".to_owned(),
        ]);
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = format!(
        "load {} for {:.1} s (intervals of {} s)\n",
        load.name(),
        load.duration_s,
        load.interval_s
    );
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                let pad = w - cell.chars().count();
                if i == 0 {
                    format!("{cell}{}", " ".repeat(pad))
                } else {
                    format!("{}{cell}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    for warning in &load.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out
}

fn min(v: &[f64]) -> Option<f64> {
    v.iter().copied().reduce(f64::min)
}

fn max(v: &[f64]) -> Option<f64> {
    v.iter().copied().reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_load::fixtures::sample_report;

    #[test]
    fn table_uses_human_units_and_transfer_time_per_kib() {
        let table = table(&sample_report());
        assert!(table.contains("1.5 Gops/s"), "{table}");
        assert!(table.contains("1.4 Gops/s..1.6 Gops/s"), "{table}");
        assert!(table.contains("1.02 GB/s"), "{table}");
        // 2 s to move 2_000_000 KiB = 1 µs per KiB.
        assert!(table.contains("1.000"), "{table}");
        assert!(table.contains("warning: io ran on a tmpfs"), "{table}");
    }

    #[test]
    fn a_command_load_is_named_by_its_command_never_none() {
        let mut report = sample_report();
        report.spec = "none".into();
        report.kinds.clear();
        report.command = Some("stress-ng --cpu 2".into());
        assert!(
            summary_line(&report).starts_with("load `stress-ng --cpu 2`: "),
            "{}",
            summary_line(&report)
        );
        assert!(table(&report).starts_with("load `stress-ng --cpu 2` for 2.0 s"));
        report.spec = "full".into();
        assert_eq!(report.name(), "full + `stress-ng --cpu 2`");
    }

    #[test]
    fn summary_line_names_every_kind_with_its_rate() {
        let line = summary_line(&sample_report());
        assert_eq!(
            line,
            "load cpu:1,net:1: cpu 1.5 Gops/s, net 1.02 GB/s (1.000 µs/KiB)"
        );
    }
}
