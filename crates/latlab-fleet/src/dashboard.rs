//! The dashboard's model: the stored results set against each other, per
//! [`Series`] (the results of one comparable group: the same board, kind,
//! variant, kernel, preemption model and load), never across kinds. The
//! views built here are what latlab-report's dashboard renders.

use std::collections::HashMap;

use latlab_report::dashboard::{
    BoardFilters, BoardSummary, BoardView, Entry, FleetView, Regression, ResultRow, Series,
    SeriesSummary, Trend, BASELINE_RUNS,
};

/// How many of a series' last results its trend line shows.
pub const TREND_RESULTS: usize = 30;

/// How many results before the latest its trend is judged against.
pub const TREND_PRIOR: usize = 10;

/// The results of one series whose worst latency exceeds the series'
/// baseline by more than `threshold` (0.5: 50 %). The baseline is the
/// median worst latency of the series' first [`BASELINE_RUNS`] results
/// that have one; those are not flagged. A series is one comparable group,
/// so a new kernel, load or kind starts a new baseline.
pub fn regressions(series: &Series, threshold: f64) -> Vec<Regression> {
    let measured: Vec<(i64, u64)> = series
        .entries
        .iter()
        .filter_map(|e| Some((e.id, e.max_ns?)))
        .collect();
    let mut first: Vec<u64> = measured
        .iter()
        .take(BASELINE_RUNS)
        .map(|&(_, max)| max)
        .collect();
    if first.is_empty() {
        return Vec::new();
    }
    first.sort_unstable();
    let baseline = first[first.len() / 2];
    measured
        .iter()
        .skip(BASELINE_RUNS)
        .filter(|&&(_, max)| max as f64 > baseline as f64 * (1.0 + threshold))
        .map(|&(id, max_ns)| Regression {
            id,
            baseline_ns: baseline,
            max_ns,
        })
        .collect()
}

/// The latest of `worst` (oldest first) against the median of the (up
/// to [`TREND_PRIOR`]) before it; `None` when there is none.
pub fn trend(worst: &[u64]) -> Option<Trend> {
    let (&last, before) = worst.split_last()?;
    let mut prior: Vec<u64> = before.iter().rev().take(TREND_PRIOR).copied().collect();
    if prior.is_empty() {
        return Some(Trend::First);
    }
    prior.sort_unstable();
    let median = prior[prior.len() / 2].max(1) as f64;
    Some(Trend::Change((last as f64 / median - 1.0) * 100.0))
}

/// The fleet page: each board's results (in any order) split into series,
/// with the latest result, trend and regressions of each.
pub fn fleet_view(boards: &[(String, Vec<Entry>)], threshold: f64) -> FleetView {
    let mut view = FleetView {
        boards: Vec::new(),
        results: 0,
        regressions: 0,
        threshold,
    };
    for (name, entries) in boards {
        view.results += entries.len();
        let series: Vec<SeriesSummary> = Series::split(entries)
            .into_iter()
            .map(|s| {
                let worst: Vec<u64> = s
                    .entries
                    .iter()
                    .rev()
                    .take(TREND_RESULTS)
                    .rev()
                    .filter_map(|r| r.max_ns)
                    .collect();
                SeriesSummary {
                    latest: s.latest().expect("a series has a result").clone(),
                    results: s.entries.len(),
                    trend: trend(&worst),
                    worst,
                    regressions: regressions(&s, threshold).len(),
                    group: s.group,
                }
            })
            .collect();
        view.regressions += series.iter().map(|s| s.regressions).sum::<usize>();
        let first = entries.first();
        view.boards.push(BoardSummary {
            name: name.clone(),
            host: first.and_then(|e| e.host.clone()),
            arch: first.and_then(|e| e.arch.clone()),
            series,
        });
    }
    view
}

