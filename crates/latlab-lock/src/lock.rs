//! The lock: one interface for the plain, priority-inheritance, priority-ceiling and
//! delayed variants, each guarding its data like `std::sync::Mutex`.

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::monitor::{Monitor, SiteStats};
use crate::predict::PredictorKind;
use crate::raw::{CeilingMutex, CeilingToken, FutexMutex, PiMutex};
use crate::sys;
use crate::timer::ReleaseTimer;
use crate::LockError;

/// Settings of the delayed-locking admission rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DelayedConfig {
    /// How each call site's next hold time is predicted (default: p99.5 of the last 1024).
    pub predictor: PredictorKind,
    /// Safety margin added to the predicted hold, nanoseconds (default 100 µs): covers the
    /// real-time task's wake-up and the work it does before taking the lock.
    pub margin_ns: u64,
    /// Refusals of one acquisition after which it enters anyway (default 100, the paper's):
    /// nobody starves, even when a hold is predicted to be longer than the period.
    pub max_refusals: u32,
    /// A published release older than this is treated as "no real-time task" (default
    /// 10 ms): a real-time task that stopped without [`ReleaseTimer::retire`] does not
    /// block everybody.
    pub stale_after_ns: u64,
    /// Build on the priority-inheritance futex instead of the plain futex mutex (default
    /// off). Admission avoids most collisions; inheritance bounds the rest, when a holder
    /// that was admitted is preempted by other work past the release.
    pub inherit: bool,
}

impl Default for DelayedConfig {
    fn default() -> Self {
        Self {
            predictor: PredictorKind::default(),
            margin_ns: 100_000,
            max_refusals: 100,
            stale_after_ns: 10_000_000,
            inherit: false,
        }
    }
}

impl DelayedConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), LockError> {
        self.predictor.validate()?;
        if self.stale_after_ns == 0 {
            return Err(LockError::InvalidConfig(
                "stale_after_ns of 0 would ignore every release; use e.g. 10 ms".into(),
            ));
        }
        Ok(())
    }
}

/// The admission decision for one attempt to enter a critical section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Enter. `deadline_ns` is the release the hold must end before (none when no
    /// release is pending or the pending one is stale).
    Admit {
        /// The release time the admission was checked against.
        deadline_ns: Option<u64>,
    },
    /// Do not enter yet: wait until the real-time task publishes its next release, or at
    /// the latest until `wait_until_ns`, then ask again.
    Refuse {
        /// Absolute `CLOCK_MONOTONIC` time after which to ask again anyway.
        wait_until_ns: u64,
    },
}

/// The delayed-locking rule: a section predicted to take `predicted_ns` may start at
/// `now_ns` only if it ends, plus the margin, no later than the next release
/// (`predicted + margin <= t_ut_int`). Without a pending release, or with a release more
/// than `stale_after_ns` in the past, everything is admitted.
pub fn decide(
    now_ns: u64,
    next_release_ns: Option<u64>,
    predicted_ns: u64,
    config: &DelayedConfig,
) -> Decision {
    let Some(next) = next_release_ns else {
        return Decision::Admit { deadline_ns: None };
    };
    let stale_at = next.saturating_add(config.stale_after_ns);
    if now_ns > stale_at {
        return Decision::Admit { deadline_ns: None };
    }
    let end = now_ns
        .checked_add(predicted_ns)
        .and_then(|t| t.checked_add(config.margin_ns));
    match end {
        Some(end) if end <= next => Decision::Admit {
            deadline_ns: Some(next),
        },
        _ => Decision::Refuse {
            wait_until_ns: stale_at,
        },
    }
}

/// Which lock protocol a [`Lock`] uses.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Variant {
    /// A plain futex mutex: waiters sleep, the kernel wakes the highest-priority one.
    Plain,
    /// A priority-inheritance futex (FUTEX_LOCK_PI): a low-priority holder runs at the
    /// priority of the highest-priority waiter.
    PriorityInheritance,
    /// Immediate priority ceiling: whoever takes the lock runs at `SCHED_FIFO` `priority`
    /// (at least the real-time task's) until it releases it. Raising the priority needs
    /// CAP_SYS_NICE; without it the lock works unboosted and counts the failures.
    PriorityCeiling {
        /// The ceiling priority, 1..=99.
        priority: u8,
    },
    /// Delayed locking on the plain futex mutex (or, with [`DelayedConfig::inherit`], on
    /// the PI futex): a thread enters only if its predicted hold ends before the
    /// real-time task's next release.
    Delayed {
        /// Where the real-time task publishes its next release.
        timer: ReleaseTimer,
        /// The admission settings.
        config: DelayedConfig,
    },
}

