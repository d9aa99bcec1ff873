//! A runtime isolated CPU partition, the runtime substitute for isolcpus:
//! every other user task moves off the real-time CPUs, the kernel stops
//! balancing load onto them, and the measured process is admitted into
//! the partition.
//!
//! - cgroup v2 with the cpuset controller: `latlab-rt` with
//!   `cpuset.cpus.partition = isolated` (kernel 6.1+); the root and every
//!   other cgroup lose those CPUs, so their tasks move by themselves;
//! - else a cgroup v1 cpuset hierarchy: an exclusive `latlab-rt` cpuset
//!   with load balancing off (and off in the root), and every user task
//!   of the root moved to `latlab-housekeeping`.
//!
//! Kernel threads are never moved. [`prepare`] reads what [`release`]
//! needs to put everything back; the journal stores it before [`isolate`]
//! changes anything.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use latlab_fix::cpu_list;
use latlab_rt::sched::{online_cpus, parse_cpu_list};

use crate::knobs::task;

mod admit;
mod files;
mod v1;
mod v2;

pub use admit::Admitter;
pub use files::hierarchy;
pub(crate) use files::{cpuset_file, locate, move_tasks, read, remove_dir, write_file};

/// The directory name of the real-time partition.
pub const RT_DIR: &str = "latlab-rt";
/// The v1 cpuset the other user tasks move to.
pub const HOUSEKEEPING_DIR: &str = "latlab-housekeeping";

/// Which cgroup hierarchy holds the partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// cgroup v2, `cpuset.cpus.partition = isolated`.
    V2,
    /// cgroup v1, an exclusive cpuset with load balancing off.
    V1,
}

/// What a partition changes and what its release puts back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saved {
    /// The hierarchy.
    pub kind: Kind,
    /// The hierarchy's root directory.
    pub root: PathBuf,
    /// The real-time CPUs.
    pub rt: Vec<usize>,
    /// The other online CPUs.
    pub housekeeping: Vec<usize>,
    /// v1: the root's `cpuset.sched_load_balance` before.
    #[serde(default)]
    pub root_load_balance: Option<String>,
    /// v2: the cpuset controller was enabled in the root's subtree_control.
    #[serde(default)]
    pub enabled_cpuset: bool,
    /// User threads whose affinity was narrower than every CPU: (tid,
    /// comm, cpus), set again on release when it differs.
    #[serde(default)]
    pub affinities: Vec<(i32, String, Vec<usize>)>,
}

/// A partition in place.
#[derive(Debug, Clone)]
pub struct Partition {
    saved: Saved,
}

impl Partition {
    /// How it was made, for the report.
    pub fn kind(&self) -> String {
        describe(&self.saved)
    }

    /// The real-time CPUs.
    pub fn cpus(&self) -> &[usize] {
        &self.saved.rt
    }

    /// The partition's directory.
    pub fn dir(&self) -> PathBuf {
        self.saved.root.join(RT_DIR)
    }

    /// The file a process id is written to to move the process into the
    /// partition (`cgroup.procs`): a `pre_exec` hook of the measured
    /// child writes its own pid (`std::process::id()`) there.
    pub fn procs_file(&self) -> PathBuf {
        self.dir().join("cgroup.procs")
    }

    /// Moves process `pid` (all its threads) into the partition.
    pub fn admit(&self, pid: u32) -> Result<(), String> {
        let path = self.procs_file();
        std::fs::write(&path, pid.to_string())
            .map_err(|e| format!("writing {pid} to {}: {e}", path.display()))
    }

    /// The partition's `cgroup.procs`, opened now, for a child to admit
    /// itself from a `pre_exec` hook ([`Admitter::admit_self`]: no
    /// allocation after fork).
    pub fn admitter(&self) -> Result<Admitter, String> {
        let path = self.procs_file();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map(Admitter::new)
            .map_err(|e| format!("opening {}: {e}", path.display()))
    }

    /// Moves one thread (an in-process measuring thread) into the
    /// partition: cgroup v1 only (v2 places whole processes: measure in a
    /// child process and [`Partition::admit`] it).
    pub fn admit_thread(&self, tid: i32) -> Result<(), String> {
        match self.saved.kind {
            Kind::V1 => {
                let path = self.dir().join("tasks");
                std::fs::write(&path, tid.to_string())
                    .map_err(|e| format!("writing {tid} to {}: {e}", path.display()))
            }
            Kind::V2 => Err(format!(
                "cgroup v2 places whole processes: measure in a child process and admit it ({})",
                self.procs_file().display()
            )),
        }
    }

    /// What release needs.
    pub fn saved(&self) -> &Saved {
        &self.saved
    }
}

