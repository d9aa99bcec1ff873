//! `latlab report` driven through the real binary on results of real
//! `latlab run`s and of the real cyclictest (and the peer files of
//! crates/latlab-peers/tests/fixtures), and the report opened in a real
//! headless Chromium.

mod common;
use common::chromium::{self, headless};
use common::{assert_error, assert_success, latlab};

use latlab_measure::units::format_ns;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Where this test binary keeps its results and the screenshot.
fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("latlab-report-test");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two real results, made once: an idle run and one under a cpu+io load.
fn results() -> &'static (PathBuf, PathBuf) {
    static RESULTS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    RESULTS.get_or_init(|| {
        let dir = work_dir();
        let run = |name: &str, extra: &[&str]| {
            let json = dir.join(name);
            let _ = std::fs::remove_file(&json);
            let output = latlab()
                .current_dir(&dir)
                .args(["run", "--quiet", "--no-save", "--allow-unprivileged"])
                .args(["--duration", "2s", "--max-latency", "10ms", "--json"])
                .arg(&json)
                .args(extra)
                .output()
                .expect("latlab runs");
            assert!(
                json.is_file(),
                "latlab run wrote no result: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            json
        };
        (
            // Also in cyclictest's and rt-tests' formats, to be read back.
            run(
                "idle.json",
                &[
                    "--histogram-text",
                    "idle-histogram.txt",
                    "--rt-tests-json",
                    "idle-rt-tests.json",
                ],
            ),
            run("loaded.json", &["--load", "cpu:1,io:1"]),
        )
    })
}

/// The page's DOM after its script ran, and the console errors seen.
fn open_page(browser: &Path, profile: &Path, page: &Path) -> (String, Vec<String>) {
    let output = headless(
        browser,
        profile,
        &["--dump-dom".into(), format!("file://{}", page.display())],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let errors = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("Uncaught") || l.contains("Error")))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&output.stdout).into_owned(), errors)
}

fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn comparison_report_opens_in_headless_chromium_without_script_errors() {
    let Some(browser) = chromium::or_skip("comparison_report_opens_in_headless_chromium") else {
        return;
    };
    let (idle, loaded) = results();
    let dir = work_dir();
    let page = dir.join("comparison.html");
    let output = latlab()
        .args(["report", "-o"])
        .arg(&page)
        .args([idle, loaded])
        .output()
        .unwrap();
    assert_success(&output);
    let html = std::fs::read_to_string(&page).unwrap();
    let plots = html.matches("<svg ").count();
    // Comparison (2) + per run: histogram, tail, time, period (+ load).
    assert!(plots >= 10, "{plots} plots");
    assert!(
        html.contains("Baseline: <b>no load</b>"),
        "labels from what differs"
    );

    let profile = dir.join("chromium-profile");
    let (dom, errors) = open_page(&browser, &profile, &page);
    assert!(errors.is_empty(), "console errors: {errors:?}");
    assert!(
        dom.contains(&format!("data-latlab-ready=\"{plots}\"")),
        "the page's script did not run to its end (no ready marker for {plots} plots)"
    );

    let shot = dir.join("comparison.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        &browser,
        &profile,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".into(),
            format!("file://{}", page.display()),
        ],
    );
    assert_eq!(png_size(&shot), (1280, 2000));
    eprintln!("screenshot of the report: {}", shot.display());
    let _ = std::fs::remove_dir_all(&profile);
}

/// The check above would see a script error: a page that throws is caught.
#[test]
fn console_error_check_catches_a_throwing_page() {
    let Some(browser) = chromium::or_skip("console_error_check_catches_a_throwing_page") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><script>throw new Error('broken plot');</script></body></html>",
    )
    .unwrap();
    let (_, errors) = open_page(&browser, &dir.path().join("profile"), &page);
    assert!(
        errors.iter().any(|e| e.contains("broken plot")),
        "script error not seen: {errors:?}"
    );
}

