//! Windows as they arrive: polled, turned into explanations, kept for the
//! ranked analysis.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use latlab_explain::model::Names;
use latlab_explain::{CategoryRow, Cause, CauseRow};

use super::threads::ThreadInfo;
use super::{
    Session, KEEP_BASELINE, KEEP_RECENT, KEEP_WORST, MAX_CAUSES, REAL_TIME_PRIO, WINDOWS_BUDGET,
};
use crate::document::*;
use crate::error::Result;
use crate::own::{self};
use crate::records::{comm_str, RawWindow};
use crate::select::{self};
use crate::window::to_window;

#[derive(Debug, Clone)]
pub(super) struct Kept {
    pub(super) raw: RawWindow,
    pub(super) at_ns: u64,
}

impl Session {
    /// Waits up to `timeout` for windows, handles those that came, rescans
    /// the selection when due. Returns the windows handled.
    pub fn poll(&mut self, timeout: Duration) -> Result<usize> {
        let n = self.take_what_came(timeout, Some(WINDOWS_BUDGET))?;
        if self.last_scan.elapsed() >= self.rescan_every {
            self.rescan()?;
        }
        Ok(n)
    }

    /// Waits up to `timeout`, then handles the windows that came (the
    /// tracefs side first reads and feeds every event up to now), for at
    /// most `budget`: windows that keep coming must not hold off the
    /// rescans, snapshots and the live view (those left wait in the ring
    /// buffer; when it is full, the kernel counts them as lost).
    pub(super) fn take_what_came(
        &mut self,
        timeout: Duration,
        budget: Option<Duration>,
    ) -> Result<usize> {
        self.side.wait(timeout)?;
        let until = budget.map(|b| Instant::now() + b);
        let mut n = 0;
        while let Some(w) = self.side.next_window() {
            self.take_window(w?);
            n += 1;
            if until.is_some_and(|u| Instant::now() >= u) {
                break;
            }
        }
        Ok(n)
    }

    pub(super) fn since_start(&self, mono_ns: u64) -> u64 {
        mono_ns.saturating_sub(self.start_mono_ns)
    }

    /// From now on only the late windows of real-time threads are ranked:
    /// those of the others kept so far are let go.
    pub(super) fn now_real_time(&mut self) {
        self.real_time_seen = true;
        let real_time = |k: &Kept| k.raw.head.prio < REAL_TIME_PRIO;
        self.kept_worst.retain(real_time);
        self.kept_recent.retain(real_time);
        self.kept_baseline.retain(real_time);
        // Every late window ranked so far was of another thread.
        self.cause_totals.clear();
        self.other_causes = (0, 0);
        self.own_late = (0, 0);
        self.interval_categories.clear();
    }

