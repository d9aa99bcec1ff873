//! The papers' requirement classes (the named [`PROFILES`]) checked against
//! one run: met or missed, and the verdict line that says so.
//!
//! ```
//! use latlab_measure::classes::{title, ClassOutcome};
//! // A run without threads meets every class: nothing violated it.
//! let outcome = ClassOutcome::check("emblix-class2", &[]).unwrap();
//! assert!(outcome.met);
//! assert_eq!(title("emblix-class2"), "Emblix class 2 (< 1 ms)");
//! ```

use crate::requirements::{self, PROFILES};
use crate::result::ThreadResult;

/// One requirement class checked against one run.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassOutcome {
    /// True when every requirement of the class held on every thread.
    pub met: bool,
    /// Met: the first `PASS: ...` line; missed: every `FAIL: ...` line (one
    /// per violating thread), joined by `; `.
    pub line: String,
}

impl ClassOutcome {
    /// Checks the named profile (`emblix-class2`, one of [`PROFILES`])
    /// against the threads of a run; an unknown name is an error naming
    /// the known ones.
    pub fn check(profile: &str, threads: &[ThreadResult]) -> Result<ClassOutcome, String> {
        let requirements = requirements::profile(profile)?;
        let outcomes = requirements::evaluate(&requirements, threads);
        let met = outcomes.iter().all(|o| o.passed);
        let lines: Vec<&str> = outcomes
            .iter()
            .filter(|o| o.passed == met)
            .flat_map(|o| o.details.iter().map(String::as_str))
            .collect();
        let line = if met {
            lines.first().copied().unwrap_or_default().to_string()
        } else {
            lines.join("; ")
        };
        Ok(ClassOutcome { met, line })
    }
}

/// The class and its limit in a few words (`Emblix class 2 (< 1 ms)`): a
/// known profile's short title, else its description up to the colon, else
/// the name itself.
pub fn title(profile: &str) -> &str {
    match profile {
        "emblix-class1" => "Emblix class 1 (< 100 ms)",
        "emblix-class2" => "Emblix class 2 (< 1 ms)",
        "emblix-class3" => "Emblix class 3 (< 100 us)",
        "moblin-ivi" => "Moblin IVI (40 us, periods +-5 %)",
        _ => PROFILES
            .iter()
            .find(|(name, _)| *name == profile)
            .map_or(profile, |(_, description)| {
                description.split_once(':').map_or(description, |(t, _)| t)
            }),
    }
}
