//! A thread that ended gives its buckets of the kernel's histogram map back
//! (the map is bounded; a watch of days outlives many threads), and hands
//! over every count it had. Real BPF in this kernel, a real thread sleeping
//! on real timers. Needs root and BTF; skips with the reason elsewhere
//! (fails under LATLAB_REQUIRE_PRIVILEGE=1).
#![cfg(all(feature = "bpf", target_pointer_width = "64"))]

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{ready, total};
use latlab_watch::{BpfSide, KernelSide, Settings, TracefsSide};

/// Runs a thread that sleeps 1 ms `wakeups` times, watched by `side` from
/// its first sleep, and returns its thread id once it ended.
fn sleeper(side: &mut dyn KernelSide, wakeups: u32) -> u32 {
    let (tid_tx, tid_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        tid_tx.send(unsafe { libc::gettid() } as u32).unwrap();
        go_rx.recv().unwrap();
        for _ in 0..wakeups {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let tid = tid_rx.recv().unwrap();
    side.watch(tid).unwrap();
    go_tx.send(()).unwrap();
    t.join().unwrap();
    tid
}

fn gives_back_and_hands_over(side: &mut dyn KernelSide) {
    let tid = sleeper(side, 200);
    // A sample is counted at its CPU's next switch; the tracefs side reads
    // what came meanwhile.
    side.wait(Duration::from_millis(200)).unwrap();
    let before = side.histogram_counts();
    let had = total(&before, tid);
    assert!(
        had >= 3 * 150,
        "thread, irq and preemption latency of ~200 wake-ups counted: {had}"
    );
    side.unwatch(tid);
    let taken = side.take_histograms(&[tid]);
    assert_eq!(total(&taken, tid), had, "every count handed over");
    let mut expected: Vec<_> = before.into_iter().filter(|r| r.0 == tid).collect();
    let mut taken = taken;
    expected.sort_unstable();
    taken.sort_unstable();
    assert_eq!(taken, expected, "bucket by bucket");
    let after = side.histogram_counts();
    assert_eq!(total(&after, tid), 0, "no bucket of the thread left");
    assert!(side.take_histograms(&[tid]).is_empty());
}

#[test]
fn bpf_an_ended_threads_buckets_leave_the_kernel_map_with_their_counts() {
    if !ready("bpf ended thread", 1) {
        return;
    }
    let mut side = BpfSide::load(&Settings::histograms_only()).unwrap();
    gives_back_and_hands_over(&mut side);
}

#[test]
fn tracefs_an_ended_threads_buckets_leave_the_mirror_with_their_counts() {
    if !ready("tracefs ended thread", 1) {
        return;
    }
    let mut side = TracefsSide::start(&Settings::histograms_only()).unwrap();
    gives_back_and_hands_over(&mut side);
}
