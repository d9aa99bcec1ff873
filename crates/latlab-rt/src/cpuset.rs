//! A set of CPUs for thread affinity: the kernel's `cpu_set_t`, bounds-checked.

use std::fmt;

/// A set of CPU numbers as `sched_setaffinity` and `sched_getaffinity` take
/// it. Building one allocates nothing and applying one is a single system
/// call, so a set prepared before `fork` may be applied in the child.
#[derive(Clone, Copy)]
pub struct CpuSet {
    raw: libc::cpu_set_t,
}

/// A CPU number beyond what a [`CpuSet`] can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("CPU {cpu} is beyond the largest CPU number {largest}")]
pub struct CpuOutOfRange {
    /// The CPU asked for.
    pub cpu: usize,
    /// The largest CPU number a set holds.
    pub largest: usize,
}

impl CpuSet {
    /// How many CPUs a set can name: CPUs `0..CAPACITY`.
    pub const CAPACITY: usize = 8 * std::mem::size_of::<libc::cpu_set_t>();

    /// The empty set.
    pub fn new() -> Self {
        // SAFETY: cpu_set_t is plain data; all zeroes is the empty set.
        CpuSet {
            raw: unsafe { std::mem::zeroed() },
        }
    }

    /// The set of one CPU.
    pub fn single(cpu: usize) -> Result<Self, CpuOutOfRange> {
        Self::from_cpus(&[cpu])
    }

    /// The set of `cpus`; the first CPU beyond [`CpuSet::CAPACITY`] is an error.
    pub fn from_cpus(cpus: &[usize]) -> Result<Self, CpuOutOfRange> {
        let mut set = Self::new();
        for &cpu in cpus {
            set.insert(cpu)?;
        }
        Ok(set)
    }

    /// Adds `cpu` to the set.
    pub fn insert(&mut self, cpu: usize) -> Result<(), CpuOutOfRange> {
        if cpu >= Self::CAPACITY {
            return Err(CpuOutOfRange {
                cpu,
                largest: Self::CAPACITY - 1,
            });
        }
        // SAFETY: `cpu` is within the set's bits (checked above).
        unsafe { libc::CPU_SET(cpu, &mut self.raw) };
        Ok(())
    }

    /// Whether `cpu` is in the set (a CPU beyond the capacity never is).
    pub fn contains(&self, cpu: usize) -> bool {
        // SAFETY: `cpu` is within the set's bits (checked first).
        cpu < Self::CAPACITY && unsafe { libc::CPU_ISSET(cpu, &self.raw) }
    }

    /// The CPUs of the set, in ascending order.
    pub fn cpus(&self) -> Vec<usize> {
        (0..Self::CAPACITY).filter(|&c| self.contains(c)).collect()
    }

    /// Whether the set names no CPU.
    pub fn is_empty(&self) -> bool {
        (0..Self::CAPACITY).all(|c| !self.contains(c))
    }

    /// Restricts the calling thread to the CPUs of the set. Only the system
    /// call runs: safe between `fork` and `exec` (the error is the raw errno).
    pub fn apply_to_current_thread(&self) -> std::io::Result<()> {
        // SAFETY: pid 0 is the calling thread; the set is a valid cpu_set_t.
        let rc = unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.raw)
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// The CPUs the calling thread may run on.
    pub fn of_current_thread() -> std::io::Result<Self> {
        let mut set = Self::new();
        // SAFETY: pid 0 is the calling thread; the kernel fills in the set.
        let rc = unsafe {
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set.raw)
        };
        if rc == 0 {
            Ok(set)
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Default for CpuSet {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for CpuSet {
    fn eq(&self, other: &Self) -> bool {
        (0..Self::CAPACITY).all(|c| self.contains(c) == other.contains(c))
    }
}

impl Eq for CpuSet {}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.cpus()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_exactly_the_cpus_put_in_it() {
        let set = CpuSet::from_cpus(&[3, 0, 7, 3]).unwrap();
        assert_eq!(set.cpus(), vec![0, 3, 7]);
        assert!(set.contains(7));
        assert!(!set.contains(1));
        assert!(!set.contains(CpuSet::CAPACITY));
        assert!(!set.is_empty());
        assert!(CpuSet::new().is_empty());
        assert_eq!(format!("{set:?}"), "{0, 3, 7}");
    }

    #[test]
    fn a_cpu_beyond_the_capacity_is_refused_and_named() {
        let err = CpuSet::single(CpuSet::CAPACITY).unwrap_err();
        assert_eq!(err.cpu, CpuSet::CAPACITY);
        assert_eq!(err.largest, CpuSet::CAPACITY - 1);
        assert_eq!(
            err.to_string(),
            format!(
                "CPU {} is beyond the largest CPU number {}",
                CpuSet::CAPACITY,
                CpuSet::CAPACITY - 1
            )
        );
        assert!(CpuSet::single(CpuSet::CAPACITY - 1).is_ok());
    }

    #[test]
    fn applying_a_set_is_what_the_thread_then_reads_back() {
        std::thread::spawn(|| {
            let allowed = CpuSet::of_current_thread().unwrap();
            let first = allowed.cpus()[0];
            let one = CpuSet::single(first).unwrap();
            one.apply_to_current_thread().unwrap();
            assert_eq!(CpuSet::of_current_thread().unwrap(), one);
            allowed.apply_to_current_thread().unwrap();
            assert_eq!(CpuSet::of_current_thread().unwrap(), allowed);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn an_empty_set_is_refused_by_the_kernel() {
        let err = CpuSet::new().apply_to_current_thread().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    }
}
