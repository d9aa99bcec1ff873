//! An external command as the load: `sh -c COMMAND` in its own process group.
//!
//! The command runs under a small `sh` wrapper that leads a new process group.
//! The wrapper gets `PR_SET_PDEATHSIG(SIGHUP)` and traps SIGHUP with
//! `kill -KILL 0`, so if latlab dies (even by SIGKILL) the kernel tells the
//! wrapper and the wrapper kills the whole group, grandchildren included. On a
//! normal stop latlab sends SIGTERM to the group, waits up to a second, then
//! SIGKILLs what is left and reaps the wrapper.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use latlab_rt::cpuset::CpuSet;

use crate::LoadError;

/// The wrapper: run the command in the background, wait for it, and kill the
/// whole group when the parent-death signal (SIGHUP) arrives.
const WRAPPER: &str = "trap 'kill -KILL 0' HUP; sh -c \"$1\" & wait $!";
/// Name of the command's output file in the load's temp dir.
const LOG_NAME: &str = "command.log";
/// How long the group gets to exit after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(1);

/// How the command ended.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ended {
    /// Seconds after the start when the end was seen.
    pub after_s: f64,
    /// `si_code` (CLD_EXITED, CLD_KILLED, CLD_DUMPED).
    pub code: i32,
    /// Exit status or signal number.
    pub status: i32,
}

impl Ended {
    /// True for exit status 0.
    pub(crate) fn success(&self) -> bool {
        self.code == libc::CLD_EXITED && self.status == 0
    }

    /// "exited with status 3" or "was killed by signal 9".
    pub(crate) fn describe(&self) -> String {
        if self.code == libc::CLD_EXITED {
            format!("exited with status {}", self.status)
        } else {
            format!("was killed by signal {}", self.status)
        }
    }
}

/// A running external command (its wrapper's pid is also the process group id).
#[derive(Debug)]
pub(crate) struct ExternalCommand {
    /// The command line as given.
    pub command: String,
    /// The wrapper's pid = the process group id.
    pub pid: libc::pid_t,
    started: Instant,
    log: std::path::PathBuf,
    /// Set once the wrapper is seen to have exited on its own.
    pub ended: Arc<OnceLock<Ended>>,
    reaped: bool,
    /// Ctrl-Z stops the command's group too (it is not in the terminal's).
    followed: latlab_rt::jobcontrol::Followed,
}

impl ExternalCommand {
    /// Starts `command` with its working directory and output file in `dir`, at
    /// SCHED_OTHER with `nice`, pinned to `cpus` (empty: not pinned).
    ///
    /// Call this from a thread that outlives the command: the kernel's
    /// parent-death signal follows the thread that forked.
    pub(crate) fn spawn(
        command: &str,
        dir: &Path,
        nice: i32,
        cpus: &[usize],
    ) -> Result<ExternalCommand, LoadError> {
        let log = dir.join(LOG_NAME);
        let io_err = |source| LoadError::Io {
            action: "create the load command's output file",
            path: log.clone(),
            source,
        };
        let out = File::create(&log).map_err(io_err)?;
        let err = out.try_clone().map_err(io_err)?;
        // Prepared before the fork: after it only async-signal-safe calls are allowed.
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        let set = CpuSet::from_cpus(cpus).map_err(|e| LoadError::BadOption {
            option: "cpus",
            reason: e.to_string(),
        })?;
        let pin = !cpus.is_empty();
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(WRAPPER)
            .arg("latlab-load-cmd")
            .arg(command)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        // SAFETY: the closure uses only async-signal-safe system calls and
        // builds errors from raw errno values (no allocation).
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGHUP as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    // latlab died between fork and prctl.
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                let param = latlab_rt::sched::param(0);
                if latlab_rt::sched::setscheduler(0, libc::SCHED_OTHER, &param) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::setpriority(libc::PRIO_PROCESS, 0, nice) != 0
                    && libc::getpriority(libc::PRIO_PROCESS, 0) < 0
                {
                    return Err(std::io::Error::from_raw_os_error(libc::EPERM));
                }
                if pin {
                    set.apply_to_current_thread()?;
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|source| LoadError::CommandSpawn {
            command: command.to_owned(),
            source,
        })?;
        let pid = child.id() as libc::pid_t;
        Ok(ExternalCommand {
            command: command.to_owned(),
            pid,
            started: Instant::now(),
            log,
            ended: Arc::new(OnceLock::new()),
            reaped: false,
            followed: latlab_rt::jobcontrol::follow(pid),
        })
    }

