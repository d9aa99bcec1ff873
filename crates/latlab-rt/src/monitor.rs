//! Following a measurement from the calling thread: the one hook trait of
//! `latlab run`'s engine and `latlab respond`'s measurement.

use std::time::Duration;

/// Follows a measurement from the calling thread: told when the real-time
/// threads are ready, then about every 100-250 ms with the progress `P` of
/// the measurement. An error from either stops the measurement, which
/// returns it.
pub trait Monitor<P: ?Sized> {
    /// The real-time threads exist, are pinned and at their priority, and
    /// have not yet measured anything: their thread ids, in the order of
    /// the measurement's threads (e.g. to watch them in the kernel). Called
    /// before [`Monitor::ready`].
    fn threads(&mut self, _tids: &[i32]) -> Result<(), String> {
        Ok(())
    }
    /// Every real-time thread is pinned and at its priority (e.g. start a
    /// background load here). Returns how long to wait before the first
    /// period or event, so a load started here can settle (its start-up is
    /// not steady state).
    fn ready(&mut self) -> Result<Duration, String> {
        Ok(Duration::ZERO)
    }
    /// Progress so far, outside the timed section (e.g. draw a live view,
    /// check a load is alive).
    fn progress(&mut self, _progress: &P) -> Result<(), String> {
        Ok(())
    }
}

/// A monitor that does nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl<P: ?Sized> Monitor<P> for Silent {}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counting(u32);

    impl Monitor<u64> for Counting {
        fn progress(&mut self, progress: &u64) -> Result<(), String> {
            self.0 += 1;
            if *progress > 2 {
                return Err(format!("stop at {progress}"));
            }
            Ok(())
        }
    }

    #[test]
    fn defaults_go_on_and_overrides_can_stop() {
        let silent: &mut dyn Monitor<u64> = &mut Silent;
        assert_eq!(silent.threads(&[1, 2]), Ok(()));
        assert_eq!(silent.ready(), Ok(Duration::ZERO));
        assert_eq!(silent.progress(&7), Ok(()));
        let mut counting = Counting(0);
        let monitor: &mut dyn Monitor<u64> = &mut counting;
        assert_eq!(monitor.progress(&1), Ok(()));
        assert_eq!(monitor.progress(&3), Err("stop at 3".into()));
        assert_eq!(counting.0, 2);
    }
}
