//! Analysis layer: per-window decomposition of the latency, the paper's
//! Table 2 (events per window, normal vs late), and causes ranked across all
//! late windows.
//!
//! A window runs from the intended expiry `E` to the moment the task runs
//! `S`, in three phases: `E..X` waiting for the timer interrupt
//! (`hrtimer_expire_entry` at `X`), `X..W` inside it up to the task's
//! wake-up `W`, and `W..S` waiting for the CPU. Every nanosecond is given to
//! exactly one [`Cause`], by what the relevant CPU was doing at that moment,
//! so the parts add up to the latency exactly.
//!
//! A soft hrtimer (one that expires in the `HRTIMER` softirq: on
//! PREEMPT_RT every hrtimer not marked hard) splits `E..X` at the hard
//! timer interrupt `H` that noticed the expiry: `E..H` waiting for that
//! interrupt, `H..X` waiting for the softirq thread (`ktimers/N` on
//! PREEMPT_RT) to run the callback ([`Cause::SoftTimer`]).
//!
//! On PREEMPT_RT ([`Context::rt`]) softirqs run in preemptible task
//! context, so their time is the time of the thread that runs them (an
//! `irq/NN-name` thread, `ktimers/N`, `ksoftirqd/N`, or the task that
//! raised them), and interrupts are handled by `irq/NN-name` threads:
//! kernel threads are named by kind ([`ThreadKind`](crate::model::ThreadKind)) with the priorities
//! that decided the order.
//!
//! One file per concept: [`Cause`] and its taxonomy, the advice prose for
//! each cause, the kernel [`Context`], the per-window [`decompose`], the
//! [`event_table`] (Table 2), the cross-window [`rank_causes`] and the
//! [`categories`].

mod advice;
mod categories;
mod cause;
mod context;
mod decompose;
mod event_table;
mod rank;

pub use categories::{categories, CategoryRow};
pub use cause::{Cause, Silence, TimerKind, STALL_NS, TASK_STALL_NS};
pub use context::Context;
pub use decompose::{decompose, Part};
pub use event_table::{event_table, EventRow};
pub use rank::{rank_causes, CauseRow, PidRow};
