//! Result documents: files written by an earlier latlab (the fixtures under
//! `tests/fixtures/results/`, written by the latlab of main 1db26ea, schema
//! version 1 of every kind) and its history database still load into the
//! typed documents, write back the same JSON, and render in every format;
//! the committed JSON Schemas under `docs/schema/` are current and each
//! fixture validates against its schema; and no domain crate depends on
//! latlab-report.

mod common;
use common::{latlab, require};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use latlab_document::{Document, KINDS};
use latlab_report::formats::{CyclictestText, RtTestsJson, TerminalText};
use latlab_report::html::{self, Entry};
use serde_json::Value;

/// The workspace root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results")
}

/// Every JSON fixture with the schema it must read as.
const FIXTURES: [(&str, &str); 12] = [
    ("run-plain.json", "latlab.run"),
    ("run-split.json", "latlab.run"),
    ("run-load.json", "latlab.run"),
    ("run-explain.json", "latlab.run"),
    ("respond-pty.json", "latlab.respond"),
    ("lockbench.json", "latlab.lockbench"),
    ("lockbench-sim.json", "latlab.lockbench-simulation"),
    ("explain.json", "latlab.explain"),
    ("load.json", "latlab.load"),
    ("watch.json", "latlab.watch"),
    ("peer-cyclictest.json", "latlab.peer"),
    ("tune.json", "latlab.tune"),
];

fn read_json(name: &str) -> Value {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The kind's name of a document variant (not its `schema` field), so a
/// document read as the wrong variant cannot pass.
fn variant(document: &Document) -> &'static str {
    match document {
        Document::Run(_) => "latlab.run",
        Document::Respond(_) => "latlab.respond",
        Document::Lockbench(_) => "latlab.lockbench",
        Document::Simulation(_) => "latlab.lockbench-simulation",
        Document::Explain(_) => "latlab.explain",
        Document::Load(_) => "latlab.load",
        Document::Watch(_) => "latlab.watch",
        Document::Tune(_) => "latlab.tune",
        Document::Peer(_) => "latlab.peer",
        Document::Other { .. } => "other",
    }
}

#[test]
fn every_fixture_reads_as_its_kind_and_writes_back_the_same_json() {
    // Every kind has a fixture.
    for (kind, _) in KINDS {
        assert!(
            FIXTURES.iter().any(|(_, k)| *k == kind),
            "no fixture of {kind}"
        );
    }
    for (name, kind) in FIXTURES {
        let original = read_json(name);
        let document = Document::from_value(original.clone())
            .unwrap_or_else(|e| panic!("{name} does not read as a typed document: {e}"));
        assert_eq!(variant(&document), kind, "{name}");
        let mut expected = in_current_layout(kind, original);
        if original_lacks_schema(&expected) {
            // `latlab explain --json` and `latlab load --json` wrote no
            // schema fields before; the typed documents add them.
            expected["schema"] = kind.into();
            expected["schema_version"] = 1.into();
        }
        let written = document.to_value().unwrap();
        assert!(
            written == expected,
            "{name}: the typed document writes different JSON; first difference at {}",
            first_difference(&expected, &written, String::new())
        );
    }
}

fn original_lacks_schema(value: &Value) -> bool {
    value.get("schema").is_none()
}

/// The kinds whose layout changed in version 2: histograms as runs of
/// buckets (and, in a run, no histograms in `overall`).
const VERSION_2: [&str; 3] = ["latlab.run", "latlab.respond", "latlab.watch"];

/// `document` (of schema version 1) as latlab writes it now: what reading
/// and writing it again must give.
fn in_current_layout(kind: &str, mut document: Value) -> Value {
    with_every_envelope_key(&mut document);
    if !VERSION_2.contains(&kind) {
        return document;
    }
    document["schema_version"] = 2.into();
    if kind == "latlab.run" {
        // `overall` holds no histograms: they are the threads' merged.
        let overall = document["overall"].as_object_mut().unwrap();
        overall.remove("histogram");
        if let Some(split) = overall.get_mut("split").and_then(Value::as_object_mut) {
            for part in ["interrupt_latency", "preemption_latency", "thread_latency"] {
                split[part].as_object_mut().unwrap().remove("histogram");
            }
        }
        let period = overall["period"].as_object_mut().unwrap();
        period.remove("early_histogram");
        period.remove("late_histogram");
    }
    rewrite_histograms(&mut document);
    document
}

/// Adds the envelope's keys an older file lacks, as latlab writes them
/// now: every key present, `null` where the file did not record it, `[]`
/// for no command line or warnings (docs/result-files.md, "The envelope").
fn with_every_envelope_key(document: &mut Value) {
    let map = document.as_object_mut().unwrap();
    for key in ["id", "latlab_version", "started_at", "system"] {
        map.entry(key).or_insert(Value::Null);
    }
    for key in ["command_line", "warnings"] {
        map.entry(key).or_insert(Value::Array(Vec::new()));
    }
}

