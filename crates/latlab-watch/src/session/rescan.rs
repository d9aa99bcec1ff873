//! The selection scanned again: new tasks watched, ended ones taken out of
//! the kernel side and folded into [`ENDED_TID`](super::ENDED_TID).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use super::threads::ThreadInfo;
use super::{Session, BUSY_ROWS, ENDED_TID, KEEP_ENDED, RESCAN, RESCAN_BUSY};
use crate::error::Result;
use crate::histograms::LatencyKind;
use crate::select::{self, Policy};

/// A thread that ended (or left the selection): its counts, taken out of
/// the kernel side, and what was known of it.
#[derive(Debug, Clone)]
pub(super) struct Ended {
    pub(super) tid: u32,
    pub(super) info: Option<ThreadInfo>,
    /// `(kind, bucket, count)`.
    pub(super) rows: Vec<(u32, u32, u64)>,
}

impl Session {
    /// Adds the tasks that match now, forgets the ones that ended (or, for
    /// `--comm`/`--rt` alone, no longer match), and takes the counts of
    /// every thread the kernel side no longer watches out of it.
    pub fn rescan(&mut self) -> Result<()> {
        self.last_scan = Instant::now();
        let command = self.command.as_ref().map(|c| c.child.id() as i32);
        self.own.refresh(self.own_pid, command);
        let selected = select::scan(&self.opts.selection, self.own_pid, command);
        let listed = self.side.watched();
        self.side.resync(&listed);
        let listed: BTreeSet<u32> = listed.into_iter().collect();
        for (&tid, t) in &selected {
            if !listed.contains(&(tid as u32)) {
                // A thread id given again: the last thread that had it is gone.
                self.fold_ended_tid(tid as u32);
                self.side.watch(tid as u32)?;
            }
            self.threads.insert(tid, ThreadInfo::of(t));
        }
        let strict = self.opts.selection.strict();
        for &tid in &listed {
            let t = tid as i32;
            if selected.contains_key(&t) {
                continue;
            }
            match select::thread_by_id(t) {
                // Ended, its end not seen by the kernel side (or the thread
                // left the selection): let it go.
                None => self.side.unwatch(tid),
                Some(_) if strict => self.side.unwatch(tid),
                // A thread the kernel added on fork: known from now on.
                Some(found) => {
                    if !self.threads.contains_key(&t) {
                        self.fold_ended_tid(tid);
                    }
                    self.threads.insert(t, ThreadInfo::of(&found));
                }
            }
        }
        // The kernel side's buckets of threads it no longer watches (they
        // ended, or left the selection) come here: its map holds the
        // threads alive. Read the watched set after the buckets: a thread
        // with buckets then was watched before they were read.
        let rows = self.side.histogram_counts();
        let still: BTreeSet<u32> = self.side.watched().into_iter().collect();
        let gone_rows: Vec<(u32, u32, u32, u64)> = rows
            .iter()
            .filter(|r| !still.contains(&r.0))
            .copied()
            .collect();
        self.rescan_every = if gone_rows.len() > BUSY_ROWS {
            RESCAN_BUSY
        } else {
            RESCAN
        };
        if !gone_rows.is_empty() {
            let mut by_tid: BTreeMap<u32, Vec<(u32, u32, u64)>> = BTreeMap::new();
            for (pid, kind, bucket, n) in self.side.take_rows(&gone_rows) {
                by_tid.entry(pid).or_default().push((kind, bucket, n));
            }
            for (tid, rows) in by_tid {
                // A thread measured though not in the set (a bit left over
                // by a race with user space's update of its word) is let
                // go too.
                self.side.unwatch(tid);
                let info = self.threads.remove(&(tid as i32));
                add_ended(&mut self.ended, Ended { tid, info, rows });
            }
        }
        self.threads.retain(|t, _| still.contains(&(*t as u32)));
        if !self.real_time_seen
            && self
                .threads
                .values()
                .any(|i| i.policy.is_some_and(Policy::real_time))
        {
            self.now_real_time();
        }
        while self.ended.len() > KEEP_ENDED {
            if let Some(oldest) = self.ended.pop_front() {
                self.fold_ended(oldest);
            }
        }
        Ok(())
    }

