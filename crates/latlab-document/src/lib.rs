//! latlab-document: every kind of result latlab writes, as typed documents,
//! and one enum, [`Document`], that reads any of them by its `schema` field.
//!
//! Each domain crate owns its document, the structs that *are* its JSON
//! schema: `latlab.run` (latlab-measure's measurement, composed here with
//! the load, trace and explanation parts into [`RunDocument`]),
//! `latlab.respond` (latlab-respond), `latlab.lockbench` and
//! `latlab.lockbench-simulation` (latlab-lock), `latlab.explain`
//! (latlab-explain), `latlab.load` (latlab-load), `latlab.watch`
//! (latlab-watch), `latlab.tune` (latlab-tune), and `latlab.peer` (latlab-peers: another tool's result
//! file, read). This crate adds what
//! needs all of them: the run document, the dispatch on `schema` used by
//! `latlab report`, `compare`, `history` and `scenario`, the one reader of
//! a result file's bytes ([`Document::read`]: latlab's JSON or a peer
//! tool's file, anything else an error), and the JSON Schemas
//! ([`schemas`]) published under `docs/schema/`.
//!
//! Every document carries the same [`Envelope`] (`schema`,
//! `schema_version`, `id`, `latlab_version`, `command_line`, `started_at`,
//! `system`, `warnings`), flattened into its top level; it lives in
//! latlab-envelope, below the domain crates, and is re-exported here with
//! the result ids.
//!
//! ```
//! use latlab_document::Document;
//! let text = r#"{"schema": "latlab.example", "answer": 42}"#;
//! let document = Document::parse(text).unwrap();
//! assert_eq!(document.schema(), "latlab.example");
//! assert!(matches!(document, Document::Other { .. }));
//! ```

#![warn(missing_docs)]

pub mod comparable;
pub mod run;
pub mod text;

use serde::Serialize;
use serde_json::Value;

/// The JSON keys every document has ([`Envelope`]'s).
pub use latlab_envelope::KEYS as ENVELOPE_KEYS;
pub use latlab_envelope::{content_id, document_id, id, new_id, Envelope, Kind};
pub use latlab_explain::ExplainDocument;
pub use latlab_load::LoadDocument;
pub use latlab_lock::document::{BenchReport, SimReport};
pub use latlab_peers::PeerDocument;
pub use latlab_respond::result::RespondResult;
pub use latlab_tune::result::TuneResult;
pub use latlab_watch::WatchDocument;
pub use run::RunDocument;

/// One result file, by kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// `latlab.run`: a latency measurement.
    Run(Box<RunDocument>),
    /// `latlab.respond`: response latency to an external event.
    Respond(Box<RespondResult>),
    /// `latlab.lockbench`: the lock benchmark with real threads.
    Lockbench(Box<BenchReport>),
    /// `latlab.lockbench-simulation`: the delayed-locking simulation.
    Simulation(Box<SimReport>),
    /// `latlab.explain`: why a periodic task woke up late, from a trace.
    Explain(Box<ExplainDocument>),
    /// `latlab.load`: a background load's throughput.
    Load(Box<LoadDocument>),
    /// `latlab.watch`: the wake-ups of running tasks, watched in the kernel.
    Watch(Box<WatchDocument>),
    /// `latlab.tune`: fixes applied, verified side by side, kept or dropped.
    Tune(Box<TuneResult>),
    /// `latlab.peer`: a peer tool's result file (cyclictest, rt-tests, rtla).
    Peer(Box<PeerDocument>),
    /// Any other schema (a newer latlab's, another tool's): kept as JSON.
    Other {
        /// The `schema` field (`"unknown"` when absent).
        schema: String,
        /// The whole document.
        value: Value,
    },
}