impl Variant {
    /// A short name: `plain`, `pi`, `ceiling` or `delayed-<predictor>`.
    pub fn name(&self) -> String {
        match self {
            Self::Plain => "plain".into(),
            Self::PriorityInheritance => "pi".into(),
            Self::PriorityCeiling { .. } => "ceiling".into(),
            Self::Delayed { config, .. } if config.inherit => {
                format!("delayed-pi-{}", config.predictor.name())
            }
            Self::Delayed { config, .. } => format!("delayed-{}", config.predictor.name()),
        }
    }
}

/// Counters of one lock.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct LockCounters {
    /// Completed acquisitions (every variant, every thread).
    pub acquisitions: u64,
    /// Acquisitions the admission rule allowed (delayed variant).
    pub admissions: u64,
    /// Times an acquisition was refused and had to wait (delayed variant).
    pub refusals: u64,
    /// Acquisitions that entered after `max_refusals` refusals (delayed variant).
    pub forced_entries: u64,
    /// Admitted holds that were still running at the release they were admitted against.
    pub mispredictions: u64,
    /// Acquisitions by the real-time thread, which are never refused (delayed variant).
    pub rt_acquisitions: u64,
    /// Times the ceiling variant could not raise the caller's priority (no CAP_SYS_NICE).
    pub ceiling_boost_failures: u64,
}

enum Base {
    Plain(FutexMutex),
    Pi(PiMutex),
    Ceiling(CeilingMutex),
}

#[derive(Default)]
struct Counters {
    acquisitions: AtomicU64,
    admissions: AtomicU64,
    refusals: AtomicU64,
    forced: AtomicU64,
    mispredictions: AtomicU64,
    rt: AtomicU64,
}

/// A mutual-exclusion lock protecting a `T`, with a lock monitor and one of several
/// protocols ([`Variant`]). Use [`DelayedLock`] for the delayed-locking variant.
///
/// Every [`lock`](Self::lock) call site is tracked separately (`#[track_caller]`): its
/// hold times feed that site's predictor. A hold is measured on `CLOCK_MONOTONIC` and on
/// the holder's `CLOCK_THREAD_CPUTIME_ID`; when the two differ the holder was preempted
/// and the CPU time is taken instead, so preemption never inflates a sample (see
/// [`hold_sample`](crate::hold_sample)).
///
/// A panic while the lock is held releases it; the data is not poisoned.
pub struct Lock<T: ?Sized> {
    base: Base,
    variant: Variant,
    monitor: Monitor,
    counters: Counters,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out access to `T` to one thread at a time.
unsafe impl<T: ?Sized + Send> Send for Lock<T> {}
// SAFETY: as above; `T` only needs to be sendable between threads, like std's Mutex.
unsafe impl<T: ?Sized + Send> Sync for Lock<T> {}

impl<T> Lock<T> {
    /// A lock of the given variant around `data`.
    pub fn new(data: T, variant: Variant) -> Result<Self, LockError> {
        let (base, kind) = match &variant {
            Variant::Plain => (Base::Plain(FutexMutex::new()), PredictorKind::default()),
            Variant::PriorityInheritance => {
                PiMutex::probe()?;
                (Base::Pi(PiMutex::new()), PredictorKind::default())
            }
            Variant::PriorityCeiling { priority } => {
                if !(1..=99).contains(priority) {
                    return Err(LockError::InvalidPriority {
                        priority: i32::from(*priority),
                    });
                }
                (
                    Base::Ceiling(CeilingMutex::new(i32::from(*priority))),
                    PredictorKind::default(),
                )
            }
            Variant::Delayed { config, .. } => {
                config.validate()?;
                if config.inherit {
                    PiMutex::probe()?;
                    (Base::Pi(PiMutex::new()), config.predictor)
                } else {
                    (Base::Plain(FutexMutex::new()), config.predictor)
                }
            }
        };
        Ok(Self {
            base,
            variant,
            monitor: Monitor::new(kind),
            counters: Counters::default(),
            data: UnsafeCell::new(data),
        })
    }

