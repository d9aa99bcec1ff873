//! JUnit XML, as Jenkins, GitLab and KernelCI's tools read it.

use super::suite::{Outcome, Suite};
use crate::markup::escape;

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
    let e = escape;
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
