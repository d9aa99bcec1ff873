//! Shared by the binary's integration tests: the binary, a full disk, and
//! (from `latlab-testkit`) the skip-or-fail rule and the process checks.
//!
//! A test that needs root (SCHED_FIFO, mlock, tracefs) or a tool
//! (trace-cmd, chromium) skips with the reason and the fix when it is
//! missing, unless `LATLAB_REQUIRE_PRIVILEGE=1` (set in CI) turns the skip
//! into a failure, so a green CI proves every such test ran.
#![allow(dead_code, unused_imports)] // each test binary uses its own part

use std::process::Command;

pub mod chromium;
pub mod output;
pub use output::{
    assert_error, assert_success, json_of, read_json, spawn_piped, stderr_of, stdout_of,
};

/// The latlab binary under test. Its default history database lives in the
/// test's target directory, never in the user's data directory.
pub fn latlab() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_latlab"));
    command.env(
        "XDG_DATA_HOME",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data"),
    );
    command
}

pub use latlab_testkit::process::{
    catches, first_child, processes_with, state, wait_until_catches, KillOnDrop,
};
pub use latlab_testkit::{require, root};

/// Pins the calling thread to CPU 0.
pub fn pin_to_cpu0() {
    let set = latlab_rt::cpuset::CpuSet::single(0).unwrap();
    let _ = set.apply_to_current_thread();
}

/// `latlab run --quiet --no-save --cpus 0`: a run that prints and keeps
/// nothing but what the test asks for.
pub fn quiet_run_on_cpu0() -> Command {
    let mut command = latlab();
    command.args(["run", "--quiet", "--no-save", "--cpus", "0"]);
    command
}

/// What `latlab history --db <db>` lists (its stdout).
pub fn history_listing(db: &std::path::Path) -> String {
    let list = latlab().args(["history", "--db"]).arg(db).output().unwrap();
    String::from_utf8_lossy(&list.stdout).into_owned()
}

/// The latlab binary run as user nobody (65534) without capabilities
/// (`setpriv`, as root): what an unprivileged user sees.
pub fn latlab_as_nobody() -> Command {
    let mut command = Command::new("setpriv");
    command
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(env!("CARGO_BIN_EXE_latlab"));
    command
}

/// True when BPF programs can be loaded here: root and a kernel with BTF;
/// otherwise skips or fails (see [`require`]).
pub fn bpf_ready(test: &str) -> bool {
    root(test)
        && require(
            &format!("{test}: kernel BTF"),
            std::path::Path::new("/sys/kernel/btf/vmlinux").exists(),
            "a kernel built with CONFIG_DEBUG_INFO_BTF=y",
        )
}

/// The file a command's output names as where its result went instead
/// ("... it was written to PATH instead"), when the asked-for place was full.
pub fn fallback_named(stdout: &str) -> std::path::PathBuf {
    stdout
        .lines()
        .find_map(|l| {
            l.split_once("it was written to ")?
                .1
                .strip_suffix(" instead")
        })
        .unwrap_or_else(|| panic!("no fallback named: {stdout}"))
        .into()
}

/// A tmpfs of 64 KiB, full but for `free_pages` pages of 4 KiB, unmounted
/// when dropped.
pub struct FullDisk {
    dir: tempfile::TempDir,
}

impl FullDisk {
    /// Mounts it (as root).
    pub fn mount(free_pages: usize) -> FullDisk {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(ok.success(), "mount tmpfs");
        // Fill it: writing stops at ENOSPC.
        let fill = (64 << 10) - free_pages * 4096;
        let _ = std::fs::write(dir.path().join("fill"), vec![0u8; fill]);
        FullDisk { dir }
    }

    /// `name` inside it.
    pub fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        // Lazily: a process still holding a file there must not keep it mounted.
        let done = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
        if !done.is_ok_and(|s| s.success()) {
            eprintln!(
                "could not unmount the test tmpfs {}",
                self.dir.path().display()
            );
        }
    }
}

/// What the `latlab watch` tests share (tests/watch.rs, tests/watch_tracefs.rs).
pub mod watch {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use serde_json::Value;

