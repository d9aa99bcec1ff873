//! The formats test farms read: JUnit XML (Jenkins, GitLab, KernelCI's
//! tools) and LAVA's `lava-test-case` lines.
//!
//! A result becomes a [`Suite`] of [`Case`]s, one per requirement (a run
//! without requirements: one case, `latency`, that passes unless the
//! measurement is suspect), each with the figure it was checked on; both
//! formats are rendered from the suite, so they always agree.
//!
//! ```
//! use latlab_report::farm::{junit_xml, lava_lines, Case, Outcome, Suite};
//! let suite = Suite {
//!     name: "latlab.run".into(),
//!     timestamp: "2026-11-24T10:00:00Z".into(),
//!     time_s: 10.0,
//!     properties: vec![("host".into(), "rpi4".into())],
//!     cases: vec![Case {
//!         name: "max-latency".into(),
//!         outcome: Outcome::Fail,
//!         measurement: Some(1250.5),
//!         units: "us",
//!         message: "max latency 1.25 ms > 1 ms".into(),
//!     }],
//! };
//! assert!(junit_xml(&suite).contains(r#"<failure message="max latency 1.25 ms &gt; 1 ms""#));
//! assert_eq!(lava_lines(&suite), "lava-test-case max-latency --result fail --measurement 1250.500 --units us\n");
//! ```

use latlab_document::{BenchReport, RespondResult, RunDocument};
use latlab_measure::histogram::Histogram;
use latlab_measure::requirements::{Requirement, RequirementOutcome};
use latlab_measure::result::Verdict;
use latlab_measure::stats::Summary;

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The requirement held.
    Pass,
    /// The requirement was missed.
    Fail,
    /// The measurement itself is suspect (JUnit `error`, LAVA `fail`).
    Error,
}

impl Outcome {
    fn lava(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail | Outcome::Error => "fail",
        }
    }
}

/// One test case: a requirement and the figure it was checked on.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Its name: letters, digits, `.`, `_` and `-` only (safe in a shell
    /// line and a LAVA test case id).
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// The figure checked (the worst over the threads or latencies checked).
    pub measurement: Option<f64>,
    /// The figure's unit (`us`, `%`, `ratio`).
    pub units: &'static str,
    /// What was checked and what was found, in words.
    pub message: String,
}

/// One result as a suite of cases.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// The result's schema (`latlab.run`, ...).
    pub name: String,
    /// When it started, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub timestamp: String,
    /// How long it measured, seconds.
    pub time_s: f64,
    /// The machine and the figures, as name and value.
    pub properties: Vec<(String, String)>,
    /// The cases.
    pub cases: Vec<Case>,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// A case name: what is left of `text` after anything but letters,
/// digits, `.`, `_` and `-` became `-`; `-2`, `-3`... when taken.
fn case_name(text: &str, taken: &[Case]) -> String {
    let base: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let mut name = base.clone();
    let mut n = 1;
    while taken.iter().any(|c| c.name == name) {
        n += 1;
        name = format!("{base}-{n}");
    }
    name
}

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
                subjects.iter().map(|s| us(s.latency.max)).reduce(f64::max),
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
                    .map(us)
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
        measurement: Some(us(summary.max)),
        units: "us",
        message: format!(
            "no requirement given: max {:.1} us, p99.9 {:.1} us, p99 {:.1} us over {} samples",
            us(summary.max),
            us(summary.p99_9),
            us(summary.p99),
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
    properties.push(("verdict".into(), verdict_name(r.verdict).into()));
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
    properties.push(("verdict".into(), verdict_name(result.verdict).into()));
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
            measurement: Some(us(v.lock.max)),
            units: "us",
            message: format!(
                "{}: worst lock latency {:.1} us, p99 {:.1} us over {} periods",
                v.variant,
                us(v.lock.max),
                us(v.lock.p99),
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

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::None => "none",
        Verdict::Suspect => "suspect",
    }
}

/// `text` escaped for XML text and attribute values; characters XML 1.0
/// cannot hold at all become U+FFFD.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// The suite as a JUnit XML file: `<testsuites>` holding one
/// `<testsuite>` (its properties: the machine and every figure), one
/// `<testcase>` per case (a missed requirement a `<failure>`, a suspect
/// measurement an `<error>`, the figures in the message and in
/// `<system-out>`).
pub fn junit_xml(suite: &Suite) -> String {
    let failures = suite
        .cases
        .iter()
        .filter(|c| c.outcome == Outcome::Fail)
        .count();
    let errors = suite
        .cases
        .iter()
        .filter(|c| c.outcome == Outcome::Error)
        .count();
    let e = xml_escape;
    // JUnit's schema wants a local date-time without zone designator.
    let timestamp = suite.timestamp.trim_end_matches('Z');
    let host = suite
        .properties
        .iter()
        .find(|(k, _)| k == "host")
        .map_or("localhost", |(_, v)| v.as_str());
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str(&format!(
        "<testsuites name=\"latlab\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{:.3}\">\n",
        suite.cases.len(),
        suite.time_s
    ));
    x.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{:.3}\" timestamp=\"{}\" hostname=\"{}\" id=\"0\" package=\"latlab\">\n",
        e(&suite.name),
        suite.cases.len(),
        suite.time_s,
        e(timestamp),
        e(host),
    ));
    x.push_str("    <properties>\n");
    for (name, value) in &suite.properties {
        x.push_str(&format!(
            "      <property name=\"{}\" value=\"{}\"/>\n",
            e(name),
            e(value)
        ));
    }
    x.push_str("    </properties>\n");
    for case in &suite.cases {
        x.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\">\n",
            e(&case.name),
            e(&suite.name),
            suite.time_s
        ));
        let kind = match case.outcome {
            Outcome::Pass => None,
            Outcome::Fail => Some("failure"),
            Outcome::Error => Some("error"),
        };
        if let Some(kind) = kind {
            x.push_str(&format!(
                "      <{kind} message=\"{}\" type=\"{}\">{}</{kind}>\n",
                e(&case.message),
                if kind == "failure" {
                    "requirement-missed"
                } else {
                    "measurement-suspect"
                },
                e(&case.message)
            ));
        }
        x.push_str(&format!(
            "      <system-out>{}</system-out>\n",
            e(&case.message)
        ));
        x.push_str("    </testcase>\n");
    }
    x.push_str("    <system-out></system-out>\n    <system-err></system-err>\n");
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// The suite as LAVA `lava-test-case` command lines, one per case (`NAME
/// --result pass|fail [--measurement M --units U]`), as Linaro's test
/// definitions send them; the names are safe to run through a shell.
pub fn lava_lines(suite: &Suite) -> String {
    let mut out = String::new();
    for case in &suite.cases {
        out.push_str(&format!(
            "lava-test-case {} --result {}",
            case.name,
            case.outcome.lava()
        ));
        if let Some(m) = case.measurement {
            let units = if case.units == "%" {
                "percent"
            } else {
                case.units
            };
            out.push_str(&format!(" --measurement {m:.3} --units {units}"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn names_are_shell_safe_and_unique() {
        let taken = vec![Case {
            name: "p99.9-latency".into(),
            outcome: Outcome::Pass,
            measurement: None,
            units: "us",
            message: String::new(),
        }];
        assert_eq!(case_name("p99.9-latency", &taken), "p99.9-latency-2");
        assert_eq!(case_name("a b;$(rm)", &[]), "a-b---rm-");
    }

    #[test]
    fn escaping_covers_markup_and_control_characters() {
        assert_eq!(
            xml_escape("<a href=\"x\">&'\u{1}"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;\u{fffd}"
        );
    }
}
