//! Which tasks are watched: `--pid` (every thread of the processes),
//! `--comm` (threads by name, `prefix*` globs), the threads of a command
//! latlab starts, and `--rt`: with one of those, only their real-time
//! threads; alone, every SCHED_FIFO or SCHED_RR user thread. The
//! kernel follows forks of watched tasks (their new threads are watched from
//! their first wake-up); a rescan every second adds tasks that match later
//! and forgets those that ended.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use serde::{Deserialize, Serialize};

use crate::error::{Result, WatchError};

/// Which tasks a watch looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tasks {
    /// These processes (or threads), with all their threads.
    Pids(Vec<i32>),
    /// Threads with these names (`name` exact, `prefix*`).
    Comms(Vec<String>),
    /// The threads of the command latlab starts (pid filled in once started).
    Command(Vec<String>),
    /// Every user thread (kernel threads excluded): only with
    /// [`Selection::real_time`] (`--rt` alone).
    AllUserThreads,
}

/// What to watch: the tasks, and whether only their real-time threads
/// count (`--rt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Which tasks.
    pub tasks: Tasks,
    /// Only the wake-ups of threads at a real-time priority (SCHED_FIFO,
    /// SCHED_RR, SCHED_DEADLINE) are measured: `--rt`. With
    /// [`Tasks::AllUserThreads`] the scan chooses them; with the others the
    /// kernel side leaves the other wake-ups out (their threads stay
    /// watched, so that the threads they start are followed, and a thread
    /// that turns real-time later counts from then on).
    pub real_time: bool,
}

impl Selection {
    /// `--rt` alone: every SCHED_FIFO/SCHED_RR user thread.
    pub fn every_real_time_thread() -> Selection {
        Selection {
            tasks: Tasks::AllUserThreads,
            real_time: true,
        }
    }

    /// `tasks`, every thread of them counting.
    pub fn all_of(tasks: Tasks) -> Selection {
        Selection {
            tasks,
            real_time: false,
        }
    }

    /// How the selection reads in a result (`pid 812`, `comm cyclictest`).
    pub fn describe(&self) -> String {
        let tasks = match &self.tasks {
            Tasks::Pids(p) => format!(
                "pid {}",
                p.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Tasks::Comms(c) => format!("comm {}", c.join(",")),
            Tasks::Command(c) => format!("command `{}`", c.join(" ")),
            Tasks::AllUserThreads => return "every SCHED_FIFO/SCHED_RR user thread".into(),
        };
        if self.real_time {
            format!("{tasks}, real-time threads only")
        } else {
            tasks
        }
    }

    /// What a watch that found nothing yet waits for ("a thread named
    /// cyclictest").
    pub fn awaited(&self) -> String {
        let rt = if self.real_time { "real-time " } else { "" };
        match &self.tasks {
            Tasks::Comms(c) if c.len() == 1 => format!("a {rt}thread named {}", c[0]),
            Tasks::Comms(c) => format!("a {rt}thread named one of {}", c.join(", ")),
            Tasks::Pids(p) => format!(
                "a {rt}thread of pid {}",
                p.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Tasks::Command(c) => format!("a {rt}thread of `{}`", c.join(" ")),
            Tasks::AllUserThreads => "a SCHED_FIFO/SCHED_RR user thread".into(),
        }
    }

    /// Whether the kernel should follow forks of watched tasks.
    pub fn follows_forks(&self) -> bool {
        matches!(self.tasks, Tasks::Pids(_) | Tasks::Command(_))
    }

    /// Whether the kernel side leaves out the wake-ups of threads below the
    /// real-time priorities (`--rt` with a selection).
    pub fn kernel_filters_real_time(&self) -> bool {
        self.real_time && self.tasks != Tasks::AllUserThreads
    }

    /// Whether a thread that no longer matches (renamed, or no longer
    /// real-time for `--rt` alone) is let go at the next rescan.
    pub fn strict(&self) -> bool {
        matches!(self.tasks, Tasks::Comms(_) | Tasks::AllUserThreads)
    }
}

/// A thread's scheduling policy (`sched_setscheduler(2)`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// SCHED_OTHER: the fair scheduler, below every real-time thread.
    Other,
    /// SCHED_FIFO: real-time, by priority, until it yields.
    Fifo,
    /// SCHED_RR: real-time, by priority, round-robin among equals.
    Rr,
    /// SCHED_BATCH: fair, for batch work.
    Batch,
    /// SCHED_IDLE: below every other thread.
    Idle,
    /// SCHED_DEADLINE: earliest deadline first, above every real-time priority.
    Deadline,
}

impl Policy {
    /// From the kernel's number (`policy` in `/proc/<pid>/stat`).
    pub fn of(code: u32) -> Option<Policy> {
        Some(match code {
            0 => Policy::Other,
            1 => Policy::Fifo,
            2 => Policy::Rr,
            3 => Policy::Batch,
            5 => Policy::Idle,
            6 => Policy::Deadline,
            _ => return None,
        })
    }

    /// SCHED_FIFO, SCHED_RR or SCHED_DEADLINE: a real-time claim can be made
    /// of its latency.
    pub fn real_time(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr | Policy::Deadline)
    }

