//! The cause taxonomy: why part of a wake-up latency went by ([`Cause`]),
//! its category, and the task a cause names.

use serde::Serialize;

/// Why part of a wake-up latency went by.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(tag = "category", rename_all = "snake_case")]
pub enum Cause {
    /// The timer interrupt came late while this task ran and the CPU logged
    /// events: interrupts were disabled in the kernel on its behalf.
    TimerIrqDelay {
        /// `comm:pid` in a window's parts; `comm` in a ranked `CauseRow`.
        task: String,
    },
    /// The CPU logged nothing at all for a while: before the timer
    /// interrupt (interrupts off in untraced code), inside an interrupt for
    /// over [`STALL_NS`], or in a task for over [`TASK_STALL_NS`] while the
    /// woken task (or its timer's thread) waited; either way the (virtual)
    /// CPU may not have been running (hypervisor preemption, SMI).
    SilentGap {
        /// The task the CPU was running (`comm:pid`; `comm` in a `CauseRow`).
        task: String,
        /// Where the silence was.
        within: Silence,
    },
    /// Time inside the timer interrupt itself: its entry and exit, the
    /// woken task's own expiry and wake-up, and callbacks of other timers
    /// the trace does not name (no `function` field, or `latlab watch`).
    HrtimerInterrupt,
    /// Another timer's callback, and the timer interrupt or softirq that
    /// ran it, held the CPU: a named function (the `function` field of
    /// `hrtimer_expire_entry`/`timer_expire_entry`, symbolized with the
    /// trace's kallsyms). The time of an interrupt or softirq between
    /// callbacks is the callback it ran longest; a timer interrupt that ran
    /// no callback, only raised the `HRTIMER` softirq, is the time of the
    /// soft hrtimer callbacks that softirq ran.
    TimerCallback {
        /// The callback function (`tcp_pace_kick`, `tick_nohz_handler`;
        /// `0xffff...` when the trace has no symbol for it).
        function: String,
        /// The kind of timer, by where its callback ran.
        timer: TimerKind,
    },
    /// A hard interrupt handler ran.
    IrqHandler {
        /// Handler (or x86 vector) name.
        name: String,
    },
    /// A softirq ran (a kernel without PREEMPT_RT: softirqs are not
    /// preemptible there).
    Softirq {
        /// Vector name (NET_RX, NET_TX, BLOCK, TIMER, HRTIMER, RCU, SCHED, TASKLET, ...).
        vector: String,
    },
    /// A soft hrtimer had expired and its hard interrupt had come, but its
    /// callback waits for the thread that runs the `HRTIMER` softirq
    /// (`ktimers/N` on PREEMPT_RT, `ksoftirqd/N` or the interrupted task
    /// elsewhere), while `task` ran: another task that outranked the thread
    /// (or held the CPU), or the thread itself busy with other softirq work.
    SoftTimer {
        /// The thread that ran the callback (`comm:pid`).
        thread: String,
        /// The task the CPU ran meanwhile (`comm:pid`; `comm` in a `CauseRow`).
        task: String,
        /// Its kernel priority (-1 unknown).
        prio: i32,
    },
    /// A threaded interrupt handler (`irq/NN-name`) ran before the task.
    IrqThread {
        /// `comm:pid` in a window's parts; `comm` in a ranked `CauseRow`.
        task: String,
        /// The IRQ number (`/proc/irq/NN`).
        irq: i32,
        /// Its kernel priority (0-98 real-time; -1 unknown).
        prio: i32,
        /// The woken task's kernel priority (-1 unknown).
        task_prio: i32,
    },
    /// A softirq thread (`ktimers/N`, `ksoftirqd/N`) ran before the task.
    SoftirqThread {
        /// `comm:pid` in a window's parts; `comm` in a ranked `CauseRow`.
        task: String,
        /// Its kernel priority (-1 unknown).
        prio: i32,
        /// The woken task's kernel priority (-1 unknown).
        task_prio: i32,
    },
    /// Another kernel thread with a known role (RCU, workqueue, stopper)
    /// ran before the task.
    KernelThread {
        /// `comm:pid` in a window's parts; `comm` in a ranked `CauseRow`.
        task: String,
        /// Its kernel priority (-1 unknown).
        prio: i32,
        /// The woken task's kernel priority (-1 unknown).
        task_prio: i32,
    },
    /// Another task ran on the CPU before the woken task.
    OtherTask {
        /// `comm:pid` in a window's parts; `comm` in a ranked `CauseRow`.
        task: String,
        /// Its kernel priority (0-99 real-time, 100-139 normal; -1 unknown).
        prio: i32,
        /// The woken task's kernel priority (-1 unknown).
        task_prio: i32,
    },
    /// The task running when the wake-up came kept the CPU in the kernel
    /// with no preemption point (non-preemptible kernel code), though the
    /// woken task outranked it.
    NonPreemptibleKernel {
        /// `comm:pid` in a window's parts; `comm` in a ranked `CauseRow`.
        task: String,
    },
    /// The CPU was idle: leaving the idle state (C-state exit, or a halted
    /// vCPU waiting to be run again).
    IdleExit,
    /// The task itself still ran when its timer expired: it had not gone
    /// to sleep yet (its previous cycle overran the period, or it armed an
    /// expiry already past), so the wake-up could only come after it slept.
    TaskItself,
    /// Nothing in the trace says (state unknown, or the task itself).
    Unexplained,
}

