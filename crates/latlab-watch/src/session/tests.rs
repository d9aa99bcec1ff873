//! Tests of the snapshot merging.

use super::*;

#[test]
fn merged_snapshots_keep_the_worst_and_the_sums() {
    let s = |at, worst, late| Snapshot {
        at_ns: at,
        interval_ns: 60,
        samples: 10,
        worst_ns: worst,
        p99_ns: worst / 2,
        late,
        by_category: vec![("softirq".into(), late)],
    };
    let m = merge_pairs(&[s(60, 5, 1), s(120, 9, 2), s(180, 3, 0)]);
    assert_eq!(m.len(), 2);
    assert_eq!(
        (m[0].at_ns, m[0].interval_ns, m[0].worst_ns, m[0].late),
        (120, 120, 9, 3)
    );
    assert_eq!(m[0].by_category, vec![("softirq".to_string(), 3)]);
    assert_eq!(m[1].at_ns, 180);
}
