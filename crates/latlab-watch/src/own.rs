//! latlab's own threads in the windows a watch explains. The watch process
//! (every thread of it) and a latlab it started (`latlab watch -- latlab
//! run ...`) are the measuring tool: when one of them held a watched
//! thread's CPU, that is watch's cost, counted apart
//! ([`crate::document::Overhead::own_late_ns`]), and never one of the
//! causes, whose advice is about the system watched.

use std::collections::BTreeSet;

use latlab_explain::analyze::{categories, rank_causes, Context};
use latlab_explain::model::Names;
use latlab_explain::separate::Window;
use latlab_explain::{CategoryRow, CauseRow, Part, WindowReport};

/// Threads this many at most are remembered as latlab's own (latlab's
/// processes start a few).
const MAX_OWN: usize = 1024;

/// The thread ids of latlab's own processes seen so far.
#[derive(Debug, Clone, Default)]
pub struct OwnThreads {
    tids: BTreeSet<i32>,
}

impl OwnThreads {
    /// Adds the threads of process `own` (the watch) and of `command`, the
    /// process the watch started, when it is a latlab. Threads that ended
    /// stay known: their part in windows kept from before is still theirs.
    pub fn refresh(&mut self, own: i32, command: Option<i32>) {
        let latlab = command.filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end() == "latlab")
        });
        for pid in std::iter::once(own).chain(latlab) {
            for t in crate::select::threads_of(pid) {
                if self.tids.len() < MAX_OWN {
                    self.tids.insert(t.tid);
                }
            }
        }
    }

    /// Whether `pid` is one of latlab's own threads.
    pub fn contains(&self, pid: i32) -> bool {
        self.tids.contains(&pid)
    }

    /// Takes the parts that name one of latlab's own threads out of
    /// `parts`; returns the latency they accounted for (ns).
    pub fn set_apart(&self, parts: &mut Vec<Part>) -> u64 {
        let mut own = 0;
        parts.retain(|p| match p.cause.by_command().1 {
            Some(pid) if self.contains(pid) => {
                own += p.ns;
                false
            }
            _ => true,
        });
        own
    }
}

/// explain's analysis of windows with latlab's own part set apart.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// `parts[i]` decomposes `windows[i]`, without latlab's own part.
    pub parts: Vec<Vec<Part>>,
    /// The latency latlab's own threads account for in `windows[i]` (ns).
    pub own_ns: Vec<u64>,
    /// Causes ranked across the late windows.
    pub causes: Vec<CauseRow>,
    /// Causes summed by category.
    pub categories: Vec<CategoryRow>,
    /// A report of every late window in the order of `windows`, with
    /// latlab's own part in it (ns).
    pub reports: Vec<(WindowReport, u64)>,
}

/// Decomposes `windows` and ranks their causes as
/// [`latlab_explain::analyze_windows`] does (`rt`: a PREEMPT_RT kernel),
/// with latlab's own threads' part of each window set apart.
pub fn analyze(windows: &[Window], names: &Names, rt: bool, own: &OwnThreads) -> Analysis {
    let a = latlab_explain::analyze_windows(windows, names, rt);
    let mut parts = a.parts;
    let own_ns: Vec<u64> = parts.iter_mut().map(|ps| own.set_apart(ps)).collect();
    let ctx = Context::new(rt, windows, names);
    let causes = rank_causes(windows, &parts, names, &ctx);
    let categories = categories(windows, &parts);
    let late = windows
        .iter()
        .zip(parts.iter().zip(&own_ns))
        .filter(|(w, _)| w.late);
    let reports = a
        .windows
        .into_iter()
        .zip(late)
        .map(|(mut report, (_, (ps, &ns)))| {
            report.parts = ps.clone();
            (report, ns)
        })
        .collect();
    Analysis {
        parts,
        own_ns,
        causes,
        categories,
        reports,
    }
}
