//! A result as test cases: the [`Suite`] both farm formats are written from.

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
    /// The LAVA result word: `pass`, or `fail` (a suspect measurement too).
    pub fn lava(self) -> &'static str {
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

/// A case name: what is left of `text` after anything but letters,
/// digits, `.`, `_` and `-` became `-`; `-2`, `-3`... when taken.
pub(crate) fn case_name(text: &str, taken: &[Case]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
