//! The real-time session on this machine: real mlock, a real
//! `/dev/cpu_dma_latency` request held and released, real signals. Needs
//! root; skips with the reason otherwise, unless LATLAB_REQUIRE_PRIVILEGE=1.
//!
//! Signals and the process-wide stop flag are tested in child processes
//! (this test binary run again with one test selected), so that the tests
//! here do not stop each other.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use latlab_rt::memory;
use latlab_rt::sched::Policy;
use latlab_rt::session::{RtSession, SessionOptions};
use latlab_rt::stop::Signals;

/// Set in the child processes: which role to play.
const CHILD: &str = "LATLAB_SESSION_TEST_CHILD";

/// True while this process has `/dev/cpu_dma_latency` open.
fn holds_dma_latency() -> bool {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|target| target == std::path::Path::new("/dev/cpu_dma_latency"))
}

/// The CPU wake-up latency the kernel keeps now (µs), all requests together.
fn dma_latency_now() -> i32 {
    let bytes = std::fs::read("/dev/cpu_dma_latency").unwrap();
    i32::from_ne_bytes(bytes[..4].try_into().unwrap())
}

#[test]
fn entering_locks_memory_and_holds_the_dma_latency_and_dropping_releases_both() {
    if !latlab_testkit::root("the real-time session") {
        return;
    }
    assert!(!memory::is_locked(), "locked before the session");
    assert!(!holds_dma_latency());
    let session = RtSession::enter(&SessionOptions::measurement(Policy::Fifo, 80)).unwrap();
    assert!(session.mlocked());
    assert!(memory::is_locked(), "VmLck is 0 inside the session");
    assert_eq!(session.dma_latency_us(), Some(0));
    assert!(holds_dma_latency());
    assert_eq!(dma_latency_now(), 0, "the kernel does not keep 0 µs");
    assert_eq!(session.policy(), Policy::Fifo);
    assert!(!session.unprivileged());
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
    drop(session);
    assert!(!memory::is_locked(), "still locked after the session");
    assert!(
        !holds_dma_latency(),
        "the PM QoS request outlived the session"
    );
    eprintln!(
        "cpu_dma_latency after the session: {} µs",
        dma_latency_now()
    );
}

#[test]
fn what_a_command_does_not_ask_for_is_not_set_up() {
    let session = RtSession::enter(&SessionOptions {
        hold_dma_latency: false,
        lock_memory: false,
        ..SessionOptions::measurement(Policy::Other, 0)
    })
    .unwrap();
    assert!(!session.mlocked());
    assert_eq!(session.dma_latency_us(), None);
    assert_eq!(session.policy(), Policy::Other);
    // Steal time is counted per CPU asked for, never for another.
    assert!(session.steal_ns(&[0]).iter().all(|&(cpu, _)| cpu == 0));
    assert!(session.steal_ns(&[]).is_empty());
}

/// Runs this test binary again with only `test` selected, as `role`, as
/// the user `uid` when given.
fn child(test: &str, role: &str, uid: Option<u32>) -> std::process::Output {
    let this = std::env::current_exe().unwrap();
    // Another user runs a copy of this binary where it can reach it.
    let for_others = uid.map(|_| latlab_testkit::ExecutableByOthers::new(&this));
    let mut command = Command::new(for_others.as_ref().map_or(this.as_path(), |e| e.path()));
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, role);
    if let Some(uid) = uid {
        use std::os::unix::process::CommandExt;
        command.uid(uid).gid(uid);
    }
    command.output().unwrap()
}

/// In a child: enters a session with the given signals, sends itself SIGINT
/// twice, and reports what it saw.
#[test]
fn signal_child() {
    let signals = match std::env::var(CHILD).as_deref() {
        Ok("second-kills") => Signals::SecondKills,
        Ok("always-clean-up") => Signals::AlwaysCleanUp,
        _ => return, // run by the parent test only
    };
    let session = RtSession::enter(&SessionOptions {
        signals,
        ..SessionOptions::recording()
    })
    .unwrap();
    assert!(!session.stop_requested());
    // SAFETY: raise has no preconditions; the handler stores to atomics.
    unsafe { libc::raise(libc::SIGINT) };
    println!(
        "first SIGINT: stop requested = {}",
        session.stop_requested()
    );
    // SAFETY: as above; under SecondKills this one ends the process.
    unsafe { libc::raise(libc::SIGINT) };
    println!("second SIGINT: still running");
}

#[test]
fn the_first_ctrl_c_asks_to_stop_and_the_second_kills_unless_the_command_must_clean_up() {
    let out = child("signal_child", "second-kills", None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("first SIGINT: stop requested = true"),
        "{stdout}"
    );
    assert!(!stdout.contains("second SIGINT"), "{stdout}");
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{stdout}");

    let out = child("signal_child", "always-clean-up", None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("first SIGINT: stop requested = true"),
        "{stdout}"
    );
    assert!(stdout.contains("second SIGINT: still running"), "{stdout}");
}

/// In a child run as `nobody`: enters a session whose privileges are
/// refused, and reports the outcome.
#[test]
fn unprivileged_child() {
    let Ok(role) = std::env::var(CHILD) else {
        return;
    };
    let allow = match role.as_str() {
        "refuse" => false,
        "allow" => true,
        "required" => true,
        _ => return,
    };
    let mut options = SessionOptions {
        allow_unprivileged: allow,
        ..SessionOptions::measurement(Policy::Fifo, 80)
    };
    if role == "required" {
        options.realtime_fallback = None;
        options.realtime_required_why = "the test needs it";
    }
    match RtSession::enter(&options) {
        Ok(session) => {
            println!("entered: policy {:?}", session.policy());
            println!("unprivileged: {}", session.unprivileged());
            for warning in session.warnings() {
                println!("warning: {warning}");
            }
        }
        Err(err) => println!("refused: {err}"),
    }
}

#[test]
fn refused_privileges_are_errors_naming_the_fix_unless_allowed() {
    if !latlab_testkit::root("dropping privileges to test the session's refusals") {
        return;
    }
    const NOBODY: u32 = 65534;
    let out = child("unprivileged_child", "refuse", Some(NOBODY));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("refused: SCHED_FIFO priority 80 refused"),
        "{stdout}"
    );
    assert!(stdout.contains("--allow-unprivileged"), "{stdout}");

    let out = child("unprivileged_child", "allow", Some(NOBODY));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("entered: policy Other"), "{stdout}");
    assert!(stdout.contains("unprivileged: true"), "{stdout}");
    assert!(
        stdout.contains("warning: no real-time priority") && stdout.contains("SCHED_OTHER"),
        "{stdout}"
    );

    let out = child("unprivileged_child", "required", Some(NOBODY));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("refused: SCHED_FIFO priority 80 refused"),
        "{stdout}"
    );
    assert!(stdout.contains("the test needs it"), "{stdout}");
    assert!(!stdout.contains("--allow-unprivileged"), "{stdout}");
}
