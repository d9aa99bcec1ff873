//! The suite of each document kind: run, respond and lockbench results as
//! one case per requirement, with the figure each was checked on.

use latlab_document::{BenchReport, RespondResult, RunDocument};
use latlab_measure::histogram::Histogram;
use latlab_measure::requirements::{Requirement, RequirementOutcome};
use latlab_measure::result::Verdict;
use latlab_measure::stats::Summary;

use super::suite::{case_name, Case, Outcome, Suite};
use crate::units::micros;
use crate::verdict;

/// What requirements were checked on: a thread's or a direction's latency.
struct Checked<'a> {
    latency: &'a Summary,
    histogram: &'a Histogram,
    /// Share of periods within the tolerance (periodic subjects only).
    period_share: Option<f64>,
}

/// The cases of requirement outcomes checked on `subjects`.
fn requirement_cases(outcomes: &[RequirementOutcome], subjects: &[Checked<'_>]) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for outcome in outcomes {
        let (name, measurement, units) = match &outcome.requirement {
            Requirement::MaxLatency { .. } => (
                "max-latency".to_string(),
                subjects
                    .iter()
                    .map(|s| micros(s.latency.max))
                    .reduce(f64::max),
                "us",
            ),
            Requirement::Percentile { percentile, .. } => (
                format!("p{percentile}-latency"),
                subjects
                    .iter()
                    .filter_map(|s| {
                        s.latency
                            .percentile(*percentile)
                            .or_else(|| s.histogram.value_at_percentile(*percentile))
                    })
                    .map(micros)
                    .reduce(f64::max),
                "us",
            ),
            Requirement::PeriodTolerance { .. } => (
                "period-tolerance".to_string(),
                subjects
                    .iter()
                    .filter_map(|s| s.period_share)
                    .map(|share| share * 100.0)
                    .reduce(f64::min),
                "%",
            ),
        };
        let figure = measurement.map_or(String::new(), |m| format!(": measured {m:.1} {units}"));
        let mut message = format!(
            "{} {}{figure}",
            outcome.requirement,
            if outcome.passed { "held" } else { "missed" }
        );
        for detail in &outcome.details {
            message.push_str("; ");
            message.push_str(detail);
        }
        cases.push(Case {
            name: case_name(&name, &cases),
            outcome: if outcome.passed {
                Outcome::Pass
            } else {
                Outcome::Fail
            },
            measurement,
            units,
            message,
        });
    }
    cases
}

fn suspect_case(verdict: Verdict, detail: &str) -> Option<Case> {
    (verdict == Verdict::Suspect).then(|| Case {
        name: "measurement-sound".into(),
        outcome: Outcome::Error,
        measurement: None,
        units: "",
        message: format!("the measurement is suspect: {detail}"),
    })
}

fn latency_case(summary: &Summary, verdict: Verdict) -> Case {
    Case {
        name: "latency".into(),
        outcome: if verdict == Verdict::Suspect {
            Outcome::Error
        } else {
            Outcome::Pass
        },
        measurement: Some(micros(summary.max)),
        units: "us",
        message: format!(
            "no requirement given: max {:.1} us, p99.9 {:.1} us, p99 {:.1} us over {} samples",
            micros(summary.max),
            micros(summary.p99_9),
            micros(summary.p99),
            summary.count
        ),
    }
}

fn system_properties(
    id: Option<&str>,
    system: &latlab_rt::sysinfo::SystemInfo,
) -> Vec<(String, String)> {
    let mut p = Vec::new();
    if let Some(id) = id {
        p.push(("id".to_string(), id.to_string()));
    }
    p.push(("host".into(), system.hostname.clone()));
    p.push(("arch".into(), system.machine.clone()));
    p.push(("kernel".into(), system.kernel_release.clone()));
    p.push((
        "preemption".into(),
        system
            .preemption_model
            .clone()
            .unwrap_or_else(|| "unknown".into()),
    ));
    p
}

fn figure_properties(p: &mut Vec<(String, String)>, prefix: &str, s: &Summary) {
    for (name, value) in [
        ("samples", s.count),
        ("min_ns", s.min),
        ("p50_ns", s.p50),
        ("p99_ns", s.p99),
        ("p99_9_ns", s.p99_9),
        ("max_ns", s.max),
    ] {
        p.push((format!("{prefix}{name}"), value.to_string()));
    }
}

fn case_properties(p: &mut Vec<(String, String)>, cases: &[Case]) {
    for case in cases {
        if let Some(m) = case.measurement {
            p.push((
                format!("{}.measurement", case.name),
                format!("{m:.3} {}", case.units),
            ));
        }
    }
}

/// The suite of a `latlab run` result.
pub fn run_suite(run: &RunDocument) -> Suite {
    let r = &run.result;
    let subjects: Vec<Checked<'_>> = r
        .threads
        .iter()
        .map(|t| Checked {
            latency: &t.latency,
            histogram: &t.histogram,
            period_share: Some(t.period.share_within),
        })
        .collect();
    let mut cases = requirement_cases(&r.requirements, &subjects);
    if cases.is_empty() {
        cases.push(latency_case(&r.overall.latency, r.verdict));
    } else if let Some(case) = suspect_case(
        r.verdict,
        &format!(
            "{} wake-ups came before their intended time",
            r.overall.early_wakeups
        ),
    ) {
        cases.push(case);
    }
    let mut properties = system_properties(r.id.as_deref(), &r.system);
    properties.push(("verdict".into(), verdict::name(r.verdict).into()));
    properties.push(("load".into(), run.load_name()));
    figure_properties(&mut properties, "", &r.overall.latency);
    case_properties(&mut properties, &cases);
    Suite {
        name: r.schema.clone(),
        timestamp: r.started_at.clone().unwrap_or_default(),
        time_s: r.elapsed_s,
        properties,
        cases,
    }
}

