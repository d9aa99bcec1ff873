//! One real-time session: what `latlab run`, `respond`, `lockbench` and
//! `record` set up before they measure or record, entered once and released
//! when dropped.
//!
//! Entering, in this order:
//! 1. the stop signals (Ctrl-C, SIGTERM; see [`crate::stop`]);
//! 2. the privilege probe: the real-time policy and priority are tried in a
//!    scratch thread;
//! 3. `mlockall` (current and future pages);
//! 4. holding `/dev/cpu_dma_latency` at 0 µs;
//! 5. the steal-time reading the measurement's steal time counts from.
//!
//! The rule, the same for every command: a refused real-time policy or a
//! refused `mlockall` is an error that names the fix, unless the command was
//! told `--allow-unprivileged`; then it is a warning, the session records
//! `unprivileged`, and a refused policy falls back to SCHED_OTHER. A command
//! whose measurement is about real-time threads themselves (lockbench's
//! priority-inversion benchmark) sets [`SessionOptions::realtime_fallback`] to
//! `None`: for it a refused policy stays an error. A refused
//! `/dev/cpu_dma_latency` is only a warning (CPUs may then enter deep idle
//! states). Dropping the session unlocks memory and closes the PM QoS
//! request.

use crate::dma::DmaLatencyGuard;
use crate::sched::Policy;
use crate::stop::Signals;
use crate::{memory, privilege, sysinfo, RtError};

/// What a session sets up.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The policy the command's real-time threads will ask for
    /// ([`Policy::Other`]: none, nothing to probe).
    pub policy: Policy,
    /// Their priority.
    pub priority: i32,
    /// Go on, with warnings, when the policy or `mlockall` is refused.
    pub allow_unprivileged: bool,
    /// What runs at SCHED_OTHER when the policy is refused and
    /// `allow_unprivileged` is set, for the warning (e.g. "measuring at
    /// SCHED_OTHER"). `None`: the command cannot measure without its policy,
    /// a refusal is an error whatever `allow_unprivileged` says; the text is
    /// then [`SessionOptions::realtime_required_why`].
    pub realtime_fallback: Option<&'static str>,
    /// Why the policy is required, when `realtime_fallback` is `None`.
    pub realtime_required_why: &'static str,
    /// Lock all memory (`mlockall`).
    pub lock_memory: bool,
    /// Hold `/dev/cpu_dma_latency` at 0 µs.
    pub hold_dma_latency: bool,
    /// How Ctrl-C and SIGTERM are taken.
    pub signals: Signals,
}

impl SessionOptions {
    /// A measurement with real-time threads at `policy` and `priority`:
    /// memory locked, `/dev/cpu_dma_latency` held at 0, privileges required,
    /// a second Ctrl-C kills.
    pub fn measurement(policy: Policy, priority: i32) -> Self {
        SessionOptions {
            policy,
            priority,
            allow_unprivileged: false,
            realtime_fallback: Some("measuring at SCHED_OTHER"),
            realtime_required_why: "",
            lock_memory: true,
            hold_dma_latency: true,
            signals: Signals::SecondKills,
        }
    }

    /// A recording of the kernel (no real-time threads, nothing locked or
    /// held): only the stop signals, every Ctrl-C of which lets the
    /// recording clean up what it set up in tracefs.
    pub fn recording() -> Self {
        SessionOptions {
            policy: Policy::Other,
            priority: 0,
            allow_unprivileged: false,
            realtime_fallback: None,
            realtime_required_why: "",
            lock_memory: false,
            hold_dma_latency: false,
            signals: Signals::AlwaysCleanUp,
        }
    }
}

/// An entered session; dropping it releases what it holds.
#[derive(Debug)]
pub struct RtSession {
    policy: Policy,
    unprivileged: bool,
    mlocked: bool,
    dma: Option<DmaLatencyGuard>,
    warnings: Vec<String>,
    steal_before: Vec<(usize, u64)>,
}