    /// Its name without `SCHED_`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "OTHER",
            Policy::Fifo => "FIFO",
            Policy::Rr => "RR",
            Policy::Batch => "BATCH",
            Policy::Idle => "IDLE",
            Policy::Deadline => "DEADLINE",
        }
    }

    /// `FIFO 95`, `RR 10`, `OTHER`: the policy with its real-time priority.
    pub fn label(self, rt_priority: u32) -> String {
        match self {
            Policy::Fifo | Policy::Rr => format!("{} {rt_priority}", self.name()),
            _ => self.name().to_string(),
        }
    }
}

/// One thread as /proc shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// Thread id.
    pub tid: i32,
    /// Process id.
    pub pid: i32,
    /// Its name.
    pub comm: String,
    /// Scheduling policy (0 other, 1 FIFO, 2 RR, ...).
    pub policy: u32,
    /// Real-time priority (1-99 for SCHED_FIFO/RR, else 0).
    pub rt_priority: u32,
    /// A kernel thread.
    pub kernel: bool,
}

impl Thread {
    /// Its policy, when the kernel's number is a known one.
    pub fn policy(&self) -> Option<Policy> {
        Policy::of(self.policy)
    }
}

/// Reads `/proc/<pid>/task/<tid>/stat`.
pub fn thread(pid: i32, tid: i32) -> Option<Thread> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    parse_stat(pid, &stat)
}

/// Parses a `stat` line: the name in parentheses may hold anything, so the
/// fields are counted from the last `)`.
pub fn parse_stat(pid: i32, stat: &str) -> Option<Thread> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let tid: i32 = stat[..open].trim().parse().ok()?;
    let comm = stat[open + 1..close].to_string();
    let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // rest[0] is field 3 (state): field n is rest[n - 3].
    let flags: u64 = rest.get(9 - 3)?.parse().ok()?;
    let rt_priority: u32 = rest.get(40 - 3)?.parse().ok()?;
    let policy: u32 = rest.get(41 - 3)?.parse().ok()?;
    const PF_KTHREAD: u64 = 0x0020_0000;
    Some(Thread {
        tid,
        pid,
        comm,
        policy,
        rt_priority,
        kernel: flags & PF_KTHREAD != 0,
    })
}

fn numbered(dir: &str) -> Vec<i32> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Every thread of process `pid`.
pub fn threads_of(pid: i32) -> Vec<Thread> {
    numbered(&format!("/proc/{pid}/task"))
        .into_iter()
        .filter_map(|tid| thread(pid, tid))
        .collect()
}

/// Every thread on the machine.
pub fn all_threads() -> Vec<Thread> {
    numbered("/proc").into_iter().flat_map(threads_of).collect()
}

fn comm_matches(pattern: &str, comm: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => comm.starts_with(prefix),
        None => pattern == comm,
    }
}

/// Thread `tid` as /proc shows it now, whatever its process (`None`
/// once it ended).
pub fn thread_by_id(tid: i32) -> Option<Thread> {
    let pid = tgid_of(tid)?;
    thread(pid, tid)
}

/// The threads `selection` matches now, by thread id; `own` is latlab's
/// own process, never watched. `command` is the started command's pid.
pub fn scan(selection: &Selection, own: i32, command: Option<i32>) -> BTreeMap<i32, Thread> {
    let list: Vec<Thread> = match &selection.tasks {
        Tasks::Pids(pids) => pids
            .iter()
            .flat_map(|&p| {
                // A thread id given as --pid names its process's threads too.
                let tgid = tgid_of(p).unwrap_or(p);
                threads_of(tgid)
            })
            .collect(),
        Tasks::Command(_) => command.map(threads_of).unwrap_or_default(),
        // The small comm file first; the stat of the threads it names.
        Tasks::Comms(names) => numbered("/proc")
            .into_iter()
            .flat_map(|pid| {
                numbered(&format!("/proc/{pid}/task"))
                    .into_iter()
                    .filter_map(move |tid| {
                        let comm =
                            std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
                        let comm = comm.trim_end();
                        if !names.iter().any(|n| comm_matches(n, comm)) {
                            return None;
                        }
                        thread(pid, tid)
                    })
            })
            .collect(),
        Tasks::AllUserThreads => all_threads()
            .into_iter()
            .filter(|t| !t.kernel && t.policy().is_some_and(Policy::real_time))
            .collect(),
    };
    list.into_iter()
        .filter(|t| t.pid != own)
        .map(|t| (t.tid, t))
        .collect()
}

