//! The terminal summary and the cyclictest-style histogram of
//! `latlab respond`, built from the blocks `latlab run` uses.

use std::fmt::Write;

use crate::cyclictest::{histogram_text_columns, HistogramColumn};
use crate::table::{latency_table, system_line, verdict_block, worst_block, LatencyRow};
use latlab_measure::result::Verdict;
use latlab_measure::units::format_ns;

use latlab_respond::result::RespondResult;

/// The summary printed at the end of `latlab respond`.
pub fn summary_table(result: &RespondResult) -> String {
    let mut out = String::new();
    let s = &result.settings;
    let policy = |p: &latlab_respond::measure::Placement| {
        format!(
            "{} {}",
            p.policy.map_or("unknown policy", |p| p.kernel_name()),
            p.priority
        )
    };
    let _ = writeln!(
        out,
        "latlab respond: {} ({}{}), {} events in {:.1} s, gap {}{}",
        s.channel,
        s.channel_description,
        s.gpio
            .as_ref()
            .map_or(String::new(), |g| format!(", answer on GPIO {g}")),
        result.events_sent,
        result.elapsed_s,
        s.gap,
        if result.interrupted {
            " (interrupted)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "responder CPU{} {}{} | stimulus CPU{} {}",
        result.responder.cpu,
        policy(&result.responder),
        if result.responder.mlocked {
            ", mlocked"
        } else {
            ""
        },
        result.stimulus.cpu,
        policy(&result.stimulus),
    );
    system_line(&mut out, &result.system);
    if result.settings.steal_ns.iter().any(|&(_, ns)| ns > 0) {
        let steal: Vec<String> = result
            .settings
            .steal_ns
            .iter()
            .map(|&(cpu, ns)| format!("CPU{cpu} {}", format_ns(ns)))
            .collect();
        let _ = writeln!(
            out,
            "steal time during the run: {} (the hypervisor ran something else)",
            steal.join(", ")
        );
    }
    out.push('\n');
    out.push_str("Response latency (us)\n");
    let rows = [
        LatencyRow {
            label: "one-way",
            latency: &result.one_way.latency,
            extra: Some(result.events_lost),
        },
        LatencyRow {
            label: "round-trip",
            latency: &result.round_trip.latency,
            extra: Some(result.events_lost),
        },
    ];
    latency_table(&mut out, ("latency", 10), Some("lost"), &rows);
    match &result.gpio_edges {
        Some(edges) => {
            let _ = writeln!(
                out,
                "one-way: send to responder wake-up; round-trip: send to the GPIO input's \
                 edge, timestamped by the kernel (the paper's measurement): {} of {} edges, \
                 read by the stimulus {} later on average, {} at most",
                edges.within,
                edges.within + edges.outside,
                format_ns(edges.mean_edge_to_read_ns),
                format_ns(edges.max_edge_to_read_ns)
            );
            if edges.outside > 0 {
                let _ = writeln!(
                    out,
                    "warning: {} edge timestamps lay outside send..read (not CLOCK_MONOTONIC?): \
                     those round trips end at the stimulus's read",
                    edges.outside
                );
            }
            out.push('\n');
        }
        None => out.push_str(
            "one-way: send to responder wake-up; round-trip: send to answer received \
             (the paper's measurement)\n\n",
        ),
    }
    worst_block(
        &mut out,
        "Worst round trips",
        &result.round_trip.worst,
        "event",
    );
    if result.verdict != Verdict::None {
        let _ = writeln!(out, "Requirements checked on: {}", result.requirements_on);
    }
    verdict_block(
        &mut out,
        result.verdict,
        &result.requirements,
        "try --profile moblin-ivi for the paper's 40 us reference",
    );
    out
}

/// cyclictest's `-h` text with two columns: one-way, then round trip.
pub fn histogram_text(result: &RespondResult) -> String {
    let columns: Vec<HistogramColumn<'_>> = [&result.one_way, &result.round_trip]
        .into_iter()
        .map(|l| HistogramColumn {
            histogram: &l.histogram,
            latency: &l.latency,
            worst: &l.worst,
        })
        .collect();
    histogram_text_columns(&columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_document::Envelope;
    use latlab_measure::requirements::profile;
    use latlab_measure::stats::Stats;
    use latlab_measure::worst::{WorstSample, WorstSamples};
    use latlab_respond::measure::{Gap, LatencyOutput, Placement, RespondOutput};
    use latlab_respond::result::{CheckOn, RespondContext, RespondSettings};
    use latlab_rt::sched::Policy;
    use latlab_rt::sysinfo::SystemInfo;

    fn latency(base: u64, spike: u64) -> LatencyOutput {
        let mut stats = Stats::new();
        let mut worst = WorstSamples::new(20);
        for event in 0..2000u64 {
            let ns = if event == 1234 {
                spike
            } else {
                base + event * 7919 % 9_000
            };
            stats.record(ns);
            worst.offer(WorstSample {
                latency_ns: ns,
                cycle: event,
                intended_ns: 1_000_000_000 + event * 1_000_000,
                offset_s: event as f64 / 1e3,
                cpu: 1,
            });
        }
        LatencyOutput {
            stats,
            worst,
            series: Vec::new(),
        }
    }

    /// 2000 events over a pty; one 61 us round trip at event 1234 fails moblin-ivi.
    fn sample() -> RespondResult {
        let output = RespondOutput {
            sent: 2001,
            answered: 2000,
            lost: 1,
            one_way: latency(6_000, 31_000),
            round_trip: latency(14_000, 61_000),
            kernel_timestamps: false,
            gpio_edges: None,
            start_ns: 1_000_000_000,
            end_ns: 3_000_000_000,
            interrupted: false,
            responder: Placement {
                cpu: 1,
                policy: Some(Policy::Fifo),
                priority: 95,
                mlocked: true,
            },
            stimulus: Placement {
                cpu: 0,
                policy: Some(Policy::Fifo),
                priority: 94,
                mlocked: true,
            },
        };
        let system = SystemInfo {
            kernel_release: "6.18.0".into(),
            preemption_model: Some("none".into()),
            hz: Some(250),
            clocksource: Some("tsc".into()),
            virtualization: Some("KVM".into()),
            ..SystemInfo::default()
        };
        let mut envelope = Envelope::at(
            vec!["latlab".into(), "respond".into()],
            1_700_000_000.0,
            system,
        );
        envelope.id = None;
        let context = RespondContext {
            envelope,
            settings: RespondSettings {
                channel: "pty".into(),
                channel_description: "pseudo-terminal pair, raw (kernel tty path)".into(),
                gpio: None,
                count: Some(2001),
                duration_s: None,
                gap: Gap::Random {
                    min_ns: 500_000,
                    max_ns: 1_500_000,
                },
                policy: Policy::Fifo,
                priority: 95,
                timeout_ns: 1_000_000_000,
                cpu_dma_latency_us: Some(0),
                unprivileged: false,
                steal_ns: vec![(0, 0), (1, 2_500_000)],
            },
        };
        RespondResult::assemble(
            &output,
            context,
            &profile("moblin-ivi").unwrap(),
            CheckOn::RoundTrip,
        )
    }

    /// A GPIO run says its round trips end at the kernel's edge timestamps,
    /// and warns when some could not (the lab's CP2112 pair showed the
    /// summary said "answer received" either way).
    #[test]
    fn a_gpio_run_says_where_its_round_trips_end() {
        let mut result = sample();
        assert!(result.gpio_edges.is_none());
        assert!(summary_table(&result).contains("send to answer received"));
        let mut edges = latlab_respond::measure::GpioEdges::default();
        edges.end(1_000, 41_000, 43_000);
        edges.end(100_000, 140_000, 141_000);
        result.gpio_edges = Some(edges);
        let text = summary_table(&result);
        assert!(text.contains("edge, timestamped by the kernel"), "{text}");
        assert!(text.contains("2 of 2 edges"), "{text}");
        assert!(
            text.contains("1.50 us later on average, 2.00 us at most"),
            "{text}"
        );
        assert!(!text.contains("warning"), "{text}");
        edges.end(200_000, 5, 201_000);
        result.gpio_edges = Some(edges);
        assert!(summary_table(&result).contains("warning: 1 edge timestamps lay outside"));
        let json = serde_json::to_string(&result).unwrap();
        let back: RespondResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back.gpio_edges, Some(edges));
        // Results written before the field existed still load.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        old.as_object_mut().unwrap().remove("gpio_edges");
        let back: RespondResult = serde_json::from_value(old).unwrap();
        assert_eq!(back.gpio_edges, None);
    }

    #[test]
    fn summary_table_snapshot() {
        insta::assert_snapshot!(summary_table(&sample()));
    }

    #[test]
    fn moblin_profile_fails_on_the_round_trip_spike_only() {
        let result = sample();
        assert_eq!(result.verdict, Verdict::Fail);
        let details: Vec<&String> = result
            .requirements
            .iter()
            .flat_map(|o| &o.details)
            .collect();
        assert_eq!(
            details,
            ["FAIL: round-trip max 61.0 us > 40.0 us (event 1234)"]
        );
        assert_eq!(result.requirements.len(), 1, "period tolerance is skipped");
    }

    #[test]
    fn histogram_columns_add_up_to_the_answered_events() {
        let text = histogram_text(&sample());
        let mut sums = [0u64; 2];
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let mut fields = line.split([' ', '\t']);
            fields.next();
            for (sum, field) in sums.iter_mut().zip(fields) {
                *sum += field.parse::<u64>().unwrap();
            }
        }
        assert_eq!(sums, [2000, 2000]);
    }

    #[test]
    fn result_json_round_trips_with_schema_name() {
        let result = sample();
        let json = serde_json::to_string(&result).unwrap();
        let back: RespondResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, result);
        assert_eq!(back.schema, "latlab.respond");
    }
}
