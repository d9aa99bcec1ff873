//! The lock benchmark (`latlab lockbench --json`) in a report: per variant
//! the wake-up, lock and lock-wait figures with bars, the background work,
//! and the background throughput over time.

use std::fmt::Write;

use latlab_measure::units::format_ns;
use serde_json::Value;

use super::plots::color;
use super::svg::{escape, Axis, Plot, Series, Shape};

/// True for a lockbench document: schema `latlab.lockbench`, or (files
/// written before the schema field) `results` entries with a `variant` and
/// a `goal` list.
pub fn is_lockbench(value: &Value) -> bool {
    value["schema"] == "latlab.lockbench"
        || (value["schema"].is_null()
            && value["goal"].is_array()
            && value["results"]
                .as_array()
                .is_some_and(|r| !r.is_empty() && r.iter().all(|v| v["variant"].is_string())))
}

fn ns(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The throughput plot: background critical sections per second over time.
pub fn throughput_plot(id: &str, value: &Value) -> Option<Plot> {
    let results = value["results"].as_array()?;
    let series: Vec<(String, Vec<(f64, f64)>)> = results
        .iter()
        .map(|r| {
            let points = r["throughput"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| Some((p["t_s"].as_f64()?, p["sections_per_s"].as_f64()?)))
                        .collect()
                })
                .unwrap_or_default();
            (r["variant"].as_str().unwrap_or("?").to_string(), points)
        })
        .filter(|(_, p): &(String, Vec<(f64, f64)>)| !p.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    let end = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .fold(0.1, f64::max);
    let top = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.1))
        .fold(1.0, f64::max)
        * 1.05;
    let mut plot = Plot::new(
        id,
        "Background critical sections per second, by lock variant",
        Axis::linear(0.0, end, "time (s)"),
        Axis::linear(0.0, top, "sections per second"),
    );
    for (i, (name, points)) in series.into_iter().enumerate() {
        plot.series.push(Series {
            name,
            color: color(i),
            shape: Shape::Line(points),
            dashed: false,
        });
    }
    Some(plot)
}

/// The section of one lockbench document.
pub fn render(
    h: &mut String,
    id: &str,
    label: &str,
    value: &Value,
    figures: impl Fn(&mut String, &[Plot]),
) {
    let results = value["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>Lock benchmark: a SCHED_FIFO \
         periodic task and background threads sharing locks; one row per lock variant.</p>",
        escape(label)
    );
    let worst = results
        .iter()
        .map(|r| ns(&r["lock"]["max"]))
        .max()
        .unwrap_or(1)
        .max(1);
    h.push_str(
        "<table class=\"summary\"><tr><th class=\"l\">variant</th><th>periods</th><th>overruns</th>\
         <th>wake p99</th><th>wake max</th><th>lock p99</th><th>lock max</th>\
         <th class=\"l\">lock max (bar)</th><th>lock wait p99</th>\
         <th>bg sections/s</th></tr>\n",
    );
    for r in results {
        let max = ns(&r["lock"]["max"]);
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"l\"><div class=\"bar\" style=\"width:{:.0}px\"></div></td><td>{}</td><td>{:.0}</td></tr>",
            escape(r["variant"].as_str().unwrap_or("?")),
            ns(&r["periods"]),
            ns(&r["overruns"]),
            format_ns(ns(&r["wake"]["p99"])),
            format_ns(ns(&r["wake"]["max"])),
            format_ns(ns(&r["lock"]["p99"])),
            format_ns(max),
            (max as f64 / worst as f64 * 160.0).max(1.0),
            format_ns(ns(&r["lock_wait"]["p99"])),
            r["bg_sections_per_s"].as_f64().unwrap_or(0.0),
        );
    }
    h.push_str("</table>\n");
    if let Some(goals) = value["goal"].as_array().filter(|g| !g.is_empty()) {
        h.push_str("<ul class=\"req\">");
        for g in goals {
            let _ = write!(
                h,
                "<li>{} {}: worst lock latency {:.0} % of plain's, {:.0} % of PI's, background work {:+.1} %</li>",
                if g["met"].as_bool() == Some(true) { "✔" } else { "✘" },
                escape(g["variant"].as_str().unwrap_or("?")),
                g["worst_vs_plain"].as_f64().unwrap_or(0.0) * 100.0,
                g["worst_vs_pi"].as_f64().unwrap_or(0.0) * 100.0,
                -g["throughput_loss"].as_f64().unwrap_or(0.0) * 100.0,
            );
        }
        h.push_str("</ul>\n");
    }
    figures(
        h,
        &throughput_plot(&format!("{id}-throughput"), value)
            .into_iter()
            .collect::<Vec<_>>(),
    );
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        let summary =
            |p99: u64, max: u64| serde_json::json!({"count": 100, "p99": p99, "max": max});
        serde_json::json!({
            "system": {"hostname": "board"},
            "results": [
                {"variant": "plain", "periods": 250, "overruns": 3, "wake": summary(20_000, 25_000),
                 "lock": summary(1_000_000, 2_000_000), "lock_wait": summary(900_000, 1_900_000),
                 "bg_sections_per_s": 980.4,
                 "throughput": [{"t_s": 0.0, "sections_per_s": 900.0}, {"t_s": 0.1, "sections_per_s": 1000.0}]},
                {"variant": "delayed-quantile", "periods": 250, "overruns": 0, "wake": summary(19_000, 21_000),
                 "lock": summary(200_000, 500_000), "lock_wait": summary(10_000, 20_000),
                 "bg_sections_per_s": 900.0, "throughput": []}
            ],
            "goal": [{"variant": "delayed-quantile", "worst_vs_plain": 0.25, "worst_vs_pi": 0.9,
                      "throughput_loss": 0.082, "met": true}]
        })
    }

    #[test]
    fn lockbench_documents_are_recognised_and_drawn() {
        let value = doc();
        assert!(is_lockbench(&value));
        assert!(!is_lockbench(
            &serde_json::json!({"config": {}, "with": {}, "without": {}})
        ));
        let mut h = String::new();
        render(&mut h, "doc1", "bench", &value, |h, plots| {
            for p in plots {
                h.push_str(&p.to_svg())
            }
        });
        // The worst variant's bar is full length, the other in proportion.
        assert!(
            h.contains("<td>2.00 ms</td><td class=\"l\"><div class=\"bar\" style=\"width:160px\">")
        );
        assert!(
            h.contains("<td>500 us</td><td class=\"l\"><div class=\"bar\" style=\"width:40px\">")
        );
        assert!(h.contains("✔ delayed-quantile: worst lock latency 25 % of plain's, 90 % of PI's, background work -8.2 %"));
        // Only the variant with a throughput series is plotted.
        let plot = throughput_plot("t", &value).unwrap();
        assert_eq!(plot.series.len(), 1);
        assert!(h.contains("aria-label=\"Background critical sections per second"));
        let document = super::super::Document::from_value(value).unwrap();
        assert!(matches!(document, super::super::Document::Lockbench(_)));
    }
}
