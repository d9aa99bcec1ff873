//! Starting a watch: the kernel side, the command and the first scan.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use latlab_rt::sysinfo::SystemInfo;

use super::{monotonic_ns, Session, SessionOptions, RESCAN};
use crate::document::*;
use crate::error::Result;
use crate::functions::FunctionNames;
use crate::histograms::Counts;
use crate::irqnames::IrqNames;
use crate::loader::{BpfSide, Settings};
use crate::own::OwnThreads;
use crate::select::{self, Tasks};
use crate::side::KernelSide;
use crate::tracefs_side::TracefsSide;
use crate::window::CommCache;

impl Session {
    /// Starts the kernel side (`opts.backend`), the command (if any) and
    /// watches the selected tasks.
    pub fn start(opts: SessionOptions) -> Result<Session> {
        select::validate(&opts.selection)?;
        let settings = Settings {
            threshold_ns: opts.threshold_ns,
            follow_forks: opts.selection.follows_forks(),
            max_windows_per_sec: opts.max_windows_per_sec,
            baseline_every: opts.baseline_every,
            probe_reads: false,
            rt_only: opts.selection.kernel_filters_real_time(),
        };
        let side: Box<dyn KernelSide> = match opts.backend {
            Backend::Bpf => Box::new(BpfSide::load(&settings)?),
            Backend::Tracefs => Box::new(TracefsSide::start(&settings)?),
        };
        let system = SystemInfo::gather();
        let rt_kernel = system.preemption_model.as_deref() == Some("rt")
            || system.kernel_version.contains("PREEMPT_RT");
        let mut session = Session {
            side,
            started: Instant::now(),
            start_mono_ns: monotonic_ns(),
            started_unix_s: latlab_rt::clock::unix_time_s(),
            system,
            rt_kernel,
            command: None,
            own_pid: std::process::id() as i32,
            own: OwnThreads::default(),
            threads: BTreeMap::new(),
            last_scan: Instant::now(),
            rescan_every: RESCAN,
            at_last_snapshot: Counts::new(),
            late_at_last_snapshot: 0,
            last_snapshot: Instant::now(),
            latest: Counts::new(),
            ended: VecDeque::new(),
            folded: BTreeMap::new(),
            real_time_seen: false,
            kept_worst: Vec::new(),
            kept_recent: Default::default(),
            kept_baseline: Default::default(),
            cause_totals: BTreeMap::new(),
            other_causes: (0, 0),
            own_late: (0, 0),
            tasks: BTreeMap::new(),
            snapshots: Vec::new(),
            interval_categories: BTreeMap::new(),
            counts: WindowCounts::default(),
            irqs: IrqNames::read(),
            comms: CommCache::default(),
            functions: FunctionNames::new(),
            notes: BTreeSet::new(),
            worst: None,
            opts,
        };
        if let Tasks::Command(argv) = &session.opts.selection.tasks {
            let mut started = select::spawn_gated(argv)?;
            session.side.watch(started.child.id())?;
            started.release();
            session.command = Some(started);
        }
        session.rescan()?;
        Ok(session)
    }
}
