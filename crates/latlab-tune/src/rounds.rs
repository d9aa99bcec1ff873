//! The measurements of a tune: each is `latlab run` as a child process
//! (the same command a user would type, printed), and its figures read
//! back from its JSON; the background load is one `latlab load` for the
//! whole tune, outside the runs: the same load in every round, and, like
//! the rest of the system's work, what an isolated partition keeps off the
//! real-time CPUs (a load started by each run would run inside it).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context};
use serde::Deserialize;

use latlab_explain::CauseRow;

use crate::result::Figures;

/// How every measurement of a tune runs.
#[derive(Debug, Clone)]
pub struct Measure {
    /// The latlab binary.
    pub exe: PathBuf,
    /// The real-time CPUs, as a list (`1`).
    pub cpus: String,
    /// The background load (`full`), run by [`Load`] beside the runs.
    pub load: String,
    /// The measured task's SCHED_FIFO priority.
    pub priority: i32,
    /// Where the runs' JSON files go.
    pub dir: PathBuf,
    /// The [`Load`] process while it runs ([`Load::pid`]): a run after it
    /// ended early is an error, not a round measured without the load.
    pub load_pid: Option<u32>,
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Its figures.
    pub figures: Figures,
    /// With `explain`: the causes of its late wake-ups, largest first.
    pub causes: Vec<CauseRow>,
    /// Its JSON file.
    pub file: PathBuf,
}

#[derive(Deserialize)]
struct RunFile {
    overall: Overall,
    #[serde(default)]
    explain: Option<ExplainPart>,
}

#[derive(Deserialize)]
struct Overall {
    latency: Latency,
    missed_periods: u64,
}

#[derive(Deserialize)]
struct Latency {
    count: u64,
    p50: u64,
    p99: u64,
    p99_9: u64,
    max: u64,
}

#[derive(Deserialize)]
struct ExplainPart {
    causes: Vec<CauseRow>,
}

impl Measure {
    /// The arguments of one run of `duration_ns` into `file`.
    pub fn args(&self, duration_ns: u64, explain: bool, file: &Path) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "run".into(),
            "--cpus".into(),
            self.cpus.clone(),
            "--priority".into(),
            self.priority.to_string(),
            "--load".into(),
            "none".into(),
            "--duration".into(),
            format!("{}ms", duration_ns / 1_000_000),
            "--split".into(),
            "off".into(),
            "--no-save".into(),
            "-q".into(),
        ];
        if explain {
            args.push("--explain".into());
        }
        args.push("--json".into());
        args.push(file.display().to_string());
        args
    }

    /// Runs `latlab run` for `duration_ns` (with `--explain` when asked),
    /// its JSON in `dir/name.json`; `None` when Ctrl-C or SIGTERM stopped
    /// it (a cut-short round is no round). With `procs` (a cgroup's `cgroup.procs`
    /// or `tasks` file), the child moves itself into that cgroup before it
    /// becomes latlab (writing 0 moves the writer): the real-time CPUs of
    /// an isolated partition are only its tasks'.
    pub fn run(
        &self,
        name: &str,
        duration_ns: u64,
        explain: bool,
        procs: Option<&Path>,
    ) -> anyhow::Result<Option<Measured>> {
        let file = self.dir.join(format!("{name}.json"));
        let _ = std::fs::remove_file(&file);
        let args = self.args(duration_ns, explain, &file);
        let mut command = Command::new(&self.exe);
        command
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        let procs = match procs {
            Some(p) => Some(
                std::ffi::CString::new(p.as_os_str().as_encoded_bytes())
                    .context("a cgroup path with a NUL byte")?,
            ),
            None => None,
        };
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec the hook only calls prctl(2),
        // getppid(2), open(2), write(2) and close(2), which are
        // async-signal-safe, on memory allocated before the fork.
        unsafe {
            use std::os::unix::process::CommandExt;
            command.pre_exec(move || {
                end_with_parent(parent)?;
                if let Some(path) = &procs {
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                    let error = std::io::Error::last_os_error();
                    libc::close(fd);
                    if written != 1 {
                        return Err(error);
                    }
                }
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {}", self.exe.display()))?;
        let status =
            latlab_rt::process::wait_passing_stop(&mut child).context("waiting for latlab run")?;
        if latlab_rt::stop::requested() {
            return Ok(None);
        }
        // 2: a requirement missed (none is given); 3: suspect, said in its file.
        if !matches!(status.code(), Some(0 | 2 | 3)) {
            bail!(
                "latlab {} failed ({status}); its message is above",
                args.join(" ")
            );
        }
        if let Some(pid) = self
            .load_pid
            .filter(|&pid| latlab_rt::process::child_exited(pid))
        {
            bail!(
                "the load (latlab load {}, pid {pid}) ended during the tune (its message is \
                 above): the rounds after it would not measure under the same load",
                self.load
            );
        }
        read(&file).map(Some)
    }
}

/// The figures (and causes) of a `latlab run` JSON file.
pub fn read(file: &Path) -> anyhow::Result<Measured> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let run: RunFile =
        serde_json::from_str(&text).with_context(|| format!("reading {}", file.display()))?;
    let l = run.overall.latency;
    Ok(Measured {
        figures: Figures {
            samples: l.count,
            p50_ns: l.p50,
            p99_ns: l.p99,
            p999_ns: l.p99_9,
            max_ns: l.max,
            missed: run.overall.missed_periods,
        },
        causes: run.explain.map(|e| e.causes).unwrap_or_default(),
        file: file.to_path_buf(),
    })
}

/// The background load of a whole tune: `latlab load SPEC` as a child,
/// stopped (SIGTERM, then waited for) when dropped.
#[derive(Debug)]
pub struct Load {
    child: Option<std::process::Child>,
}

impl Load {
    /// Starts `latlab load SPEC` for at most `limit_ns` (`none`: nothing runs).
    pub fn start(exe: &Path, spec: &str, limit_ns: u64, report: &Path) -> anyhow::Result<Load> {
        if spec == "none" || spec == "light" {
            return Ok(Load { child: None });
        }
        let mut command = Command::new(exe);
        // SAFETY: prctl(2) and getppid(2) only, between fork and exec.
        unsafe {
            use std::os::unix::process::CommandExt;
            let parent = std::process::id() as libc::pid_t;
            command.pre_exec(move || end_with_parent(parent));
        }
        let child = command
            .args(["load", spec, "--duration"])
            .arg(format!("{}s", limit_ns / 1_000_000_000 + 1))
            .arg("--json")
            .arg(report)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {} load {spec}", exe.display()))?;
        Ok(Load { child: Some(child) })
    }

    /// The load process (`None` when no load runs): [`Measure::load_pid`].
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(std::process::Child::id)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: kill(2) on our own child, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let _ = child.wait();
        }
    }
}

/// In a child between fork and exec: SIGTERM when tune (`parent`) dies,
/// so a tune killed with SIGKILL leaves no load or run behind (they stop
/// as on Ctrl-C, and clean up their files). A tune that died before the
/// prctl took effect (between fork and here) sent nothing: the child,
/// whose parent is then another process, does not start.
fn end_with_parent(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes a signal number and no memory;
    // getppid(2) takes nothing and cannot fail.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}
