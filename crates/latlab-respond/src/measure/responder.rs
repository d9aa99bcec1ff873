//! The responder process: forked from the calling thread, it pins itself,
//! takes its real-time policy, locks its memory, says it is ready through a
//! page both processes share, then answers every event. After the fork it
//! makes system calls only (no allocation: the parent may have other
//! threads holding allocator locks).

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use latlab_rt::clock::monotonic_ns;
use latlab_rt::cpuset::CpuSet;
use latlab_rt::memory::map_shared_page;
use latlab_rt::sched::Policy;

use super::{Placement, RespondConfig};
use crate::channel::{self, Receiver, Sender, Waited, Wires};
use crate::RespondError;

/// The page both processes share.
#[repr(C)]
pub(super) struct Shared {
    ready: AtomicU32,
    failed_step: AtomicU32,
    failed_errno: AtomicI32,
    policy: AtomicI32,
    priority: AtomicI32,
    mlocked: AtomicU32,
    responses: AtomicU64,
    wake_ns: AtomicU64,
}

/// The shared page, unmapped on drop.
pub(super) struct SharedPage(*mut Shared);

impl SharedPage {
    /// Maps it (zeroed); `cpu` names the responder in an error.
    pub(super) fn new(cpu: usize) -> Result<Self, RespondError> {
        let ptr = map_shared_page().map_err(|error| RespondError::Responder {
            cpu,
            step: "mapping the shared page",
            error,
            hint: "",
        })?;
        // Zero-filled memory is a valid Shared (all atomics at 0).
        Ok(SharedPage(ptr.cast()))
    }

    /// The page.
    pub(super) fn get(&self) -> &Shared {
        // SAFETY: the mapping lives as long as self and is only accessed through atomics.
        unsafe { &*self.0 }
    }
}

impl Shared {
    /// How many events the responder has answered.
    pub(super) fn responses(&self) -> u64 {
        self.responses.load(Ordering::Acquire)
    }

    /// CLOCK_MONOTONIC of the responder's last wake-up, ns.
    pub(super) fn wake_ns(&self) -> u64 {
        self.wake_ns.load(Ordering::Relaxed)
    }
}

impl Drop for SharedPage {
    fn drop(&mut self) {
        // SAFETY: the page was mapped in new() and is no longer referenced.
        unsafe { libc::munmap(self.0.cast(), latlab_rt::memory::SHARED_PAGE_BYTES) };
    }
}

/// Steps of the responder's set-up, as reported through the shared page.
const STEPS: [(&str, &str); 6] = [
    ("", ""),
    (
        "pinning to its CPU",
        ": is the CPU online and in this process's cpuset?",
    ),
    (
        "setting its real-time policy",
        ": run as root or grant CAP_SYS_NICE, or use --allow-unprivileged",
    ),
    (
        "locking its memory (mlockall)",
        ": run as root or grant CAP_IPC_LOCK, or use --allow-unprivileged",
    ),
    ("waiting for the event", ""),
    ("answering", ""),
];

/// What the forked responder needs; plain data only.
#[derive(Clone, Copy)]
struct ResponderPlan {
    parent_pid: i32,
    cpu: usize,
    policy: i32,
    priority: i32,
    lock_memory: bool,
    event_in: Receiver,
    answer: Sender,
    close: [RawFd; 8],
    close_count: usize,
}

fn report_failure(shared: &Shared, step: u32, errno: i32) -> ! {
    shared.failed_errno.store(errno, Ordering::SeqCst);
    shared.failed_step.store(step, Ordering::SeqCst);
    // SAFETY: _exit skips destructors and atexit handlers, as a forked child must.
    unsafe { libc::_exit(1) }
}

/// The responder process. Only system calls: no allocation, no panics.
fn responder_main(plan: ResponderPlan, shared: &Shared) -> ! {
    let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: async-signal-safe system calls on plain data.
    unsafe {
        // Ctrl-C (and a SIGTERM to the whole group) reach the responder too:
        // the stimulus winds down, writes the results and kills the responder
        // itself (and PR_SET_PDEATHSIG kills it if the stimulus dies first).
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != plan.parent_pid {
            libc::_exit(0);
        }
        for &fd in &plan.close[..plan.close_count.min(plan.close.len())] {
            libc::close(fd);
        }
        let pinned = CpuSet::single(plan.cpu)
            .map_err(|_| libc::EINVAL)
            .and_then(|set| set.apply_to_current_thread().map_err(|_| errno()));
        if let Err(e) = pinned {
            report_failure(shared, 1, e);
        }
        let param = latlab_rt::sched::param(plan.priority);
        if latlab_rt::sched::setscheduler(0, plan.policy, &param) != 0 {
            report_failure(shared, 2, errno());
        }
        if plan.lock_memory {
            if libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) != 0 {
                report_failure(shared, 3, errno());
            }
            shared.mlocked.store(1, Ordering::SeqCst);
        }
        let mut got = latlab_rt::sched::param(0);
        latlab_rt::sched::getparam(0, &mut got);
        shared
            .policy
            .store(latlab_rt::sched::getscheduler(0), Ordering::SeqCst);
        shared.priority.store(got.sched_priority, Ordering::SeqCst);
    }
    shared.ready.store(1, Ordering::SeqCst);
    let mut level = false;
    loop {
        match plan.event_in.wait(None) {
            Ok(Waited::Event(_)) => {}
            Ok(Waited::Timeout) | Err(libc::EINTR) => continue,
            // SAFETY: see report_failure.
            Ok(Waited::Closed) => unsafe { libc::_exit(0) },
            Err(e) => report_failure(shared, 4, e),
        }
        let woke = monotonic_ns();
        shared.wake_ns.store(woke, Ordering::Relaxed);
        shared.responses.fetch_add(1, Ordering::Release);
        level = !level;
        if let Err(e) = plan.answer.send(level) {
            report_failure(shared, 5, e);
        }
    }
}

