//! Saving and restoring what the stimulus changes in the calling thread.

use latlab_rt::cpuset::CpuSet;
use latlab_rt::sched::{self, Policy};

/// Restores the calling thread's policy, affinity and signal mask.
pub(super) struct ThreadState {
    policy: Option<Policy>,
    priority: i32,
    affinity: CpuSet,
    mask: libc::sigset_t,
}

impl ThreadState {
    /// Saves the calling thread's policy, priority, affinity and signal mask.
    pub(super) fn save() -> Self {
        let (policy, priority) = sched::current_thread();
        // SAFETY: reading the current mask into a local.
        let mask = unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask);
            mask
        };
        ThreadState {
            policy,
            priority,
            affinity: CpuSet::of_current_thread().unwrap_or_default(),
            mask,
        }
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        if let Some(policy) = self.policy {
            let _ = sched::set_current_thread(policy, self.priority);
        }
        if !self.affinity.is_empty() {
            let _ = self.affinity.apply_to_current_thread();
        }
        // SAFETY: the saved mask is plain data.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.mask, std::ptr::null_mut());
        }
    }
}
