//! The envelope: every kind of document latlab writes, produced by its
//! command (`run`, `respond`, `lockbench`, `lockbench --simulate`,
//! `explain`, `load`, `watch`) or, for a peer tool's file, by the reader,
//! carries every envelope key (`schema`, `schema_version`, `id`,
//! `latlab_version`, `command_line`, `started_at`, `system`, `warnings`),
//! with the values docs/result-files.md gives, and reads back to the same
//! JSON.

mod common;
use common::latlab;

use std::path::Path;

use latlab_document::{Document, KINDS};
use serde_json::Value;

/// The envelope's keys.
const ENVELOPE: [&str; 8] = latlab_document::ENVELOPE_KEYS;

/// Runs `latlab <args> --json <dir>/<name>` and returns the file's bytes.
fn written_by(dir: &Path, name: &str, args: &[&str]) -> Vec<u8> {
    let path = dir.join(name);
    let out = latlab()
        .args(args)
        .arg("--json")
        .arg(&path)
        .output()
        .expect("latlab runs");
    assert!(
        out.status.success(),
        "latlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// What a kind has to say in its envelope: a machine (`system` not null)
/// and a command line of latlab's.
struct Expect {
    machine: bool,
    latlab_command: bool,
}

#[test]
fn every_kind_carries_every_envelope_field_and_reads_back() {
    if !latlab_testkit::root("the envelope of every kind (run, respond, lockbench, watch)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pid = std::process::id().to_string();
    let trace = repo("crates/latlab-explain/tests/fixtures/net-pacing.dat");
    let peer = std::fs::read(repo(
        "crates/latlab-peers/tests/fixtures/cyclictest-t2-h400.json",
    ))
    .unwrap();
    let yes = |machine| Expect {
        machine,
        latlab_command: true,
    };
    // `latlab tune --plan` changes nothing; its runs go to the test's directory.
    let tune_runs = d.join("tune-runs");
    let documents: Vec<(&str, Vec<u8>, Expect)> = vec![
        (
            "latlab.run",
            written_by(
                d,
                "run.json",
                &[
                    "run",
                    "--quiet",
                    "--no-save",
                    "--cpus",
                    "0",
                    "--duration",
                    "1s",
                ],
            ),
            yes(true),
        ),
        (
            "latlab.respond",
            written_by(
                d,
                "respond.json",
                &["respond", "--quiet", "--no-save", "--count", "50"],
            ),
            yes(true),
        ),
        (
            "latlab.lockbench",
            written_by(
                d,
                "lockbench.json",
                &[
                    "lockbench",
                    "--variants",
                    "plain",
                    "--duration",
                    "1s",
                    "--warmup",
                    "0s",
                    "--no-history",
                ],
            ),
            yes(true),
        ),
        (
            "latlab.lockbench-simulation",
            written_by(
                d,
                "sim.json",
                &[
                    "lockbench",
                    "--simulate",
                    "--periods",
                    "1500",
                    "--seed",
                    "3",
                ],
            ),
            // A simulation measures no machine.
            yes(false),
        ),
        (
            "latlab.explain",
            written_by(d, "explain.json", &["explain", trace.to_str().unwrap()]),
            // A trace does not say which machine recorded it.
            yes(false),
        ),
        (
            "latlab.load",
            written_by(d, "load.json", &["load", "cpu:1", "--duration", "300ms"]),
            yes(true),
        ),
        (
            "latlab.watch",
            written_by(
                d,
                "watch.json",
                &[
                    "watch",
                    "--pid",
                    &pid,
                    "--duration",
                    "1s",
                    "--quiet",
                    "--no-history",
                ],
            ),
            yes(true),
        ),
        (
            "latlab.tune",
            written_by(
                d,
                "tune.json",
                &[
                    "tune",
                    "--cpus",
                    "1",
                    "--load",
                    "none",
                    "--duration",
                    "1s",
                    "--plan",
                    "--no-save",
                    "--runs-dir",
                    tune_runs.to_str().unwrap(),
                ],
            ),
            yes(true),
        ),
        (
            "latlab.peer",
            Document::read(&peer)
                .unwrap()
                .to_value()
                .unwrap()
                .to_string()
                .into_bytes(),
            // rt-tests' JSON names its machine; its command line is the
            // tool's, in `source`.
            Expect {
                machine: true,
                latlab_command: false,
            },
        ),
    ];
    for (kind, _) in KINDS {
        assert!(
            documents.iter().any(|(k, ..)| *k == kind),
            "{kind} is not tested"
        );
    }
    for (kind, bytes, expect) in documents {
        let json: Value = serde_json::from_slice(&bytes).unwrap();
        let map = json.as_object().unwrap();
        for key in ENVELOPE {
            assert!(map.contains_key(key), "{kind}: no {key}");
        }
        assert_eq!(json["schema"], kind);
        assert!(
            json["schema_version"].as_u64().is_some_and(|v| v >= 1),
            "{kind}"
        );
        assert!(
            json["id"].as_str().is_some_and(|id| !id.is_empty()),
            "{kind}: id"
        );
        assert_eq!(
            json["latlab_version"],
            env!("CARGO_PKG_VERSION"),
            "{kind}: the latlab that wrote (a peer file: read) it"
        );
        assert!(json["warnings"].is_array(), "{kind}");
        assert_eq!(json["system"].is_object(), expect.machine, "{kind}: system");
        let command = json["command_line"].as_array().unwrap();
        if expect.latlab_command {
            assert!(
                json["started_at"]
                    .as_str()
                    .is_some_and(|s| s.ends_with('Z')),
                "{kind}"
            );
            assert!(
                command.len() > 1 && command[0].as_str().unwrap().ends_with("latlab"),
                "{kind}"
            );
        } else {
            assert!(command.is_empty(), "{kind}: {command:?}");
        }
        // Every key once: a load's warnings are its report's, written once.
        let text = String::from_utf8_lossy(&bytes);
        if kind != "latlab.peer" {
            assert_eq!(text.matches("\"warnings\":").count(), 1, "{kind}");
        }
        let document = Document::read(&bytes).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(document.schema(), kind);
        assert_eq!(document.to_value().unwrap(), json, "{kind} reads back");
        assert_eq!(document.id(), json["id"].as_str().unwrap(), "{kind}");
    }
}

/// The results the latlab before the envelope (main 922ac30) wrote, one of
/// each kind its commands write (`fixtures/results-922ac30/README.md` says
/// how): each reads as its kind, writes back the same JSON with only the
/// envelope keys it lacked added (`null`, or `[]`), and renders.
#[test]
fn results_written_before_the_envelope_read_write_back_and_render() {
    use latlab_report::formats::TerminalText;
    use latlab_report::html::{self, Entry};

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-922ac30");
    let files = [
        ("run.json", "latlab.run"),
        ("respond.json", "latlab.respond"),
        ("lockbench.json", "latlab.lockbench"),
        ("sim.json", "latlab.lockbench-simulation"),
        ("explain.json", "latlab.explain"),
        ("load.json", "latlab.load"),
        ("watch.json", "latlab.watch"),
    ];
    let mut entries = Vec::new();
    for (name, kind) in files {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let original: Value = serde_json::from_slice(&bytes).unwrap();
        let missing: Vec<&str> = ENVELOPE
            .into_iter()
            .filter(|k| original.get(k).is_none())
            .collect();
        // What the issue found each kind without: these files are from before.
        let lacked = match kind {
            "latlab.watch" => "command_line",
            "latlab.lockbench" | "latlab.lockbench-simulation" => "latlab_version",
            "latlab.explain" | "latlab.load" => "started_at",
            _ => "schema",
        };
        assert_eq!(
            kind == "latlab.run" || kind == "latlab.respond",
            missing.is_empty(),
            "{name}: {missing:?}"
        );
        assert!(
            missing.is_empty() || missing.contains(&lacked),
            "{name}: {missing:?}"
        );
        let document = Document::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(document.schema(), kind, "{name}");
        let mut expected = original.clone();
        for key in &missing {
            let empty = matches!(*key, "command_line" | "warnings");
            expected[*key] = if empty {
                Value::Array(Vec::new())
            } else {
                Value::Null
            };
        }
        assert_eq!(
            document.to_value().unwrap(),
            expected,
            "{name}: {missing:?} added"
        );
        let text = document.terminal_text();
        assert!(text.len() > 100 && !text.contains("NaN"), "{name}:\n{text}");
        entries.push(Entry {
            label: name.into(),
            document,
        });
    }
    let page = html::render(&entries, "before the envelope");
    assert!(
        !page.contains("its JSON follows"),
        "a kind is drawn as raw JSON"
    );
}