/// Every kind of document latlab writes: schema name and a one-line
/// description, in the order of [`schemas`].
pub const KINDS: [(&str, &str); 9] = [
    ("latlab.run", "a latency measurement (`latlab run`)"),
    (
        "latlab.respond",
        "response latency to an external event (`latlab respond`)",
    ),
    (
        "latlab.lockbench",
        "the lock benchmark with real threads (`latlab lockbench`)",
    ),
    (
        "latlab.lockbench-simulation",
        "the delayed-locking simulation (`latlab lockbench --simulate`)",
    ),
    (
        "latlab.explain",
        "the explanation of late wake-ups (`latlab explain --json`)",
    ),
    (
        "latlab.load",
        "a background load's throughput (`latlab load --json`)",
    ),
    (
        "latlab.watch",
        "the wake-ups of running tasks watched in the kernel (`latlab watch --json`)",
    ),
    (
        "latlab.tune",
        "fixes applied, verified side by side, kept or dropped (`latlab tune --json`)",
    ),
    (
        "latlab.peer",
        "a peer tool's result as latlab reads it: cyclictest's -h histogram, rt-tests' --json, rtla hist (`latlab history --add`, `push`)",
    ),
];

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Not JSON latlab wrote, and not a peer file it reads (or a damaged
    /// one): the error says where and what latlab reads.
    #[error(transparent)]
    Peer(#[from] latlab_peers::DecodeError),
    /// A latlab document whose fields are not what its schema says.
    #[error(
        "a {schema} document that does not read as one: {source} (is it complete, and \
         written by latlab? a newer latlab's file needs that latlab)"
    )]
    Invalid {
        /// Its `schema`.
        schema: String,
        /// What serde found.
        source: serde_json::Error,
    },
}

impl Document {
    /// Parses a result file, dispatching on its `schema` field.
    pub fn parse(text: &str) -> Result<Document, serde_json::Error> {
        Document::from_value(serde_json::from_str(text)?)
    }

