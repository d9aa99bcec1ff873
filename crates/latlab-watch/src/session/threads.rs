//! What is known per watched thread: its name, policy and live figures.

use super::{Session, ENDED_NAME, ENDED_TID};
use crate::select::{self, Policy};

#[derive(Debug, Clone, Default)]
pub(super) struct TaskLive {
    pub(super) late: u64,
    pub(super) worst: Option<(u64, u64)>,
}

/// What is known of a thread: its name and, once seen alive, its policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its name.
    pub comm: String,
    /// Its scheduling policy as last seen (`None`: never seen alive).
    pub policy: Option<Policy>,
    /// Its real-time priority (1-99 for SCHED_FIFO/RR).
    pub rt_priority: u32,
}

impl ThreadInfo {
    pub(super) fn of(t: &select::Thread) -> ThreadInfo {
        ThreadInfo {
            comm: t.comm.clone(),
            policy: t.policy(),
            rt_priority: t.rt_priority,
        }
    }

    /// `FIFO 95`, `OTHER`, or `-` when unknown.
    pub fn policy_label(&self) -> String {
        self.policy
            .map_or_else(|| "-".into(), |p| p.label(self.rt_priority))
    }
}

impl Session {
    /// What is known of task `tid` (alive, or ended and kept apart).
    pub(super) fn info(&self, tid: i32) -> Option<&ThreadInfo> {
        self.threads.get(&tid).or_else(|| {
            self.ended
                .iter()
                .rev()
                .find(|e| e.tid as i32 == tid)
                .and_then(|e| e.info.as_ref())
        })
    }

    /// The name of task `tid` in tables.
    pub(super) fn comm_of(&self, tid: i32) -> String {
        if tid == ENDED_TID {
            return ENDED_NAME.to_string();
        }
        self.info(tid)
            .map_or_else(|| tid.to_string(), |i| i.comm.clone())
    }
}
