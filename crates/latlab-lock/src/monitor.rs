//! The lock monitor (the paper's "spin lock monitor"): hold time per call site of one
//! lock, and the prediction for each site.
//!
//! Sites are found by `#[track_caller]` [`Location`]s in a fixed-size table that is
//! filled without locking. A site's statistics and predictor are only written by the
//! thread that holds the lock, so the lock itself protects them; the prediction is
//! also kept in an atomic so that admission can read it before taking the lock.

use std::cell::UnsafeCell;
use std::panic::Location;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use serde::Serialize;

use crate::predict::{Predictor, PredictorKind};

/// How many distinct call sites one lock tracks; later sites share one overflow entry.
pub const MAX_SITES: usize = 64;

/// The hold time a sample contributes, from its wall-clock duration (`CLOCK_MONOTONIC`)
/// and the holder's CPU time over it (`CLOCK_THREAD_CPUTIME_ID`).
///
/// If the holder ran uninterrupted the two agree (up to 10 µs plus 2 % for clock reads,
/// interrupts and the like) and the wall time is the hold. If it was preempted or
/// blocked, the wall time includes time other threads ran; the CPU time, which does not,
/// is taken instead. Preemption thus never inflates a sample.
pub fn hold_sample(wall_ns: u64, cpu_ns: u64) -> u64 {
    let slack = 10_000 + wall_ns / 50;
    if wall_ns.saturating_sub(cpu_ns) <= slack {
        wall_ns
    } else {
        cpu_ns
    }
}

/// Statistics of one call site of one lock.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SiteStats {
    /// `file:line:column` of the `lock()` call, or `(other sites)` for the overflow entry.
    pub location: String,
    /// Completed critical sections.
    pub count: u64,
    /// Mean hold time (see [`hold_sample`]), nanoseconds.
    pub mean_ns: u64,
    /// Longest hold time (see [`hold_sample`]), nanoseconds.
    pub max_ns: u64,
    /// The current prediction of the next hold time, nanoseconds.
    pub predicted_ns: u64,
    /// Times an acquisition at this site was refused.
    pub refusals: u64,
    /// Acquisitions at this site that entered after the refusal limit.
    pub forced_entries: u64,
    /// Admitted holds that were still running at the release they were admitted against.
    pub mispredictions: u64,
    /// Holds during which the holder was preempted (their CPU time was recorded).
    pub preempted: u64,
}

pub(crate) struct Site {
    key: AtomicPtr<Location<'static>>,
    pub(crate) predicted: AtomicU64,
    count: AtomicU64,
    total_ns: AtomicU64,
    max_ns: AtomicU64,
    pub(crate) refusals: AtomicU64,
    pub(crate) forced: AtomicU64,
    pub(crate) mispredictions: AtomicU64,
    preempted: AtomicU64,
    /// Written only while the lock is held.
    predictor: UnsafeCell<Option<Predictor>>,
}

impl Site {
    fn new() -> Self {
        Self {
            key: AtomicPtr::new(ptr::null_mut()),
            predicted: AtomicU64::new(0),
            count: AtomicU64::new(0),
            total_ns: AtomicU64::new(0),
            max_ns: AtomicU64::new(0),
            refusals: AtomicU64::new(0),
            forced: AtomicU64::new(0),
            mispredictions: AtomicU64::new(0),
            preempted: AtomicU64::new(0),
            predictor: UnsafeCell::new(None),
        }
    }
}

pub(crate) struct Monitor {
    kind: PredictorKind,
    /// `MAX_SITES` hashed entries plus the overflow entry at the end.
    sites: Box<[Site]>,
}

// SAFETY: the only non-Sync field is each site's predictor, which is only touched by the
// thread holding the lock that owns this monitor (see `record`).
unsafe impl Sync for Monitor {}
// SAFETY: as above; nothing in the monitor is tied to a thread.
unsafe impl Send for Monitor {}

fn same_site(a: &Location<'_>, b: &Location<'_>) -> bool {
    a.line() == b.line() && a.column() == b.column() && a.file() == b.file()
}

impl Monitor {
    pub(crate) fn new(kind: PredictorKind) -> Self {
        Self {
            kind,
            sites: (0..=MAX_SITES).map(|_| Site::new()).collect(),
        }
    }

    /// The index of `location`'s entry, creating it on first use.
    pub(crate) fn site(&self, location: &'static Location<'static>) -> usize {
        let start = (location.line() as usize)
            .wrapping_mul(31)
            .wrapping_add(location.column() as usize)
            % MAX_SITES;
        for probe in 0..MAX_SITES {
            let index = (start + probe) % MAX_SITES;
            let slot = &self.sites[index].key;
            let key = slot.load(Ordering::Acquire);
            if key.is_null() {
                let wanted = location as *const Location<'static> as *mut Location<'static>;
                match slot.compare_exchange(
                    ptr::null_mut(),
                    wanted,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return index,
                    // SAFETY: non-null keys are always `&'static Location`s.
                    Err(other) if same_site(unsafe { &*other }, location) => return index,
                    Err(_) => continue,
                }
            }
            // SAFETY: non-null keys are always `&'static Location`s.
            if same_site(unsafe { &*key }, location) {
                return index;
            }
        }
        MAX_SITES
    }

