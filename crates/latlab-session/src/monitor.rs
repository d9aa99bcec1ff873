//! The monitor a measuring command hands its measurement: the background
//! load, the notes about the machine and the live view, at the right
//! moments of the measurement.

use std::time::Duration;

use latlab_load::LoadReport;

use super::load::{BackgroundLoad, LoadPlan};

/// A live view of a measurement's progress `P` on the terminal.
pub trait LiveUpdate<P> {
    /// Draws `progress`.
    fn update(&mut self, progress: &P);
    /// Ends the live view once the measurement is over.
    fn finish(&mut self);
}

/// The monitor of a measuring command (`run`, `respond`): starts the
/// background load once the real-time threads are ready, then prints the
/// notes about the machine (so that no error about the arguments, the
/// threads or the load comes after them), checks the load while measuring
/// and draws the live view.
pub struct LoadMonitor<'a, V> {
    /// The live view.
    pub live: V,
    /// The background load.
    pub load: BackgroundLoad<'a>,
    /// Lines for stderr once the measurement is set up
    /// ([`super::notes::before_measuring`]).
    pub notes: Vec<String>,
    /// The measurement threads' kernel thread ids, once they exist: what a
    /// run's own trace analysis looks at (another latlab's threads have the
    /// same names).
    pub measured_tids: Vec<i32>,
}

impl<'a, V> LoadMonitor<'a, V> {
    /// A monitor that draws `live`, runs the load of `plan` and prints
    /// `notes` once everything is set up.
    pub fn new(live: V, plan: &'a LoadPlan, notes: Vec<String>) -> Self {
        LoadMonitor {
            live,
            load: BackgroundLoad::new(plan),
            notes,
            measured_tids: Vec::new(),
        }
    }

    /// Ends the live view and stops the load: its report, or `None` when
    /// none ran.
    pub fn finish<P>(&mut self) -> anyhow::Result<Option<LoadReport>>
    where
        V: LiveUpdate<P>,
    {
        self.live.finish();
        self.load.stop()
    }
}

impl<P, V: LiveUpdate<P>> latlab_rt::monitor::Monitor<P> for LoadMonitor<'_, V> {
    fn threads(&mut self, tids: &[i32]) -> Result<(), String> {
        self.measured_tids = tids.to_vec();
        Ok(())
    }

    fn ready(&mut self) -> Result<Duration, String> {
        let settle = self.load.start()?;
        for line in self.notes.drain(..) {
            eprintln!("{line}");
        }
        Ok(settle)
    }

    fn progress(&mut self, progress: &P) -> Result<(), String> {
        self.load.check()?;
        self.live.update(progress);
        Ok(())
    }
}