/// The process a thread belongs to (`Tgid:` of its status).
pub fn tgid_of(tid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Checks a selection before watching: a `--pid` that does not exist is an
/// error; names and real-time threads may match later (the watch waits for
/// them).
pub fn validate(selection: &Selection) -> Result<()> {
    match &selection.tasks {
        Tasks::Pids(pids) => {
            for &p in pids {
                if p <= 0 || !std::path::Path::new(&format!("/proc/{p}")).exists() {
                    return Err(WatchError::Selection(format!(
                        "--pid {p}: no such process (`ps -eLo pid,tid,comm` lists them)"
                    )));
                }
            }
            Ok(())
        }
        Tasks::Comms(c) if c.iter().any(|n| n.is_empty() || n.len() > 15 && !n.ends_with('*')) => {
            Err(WatchError::Selection(format!(
                "--comm {}: a task name has 1 to 15 characters (the kernel's comm), or ends in * for a prefix",
                c.join(",")
            )))
        }
        Tasks::Command(c) if c.is_empty() => Err(WatchError::Selection(
            "`latlab watch --` needs a command after --".into(),
        )),
        Tasks::AllUserThreads if !selection.real_time => Err(WatchError::Selection(
            "watching every user thread needs --rt (only the real-time ones)".into(),
        )),
        _ => Ok(()),
    }
}

/// A command started held at a gate: a shell that waits for the gate to
/// close and then execs the command (same pid), so its pid is watched
/// before the command's first instruction. (The gate cannot be in
/// `pre_exec`: `spawn` itself waits for the exec.)
pub struct Started {
    /// The child.
    pub child: Child,
    gate: Option<std::fs::File>,
}

impl Started {
    /// Lets the command run.
    pub fn release(&mut self) {
        self.gate.take();
    }
}

/// Starts `argv` held at a gate (a pipe on descriptor 3 the shell reads
/// before it execs the command).
pub fn spawn_gated(argv: &[String]) -> Result<Started> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(WatchError::Spawn {
            command: argv.join(" "),
            source: std::io::Error::last_os_error(),
        });
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg("read -r _ <&3; exec 3<&-; exec \"$@\"")
        .arg("sh")
        .args(argv);
    // SAFETY: dup2 is async-signal-safe; the duplicate on 3 has no
    // close-on-exec flag, so the shell inherits it.
    unsafe {
        cmd.pre_exec(move || {
            // dup2 onto itself keeps close-on-exec: clear it instead.
            let r = if read_end == 3 {
                libc::fcntl(3, libc::F_SETFD, 0)
            } else {
                libc::dup2(read_end, 3)
            };
            if r < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let spawned = cmd.spawn();
    // SAFETY: the read end is ours to close; the child has its own copy.
    unsafe { libc::close(read_end) };
    // SAFETY: write_end is a descriptor we own from here on.
    let gate = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(write_end) };
    let child = spawned.map_err(|source| WatchError::Spawn {
        command: argv.join(" "),
        source,
    })?;
    Ok(Started {
        child,
        gate: Some(gate),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line = "812 (my (odd) app) S 1 812 812 0 -1 4194560 100 0 0 0 1 2 0 0 -96 0 3 0 12345 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 95 1 0 0 0 0 0 0 0 0 0 0 0\n";
        let t = parse_stat(812, line).unwrap();
        assert_eq!(
            (t.tid, t.comm.as_str(), t.policy, t.rt_priority, t.kernel),
            (812, "my (odd) app", 1, 95, false)
        );
        assert_eq!(
            t.policy().map(|p| p.label(t.rt_priority)).as_deref(),
            Some("FIFO 95")
        );
        let kthread = "15 (migration/0) S 2 0 0 0 -1 69238848 0 0 0 0 0 0 0 0 -100 0 1 0 5 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 99 1 0 0 0 0 0 0 0 0 0 0 0\n";
        let k = parse_stat(15, kthread).unwrap();
        assert!(k.kernel);
        assert_eq!(k.policy, 1);
    }

    #[test]
    fn this_process_is_found_and_never_chosen() {
        let me = std::process::id() as i32;
        let mine = threads_of(me);
        assert!(mine.iter().any(|t| t.tid == me));
        let me_all = Selection::all_of(Tasks::Pids(vec![me]));
        assert!(scan(&me_all, me, None).is_empty());
        assert!(!scan(&me_all, 0, None).is_empty());
    }

    #[test]
    fn bad_selections_name_the_fix() {
        let e = validate(&Selection::all_of(Tasks::Pids(vec![i32::MAX])))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such process"), "{e}");
        let e = validate(&Selection::all_of(Tasks::Comms(vec![
            "a-name-longer-than-15".into(),
        ])))
        .unwrap_err()
        .to_string();
        assert!(e.contains("1 to 15 characters"), "{e}");
        assert!(validate(&Selection::all_of(Tasks::Comms(vec![
            "a-name-longer-than-15*".into()
        ])))
        .is_ok());
        assert!(validate(&Selection::all_of(Tasks::Command(vec![]))).is_err());
        assert!(validate(&Selection::all_of(Tasks::AllUserThreads)).is_err());
        assert!(validate(&Selection::every_real_time_thread()).is_ok());
    }

    #[test]
    fn a_gated_command_waits_for_its_release() {
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("ran");
        let mut s = spawn_gated(&[
            "sh".into(),
            "-c".into(),
            format!("touch {}", flag.display()),
        ])
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!flag.exists(), "the command ran before its release");
        s.release();
        assert!(s.child.wait().unwrap().success());
        assert!(flag.exists());
    }
}