    pub(crate) fn get(&self, index: usize) -> &Site {
        &self.sites[index]
    }

    /// Records a completed hold at site `index` (see [`hold_sample`]).
    ///
    /// # Safety
    /// The caller must hold the lock this monitor belongs to.
    pub(crate) unsafe fn record(&self, index: usize, wall_ns: u64, cpu_ns: u64) {
        let site = &self.sites[index];
        let hold_ns = hold_sample(wall_ns, cpu_ns);
        if hold_ns != wall_ns {
            site.preempted.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: exclusive access is guaranteed by the caller holding the lock.
        let predictor = unsafe { &mut *site.predictor.get() };
        let predictor = predictor.get_or_insert_with(|| Predictor::new(self.kind));
        predictor.record(hold_ns);
        site.predicted.store(predictor.predict(), Ordering::Relaxed);
        site.count.fetch_add(1, Ordering::Relaxed);
        site.total_ns.fetch_add(hold_ns, Ordering::Relaxed);
        site.max_ns.fetch_max(hold_ns, Ordering::Relaxed);
    }

    /// A snapshot of every site that was used.
    pub(crate) fn stats(&self) -> Vec<SiteStats> {
        let mut out = Vec::new();
        for (index, site) in self.sites.iter().enumerate() {
            let key = site.key.load(Ordering::Acquire);
            let location = if index == MAX_SITES {
                let used =
                    site.count.load(Ordering::Relaxed) + site.refusals.load(Ordering::Relaxed);
                if used == 0 {
                    continue;
                }
                "(other sites)".to_string()
            } else if key.is_null() {
                continue;
            } else {
                // SAFETY: non-null keys are always `&'static Location`s.
                let loc = unsafe { &*key };
                format!("{}:{}:{}", loc.file(), loc.line(), loc.column())
            };
            let count = site.count.load(Ordering::Relaxed);
            let total = site.total_ns.load(Ordering::Relaxed);
            out.push(SiteStats {
                location,
                count,
                mean_ns: total.checked_div(count).unwrap_or(0),
                max_ns: site.max_ns.load(Ordering::Relaxed),
                predicted_ns: site.predicted.load(Ordering::Relaxed),
                refusals: site.refusals.load(Ordering::Relaxed),
                forced_entries: site.forced.load(Ordering::Relaxed),
                mispredictions: site.mispredictions.load(Ordering::Relaxed),
                preempted: site.preempted.load(Ordering::Relaxed),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_sample_takes_wall_time_unless_the_holder_was_preempted() {
        // Uninterrupted: wall and CPU agree within the slack.
        assert_eq!(hold_sample(2_000_000, 1_990_000), 2_000_000);
        assert_eq!(hold_sample(5_000, 0), 5_000);
        // Preempted for 1 ms: the CPU time counts.
        assert_eq!(hold_sample(3_000_000, 2_000_000), 2_000_000);
        assert_eq!(hold_sample(0, 0), 0);
    }

    #[test]
    fn sites_are_told_apart_by_call_site() {
        let monitor = Monitor::new(PredictorKind::Max);
        let a = monitor.site(Location::caller());
        let b = monitor.site(Location::caller());
        assert_ne!(a, b);
        let locations: Vec<_> = (0..3).map(|_| monitor.site(Location::caller())).collect();
        assert!(
            locations.iter().all(|&i| i == locations[0]),
            "one site in a loop"
        );
        // SAFETY: no lock is involved in this test; the monitor is used by one thread.
        unsafe {
            monitor.record(a, 1_000, 1_000);
            monitor.record(a, 3_000_000, 1_000_000);
        }
        let stats = monitor.stats();
        let site_a = stats.iter().find(|s| s.count == 2).expect("site a");
        assert_eq!(
            (site_a.max_ns, site_a.predicted_ns, site_a.preempted),
            (1_000_000, 1_000_000, 1)
        );
        assert!(
            site_a.location.contains("monitor.rs"),
            "{}",
            site_a.location
        );
    }

    #[test]
    fn more_sites_than_the_table_share_the_overflow_entry() {
        let monitor = Monitor::new(PredictorKind::Max);
        // Distinct locations: one closure call site per iteration is not enough, so
        // build them from a macro-free table of real call sites.
        #[track_caller]
        fn here() -> &'static Location<'static> {
            Location::caller()
        }
        let mut seen = std::collections::HashSet::new();
        let sites = [
            here(),
            here(),
            here(),
            here(),
            here(),
            here(),
            here(),
            here(),
            here(),
            here(),
        ];
        for loc in sites {
            seen.insert(monitor.site(loc));
        }
        assert_eq!(seen.len(), 10);
        assert!(!seen.contains(&MAX_SITES));
    }
}
