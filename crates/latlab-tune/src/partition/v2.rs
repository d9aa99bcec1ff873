//! The partition on cgroup v2: `latlab-rt` with `cpuset.cpus.partition =
//! isolated`. The root and every other cgroup lose its CPUs, so their
//! tasks move off by themselves; load balancing stops on them.

use std::path::Path;

use latlab_fix::cpu_list;

use super::{move_tasks, read, remove_dir, write_file, Saved, RT_DIR};

/// Whether the root already gives its children the cpuset controller.
pub fn has_cpuset(root: &Path) -> bool {
    read(&root.join("cgroup.subtree_control"))
        .unwrap_or_default()
        .split_whitespace()
        .any(|c| c == "cpuset")
}

/// Makes the partition; the caller undoes a partial one on error.
pub fn isolate(saved: &Saved) -> Result<(), String> {
    let root = &saved.root;
    if saved.enabled_cpuset {
        write_file(&root.join("cgroup.subtree_control"), "+cpuset")?;
    }
    let dir = root.join(RT_DIR);
    std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    write_file(&dir.join("cpuset.cpus"), &cpu_list(&saved.rt))?;
    let partition = dir.join("cpuset.cpus.partition");
    if !partition.exists() {
        return Err(format!(
            "{} is missing: this kernel has no cpuset partitions (6.1+)",
            partition.display()
        ));
    }
    write_file(&partition, "isolated")?;
    let state = read(&partition)?;
    if state != "isolated" {
        return Err(format!(
            "{}: the kernel says {state:?}",
            partition.display()
        ));
    }
    Ok(())
}

/// Processes back to the root, the partition removed, the controller as it
/// was. Goes on after a failure and reports all of them.
pub fn release(saved: &Saved) -> Result<(), String> {
    let root = &saved.root;
    let dir = root.join(RT_DIR);
    let mut errors = Vec::new();
    if dir.exists() {
        let failures = move_tasks(&dir.join("cgroup.procs"), &root.join("cgroup.procs"));
        if !failures.is_empty() {
            errors.push(format!(
                "moving processes of {} back: {}",
                dir.display(),
                failures.join(", ")
            ));
        }
        let partition = dir.join("cpuset.cpus.partition");
        if partition.exists() {
            let _ = write_file(&partition, "member");
        }
        if let Err(e) = remove_dir(&dir) {
            errors.push(e);
        }
    }
    if saved.enabled_cpuset && has_cpuset(root) {
        if let Err(e) = write_file(&root.join("cgroup.subtree_control"), "-cpuset") {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
