//! Timer callbacks by name: what a kernel timer's callback function does,
//! and what keeps it off a real-time CPU.
//!
//! A trace names the callback of every expiring timer
//! (`hrtimer_expire_entry`'s and `timer_expire_entry`'s `function` field).
//! The softirq or interrupt that ran it says little: a soft hrtimer of TCP
//! pacing and one of a posix timer both run in the `HRTIMER` softirq, and
//! IRQ affinity moves neither. The function does: [`known`] gives the
//! callbacks seen on these machines' traces a description and a fix, and
//! any other one a rule that still names it.

/// What a callback is, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    /// What the callback does, in a few words.
    pub what: String,
    /// What keeps it off the RT CPU.
    pub fix: String,
}

/// Advice for the flows of the network stack (a socket's timers expire on
/// the CPU whose softirq or task last sent on it).
const MOVE_FLOW: &str = "move the network flow and its softirq work off the RT CPU: run its sender and receiver on other CPUs (taskset, cpusets), steer its packets elsewhere (RPS/XPS: /sys/class/net/<dev>/queues/rx-*/rps_cpus and tx-*/xps_cpus), set the IRQ affinity of the NIC queue away from the RT CPU, or enable threaded NAPI (echo 1 > /sys/class/net/<dev>/threaded)";

/// Callbacks known by name: (function, what it does, the fix).
const TABLE: &[(&str, &str, &str)] = &[
    (
        "tcp_pace_kick",
        "TCP pacing of a socket whose sends run on this CPU (a congestion control that paces, such as bbr, without the fq qdisc): each expiry sends the flow's next packets",
        "TCP pacing: {MOVE_FLOW}; or keep TCP from pacing on its own (sysctl net.ipv4.tcp_congestion_control, e.g. cubic, which does not pace)",
    ),
    (
        "tcp_compressed_ack_kick",
        "TCP's compressed (delayed) SACKs of a socket on this CPU",
        "TCP SACK compression: {MOVE_FLOW}; or turn it off (sysctl net.ipv4.tcp_comp_sack_nr=0)",
    ),
    (
        "tcp_write_timer",
        "TCP's retransmit/probe timer of a socket on this CPU",
        "TCP timers: {MOVE_FLOW}",
    ),
    (
        "tcp_delack_timer",
        "TCP's delayed-ACK timer of a socket on this CPU",
        "TCP timers: {MOVE_FLOW}",
    ),
    (
        "tcp_keepalive_timer",
        "TCP's keepalive timer of a socket on this CPU",
        "TCP timers: {MOVE_FLOW}",
    ),
    (
        "qdisc_watchdog",
        "a qdisc's watchdog (traffic paced or shaped by fq, tbf, ...) on this CPU",
        "traffic shaping: {MOVE_FLOW}",
    ),
    (
        "napi_watchdog",
        "deferred NAPI polling of a NIC (gro_flush_timeout, napi_defer_hard_irqs)",
        "NAPI deferral: set /sys/class/net/<dev>/gro_flush_timeout to 0, or {MOVE_FLOW}",
    ),
    (
        "dev_watchdog",
        "a network device's transmit-timeout check",
        "the NIC's watchdog runs every few seconds on some CPU: keep the NIC's work off the RT CPU (IRQ affinity of its queues, RPS/XPS)",
    ),
    (
        "tick_nohz_handler",
        "the scheduler tick",
        "the scheduler tick: boot with nohz_full=<rt cpus> (with isolcpus or cpusets, and rcu_nocbs) so a CPU that runs one task stops its tick; a lower HZ makes it rarer",
    ),
    (
        "tick_sched_timer",
        "the scheduler tick",
        "the scheduler tick: boot with nohz_full=<rt cpus> (with isolcpus or cpusets, and rcu_nocbs) so a CPU that runs one task stops its tick; a lower HZ makes it rarer",
    ),
    (
        "tick_nohz_highres_handler",
        "the scheduler tick",
        "the scheduler tick: boot with nohz_full=<rt cpus> (with isolcpus or cpusets, and rcu_nocbs) so a CPU that runs one task stops its tick; a lower HZ makes it rarer",
    ),
    (
        "watchdog_timer_fn",
        "the soft-lockup watchdog's timer",
        "the lockup watchdog: keep it off the RT CPUs (sysctl kernel.watchdog_cpumask=<other cpus>) or turn it off (nowatchdog on the kernel command line, sysctl kernel.watchdog=0)",
    ),
    (
        "hrtimer_wakeup",
        "another task's sleep (nanosleep, clock_nanosleep, a poll/select/epoll timeout) ending on this CPU",
        "another task sleeps on this CPU: keep other tasks with timed sleeps off the RT CPU (taskset, cpusets, isolcpus)",
    ),
    (
        "it_real_fn",
        "a process's interval timer (setitimer ITIMER_REAL, alarm), sending SIGALRM",
        "an itimer of a task on this CPU: keep that task off the RT CPU (taskset, cpusets)",
    ),
    (
        "posix_timer_fn",
        "a POSIX timer (timer_create) of a task on this CPU",
        "a POSIX timer of a task on this CPU: keep that task off the RT CPU (taskset, cpusets)",
    ),
    (
        "timerfd_tmrproc",
        "a timerfd of a task on this CPU",
        "a timerfd of a task on this CPU: keep that task off the RT CPU (taskset, cpusets)",
    ),
    (
        "process_timeout",
        "another task's schedule_timeout sleep (msleep and the like) ending on this CPU",
        "another task sleeps on this CPU: keep it off the RT CPU (taskset, cpusets, isolcpus)",
    ),
    (
        "delayed_work_timer_fn",
        "a delayed work item's timer (queue_delayed_work), which queues the work for a kworker",
        "delayed work on this CPU: keep unbound work off it (/sys/devices/virtual/workqueue/cpumask) and the per-CPU work's users away; for vmstat, raise vm.stat_interval",
    ),
    (
        "kthread_delayed_work_timer_fn",
        "a kthread worker's delayed work timer",
        "delayed work of a kernel thread on this CPU: keep that thread off the RT CPU",
    ),
    (
        "idle_worker_timeout",
        "a workqueue pool's idle-worker reaper",
        "workqueue housekeeping: keep unbound workqueues off the RT CPU (/sys/devices/virtual/workqueue/cpumask)",
    ),
    (
        "sched_rt_period_timer",
        "real-time throttling's period timer (sched_rt_runtime_us)",
        "RT throttling runs while real-time tasks run: sysctl kernel.sched_rt_runtime_us=-1 turns it off (then a runaway real-time task can hang the CPU)",
    ),
    (
        "sched_cfs_period_timer",
        "CPU bandwidth control of a cgroup with a CPU limit (cpu.max)",
        "a CPU-limited cgroup has tasks on this CPU: keep them off the RT CPU, or drop the limit",
    ),
    (
        "sched_cfs_slack_timer",
        "CPU bandwidth control of a cgroup with a CPU limit (cpu.max)",
        "a CPU-limited cgroup has tasks on this CPU: keep them off the RT CPU, or drop the limit",
    ),
    (
        "inactive_task_timer",
        "SCHED_DEADLINE bandwidth accounting",
        "SCHED_DEADLINE tasks on this CPU: keep them off the RT CPU",
    ),
    (
        "dl_task_timer",
        "SCHED_DEADLINE replenishment",
        "SCHED_DEADLINE tasks on this CPU: keep them off the RT CPU",
    ),
    (
        "hrtick",
        "the scheduler's high-resolution tick (the HRTICK feature)",
        "the scheduler's hrtick: leave the HRTICK scheduler feature off (the default)",
    ),
    (
        "perf_mux_hrtimer_handler",
        "perf's event multiplexing",
        "perf is counting on this CPU: stop it, or count on other CPUs",
    ),
    (
        "perf_swevent_hrtimer",
        "perf's timer-based sampling",
        "perf is sampling on this CPU: stop it, or sample other CPUs",
    ),
    (
        "clocksource_watchdog",
        "the clocksource watchdog (checks the TSC against another clock every half second)",
        "the clocksource watchdog: on hardware whose TSC is reliable, boot with tsc=reliable to stop it",
    ),
    (
        "blk_rq_timed_out_timer",
        "block I/O request timeouts",
        "block I/O on this CPU: keep the storage interrupts and the tasks doing I/O off the RT CPU",
    ),
];

