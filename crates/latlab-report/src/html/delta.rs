//! A change against a baseline, as the comparison tables show it.

/// Relative change in percent, signed, or `-` when the baseline is zero.
pub(crate) fn change(base: f64, value: f64) -> Option<f64> {
    (base > 0.0).then(|| (value - base) / base * 100.0)
}

/// A delta cell; `lower_is_better` decides the colour.
pub(crate) fn delta_cell(base: f64, value: f64, lower_is_better: bool) -> String {
    match change(base, value) {
        None => "<td>–</td>".into(),
        Some(pct) => {
            let class = if pct.abs() < 5.0 {
                ""
            } else if (pct < 0.0) == lower_is_better {
                " class=\"better\""
            } else {
                " class=\"worse\""
            };
            format!("<td{class}>{pct:+.1} %</td>")
        }
    }
}