    /// Consumes the lock, returning the data.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> Lock<T> {
    /// The protocol of this lock.
    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    /// Mutable access without locking (the borrow checker proves exclusivity).
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    /// Acquires the lock, blocking (never spinning) until it is available and, for the
    /// delayed variant, until the admission rule allows this call site to enter.
    ///
    /// # Panics
    /// For the priority-inheritance variant, if the kernel rejects the PI futex
    /// operation, which happens when one thread takes the lock twice.
    #[track_caller]
    pub fn lock(&self) -> LockGuard<'_, T> {
        let site = self.monitor.site(Location::caller());
        let mut deadline = None;
        let mut token = None;
        match (&self.base, &self.variant) {
            (_, Variant::Delayed { timer, config }) => {
                if timer.is_current_thread_rt() {
                    self.raw_lock();
                    self.counters.rt.fetch_add(1, Ordering::Relaxed);
                } else {
                    deadline = self.admit(timer, config, site);
                }
            }
            (Base::Plain(raw), _) => raw.lock(),
            (Base::Pi(raw), _) => raw.lock(),
            (Base::Ceiling(raw), _) => token = Some(raw.lock()),
        }
        self.counters.acquisitions.fetch_add(1, Ordering::Relaxed);
        LockGuard {
            lock: self,
            site,
            start_wall_ns: sys::monotonic_ns(),
            start_cpu_ns: sys::thread_cpu_ns(),
            deadline,
            token,
            _not_send: PhantomData,
        }
    }

    /// Takes the base lock of a plain, PI or delayed lock (not ceiling).
    fn raw_lock(&self) {
        match &self.base {
            Base::Plain(raw) => raw.lock(),
            Base::Pi(raw) => raw.lock(),
            Base::Ceiling(_) => unreachable!("the delayed variant has no ceiling base"),
        }
    }

    /// Releases what [`raw_lock`](Self::raw_lock) took.
    fn raw_unlock(&self) {
        match &self.base {
            Base::Plain(raw) => raw.unlock(),
            Base::Pi(raw) => raw.unlock(),
            Base::Ceiling(_) => unreachable!("the delayed variant has no ceiling base"),
        }
    }

    /// The admission loop of the delayed variant; returns with the base lock held and the
    /// release the hold was admitted against.
    fn admit(&self, timer: &ReleaseTimer, config: &DelayedConfig, site: usize) -> Option<u64> {
        let site_entry = self.monitor.get(site);
        let mut refusals = 0u32;
        loop {
            let epoch = timer.epoch();
            let predicted = site_entry.predicted.load(Ordering::Relaxed);
            let mut decision = decide(sys::monotonic_ns(), timer.next_release(), predicted, config);
            if let Decision::Admit { .. } = decision {
                self.raw_lock();
                // Waiting for the lock may have used up the window: check again.
                decision = decide(sys::monotonic_ns(), timer.next_release(), predicted, config);
                if let Decision::Admit { deadline_ns } = decision {
                    self.counters.admissions.fetch_add(1, Ordering::Relaxed);
                    return deadline_ns;
                }
                if refusals >= config.max_refusals {
                    self.force(site);
                    return None;
                }
                self.raw_unlock();
            } else if refusals >= config.max_refusals {
                self.raw_lock();
                self.force(site);
                return None;
            }
            refusals += 1;
            self.counters.refusals.fetch_add(1, Ordering::Relaxed);
            site_entry.refusals.fetch_add(1, Ordering::Relaxed);
            if let Decision::Refuse { wait_until_ns } = decision {
                timer.wait_for_publish(epoch, wait_until_ns);
            }
        }
    }

    fn force(&self, site: usize) {
        self.counters.forced.fetch_add(1, Ordering::Relaxed);
        self.monitor
            .get(site)
            .forced
            .fetch_add(1, Ordering::Relaxed);
    }

    /// The lock's counters.
    pub fn counters(&self) -> LockCounters {
        let c = &self.counters;
        LockCounters {
            acquisitions: c.acquisitions.load(Ordering::Relaxed),
            admissions: c.admissions.load(Ordering::Relaxed),
            refusals: c.refusals.load(Ordering::Relaxed),
            forced_entries: c.forced.load(Ordering::Relaxed),
            mispredictions: c.mispredictions.load(Ordering::Relaxed),
            rt_acquisitions: c.rt.load(Ordering::Relaxed),
            ceiling_boost_failures: match &self.base {
                Base::Ceiling(raw) => raw.boost_failures(),
                _ => 0,
            },
        }
    }

