//! A deterministic discrete-event simulation of the paper's experiment: a uniprocessor
//! kernel that is preemptible except inside critical sections (spin locks), a periodic
//! normal tick, an urgent timer that releases the real-time task, and a TCP-sender-like
//! background load, run with and without delayed locking.
//!
//! The model (all times are parameters of [`SimConfig`]):
//! - **Interrupts** (urgent timer, normal tick, network receive; the urgent timer first
//!   when several are pending) run at once, even inside
//!   a critical section, and stretch whatever they interrupt (an ISR steals time from a
//!   section, as the paper notes).
//! - **Real-time task** (highest priority): released by the urgent timer every period; it
//!   is scheduled when no critical section is running (the urgent ISR plus a context
//!   switch is the minimum OS latency; switching into its address space also cleans and
//!   refills the ARM920T's virtually indexed caches, [`SimConfig::rt_switch_extra`]), does
//!   its work, publishes the next release and sleeps. Its OS latency is release to
//!   scheduled.
//! - **Sender** (normal priority): per kilobyte, user-space work, a system call entry,
//!   then `tcp_sendmsg` (lock 1) copies the data into the socket, bounded by a send
//!   window; the NIC sends it over a 10 Mbit/s link and the acknowledgment comes back
//!   after a round trip, as a network interrupt.
//! - **Softirq thread** (above the sender, below the real-time task; the paper turned
//!   soft IRQs into kernel threads): per acknowledgment `do_softirq` (lock 0) and
//!   `net_rx` (lock 2), which frees window space and wakes the sender.
//! - **Delayed locking**: before a section a thread compares the lock's t_lock (fixed at
//!   Table 3's maxima, as the paper did, or learned online by a [`Predictor`] fed with
//!   the section's measured wall time, interrupts included) plus the margin with the time
//!   to the next release; if it does not fit the thread sleeps until the real-time task
//!   has run, and after `max_refusals` refusals it enters anyway.
//!
//! From the paper: the period (4000 µs), t_lock (800/2192/128 µs), N = 100, the 10 Mbit/s
//! link, 1 KB per send, the 100 Hz tick. The paper gives neither the sender's own costs,
//! the round trip, the interrupt and switch costs, nor the shape of its hold times beyond
//! Table 3 and Figures 8-10; these defaults are plausible for a 200 MHz ARM9 and were
//! calibrated once against Table 4 (see [`latency_run_shapes`] and docs/lockbench.md). With them
//! the simulation lands near Table 4 for every seed tried (worst case cut to 21-25 %,
//! sender 20 % slower); the run prints the paper's figures next to its own.

mod config;
mod kernel;
mod result;
#[cfg(test)]
mod tests;

pub use config::{latency_run_shapes, paper, SimConfig, SimPrediction};
pub use kernel::{compare, simulate};
pub use result::{SimComparison, SimRun};
