//! The cpuset hierarchy: where it is, the files a partition reads and
//! writes, and the moving of tasks.

use std::io;
use std::path::{Path, PathBuf};

use latlab_rt::sched::{online_cpus, parse_cpu_list};

use super::{Kind, Saved, RT_DIR};
use crate::knobs::task;

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

/// Finds a partition latlab made from the cgroup directories alone.
pub(crate) fn locate() -> Option<Saved> {
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
