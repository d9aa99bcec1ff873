//! The terminal block of a run's agreement with its trace (`latlab run
//! --explain`): how many samples matched the trace, and how they differ.

use std::fmt::Write as _;

use latlab_explain::agreement::Agreement;
use latlab_measure::units::format_ns as fmt_ns;

fn signed_us(ns: i64) -> String {
    format!("{:+.1}", ns as f64 / 1e3)
}

/// The terminal block of a run's agreement with its trace (`latlab run --explain`).
pub fn agreement_text(agreement: &Agreement) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "run vs trace, sample by sample: {} of {} samples matched to the trace's periods of \
         the same expiry",
        agreement.matched, agreement.samples
    );
    if let Some(d) = &agreement.difference {
        let _ = writeln!(
            o,
            "  latlab minus trace (us): min {}  p50 {}  p99 {}  max {}; {} sample(s) below \
             the trace{}",
            signed_us(d.min),
            signed_us(d.p50),
            signed_us(d.p99),
            signed_us(d.max),
            agreement.below_trace,
            if agreement.below_trace > 0 {
                ": the measurement is wrong somewhere"
            } else {
                ""
            }
        );
    }
    if agreement.unmatched > 0 {
        let _ = writeln!(
            o,
            "  {} sample(s) without a trace period (the timer fired while the thread was still \
             running, or events were lost), worst {}",
            agreement.unmatched,
            fmt_ns(agreement.unmatched_max_ns.unwrap_or(0))
        );
    }
    if agreement.uncertain > 0 {
        let _ = writeln!(
            o,
            "  {} uncertain sample(s) not compared",
            agreement.uncertain
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_explain::agreement::Difference;

    #[test]
    fn the_agreement_names_matches_samples_below_the_trace_and_unmatched_ones() {
        let a = Agreement {
            samples: 6,
            matched: 4,
            below_trace: 1,
            difference: Some(Difference {
                min: -5_000,
                p50: 1_000,
                p99: 8_000,
                max: 8_000,
            }),
            unmatched: 1,
            unmatched_max_ns: Some(900_000),
            uncertain: 1,
        };
        let text = agreement_text(&a);
        assert!(text.contains("4 of 6 samples matched"), "{text}");
        assert!(
            text.contains("1 sample(s) below the trace: the measurement is wrong"),
            "{text}"
        );
        assert!(
            text.contains("1 sample(s) without a trace period"),
            "{text}"
        );
        assert!(text.contains("min -5.0"), "{text}");
    }
}