#[test]
fn png_writes_every_plot_as_svg_and_png() {
    let Some(_) = chromium::or_skip("png_writes_every_plot_as_svg_and_png") else {
        return;
    };
    let (idle, _) = results();
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("plots");
    let output = latlab()
        .current_dir(dir.path())
        .args(["report", "--png"])
        .arg(&plots)
        .arg(idle)
        .output()
        .unwrap();
    assert_success(&output);
    assert!(
        dir.path().join("report.html").is_file(),
        "default output name"
    );
    for id in ["run1-histogram", "run1-tail", "run1-time", "run1-period"] {
        let svg = std::fs::read_to_string(plots.join(format!("{id}.svg"))).unwrap();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        // Twice the view box, for print.
        assert_eq!(
            png_size(&plots.join(format!("{id}.png"))),
            (1440, 600),
            "{id}"
        );
    }
}

#[test]
fn truncated_result_is_refused_with_its_path_and_nothing_is_written() {
    let (idle, _) = results();
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(idle).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let page = dir.path().join("r.html");
    let output = latlab()
        .args(["report", "-o"])
        .arg(&page)
        .arg(idle)
        .arg(&cut)
        .output()
        .unwrap();
    let stderr = assert_error(&output);
    // Where it ends, and that it is incomplete.
    let end = format!("byte {}", text.len() / 2);
    assert!(
        stderr.contains("cut.json") && stderr.contains("incomplete") && stderr.contains(&end),
        "{stderr}"
    );
    assert!(!page.exists());

    let output = latlab()
        .args(["report", "--label", "only-one", "-o"])
        .arg(&page)
        .args([idle, idle])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("one per result"));
    assert!(!page.exists());
}

#[test]
fn a_run_directory_is_read_and_labels_are_used() {
    let (idle, loaded) = results();
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("20261122-020240");
    std::fs::create_dir(&run_dir).unwrap();
    std::fs::copy(loaded, run_dir.join("result.json")).unwrap();
    let page = dir.path().join("r.html");
    let output = latlab()
        .args(["report", "--label", "quiet", "--label", "busy", "-o"])
        .arg(&page)
        .arg(idle)
        .arg(&run_dir)
        .output()
        .unwrap();
    assert_success(&output);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Baseline: <b>quiet</b>"));
    assert!(html.contains("<h2>busy <span class=\"badge"));
    assert!(html.contains("Background load: load cpu:1,io:1"));
}