    /// Reads a result file's bytes, whatever wrote it: a latlab JSON
    /// document (by its `schema`, or the shape of a file from before it had
    /// one), or a peer tool's file ([`latlab_peers::decode`]: cyclictest's
    /// `-h` text, rt-tests' `--json`, rtla hist output). Anything else is
    /// an error that names what latlab reads; a damaged or cut file one
    /// that gives the line and byte.
    pub fn read(bytes: &[u8]) -> Result<Document, ReadError> {
        let json = bytes
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'{');
        if !json {
            return Ok(Document::Peer(Box::new(latlab_peers::decode(bytes)?)));
        }
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| ReadError::Peer(latlab_peers::json_error(bytes, &e)))?;
        let latlab = value.get("schema").and_then(Value::as_str).is_some()
            || legacy_schema(&value).is_some();
        if !latlab {
            return Ok(Document::Peer(Box::new(latlab_peers::decode(bytes)?)));
        }
        let schema = value
            .get("schema")
            .and_then(Value::as_str)
            .or_else(|| legacy_schema(&value))
            .unwrap_or_default()
            .to_string();
        Document::from_value(value).map_err(|source| ReadError::Invalid { schema, source })
    }

    /// The tool that measured: `latlab`, or a peer document's (`cyclictest`,
    /// `oslat`, `rtla timerlat`, ...). Results of different tools are
    /// compared side by side, never pooled into one baseline.
    pub fn source_tool(&self) -> &str {
        match self {
            Document::Peer(d) => &d.source.tool,
            _ => "latlab",
        }
    }

    /// Reads a parsed JSON value, dispatching on its `schema` field. Files
    /// written before a kind had the field are recognised by their shape:
    /// a lockbench's `results` of `variant`s with a `goal` list, an
    /// explanation's `table1` and `causes`, a load's `spec` and `kinds`.
    pub fn from_value(value: Value) -> Result<Document, serde_json::Error> {
        let schema = match value.get("schema").and_then(Value::as_str) {
            Some(schema) => schema.to_string(),
            None => legacy_schema(&value).unwrap_or("unknown").to_string(),
        };
        Ok(match schema.as_str() {
            "latlab.run" => Document::Run(Box::new(serde_json::from_value(value)?)),
            "latlab.respond" => Document::Respond(Box::new(serde_json::from_value(value)?)),
            "latlab.lockbench" => Document::Lockbench(Box::new(serde_json::from_value(value)?)),
            "latlab.lockbench-simulation" => {
                Document::Simulation(Box::new(serde_json::from_value(value)?))
            }
            "latlab.explain" => Document::Explain(Box::new(serde_json::from_value(value)?)),
            "latlab.load" => Document::Load(Box::new(serde_json::from_value(value)?)),
            "latlab.watch" => Document::Watch(Box::new(serde_json::from_value(value)?)),
            "latlab.tune" => Document::Tune(Box::new(serde_json::from_value(value)?)),
            "latlab.peer" => Document::Peer(Box::new(serde_json::from_value(value)?)),
            // An rt-tests file stored as it was (by a latlab that did not
            // read them): read now, with the id of its JSON's text.
            "unknown" if latlab_peers::rt_tests::detect(&value) => {
                let text = value.to_string();
                match latlab_peers::decode(text.as_bytes()) {
                    Ok(peer) => Document::Peer(Box::new(peer)),
                    Err(_) => Document::Other { schema, value },
                }
            }
            _ => Document::Other { schema, value },
        })
    }

    /// The schema name: `latlab.run`, ..., or an unknown document's own.
    pub fn schema(&self) -> &str {
        match self {
            Document::Run(d) => &d.result.envelope.schema,
            Document::Respond(d) => &d.envelope.schema,
            Document::Lockbench(d) => &d.envelope.schema,
            Document::Simulation(d) => &d.envelope.schema,
            Document::Explain(d) => &d.envelope.schema,
            Document::Load(d) => &d.envelope.schema,
            Document::Watch(d) => &d.envelope.schema,
            Document::Tune(d) => &d.envelope.schema,
            Document::Peer(d) => &d.envelope.schema,
            Document::Other { schema, .. } => schema,
        }
    }

    /// The result's unique id: its `id` field, or for a document written
    /// before the field existed, one derived from its content
    /// ([`content_id`]). A store derives it from the JSON as read
    /// ([`document_id`]), which this equals for documents latlab wrote.
    pub fn id(&self) -> String {
        let explicit = match self {
            Document::Run(d) => d.result.envelope.id.clone(),
            Document::Respond(d) => d.envelope.id.clone(),
            Document::Lockbench(d) => d.envelope.id.clone(),
            Document::Simulation(d) => d.envelope.id.clone(),
            Document::Explain(d) => d.envelope.id.clone(),
            Document::Load(d) => d.envelope.id.clone(),
            Document::Watch(d) => d.envelope.id.clone(),
            Document::Tune(d) => d.envelope.id.clone(),
            Document::Peer(d) => d.envelope.id.clone(),
            Document::Other { value, .. } => {
                value.get("id").and_then(Value::as_str).map(str::to_string)
            }
        };
        explicit.unwrap_or_else(|| content_id(&self.to_value().unwrap_or(Value::Null)))
    }

    /// The document as JSON, as it is written to a file.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        match self {
            Document::Run(d) => serde_json::to_value(d),
            Document::Respond(d) => serde_json::to_value(d),
            Document::Lockbench(d) => serde_json::to_value(d),
            Document::Simulation(d) => serde_json::to_value(d),
            Document::Explain(d) => serde_json::to_value(d),
            Document::Load(d) => serde_json::to_value(d),
            Document::Watch(d) => serde_json::to_value(d),
            Document::Tune(d) => serde_json::to_value(d),
            Document::Peer(d) => serde_json::to_value(d),
            Document::Other { value, .. } => Ok(value.clone()),
        }
    }

    /// The run document, if this is one.
    pub fn as_run(&self) -> Option<&RunDocument> {
        match self {
            Document::Run(run) => Some(run),
            _ => None,
        }
    }
}

impl Serialize for Document {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Document::Run(d) => d.serialize(serializer),
            Document::Respond(d) => d.serialize(serializer),
            Document::Lockbench(d) => d.serialize(serializer),
            Document::Simulation(d) => d.serialize(serializer),
            Document::Explain(d) => d.serialize(serializer),
            Document::Load(d) => d.serialize(serializer),
            Document::Watch(d) => d.serialize(serializer),
            Document::Tune(d) => d.serialize(serializer),
            Document::Peer(d) => d.serialize(serializer),
            Document::Other { value, .. } => value.serialize(serializer),
        }
    }
}

