//! Regression test for "memory stays constant however long the run": the
//! per-sample path must never allocate, so a 10^9-sample run cannot grow.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use latlab_measure::engine::Recorder;
use latlab_measure::timer::Wake;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Only allocations made by the thread under test count: the test
    /// harness's own thread may still be allocating (it records the running
    /// test) after the test thread has started.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn recording_never_allocates_even_over_simulated_hours() {
    // 100 us period, 5 M samples = 500 s; then one sample per second for
    // 10 000 s so the per-second series has to coarsen.
    let interval = 100_000u64;
    let mut recorder = Recorder::new(0, interval, 0.05, 0);
    COUNTING.with(|c| c.set(true));
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let mut t = 0u64;
    for cycle in 0..5_000_000u64 {
        let latency = 1_000 + (cycle * 2_654_435_761) % 5_000_000; // up to 5 ms, many buckets
        t += interval;
        recorder.record(Wake {
            intended: t,
            actual: t + latency,
            missed: 0,
            uncertain: false,
        });
    }
    for _ in 0..10_000u64 {
        t += 1_000_000_000;
        recorder.record(Wake {
            intended: t,
            actual: t + 5_000,
            missed: 0,
            uncertain: false,
        });
    }
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    COUNTING.with(|c| c.set(false));
    assert_eq!(after - before, 0, "the measurement loop allocated");
}