#[test]
fn history_stores_lists_and_compares_by_id_in_the_default_place() {
    let (idle, loaded) = results();
    let data = tempfile::tempdir().unwrap();
    let latlab_in = || {
        let mut cmd = latlab();
        cmd.env("XDG_DATA_HOME", data.path())
            .current_dir(data.path());
        cmd
    };
    // Nothing yet: the error says how results get there.
    let output = latlab_in().arg("history").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("latlab history --add"));

    let output = latlab_in()
        .args(["history", "--add"])
        .arg(idle)
        .arg("--add")
        .arg(loaded)
        .output()
        .unwrap();
    assert_success(&output);
    assert!(data.path().join("latlab/history.sqlite").is_file());
    let listing = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    assert!(lines[0].starts_with("id  when (UTC)"), "{listing}");
    let verdict = |path: &Path| {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        doc["verdict"].as_str().unwrap().to_string()
    };
    assert!(lines[1].trim_start().starts_with("1 "), "{listing}");
    assert!(lines[1].ends_with(&verdict(idle)), "{listing}");
    assert!(lines[2].ends_with(&verdict(loaded)), "{listing}");
    assert!(lines[2].contains("cpu:1,io:1"), "{listing}");

    let output = latlab_in()
        .args(["history", "--limit", "1"])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&output.stdout);
    assert_eq!(listing.lines().count(), 2, "{listing}");
    assert!(listing
        .lines()
        .nth(1)
        .unwrap()
        .trim_start()
        .starts_with("2 "));

    let output = latlab_in()
        .args(["compare", "2", "1", "-o", "cmp.html"])
        .output()
        .unwrap();
    assert_success(&output);
    let html = std::fs::read_to_string(data.path().join("cmp.html")).unwrap();
    assert!(html.contains("Baseline: <b>load cpu:1,io:1</b>"));
    assert!(html.contains("<section class=\"compare\""));

    let output = latlab_in().args(["compare", "1", "9"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no result with id 9"));
}

#[test]
fn scenario_emblix_quick_runs_both_steps_and_writes_the_comparison() {
    if !latlab_testkit::root("scenario_emblix_quick") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("emblix");
    let output = latlab()
        .args(["scenario", "emblix", "--quick", "--cpus", "0", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // 2: the 1 ms class-2 requirement may fail on a busy VM; both are results.
    assert!(matches!(output.status.code(), Some(0 | 2)), "{stderr}");
    assert!(stderr.contains("step 2/2: disk load"), "{stderr}");
    assert!(
        stderr.contains("--load io:2"),
        "the step's command is shown: {stderr}"
    );
    for file in ["no-load.json", "disk-load.json"] {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(file)).unwrap()).unwrap();
        assert_eq!(doc["settings"]["interval_ns"], 1_000_000, "{file}");
        assert_eq!(
            doc["requirements"][0]["requirement"]["limit_ns"], 1_000_000,
            "{file}"
        );
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Iwasaki and Nakajima"));
    assert!(html.contains("Baseline: <b>no load</b>"));
    assert!(html.contains("<h2>disk load <span"));
    assert!(html.contains("Background load: load io:2"));
}

/// `make run`'s job, short: both steps run, the summary names the papers'
/// classes and the causes, and the report is written and opens in a
/// browser without script errors.
#[test]
fn scenario_characterize_quick_answers_with_classes_and_a_report() {
    if !common::root("scenario_characterize_quick") {
        return;
    }
    let tracefs = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .any(|d| Path::new(d).join("trace_marker").exists());
    if !common::require(
        "scenario_characterize_quick: tracefs (its loaded run is explained from a kernel trace)",
        tracefs,
        "mount tracefs: mount -t tracefs nodev /sys/kernel/tracing",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("characterize");
    let output = latlab()
        .args(["scenario", "characterize", "--quick", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // 3: an early wake-up makes a step suspect; the answer is still written.
    assert!(
        matches!(output.status.code(), Some(0 | 3)),
        "{stderr}\n{stdout}"
    );
    assert!(
        stderr.contains("--load full,udp,syscall,ipc --explain --trace-threshold 40us"),
        "the loaded step's command is shown: {stderr}"
    );
    let summary = stdout
        .split("== latlab characterization")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary at the end: {stdout}"));
    for class in [
        "Emblix class 1 (< 100 ms)",
        "Emblix class 2 (< 1 ms)",
        "Emblix class 3 (< 100 us)",
        "Moblin IVI (40 us, periods +-5 %)",
        "MontaVista 2002",
    ] {
        let line = summary
            .lines()
            .find(|l| l.trim_start().starts_with(class))
            .unwrap_or_else(|| panic!("{class} missing: {summary}"));
        assert!(
            line.contains("idle") && line.contains("loaded"),
            "{class} needs an idle and a loaded verdict: {line}"
        );
    }
    assert!(
        summary.contains("this machine met") || summary.contains("This machine met"),
        "the answer in words: {summary}"
    );
    assert!(
        summary.contains("what stands in the way") || summary.contains("nothing stands in the way"),
        "the loaded run's explanation: {summary}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("summary.txt")).unwrap(),
        format!("\n== latlab characterization{summary}")
            .split("\nreport: ")
            .next()
            .unwrap(),
        "summary.txt holds the printed summary"
    );
    let page = out.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("Does this machine meet a deadline?"),
        "{html}"
    );
    // The page opens with the met/missed table the terminal shows, then words.
    let first = html.find("<section").expect("a section");
    let opening = &html[first..first + html[first..].find("</section>").unwrap()];
    assert!(opening.contains("id=\"intro\""), "{opening}");
    let table = opening
        .find("<table")
        .expect("the classes table opens the report");
    assert!(
        opening.find("<p>").is_none_or(|p| table < p),
        "the table before the paragraphs: {opening}"
    );
    for class in [
        "Emblix class 1 (&lt; 100 ms)",
        "Moblin IVI (40 us, periods +-5 %)",
    ] {
        let row = opening
            .split("<tr>")
            .find(|r| r.contains(class))
            .unwrap_or_else(|| panic!("{class} missing: {opening}"));
        assert_eq!(
            row.matches(">met<").count() + row.matches(">MISSED<").count(),
            2,
            "{class}: idle and loaded, met or missed: {row}"
        );
    }
    assert!(
        html.contains("<h2>loaded <span"),
        "the loaded run's section"
    );
    let loaded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("loaded.json")).unwrap()).unwrap();
    assert!(
        loaded.get("explain").is_some(),
        "the loaded run carries its explanation"
    );
    if let Some(browser) = chromium::or_skip("scenario_characterize_quick: opening the report") {
        let (dom, errors) = open_page(&browser, &dir.path().join("profile"), &page);
        assert!(errors.is_empty(), "console errors: {errors:?}");
        assert!(
            dom.contains("data-latlab-ready="),
            "the page's script did not run to its end"
        );
    }
}

/// The peer files written by the real tools (crates/latlab-peers/tests/fixtures).
fn peer_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../latlab-peers/tests/fixtures")
        .join(name)
}

/// A real cyclictest run with the settings of [`results`]' latlab runs
/// (1 ms, SCHED_FIFO 95 and mlock as root, 2 s), made once: its `-h`
/// histogram text and its `--json` file. `None` (a skip) without
/// cyclictest.
fn cyclictest_run() -> Option<&'static (PathBuf, PathBuf)> {
    static RUN: OnceLock<Option<(PathBuf, PathBuf)>> = OnceLock::new();
    RUN.get_or_init(|| {
        let found = Command::new("cyclictest").arg("--help").output().is_ok();
        if !latlab_testkit::require(
            "cyclictest (rt-tests) on the PATH",
            found,
            "apt-get install -y rt-tests",
        ) {
            return None;
        }
        let dir = work_dir();
        let (text, json) = (dir.join("cyclictest.txt"), dir.join("cyclictest.json"));
        let _ = std::fs::remove_file(&json);
        let privileged: &[&str] = if latlab_testkit::skip::is_root() {
            &["-m", "-p95"]
        } else {
            &[]
        };
        let output = Command::new("cyclictest")
            .args(privileged)
            .args(["-i1000", "-h400", "-D2", "-q"])
            .arg(format!("--json={}", json.display()))
            .output()
            .expect("cyclictest runs");
        assert!(output.status.success(), "cyclictest: {output:?}");
        std::fs::write(&text, &output.stdout).unwrap();
        Some((text, json))
    })
    .as_ref()
}

