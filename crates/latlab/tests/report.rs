//! `latlab report` driven through the real binary on results of real
//! `latlab run`s, and the report opened in a real headless Chromium.

mod common;
use common::latlab;

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
            run("idle.json", &[]),
            run("loaded.json", &["--load", "cpu:1,io:1"]),
        )
    })
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Chromium, or a skip with the reason (a failure when CI demands it).
fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    latlab_testkit::require(
        &format!("{test}: chromium on the PATH"),
        found.is_some(),
        "apt-get install -y chromium",
    );
    found
}

/// Runs a headless Chromium with no network and a fresh profile.
fn headless(browser: &Path, profile: &Path, args: &[String]) -> Output {
    let _ = std::fs::remove_dir_all(profile);
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium starts")
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
    let Some(browser) = chromium_or_skip("comparison_report_opens_in_headless_chromium") else {
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
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    let Some(browser) = chromium_or_skip("console_error_check_catches_a_throwing_page") else {
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
    let Some(_) = chromium_or_skip("png_writes_every_plot_as_svg_and_png") else {
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
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cut.json") && stderr.contains("is the file complete"),
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
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    if let Some(browser) = chromium_or_skip("scenario_characterize_quick: opening the report") {
        let (dom, errors) = open_page(&browser, &dir.path().join("profile"), &page);
        assert!(errors.is_empty(), "console errors: {errors:?}");
        assert!(
            dom.contains("data-latlab-ready="),
            "the page's script did not run to its end"
        );
    }
}