impl RtSession {
    /// Enters the session (see the module documentation for the order and
    /// the rule).
    pub fn enter(options: &SessionOptions) -> Result<RtSession, RtError> {
        crate::stop::install_with(options.signals)?;
        let mut session = RtSession {
            policy: options.policy,
            unprivileged: false,
            mlocked: false,
            dma: None,
            warnings: Vec::new(),
            steal_before: Vec::new(),
        };
        if let Err(err) = privilege::probe_policy(options.policy, options.priority) {
            match (options.realtime_fallback, err) {
                (Some(what), err) if options.allow_unprivileged => {
                    session.warnings.push(format!(
                        "no real-time priority ({err}); {what}: results are NOT \
                         representative of a real-time task"
                    ));
                    session.policy = Policy::Other;
                    session.unprivileged = true;
                }
                (
                    None,
                    RtError::RealtimeRefused {
                        policy,
                        priority,
                        source,
                    },
                ) => {
                    return Err(RtError::RealtimeRequired {
                        policy,
                        priority,
                        why: options.realtime_required_why,
                        source,
                    })
                }
                (_, err) => return Err(err),
            }
        }
        if options.lock_memory {
            match memory::lock_all() {
                Ok(()) => session.mlocked = true,
                Err(err) if options.allow_unprivileged => {
                    session.warnings.push(format!("memory not locked ({err})"));
                    session.unprivileged = true;
                }
                Err(err) => return Err(err),
            }
        }
        if options.hold_dma_latency {
            match DmaLatencyGuard::hold(0) {
                Ok(guard) => session.dma = Some(guard),
                Err(err) => session.warnings.push(format!(
                    "cannot hold /dev/cpu_dma_latency at 0 ({err}): deep idle states may add \
                     exit latency"
                )),
            }
        }
        session.steal_before = sysinfo::steal_ns_per_cpu();
        Ok(session)
    }

    /// The policy the real-time threads get: the one asked for, or
    /// SCHED_OTHER when it was refused under `allow_unprivileged`.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// True when a privilege was refused and the command goes on without it.
    pub fn unprivileged(&self) -> bool {
        self.unprivileged
    }

    /// True while memory is locked.
    pub fn mlocked(&self) -> bool {
        self.mlocked
    }

    /// The `/dev/cpu_dma_latency` value held, in µs, while one is held.
    pub fn dma_latency_us(&self) -> Option<i32> {
        self.dma.as_ref().map(|guard| guard.microseconds)
    }

    /// What the session could not set up, for the user (without the
    /// `latlab: warning:` prefix).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Steal time counts from now on (call right before the measurement
    /// starts; entering counts from the entry).
    pub fn measurement_starts(&mut self) {
        self.steal_before = sysinfo::steal_ns_per_cpu();
    }

    /// Steal time (ns) the hypervisor took from each of `cpus` since the
    /// measurement started: the one way every command computes it.
    pub fn steal_ns(&self, cpus: &[usize]) -> Vec<(usize, u64)> {
        sysinfo::steal_ns_since(&self.steal_before)
            .into_iter()
            .filter(|(cpu, _)| cpus.contains(cpu))
            .collect()
    }

    /// Unlocks memory now (the measurement is over; what follows, e.g.
    /// analysing a large trace, must not lock what it allocates).
    pub fn unlock_memory(&mut self) {
        if self.mlocked {
            memory::unlock_all();
            self.mlocked = false;
        }
    }

    /// True once Ctrl-C or SIGTERM asked to stop.
    pub fn stop_requested(&self) -> bool {
        crate::stop::requested()
    }
}

impl Drop for RtSession {
    fn drop(&mut self) {
        self.unlock_memory();
        // The PM QoS request ends when its file closes.
        self.dma = None;
    }
}

/// Prints warnings the way every command does (`latlab: warning: ...` on
/// stderr).
pub fn print_warnings(warnings: &[String]) {
    for warning in warnings {
        eprintln!("latlab: warning: {warning}");
    }
}
