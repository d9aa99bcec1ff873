//! A writer killed with SIGKILL while inserting never costs earlier entries.
//!
//! The test re-runs its own binary as the writer (env LATLAB_HISTORY_WRITER
//! names the database); the writer inserts large run results in a loop
//! until it is killed at an arbitrary moment.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use latlab_history::History;
use latlab_measure::engine::{MeasureOutput, ThreadOutput};
use latlab_measure::period::PeriodTracker;
use latlab_measure::result::{RunContext, RunResult, RunSettings};
use latlab_measure::stats::Stats;
use latlab_measure::timer::TimerKind;
use latlab_measure::worst::WorstSamples;
use latlab_rt::sched::Policy;
use latlab_rt::sysinfo::SystemInfo;

/// A run whose histogram has tens of thousands of buckets, so that one
/// insert writes a few MB and a kill often lands inside it.
fn big_run() -> RunResult {
    let mut stats = Stats::new();
    for i in 0..200_000u64 {
        stats.record(1_000 + i * 37 % 3_000_000);
    }
    let thread = ThreadOutput {
        cpu: 0,
        interval_ns: 1_000_000,
        policy: Some(Policy::Fifo),
        priority: 95,
        affinity: vec![0],
        stats,
        worst: WorstSamples::new(20),
        series: Vec::new(),
        period: PeriodTracker::new(1_000_000, 50_000),
        cycles: 200_000,
        missed_periods: 0,
        early_wakeups: 0,
        max_early_ns: 0,
        uncertain_expiries: 0,
    };
    let output = MeasureOutput {
        threads: vec![thread],
        start_ns: 0,
        end_ns: 200_000_000_000,
        interrupted: false,
        samples_written: None,
        samples_error: None,
    };
    let system = SystemInfo {
        hostname: "crash-test".into(),
        ..SystemInfo::default()
    };
    let envelope =
        latlab_document::Envelope::at(vec!["latlab".into(), "run".into()], 1_795_312_479.0, system);
    let context = RunContext {
        envelope,
        settings: RunSettings {
            cpus: vec![0],
            interval_ns: 1_000_000,
            interval_step_ns: 0,
            timer: TimerKind::ClockNanosleep,
            policy: Policy::Fifo,
            priority: 95,
            duration_s: Some(200.0),
            loops: None,
            period_tolerance: 0.05,
            cpu_dma_latency_us: None,
            mlocked: true,
            unprivileged: false,
            steal_ns: Vec::new(),
        },
    };
    RunResult::assemble(&output, context, &[])
}

/// The writer: inserts until killed. Does nothing in a normal test run.
#[test]
fn writer_child() {
    let Some(db) = std::env::var_os("LATLAB_HISTORY_WRITER") else {
        return;
    };
    let mut run = big_run();
    let mut history = History::open(Path::new(&db)).unwrap();
    loop {
        // A new result each time (the same one would be stored once).
        run.id = Some(latlab_document::new_id());
        history.insert_run(&run).unwrap();
    }
}

fn rows(db: &Path) -> usize {
    History::open(db)
        .map(|h| h.list(None).unwrap().len())
        .unwrap_or(0)
}

#[test]
fn killed_writer_leaves_earlier_results_intact() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite");
    let mut expected = serde_json::to_value(big_run()).unwrap();
    // Each insert has an id of its own, compared apart.
    expected.as_object_mut().unwrap().remove("id");
    let mut seen = 0;
    for round in 0..4u64 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "writer_child", "--nocapture", "--test-threads=1"])
            .env("LATLAB_HISTORY_WRITER", &db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Let it commit at least two more, then kill it at a moment that
        // varies with the round (inside an insert most of the time).
        let start = Instant::now();
        while rows(&db) < seen + 2 {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the writer makes no progress"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(3 + round * 7));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let history = History::open(&db).expect("the database opens after the kill");
        assert_eq!(
            history.check().unwrap(),
            Vec::<String>::new(),
            "integrity check"
        );
        let list = history.list(None).unwrap();
        assert!(
            list.len() >= seen + 2,
            "round {round}: {} rows, saw {}",
            list.len(),
            seen + 2
        );
        // Every entry is whole: the complete document, as written.
        for entry in &list {
            assert_eq!(entry.host.as_deref(), Some("crash-test"));
            let mut stored = history.get(entry.id).unwrap();
            assert_eq!(stored["id"].as_str(), Some(entry.uid.as_str()));
            stored.as_object_mut().unwrap().remove("id");
            assert_eq!(stored, expected, "entry {}", entry.id);
        }
        seen = list.len();
    }
}
