//! Timer prediction: the real-time task publishes when it will next be released, so that
//! a delayed lock can tell how much time is left before that release (the paper's
//! `t_ut_int`, "time until the next urgent timer interrupt").

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::sys;

/// A handle shared by a periodic real-time task and the delayed locks that protect it.
///
/// Protocol, once per period of the real-time task:
/// 1. wake up at the release time, do the period's work (taking locks as it needs);
/// 2. when the work, including its own critical sections, is done, call
///    [`publish`](Self::publish) with the next absolute release time on `CLOCK_MONOTONIC`;
/// 3. sleep until that time (`clock_nanosleep(TIMER_ABSTIME)`).
///
/// `publish` also wakes every thread a delayed lock refused: the release it was waiting
/// for has passed and the real-time task has left its critical sections. The thread
/// that publishes is remembered as the real-time thread: delayed locks never refuse it.
/// Call [`retire`](Self::retire) when the real-time task stops, so that nobody waits for a
/// release that will not come.
///
/// Cloning the handle is cheap (an `Arc`); all clones share one state.
#[derive(Debug, Clone, Default)]
pub struct ReleaseTimer {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Next absolute release time in `CLOCK_MONOTONIC` nanoseconds; 0 = none pending.
    next_release: AtomicU64,
    /// Futex word, bumped on every publish/retire; refused threads wait on it.
    epoch: AtomicU32,
    /// How many threads are (about to be) waiting on `epoch`.
    waiters: AtomicU32,
    /// Thread id of the real-time thread (the last one that published), 0 = none.
    rt_tid: AtomicI32,
}

impl ReleaseTimer {
    /// A timer with no release pending (delayed locks admit everything until the first
    /// [`publish`](Self::publish)).
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the calling thread as the real-time thread before its first publish, so its
    /// first period's locks are not subject to admission either.
    pub fn register_current_thread(&self) {
        self.inner.rt_tid.store(sys::gettid(), Ordering::Relaxed);
    }

    /// Publishes the next absolute release time (`CLOCK_MONOTONIC` nanoseconds) and wakes
    /// the threads that were refused. Call it from the real-time thread after its work for
    /// the period is done, right before it sleeps.
    pub fn publish(&self, next_release_ns: u64) {
        let inner = &*self.inner;
        inner.rt_tid.store(sys::gettid(), Ordering::Relaxed);
        inner
            .next_release
            .store(next_release_ns.max(1), Ordering::SeqCst);
        self.bump();
    }

    /// Withdraws the pending release (the real-time task stops) and wakes every waiter.
    pub fn retire(&self) {
        self.inner.next_release.store(0, Ordering::SeqCst);
        self.inner.rt_tid.store(0, Ordering::Relaxed);
        self.bump();
    }

    fn bump(&self) {
        let inner = &*self.inner;
        inner.epoch.fetch_add(1, Ordering::SeqCst);
        if inner.waiters.load(Ordering::SeqCst) > 0 {
            sys::futex_wake(&inner.epoch, i32::MAX);
        }
    }

    /// The next published release time, if one is pending.
    pub fn next_release(&self) -> Option<u64> {
        match self.inner.next_release.load(Ordering::SeqCst) {
            0 => None,
            t => Some(t),
        }
    }

    /// How many times a release was published or withdrawn.
    pub fn epoch(&self) -> u32 {
        self.inner.epoch.load(Ordering::SeqCst)
    }

    /// Whether the calling thread is the real-time thread of this timer.
    pub fn is_current_thread_rt(&self) -> bool {
        let rt = self.inner.rt_tid.load(Ordering::Relaxed);
        rt != 0 && rt == sys::gettid()
    }

    /// Sleeps (futex, no spinning) until the epoch moves past `seen_epoch` or until the
    /// absolute `CLOCK_MONOTONIC` time `deadline_ns`, whichever comes first.
    pub(crate) fn wait_for_publish(&self, seen_epoch: u32, deadline_ns: u64) {
        let inner = &*self.inner;
        inner.waiters.fetch_add(1, Ordering::SeqCst);
        if inner.epoch.load(Ordering::SeqCst) == seen_epoch {
            sys::futex_wait_until(&inner.epoch, seen_epoch, deadline_ns);
        }
        inner.waiters.fetch_sub(1, Ordering::SeqCst);
    }
}
