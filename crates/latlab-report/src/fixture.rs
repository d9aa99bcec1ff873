//! A deterministic result for snapshot tests of every renderer.

use latlab_document::Envelope;
use latlab_measure::engine::{MeasureOutput, ThreadOutput};
use latlab_measure::period::PeriodTracker;
use latlab_measure::requirements::{profile, Requirement};
use latlab_measure::result::{RunContext, RunResult, RunSettings, Verdict};
use latlab_measure::stats::Stats;
use latlab_measure::timer::TimerKind;
use latlab_measure::worst::{WorstSample, WorstSamples};
use latlab_respond::measure::{Gap, LatencyOutput, Placement, RespondOutput};
use latlab_respond::result::{CheckOn, RespondContext, RespondResult, RespondSettings};
use latlab_rt::sched::Policy;
use latlab_rt::sysinfo::SystemInfo;

const START: u64 = 1_000_000_000;
const INTERVAL: u64 = 1_000_000;

fn thread(cpu: usize, cycles: u64, spike: Option<(u64, u64)>) -> ThreadOutput {
    let mut stats = Stats::new();
    let mut worst = WorstSamples::new(20);
    let mut period = PeriodTracker::new(INTERVAL, INTERVAL / 20);
    for cycle in 0..cycles {
        // A deterministic spread between 2 and 40 us.
        let mut latency = 2_000 + (cycle * 7919 % 38_000);
        if let Some((at, value)) = spike {
            if cycle == at {
                latency = value;
            }
        }
        let intended = START + cycle * INTERVAL;
        stats.record(latency);
        worst.offer(WorstSample {
            latency_ns: latency,
            cycle,
            intended_ns: intended,
            offset_s: (cycle * INTERVAL) as f64 / 1e9,
            cpu,
        });
        period.record(intended + latency);
    }
    ThreadOutput {
        cpu,
        interval_ns: INTERVAL,
        policy: Some(Policy::Fifo),
        priority: 95,
        affinity: vec![cpu],
        stats,
        worst,
        series: Vec::new(),
        period,
        cycles,
        missed_periods: u64::from(spike.is_some()) * 3,
        early_wakeups: 0,
        max_early_ns: 0,
        uncertain_expiries: 0,
    }
}

/// Two CPUs, 10 s at 1 ms; CPU1 has a 3.42 ms spike at cycle 8123 and fails
/// a 1 ms maximum.
pub fn sample_result() -> RunResult {
    result_of(vec![
        thread(0, 10_000, None),
        thread(1, 10_000, Some((8123, 3_420_000))),
    ])
}

/// [`sample_result`] where CPU0 also had `early` wake-ups before their
/// intended time, the most early by `max_early_ns`.
pub fn sample_result_with_early(early: u64, max_early_ns: u64) -> RunResult {
    let mut cpu0 = thread(0, 10_000, None);
    cpu0.early_wakeups = early;
    cpu0.max_early_ns = max_early_ns;
    result_of(vec![cpu0, thread(1, 10_000, Some((8123, 3_420_000)))])
}

/// [`sample_result`] where CPU1's spike is 250 ms: past the 100 ms the
/// cyclictest histogram text covers, so it is an overflow there.
pub fn sample_result_with_overflow() -> RunResult {
    result_of(vec![
        thread(0, 10_000, None),
        thread(1, 10_000, Some((8123, 250_000_000))),
    ])
}

/// The run result of these measurement threads, with a 1 ms maximum.
fn result_of(threads: Vec<ThreadOutput>) -> RunResult {
    let output = MeasureOutput {
        threads,
        start_ns: START,
        end_ns: START + 10 * 1_000_000_000,
        interrupted: false,
        samples_written: None,
        samples_error: None,
    };
    let system = SystemInfo {
        hostname: "board".into(),
        kernel_release: "6.18.0-test".into(),
        kernel_version: "#1 SMP PREEMPT_DYNAMIC".into(),
        machine: "x86_64".into(),
        preemption_model: Some("none".into()),
        hz: Some(250),
        high_res_timers: true,
        clocksource: Some("tsc".into()),
        online_cpus: 2,
        ..SystemInfo::default()
    };
    let mut envelope = Envelope::at(
        vec![
            "latlab".into(),
            "run".into(),
            "--max-latency".into(),
            "1ms".into(),
        ],
        1_795_312_479.0,
        system,
    );
    // No random id: the snapshots stay the same.
    envelope.id = None;
    let context = RunContext {
        envelope,
        settings: RunSettings {
            cpus: vec![0, 1],
            interval_ns: INTERVAL,
            interval_step_ns: 0,
            timer: TimerKind::ClockNanosleep,
            policy: Policy::Fifo,
            priority: 95,
            duration_s: Some(10.0),
            loops: None,
            period_tolerance: 0.05,
            cpu_dma_latency_us: Some(0),
            mlocked: true,
            unprivileged: false,
            steal_ns: vec![(0, 0), (1, 0)],
        },
    };
    RunResult::assemble(
        &output,
        context,
        &[Requirement::MaxLatency {
            limit_ns: 1_000_000,
        }],
    )
}

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

/// A `latlab respond` result: 2000 events over a pty; one 61 us round trip at event 1234 fails moblin-ivi.
pub fn sample_respond() -> RespondResult {
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
    // No random id: the snapshots stay the same.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The result JSON is an output format too: its shape is the schema.
    #[test]
    fn result_json_snapshot() {
        let result = sample_result();
        let mut value = serde_json::to_value(&result).unwrap();
        // Long arrays: keep their length and first element.
        fn shorten(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Array(items) if items.len() > 2 => {
                    let n = items.len();
                    items.truncate(1);
                    items.push(serde_json::json!(format!("... {n} items")));
                }
                serde_json::Value::Array(items) => items.iter_mut().for_each(shorten),
                serde_json::Value::Object(map) => map.values_mut().for_each(shorten),
                _ => {}
            }
        }
        shorten(&mut value);
        insta::assert_json_snapshot!(value);
        // And it reads back into the same result.
        let text = serde_json::to_string(&result).unwrap();
        let back: RunResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.overall.latency, result.overall.latency);
        assert_eq!(back.threads[1].histogram, result.threads[1].histogram);
    }

    #[test]
    fn an_early_wake_up_makes_the_verdict_suspect_whatever_the_requirements() {
        assert_eq!(sample_result().verdict, Verdict::Fail);
        let result = sample_result_with_early(2, 97_500);
        assert_eq!(result.verdict, Verdict::Suspect);
        assert_eq!(result.overall.early_wakeups, 2);
        assert_eq!(result.threads[0].max_early_ns, 97_500);
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(json["verdict"], "suspect");
        // A result written before the field existed still reads.
        let mut old = json.clone();
        old["overall"]
            .as_object_mut()
            .unwrap()
            .remove("early_wakeups");
        let back: RunResult = serde_json::from_value(old).unwrap();
        assert_eq!(back.overall.early_wakeups, 0);
    }
}
