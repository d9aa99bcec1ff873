//! The long-term plot of a board page: the worst latency per result over
//! time, one line per series, as OSADL's long-term plots.

use crate::html::svg::{Axis, Plot, Series as Line, Shape};

use super::{when, Entry, Group, Series};

/// Short names for groups that tell them apart: the kind, and the facts
/// in which the groups of the same kind differ (variant, kernel, load,
/// ...); each at most `width` characters (cut with `…`).
fn group_labels(groups: &[&Group], width: usize) -> Vec<String> {
    groups
        .iter()
        .map(|g| {
            let differing: Vec<&str> = groups
                .iter()
                .filter(|o| o.kind == g.kind)
                .flat_map(|o| g.differences(o))
                .collect();
            let facts = [
                ("variant", g.variant.clone()),
                ("kernel", g.kernel.clone()),
                ("preemption", g.preemption.clone()),
                (
                    "load",
                    Some(g.load.clone().unwrap_or_else(|| "no load".into())),
                ),
                ("origin", Some(g.origin.clone())),
            ];
            let mut shown = vec![g.kind.clone()];
            shown.extend(
                facts
                    .into_iter()
                    .filter(|(name, _)| differing.contains(name))
                    .filter_map(|(_, v)| v),
            );
            let label = shown.join(", ");
            if label.chars().count() > width {
                let cut: String = label.chars().take(width.saturating_sub(1)).collect();
                format!("{cut}…")
            } else {
                label
            }
        })
        .collect()
}

/// At most this many series are drawn in the long-term plot (the ones with
/// the most results); the filters narrow to the others.
pub const LONG_TERM_SERIES: usize = 4;

/// The long-term plot of a board: the worst latency per result over time,
/// one line per series (with the p99.9 dashed when there is one series),
/// log latency axis, a dot per result. The time axis spans the results
/// shown (and 2 % more either side), in minutes, hours or days as their
/// span needs. `None`: no result with a latency.
pub fn long_term_plot(series: &[Series]) -> Option<Plot> {
    let mut drawn: Vec<&Series> = series
        .iter()
        .filter(|s| s.entries.iter().any(|e| e.max_ns.is_some()))
        .collect();
    drawn.sort_by_key(|s| std::cmp::Reverse(s.entries.len()));
    drawn.truncate(LONG_TERM_SERIES);
    drawn.sort_by(|a, b| a.group.cmp(&b.group));
    let points: Vec<(i64, &Entry)> = drawn
        .iter()
        .flat_map(|s| s.entries.iter())
        .filter(|e| e.max_ns.is_some())
        .filter_map(|e| Some((seconds_since_epoch(&e.started_at)?, e)))
        .collect();
    let first = points.iter().map(|p| p.0).min()?;
    let span = points.iter().map(|p| p.0).max()? - first;
    let (unit, seconds) = if span >= 2 * 86_400 {
        ("days", 86_400.0)
    } else if span >= 2 * 3600 {
        ("hours", 3600.0)
    } else {
        ("minutes", 60.0)
    };
    let start = points
        .iter()
        .find(|p| p.0 == first)
        .map_or(String::new(), |p| when(&p.1.started_at));
    let lo = points
        .iter()
        .filter_map(|(_, e)| e.p999_ns.or(e.max_ns))
        .min()
        .unwrap_or(1_000);
    let hi = points
        .iter()
        .filter_map(|(_, e)| e.max_ns)
        .max()
        .unwrap_or(1_000);
    let one = drawn.len() == 1;
    let mut plot = Plot::new(
        "longterm",
        if one {
            "Worst latency (solid) and p99.9 (dashed) per result"
        } else {
            "Worst latency per result, one line per series"
        },
        // A margin of 2 % either side, so that the first and last dots show whole.
        Axis::linear(
            -0.02 * span as f64 / seconds,
            1.02 * span as f64 / seconds,
            &format!("{unit} since {start} UTC (the first result shown)"),
        ),
        Axis::log(
            lo.max(1) as f64 / 1000.0,
            hi.max(1) as f64 / 1000.0,
            "latency (µs, log)",
        ),
    );
    // The legend is one line over the plot (about 7.4 px a character and
    // 30 px a line sample): the labels share what fits.
    let width = ((crate::html::svg::WIDTH - 20.0 - 30.0 * drawn.len() as f64)
        / 7.4
        / drawn.len() as f64) as usize;
    let labels = group_labels(
        &drawn.iter().map(|s| &s.group).collect::<Vec<_>>(),
        width.max(8),
    );
    for (i, (s, label)) in drawn.iter().zip(labels).enumerate() {
        let line = |f: fn(&Entry) -> Option<u64>| -> Vec<(f64, f64)> {
            s.entries
                .iter()
                .filter_map(|e| {
                    let at = seconds_since_epoch(&e.started_at)?;
                    Some(((at - first) as f64 / seconds, f(e)? as f64 / 1000.0))
                })
                .collect()
        };
        plot.series.push(Line {
            name: if one { "worst".into() } else { label },
            color: crate::html::plots::color(i),
            shape: Shape::LineWithPoints(line(|e| e.max_ns)),
            dashed: false,
        });
        if one {
            plot.series.push(Line {
                name: "p99.9".into(),
                color: crate::html::plots::color(1),
                shape: Shape::Line(line(|e| e.p999_ns)),
                dashed: true,
            });
        }
    }
    Some(plot)
}

/// Days since 1970-01-01 of a `YYYY-MM-DDTHH:MM:SSZ` time (fractional).
pub fn days_since_epoch(time: &str) -> Option<f64> {
    Some(seconds_since_epoch(time)? as f64 / 86_400.0)
}

/// Seconds since 1970-01-01 of a `YYYY-MM-DDTHH:MM:SSZ` time.
fn seconds_since_epoch(time: &str) -> Option<i64> {
    let b = time.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| time.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_history::fixtures::run_entry;

    #[test]
    fn the_long_term_axis_spans_the_results_shown() {
        // Six results a quarter of an hour apart: 75 minutes.
        let results: Vec<Entry> = (0..6)
            .map(|i| {
                let mut r = run_entry(i, "6.6", 40);
                r.started_at = format!("2026-11-27T09:{:02}:00Z", i * 15);
                r
            })
            .collect();
        let plot = long_term_plot(&Series::split(&results)).unwrap();
        assert_eq!((plot.x.min, plot.x.max), (-1.5, 76.5));
        assert!(
            plot.x.label.starts_with("minutes since 2026-11-27 09:00"),
            "{}",
            plot.x.label
        );
        let week: Vec<Entry> = (0..8).map(|i| run_entry(i, "6.6", 40)).collect();
        let plot = long_term_plot(&Series::split(&week)).unwrap();
        assert!((plot.x.min + 0.14).abs() < 1e-9 && (plot.x.max - 7.14).abs() < 1e-9);
        assert!(plot.x.label.starts_with("days"));
    }

    #[test]
    fn dates_count_days() {
        assert_eq!(days_since_epoch("1970-01-02T00:00:00Z"), Some(1.0));
        assert_eq!(days_since_epoch("2000-03-01T12:00:00Z"), Some(11_017.5));
        assert_eq!(days_since_epoch("garbage"), None);
    }
}
