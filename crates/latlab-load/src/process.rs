//! A load in a child process of its own ([`LoadProcess`]) and the child's
//! side of it ([`serve_stdio`]).
//!
//! A measuring process is real-time and memory-locked. A load running as its
//! threads would share its address space: the `mem` load's pages locked by
//! `mlockall`, its `munmap`s shooting down TLB entries on the measuring CPUs
//! too, and a bug in a load able to corrupt the measurement. So the measuring
//! commands start the load in a child process (latlab re-executing itself),
//! which runs it at SCHED_OTHER and is not memory-locked (memory locks are not
//! inherited over fork and exec).
//!
//! The protocol is one line of JSON per message:
//! - parent to child, on the child's stdin: the request (spec and options);
//!   after it, closing stdin means "stop and report" (so does the parent's death);
//! - child to parent, on the child's stdout: `{"event":"ready"}` once every
//!   worker runs, `{"event":"failed","error":"..."}` when the load could not
//!   start or failed while running, `{"event":"report","report":{...}}`
//!   (a [`LoadReport`]) after the stop.
//!
//! Cleanup: the child sets `PR_SET_PDEATHSIG(SIGTERM)` first thing after
//! exec and checks right after that its parent is still the latlab that
//! started it (whose pid it gets in an environment variable). SIGTERM
//! (also SIGINT, SIGHUP) makes it stop the load cleanly (workers joined, command group killed, temp
//! dir removed). It leads its own process group, so Ctrl-C at the terminal
//! reaches only latlab, which then stops the load and waits for its report;
//! Ctrl-Z and `fg` reach it through latlab (see `latlab_rt::jobcontrol`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use latlab_rt::wait::{Condvar, Event};
use serde::{Deserialize, Serialize};

use crate::running::{validate, READY_TIMEOUT};
use crate::sched::{make_background, set_affinity};
use crate::{LoadError, LoadOptions, LoadReport, LoadSpec, RunningLoad};
use latlab_rt::sched::housekeeping_cpus;

/// Environment variable through which the child learns its parent's pid.
const PARENT_ENV: &str = "LATLAB_LOAD_PARENT";
/// Name of the child process (its `comm`, as `ps` and traces show it).
const PROCESS_NAME: &[u8] = b"latlab-load\0";
/// Time for exec and process start-up on top of the load's own ready timeout.
const SPAWN_MARGIN: Duration = Duration::from_secs(5);
/// How long the child may take to stop and report (an io worker in fsync,
/// the command's SIGTERM grace) before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);
/// How often the child checks its load and the stop request.
const CHECK_EVERY: Duration = Duration::from_millis(50);

/// What the parent asks for: the spec and the options, as plain data.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
struct Request {
    spec: String,
    command: Option<String>,
    disk_cap_bytes: u64,
    /// `LoadOptions::temp_root` as raw bytes (a path need not be UTF-8).
    temp_root: Vec<u8>,
    cpus: Vec<usize>,
    nice: i32,
    sample_interval_ns: u64,
    net_message_bytes: usize,
    command_grace_ns: u64,
}

impl Request {
    fn new(spec: &LoadSpec, options: &LoadOptions) -> Request {
        Request {
            spec: spec.to_string(),
            command: spec.command().map(str::to_owned),
            disk_cap_bytes: options.disk_cap_bytes,
            temp_root: options.temp_root.as_os_str().as_bytes().to_vec(),
            cpus: options.cpus.clone(),
            nice: options.nice,
            sample_interval_ns: nanos(options.sample_interval),
            net_message_bytes: options.net_message_bytes,
            command_grace_ns: nanos(options.command_grace),
        }
    }