    /// Hold-time statistics and predictions per call site (the lock monitor).
    pub fn site_stats(&self) -> Vec<SiteStats> {
        self.monitor.stats()
    }

    fn unlock(
        &self,
        site: usize,
        start_wall_ns: u64,
        start_cpu_ns: u64,
        deadline: Option<u64>,
        token: Option<CeilingToken>,
    ) {
        let cpu = sys::thread_cpu_ns().saturating_sub(start_cpu_ns);
        let now = sys::monotonic_ns();
        let wall = now.saturating_sub(start_wall_ns);
        // SAFETY: the guard being dropped proves this thread holds the lock.
        unsafe { self.monitor.record(site, wall, cpu) };
        if let Some(deadline) = deadline {
            if now > deadline {
                self.counters.mispredictions.fetch_add(1, Ordering::Relaxed);
                self.monitor
                    .get(site)
                    .mispredictions
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
        match &self.base {
            Base::Plain(raw) => raw.unlock(),
            Base::Pi(raw) => raw.unlock(),
            Base::Ceiling(raw) => raw.unlock(token.unwrap_or(CeilingToken::NONE)),
        }
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Lock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lock")
            .field("variant", &self.variant.name())
            .field("counters", &self.counters())
            .finish_non_exhaustive()
    }
}

/// Access to the data of a held [`Lock`]; dropping it records the hold time and releases
/// the lock. It stays on the thread that took the lock (not `Send`).
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LockGuard<'a, T: ?Sized> {
    lock: &'a Lock<T>,
    site: usize,
    start_wall_ns: u64,
    start_cpu_ns: u64,
    deadline: Option<u64>,
    token: Option<CeilingToken>,
    _not_send: PhantomData<*const ()>,
}

// SAFETY: sharing a guard only shares `&T`.
unsafe impl<T: ?Sized + Sync> Sync for LockGuard<'_, T> {}

impl<T: ?Sized> Deref for LockGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves exclusive access.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for LockGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves exclusive access.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for LockGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock(
            self.site,
            self.start_wall_ns,
            self.start_cpu_ns,
            self.deadline,
            self.token.take(),
        );
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for LockGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A delayed-locking lock around a `T`: a [`Lock`] whose variant is
/// [`Variant::Delayed`], on the same futex mutex as [`Variant::Plain`].
///
/// It dereferences to [`Lock`], so `lock()`, `counters()` and `site_stats()` are
/// available directly.
pub struct DelayedLock<T>(Lock<T>);

impl<T> DelayedLock<T> {
    /// A delayed lock with the default settings (p99.5-of-1024 predictor, 100 µs margin,
    /// 100 refusals before a forced entry).
    pub fn new(data: T, timer: ReleaseTimer) -> Self {
        Self::with_config(data, timer, DelayedConfig::default())
            .expect("the default delayed-locking configuration is valid")
    }

    /// A delayed lock with the given settings.
    pub fn with_config(
        data: T,
        timer: ReleaseTimer,
        config: DelayedConfig,
    ) -> Result<Self, LockError> {
        Lock::new(data, Variant::Delayed { timer, config }).map(Self)
    }

    /// Consumes the lock, returning the data.
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }

    /// The underlying [`Lock`].
    pub fn into_lock(self) -> Lock<T> {
        self.0
    }
}

