//! LAVA's `lava-test-case` lines, as Linaro's test definitions send them.

use super::suite::Suite;

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