/// The partition latlab made, when one is in place.
pub fn find() -> Option<Partition> {
    let saved = locate()?;
    Some(Partition { saved })
}

/// How a partition would be made on this system, or why it cannot be.
pub fn available() -> Result<String, String> {
    let (kind, root) = hierarchy()?;
    Ok(describe(&Saved {
        kind,
        root,
        rt: vec![],
        housekeeping: vec![],
        root_load_balance: None,
        enabled_cpuset: false,
        affinities: vec![],
    }))
}

fn describe(saved: &Saved) -> String {
    let dir = saved.root.join(RT_DIR);
    match saved.kind {
        Kind::V2 => format!(
            "cgroup v2 cpuset.cpus.partition=isolated ({})",
            dir.display()
        ),
        Kind::V1 => format!(
            "cgroup v1 exclusive cpuset {} with load balancing off (other user tasks in {})",
            dir.display(),
            saved.root.join(HOUSEKEEPING_DIR).display()
        ),
    }
}

/// The real-time CPUs of latlab's partition, `""` when there is none.
pub fn current() -> Result<String, String> {
    Ok(locate().map(|s| cpu_list(&s.rt)).unwrap_or_default())
}

/// Checks `rt` and reads what a release will need; changes nothing.
pub fn prepare(rt: &[usize]) -> Result<Saved, String> {
    let online = online_cpus();
    if rt.is_empty() {
        return Err("no real-time CPUs given".into());
    }
    if let Some(cpu) = rt.iter().find(|c| !online.contains(c)) {
        return Err(format!(
            "CPU {cpu} is not online (online: {})",
            cpu_list(&online)
        ));
    }
    let housekeeping: Vec<usize> = online.iter().copied().filter(|c| !rt.contains(c)).collect();
    if housekeeping.is_empty() {
        return Err(format!(
            "every CPU ({}) asked for real time: keep at least one for housekeeping",
            cpu_list(&online)
        ));
    }
    if locate().is_some() {
        return Err(format!(
            "a latlab partition is already in place: {RT_DIR}; run `latlab tune --restore`"
        ));
    }
    let (kind, root) = hierarchy()?;
    let affinities = task::all_threads()
        .into_iter()
        .filter(|&tid| !task::is_kernel_thread(tid))
        .filter_map(|tid| {
            let cpus = task::affinity(tid).ok()?;
            let narrower = online.iter().any(|c| !cpus.contains(c));
            narrower.then(|| Some((tid, task::comm(tid).ok()?, cpus)))?
        })
        .collect();
    let mut saved = Saved {
        kind,
        root,
        rt: rt.to_vec(),
        housekeeping,
        root_load_balance: None,
        enabled_cpuset: false,
        affinities,
    };
    match kind {
        Kind::V1 => {
            saved.root_load_balance = Some(read(&cpuset_file(&saved.root, "sched_load_balance"))?)
        }
        Kind::V2 => saved.enabled_cpuset = !v2::has_cpuset(&saved.root),
    }
    Ok(saved)
}

/// Makes the partition `saved` describes; on failure undoes what it did.
pub fn isolate(saved: &Saved) -> Result<Partition, String> {
    let made = match saved.kind {
        Kind::V1 => v1::isolate(saved),
        Kind::V2 => v2::isolate(saved),
    };
    match made {
        Ok(()) => Ok(Partition {
            saved: saved.clone(),
        }),
        Err(e) => {
            let undo = release(saved)
                .err()
                .map(|u| format!("; undoing it: {u}"))
                .unwrap_or_default();
            Err(format!("{e}{undo}"))
        }
    }
}

/// Undoes a partition: tasks back to the root, directories removed, the
/// root's settings and the moved threads' affinities as they were.
pub fn release(saved: &Saved) -> Result<(), String> {
    let result = match saved.kind {
        Kind::V1 => v1::release(saved),
        Kind::V2 => v2::release(saved),
    };
    for (tid, comm, cpus) in &saved.affinities {
        if task::comm(*tid).ok().as_ref() == Some(comm)
            && task::affinity(*tid).is_ok_and(|now| &now != cpus)
        {
            let _ = task::set_affinity(*tid, cpus);
        }
    }
    result
}

/// [`crate::knobs::write`] for the partition: a CPU list isolates them
/// (what release needs is not kept: use the journal), `""` releases the
/// partition found in place.
pub fn write(value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return match locate() {
            Some(saved) => release(&saved),
            None => Ok(()),
        };
    }
    let rt = parse_cpu_list(value).map_err(|e| e.to_string())?;
    isolate(&prepare(&rt)?).map(|_| ())
}
