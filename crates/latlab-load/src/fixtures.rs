//! An example report shared by this crate's tests and the renderers' tests
//! (latlab-report), so both check the same data.

use crate::report::{KindReport, LoadReport};

/// Two seconds of one cpu and one net worker, with a warning.
pub fn sample_report() -> LoadReport {
    LoadReport {
        spec: "cpu:1,net:1".into(),
        command: None,
        duration_s: 2.0,
        interval_s: 1.0,
        kinds: vec![
            KindReport {
                kind: "cpu".into(),
                workers: 1,
                unit: "ops".into(),
                total: 3_000_000_000,
                per_second: 1.5e9,
                series: vec![1.4e9, 1.6e9],
                us_per_kib: None,
            },
            KindReport {
                kind: "net".into(),
                workers: 1,
                unit: "bytes".into(),
                total: 2_048_000_000,
                per_second: 1.024e9,
                series: vec![1.0e9, 1.048e9],
                us_per_kib: Some(vec![Some(1.024), Some(0.977)]),
            },
        ],
        external: None,
        warnings: vec!["io ran on a tmpfs".into()],
    }
}