    fn into_parts(self) -> Result<(LoadSpec, LoadOptions), LoadError> {
        let mut spec: LoadSpec = self.spec.parse()?;
        if let Some(command) = self.command {
            spec = spec.with_command(command);
        }
        let options = LoadOptions {
            disk_cap_bytes: self.disk_cap_bytes,
            temp_root: PathBuf::from(std::ffi::OsString::from_vec(self.temp_root)),
            cpus: self.cpus,
            nice: self.nice,
            sample_interval: Duration::from_nanos(self.sample_interval_ns),
            net_message_bytes: self.net_message_bytes,
            command_grace: Duration::from_nanos(self.command_grace_ns),
        };
        Ok((spec, options))
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// What the child tells the parent.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Message {
    /// Every worker runs (and the command survived its grace time).
    Ready,
    /// The load could not start, or failed while running; it is being cleaned up.
    Failed { error: String },
    /// The load stopped; what it got done.
    Report { report: Box<LoadReport> },
}

/// What the parent has heard from the child so far.
#[derive(Debug, Default)]
struct Inbox {
    ready: bool,
    failed: Option<String>,
    report: Option<LoadReport>,
    /// The child closed its output: it has exited or is exiting.
    closed: bool,
    /// A line that is not a message (a bug).
    garbage: Option<String>,
}

impl Inbox {
    /// True once there is nothing more to wait for before "ready".
    fn settled_start(&self) -> bool {
        self.ready || self.done()
    }

    /// True once the child has said its last word (or can say no more).
    fn done(&self) -> bool {
        self.failed.is_some() || self.report.is_some() || self.closed || self.garbage.is_some()
    }
}

/// The inbox and the condition variable that signals a change to it
/// (latlab-rt's: std's timed waits end early on 32-bit ARM, see
/// `latlab_rt::wait`).
type Mailbox = Arc<(Mutex<Inbox>, Condvar)>;

fn lock(mailbox: &Mailbox) -> MutexGuard<'_, Inbox> {
    mailbox.0.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reads the child's messages into `mailbox` until its output closes.
fn read_messages(reader: impl BufRead, mailbox: &Mailbox) {
    for line in reader.lines() {
        let Ok(line) = line else { break };
        let mut inbox = lock(mailbox);
        match serde_json::from_str::<Message>(&line) {
            Ok(Message::Ready) => inbox.ready = true,
            Ok(Message::Failed { error }) => {
                inbox.failed.get_or_insert(error);
            }
            Ok(Message::Report { report }) => inbox.report = Some(*report),
            Err(_) => {
                inbox.garbage.get_or_insert(line);
            }
        }
        mailbox.1.notify_all();
    }
    lock(mailbox).closed = true;
    mailbox.1.notify_all();
}

/// A load running in a child process: the separation the measuring commands use.
///
/// `program` is a command that runs [`serve_stdio`] (latlab uses its own
/// binary, `/proc/self/exe load --serve`). Dropping a `LoadProcess` stops the
/// load (the child cleans up and exits; it is killed if it does not within
/// 20 s) but discards the report; call [`LoadProcess::stop`] to get it.
/// Once the child is reaped, a scratch directory it left behind (because it
/// was killed) is removed.
///
/// ```no_run
/// use std::process::Command;
/// use latlab_load::{LoadOptions, LoadProcess, LoadSpec};
///
/// // A binary whose `load --serve` calls latlab_load::serve_stdio().
/// let mut program = Command::new("/proc/self/exe");
/// program.args(["load", "--serve"]);
/// let spec: LoadSpec = "mem:1,net:1".parse()?;
/// let load = LoadProcess::start(program, &spec, &LoadOptions::default())?;
/// // ... measure, calling load.check() now and then ...
/// load.check()?;
/// let report = load.stop()?;
/// println!("{} for {:.1} s", report.spec, report.duration_s);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LoadProcess {
    pid: u32,
    /// Where the child makes its scratch directory (removed here if it was killed).
    temp_root: PathBuf,
    child: Mutex<Child>,
    stdin: Option<ChildStdin>,
    mailbox: Mailbox,
    reader: Option<JoinHandle<()>>,
    /// Ctrl-Z stops the child's group too (it is not in the terminal's).
    followed: latlab_rt::jobcontrol::Followed,
}

