//! Snapshot tests of the report: its structure (plots reduced to one line)
//! and each plot's SVG, on the deterministic fixture.

use latlab_document::{ExplainDocument, RespondResult, RunDocument, SimReport};
use latlab_load::{KindReport, LoadReport};
use latlab_measure::series::SeriesPoint;
use latlab_measure::stats::Stats;

use super::*;
use crate::fixture::sample_result;

/// The fixture with a per-second series and a background load report.
fn loaded_run() -> RunDocument {
    let mut run = RunDocument::new(sample_result());
    for (t, thread) in run.result.threads.iter_mut().enumerate() {
        thread.series = (0..10u64)
            .map(|s| SeriesPoint {
                start_s: s as f64,
                width_s: 1.0,
                count: 1000,
                max_ns: 38_000 + s * 1_000 + if t == 1 && s == 8 { 3_382_000 } else { 0 },
                p99_ns: 37_500 + s * 50,
            })
            .collect();
    }
    let kind =
        |kind: &str, workers: usize, total: u64, per_second: f64, series: Vec<f64>| KindReport {
            kind: kind.into(),
            workers,
            unit: if kind == "cpu" { "ops" } else { "bytes" }.into(),
            total,
            per_second,
            series,
            us_per_kib: None,
        };
    run.load = Some(LoadReport {
        spec: "io:1,net:1".into(),
        command: None,
        duration_s: 10.0,
        interval_s: 1.0,
        kinds: vec![
            kind("cpu", 0, 0, 0.0, Vec::new()),
            kind(
                "io",
                1,
                2_850_000_000,
                285_000_000.0,
                vec![
                    280e6, 290e6, 300e6, 270e6, 285e6, 285e6, 250e6, 310e6, 295e6, 285e6,
                ],
            ),
            kind(
                "net",
                1,
                5_625_000_000,
                562_500_000.0,
                vec![
                    560e6, 565e6, 562e6, 563e6, 562e6, 561e6, 560e6, 565e6, 564e6, 563e6,
                ],
            ),
        ],
        external: None,
        warnings: vec!["the io load ran on tmpfs".into()],
    });
    run
}

/// A second run that is worse: every sample shifted up by 20 µs, less io.
fn worse_run() -> RunDocument {
    let mut run = loaded_run();
    let mut all = Stats::new();
    for b in run.overall.histogram.buckets() {
        for _ in 0..b.count {
            all.record(b.low + 20_000);
        }
    }
    run.result.overall.latency = all.summary();
    run.result.overall.histogram = all.histogram().clone();
    run.result.system.kernel_release = "6.18.0-rt".into();
    if let Some(load) = &mut run.load {
        load.kinds[1].per_second = 142_600_000.0;
    }
    run
}

/// The page with each `<svg>` element replaced by its id and size.
fn structure(html: &str) -> String {
    let html = html.replace(env!("CARGO_PKG_VERSION"), "[version]");
    let mut out = String::new();
    let mut rest = html.as_str();
    while let Some(start) = rest.find("<svg ") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("</svg>").expect("closed svg") + start + 6;
        let svg = &rest[start..end];
        let label = svg
            .split("aria-label=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("?");
        out.push_str(&format!(
            "<svg [{label}]: {} paths, {} texts/>",
            svg.matches("<path").count(),
            svg.matches("<text").count()
        ));
        rest = &rest[end..];
    }
    out.push_str(rest);
    // The style sheet is not structure.
    let (a, b) = out.split_once("<style>").unwrap();
    let (_, c) = b.split_once("</style>").unwrap();
    format!("{a}<style>[css]</style>{c}")
}

fn entry(label: &str, run: impl Into<RunDocument>) -> Entry {
    Entry {
        label: label.into(),
        document: Document::Run(Box::new(run.into())),
    }
}

#[test]
fn single_run_report_structure_snapshot() {
    let html = render(&[entry("board", loaded_run())], "latlab report");
    insta::assert_snapshot!(structure(&html));
}