    /// Folds the thread that ended with id `tid`, if one is kept apart.
    pub(super) fn fold_ended_tid(&mut self, tid: u32) {
        if let Some(i) = self.ended.iter().position(|e| e.tid == tid) {
            if let Some(e) = self.ended.remove(i) {
                self.fold_ended(e);
            }
        }
    }

    /// Folds the counts, late windows and worst of a thread that ended into
    /// [`ENDED_TID`].
    pub(super) fn fold_ended(&mut self, e: Ended) {
        let t = e.tid as i32;
        for &(kind, bucket, n) in &e.rows {
            *self.folded.entry((kind, bucket)).or_default() += n;
            // What of it the last snapshot had counted moves with it, so
            // that the interval neither loses nor counts it twice.
            let Some(k) = LatencyKind::of(kind) else {
                continue;
            };
            let before = self
                .at_last_snapshot
                .get_mut(&(t, k))
                .and_then(|b| b.get_mut(&bucket))
                .map_or(0, |c| {
                    let moved = (*c).min(n);
                    *c -= moved;
                    moved
                });
            if before > 0 {
                *self
                    .at_last_snapshot
                    .entry((ENDED_TID, k))
                    .or_default()
                    .entry(bucket)
                    .or_default() += before;
            }
        }
        for kind in [LatencyKind::Thread, LatencyKind::Irq, LatencyKind::Wakeup] {
            if let Some(b) = self.at_last_snapshot.get_mut(&(t, kind)) {
                b.retain(|_, n| *n > 0);
                if b.is_empty() {
                    self.at_last_snapshot.remove(&(t, kind));
                }
            }
        }
        if let Some(live) = self.tasks.remove(&t) {
            let into = self.tasks.entry(ENDED_TID).or_default();
            into.late += live.late;
            if live
                .worst
                .is_some_and(|(w, _)| into.worst.is_none_or(|(i, _)| w > i))
            {
                into.worst = live.worst;
            }
        }
    }
}

/// Keeps the counts of a thread the kernel side no longer watches apart in
/// `ended`. Counts of a thread already kept (a sample the kernel counted
/// after its rows were taken: its last wake-up, on the way out) join its
/// row: they are the same thread (a new thread with its id is watched, and
/// the old one folded, when it is selected). Folding the kept row instead
/// put a run's whole thread into `(ended threads)` and left a row of one
/// sample under its bare id (the lab, rt-amd64).
fn add_ended(ended: &mut VecDeque<Ended>, mut e: Ended) {
    let Some(kept) = ended.iter_mut().find(|k| k.tid == e.tid) else {
        ended.push_back(e);
        return;
    };
    for (kind, bucket, n) in e.rows.drain(..) {
        match kept.rows.iter_mut().find(|r| r.0 == kind && r.1 == bucket) {
            Some(row) => row.2 += n,
            None => kept.rows.push((kind, bucket, n)),
        }
    }
    if kept.info.is_none() {
        kept.info = e.info;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_after_a_thread_was_kept_join_its_row() {
        let mut ended = VecDeque::new();
        let first = vec![(0, 10, 1981), (1, 7, 1982)];
        add_ended(
            &mut ended,
            Ended {
                tid: 214,
                info: None,
                rows: first,
            },
        );
        add_ended(
            &mut ended,
            Ended {
                tid: 300,
                info: None,
                rows: vec![(0, 10, 5)],
            },
        );
        add_ended(
            &mut ended,
            Ended {
                tid: 214,
                info: None,
                rows: vec![(0, 10, 1), (2, 3, 1)],
            },
        );
        let tids: Vec<u32> = ended.iter().map(|e| e.tid).collect();
        assert_eq!(
            tids,
            [214, 300],
            "one row per thread, in the order they ended"
        );
        assert_eq!(ended[0].rows, [(0, 10, 1982), (1, 7, 1982), (2, 3, 1)]);
        assert_eq!(ended[1].rows, [(0, 10, 5)]);
    }
}
