//! Which tasks are watched: `--pid` (every thread of the processes),
//! `--comm` (threads by name, `prefix*` globs), `--rt` (every SCHED_FIFO or
//! SCHED_RR user thread), or the threads of a command latlab starts. The
//! kernel follows forks of watched tasks (their new threads are watched from
//! their first wake-up); a rescan every second adds tasks that match later
//! and forgets those that ended.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use crate::error::{Result, WatchError};

/// What to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These processes (or threads), with all their threads.
    Pids(Vec<i32>),
    /// Threads with these names (`name` exact, `prefix*`).
    Comms(Vec<String>),
    /// Every SCHED_FIFO/SCHED_RR user thread (kernel threads excluded).
    Rt,
    /// The threads of the command latlab starts (pid filled in once started).
    Command(Vec<String>),
}

impl Selection {
    /// How the selection reads in a result (`pid 812`, `comm cyclictest`).
    pub fn describe(&self) -> String {
        match self {
            Selection::Pids(p) => format!(
                "pid {}",
                p.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Selection::Comms(c) => format!("comm {}", c.join(",")),
            Selection::Rt => "every SCHED_FIFO/SCHED_RR user thread".into(),
            Selection::Command(c) => format!("command `{}`", c.join(" ")),
        }
    }

    /// Whether the kernel should follow forks of watched tasks.
    pub fn follows_forks(&self) -> bool {
        matches!(self, Selection::Pids(_) | Selection::Command(_))
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
    /// A kernel thread.
    pub kernel: bool,
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
    let policy: u32 = rest.get(41 - 3)?.parse().ok()?;
    const PF_KTHREAD: u64 = 0x0020_0000;
    Some(Thread {
        tid,
        pid,
        comm,
        policy,
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

/// The threads `selection` matches now (tid to name); `own` is latlab's own
/// process, never watched. `command` is the started command's pid.
pub fn scan(selection: &Selection, own: i32, command: Option<i32>) -> BTreeMap<i32, String> {
    let keep = |t: &Thread| t.pid != own;
    let list: Vec<Thread> = match selection {
        Selection::Pids(pids) => pids
            .iter()
            .flat_map(|&p| {
                // A thread id given as --pid names its process's threads too.
                let tgid = tgid_of(p).unwrap_or(p);
                threads_of(tgid)
            })
            .collect(),
        Selection::Command(_) => command.map(threads_of).unwrap_or_default(),
        // Only the name is needed: the small comm file, not stat.
        Selection::Comms(names) => numbered("/proc")
            .into_iter()
            .flat_map(|pid| {
                numbered(&format!("/proc/{pid}/task"))
                    .into_iter()
                    .filter_map(move |tid| {
                        let comm =
                            std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
                        let comm = comm.trim_end().to_string();
                        names
                            .iter()
                            .any(|n| comm_matches(n, &comm))
                            .then_some(Thread {
                                tid,
                                pid,
                                comm,
                                policy: 0,
                                kernel: false,
                            })
                    })
            })
            .collect(),
        Selection::Rt => all_threads()
            .into_iter()
            .filter(|t| !t.kernel && matches!(t.policy, 1 | 2))
            .collect(),
    };
    list.into_iter()
        .filter(keep)
        .map(|t| (t.tid, t.comm))
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
/// error; names and `--rt` may match later (a note says so).
pub fn validate(selection: &Selection) -> Result<()> {
    match selection {
        Selection::Pids(pids) => {
            for &p in pids {
                if p <= 0 || !std::path::Path::new(&format!("/proc/{p}")).exists() {
                    return Err(WatchError::Selection(format!(
                        "--pid {p}: no such process (`ps -eLo pid,tid,comm` lists them)"
                    )));
                }
            }
            Ok(())
        }
        Selection::Comms(c) if c.iter().any(|n| n.is_empty() || n.len() > 15 && !n.ends_with('*')) => {
            Err(WatchError::Selection(format!(
                "--comm {}: a task name has 1 to 15 characters (the kernel's comm), or ends in * for a prefix",
                c.join(",")
            )))
        }
        Selection::Command(c) if c.is_empty() => Err(WatchError::Selection(
            "`latlab watch --` needs a command after --".into(),
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
            (t.tid, t.comm.as_str(), t.policy, t.kernel),
            (812, "my (odd) app", 1, false)
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
        assert!(scan(&Selection::Pids(vec![me]), me, None).is_empty());
        assert!(!scan(&Selection::Pids(vec![me]), 0, None).is_empty());
    }

    #[test]
    fn bad_selections_name_the_fix() {
        let e = validate(&Selection::Pids(vec![i32::MAX]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such process"), "{e}");
        let e = validate(&Selection::Comms(vec!["a-name-longer-than-15".into()]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 to 15 characters"), "{e}");
        assert!(validate(&Selection::Comms(vec!["a-name-longer-than-15*".into()])).is_ok());
        assert!(validate(&Selection::Command(vec![])).is_err());
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