impl LoadProcess {
    /// Starts `program` as the load's process, asks it to run `spec` with
    /// `options`, and returns once it reports that every worker runs (the
    /// same readiness as [`RunningLoad::start`]). On error the child is
    /// stopped (or killed) and reaped, and the error says why it failed.
    pub fn start(
        mut program: Command,
        spec: &LoadSpec,
        options: &LoadOptions,
    ) -> Result<LoadProcess, LoadError> {
        validate(options)?;
        let request =
            serde_json::to_string(&Request::new(spec, options)).map_err(|e| LoadError::Start {
                reason: format!(
                    "cannot encode the load request: {e} (a latlab bug, please report it)"
                ),
            })?;
        let cpus = if options.cpus.is_empty() {
            housekeeping_cpus()
        } else {
            options.cpus.clone()
        };
        let described = format!("{program:?}");
        let parent = std::process::id();
        program
            .env(PARENT_ENV, parent.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        let mailbox = Mailbox::default();
        let (spawned_tx, spawned_rx) = mpsc::channel();
        let inbox = mailbox.clone();
        let nice = options.nice;
        // The child is started by this thread: it inherits the thread's
        // SCHED_OTHER policy and affinity (the caller may be a pinned
        // real-time thread), and its parent-death signal follows this thread,
        // which therefore lives until the child has exited.
        //
        // No pre_exec hook: without one std starts the child with
        // posix_spawn (vfork-like, sharing the memory until exec) rather
        // than fork, which would write-protect every page of the running
        // measurement (copy-on-write faults later in its loop). The child
        // sets its parent-death signal itself, right after exec, and then
        // checks that its parent is still this process.
        let reader = std::thread::Builder::new()
            .name("ld-process".into())
            // Locked memory if latlab has called mlockall: keep it small.
            .stack_size(256 << 10)
            .spawn(move || {
                if let Err(e) =
                    make_background("process", nice).and_then(|()| set_affinity("process", &cpus))
                {
                    let _ = spawned_tx.send(Err(e));
                    return;
                }
                let mut child = match program.spawn() {
                    Ok(child) => child,
                    Err(e) => {
                        let _ = spawned_tx.send(Err(LoadError::Start {
                            reason: format!("cannot start the load process {described}: {e}"),
                        }));
                        return;
                    }
                };
                let stdout = child.stdout.take();
                let pid = child.id();
                if spawned_tx.send(Ok(child)).is_err() {
                    return;
                }
                if let Some(stdout) = stdout {
                    read_messages(BufReader::new(stdout), &inbox);
                }
                wait_unreaped(pid);
            })
            .map_err(|e| LoadError::Start {
                reason: format!("cannot create the thread that starts the load process: {e}"),
            })?;
        let mut child = match spawned_rx.recv() {
            Ok(Ok(child)) => child,
            Ok(Err(e)) => {
                let _ = reader.join();
                return Err(e);
            }
            Err(_) => {
                let _ = reader.join();
                return Err(LoadError::Start {
                    reason: "the thread that starts the load process ended early (a latlab bug, please report it)".into(),
                });
            }
        };
        let mut load = LoadProcess {
            followed: latlab_rt::jobcontrol::follow(child.id() as libc::pid_t),
            pid: child.id(),
            temp_root: options.temp_root.clone(),
            stdin: child.stdin.take(),
            child: Mutex::new(child),
            mailbox,
            reader: Some(reader),
        };
        if let Some(stdin) = &mut load.stdin {
            // A failed write means the child is gone already; the wait below says why.
            let _ = writeln!(stdin, "{request}").and_then(|()| stdin.flush());
        }
        let limit = READY_TIMEOUT + options.command_grace + SPAWN_MARGIN;
        let (mailbox, changed) = &*load.mailbox;
        let inbox = changed
            .wait_timeout_while(mailbox, limit, |i| !i.settled_start())
            .0;
        if let Some(err) = load.failure(&inbox) {
            return Err(err);
        }
        if !inbox.ready {
            return Err(LoadError::Start {
                reason: format!(
                    "the load process (pid {}) did not report ready within {} s (machine overloaded? try fewer workers)",
                    load.pid,
                    limit.as_secs()
                ),
            });
        }
        drop(inbox);
        Ok(load)
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Fails if the load failed (a worker died, the command exited with a
    /// failure) or its process ended or was killed. Does not block.
    pub fn check(&self) -> Result<(), LoadError> {
        match self.failure(&lock(&self.mailbox)) {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Stops the load and returns what it got done. Fails if the load failed
    /// while running; the child is gone (reaped) either way.
    pub fn stop(mut self) -> Result<LoadReport, LoadError> {
        // End of input: stop and report.
        self.stdin = None;
        let (mailbox, changed) = &*self.mailbox;
        let mut inbox = changed
            .wait_timeout_while(mailbox, STOP_TIMEOUT, |i| !i.done())
            .0;
        let result = match inbox.report.take() {
            Some(report) => Ok(report),
            None => Err(self.failure(&inbox).unwrap_or_else(|| LoadError::Process {
                message: format!(
                    "the load process (pid {}) did not stop within {} s and was killed (the next load removes its temp dir)",
                    self.pid,
                    STOP_TIMEOUT.as_secs()
                ),
            })),
        };
        drop(inbox);
        self.finish();
        result
    }

    /// What went wrong, if anything has: the child's own error first.
    fn failure(&self, inbox: &Inbox) -> Option<LoadError> {
        let pid = self.pid;
        if let Some(error) = &inbox.failed {
            return Some(LoadError::Process {
                message: error.clone(),
            });
        }
        if let Some(line) = &inbox.garbage {
            let shown: String = line.chars().take(200).collect();
            let more = if shown.len() < line.len() { "..." } else { "" };
            return Some(LoadError::Process {
                message: format!("the load process (pid {pid}) wrote {shown:?}{more}, which is not a load message (a latlab bug, please report it)"),
            });
        }
        if inbox.closed && inbox.report.is_none() {
            let how = self.exit_status();
            let (when, hint) = if !inbox.ready {
                (
                    "before it reported ready",
                    "; is the program one that serves loads (latlab load --serve)?",
                )
            } else if how.contains("signal") {
                (
                    "while the load should have been running",
                    "; if nobody killed it, see the kernel log (dmesg) for the OOM killer or a crash",
                )
            } else {
                ("while the load should have been running", "")
            };
            return Some(LoadError::Process {
                message: format!("the load process (pid {pid}) {how} {when}{hint}"),
            });
        }
        None
    }

    /// How the child ended ("exited with status 1", "was killed by signal 9"),
    /// waiting briefly for it to finish exiting.
    fn exit_status(&self) -> String {
        // Called once the child has ended or closed its output: the wait
        // below reaps it, after which its group id may be reused.
        self.followed.forget();
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    return match (status.code(), status.signal()) {
                        (Some(code), _) => format!("exited with status {code}"),
                        (None, Some(signal)) => format!("was killed by signal {signal}"),
                        _ => format!("ended ({status})"),
                    }
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(None) => return "closed its output".to_owned(),
                Err(e) => return format!("could not be waited for ({e})"),
            }
        }
    }

    /// Closes the child's input, waits for it to exit (killing it after
    /// [`STOP_TIMEOUT`]), reaps it and joins the reader thread.
    fn finish(&mut self) {
        self.followed.forget();
        self.stdin = None;
        {
            let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
            let deadline = Instant::now() + STOP_TIMEOUT;
            loop {
                match child.try_wait() {
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Ok(None) => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                    Ok(Some(_)) | Err(_) => break,
                }
            }
        }
        // Reaped: a child that was killed (by us after the timeout, or by
        // someone else) may have left its scratch directory behind.
        crate::tempdir::remove_of(&self.temp_root, self.pid);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

impl Drop for LoadProcess {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Blocks until child `pid` has exited, without reaping it (the `Child`
/// owner does that).
fn wait_unreaped(pid: u32) {
    loop {
        // SAFETY: siginfo_t is plain data filled in by waitid.
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// The child's side: reads the request from stdin, runs the load, reports
/// readiness, failures and the final report on stdout, stops when stdin
/// closes or SIGTERM arrives (the parent-death signal). What `latlab load
/// --serve` runs; only meaningful when started by [`LoadProcess::start`].
///
/// Every error is also sent to the parent as a message when possible.
pub fn serve_stdio() -> Result<(), LoadError> {
    let parent: libc::pid_t = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| LoadError::Start {
            reason: format!("{PARENT_ENV} is not set: this mode is for latlab's own use (latlab run --load starts it)"),
        })?;
    // Not for the load command. The process has one thread yet, so no
    // other thread can be reading the environment.
    std::env::remove_var(PARENT_ENV);
    // SAFETY: plain prctl calls with valid arguments (a NUL-terminated name).
    unsafe {
        libc::prctl(libc::PR_SET_NAME, PROCESS_NAME.as_ptr(), 0, 0, 0);
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGTERM as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            return Err(LoadError::sys("process", "prctl(PR_SET_PDEATHSIG)"));
        }
    }
    // Right after setting the signal: if the parent died before, it never comes.
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != parent {
        return Err(LoadError::Start {
            reason: format!("latlab (pid {parent}) ended before its load process started"),
        });
    }
    install_stop_handler()?;
    let mut output = std::io::stdout();
    let mut line = String::new();
    let request = match std::io::stdin().lock().read_line(&mut line) {
        Ok(n) if n > 0 => serde_json::from_str::<Request>(&line).map_err(|e| LoadError::Start {
            reason: format!(
                "bad request from latlab: {e} (a latlab bug, or two different latlab binaries)"
            ),
        }),
        Ok(_) => Err(LoadError::Start {
            reason: "latlab closed the load process's input before asking for a load".into(),
        }),
        Err(e) => Err(LoadError::Start {
            reason: format!("reading the request from latlab: {e}"),
        }),
    };
    match request {
        Ok(request) => serve(request, std::io::stdin(), &mut output, &|| {
            STOP_SIGNAL.load(Ordering::SeqCst) != 0
        }),
        Err(err) => {
            tell(&mut output, &Message::failed(&err));
            Err(err)
        }
    }
}

/// The signal (SIGTERM, SIGINT, SIGHUP) that asked the load process to stop, or 0.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(signal: libc::c_int) {
    STOP_SIGNAL.store(signal, Ordering::SeqCst);
}

/// Makes SIGTERM (the parent-death signal), SIGINT and SIGHUP ask for a
/// clean stop. The handler stays installed: when a multi-threaded latlab is
/// killed, the kernel re-sends the parent-death signal each time the child
/// is handed to another of latlab's exiting threads, and a one-shot handler
/// would let the second one kill the child before it cleaned up.
fn install_stop_handler() -> Result<(), LoadError> {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic (async-signal-safe).
        unsafe { latlab_rt::signal::set_handler(signal, on_stop_signal, 0) }.map_err(|source| {
            LoadError::Sys {
                kind: "process",
                call: "sigaction",
                source,
                hint: "",
            }
        })?;
    }
    Ok(())
}

impl Message {
    fn failed(err: &LoadError) -> Message {
        Message::Failed {
            error: err.to_string(),
        }
    }
}

/// Writes one message; false when the parent no longer listens.
fn tell(output: &mut dyn Write, message: &Message) -> bool {
    let line = match serde_json::to_string(message) {
        Ok(line) => line,
        Err(e) => serde_json::json!({
            "event": "failed",
            "error": format!("cannot encode the load's message: {e} (a latlab bug, please report it)"),
        })
        .to_string(),
    };
    writeln!(output, "{line}")
        .and_then(|()| output.flush())
        .is_ok()
}

/// Runs the request's load until `input` ends (or `stop()` holds, or the load
/// fails), telling `output` what happens.
fn serve(
    request: Request,
    mut input: impl Read + Send + 'static,
    output: &mut dyn Write,
    stop: &dyn Fn() -> bool,
) -> Result<(), LoadError> {
    let started = request
        .into_parts()
        .and_then(|(spec, options)| RunningLoad::start(&spec, &options));
    let load = match started {
        Ok(load) => load,
        Err(err) => {
            tell(output, &Message::failed(&err));
            return Err(err);
        }
    };
    if !tell(output, &Message::Ready) {
        // Nobody listens: the parent is gone. Stop and clean up.
        drop(load);
        return Err(LoadError::Process {
            message: "latlab stopped listening to its load process".into(),
        });
    }
    // Set when the input ends, or its thread does (whatever the way).
    let eof = Arc::new(Event::new());
    let input_ended = SetOnDrop(eof.clone());
    std::thread::Builder::new()
        .name("ld-input".into())
        .spawn(move || {
            let _ended = input_ended;
            let mut buf = [0u8; 64];
            loop {
                match input.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        })
        .map_err(|e| LoadError::Start {
            reason: format!("cannot create the load process's input thread: {e}"),
        })?;
    // Until the input ends (or its thread is gone): stop and report.
    while !eof.wait_timeout(CHECK_EVERY) {
        if stop() {
            let err = LoadError::Process {
                message: format!(
                    "the load process (pid {}) was stopped by {} before latlab asked it to stop",
                    std::process::id(),
                    match STOP_SIGNAL.load(Ordering::SeqCst) {
                        libc::SIGTERM => "SIGTERM".to_owned(),
                        0 => "a stop request".to_owned(),
                        s => format!("signal {s}"),
                    }
                ),
            };
            tell(output, &Message::failed(&err));
            drop(load);
            return Err(err);
        }
        if let Err(err) = load.check() {
            tell(output, &Message::failed(&err));
            drop(load);
            return Err(err);
        }
    }
    match load.stop() {
        Ok(report) => {
            tell(
                output,
                &Message::Report {
                    report: Box::new(report),
                },
            );
            Ok(())
        }
        Err(err) => {
            tell(output, &Message::failed(&err));
            Err(err)
        }
    }
}

/// Sets its event when dropped: a thread's end, however it ends.
struct SetOnDrop(Arc<Event>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `serve` on a thread over real pipes and returns the parent's ends.
    fn serve_over_pipes(
        request: Request,
    ) -> (
        std::io::PipeWriter,
        Mailbox,
        JoinHandle<Result<(), LoadError>>,
    ) {
        let (input_rx, input_tx) = std::io::pipe().unwrap();
        let (output_rx, mut output_tx) = std::io::pipe().unwrap();
        let server =
            std::thread::spawn(move || serve(request, input_rx, &mut output_tx, &|| false));
        let mailbox = Mailbox::default();
        let inbox = mailbox.clone();
        std::thread::spawn(move || read_messages(BufReader::new(output_rx), &inbox));
        (input_tx, mailbox, server)
    }

    fn wait(mailbox: &Mailbox, until: impl Fn(&Inbox) -> bool) -> MutexGuard<'_, Inbox> {
        mailbox
            .1
            .wait_timeout_while(&mailbox.0, Duration::from_secs(20), |i| !until(i))
            .0
    }

    fn options(root: &std::path::Path) -> LoadOptions {
        LoadOptions {
            temp_root: root.to_owned(),
            sample_interval: Duration::from_millis(100),
            ..LoadOptions::default()
        }
    }

    #[test]
    fn the_request_carries_spec_command_and_options_unchanged() {
        use std::os::unix::ffi::OsStrExt;
        let spec: LoadSpec = "full,udp:2".parse().unwrap();
        let spec = spec.with_command("sleep 1");
        let options = LoadOptions {
            temp_root: PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/not-\xffutf8")),
            cpus: vec![1, 3],
            nice: 7,
            sample_interval: Duration::from_millis(250),
            net_message_bytes: 1000,
            disk_cap_bytes: 12345,
            command_grace: Duration::from_millis(1),
        };
        let line = serde_json::to_string(&Request::new(&spec, &options)).unwrap();
        let back: Request = serde_json::from_str(&line).unwrap();
        let (spec2, options2) = back.into_parts().unwrap();
        assert_eq!(spec2, spec);
        assert_eq!(options2, options);
    }

    #[test]
    fn serve_reports_ready_then_the_report_when_its_input_closes() {
        let root = tempfile::tempdir().unwrap();
        let spec: LoadSpec = "cpu:1,io:1".parse().unwrap();
        let (input, mailbox, server) = serve_over_pipes(Request::new(&spec, &options(root.path())));
        assert!(wait(&mailbox, Inbox::settled_start).ready);
        std::thread::sleep(Duration::from_millis(300));
        assert!(lock(&mailbox).failed.is_none());
        drop(input);
        let inbox = wait(&mailbox, |i| i.closed);
        let report = inbox
            .report
            .clone()
            .expect("a report after the input closed");
        drop(inbox);
        server.join().unwrap().unwrap();
        assert_eq!(report.spec, "cpu:1,io:1");
        assert!(report.kind("cpu").unwrap().total > 0, "{report:?}");
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }

    #[test]
    fn serve_names_why_a_load_could_not_start() {
        let root = tempfile::tempdir().unwrap();
        let spec = LoadSpec::none().with_command("echo no such tool >&2; exit 3");
        let (_input, mailbox, server) =
            serve_over_pipes(Request::new(&spec, &options(root.path())));
        let inbox = wait(&mailbox, |i| i.closed);
        assert!(!inbox.ready);
        let error = inbox.failed.clone().expect("a failure message");
        drop(inbox);
        assert!(error.contains("status 3"), "{error}");
        assert!(error.contains("no such tool"), "{error}");
        assert!(server.join().unwrap().is_err());
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }

    /// Starts `sh -c script` as if it were the load process.
    fn start_sh(script: &str) -> Result<LoadProcess, LoadError> {
        let root = tempfile::tempdir().unwrap();
        let mut program = Command::new("/bin/sh");
        program.args(["-c", script]);
        LoadProcess::start(program, &"cpu:1".parse().unwrap(), &options(root.path()))
    }

    #[test]
    fn a_program_that_is_no_load_process_is_a_clear_error() {
        let err = start_sh("exit 4").unwrap_err().to_string();
        assert!(err.contains("exited with status 4"), "{err}");
        assert!(err.contains("before it reported ready"), "{err}");
        let err = start_sh("read request; echo hello")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"hello\", which is not a load message"),
            "{err}"
        );
        let err = start_sh("read request; echo '{\"event\":\"failed\",\"error\":\"no disk\"}'")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "no disk");
        let missing = Command::new("/nonexistent/latlab");
        let err = LoadProcess::start(missing, &"cpu:1".parse().unwrap(), &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot start the load process"), "{err}");
        assert!(err.contains("/nonexistent/latlab"), "{err}");
    }

    #[test]
    fn a_load_process_that_dies_while_running_is_seen_by_check_and_stop() {
        // Reports ready, then dies by a signal as if killed, once start() has returned
        // (dying earlier is a failed start, which another test covers).
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join("go");
        let load = start_sh(&format!(
            "read request; echo '{{\"event\":\"ready\"}}'; \
             while [ ! -e '{}' ]; do sleep 0.01; done; kill -9 $$",
            go.display()
        ))
        .unwrap();
        std::fs::write(&go, b"").unwrap();
        let start = Instant::now();
        while load.check().is_ok() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "check never failed"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let err = load.check().unwrap_err().to_string();
        assert!(
            err.contains(&format!("(pid {}) was killed by signal 9", load.pid())),
            "{err}"
        );
        assert!(
            err.contains("while the load should have been running"),
            "{err}"
        );
        let err = load.stop().unwrap_err().to_string();
        assert!(err.contains("was killed by signal 9"), "{err}");
    }

    #[test]
    fn garbage_from_the_child_is_a_protocol_error_not_a_panic() {
        let mailbox = Mailbox::default();
        read_messages(&b"{\"event\":\"ready\"}\nhello\n"[..], &mailbox);
        let inbox = lock(&mailbox);
        assert!(inbox.ready && inbox.closed);
        assert_eq!(inbox.garbage.as_deref(), Some("hello"));
    }
}