/// The suite of a `latlab respond` result.
pub fn respond_suite(result: &RespondResult) -> Suite {
    let mut subjects = Vec::new();
    for (name, side) in [
        ("one-way", &result.one_way),
        ("round-trip", &result.round_trip),
    ] {
        if result.requirements_on == name || result.requirements_on == "both" {
            subjects.push(Checked {
                latency: &side.latency,
                histogram: &side.histogram,
                period_share: None,
            });
        }
    }
    let mut cases = requirement_cases(&result.requirements, &subjects);
    if cases.is_empty() {
        cases.push(latency_case(&result.one_way.latency, result.verdict));
    }
    let mut properties = system_properties(result.id.as_deref(), &result.system);
    properties.push(("verdict".into(), verdict::name(result.verdict).into()));
    properties.push(("channel".into(), result.settings.channel.clone()));
    properties.push(("events_lost".into(), result.events_lost.to_string()));
    figure_properties(&mut properties, "one_way.", &result.one_way.latency);
    figure_properties(&mut properties, "round_trip.", &result.round_trip.latency);
    case_properties(&mut properties, &cases);
    Suite {
        name: result.schema.clone(),
        timestamp: result.started_at.clone().unwrap_or_default(),
        time_s: result.elapsed_s,
        properties,
        cases,
    }
}

/// The suite of a `latlab lockbench` result: per variant its worst lock
/// latency (a passing case), and per delayed variant the goal check.
pub fn lockbench_suite(report: &BenchReport) -> Suite {
    let mut cases: Vec<Case> = Vec::new();
    let mut properties = system_properties(report.id.as_deref(), &report.system);
    for v in &report.results {
        let name = case_name(&format!("lock-latency-{}", v.variant), &cases);
        cases.push(Case {
            name,
            outcome: Outcome::Pass,
            measurement: Some(micros(v.lock.max)),
            units: "us",
            message: format!(
                "{}: worst lock latency {:.1} us, p99 {:.1} us over {} periods",
                v.variant,
                micros(v.lock.max),
                micros(v.lock.p99),
                v.periods
            ),
        });
        figure_properties(&mut properties, &format!("{}.lock.", v.variant), &v.lock);
    }
    for goal in &report.goal {
        let name = case_name(&format!("goal-{}", goal.variant), &cases);
        cases.push(Case {
            name,
            outcome: if goal.met {
                Outcome::Pass
            } else {
                Outcome::Fail
            },
            measurement: Some(goal.worst_vs_plain),
            units: "ratio",
            message: format!(
                "{}: worst lock latency {:.2}x plain's{}, background work lost {:.1} %: goal {}",
                goal.variant,
                goal.worst_vs_plain,
                goal.worst_vs_pi
                    .map_or(String::new(), |r| format!(", {r:.2}x pi's")),
                goal.throughput_loss * 100.0,
                if goal.met { "met" } else { "missed" }
            ),
        });
    }
    case_properties(&mut properties, &cases);
    Suite {
        name: report.schema.clone(),
        timestamp: report.started_at.clone().unwrap_or_default(),
        time_s: report.results.iter().map(|v| v.measured_s).sum(),
        properties,
        cases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::junit_lava::{junit_xml, lava_lines};

    #[test]
    fn a_run_becomes_one_case_per_requirement_with_its_figure() {
        let mut result = crate::fixture::sample_result();
        let reqs = [
            Requirement::MaxLatency {
                limit_ns: 1_000_000,
            },
            Requirement::Percentile {
                percentile: 99.9,
                limit_ns: 5_000_000,
            },
            Requirement::Percentile {
                percentile: 99.9,
                limit_ns: 1_000,
            },
        ];
        result.requirements = latlab_measure::requirements::evaluate(&reqs, &result.threads);
        result.id = Some("r-1".into());
        let suite = run_suite(&RunDocument::new(result.clone()));
        let names: Vec<&str> = suite.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["max-latency", "p99.9-latency", "p99.9-latency-2"]);
        let outcomes: Vec<Outcome> = suite.cases.iter().map(|c| c.outcome).collect();
        assert_eq!(outcomes, [Outcome::Fail, Outcome::Pass, Outcome::Fail]);
        assert_eq!(suite.cases[0].measurement, Some(3420.0));
        assert!(
            suite.cases[0].message.contains("missed"),
            "{}",
            suite.cases[0].message
        );
        assert!(suite.properties.contains(&("id".into(), "r-1".into())));
        assert!(suite
            .properties
            .contains(&("max-latency.measurement".into(), "3420.000 us".into())));
        let xml = junit_xml(&suite);
        assert!(
            xml.contains(r#"tests="3" failures="2" errors="0""#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="max_ns" value="3420000"/>"#),
            "{xml}"
        );
        let lava = lava_lines(&suite);
        assert_eq!(
            lava.lines().next().unwrap(),
            "lava-test-case max-latency --result fail --measurement 3420.000 --units us"
        );
        // No requirement: one case with the worst latency; suspect: an error.
        result.requirements.clear();
        result.verdict = Verdict::Suspect;
        let suite = run_suite(&RunDocument::new(result));
        assert_eq!(suite.cases.len(), 1);
        assert_eq!(suite.cases[0].outcome, Outcome::Error);
        assert!(junit_xml(&suite).contains("<error message="));
    }
}
