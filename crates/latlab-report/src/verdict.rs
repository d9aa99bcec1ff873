//! A verdict in words, the same in every format.

use latlab_measure::result::Verdict;

/// The verdict as the JSON spells it: `pass`, `fail`, `none`, `suspect`
/// (JUnit properties, the HTML's respond summary).
pub fn name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::None => "none",
        Verdict::Suspect => "suspect",
    }
}

/// The verdict as a headline, the terminal's `Verdict:` line and the
/// HTML's badge: its [`name`] in capitals (`PASS`, `FAIL`, `SUSPECT`), or
/// `no requirement`.
pub fn headline(verdict: Verdict) -> String {
    match verdict {
        Verdict::None => "no requirement".into(),
        _ => name(verdict).to_uppercase(),
    }
}

/// The colour of the verdict's badge, a CSS class of the HTML report:
/// `pass`, `fail` (a suspect measurement too), `none`.
pub fn badge_class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Fail | Verdict::Suspect => "fail",
        Verdict::None => "none",
    }
}
