//! Shared by latlab-watch's integration tests: the skip-or-fail rule and
//! a thread's histogram counts.
#![allow(dead_code)] // each test binary uses its own part

/// Whether a test of the kernel sides can run: root, kernel BTF and at
/// least `cpus` CPUs. Skips with the reason otherwise (latlab-testkit's
/// rule); under `LATLAB_REQUIRE_PRIVILEGE=1` (CI) a missing privilege or
/// BTF fails instead (a machine's CPUs are not something CI can be asked to
/// fix).
pub fn ready(test: &str, cpus: usize) -> bool {
    let have = std::thread::available_parallelism().map_or(1, |n| n.get());
    if have < cpus {
        latlab_testkit::skip::skip(&format!(
            "{test}: needs {cpus} CPUs, this machine has {have}"
        ));
        return false;
    }
    latlab_testkit::root(test)
        && latlab_testkit::require(
            &format!("{test}: kernel BTF"),
            std::path::Path::new("/sys/kernel/btf/vmlinux").exists(),
            "a kernel built with CONFIG_DEBUG_INFO_BTF=y",
        )
}

/// The counts of thread `tid` in histogram rows `(pid, kind, bucket,
/// count)` (what `KernelSide::histogram_counts` returns), all kinds.
pub fn total(rows: &[(u32, u32, u32, u64)], tid: u32) -> u64 {
    rows.iter().filter(|r| r.0 == tid).map(|r| r.3).sum()
}
