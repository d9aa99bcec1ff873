//! The coloured badges of the report: a verdict, a requirement met.

use latlab_measure::result::Verdict;

use crate::verdict;

/// A verdict's badge: `PASS`, `FAIL`, `no requirement`, `SUSPECT: early
/// wake-ups`.
pub(crate) fn verdict_badge(v: Verdict) -> String {
    let why = if v == Verdict::Suspect {
        ": early wake-ups"
    } else {
        ""
    };
    format!(
        "<span class=\"badge {}\">{}{why}</span>",
        verdict::badge_class(v),
        verdict::headline(v)
    )
}

/// A requirement class met (`met`) or missed (`MISSED`).
pub(crate) fn met_badge(met: bool) -> &'static str {
    if met {
        "<span class=\"badge pass\">met</span>"
    } else {
        "<span class=\"badge fail\">MISSED</span>"
    }
}