impl<T> Deref for DelayedLock<T> {
    type Target = Lock<T>;
    fn deref(&self) -> &Lock<T> {
        &self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for DelayedLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    const MS: u64 = 1_000_000;

    fn config(margin_ns: u64, max_refusals: u32) -> DelayedConfig {
        DelayedConfig {
            margin_ns,
            max_refusals,
            ..DelayedConfig::default()
        }
    }

    /// [`config`] with a release that does not go stale during a test (5 s, far beyond
    /// any stall of a loaded VM, short enough that a bug fails the test quickly): on a
    /// loaded machine a thread can start, or wake up, tens of milliseconds late, and a
    /// release that went stale (default 10 ms) meanwhile would admit with no deadline what
    /// the test expects to be refused, forced in or admitted against that release.
    fn never_stale(margin_ns: u64, max_refusals: u32) -> DelayedConfig {
        DelayedConfig {
            stale_after_ns: 5_000 * MS,
            ..config(margin_ns, max_refusals)
        }
    }

    /// Polls `done` every millisecond; fails after 30 s (a machine that busy is broken,
    /// not slow).
    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let give_up = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < give_up, "gave up waiting: {what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn decide_admits_only_sections_that_end_before_the_release() {
        let c = config(100, 100);
        // 1000 ns left: 800 + 100 fits, 901 + 100 does not.
        assert_eq!(
            decide(9_000, Some(10_000), 800, &c),
            Decision::Admit {
                deadline_ns: Some(10_000)
            }
        );
        assert_eq!(
            decide(9_000, Some(10_000), 900, &c),
            Decision::Admit {
                deadline_ns: Some(10_000)
            }
        );
        assert_eq!(
            decide(9_000, Some(10_000), 901, &c),
            Decision::Refuse {
                wait_until_ns: 10_000 + c.stale_after_ns
            }
        );
        // The release is due or running: refuse until the real-time task publishes.
        assert!(matches!(
            decide(10_500, Some(10_000), 0, &c),
            Decision::Refuse { .. }
        ));
    }

    #[test]
    fn decide_admits_everything_without_a_fresh_release() {
        let c = config(100, 100);
        assert_eq!(
            decide(5, None, u64::MAX, &c),
            Decision::Admit { deadline_ns: None }
        );
        let stale = 10_000 + c.stale_after_ns + 1;
        assert_eq!(
            decide(stale, Some(10_000), 1_000_000, &c),
            Decision::Admit { deadline_ns: None }
        );
        // No overflow at the end of time.
        assert!(matches!(
            decide(u64::MAX - 1, Some(u64::MAX), u64::MAX, &c),
            Decision::Refuse { .. }
        ));
    }

    /// A thread that publishes a release every `period_ns` until stopped, like a
    /// real-time task that does nothing else.
    fn publisher(
        timer: ReleaseTimer,
        period_ns: u64,
        stop: Arc<AtomicBool>,
    ) -> std::thread::JoinHandle<u64> {
        std::thread::spawn(move || {
            timer.register_current_thread();
            let mut release = sys::monotonic_ns() + period_ns;
            let mut periods = 0;
            while !stop.load(Ordering::Relaxed) {
                timer.publish(release);
                sys::sleep_until(release);
                release += period_ns;
                periods += 1;
            }
            timer.retire();
            periods
        })
    }

    #[test]
    fn refused_thread_sleeps_until_the_real_time_task_publishes_again() {
        let timer = ReleaseTimer::new();
        // A 50 ms margin: nothing fits before a release at most 30 ms away, or one that has
        // passed (if this thread runs late), until the real-time task publishes again.
        let lock = Arc::new(
            DelayedLock::with_config(0u32, timer.clone(), never_stale(50 * MS, 100)).unwrap(),
        );
        let first_release = sys::monotonic_ns() + 30 * MS;
        let rt = {
            let (timer, lock) = (timer.clone(), lock.clone());
            std::thread::spawn(move || {
                timer.publish(first_release);
                sys::sleep_until(first_release);
                // Publish the next release only once the other thread has tried the lock
                // (either thread may run late), so that it is the publish it waits for.
                wait_until("the lock to be tried", || {
                    let c = lock.counters();
                    c.refusals > 0 || c.acquisitions > 0
                });
                // The period's work is done: publish a release far enough away.
                timer.publish(sys::monotonic_ns() + 10_000 * MS);
            })
        };
        while timer.next_release().is_none() {
            std::thread::yield_now();
        }
        *lock.lock() += 1;
        let entered = sys::monotonic_ns();
        rt.join().unwrap();
        assert!(
            entered >= first_release,
            "entered {} ns before the release",
            first_release - entered
        );
        let c = lock.counters();
        assert_eq!(
            (c.refusals, c.admissions, c.forced_entries),
            (1, 1, 0),
            "{c:?}"
        );
    }