    /// A JSON file.
    pub fn read(path: &Path) -> Value {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap()
    }

    /// Runs `latlab watch WATCH --no-history --quiet --json WATCH_JSON --
    /// latlab run RUN --interval 1ms --cpus 0 -q --no-save [--json RUN_JSON]`
    /// to its end (the command is started held: watch sees every activation
    /// of its threads) and checks that it succeeded.
    pub fn watch_a_run(
        watch: &[&str],
        watch_json: &Path,
        run: &[&str],
        run_json: Option<&Path>,
    ) -> std::process::Output {
        let mut cmd = super::latlab();
        cmd.arg("watch")
            .args(watch)
            .args(["--no-history", "--quiet", "--json"])
            .arg(watch_json)
            .args(["--", env!("CARGO_BIN_EXE_latlab"), "run"])
            .args(run)
            .args(["--interval", "1ms", "--cpus", "0", "-q", "--no-save"]);
        if let Some(json) = run_json {
            cmd.arg("--json").arg(json);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// The task of `doc` called `comm` with the most thread-latency samples.
    pub fn task<'a>(doc: &'a Value, comm: &str) -> &'a Value {
        doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["comm"] == comm)
            .max_by_key(|t| t["thread"]["summary"]["count"].as_u64().unwrap_or(0))
            .unwrap_or_else(|| panic!("no task {comm} in {:#}", doc["tasks"]))
    }

    /// Watches (`latlab watch`, with `extra` options) a SCHED_FIFO 50
    /// `latlab run` thread on CPU 0 while a SCHED_FIFO 99 [`hog`] spins 3 ms
    /// every 40 ms there, and checks that the hog is the top cause and the
    /// worst about its spin. Returns the result and the printed text.
    pub fn hog_named_as_the_cause(extra: &[&str]) -> (Value, String) {
        let dir = tempfile::tempdir().unwrap();
        let watch_json = dir.path().join("watch.json");
        let h = hog(
            Duration::from_millis(3),
            Duration::from_millis(40),
            Instant::now() + Duration::from_secs(6),
        );
        let watch: Vec<&str> = extra
            .iter()
            .copied()
            .chain(["--threshold", "500us", "--interval", "2s"])
            .collect();
        // The watch measures the run's thread: no second BPF object on it
        // (the run's own split; docs/watch.md).
        let run = ["--split", "off", "--duration", "4s", "--priority", "50"];
        let out = watch_a_run(&watch, &watch_json, &run, None);
        h.join().unwrap();
        let doc = read(&watch_json);
        let seen = task(&doc, "latlab-cpu0");
        assert!(seen["late_windows"].as_u64().unwrap() >= 5, "{:#}", seen);
        let top = doc["causes"]
            .as_array()
            .unwrap()
            .first()
            .cloned()
            .expect("ranked causes");
        assert_eq!(
            top["cause"]["category"], "other_task",
            "{:#}",
            doc["causes"]
        );
        assert!(
            top["description"].as_str().unwrap().contains("latlab-hog"),
            "{:#}",
            doc["causes"]
        );
        // The hog's worst is about its spin.
        let worst = seen["worst_ns"].as_u64().unwrap();
        assert!((2_000_000..40_000_000).contains(&worst), "worst {worst} ns");
        (doc, String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A SCHED_FIFO 99 thread of this process called `latlab-hog`, pinned
    /// to CPU 0, spinning `spin` every `every` until `stop` (it always
    /// sleeps between bursts).
    pub fn hog(spin: Duration, every: Duration, stop: Instant) -> std::thread::JoinHandle<()> {
        std::thread::Builder::new()
            .name("latlab-hog".into())
            .spawn(move || {
                super::pin_to_cpu0();
                // SAFETY: a plain syscall on the calling thread.
                unsafe {
                    let param = libc::sched_param { sched_priority: 99 };
                    assert_eq!(libc::sched_setscheduler(0, libc::SCHED_FIFO, &param), 0);
                }
                while Instant::now() < stop {
                    let until = Instant::now() + spin;
                    while Instant::now() < until {
                        std::hint::spin_loop();
                    }
                    std::thread::sleep(every);
                }
            })
            .unwrap()
    }
}