/// Rewrites every `{low, high, count}` bucket list under `value` as runs
/// (through the reader), and drops the empty ones that are no longer
/// written (a period's early/late histograms, a split part's histogram).
fn rewrite_histograms(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let part_of_split = map.contains_key("summary") && map.len() == 2;
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let child = map.get_mut(&key).unwrap();
                if key.ends_with("histogram") && child.is_array() {
                    let histogram: latlab_measure::histogram::Histogram =
                        serde_json::from_value(child.clone()).unwrap();
                    let skipped_when_empty = key != "histogram" || part_of_split;
                    if histogram.count() == 0 && skipped_when_empty {
                        map.remove(&key);
                    } else {
                        *child = serde_json::to_value(&histogram).unwrap();
                    }
                } else {
                    rewrite_histograms(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_histograms),
        _ => {}
    }
}

/// The JSON path of the first place `a` and `b` differ.
fn first_difference(a: &Value, b: &Value, path: String) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) if p == q => {}
                    (Some(p), Some(q)) => return first_difference(p, q, format!("{path}.{key}")),
                    (p, q) => return format!("{path}.{key}: {p:?} vs {q:?}"),
                }
            }
            path
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find(|(_, (p, q))| p != q)
            .map(|(i, (p, q))| first_difference(p, q, format!("{path}[{i}]")))
            .unwrap_or(path),
        _ => format!("{path}: {a} vs {b}"),
    }
}