/// The kind of a document without a `schema` field, by its shape (files
/// written before the field existed).
fn legacy_schema(value: &Value) -> Option<&'static str> {
    let has = |key: &str| value.get(key).is_some();
    let is_lockbench = value.get("goal").is_some_and(Value::is_array)
        && value
            .get("results")
            .and_then(Value::as_array)
            .is_some_and(|r| {
                !r.is_empty()
                    && r.iter()
                        .all(|v| v.get("variant").is_some_and(Value::is_string))
            });
    if is_lockbench {
        Some("latlab.lockbench")
    } else if has("table1") && has("causes") && has("threshold_ns") {
        Some("latlab.explain")
    } else if has("spec") && has("kinds") && has("interval_s") {
        Some("latlab.load")
    } else {
        None
    }
}

/// The JSON Schema of every kind of document ([`KINDS`]), by schema name:
/// generated from the types, published as `docs/schema/<name>.json`.
pub fn schemas() -> Vec<(&'static str, schemars::Schema)> {
    let schema_of = |name: &'static str| -> schemars::Schema {
        let mut schema = match name {
            "latlab.run" => schemars::schema_for!(RunDocument),
            "latlab.respond" => schemars::schema_for!(RespondResult),
            "latlab.lockbench" => schemars::schema_for!(BenchReport),
            "latlab.lockbench-simulation" => schemars::schema_for!(SimReport),
            "latlab.explain" => schemars::schema_for!(ExplainDocument),
            "latlab.watch" => schemars::schema_for!(WatchDocument),
            "latlab.tune" => schemars::schema_for!(TuneResult),
            "latlab.peer" => schemars::schema_for!(PeerDocument),
            _ => schemars::schema_for!(LoadDocument),
        };
        schema.insert("title".into(), name.into());
        schema
    };
    KINDS
        .iter()
        .map(|(name, _)| (*name, schema_of(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_takes_latlab_json_and_peer_files_and_refuses_the_rest() {
        let run = br#"{"schema": "latlab.lockbench", "future": 1}"#;
        assert!(
            matches!(Document::read(run), Err(ReadError::Invalid { schema, .. }) if schema == "latlab.lockbench")
        );
        let newer = br#"{"schema": "latlab.future", "answer": 42}"#;
        assert!(matches!(Document::read(newer), Ok(Document::Other { .. })));
        let rt_tests = br#"{"file_version": 1, "cmdline:": "cyclictest -p95 -i200 --json=x", "rt_test_version:": "2.40",
            "thread": {"0": {"histogram": {"3": 2, "4": 1}, "cycles": 3, "min": 3, "max": 4, "avg": 3.33, "cpu": 0, "node": 0}}}"#;
        let doc = Document::read(rt_tests).unwrap();
        assert_eq!(doc.schema(), "latlab.peer");
        assert_eq!(doc.source_tool(), "cyclictest");
        assert_eq!(doc.id(), latlab_peers::file_id(rt_tests));
        // Written and read back: the same document.
        let again = Document::read(doc.to_value().unwrap().to_string().as_bytes()).unwrap();
        assert_eq!(again, doc);
        // A result stored as it was by an older latlab reads as a peer too.
        let stored: Value = serde_json::from_slice(rt_tests).unwrap();
        assert!(matches!(
            Document::from_value(stored).unwrap(),
            Document::Peer(_)
        ));
        for unknown in [&b"{\"a\": 1}"[..], b"hello world\n", b""] {
            let e = Document::read(unknown).unwrap_err();
            assert!(e.to_string().contains("latlab reads"), "{e}");
        }
        let cut = &rt_tests[..40];
        let e = Document::read(cut).unwrap_err().to_string();
        assert!(e.contains("byte 40") && e.contains("incomplete"), "{e}");
    }
}
