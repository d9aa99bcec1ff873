//! Probing what this process may do before a run starts.

use crate::sched::{self, Policy};
use crate::RtError;

/// True when running as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Checks, in a scratch thread, that `policy` at `priority` would be granted.
/// The calling thread is left untouched.
pub fn probe_policy(policy: Policy, priority: i32) -> Result<(), RtError> {
    if !policy.is_realtime() {
        return Ok(());
    }
    std::thread::spawn(move || sched::set_current_thread(policy, priority))
        .join()
        .unwrap_or(Ok(()))
}