#[test]
fn results_of_schema_version_1_read_to_the_same_figures_as_their_rewrite() {
    for (name, kind) in FIXTURES.iter().filter(|(_, k)| VERSION_2.contains(k)) {
        let original = read_json(name);
        assert!(
            original.to_string().contains(r#""high":"#),
            "{name} holds version 1's {{low, high, count}} buckets"
        );
        let old = Document::from_value(original).unwrap();
        let rewritten = old.to_value().unwrap();
        assert_eq!(rewritten["schema_version"], 2, "{name}");
        assert!(!rewritten.to_string().contains(r#""high":"#), "{name}");
        let new = Document::from_value(rewritten.clone()).unwrap();
        assert_eq!(new.to_value().unwrap(), rewritten, "{name}");
        match (&old, &new) {
            (Document::Run(old), Document::Run(new)) => {
                // The figures, and the overall histograms: stored in the old
                // file, merged from the threads' when the new one is read.
                assert_eq!(new.threads, old.threads, "{name}");
                assert_eq!(new.overall, old.overall, "{name}");
                assert!(new.overall.histogram.count() > 0, "{name}");
                assert_eq!(new.overall.histogram.count(), new.overall.latency.count);
                for p in [50.0, 99.0, 99.9] {
                    assert_eq!(
                        new.overall.histogram.value_at_percentile(p),
                        old.overall.histogram.value_at_percentile(p),
                        "{name} p{p}"
                    );
                }
                if let (Some(a), Some(b)) = (&old.overall.split, &new.overall.split) {
                    assert!(b.thread_latency.histogram.count() > 0, "{name}");
                    assert_eq!(a, b, "{name}");
                }
            }
            (Document::Respond(old), Document::Respond(new)) => {
                assert_eq!(new.one_way, old.one_way, "{name}");
                assert_eq!(new.round_trip, old.round_trip, "{name}");
            }
            (Document::Watch(old), Document::Watch(new)) => {
                assert_eq!(new.tasks, old.tasks, "{name}");
            }
            _ => panic!("{name} does not read as {kind}"),
        }
    }
}

#[test]
fn every_fixture_renders_in_every_format_that_fits_its_kind() {
    let mut entries = Vec::new();
    for (name, kind) in FIXTURES {
        let document = Document::from_value(read_json(name)).unwrap();
        let text = document.terminal_text();
        assert!(text.len() > 100, "{name}: terminal text too short:\n{text}");
        assert!(!text.contains("NaN"), "{name}:\n{text}");
        match &document {
            Document::Run(run) => {
                assert!(text.contains("latency"), "{name}:\n{text}");
                assert!(run.cyclictest_text().contains("# Max Latencies"), "{name}");
                let rt = run.rt_tests_json("start", "end", 0);
                let rt: Value = serde_json::from_str(&rt).unwrap();
                assert_eq!(rt["num_threads"], run.threads.len(), "{name}");
                if run.load.is_some() {
                    assert!(text.contains("Background load (cpu:1)"), "{name}:\n{text}");
                }
                // The split, where the run had one (`--split`), and only then.
                assert_eq!(
                    text.contains("Latency split at the timer interrupt"),
                    run.overall.split.is_some(),
                    "{name}:\n{text}"
                );
                if run.explain.is_some() {
                    assert!(text.contains("causes, ranked"), "{name}:\n{text}");
                    assert!(text.contains("run vs trace, sample by sample"), "{name}");
                }
            }
            Document::Respond(respond) => {
                assert!(text.contains("latlab respond: pty"), "{name}:\n{text}");
                assert!(respond.cyclictest_text().contains("# Max Latencies"));
            }
            Document::Lockbench(_) => assert!(text.contains("latlab lockbench"), "{text}"),
            Document::Simulation(_) => assert!(text.contains("paper"), "{text}"),
            Document::Explain(_) => assert!(text.contains("causes, ranked"), "{text}"),
            Document::Load(_) => assert!(text.contains("load cpu:1,io:1 for"), "{text}"),
            Document::Watch(_) => {
                assert!(text.contains("latlab watch: command `cyclictest"), "{text}");
                assert!(text.contains("causes, ranked"), "{text}");
            }
            Document::Tune(_) => {
                assert!(text.contains("latlab tune: real-time CPUs 1"), "{text}");
                assert!(
                    text.contains("DROPPED #2 isolated cpuset partition"),
                    "{text}"
                );
            }
            Document::Peer(_) => {
                assert!(text.contains("cyclictest 2.40, read from"), "{text}");
                assert!(text.contains("wake-up latency"), "{text}");
            }
            Document::Other { .. } => panic!("{name} read as an unknown kind"),
        }
        let page = html::render(
            &[Entry {
                label: name.into(),
                document: document.clone(),
            }],
            name,
        );
        assert!(
            !page.contains("its JSON follows"),
            "{name} ({kind}) is drawn as raw JSON"
        );
        assert!(!page.contains("NaN") && !page.contains("inf"), "{name}");
        if let Document::Run(run) = &document {
            assert_eq!(
                page.contains("<th colspan=\"3\">preemption latency</th>"),
                run.overall.split.is_some(),
                "{name}"
            );
        }
        entries.push(Entry {
            label: name.into(),
            document,
        });
    }
    // All of them in one report: the three runs are compared.
    let page = html::render(&entries, "every kind");
    assert!(page.contains("<h2>Comparison</h2>"));
    assert_eq!(page.matches("<section ").count(), FIXTURES.len() + 1);
}

#[test]
fn the_old_versions_own_outputs_are_reproduced_from_its_result_file() {
    // `run-plain.json` was written together with its cyclictest histogram
    // and rt-tests JSON: rendered from the typed document they are the same.
    let document = Document::from_value(read_json("run-plain.json")).unwrap();
    let run = document.as_run().unwrap();
    let hist = std::fs::read_to_string(fixtures().join("run-plain.hist")).unwrap();
    assert_eq!(run.cyclictest_text(), hist);
    let old = read_json("run-plain.rt.json");
    let fresh = run.rt_tests_json(
        old["start_time"].as_str().unwrap(),
        old["end_time"].as_str().unwrap(),
        0,
    );
    assert_eq!(serde_json::from_str::<Value>(&fresh).unwrap(), old);
}

#[test]
fn an_existing_history_database_loads_and_renders() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite");
    std::fs::copy(fixtures().join("history.sqlite"), &db).unwrap();
    let history = latlab_history::History::open(&db).unwrap();
    let entries = history.list(None).unwrap();
    let kinds: Vec<&str> = entries.iter().map(|e| e.schema.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "latlab.run",
            "latlab.respond",
            "latlab.lockbench",
            "latlab.run"
        ]
    );
    let mut report = Vec::new();
    for entry in &entries {
        let stored = history.get(entry.id).unwrap();
        let document = Document::from_value(stored.clone()).unwrap();
        assert_eq!(variant(&document), entry.schema, "id {}", entry.id);
        assert_eq!(
            document.to_value().unwrap(),
            in_current_layout(&entry.schema, stored),
            "id {}",
            entry.id
        );
        assert!(document.terminal_text().len() > 100);
        report.push(Entry {
            label: format!("id {}", entry.id),
            document,
        });
    }
    let page = html::render(&report, "history");
    assert!(!page.contains("its JSON follows"));
    // And through the commands: history lists them, compare draws them.
    let listed = latlab()
        .args(["history", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(" respond ") && listed.contains(" lockbench ") && listed.contains("cpu:1"),
        "{listed}"
    );
    let out = dir.path().join("compare.html");
    let compared = latlab()
        .args(["compare", "1", "2", "3", "4", "--db"])
        .arg(&db)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert!(compared.status.success(), "{compared:?}");
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.contains("Lock benchmark") && page.contains("<h2>Comparison</h2>"));
}

/// Runs `latlab generate schemas` into a temporary directory.
fn fresh_schemas() -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab()
        .args(["generate", "schemas"])
        .arg(dir.path())
        .output()
        .expect("latlab runs");
    assert!(
        output.status.success(),
        "latlab generate schemas: {output:?}"
    );
    let files = files_in(dir.path());
    (dir, files)
}

