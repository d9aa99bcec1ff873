//! The base locks under every variant: a plain futex mutex, a priority-inheritance
//! futex and a priority-ceiling mutex (the plain mutex plus a scheduler boost).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::sys::{self, SchedParams};
use crate::LockError;

/// A three-state futex mutex: 0 free, 1 locked, 2 locked with (possible) waiters.
/// Waiters sleep in the kernel (no spinning); the kernel wakes the highest-priority one.
#[derive(Debug, Default)]
pub(crate) struct FutexMutex {
    state: AtomicU32,
}

impl FutexMutex {
    pub(crate) const fn new() -> Self {
        Self {
            state: AtomicU32::new(0),
        }
    }

    pub(crate) fn lock(&self) {
        if self
            .state
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
    }

    #[cold]
    fn lock_contended(&self) {
        while self.state.swap(2, Ordering::Acquire) != 0 {
            sys::futex_wait(&self.state, 2);
        }
    }

    pub(crate) fn unlock(&self) {
        if self.state.swap(0, Ordering::Release) == 2 {
            sys::futex_wake(&self.state, 1);
        }
    }
}

/// A priority-inheritance futex (FUTEX_LOCK_PI / FUTEX_UNLOCK_PI): the word holds the
/// owner's thread id; while a higher-priority thread waits the kernel boosts the owner.
#[derive(Debug, Default)]
pub(crate) struct PiMutex {
    word: AtomicU32,
}

impl PiMutex {
    pub(crate) const fn new() -> Self {
        Self {
            word: AtomicU32::new(0),
        }
    }

    /// Checks that the kernel supports PI futexes (CONFIG_FUTEX_PI).
    pub(crate) fn probe() -> Result<(), LockError> {
        let probe = AtomicU32::new(sys::gettid() as u32);
        sys::futex_unlock_pi(&probe).map_err(|errno| LockError::PiUnsupported {
            source: std::io::Error::from_raw_os_error(errno),
        })
    }

    pub(crate) fn lock(&self) {
        let tid = sys::gettid() as u32;
        if self
            .word
            .compare_exchange(0, tid, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        loop {
            match sys::futex_lock_pi(&self.word) {
                Ok(()) => return,
                // The owner is exiting, or a signal arrived: try again.
                Err(libc::EAGAIN) | Err(libc::EINTR) => continue,
                Err(errno) => panic!(
                    "FUTEX_LOCK_PI failed: {} (is the lock taken twice by one thread?)",
                    std::io::Error::from_raw_os_error(errno)
                ),
            }
        }
    }

    pub(crate) fn unlock(&self) {
        let tid = sys::gettid() as u32;
        if self
            .word
            .compare_exchange(tid, 0, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        if let Err(errno) = sys::futex_unlock_pi(&self.word) {
            panic!(
                "FUTEX_UNLOCK_PI failed: {} (was the guard moved to another thread?)",
                std::io::Error::from_raw_os_error(errno)
            );
        }
    }
}

/// A priority-ceiling mutex (immediate ceiling protocol, done in user space): before
/// taking the plain futex mutex the caller raises itself to `SCHED_FIFO` at the ceiling
/// priority, and drops back to its own policy after releasing it.
#[derive(Debug)]
pub(crate) struct CeilingMutex {
    base: FutexMutex,
    ceiling: i32,
    boost_failures: AtomicU64,
}

/// What a ceiling lock changed, so that unlocking can undo it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CeilingToken {
    saved: Option<SchedParams>,
}

impl CeilingToken {
    /// Nothing to undo.
    pub(crate) const NONE: Self = Self { saved: None };
}

impl CeilingMutex {
    pub(crate) fn new(ceiling: i32) -> Self {
        Self {
            base: FutexMutex::new(),
            ceiling,
            boost_failures: AtomicU64::new(0),
        }
    }

    pub(crate) fn boost_failures(&self) -> u64 {
        self.boost_failures.load(Ordering::Relaxed)
    }

    pub(crate) fn lock(&self) -> CeilingToken {
        let current = sys::current_sched();
        let realtime = current.policy == libc::SCHED_FIFO || current.policy == libc::SCHED_RR;
        let mut saved = None;
        if !(realtime && current.priority >= self.ceiling) {
            let boosted = SchedParams {
                policy: libc::SCHED_FIFO,
                priority: self.ceiling,
            };
            match sys::set_sched(boosted) {
                Ok(()) => saved = Some(current),
                Err(_) => {
                    self.boost_failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        self.base.lock();
        CeilingToken { saved }
    }

    pub(crate) fn unlock(&self, token: CeilingToken) {
        self.base.unlock();
        if let Some(saved) = token.saved {
            // Failing to drop a priority we were allowed to raise cannot happen short of
            // another thread changing ours; nothing useful can be done about it here.
            let _ = sys::set_sched(saved);
        }
    }
}