#[test]
fn single_run_svg_plot_snapshots() {
    let all = plots(&[entry("board", loaded_run())]);
    let ids: Vec<&str> = all.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "run1-histogram",
            "run1-tail",
            "run1-time",
            "run1-period",
            "run1-load"
        ]
    );
    for plot in &all {
        insta::assert_snapshot!(plot.id.clone(), plot.to_svg());
    }
}

#[test]
fn comparison_report_structure_snapshot() {
    let html = render(
        &[
            entry("no load", loaded_run()),
            entry("rt kernel", worse_run()),
        ],
        "latlab comparison",
    );
    insta::assert_snapshot!(structure(&html));
    let all = plots(&[entry("a", loaded_run()), entry("b", worse_run())]);
    insta::assert_snapshot!("compare-tail", all[1].to_svg());
}

#[test]
fn comparison_names_the_baseline_and_colours_deltas() {
    let base = loaded_run();
    let worse = worse_run();
    let html = render(
        &[
            entry("no load", base.clone()),
            entry("rt kernel", worse.clone()),
        ],
        "t",
    );
    assert!(html.contains("Baseline: <b>no load</b>"));
    // p50 grows by 20 µs on a base of about 21 µs: a worse (red) change.
    let pct = (worse.overall.latency.p50 as f64 - base.overall.latency.p50 as f64)
        / base.overall.latency.p50 as f64
        * 100.0;
    assert!(
        html.contains(&format!("<td class=\"worse\">{pct:+.1} %</td>")),
        "{pct}"
    );
    // io throughput halved.
    assert!(html.contains("io 143 MB/s (-50.0 %)"));
}

