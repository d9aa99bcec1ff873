//! The machine a run measured, as a list of facts.

use std::fmt::Write;

use latlab_document::RunDocument;

use crate::markup::escape;

/// Appends the system's facts (a `<details>` list).
pub(crate) fn render_system(h: &mut String, run: &RunDocument) {
    let sys = &run.system;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let s = &run.settings;
    let rows: Vec<(&str, String)> = vec![
        ("host", sys.hostname.clone()),
        (
            "kernel",
            format!("{} {}", sys.kernel_release, sys.kernel_version),
        ),
        ("machine", sys.machine.clone()),
        ("CPU model", opt(&sys.cpu_model)),
        ("online CPUs", sys.online_cpus.to_string()),
        (
            "preemption",
            match &sys.preemption_source {
                Some(src) => format!("{} ({src})", opt(&sys.preemption_model)),
                None => opt(&sys.preemption_model),
            },
        ),
        ("HZ", sys.hz.map_or("unknown".into(), |v| v.to_string())),
        (
            "high-resolution timers",
            if sys.high_res_timers { "yes" } else { "no" }.into(),
        ),
        ("clocksource", opt(&sys.clocksource)),
        (
            "virtualization",
            sys.virtualization
                .clone()
                .unwrap_or_else(|| "none (bare metal)".into()),
        ),
        (
            "isolcpus / nohz_full",
            format!(
                "{} / {}",
                sys.isolcpus.as_deref().unwrap_or("none"),
                sys.nohz_full.as_deref().unwrap_or("none")
            ),
        ),
        (
            "cpufreq governors",
            if sys.cpufreq_governors.is_empty() {
                "none".into()
            } else {
                sys.cpufreq_governors.join(", ")
            },
        ),
        (
            "idle states",
            if sys.idle_states.is_empty() {
                "none".into()
            } else {
                sys.idle_states.join(", ")
            },
        ),
        (
            "RT throttling",
            match (sys.rt_runtime_us, sys.rt_period_us) {
                (Some(-1), _) => "off".into(),
                (Some(r), Some(p)) => format!("{r} µs per {p} µs"),
                _ => "unknown".into(),
            },
        ),
        (
            "mlockall / cpu_dma_latency",
            format!(
                "{} / {}",
                if s.mlocked { "yes" } else { "no" },
                s.cpu_dma_latency_us
                    .map_or("not held".into(), |v| format!("{v} µs"))
            ),
        ),
        ("command", run.command_line.join(" ")),
        ("latlab", run.latlab_version.clone().unwrap_or_default()),
    ];
    h.push_str("<details class=\"system\" open><summary><b>System</b></summary><dl class=\"sys\">");
    for (k, v) in rows {
        let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    h.push_str("</dl></details>\n");
}