    pub(super) fn take_window(&mut self, raw: RawWindow) {
        let at_ns = self.since_start(raw.head.switch_at);
        let h = raw.head;
        // A thread not known yet (added on fork since the last rescan) is
        // named by its window; one that ended keeps what was known of it.
        if self.info(h.pid).is_none() {
            let info = select::thread_by_id(h.pid).map_or_else(
                || ThreadInfo {
                    comm: comm_str(&h.comm),
                    policy: None,
                    rt_priority: 0,
                },
                |t| ThreadInfo::of(&t),
            );
            self.threads.insert(h.pid, info);
        }
        let real_time = h.prio < REAL_TIME_PRIO;
        if real_time && !self.real_time_seen {
            self.now_real_time();
        }
        let ranked = real_time || !self.real_time_seen;
        if h.late {
            self.counts.late += 1;
            let lat = h.latency();
            let task = self.tasks.entry(h.pid).or_default();
            task.late += 1;
            if task.worst.is_none_or(|(w, _)| lat > w) {
                task.worst = Some((lat, at_ns));
            }
            if self.worst.is_none_or(|(w, _)| lat > w) {
                self.worst = Some((lat, at_ns));
            }
            if !real_time {
                self.counts.not_real_time += 1;
            }
        } else {
            self.counts.baseline += 1;
        }
        if !ranked {
            return;
        }
        let mut names = Names::new();
        let (window, truncated) = to_window(
            &raw,
            &mut names,
            &self.irqs,
            &mut self.comms,
            &mut self.functions,
        );
        if truncated {
            self.counts.truncated += 1;
        }
        if !h.late {
            self.kept_baseline.push_back(Kept { raw, at_ns });
            if self.kept_baseline.len() > KEEP_BASELINE {
                self.kept_baseline.pop_front();
            }
            return;
        }
        // This window's causes, by explain's analysis of it alone, latlab's
        // own part set apart; grouped by command as explain ranks them, so
        // the totals do not grow with every short-lived pid.
        let a = own::analyze(
            std::slice::from_ref(&window),
            &names,
            self.rt_kernel,
            &self.own,
        );
        let own_ns = a.own_ns.first().copied().unwrap_or(0);
        if own_ns > 0 {
            self.own_late.0 += 1;
            self.own_late.1 += own_ns;
        }
        let mut grouped: BTreeMap<Cause, u64> = BTreeMap::new();
        for p in a.parts.first().into_iter().flatten() {
            *grouped.entry(p.cause.by_command().0).or_default() += p.ns;
        }
        // The largest cause (explain's order: latency, then the cause).
        if let Some((top, _)) = grouped
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        {
            *self
                .interval_categories
                .entry(top.category().to_string())
                .or_default() += 1;
        }
        for (cause, ns) in grouped {
            let key = (cause.category().to_string(), cause.describe());
            if self.cause_totals.len() >= MAX_CAUSES && !self.cause_totals.contains_key(&key) {
                self.other_causes.0 += 1;
                self.other_causes.1 += ns;
                continue;
            }
            let t = self.cause_totals.entry(key).or_default();
            t.0 += 1;
            t.1 += ns;
        }
        let kept = Kept { raw, at_ns };
        self.kept_recent.push_back(kept.clone());
        if self.kept_recent.len() > KEEP_RECENT {
            self.kept_recent.pop_front();
        }
        self.kept_worst.push(kept);
        if self.kept_worst.len() > KEEP_WORST * 2 {
            self.kept_worst
                .sort_by_key(|k| std::cmp::Reverse(k.raw.head.latency()));
            self.kept_worst.truncate(KEEP_WORST);
        }
    }

    /// Explain's ranked analysis of the windows kept: causes, categories,
    /// and the reports of the worst windows (with when they happened),
    /// latlab's own part set apart.
    pub fn analysis(&mut self) -> (Vec<CauseRow>, Vec<CategoryRow>, Vec<WatchedWindow>, u64) {
        let mut chosen: Vec<&Kept> = Vec::new();
        let mut seen = BTreeSet::new();
        for k in self
            .kept_worst
            .iter()
            .chain(self.kept_recent.iter())
            .chain(self.kept_baseline.iter())
        {
            if seen.insert((k.raw.head.pid, k.raw.head.switch_at)) {
                chosen.push(k);
            }
        }
        let mut names = Names::new();
        let mut windows = Vec::with_capacity(chosen.len());
        let mut complete = Vec::with_capacity(chosen.len());
        for k in &chosen {
            let (w, cut) = to_window(
                &k.raw,
                &mut names,
                &self.irqs,
                &mut self.comms,
                &mut self.functions,
            );
            windows.push(w);
            complete.push(!cut);
        }
        let a = own::analyze(&windows, &names, self.rt_kernel, &self.own);
        // a.reports holds the late ones in the order of `windows`.
        let late_at: Vec<(u64, bool)> = chosen
            .iter()
            .zip(&complete)
            .filter(|(k, _)| k.raw.head.late)
            .map(|(k, &c)| (k.at_ns, c))
            .collect();
        let mut reports: Vec<WatchedWindow> = a
            .reports
            .into_iter()
            .zip(late_at)
            .map(|((window, watch_ns), (at_ns, complete))| WatchedWindow {
                at_ns,
                complete,
                window,
                watch_ns,
            })
            .collect();
        reports.sort_by_key(|w| std::cmp::Reverse(w.window.latency_ns));
        reports.truncate(KEEP_WORST);
        (a.causes, a.categories, reports, windows.len() as u64)
    }
}