/// What the timer callback `function` does and what to do about it. A
/// compiler's suffix (`.isra.0`, `.llvm.123`) is ignored. An unknown
/// callback still gets the rule that holds for every timer, naming it.
pub fn known(function: &str) -> Known {
    let base = function.split('.').next().unwrap_or(function);
    if let Some((_, what, fix)) = TABLE.iter().find(|(f, _, _)| *f == base) {
        return Known {
            what: what.to_string(),
            fix: fix.replace("{MOVE_FLOW}", MOVE_FLOW),
        };
    }
    Known {
        what: "a timer armed on this CPU".to_string(),
        fix: format!(
            "find what arms {function} (its name says which subsystem; grep -w {function} /proc/kallsyms gives its module) and keep that work off the RT CPU: a timer expires on the CPU it was armed on (unless that CPU is idle or nohz_full), so move the task or the interrupts whose softirqs arm it (taskset, cpusets, IRQ affinity), or isolate the CPU (isolcpus, nohz_full)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_callbacks_have_their_fix_and_unknown_ones_are_still_named() {
        let pace = known("tcp_pace_kick");
        assert!(pace.what.contains("TCP pacing"), "{pace:?}");
        assert!(pace.fix.contains("RPS/XPS") && pace.fix.contains("threaded NAPI"));
        assert!(!pace.fix.contains("{MOVE_FLOW}"));
        assert!(known("tick_nohz_handler").fix.contains("nohz_full"));
        assert!(known("watchdog_timer_fn").fix.contains("watchdog"));
        assert_eq!(known("tcp_pace_kick.isra.0"), pace);
        let odd = known("frobnicate_timer_fn");
        assert!(odd.fix.contains("frobnicate_timer_fn"), "{odd:?}");
        // Every entry is well formed.
        for (f, what, fix) in TABLE {
            assert!(!f.is_empty() && !what.is_empty() && !fix.is_empty());
            assert!(!known(f).fix.contains('{'), "{f}");
        }
    }
}
