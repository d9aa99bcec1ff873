//! Saving and restoring what the stimulus changes in the calling thread.

use latlab_rt::sched::{self, Policy};

/// Restores the calling thread's policy, affinity and signal mask.
pub(super) struct ThreadState {
    policy: Option<Policy>,
    priority: i32,
    affinity: Vec<usize>,
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
            affinity: sched::current_affinity(),
            mask,
        }
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        if let Some(policy) = self.policy {
            let _ = sched::set_current_thread(policy, self.priority);
        }
        // SAFETY: cpu_set_t and the saved mask are plain data.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in &self.affinity {
                libc::CPU_SET(cpu, &mut set);
            }
            if !self.affinity.is_empty() {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.mask, std::ptr::null_mut());
        }
    }
}