    #[test]
    fn forced_entry_after_max_refusals() {
        let timer = ReleaseTimer::new();
        // A margin longer than the period: the section never fits (and a publisher that
        // wakes up late leaves a release that has passed, which is refused all the same).
        let lock =
            DelayedLock::with_config(0u32, timer.clone(), never_stale(1_000 * MS, 3)).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let rt = publisher(timer.clone(), MS, stop.clone());
        while timer.next_release().is_none() {
            std::thread::yield_now();
        }
        *lock.lock() += 1;
        let c = lock.counters();
        assert_eq!(
            (c.refusals, c.forced_entries, c.admissions),
            (3, 1, 0),
            "{c:?}"
        );
        // Each acquisition gets its own budget of refusals.
        *lock.lock() += 1;
        stop.store(true, Ordering::Relaxed);
        rt.join().unwrap();
        let c = lock.counters();
        assert_eq!((c.refusals, c.forced_entries), (6, 2), "{c:?}");
        let sites = lock.site_stats();
        assert_eq!(sites.len(), 2, "two lock() call sites: {sites:?}");
        assert!(sites
            .iter()
            .all(|s| s.refusals == 3 && s.forced_entries == 1));
    }

    #[test]
    fn max_refusals_zero_never_delays() {
        let timer = ReleaseTimer::new();
        timer.publish(sys::monotonic_ns() + 10 * MS);
        let lock = std::thread::spawn(move || {
            // Refused (margin) whether the thread starts before the release or after it.
            let lock = DelayedLock::with_config((), timer, never_stale(1_000 * MS, 0)).unwrap();
            drop(lock.lock());
            lock.counters()
        });
        let c = lock.join().unwrap();
        assert_eq!((c.refusals, c.forced_entries), (0, 1), "{c:?}");
    }

    #[test]
    fn real_time_thread_is_never_refused() {
        let timer = ReleaseTimer::new();
        timer.register_current_thread();
        timer.publish(sys::monotonic_ns() + MS);
        let lock = DelayedLock::with_config(0u8, timer.clone(), config(1_000 * MS, 100)).unwrap();
        for _ in 0..10 {
            *lock.lock() += 1;
        }
        let c = lock.counters();
        assert_eq!(
            (c.rt_acquisitions, c.refusals, c.acquisitions),
            (10, 0, 10),
            "{c:?}"
        );
    }

    #[test]
    fn hold_that_runs_into_the_release_is_a_misprediction() {
        let timer = ReleaseTimer::new();
        // Nothing predicted, no margin: the hold is admitted while the release is ahead.
        let lock =
            Arc::new(DelayedLock::with_config((), timer.clone(), never_stale(0, 100)).unwrap());
        // This thread stands in for the real-time task (it publishes, so it never locks).
        timer.publish(sys::monotonic_ns() + 50 * MS);
        let holder = {
            let (lock, timer) = (lock.clone(), timer.clone());
            std::thread::spawn(move || {
                let _guard = lock.lock();
                // Nobody publishes while the lock is held: this is the release the hold
                // was admitted against. Hold it past that release.
                let deadline = timer.next_release().expect("a pending release");
                sys::sleep_until(deadline + MS);
            })
        };
        // A holder that starts late finds the release passed and is refused: publish a
        // new one after each refusal, as the real-time task would after its period.
        let mut answered = 0;
        wait_until("the holder to finish", || {
            let refusals = lock.counters().refusals;
            if refusals > answered {
                answered = refusals;
                timer.publish(sys::monotonic_ns() + 50 * MS);
            }
            holder.is_finished()
        });
        holder.join().unwrap();
        let c = lock.counters();
        assert_eq!((c.admissions, c.mispredictions), (1, 1), "{c:?}");
    }

    #[test]
    fn sleeping_or_preempted_holders_do_not_inflate_the_hold_time() {
        let lock = Lock::new((), Variant::Plain).unwrap();
        {
            let _guard = lock.lock();
            std::thread::sleep(Duration::from_millis(30));
        }
        {
            let _guard = lock.lock();
            sys::busy_cpu(3 * MS);
        }
        let sites = lock.site_stats();
        assert_eq!(sites.len(), 2, "{sites:?}");
        assert!(sites[0].max_ns < 10 * MS || sites[1].max_ns < 10 * MS);
        let sleeping = sites
            .iter()
            .find(|s| s.max_ns < 2 * MS)
            .expect("sleeping hold");
        let busy = sites
            .iter()
            .find(|s| s.max_ns >= 3 * MS)
            .expect("busy hold");
        assert_ne!(sleeping.location, busy.location);
        assert!(busy.predicted_ns >= 3 * MS);
        assert_eq!(sleeping.preempted, 1, "{sleeping:?}");
    }

