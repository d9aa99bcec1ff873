//! The lifecycle of a measuring command (`run`, `respond`, `lockbench`),
//! written once, as rtla's tools share theirs:
//!
//! 1. enter the real-time session and check the machine's pitfalls
//!    ([`Lifecycle::enter`]);
//! 2. start monitoring: the background load, the notes about the machine,
//!    the live view ([`Lifecycle::monitor`], [`LoadMonitor`]; a command
//!    without a monitor: [`Lifecycle::print_notes`], [`Lifecycle::start_load`]);
//! 3. measure (the command's library crate), from [`Lifecycle::begin`];
//! 4. stop the load ([`LoadMonitor::finish`]) and leave the session
//!    ([`Lifecycle::end`]);
//! 5. assemble the document (the command: one function per document);
//! 6. write the outputs: the saved copy and the history, `--json`,
//!    `--histogram-text`, JUnit/LAVA, `--push` ([`Lifecycle::write_outputs`]).
//!
//! Beside it: the live views ([`live`]) and what `latlab run` measures in
//! the kernel beside its samples, the interrupt/preemption split ([`split`])
//! and the kernel trace ([`trace`]). A crate of its own because it joins
//! measure, load, tracefs, explain, watch and the documents' formats, which
//! none of those crates may depend on all together.

pub mod live;
pub mod load;
pub mod lockbench;
pub mod monitor;
pub mod notes;
pub mod outputs;
pub mod record;
pub mod respond;
pub mod run;
pub mod split;
pub mod trace;
pub mod watch;
pub mod watch_live;

use std::path::PathBuf;

use latlab_load::StartedLoad;
use latlab_report::formats::{CyclictestText, JunitXml, LavaTestCases};
use latlab_rt::clock;
use latlab_rt::session::{RtSession, SessionOptions};
use latlab_rt::sysinfo::SystemInfo;

pub use load::LoadPlan;
pub use monitor::{LiveUpdate, LoadMonitor};
pub use notes::Verbosity;
pub use outputs::{describe, write_file, Destinations, OutputFiles};

/// A measuring command from entering the real-time session to writing its
/// outputs.
pub struct Lifecycle<'a> {
    /// How much the command prints.
    verbosity: Verbosity,
    /// The background load.
    load: &'a LoadPlan,
    /// The machine, as gathered before measuring.
    pub system: SystemInfo,
    /// The real-time session (priority, memory locking, cpu_dma_latency).
    pub session: RtSession,
    /// What the command's set-up and the session could not do as asked.
    setup: Vec<String>,
    /// When the measurement began (Unix time, seconds).
    started: f64,
}

impl<'a> Lifecycle<'a> {
    /// Gathers the system's description and enters the real-time session
    /// `options` describe (refused privileges are errors naming the fix,
    /// unless they allow running unprivileged); `setup` are the command's
    /// own warnings from resolving its arguments; `verbosity` and `load`
    /// are the command's.
    pub fn enter(
        options: SessionOptions,
        mut setup: Vec<String>,
        verbosity: Verbosity,
        load: &'a LoadPlan,
    ) -> anyhow::Result<Self> {
        let system = SystemInfo::gather();
        // A tune that ended without restoring (or one running now) changed
        // the system this measures: say so, and how to restore.
        if let Some(notice) = latlab_tune::journal::notice(&latlab_tune::journal::default_path()) {
            eprintln!("warning: {notice}");
            setup.push(notice);
        }
        let session = RtSession::enter(&options)?;
        setup.extend_from_slice(session.warnings());
        Ok(Lifecycle {
            verbosity,
            load,
            system,
            session,
            setup,
            started: clock::unix_time_s(),
        })
    }

    /// The result's warnings: the machine's pitfalls, then what the set-up
    /// could not do.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = self.system.pitfalls();
        warnings.extend_from_slice(&self.setup);
        warnings
    }

    /// The monitor of the measurement: the live view `live` (when not
    /// `--quiet`), the background load, and the notes about the machine
    /// (each pointing at `more` for the whole text), printed once the
    /// measurement is set up.
    pub fn monitor<V>(&self, live: V, more: &str) -> LoadMonitor<'a, V> {
        LoadMonitor::new(live, self.load, self.notes(more))
    }

    /// The notes about the machine and the set-up (see
    /// [`notes::before_measuring`]), each pointing at `more`.
    fn notes(&self, more: &str) -> Vec<String> {
        notes::before_measuring(
            &self.system.pitfall_list(),
            &self.setup,
            self.verbosity,
            more,
        )
    }

    /// Prints the notes now, for a command without a monitor.
    pub fn print_notes(&self, more: &str) {
        for line in self.notes(more) {
            eprintln!("{line}");
        }
    }

    /// Starts the background load now, for a command without a monitor;
    /// `None` when none was asked for. [`load::stop`] stops it.
    pub fn start_load(&self) -> anyhow::Result<Option<StartedLoad>> {
        self.load
            .spec
            .as_ref()
            .map(|spec| self.load.start(spec))
            .transpose()
    }

    /// The measurement begins now.
    pub fn begin(&mut self) {
        self.started = clock::unix_time_s();
        self.session.measurement_starts();
    }

    /// When the measurement began (Unix time, seconds).
    pub fn started(&self) -> f64 {
        self.started
    }

    /// The measurement is over: the memory is unlocked (the rest of the
    /// session lasts until the command ends).
    pub fn end(&mut self) {
        self.session.unlock_memory();
    }

    /// Writes every output `outputs` asks for (see [`OutputFiles`]): the saved copy
    /// (`<output-dir>/<stamp>/<file_name>`) and the history, `--json`,
    /// `--histogram-text`, then `extra` (path, text) files, then notes
    /// `also_failed` (failures met before: reported with the others), then
    /// JUnit, LAVA and push.
    pub fn write_outputs<T, D>(
        &self,
        outputs: &D,
        result: &T,
        file_name: &'static str,
        extra: Vec<(PathBuf, String)>,
        also_failed: Vec<anyhow::Error>,
    ) -> anyhow::Result<()>
    where
        T: serde::Serialize + CyclictestText + JunitXml + LavaTestCases,
        D: Destinations,
    {
        let stamp = clock::format_stamp(self.started);
        let save = |json: &str, document: &serde_json::Value| {
            outputs.save(&stamp, file_name, json, document)
        };
        let mut files = OutputFiles::with_result(
            result,
            outputs.saves().then_some(&save as outputs::SaveCopy<'_>),
            file_name,
            outputs.json(),
        )?;
        if let Some(path) = outputs.histogram_text() {
            files.other(write_file(path, result.cyclictest_text().as_bytes()));
        }
        for (path, text) in extra {
            files.other(write_file(&path, text.as_bytes()));
        }
        for failure in also_failed {
            files.other(Err(failure));
        }
        outputs.emit(result, &mut files)?;
        files.finish()
    }
}
