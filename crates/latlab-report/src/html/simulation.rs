//! The delayed-locking simulation (`latlab lockbench --simulate --json`,
//! schema `latlab.lockbench-simulation`) in a report: the paper's Table 4
//! with the simulated figures next to the paper's.

use std::fmt::Write;

use serde_json::Value;

use super::svg::escape;

/// True for a simulation document.
pub fn is_simulation(value: &Value) -> bool {
    value["schema"] == "latlab.lockbench-simulation"
}

/// The section of one simulation document.
pub fn render(h: &mut String, id: &str, label: &str, value: &Value) {
    let us = |v: &Value| {
        v.as_f64()
            .map_or("?".into(), |ns| format!("{:.0} µs", ns / 1e3))
    };
    let paper = |field: &str, i: usize| {
        value["paper"][field][i]
            .as_f64()
            .map_or(String::new(), |v| format!("{v} µs"))
    };
    let config = &value["config"];
    let _ = writeln!(
        h,
        "<section class=\"run\" id=\"{id}\"><h2>{}</h2><p>The delayed-locking paper's kernel \
         experiment, simulated: a uniprocessor kernel with non-preemptible sections, a real-time \
         task every {} µs and a TCP sender, {} periods (seed {}), without and with delayed \
         locking. The paper's Table 4 is next to it.</p>",
        escape(label),
        config["rt_period_ns"].as_u64().unwrap_or(0) / 1000,
        config["periods"].as_u64().unwrap_or(0),
        config["seed"].as_u64().unwrap_or(0),
    );
    h.push_str(
        "<table class=\"summary\"><tr><th class=\"l\">OS latency of the real-time task</th>\
         <th>simulated</th><th>paper</th></tr>\n",
    );
    for (name, field, paper_field) in [
        ("minimum", "min", "min_us"),
        ("worst case", "max", "max_us"),
        ("average", "mean", "avg_us"),
    ] {
        for (i, run) in ["without", "with"].iter().enumerate() {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{name}, {run} delayed locking</td><td>{}</td><td>{}</td></tr>",
                us(&value[*run]["latency"][field]),
                paper(paper_field, i)
            );
        }
    }
    let max = |run: &str| value[run]["latency"]["max"].as_f64().unwrap_or(0.0);
    let kb = |run: &str| value[run]["kb_per_s"].as_f64().unwrap_or(0.0);
    let ratio = max("with") / max("without").max(1.0);
    let cost = 1.0 - kb("with") / kb("without").max(f64::MIN_POSITIVE);
    let paper_ratio = value["paper"]["max_us"][1].as_f64().unwrap_or(0.0)
        / value["paper"]["max_us"][0].as_f64().unwrap_or(1.0);
    let _ = writeln!(
        h,
        "<tr><td class=\"l\">worst case with / without</td><td>{:.0} %</td><td>{:.0} %</td></tr>\
         <tr><td class=\"l\">sender slowdown</td><td>{:.0} %</td><td>{:.0} %</td></tr>\
         <tr><td class=\"l\">refusals / forced entries (with)</td><td>{} / {}</td><td></td></tr>\
         </table></section>",
        ratio * 100.0,
        paper_ratio * 100.0,
        cost * 100.0,
        value["paper"]["sender_cost"].as_f64().unwrap_or(0.0) * 100.0,
        value["with"]["refusals"].as_u64().unwrap_or(0),
        value["with"]["forced_entries"].as_u64().unwrap_or(0),
    );
}