/// The choices `entries` offer, with the chosen `kind`, `kernel` and
/// `load` (empty values: any).
pub fn board_filters(
    entries: &[Entry],
    kind: Option<&str>,
    kernel: Option<&str>,
    load: Option<&str>,
) -> BoardFilters {
    let values = |f: &dyn Fn(&Entry) -> Option<String>| {
        let mut v: Vec<String> = entries.iter().filter_map(f).collect();
        v.sort();
        v.dedup();
        v
    };
    let chosen = |v: Option<&str>| v.filter(|v| !v.is_empty()).map(str::to_string);
    BoardFilters {
        kinds: values(&|e| Some(e.kind().to_string())),
        kernels: values(&|e| e.kernel.clone()),
        loads: values(&|e| Some(e.load.clone().unwrap_or_else(|| "none".into()))),
        kind: chosen(kind),
        kernel: chosen(kernel),
        load: chosen(load),
    }
}

/// Whether a result passes the chosen filters.
pub fn keeps(filters: &BoardFilters, entry: &Entry) -> bool {
    filters.kind.as_deref().is_none_or(|k| entry.kind() == k)
        && filters
            .kernel
            .as_deref()
            .is_none_or(|k| entry.kernel.as_deref() == Some(k))
        && filters
            .load
            .as_deref()
            .is_none_or(|l| entry.load.as_deref().unwrap_or("none") == l)
}