#[test]
fn report_is_self_contained() {
    let html = render(
        &[entry("a", loaded_run()), entry("b", worse_run())],
        "latlab report",
    );
    // The only URL is the SVG namespace.
    assert_eq!(
        html.matches("http").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(!html.contains("<script src") && !html.contains("<link"));
    assert!(!html.contains("NaN") && !html.contains("inf"));
    // One clip path per plot, no duplicate ids.
    assert_eq!(html.matches("<clipPath").count(), 12);
}

#[test]
fn other_schemas_are_shown_as_json_and_labels_tell_runs_apart() {
    let doc = Document::parse(r#"{"schema":"latlab.future","x":1}"#).unwrap();
    assert!(matches!(&doc, Document::Other { schema, .. } if schema == "latlab.future"));
    let text = serde_json::to_string(&sample_result()).unwrap();
    let run = Document::parse(&text).unwrap();
    assert!(run.as_run().is_some());
    let labels = auto_labels(&[run.clone(), Document::Run(Box::new(worse_run())), doc]);
    assert_eq!(
        labels,
        [
            "6.18.0-test, no load",
            "6.18.0-rt, load io:1,net:1",
            "latlab.future"
        ]
    );
    let same = auto_labels(&[run.clone(), run]);
    assert_eq!(same, ["2026-11-22T01:54:39Z #1", "2026-11-22T01:54:39Z #2"]);
}

#[test]
fn intro_paragraphs_come_first_and_are_escaped() {
    let html = render_with_intro(
        &[entry("a", loaded_run()), entry("b", worse_run())],
        "scenario",
        &["Figures 1 to 4 <paper>".to_string()],
    );
    let intro = html
        .find("<p>Figures 1 to 4 &lt;paper&gt;</p>")
        .expect("intro");
    assert!(intro < html.find("<h2>Comparison</h2>").unwrap());
    assert!(!render(&[entry("a", loaded_run())], "t").contains("id=\"intro\""));
}

#[test]
fn an_opening_table_comes_first_with_met_and_missed_badges() {
    let opening = Opening {
        heading: Some("Does this machine meet a deadline?".into()),
        columns: vec!["requirement class".into(), "idle".into(), "loaded".into()],
        rows: vec![vec![
            Cell::Text("Emblix class 2 (< 1 ms)".into()),
            Cell::Met(true),
            Cell::Met(false),
        ]],
        paragraphs: vec!["The answer.".into()],
    };
    let html = render_with_opening(
        &[entry("a", loaded_run()), entry("b", worse_run())],
        "t",
        &opening,
    );
    let section = html.find("<section").unwrap();
    assert_eq!(
        Some(section),
        html.find("<section class=\"compare\" id=\"intro\">")
    );
    let table = html.find("<table class=\"opening\">").expect("the table");
    assert!(section < table && table < html.find("<p>The answer.</p>").unwrap());
    assert!(html.contains(
        "<td class=\"l\">Emblix class 2 (&lt; 1 ms)</td><td><span class=\"badge pass\">met</span></td>\
         <td><span class=\"badge fail\">MISSED</span></td>"
    ));
}

/// Regression guard: a run stopped before its first sample (Ctrl-C at once)
/// still renders, with no NaN or infinite coordinate.
#[test]
fn a_run_without_samples_renders() {
    let mut run = sample_result();
    let empty = latlab_measure::histogram::Histogram::new();
    for t in &mut run.threads {
        t.histogram = empty.clone();
        t.latency = Default::default();
        t.series.clear();
    }
    run.overall.histogram = empty;
    run.overall.latency = Default::default();
    run.overall.period.count = 0;
    run.overall.worst.clear();
    let html = render(&[entry("a", run.clone()), entry("b", run)], "empty");
    assert!(!html.contains("NaN") && !html.contains("inf"));
    assert!(
        html.contains("<td>–</td>"),
        "no change against a zero baseline"
    );
}

#[test]
fn early_wake_ups_are_named_and_the_badge_says_suspect() {
    let run = crate::fixture::sample_result_with_early(3, 99_000);
    let html = render(&[entry("a", run)], "early");
    assert!(html.contains("SUSPECT: early wake-ups"), "badge");
    assert!(
        html.contains("Early wake-ups: 3 on CPU0, up to 99.0 us"),
        "the warning names the count and how early"
    );
}

#[test]
fn explain_results_are_drawn_as_bars_and_ranked_causes() {
    let mut run = RunDocument::new(sample_result());
    let fixture: ExplainDocument = serde_json::from_str(include_str!(
        "../../../latlab/tests/fixtures/results/explain.json"
    ))
    .unwrap();
    let mut explain = fixture.report;
    explain.late = 3;
    explain.periods = 1000;
    explain.threshold_ns = 100_000;
    explain.categories.truncate(2);
    explain.categories[0].category = "softirq".into();
    explain.categories[0].share = 0.75;
    explain.categories[1].category = "unexplained".into();
    explain.categories[1].share = 0.25;
    let mut first = explain.causes[0].clone();
    first.description = "softirq NET_RX <ran first>".into();
    (first.late_windows, first.normal_windows, first.late_ns) = (3, 1, 450_000);
    first.share = 0.75;
    first.recommendation = "threaded NAPI".into();
    first.pids.clear();
    let mut second = first.clone();
    second.description = "dd (6 pids) ran".into();
    (second.late_windows, second.normal_windows, second.late_ns) = (2, 0, 120_000);
    second.share = 0.2;
    second.recommendation = "move dd".into();
    second.pids = [
        (41, 60_000),
        (42, 20_000),
        (43, 15_000),
        (44, 10_000),
        (45, 10_000),
        (46, 5_000),
    ]
    .into_iter()
    .map(|(pid, late_ns)| latlab_explain::PidRow {
        pid,
        late_ns,
        late_windows: 1,
    })
    .collect();
    explain.causes = vec![first, second];
    run.explain = Some(explain);
    let html = render(&[entry("board", run)], "t");
    assert!(
        html.contains("Why wake-ups were late"),
        "no explain section"
    );
    assert!(html.contains("3 late of 1000 periods"));
    assert!(html.contains("width:225.0px"), "a 75 % bar");
    // Text from the trace is escaped.
    assert!(html.contains("softirq NET_RX &lt;ran first&gt;"));
    assert!(html.contains("450 us in late windows (75 % of their latency)<br><i>"));
    // A cause of several processes lists the top five pids.
    assert!(
        html.contains(
            "6 pids, most first: 41 60.0 us, 42 20.0 us, 43 15.0 us, 44 10.0 us, 45 10.0 us, ..."
        ),
        "{html}"
    );
    // Without an explanation there is no such section.
    assert!(!render(&[entry("board", sample_result())], "t").contains("Why wake-ups were late"));
}

#[test]
fn respond_results_are_drawn_with_both_directions() {
    let run = sample_result();
    let mut respond: RespondResult = serde_json::from_str(include_str!(
        "../../../latlab/tests/fixtures/results/respond-pty.json"
    ))
    .unwrap();
    respond.settings.channel = "pty".into();
    respond.settings.channel_description = "raw pseudo-terminal <pair>".into();
    (
        respond.events_sent,
        respond.events_answered,
        respond.events_lost,
    ) = (10000, 10000, 0);
    for part in [&mut respond.one_way, &mut respond.round_trip] {
        part.latency = run.threads[1].latency;
        part.histogram = run.threads[1].histogram.clone();
    }
    respond.requirements = run.requirements.clone();
    respond.requirements[0].details =
        vec!["FAIL: round-trip max 3.42 ms > 40.0 us (event 8123)".into()];
    let value = serde_json::to_value(&respond).unwrap();
    let doc = Document::from_value(value).unwrap();
    assert!(matches!(doc, Document::Respond(_)));
    let labels = auto_labels(std::slice::from_ref(&doc));
    assert_eq!(labels, ["respond pty"]);
    let html = render(
        &[Entry {
            label: "pty".into(),
            document: doc,
        }],
        "t",
    );
    assert!(html.contains("raw pseudo-terminal &lt;pair&gt;"));
    assert!(html.contains("10000 events sent, 10000 answered, 0 lost"));
    assert!(html.contains("FAIL: round-trip max 3.42 ms"));
    assert!(
        html.contains("<td class=\"l\">one-way</td>")
            && html.contains("<td class=\"l\">round-trip</td>")
    );
    // Two plots (histogram, tail) with both directions.
    assert_eq!(html.matches("<clipPath").count(), 2);
    assert!(!html.contains("its JSON follows"));
}

#[test]
fn simulation_results_are_drawn_next_to_the_papers_table() {
    let mut simulation: SimReport = serde_json::from_str(include_str!(
        "../../../latlab/tests/fixtures/results/lockbench-sim.json"
    ))
    .unwrap();
    let c = &mut simulation.comparison;
    (c.config.rt_period_ns, c.config.periods, c.config.seed) = (4_000_000, 10_000, 1);
    for (run, max, mean, kb) in [
        (&mut c.without, 1_000_000, 185_000.0, 100.0),
        (&mut c.with, 250_000, 67_000.0, 75.0),
    ] {
        (run.latency.min, run.latency.max, run.latency.mean) = (22_000, max, mean);
        run.kb_per_s = kb;
        (run.refusals, run.forced_entries) = (7, 1);
    }
    let value = serde_json::to_value(&simulation).unwrap();
    let doc = Document::from_value(value).unwrap();
    assert!(matches!(doc, Document::Simulation(_)));
    let html = render(
        &[Entry {
            label: "simulator".into(),
            document: doc,
        }],
        "t",
    );
    assert!(html.contains("worst case, without delayed locking</td><td>1000 µs</td><td>847 µs"));
    assert!(html.contains("worst case with / without</td><td>25 %</td><td>23 %"));
    assert!(html.contains("sender slowdown</td><td>25 %</td><td>20 %"));
    assert!(html.contains("7 / 1"));
    assert!(!html.contains("its JSON follows"));
}