    fn hammer(lock: Arc<Lock<u64>>, threads: usize, per_thread: u64) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(30);
        let done = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (lock, done) = (lock.clone(), done.clone());
                std::thread::spawn(move || {
                    for i in 0..per_thread {
                        let mut guard = lock.lock();
                        let before = *guard;
                        if i % 64 == 0 {
                            std::thread::yield_now();
                        }
                        *guard = before + 1;
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        while done.load(Ordering::SeqCst) < threads as u64 {
            assert!(
                Instant::now() < deadline,
                "a worker is stuck: lost wake-up?"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        for worker in workers {
            worker.join().unwrap();
        }
        let total = *lock.lock();
        total
    }

    #[test]
    fn delayed_lock_loses_no_wake_ups_under_contention() {
        for inherit in [false, true] {
            let timer = ReleaseTimer::new();
            // Short period and a margin that refuses a good share of the attempts, a small
            // refusal budget so that forced entries happen too.
            let cfg = DelayedConfig {
                margin_ns: 300_000,
                max_refusals: 2,
                inherit,
                ..DelayedConfig::default()
            };
            let variant = Variant::Delayed {
                timer: timer.clone(),
                config: cfg,
            };
            let name = variant.name();
            let lock = Arc::new(Lock::new(0u64, variant).unwrap());
            let stop = Arc::new(AtomicBool::new(false));
            let rt = publisher(timer.clone(), 500_000, stop.clone());
            // Without a release published yet, everything would be admitted.
            while timer.next_release().is_none() {
                std::thread::yield_now();
            }
            let total = hammer(lock.clone(), 8, 3_000);
            stop.store(true, Ordering::Relaxed);
            rt.join().unwrap();
            assert_eq!(total, 8 * 3_000, "{name}");
            let c = lock.counters();
            assert_eq!(c.acquisitions, 8 * 3_000 + 1, "{name}");
            assert!(
                c.refusals > 0,
                "{name}: the test should exercise refusals: {c:?}"
            );
            assert_eq!(
                c.admissions + c.forced_entries,
                8 * 3_000 + 1,
                "{name}: {c:?}"
            );
        }
    }

    #[test]
    fn plain_pi_and_ceiling_locks_are_exact_under_contention() {
        for variant in [
            Variant::Plain,
            Variant::PriorityInheritance,
            Variant::PriorityCeiling { priority: 1 },
        ] {
            let name = variant.name();
            let lock = Arc::new(Lock::new(0u64, variant).unwrap());
            let total = hammer(lock.clone(), 8, 3_000);
            assert_eq!(total, 8 * 3_000, "{name}");
            assert_eq!(lock.counters().acquisitions, 8 * 3_000 + 1, "{name}");
        }
    }

    #[test]
    fn ceiling_lock_raises_and_restores_the_priority() {
        let handle = std::thread::spawn(|| {
            let before = sys::current_sched();
            let lock = Lock::new((), Variant::PriorityCeiling { priority: 3 }).unwrap();
            let inside = {
                let _guard = lock.lock();
                sys::current_sched()
            };
            (before, inside, sys::current_sched(), lock.counters())
        });
        let (before, inside, after, counters) = handle.join().unwrap();
        assert_eq!(before, after, "the priority must be restored");
        if counters.ceiling_boost_failures == 0 {
            assert_eq!((inside.policy, inside.priority), (libc::SCHED_FIFO, 3));
        } else {
            crate::test_support::skip_or_fail("priority ceiling boost (SCHED_FIFO)");
            assert_eq!(inside, before);
        }
    }

    #[test]
    fn invalid_settings_are_rejected() {
        assert!(matches!(
            Lock::new((), Variant::PriorityCeiling { priority: 0 }),
            Err(LockError::InvalidPriority { priority: 0 })
        ));
        let bad = DelayedConfig {
            predictor: PredictorKind::Ewma { weight: 2.0 },
            ..DelayedConfig::default()
        };
        assert!(DelayedLock::with_config((), ReleaseTimer::new(), bad).is_err());
    }
}