fn files_in(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

#[test]
fn committed_schemas_are_current_and_one_per_kind() {
    let (_dir, fresh) = fresh_schemas();
    let expected: Vec<String> = KINDS.iter().map(|(k, _)| format!("{k}.json")).collect();
    assert_eq!(fresh.keys().cloned().collect::<Vec<_>>(), {
        let mut e = expected.clone();
        e.sort();
        e
    });
    let committed = files_in(&repo_root().join("docs/schema"));
    let mut problems = Vec::new();
    for (name, bytes) in &fresh {
        match committed.get(name) {
            None => problems.push(format!("{name} missing")),
            Some(old) if old != bytes => problems.push(format!("{name} differs")),
            Some(_) => {}
        }
    }
    for name in committed.keys().filter(|n| !fresh.contains_key(*n)) {
        problems.push(format!("{name} is no longer generated"));
    }
    assert!(
        problems.is_empty(),
        "docs/schema is out of date with the result types ({}): run `make cli-docs` and commit the result",
        problems.join(", ")
    );
}

/// Python's `jsonschema` (a real validator), if there is one.
fn python_jsonschema() -> bool {
    Command::new("python3")
        .args(["-c", "import jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Validates `document` against `schema` with Python's jsonschema: the
/// validator's error messages, empty when it is valid.
fn validate(schema: &Path, document: &Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("document.json");
    std::fs::write(&path, document.to_string()).unwrap();
    let script = "import json, sys, jsonschema\n\
                  schema = json.load(open(sys.argv[1]))\n\
                  cls = jsonschema.validators.validator_for(schema)\n\
                  cls.check_schema(schema)\n\
                  for e in cls(schema).iter_errors(json.load(open(sys.argv[2]))):\n\
                  \x20   print(list(e.absolute_path), e.message[:200])\n";
    let output = Command::new("python3")
        .args(["-c", script])
        .arg(schema)
        .arg(&path)
        .output()
        .unwrap();
    assert!(output.status.success(), "the validator failed: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn every_fixture_validates_against_its_published_schema() {
    if !require(
        "Python's jsonschema",
        python_jsonschema(),
        "pip install jsonschema (or apt-get install python3-jsonschema)",
    ) {
        return;
    }
    let schema_dir = repo_root().join("docs/schema");
    for (name, kind) in FIXTURES {
        let schema = schema_dir.join(format!("{kind}.json"));
        let errors = validate(&schema, &read_json(name));
        assert!(errors.is_empty(), "{name} against {kind}.json:\n{errors}");
        // And as this latlab writes it.
        let written = Document::from_value(read_json(name))
            .unwrap()
            .to_value()
            .unwrap();
        let errors = validate(&schema, &written);
        assert!(
            errors.is_empty(),
            "{name} rewritten, against {kind}.json:\n{errors}"
        );
    }
    // The validator does reject what is wrong: a latency as text, a
    // missing measurement, an unknown verdict.
    let mut bad = read_json("run-plain.json");
    bad["overall"]["latency"]["max"] = "12 us".into();
    bad.as_object_mut().unwrap().remove("threads");
    bad["verdict"] = "maybe".into();
    let errors = validate(&schema_dir.join("latlab.run.json"), &bad);
    for expected in [
        "'12 us' is not of type",
        "'threads' is a required property",
        "'maybe'",
    ] {
        assert!(errors.contains(expected), "{expected:?} not in:\n{errors}");
    }
}

#[test]
fn no_domain_crate_depends_on_the_report() {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(repo_root())
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "{output:?}");
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut offenders = Vec::new();
    let mut checked = 0;
    for package in metadata["packages"].as_array().unwrap() {
        let id = package["id"].as_str().unwrap();
        let name = package["name"].as_str().unwrap();
        // The binary and the crates above the renderers, which use them as
        // the binary does: the fleet (its dashboard pages), the measuring
        // lifecycle (it prints and writes results) and the scenarios (the
        // characterization's constants).
        let above_the_renderers = [
            "latlab",
            "latlab-report",
            "latlab-fleet",
            "latlab-session",
            "latlab-scenario",
        ];
        if !members.contains(&id) || above_the_renderers.contains(&name) {
            continue;
        }
        checked += 1;
        for dependency in package["dependencies"].as_array().unwrap() {
            // Normal and build dependencies count; a test-only one does not.
            if dependency["name"] == "latlab-report" && dependency["kind"] != "dev" {
                offenders.push(name.to_string());
            }
        }
    }
    assert!(checked >= 11, "only {checked} workspace crates seen");
    assert!(
        offenders.is_empty(),
        "{offenders:?} depend on latlab-report: renderers belong in latlab-report, which depends on the domain crates, not the other way round"
    );
}
