//! `latlab watch --pid PID` whose BPF programs can be detached and attached
//! again while it runs: for measuring what watch costs a task within one
//! run, with phases as short as a second (bench/watch-interleaved.py
//! --toggle). Starting a watch takes 1.5-2 s (loading and verifying the
//! programs), which keeps phases of whole watch runs long and few.
//!
//! ```text
//! watch_toggle PID [THRESHOLD] [PROGRAM,...]     (THRESHOLD with its unit: 100us)
//! ```
//!
//! With programs named (see `latlab_watch::loader::PROGRAMS`), only those
//! are detached and attached: what they add to the others.
//!
//! Prints `ready` once attached. Reads lines on stdin: `off` detaches the
//! programs, `on` attaches them again; each is answered with the same word
//! and the microseconds it took, once done. Meanwhile it runs `latlab
//! watch`'s loop (the same session: windows polled every 100 ms, the
//! selection rescanned every second, a snapshot every minute, the live
//! figures every 10 s). At the end of stdin it prints `measured N`: the
//! wake-ups it measured. Root (BPF).

use std::io::BufRead;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use latlab_watch::select::{Selection, Tasks};
use latlab_watch::{Backend, Session, SessionOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let pid: i32 = args
        .next()
        .ok_or("usage: watch_toggle PID [THRESHOLD] [PROGRAM,...]  (THRESHOLD e.g. 100us)")?
        .parse()?;
    // A duration with its unit, as every latlab option takes it.
    let threshold_ns = args
        .next()
        .map_or(Ok(100_000), |t| latlab_rt::duration::period(&t))?;
    let only: Vec<String> = args
        .next()
        .map(|p| p.split(',').map(String::from).collect())
        .unwrap_or_default();
    let mut session = Session::start(SessionOptions {
        selection: Selection::all_of(Tasks::Pids(vec![pid])),
        threshold_ns,
        interval: Duration::from_secs(60),
        max_windows_per_sec: 50,
        baseline_every: 1000,
        backend: Backend::Bpf,
    })?;
    let (tx, commands) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line.trim().to_string()).is_err() {
                break;
            }
        }
    });
    println!("ready");
    let mut last_live = Instant::now();
    loop {
        match commands.try_recv() {
            Ok(word) if word == "on" || word == "off" => {
                let t = Instant::now();
                session.set_attached(word == "on", &only)?;
                println!("{word} {} us", t.elapsed().as_micros());
            }
            Ok(other) => return Err(format!("unknown command {other:?} (on, off)").into()),
            Err(mpsc::TryRecvError::Empty) => {}
            Err(mpsc::TryRecvError::Disconnected) => break,
        }
        session.poll(Duration::from_millis(100))?;
        if session.snapshot_due() {
            session.snapshot();
        }
        if last_live.elapsed() >= Duration::from_secs(10) {
            last_live = Instant::now();
            session.live();
        }
    }
    let result = session.finish("end of input");
    println!("measured {}", result.overall.latency.count);
    Ok(())
}