/// The running responder; killed and reaped on drop.
pub(super) struct Child {
    pid: i32,
    reaped: bool,
}

impl Child {
    /// `Some(status in words)` once the child has ended.
    pub(super) fn ended(&mut self) -> Option<String> {
        let mut status = 0;
        // SAFETY: waits for our own child without blocking.
        let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if rc == self.pid {
            self.reaped = true;
            Some(if libc::WIFSIGNALED(status) {
                format!("killed by signal {}", libc::WTERMSIG(status))
            } else {
                format!("exit status {}", libc::WEXITSTATUS(status))
            })
        } else {
            None
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            // SAFETY: our own child, killed and reaped.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

impl Child {
    /// The error of a responder that ended (`status` in words) after
    /// answering `events`.
    pub(super) fn died(&self, status: String, events: u64) -> RespondError {
        RespondError::ResponderDied {
            pid: self.pid,
            status,
            events,
        }
    }
}

impl ResponderPlan {
    /// The plan for `config` over `wires`, with the descriptors only the
    /// stimulus uses to be closed in the child.
    fn new(config: &RespondConfig, wires: &Wires, parent_pid: i32) -> ResponderPlan {
        let mut plan = ResponderPlan {
            parent_pid,
            cpu: config.responder_cpu,
            policy: config.policy.as_raw(),
            priority: if config.policy.is_realtime() {
                config.priority
            } else {
                0
            },
            lock_memory: config.lock_memory,
            event_in: wires.event_in,
            answer: wires.answer,
            close: [-1; 8],
            close_count: 0,
        };
        for fd in wires.stimulus_only.iter().take(plan.close.len()) {
            plan.close[plan.close_count] = fd.as_raw_fd();
            plan.close_count += 1;
        }
        plan
    }
}

/// Signal channels: both signals are blocked in the stimulus thread, and so
/// in the forked responder, and taken with sigtimedwait/sigwaitinfo; the
/// answer goes to this thread.
fn route_signals_here(wires: &mut Wires) {
    // SAFETY: plain system calls on locals.
    let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
    // SAFETY: sigset is a local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, channel::STIMULUS_SIGNAL);
        libc::sigaddset(&mut set, channel::ANSWER_SIGNAL);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    wires.answer = Sender::Signal {
        pid,
        tid,
        sig: channel::ANSWER_SIGNAL,
    };
}

/// Forks the responder for `config`, waits until it is ready (or reports
/// why not) and returns it with where it runs and what it got. The stimulus
/// ends of `wires` then reach it.
pub(super) fn start(
    config: &RespondConfig,
    wires: &mut Wires,
    shared: &Shared,
) -> Result<(Child, Placement), RespondError> {
    if wires.signals {
        route_signals_here(wires);
    }
    // SAFETY: getpid has no preconditions.
    let plan = ResponderPlan::new(config, wires, unsafe { libc::getpid() });
    // SAFETY: the child runs only responder_main, which makes system calls
    // on plain data and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(RespondError::Responder {
            cpu: config.responder_cpu,
            step: "fork",
            error: std::io::Error::last_os_error(),
            hint: "",
        });
    }
    if pid == 0 {
        responder_main(plan, shared);
    }
    let mut child = Child { pid, reaped: false };
    wires.responder_only.clear();
    if wires.signals {
        wires.stimulus = Sender::Signal {
            pid,
            tid: pid,
            sig: channel::STIMULUS_SIGNAL,
        };
    }
    let placement = wait_ready(&mut child, shared, config.responder_cpu)?;
    Ok((child, placement))
}

/// Waits (up to 10 s) for the responder on `cpu` to be ready; its set-up
/// step that failed, or its end, is the error.
fn wait_ready(child: &mut Child, shared: &Shared, cpu: usize) -> Result<Placement, RespondError> {
    let deadline = monotonic_ns() + 10_000_000_000;
    while shared.ready.load(Ordering::SeqCst) == 0 {
        let failed = shared.failed_step.load(Ordering::SeqCst);
        if failed != 0 || child.ended().is_some() || monotonic_ns() > deadline {
            let (step, hint) = STEPS
                .get(failed as usize)
                .copied()
                .unwrap_or(("starting", ""));
            return Err(RespondError::Responder {
                cpu,
                step: if failed == 0 { "starting" } else { step },
                error: std::io::Error::from_raw_os_error(
                    shared.failed_errno.load(Ordering::SeqCst),
                ),
                hint,
            });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(Placement {
        cpu,
        policy: Policy::from_raw(shared.policy.load(Ordering::SeqCst)),
        priority: shared.priority.load(Ordering::SeqCst),
        mlocked: shared.mlocked.load(Ordering::SeqCst) != 0,
    })
}
