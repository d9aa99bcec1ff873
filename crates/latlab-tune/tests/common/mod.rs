//! Shared by latlab-tune's tests of the live system: the guard that puts a
//! knob back, and the rule that skips (or, in CI, fails) without root or a
//! second CPU (CPU 0 keeps the housekeeping, CPU 1 is the real-time CPU).
#![allow(dead_code)] // each test binary uses its own part

use latlab_fix::Knob;
use latlab_tune::knobs;

pub use latlab_testkit::skip::skip;

/// Puts a knob back on drop, whatever the test did.
pub struct Put(pub Knob, pub String);

impl Put {
    /// A guard for `knob` at its value now (`None` when it cannot be read).
    pub fn new(knob: Knob) -> Option<Put> {
        let old = knobs::read(&knob).ok()?;
        Some(Put(knob, old))
    }
}

impl Drop for Put {
    fn drop(&mut self) {
        if knobs::read(&self.0).ok().as_deref() != Some(self.1.as_str()) {
            let _ = knobs::write(&self.0, &self.1);
        }
    }
}

/// Root (a failure in CI when missing) and two online CPUs (a skip: no
/// installation gives a machine more CPUs).
pub fn root_and_two_cpus(test: &str) -> bool {
    if !latlab_testkit::root(test) {
        return false;
    }
    if latlab_rt::sched::online_cpus().len() < 2 {
        skip(&format!(
            "{test}: needs 2 online CPUs (CPU 1 real-time, CPU 0 housekeeping)"
        ));
        return false;
    }
    true
}
