//! The partition on a cgroup v1 cpuset hierarchy: `latlab-rt` exclusive
//! with load balancing off, `latlab-housekeeping` for every other user
//! task of the root, and load balancing off in the root (else the root's
//! sched domain still spans the real-time CPUs).

use std::path::Path;

use latlab_fix::cpu_list;

use super::{
    cpuset_file, move_tasks, read, remove_dir, write_file, Saved, HOUSEKEEPING_DIR, RT_DIR,
};

/// Makes the partition; the caller undoes a partial one on error.
pub fn isolate(saved: &Saved) -> Result<(), String> {
    let root = &saved.root;
    let mems = read(&cpuset_file(root, "mems"))?;
    if let Some(other) = overlapping_sibling(root, &saved.rt)? {
        return Err(format!(
            "cpuset {other} also holds real-time CPUs: the partition cannot be exclusive"
        ));
    }
    for name in [HOUSEKEEPING_DIR, RT_DIR] {
        let dir = root.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let cpus = if name == RT_DIR {
            &saved.rt
        } else {
            &saved.housekeeping
        };
        write_file(&cpuset_file(&dir, "cpus"), &cpu_list(cpus))?;
        write_file(&cpuset_file(&dir, "mems"), &mems)?;
    }
    let rt = root.join(RT_DIR);
    write_file(&cpuset_file(&rt, "cpu_exclusive"), "1")?;
    write_file(&cpuset_file(&rt, "sched_load_balance"), "0")?;
    write_file(&cpuset_file(root, "sched_load_balance"), "0")?;
    let failures = move_tasks(
        &root.join("tasks"),
        &root.join(HOUSEKEEPING_DIR).join("tasks"),
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "moving user tasks to {}: {}",
            root.join(HOUSEKEEPING_DIR).display(),
            failures.join(", ")
        ))
    }
}

/// A child cpuset of `root` other than ours whose CPUs overlap `rt`.
fn overlapping_sibling(root: &Path, rt: &[usize]) -> Result<Option<String>, String> {
    let entries =
        std::fs::read_dir(root).map_err(|e| format!("reading {}: {e}", root.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !entry.path().is_dir() || name == RT_DIR || name == HOUSEKEEPING_DIR {
            continue;
        }
        let cpus = read(&cpuset_file(&entry.path(), "cpus")).unwrap_or_default();
        let cpus = latlab_rt::sched::parse_cpu_list(&cpus).unwrap_or_default();
        if cpus.iter().any(|c| rt.contains(c)) {
            return Ok(Some(entry.path().display().to_string()));
        }
    }
    Ok(None)
}

/// Tasks back to the root, our cpusets removed, the root's load balancing
/// as it was. Goes on after a failure and reports all of them.
pub fn release(saved: &Saved) -> Result<(), String> {
    let root = &saved.root;
    let mut errors = Vec::new();
    for name in [RT_DIR, HOUSEKEEPING_DIR] {
        let dir = root.join(name);
        if !dir.exists() {
            continue;
        }
        let failures = move_tasks(&dir.join("tasks"), &root.join("tasks"));
        if !failures.is_empty() {
            errors.push(format!(
                "moving tasks of {} back: {}",
                dir.display(),
                failures.join(", ")
            ));
        }
        if let Err(e) = remove_dir(&dir) {
            errors.push(e);
        }
    }
    let balance = saved.root_load_balance.as_deref().unwrap_or("1");
    let file = cpuset_file(root, "sched_load_balance");
    if read(&file).ok().as_deref() != Some(balance) {
        if let Err(e) = write_file(&file, balance) {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