/// A board's page: of all its results, those `filters` keep, newest
/// first, each with its regression and the result before it in its series.
pub fn board_view(name: &str, all: Vec<Entry>, filters: BoardFilters, threshold: f64) -> BoardView {
    let shown: Vec<Entry> = all.into_iter().filter(|e| keeps(&filters, e)).collect();
    let series = Series::split(&shown);
    let mut flagged = HashMap::new();
    let mut previous = HashMap::new();
    for s in &series {
        flagged.extend(regressions(s, threshold).into_iter().map(|r| (r.id, r)));
        for pair in s.entries.windows(2) {
            previous.insert(pair[1].id, pair[0].id);
        }
    }
    let regression_count = flagged.len();
    let mut newest_first = shown;
    newest_first.sort_by(|a, b| b.started_at.cmp(&a.started_at).then(b.id.cmp(&a.id)));
    BoardView {
        name: name.to_string(),
        filters,
        series,
        results: newest_first
            .into_iter()
            .map(|entry| ResultRow {
                regression: flagged.remove(&entry.id),
                previous: previous.get(&entry.id).copied(),
                entry,
            })
            .collect(),
        regressions: regression_count,
        threshold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_history::fixtures::{entry, run_entry};
    use latlab_report::dashboard::{board_page, fleet_page};

    fn flagged(entries: &[Entry]) -> Vec<Regression> {
        Series::split(entries)
            .iter()
            .flat_map(|s| regressions(s, 0.5))
            .collect()
    }

    #[test]
    fn regressions_are_judged_per_kernel_against_its_first_runs() {
        let mut runs: Vec<Entry> = (1..=5)
            .map(|i| run_entry(i, "6.1", 40 + i as u64))
            .collect();
        runs.extend((6..=10).map(|i| run_entry(i, "6.6", 200)));
        runs.push(run_entry(11, "6.1", 60)); // 43 baseline: +40 %, under 50 %
        runs.push(run_entry(12, "6.1", 70)); // +63 %: flagged
        runs.push(run_entry(13, "6.6", 250)); // +25 % on its own kernel: not flagged
        runs.push(run_entry(14, "6.6", 400)); // 2x: flagged
        let found = flagged(&runs);
        let ids: Vec<i64> = found.iter().map(|r| r.id).collect();
        assert_eq!(ids, [12, 14]);
        assert_eq!(found[0].baseline_ns, 43_000);
        assert_eq!(found[1].baseline_ns, 200_000);
    }

    #[test]
    fn other_kinds_are_never_judged_against_a_run_baseline() {
        let mut results: Vec<Entry> = (1..=6).map(|i| run_entry(i, "6.6", 40)).collect();
        results.push(entry(7, "latlab.respond", "6.6", Some(580)));
        results.push(entry(8, "latlab.watch", "6.6", Some(500)));
        results.push(entry(9, "latlab.lockbench", "6.6", None));
        assert!(flagged(&results).is_empty());
        let page = fleet_page(&fleet_view(&[("b".to_string(), results)], 0.5));
        assert!(page.contains("0 regressions"), "{page}");
        // One row per kind, each with its own latest.
        for (kind, worst) in [("run", "40.0"), ("respond", "580.0"), ("watch", "500.0")] {
            let row = page
                .lines()
                .find(|l| l.contains(&format!("<td class=\"l\">{kind}</td>")))
                .unwrap_or_else(|| panic!("a {kind} row: {page}"));
            assert!(row.contains(&format!("<td>{worst}</td>")), "{row}");
        }
    }

    #[test]
    fn pages_escape_names_and_link_encoded() {
        let name = "x'); DROP TABLE results; --<script>&\"";
        let mut r = run_entry(1, "6.6<i>", 50);
        r.board = Some(name.into());
        let fleet = fleet_page(&fleet_view(&[(name.to_string(), vec![r.clone()])], 0.5));
        assert!(!fleet.contains("<script>") && !fleet.contains("<i>"));
        assert!(fleet.contains("x&#39;); DROP TABLE results; --&lt;script&gt;&amp;&quot;"));
        assert!(
            fleet.contains("/board/x%27%29%3B%20DROP%20TABLE%20results%3B%20--%3Cscript%3E%26%22")
        );
        let filters = board_filters(std::slice::from_ref(&r), None, None, None);
        let board = board_page(&board_view(name, vec![r], filters, 0.5));
        assert!(!board.contains("<i>") && !board.contains("<script>"));
        assert!(board.contains("<svg"), "the long-term plot");
    }

    #[test]
    fn filters_keep_the_chosen_kind_kernel_and_load() {
        let results = [
            run_entry(1, "6.6", 40),
            entry(2, "latlab.watch", "6.6", Some(50)),
            run_entry(3, "6.12", 40),
        ];
        let filters = board_filters(&results, Some("run"), Some(""), Some("none"));
        assert_eq!(filters.kinds, ["run", "watch"]);
        assert_eq!(filters.kernel, None);
        let kept: Vec<i64> = results
            .iter()
            .filter(|r| keeps(&filters, r))
            .map(|r| r.id)
            .collect();
        assert_eq!(kept, [1, 3]);
    }

    #[test]
    fn the_trend_sets_the_latest_against_the_median_before_it() {
        assert_eq!(trend(&[]), None);
        assert_eq!(trend(&[40]), Some(Trend::First));
        // The median of the ten before, not of all eleven earlier ones.
        let mut worst = vec![1_000];
        worst.extend([40, 40, 40, 40, 40, 50, 50, 50, 50, 50, 75]);
        assert_eq!(trend(&worst), Some(Trend::Change(50.0)));
    }

    #[test]
    fn a_board_lists_newest_first_with_the_one_before_in_its_series() {
        let mut results: Vec<Entry> = (1..=6).map(|i| run_entry(i, "6.6", 40)).collect();
        results.push(run_entry(7, "6.6", 100));
        results.push(entry(8, "latlab.watch", "6.6", Some(50)));
        let filters = board_filters(&results, None, None, None);
        let view = board_view("b", results, filters, 0.5);
        let ids: Vec<i64> = view.results.iter().map(|r| r.entry.id).collect();
        assert_eq!(ids, [8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(view.results[0].previous, None, "a watch is not after a run");
        assert_eq!(view.results[1].previous, Some(6));
        assert_eq!(view.regressions, 1);
        assert_eq!(
            view.results[1].regression.as_ref().map(|r| r.baseline_ns),
            Some(40_000)
        );
        assert_eq!(view.series.len(), 2);
    }
}
