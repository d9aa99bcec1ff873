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

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use latlab_fix::cpu_list;
use latlab_rt::sched::{online_cpus, parse_cpu_list};

use crate::knobs::task;

mod v1;
mod v2;

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

/// The hierarchy to use: v2 where it has the cpuset controller, else v1.
pub fn hierarchy() -> Result<(Kind, PathBuf), String> {
    let mounts =
        std::fs::read_to_string("/proc/mounts").map_err(|e| format!("/proc/mounts: {e}"))?;
    let mut v1 = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, dir, fstype, options, ..] = fields[..] else {
            continue;
        };
        if fstype == "cgroup2" {
            let controllers = read(&Path::new(dir).join("cgroup.controllers")).unwrap_or_default();
            if controllers.split_whitespace().any(|c| c == "cpuset") {
                return Ok((Kind::V2, PathBuf::from(dir)));
            }
        } else if fstype == "cgroup" && options.split(',').any(|o| o == "cpuset") && v1.is_none() {
            v1 = Some(PathBuf::from(dir));
        }
    }
    v1.map(|dir| (Kind::V1, dir)).ok_or_else(|| {
        "no cpuset hierarchy: the cgroup v2 mount lacks the cpuset controller and no cgroup v1 \
         cpuset is mounted (mount -t cgroup -o cpuset none /sys/fs/cgroup/cpuset), or boot with isolcpus"
            .to_string()
    })
}

/// The real-time CPUs of latlab's partition, `""` when there is none.
pub fn current() -> Result<String, String> {
    Ok(locate().map(|s| cpu_list(&s.rt)).unwrap_or_default())
}

/// Finds a partition latlab made from the cgroup directories alone.
fn locate() -> Option<Saved> {
    let (kind, root) = hierarchy().ok()?;
    let dir = root.join(RT_DIR);
    let cpus = read(&cpuset_file(&dir, "cpus")).ok()?;
    let rt = parse_cpu_list(&cpus).ok()?;
    let housekeeping = online_cpus()
        .into_iter()
        .filter(|c| !rt.contains(c))
        .collect();
    Some(Saved {
        kind,
        root,
        rt,
        housekeeping,
        root_load_balance: None,
        enabled_cpuset: false,
        affinities: vec![],
    })
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

/// `cpuset.NAME` in `dir`, or `NAME` on a v1 mount with `noprefix`.
pub(crate) fn cpuset_file(dir: &Path, name: &str) -> PathBuf {
    let prefixed = dir.join(format!("cpuset.{name}"));
    let bare = dir.join(name);
    if !prefixed.exists() && bare.exists() {
        bare
    } else {
        prefixed
    }
}

/// A file's trimmed text; the error names it.
pub(crate) fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|t| t.trim().to_string())
        .map_err(|e| format!("reading {}: {e}", path.display()))
}

/// Writes a file; the error names it and the value.
pub(crate) fn write_file(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("writing {value:?} to {}: {e}", path.display()))
}

/// Moves the tasks listed in `from` (a `tasks`/`cgroup.procs` file) to
/// `to`, user threads only, a few passes for the ones forked meanwhile.
/// Threads that ended are skipped; returns the other failures.
pub(crate) fn move_tasks(from: &Path, to: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    for _ in 0..4 {
        let ids: Vec<i32> = read(from)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .filter(|&id| !task::is_kernel_thread(id))
            .collect();
        if ids.is_empty() {
            break;
        }
        failures.clear();
        for id in ids {
            match std::fs::write(to, id.to_string()) {
                Err(e) if e.raw_os_error() != Some(libc::ESRCH) => failures.push(format!(
                    "{id} ({}): {e}",
                    task::comm(id).unwrap_or_default()
                )),
                _ => {}
            }
        }
    }
    failures
}

/// Removes a cgroup directory, waiting briefly for exiting tasks.
pub(crate) fn remove_dir(dir: &Path) -> Result<(), String> {
    for _ in 0..50 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(e) => return Err(format!("removing {}: {e}", dir.display())),
        }
    }
    Err(format!("removing {}: still busy", dir.display()))
}
