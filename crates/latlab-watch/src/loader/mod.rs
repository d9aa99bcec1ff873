//! The kernel side: the committed BPF object ([`OBJECT`]) loaded with aya,
//! relocated (CO-RE) against the running kernel's BTF, its programs attached
//! to their tracepoints, and typed handles on its maps ([`BpfSide`]).
//!
//! What every build shares is here (the object, its programs, the
//! settings, the counters); the loader itself is in `bpf.rs`, built on
//! 64-bit targets only (aya does not build for 32-bit ARM with musl's
//! 64-bit time_t), and a 32-bit build's `BpfSide` (`none.rs`) only fails
//! to load, naming `--tracefs`.

#[cfg(target_pointer_width = "64")]
mod bpf;
#[cfg(target_pointer_width = "64")]
pub mod kfunc;
#[cfg(not(target_pointer_width = "64"))]
mod none;

#[cfg(target_pointer_width = "64")]
pub use bpf::BpfSide;
#[cfg(not(target_pointer_width = "64"))]
pub use none::BpfSide;

/// The BPF object, compiled from `bpf/watch.bpf.c` by `make bpf` (clang) and
/// committed: building latlab needs no clang.
pub static OBJECT: &[u8] = include_bytes!("../../bpf/watch.bpf.o");

/// Programs and their tracepoints; `false`: optional (x86's vectors). No
/// program on the LAPIC timer's vector: user space draws that interrupt
/// from the hrtimer callbacks ([`crate::window::with_timer_interrupts`]),
/// two programs fewer on every timer wake-up's path; none on
/// `hrtimer_expire_exit` either (whether a callback still runs is its clock
/// base's to say), one fewer again.
pub const PROGRAMS: [(&str, &str, bool); 17] = [
    ("on_hrtimer_entry", "hrtimer_expire_entry", true),
    ("on_waking", "sched_waking", true),
    ("on_switch", "sched_switch", true),
    ("on_irq_entry", "irq_handler_entry", true),
    ("on_irq_exit", "irq_handler_exit", true),
    ("on_softirq_entry", "softirq_entry", true),
    ("on_softirq_exit", "softirq_exit", true),
    ("on_reschedule_entry", "reschedule_entry", false),
    ("on_reschedule_exit", "reschedule_exit", false),
    ("on_call_function_entry", "call_function_entry", false),
    ("on_call_function_exit", "call_function_exit", false),
    (
        "on_call_function_single_entry",
        "call_function_single_entry",
        false,
    ),
    (
        "on_call_function_single_exit",
        "call_function_single_exit",
        false,
    ),
    ("on_irq_work_entry", "irq_work_entry", false),
    ("on_irq_work_exit", "irq_work_exit", false),
    ("on_fork", "sched_process_fork", true),
    ("on_exit", "sched_process_exit", true),
];

/// Programs of [`PROGRAMS`] that read kernel memory on the wake-up's path
/// with plain loads through the kfunc `bpf_rdonly_cast()` (kernel 6.2+),
/// and their twins that read it with `bpf_probe_read_kernel()`, attached
/// in their place (under the first name) where the kernel lacks the kfunc
/// or refuses the program, or [`Settings::probe_reads`] asks for them.
pub const PROBE_TWINS: [(&str, &str); 2] = [
    ("on_hrtimer_entry", "on_hrtimer_entry_probe"),
    ("on_waking", "on_waking_probe"),
];

/// Which of the [`PROGRAMS`] [`BpfSide::load_programs`] attaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Programs {
    /// Every one, with the kernel's run-time statistics of BPF programs
    /// sampled ([`BpfSide::kernel_time`]): `latlab watch`.
    All,
    /// Only those the histograms of timer-driven wake-ups need
    /// ([`TIMER_WAKEUP_TRACEPOINTS`]), no statistics: `latlab run --split`,
    /// at the least cost to the measurement. No late windows either: load
    /// it with [`Settings::histograms_only`].
    TimerWakeups,
}

/// The tracepoints [`Programs::TimerWakeups`] attaches to: the timer
/// callback (expiry, interrupt, soft or hard), the wake-up and the switch to
/// the task.
pub const TIMER_WAKEUP_TRACEPOINTS: [&str; 3] =
    ["hrtimer_expire_entry", "sched_waking", "sched_switch"];