/// The kind of timer whose callback ran, by where it ran.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TimerKind {
    /// An hrtimer expired in the timer interrupt (a hard hrtimer).
    Hrtimer,
    /// An hrtimer expired in the `HRTIMER` softirq (a soft hrtimer).
    SoftHrtimer,
    /// A timer-wheel timer (`timer_list`), expired in the `TIMER` softirq.
    TimerList,
}

impl TimerKind {
    /// `soft hrtimer, HRTIMER softirq` style.
    pub fn describe(self) -> &'static str {
        match self {
            TimerKind::Hrtimer => "hrtimer, in the timer interrupt",
            TimerKind::SoftHrtimer => "soft hrtimer, in the HRTIMER softirq",
            TimerKind::TimerList => "timer_list, in the TIMER softirq",
        }
    }
}

/// Where a [`Cause::SilentGap`] was.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Silence {
    /// Before the timer interrupt: nothing logged from the expiry on.
    BeforeInterrupt,
    /// Inside an interrupt (the timer interrupt had come).
    InInterrupt,
    /// In a task, after the timer interrupt, while the woken task or the
    /// thread that runs its soft timer waited: not even the scheduler tick
    /// was logged.
    InTask,
    /// In the idle task after the wake-up, for over [`STALL_NS`]: an idle
    /// CPU told to run the woken task switches in microseconds.
    InIdle,
}

/// A silence longer than this in a task that holds up the woken task (or
/// its soft timer's thread) is a [`Cause::SilentGap`] when the trace logs
/// timer interrupts: the scheduler tick (HZ 100 or more) would have logged
/// one, so interrupts were off or the CPU did not run.
pub const TASK_STALL_NS: u64 = 10_000_000;

/// A silence longer than this inside an interrupt (no event logged on the
/// CPU) is a [`Cause::SilentGap`]: interrupt code runs for microseconds
/// between two trace events, so a stretch this long means the CPU did not
/// run (a vCPU the host did not schedule, an SMI).
pub const STALL_NS: u64 = 1_000_000;

impl Cause {
    /// The category name (the JSON `category` tag).
    pub fn category(&self) -> &'static str {
        match self {
            Cause::TimerIrqDelay { .. } => "timer_irq_delay",
            Cause::SilentGap { .. } => "silent_gap",
            Cause::HrtimerInterrupt => "hrtimer_interrupt",
            Cause::TimerCallback { .. } => "timer_callback",
            Cause::IrqHandler { .. } => "irq_handler",
            Cause::Softirq { .. } => "softirq",
            Cause::SoftTimer { .. } => "soft_timer",
            Cause::IrqThread { .. } => "irq_thread",
            Cause::SoftirqThread { .. } => "softirq_thread",
            Cause::KernelThread { .. } => "kernel_thread",
            Cause::OtherTask { .. } => "other_task",
            Cause::NonPreemptibleKernel { .. } => "non_preemptible_kernel",
            Cause::IdleExit => "idle_exit",
            Cause::TaskItself => "task_itself",
            Cause::Unexplained => "unexplained",
        }
    }
}

impl Cause {
    /// The task label (`comm:pid`) of a cause that names a task.
    pub fn task(&self) -> Option<&str> {
        match self {
            Cause::TimerIrqDelay { task }
            | Cause::SilentGap { task, .. }
            | Cause::SoftTimer { task, .. }
            | Cause::IrqThread { task, .. }
            | Cause::SoftirqThread { task, .. }
            | Cause::KernelThread { task, .. }
            | Cause::OtherTask { task, .. }
            | Cause::NonPreemptibleKernel { task } => Some(task),
            _ => None,
        }
    }

    /// The same cause naming `task` instead.
    pub(super) fn with_task(&self, label: String) -> Cause {
        let mut c = self.clone();
        match &mut c {
            Cause::TimerIrqDelay { task }
            | Cause::SilentGap { task, .. }
            | Cause::SoftTimer { task, .. }
            | Cause::IrqThread { task, .. }
            | Cause::SoftirqThread { task, .. }
            | Cause::KernelThread { task, .. }
            | Cause::OtherTask { task, .. }
            | Cause::NonPreemptibleKernel { task } => *task = label,
            _ => {}
        }
        c
    }

    /// The cause grouped by command name (`dd:812` -> `dd`) and the pid it
    /// named. A task with an unknown name (`<...>:812`) stays on its own.
    pub fn by_command(&self) -> (Cause, Option<i32>) {
        let Some((comm, pid)) = self
            .task()
            .and_then(|t| t.rsplit_once(':'))
            .and_then(|(c, p)| Some((c, p.parse::<i32>().ok()?)))
        else {
            return (self.clone(), None);
        };
        if comm == "<...>" {
            return (self.clone(), None);
        }
        (self.with_task(comm.to_string()), Some(pid))
    }
}
