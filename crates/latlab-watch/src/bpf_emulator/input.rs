//! The decoded trace events the emulator is fed: the fields the BPF
//! programs read.

/// What a decoded trace event says (the fields the BPF programs read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// `sched_switch`.
    Switch {
        /// The task leaving.
        prev_pid: i32,
        /// It stays runnable (preempted).
        prev_runnable: bool,
        /// The task running next.
        next_pid: i32,
        /// Its kernel priority.
        next_prio: i32,
        /// Its name.
        next_comm: [u8; 16],
    },
    /// `sched_waking`.
    Waking {
        /// The woken task.
        pid: i32,
        /// Its kernel priority.
        prio: i32,
        /// The CPU it will run on.
        target_cpu: i32,
        /// Its name.
        comm: [u8; 16],
    },
    /// `irq_handler_entry`.
    IrqEntry {
        /// The interrupt.
        irq: i32,
    },
    /// `irq_handler_exit`.
    IrqExit {
        /// The interrupt.
        irq: i32,
        /// The handler's return value.
        ret: i32,
    },
    /// `softirq_entry`.
    SoftirqEntry {
        /// The vector.
        vec: i32,
    },
    /// `softirq_exit`.
    SoftirqExit {
        /// The vector.
        vec: i32,
    },
    /// `hrtimer_start`: a timer armed.
    HrtimerStart {
        /// The timer's address.
        timer: u64,
        /// Its soft expiry (in its clock).
        softexpires: i64,
    },
    /// `hrtimer_setup` / `hrtimer_init`: a timer's clock.
    HrtimerSetup {
        /// The timer's address.
        timer: u64,
        /// Its clock as asked for.
        clockid: i32,
        /// Its mode (`enum hrtimer_mode`).
        mode: u32,
    },
    /// `hrtimer_expire_entry`.
    HrtimerEntry {
        /// The timer's address.
        timer: u64,
        /// The time of its clock base when the interrupt ran.
        now: i64,
        /// Its callback function's address (0: not in the event).
        function: u64,
    },
    /// `hrtimer_expire_exit`.
    HrtimerExit {
        /// The timer's address.
        timer: u64,
    },
    /// An x86 vector's entry (`irq_vectors:*_entry`).
    VectorEntry {
        /// The vector number.
        vector: i32,
        /// Which ([`crate::records::VECTOR_NAMES`]).
        which: i32,
    },
    /// An x86 vector's exit.
    VectorExit {
        /// The vector number.
        vector: i32,
        /// Which.
        which: i32,
    },
    /// `sched_process_fork`.
    Fork {
        /// The forking thread.
        parent: i32,
        /// The new one.
        child: i32,
    },
    /// `sched_process_exit`: a thread ends.
    Exit {
        /// The thread.
        pid: i32,
    },
}

/// One event: when (trace clock `mono`: CLOCK_MONOTONIC ns), where, the
/// task running, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Timestamp (ns).
    pub ts: u64,
    /// The CPU it happened on.
    pub cpu: u32,
    /// The task running (`common_pid`).
    pub pid: i32,
    /// What.
    pub input: Input,
}