impl Programs {
    /// Whether the program on `tracepoint` is attached.
    pub fn attaches(self, tracepoint: &str) -> bool {
        match self {
            Programs::All => true,
            Programs::TimerWakeups => TIMER_WAKEUP_TRACEPOINTS.contains(&tracepoint),
        }
    }
}

/// The settings the BPF side is loaded with (its `.rodata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// A wake-up later than this (ns) sends its window to user space.
    pub threshold_ns: u64,
    /// New threads and processes of watched tasks are watched too.
    pub follow_forks: bool,
    /// Windows per second and CPU at most (the rest are counted).
    pub max_windows_per_sec: u32,
    /// One normal wake-up in this many sends its window (explain's
    /// baseline); 0: none.
    pub baseline_every: u32,
    /// Read kernel memory on the path with `bpf_probe_read_kernel()` even
    /// where the kernel has `bpf_rdonly_cast()` (the [`PROBE_TWINS`]): what
    /// a kernel before 6.2 runs, for tests and comparisons. Not in
    /// `.rodata`: it chooses programs.
    pub probe_reads: bool,
    /// Measure only the wake-ups of a thread at a real-time priority
    /// (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE) when it runs: `--rt` with a
    /// selection, whose other threads stay watched for the threads they
    /// start.
    pub rt_only: bool,
}

impl Settings {
    /// Histograms only: no window is ever sent (no threshold, no baseline),
    /// no fork followed.
    pub fn histograms_only() -> Settings {
        Settings {
            threshold_ns: u64::MAX,
            follow_forks: false,
            max_windows_per_sec: 0,
            baseline_every: 0,
            probe_reads: false,
            rt_only: false,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            threshold_ns: 100_000,
            follow_forks: false,
            max_windows_per_sec: 50,
            baseline_every: 1000,
            probe_reads: false,
            rt_only: false,
        }
    }
}

/// Words of `watched_bits` (`WATCHED_WORDS` in watch.bpf.c): a bit for
/// every thread id up to the kernel's limit (2^22).
pub const WATCHED_WORDS: u32 = 1 << 16;

/// Slots of the BPF side's `pending` table (a wake-up on its way, per
/// thread id modulo this; `PENDING_SLOTS` in bpf/watch.bpf.c).
pub const PENDING_SLOTS: u32 = 1 << 16;

/// The word of `watched_bits` holding `tid`'s bit, and that bit.
pub fn bit_of(tid: u32) -> (u32, u64) {
    ((tid >> 6) & (WATCHED_WORDS - 1), 1 << (tid & 63))
}

/// The kernel's counters of the BPF side (`enum counter`), summed over CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Windows the ring buffer had no room for (user space too slow).
    pub lost: u64,
    /// Late windows over the per-second limit (counted, not sent).
    pub throttled: u64,
    /// Samples the full histogram map could not count.
    pub hist_full: u64,
    /// Wake-ups over the threshold.
    pub late: u64,
    /// Wake-ups lost because another watched thread, with the same thread
    /// id modulo 65 536, was woken at the same time (they share a slot of
    /// the BPF side's pending table); 0 for `--tracefs`.
    pub shared: u64,
    /// Trace events the kernel could not hand over (`--tracefs` only: its
    /// ring buffers overran); 0 for the BPF side.
    pub events_lost: u64,
    /// New threads of watched tasks that were not watched: the kernel's
    /// set of watched threads (4096) was full.
    pub watch_full: u64,
}

/// The kernel's BPF run-time statistics are on for [`STATS_SAMPLE`] at the
/// start and then once every [`STATS_EVERY`]: while they are on, every run
/// of every program pays two clock reads (about 0.1 µs on a VM, four runs on
/// each watched wake-up's path), so watch keeps them off most of the time
/// and scales what the samples counted to the whole watch.
pub const STATS_EVERY: std::time::Duration = std::time::Duration::from_secs(30);
/// How long each sample of the run-time statistics lasts.
pub const STATS_SAMPLE: std::time::Duration = std::time::Duration::from_secs(1);