/// The largest of the per-CPU numbers after `label` in a cyclictest histogram text's summary.
fn cyclictest_largest(text: &Path, label: &str) -> u64 {
    let text = std::fs::read_to_string(text).unwrap();
    let line = text.lines().find(|l| l.starts_with(label)).unwrap();
    line[label.len()..]
        .split_whitespace()
        .map(|v| v.parse::<u64>().unwrap())
        .max()
        .unwrap()
}

fn report(files: &[&Path], page: &Path) -> (Output, String) {
    let output = latlab()
        .args(["report", "-o"])
        .arg(page)
        .args(files)
        .output()
        .unwrap();
    let html = std::fs::read_to_string(page).unwrap_or_default();
    (output, html)
}

fn json_of(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_cyclictest_run_and_a_latlab_run_are_compared_in_one_report() {
    let Some((text, json)) = cyclictest_run() else {
        return;
    };
    let (idle, _) = results();
    let latlab_max = json_of(idle)["overall"]["latency"]["max"].as_u64().unwrap();
    let cyclictest_max = cyclictest_largest(text, "# Max Latencies:") * 1000;
    let dir = tempfile::tempdir().unwrap();
    for (peer, label) in [
        (text, "cyclictest"),
        (
            json,
            &*format!(
                "cyclictest {}",
                json_of(json)["rt_test_version:"].as_str().unwrap()
            ),
        ),
    ] {
        let page = dir.path().join("r.html");
        let (output, html) = report(&[peer, idle], &page);
        assert_success(&output);
        assert!(
            html.contains(&format!("Baseline: <b>{label}</b>")),
            "{label}"
        );
        // Both rows of the comparison, with their own figures.
        let table = &html[html.find("<table class=\"deltas\">").unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        assert!(
            table.contains(&format!("<td class=\"l\">{label}</td>")),
            "{table}"
        );
        assert!(table.contains("<td class=\"l\">latlab run</td>"), "{table}");
        assert!(
            table.contains(&format!("<td>{}</td>", format_ns(cyclictest_max))),
            "{table}"
        );
        assert!(
            table.contains(&format!("<td>{}</td>", format_ns(latlab_max))),
            "{table}"
        );
        assert!(
            table.contains("title=\"not in a cyclictest file\">unknown</td>"),
            "{table}"
        );
        // Overlaid in the comparison's plots; each in its own section.
        let plot = &html[html.find("<figure id=\"compare-histogram\">").unwrap()..];
        let plot = &plot[..plot.find("</figure>").unwrap()];
        assert!(
            plot.contains(label) && plot.contains("latlab run"),
            "{plot}"
        );
        assert!(html.contains(&format!("<h2>{label} <span class=\"badge none\">")));
        assert!(html.contains("Wake-up latency"));
    }
    // The JSON says more than the text: its command line and the machine.
    let (_, html) = report(&[json, idle], &dir.path().join("j.html"));
    assert!(
        html.contains("command: cyclictest "),
        "the command line is kept"
    );
    let host = json_of(json)["sysinfo"]["nodename"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(html.contains(&format!("machine: {host} (")));
}

#[test]
fn latlab_results_written_in_peer_formats_read_back_as_the_run() {
    let (idle, _) = results();
    let dir = work_dir();
    let (text, rt_json) = (
        dir.join("idle-histogram.txt"),
        dir.join("idle-rt-tests.json"),
    );
    let page = tempfile::tempdir().unwrap();
    let page = page.path().join("r.html");
    let (output, html) = report(&[idle, &text, &rt_json], &page);
    assert_success(&output);
    // The three rows: the run and what it wrote, with the same sample count.
    let run = json_of(idle);
    let samples = run["overall"]["latency"]["count"].as_u64().unwrap();
    let table = &html[html.find("<table class=\"deltas\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(
        table.matches(&format!("<td>{samples}</td>")).count(),
        3,
        "{table}"
    );
    // The text's max is the run's, truncated to whole microseconds, as cyclictest's would be.
    let max_us = run["overall"]["latency"]["max"].as_u64().unwrap() / 1000;
    assert_eq!(cyclictest_largest(&text, "# Max Latencies:"), max_us);
    assert!(table.contains(&format!("<td>{}</td>", format_ns(max_us * 1000))));
    assert!(html.contains("latlab ") && html.contains("rt-tests JSON"));
}

#[test]
fn history_stores_a_cyclictest_file_as_its_kind_and_an_unknown_file_is_an_error() {
    let (idle, _) = results();
    let json = peer_fixture("cyclictest-t2-h400.json");
    let text = peer_fixture("cyclictest-q-h400.txt");
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("h.sqlite");
    let history = |args: &[&std::ffi::OsStr]| {
        latlab()
            .args(["history", "--db"])
            .arg(&db)
            .args(args)
            .output()
            .unwrap()
    };
    let output = history(&[
        "--add".as_ref(),
        json.as_ref(),
        "--add".as_ref(),
        idle.as_ref(),
    ]);
    assert_success(&output);
    let listing = String::from_utf8_lossy(&output.stdout);
    let first = listing.lines().nth(1).unwrap();
    assert!(!listing.contains("unknown"), "{listing}");
    assert!(first.contains("peer") && first.contains("vm"), "{listing}");
    // The tool in its setup: its own series, never one with another tool's.
    assert!(
        first.contains(" peer  cyclictest every 1.00 ms, fifo 95 "),
        "{listing}"
    );
    assert!(first.contains("4.45 ms"), "cyclictest's max: {listing}");
    let stored = latlab_history::History::open(&db).unwrap().get(1).unwrap();
    assert_eq!(stored["schema"], "latlab.peer");
    assert_eq!(stored["source"]["tool"], "cyclictest");
    assert_eq!(
        stored["id"],
        latlab_document::Document::read(&std::fs::read(&json).unwrap())
            .unwrap()
            .id(),
        "the file's own id: stored once wherever it is sent from"
    );

    // Compared from the history with the latlab run.
    let page = data.path().join("cmp.html");
    let output = latlab()
        .args(["compare", "1", "2", "--db"])
        .arg(&db)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Baseline: <b>cyclictest 2.40</b>"), "{html}");
    assert!(html.contains("<td class=\"l\">latlab run</td>"), "{html}");

    // The same file again: the same row. An unknown file with a good one:
    // an error that names both the file and what latlab reads, and neither
    // is stored.
    let output = history(&["--add".as_ref(), json.as_ref()]);
    assert!(output.status.success());
    let notes = data.path().join("notes.txt");
    std::fs::write(&notes, "cyclictest ran fine, see the wiki\n").unwrap();
    let output = history(&[
        "--add".as_ref(),
        text.as_ref(),
        "--add".as_ref(),
        notes.as_ref(),
    ]);
    let stderr = assert_error(&output);
    assert!(
        stderr.contains("notes.txt") && stderr.contains("not a result latlab reads"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cyclictest's -h histogram text"),
        "{stderr}"
    );
    assert_eq!(
        latlab_history::History::open(&db).unwrap().count().unwrap(),
        2
    );
}

#[test]
fn rtla_output_and_other_rt_tests_files_are_reported_and_a_damaged_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let timerlat = peer_fixture("rtla-timerlat-hist.txt");
    let oslat = peer_fixture("oslat.json");
    let (output, html) = report(&[&timerlat, &oslat], &page);
    assert_success(&output);
    assert!(html.contains("Timer irq latency") || html.contains("Timer IRQ latency"));
    assert!(html.contains("Timer thread latency") && html.contains("Timer user-space latency"));
    assert!(
        html.contains("12 (0.01%) events missed"),
        "rtla's warning is kept"
    );
    assert!(
        html.contains("Not compared: <b>oslat 2.40</b>"),
        "another quantity"
    );
    // A cyclictest text with a damaged row: the line and byte, nothing written.
    let original = std::fs::read_to_string(peer_fixture("cyclictest-q-h400.txt")).unwrap();
    let damaged = original.replacen("\n000020 ", "\n0000x0 ", 1);
    let at = original.find("\n000020 ").unwrap() + 1;
    let line = original[..at].lines().count() + 1;
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, damaged).unwrap();
    let _ = std::fs::remove_file(&page);
    let (output, _) = report(&[&bad], &page);
    let stderr = assert_error(&output);
    assert!(
        stderr.contains("bad.txt") && stderr.contains(&format!("line {line}, byte {at}")),
        "{stderr}"
    );
    assert!(!page.exists());
}

/// `latlab serve` on a free loopback port; killed when dropped.
struct Serve(std::process::Child, String);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[cfg_attr(not(feature = "serve"), ignore = "starts latlab serve: a full build")]
fn the_fleet_takes_peer_files_pushed_and_compares_them_with_runs() {
    use std::io::{BufRead, Read, Write};
    let (idle, _) = results();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fleet.sqlite");
    let out = latlab()
        .args(["serve", "--db"])
        .arg(&db)
        .args(["--add-board", "bench"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = latlab()
        .args(["serve", "--db"])
        .arg(&db)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let serve = Serve(child, format!("http://127.0.0.1:{port}"));
    assert!(line.contains("listening on"), "{line}");
    let push = |files: &[&Path]| {
        latlab()
            .args(["push", "--to", &serve.1, "--spool"])
            .arg(dir.path().join("spool"))
            .args(files)
            .env("LATLAB_TOKEN", &token)
            .output()
            .unwrap()
    };
    let text = peer_fixture("cyclictest-q-h400.txt");
    let rtla = peer_fixture("rtla-timerlat-hist.txt");
    let out = push(&[&text, &rtla, idle]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.starts_with("3 stored, 0 already there"), "{said}");
    let out = push(&[&text]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("0 stored, 1 already there"));
    // A file that is no result is refused before anything is sent.
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "nothing to see\n").unwrap();
    let out = push(&[&notes]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a result latlab reads"));
    let stored = latlab_history::History::open(&db)
        .unwrap()
        .list(None)
        .unwrap();
    let kinds: Vec<&str> = stored.iter().map(|e| e.schema.as_str()).collect();
    assert_eq!(kinds, ["latlab.peer", "latlab.peer", "latlab.run"]);

    // The dashboard's comparison of the cyclictest file and the run.
    let mut stream = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    write!(
        stream,
        "GET /compare?a=1&b=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("<h2>Comparison</h2>"), "{answer}");
    assert!(
        answer.contains("<td class=\"l\">id 1 (bench)</td><td>–</td>"),
        "{answer}"
    );
}
