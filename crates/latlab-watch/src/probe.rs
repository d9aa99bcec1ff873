//! What the kernel and the user offer, checked before anything is loaded,
//! so that a missing part is named instead of a loader error.

use std::path::Path;

use crate::error::{Result, WatchError};

/// Capability numbers (linux/capability.h).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

/// The effective capabilities of this process (`CapEff` of
/// /proc/self/status), 0 when unreadable.
pub fn effective_capabilities() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0)
}

/// Whether capabilities `caps` allow loading and attaching tracing BPF
/// programs: CAP_BPF with CAP_PERFMON (5.8+), or CAP_SYS_ADMIN.
pub fn may_trace(caps: u64) -> bool {
    let has = |c: u32| caps & (1u64 << c) != 0;
    has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON))
}

/// Checks BTF, the bpf() system call and the privilege; the first missing
/// one is the error.
pub fn check() -> Result<()> {
    check_with(
        Path::new("/sys/kernel/btf/vmlinux"),
        effective_capabilities(),
    )
}

/// [`check`] against a given BTF path and capability set (tests).
pub fn check_with(btf: &Path, caps: u64) -> Result<()> {
    if !btf.exists() {
        return Err(WatchError::NoBtf);
    }
    if !may_trace(caps) {
        let has = |c: u32| caps & (1u64 << c) != 0;
        let missing: Vec<&str> = [(CAP_BPF, "CAP_BPF"), (CAP_PERFMON, "CAP_PERFMON")]
            .into_iter()
            .filter(|(c, _)| !has(*c))
            .map(|(_, n)| n)
            .collect();
        return Err(WatchError::NoPrivilege {
            detail: format!(
                "this process (uid {}) lacks {}; run it as root",
                // SAFETY: getuid cannot fail.
                unsafe { libc::getuid() },
                missing.join(" and ")
            ),
        });
    }
    // bpf(BPF_PROG_LOAD) with no attributes: EINVAL or EFAULT when the
    // call exists, ENOSYS when the kernel lacks it.
    // SAFETY: a null attribute pointer of size 0 is never dereferenced.
    let r = unsafe { libc::syscall(libc::SYS_bpf, 5, std::ptr::null::<u8>(), 0) };
    if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
        return Err(WatchError::NoBpfSyscall);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_parts_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let no_btf = dir.path().join("vmlinux");
        let e = check_with(&no_btf, u64::MAX).unwrap_err().to_string();
        assert!(e.contains("CONFIG_DEBUG_INFO_BTF"), "{e}");
        std::fs::write(&no_btf, b"").unwrap();
        let e = check_with(&no_btf, 0).unwrap_err().to_string();
        assert!(e.contains("CAP_BPF and CAP_PERFMON"), "{e}");
        let e = check_with(&no_btf, 1 << CAP_BPF).unwrap_err().to_string();
        assert!(
            e.contains("lacks CAP_PERFMON") && e.contains("as root"),
            "{e}"
        );
        assert!(may_trace((1 << CAP_BPF) | (1 << CAP_PERFMON)));
        assert!(may_trace(1 << CAP_SYS_ADMIN));
    }
}