    /// Checks, without reaping, whether the command has ended; records when.
    pub(crate) fn poll(&self) -> Option<Ended> {
        poll_pid(self.pid, self.started, &self.ended)
    }

    /// The error for a command that ended while it should be running.
    pub(crate) fn failure(&self, ended: &Ended) -> LoadError {
        let hint = if ended.code == libc::CLD_EXITED && ended.status == 127 {
            "; status 127 means the shell did not find the program: check its name and PATH"
        } else if ended.code == libc::CLD_EXITED && ended.status == 126 {
            "; status 126 means the program is not executable"
        } else if ended.success() {
            "; a command that exits at once (or daemonizes) cannot be a load"
        } else {
            ""
        };
        let tail = tail_lines(&self.log, 5);
        LoadError::CommandFailed {
            command: self.command.clone(),
            status: ended.describe(),
            after_s: ended.after_s,
            hint,
            output: if tail.is_empty() {
                String::new()
            } else {
                format!("; its last output:\n{tail}")
            },
        }
    }

    /// Stops the whole process group (SIGTERM, then SIGKILL) and reaps the wrapper.
    pub(crate) fn stop(&mut self) {
        if self.reaped {
            return;
        }
        // SAFETY: signalling our own child's process group; pid > 0 and
        // not yet reaped, so the group id cannot have been reused.
        unsafe { libc::kill(-self.pid, libc::SIGTERM) };
        let deadline = Instant::now() + TERM_GRACE;
        while Instant::now() < deadline {
            if self.poll().is_some() {
                self.reap();
                if group_gone(self.pid) {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
    }

    /// SIGKILLs the group, reaps the wrapper and waits (up to a second) until
    /// no process of the group is left.
    fn kill(&mut self) {
        // SAFETY: as in `stop`; after the wrapper is reaped the id stays
        // reserved while any member of the group lives.
        unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        self.reap();
        let deadline = Instant::now() + TERM_GRACE;
        while !group_gone(self.pid) && Instant::now() < deadline {
            // SAFETY: as above.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn reap(&mut self) {
        if self.reaped {
            return;
        }
        if self.ended.get().is_none() {
            let _ = self.poll();
        }
        self.followed.forget();
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
        self.reaped = true;
    }
}

impl Drop for ExternalCommand {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
        }
    }
}

/// Peeks (WNOWAIT) at whether `pid` has exited; records the first sighting in `ended`.
pub(crate) fn poll_pid(
    pid: libc::pid_t,
    started: Instant,
    ended: &OnceLock<Ended>,
) -> Option<Ended> {
    if let Some(e) = ended.get() {
        return Some(*e);
    }
    // SAFETY: siginfo_t is plain data filled by the kernel.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: si_pid/si_status are valid for SIGCHLD-style siginfo from waitid.
    if r != 0 || unsafe { info.si_pid() } == 0 {
        return None;
    }
    let e = Ended {
        after_s: started.elapsed().as_secs_f64(),
        code: info.si_code,
        status: unsafe { info.si_status() },
    };
    Some(*ended.get_or_init(|| e))
}

/// True when no process is left in process group `pgid`.
fn group_gone(pgid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) != 0 && *libc::__errno_location() == libc::ESRCH }
}

/// CPU time (user + system, seconds) of every live process in group `pgid`,
/// read from /proc; `seen` keeps each pid's last value so a process that
/// exits keeps counting what it used until it was last seen.
pub(crate) fn group_cpu_seconds(pgid: libc::pid_t, seen: &mut Vec<(i32, u64)>) -> f64 {
    // SAFETY: sysconf has no memory effects.
    let hz = match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        t if t > 0 => t as f64,
        _ => 100.0,
    };
    for pid in latlab_rt::process::ids_in("/proc") {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the ")" that ends the command name: state is field 3.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
        if field(5) != Some(pgid as u64) {
            continue;
        }
        let ticks = field(14).unwrap_or(0) + field(15).unwrap_or(0);
        match seen.iter_mut().find(|(p, _)| *p == pid) {
            Some(entry) => entry.1 = entry.1.max(ticks),
            None => seen.push((pid, ticks)),
        }
    }
    seen.iter().map(|&(_, t)| t).sum::<u64>() as f64 / hz
}

/// The last `n` lines of a file (lossy UTF-8), or "" if it cannot be read.
fn tail_lines(path: &Path, n: usize) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
