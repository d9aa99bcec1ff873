//! The BPF side detached from its tracepoints measures nothing, attached
//! again measures as before, and one program detached leaves the others
//! measuring (what bench/watch-interleaved.py --toggle relies on to compare
//! a task with and without watch's programs in one run). Real BPF in this kernel, a real thread sleeping on real
//! timers. Needs root and BTF; skips with the reason elsewhere (fails under
//! LATLAB_REQUIRE_PRIVILEGE=1).
#![cfg(all(feature = "bpf", target_pointer_width = "64"))]

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{ready, total};
use latlab_watch::{BpfSide, KernelSide, Settings};

/// The counts of thread `tid` in every histogram (thread, irq and
/// preemption latency: three per timer wake-up).
fn counted(side: &BpfSide, tid: u32) -> u64 {
    total(&side.histogram_counts(), tid)
}

#[test]
fn a_detached_side_measures_nothing_and_measures_again_once_attached() {
    if !ready("bpf detach", 1) {
        return;
    }
    let mut side = BpfSide::load(&Settings::histograms_only()).unwrap();
    let (tid_tx, tid_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        tid_tx.send(unsafe { libc::gettid() } as u32).unwrap();
        // Stretches of 100 sleeps of 1 ms, each on the test's word.
        while go_rx.recv().is_ok() {
            for _ in 0..100 {
                std::thread::sleep(Duration::from_millis(1));
            }
            done_tx.send(()).unwrap();
        }
    });
    let tid = tid_rx.recv().unwrap();
    side.watch(tid).unwrap();
    let stretch = || {
        go_tx.send(()).unwrap();
        done_rx.recv().unwrap();
        // A sample is counted at its CPU's next switch.
        std::thread::sleep(Duration::from_millis(50));
    };

    stretch();
    let attached = counted(&side, tid);
    assert!(
        attached >= 3 * 80,
        "about 100 wake-ups measured: {attached}"
    );
    // Its timer program ran (the statistics are on for the first second):
    // no note that it did not (the lab once had a watch with none).
    assert!(
        side.kernel_time().1 > 0,
        "the kernel counts the programs' runs"
    );
    let notes = side.notes();
    assert!(
        !notes
            .iter()
            .any(|n| n.contains("hrtimer_expire_entry never ran")),
        "{notes:?}"
    );

    side.set_attached(false, &[]).unwrap();
    let at_detach = counted(&side, tid);
    stretch();
    assert_eq!(
        counted(&side, tid),
        at_detach,
        "100 wake-ups while detached: none measured"
    );
    // Detaching twice is no error, and changes nothing.
    side.set_attached(false, &[]).unwrap();

    side.set_attached(true, &[]).unwrap();
    stretch();
    let again = counted(&side, tid) - at_detach;
    assert!(
        again >= 3 * 80,
        "about 100 wake-ups measured again once attached: {again}"
    );

    // Only the softirqs' entry detached: the wake-ups are still measured
    // (by the three programs on their path).
    side.set_attached(false, &["on_softirq_entry".to_string()])
        .unwrap();
    let before = counted(&side, tid);
    stretch();
    let one_detached = counted(&side, tid) - before;
    assert!(
        one_detached >= 3 * 80,
        "only one program detached: still measured: {one_detached}"
    );
    assert!(
        side.set_attached(true, &["no_such_program".to_string()])
            .is_err(),
        "an unknown name is an error"
    );
    drop(go_tx);
    t.join().unwrap();
}
