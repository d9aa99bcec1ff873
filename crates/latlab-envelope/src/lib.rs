//! latlab-envelope: the fields every latlab result document carries,
//! whatever its kind, as one type ([`Envelope`]) each document flattens into
//! its top level, and the result ids ([`new_id`], [`content_id`],
//! [`document_id`]).
//!
//! | field | meaning | when a kind has nothing to say |
//! |---|---|---|
//! | `schema` | the kind (`latlab.run`, ...) | — |
//! | `schema_version` | the layout version (an older one is read into this latlab's) | this latlab's, in files from before the field |
//! | `id` | a random UUID given when written | `null`: derived from the content |
//! | `latlab_version` | the latlab that wrote it (a peer file: that read it) | `null`: not recorded |
//! | `command_line` | the command, one argument per element | `[]`: not recorded (a peer tool's own is in `source.command_line`) |
//! | `started_at` | start, UTC `YYYY-MM-DDTHH:MM:SSZ` | `null`: not recorded |
//! | `system` | the machine | `null` where no machine was measured (explain, simulation) or the file does not say (peer) |
//! | `warnings` | what latlab warned of before or while producing it | `[]` |
//!
//! The envelope lives in its own crate, below every domain crate, because
//! each of them owns a document that carries it, and `latlab-document`
//! (which reads them all) depends on them.
//!
//! ```
//! use latlab_envelope::{Envelope, Kind};
//!
//! #[derive(Debug, Clone, PartialEq)]
//! enum Example {}
//! impl Kind for Example {
//!     const SCHEMA: &'static str = "latlab.example";
//!     const VERSION: u32 = 3;
//! }
//!
//! let envelope = Envelope::<Example, Option<String>>::at(vec!["latlab".into()], 0.0, None);
//! let json = serde_json::to_value(&envelope).unwrap();
//! assert_eq!(json["schema"], "latlab.example");
//! assert_eq!(json["started_at"], "1970-01-01T00:00:00Z");
//! assert!(json["system"].is_null(), "present, and null: no machine");
//! // A file from before the envelope: every field defaults, the kind's name.
//! let old: Envelope<Example, Option<String>> = serde_json::from_str("{}").unwrap();
//! assert_eq!(old.schema, "latlab.example");
//! // An older layout is read into this latlab's, and written in it.
//! let v1: Envelope<Example, Option<String>> =
//!     serde_json::from_str(r#"{"schema_version": 1}"#).unwrap();
//! assert_eq!(serde_json::to_value(&v1).unwrap()["schema_version"], 3);
//! ```

#![warn(missing_docs)]

pub mod id;

use std::marker::PhantomData;

use latlab_rt::clock;
use latlab_rt::sysinfo::SystemInfo;
use serde::{Deserialize, Serialize};

pub use id::{content_id, document_id, new_id, MAX_ID_LEN};

/// The JSON keys of an envelope, in the order they are written: every
/// document has each of them.
pub const KEYS: [&str; 8] = [
    "schema",
    "schema_version",
    "id",
    "latlab_version",
    "command_line",
    "started_at",
    "system",
    "warnings",
];

/// A kind of document: its schema name and the version of its layout this
/// latlab writes. Implemented by an empty marker type next to each document.
pub trait Kind {
    /// The `schema` field (`latlab.run`, ...).
    const SCHEMA: &'static str;
    /// The layout version this latlab writes.
    const VERSION: u32;
    /// True for a kind whose body has a `warnings` key of its own (a load
    /// report's): the envelope's are the body's, and the key is written
    /// once, by the body.
    const WARNINGS_IN_BODY: bool = false;
}

/// The fields every result document carries, flattened into its top level
/// (the JSON keys are the same as before there was one type for them). `K`
/// is the document's [`Kind`]; `S` the type of its `system` (latlab's
/// [`SystemInfo`], an `Option` of it where a kind may have no machine, or a
/// peer file's own).
///
/// Every key is always written; a field a kind has nothing to say about is
/// `null` (or `[]`), with the meaning the crate documentation's table gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(bound = "S: schemars::JsonSchema")]
pub struct Envelope<K: Kind, S = SystemInfo> {
    /// The kind (`latlab.run`, ...); a file from before a kind had the
    /// field reads as that kind's.
    #[serde(default = "schema_of::<K>")]
    pub schema: String,
    /// The layout version: a document read from an older layout is read
    /// into this latlab's ([`Kind::VERSION`]), and written in it.
    #[serde(default = "version_of::<K>", deserialize_with = "read_version::<K, _>")]
    pub schema_version: u32,
    /// The result's unique id (a random UUID given when it is written), by
    /// which a store keeps it once; `null` in files written before the field
    /// existed (their id is derived from their content, [`content_id`]); a
    /// peer file's is derived from its bytes.
    pub id: Option<String>,
    /// The latlab that wrote the document (a peer file: the latlab that read
    /// it, whose reading this is); `null` in files written before the field.
    pub latlab_version: Option<String>,
    /// The command line, one argument per element; empty when not recorded
    /// (files written before the field, peer files: their tool's command
    /// line is in `source.command_line`).
    #[serde(default)]
    pub command_line: Vec<String>,
    /// Start, UTC, `YYYY-MM-DDTHH:MM:SSZ`; `null` when not recorded (files
    /// written before the field, a peer file that does not say).
    pub started_at: Option<String>,
    /// The machine (`null` where a kind may measure none, or a peer file
    /// does not say).
    pub system: S,
    /// Warnings printed before or while the result was produced (pitfalls,
    /// missing privileges, a load's shortfalls).
    #[serde(default, skip_serializing_if = "warnings_in_body::<K>")]
    pub warnings: Vec<String>,
    #[serde(skip)]
    #[schemars(skip)]
    kind: PhantomData<K>,
}

fn schema_of<K: Kind>() -> String {
    K::SCHEMA.into()
}

fn warnings_in_body<K: Kind>(_: &[String]) -> bool {
    K::WARNINGS_IN_BODY
}

fn version_of<K: Kind>() -> u32 {
    K::VERSION
}

/// Reads a document's layout version: what it was read into, the kind's
/// current one (the readers of older layouts convert them).
fn read_version<'de, K: Kind, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<u32, D::Error> {
    u32::deserialize(deserializer).map(|_read| K::VERSION)
}

impl<K: Kind> Envelope<K, SystemInfo> {
    /// The envelope of a result this latlab produces now, on this machine
    /// ([`SystemInfo::gather`]): see [`Envelope::at`].
    pub fn new(command_line: Vec<String>) -> Self {
        Envelope::at(command_line, clock::unix_time_s(), SystemInfo::gather())
    }
}

impl<K: Kind> Envelope<K, Option<SystemInfo>> {
    /// The envelope of a result this latlab produces now without measuring
    /// a machine (a simulation; an explanation of a trace, which does not
    /// say where it was recorded): `system` is `null`.
    pub fn without_machine(command_line: Vec<String>) -> Self {
        Envelope::at(command_line, clock::unix_time_s(), None)
    }
}

impl<K: Kind, S> Envelope<K, S> {
    /// The envelope of a result this latlab produces: the kind's schema and
    /// version, a new random id ([`new_id`]), this latlab's version, the
    /// command line, the start (seconds since the Unix epoch, written as UTC)
    /// and the machine; no warnings yet ([`Envelope::with_warnings`]).
    pub fn at(command_line: Vec<String>, started_unix_s: f64, system: S) -> Self {
        Envelope {
            schema: K::SCHEMA.into(),
            schema_version: K::VERSION,
            id: Some(new_id()),
            latlab_version: Some(env!("CARGO_PKG_VERSION").into()),
            command_line,
            started_at: Some(clock::format_utc(started_unix_s)),
            system,
            warnings: Vec::new(),
            kind: PhantomData,
        }
    }

    /// The envelope of another tool's result file as this latlab reads it:
    /// the start and machine the file states; no id yet (the reader derives
    /// it from the file's bytes), no command line of latlab's (the reading
    /// is not a run), no warnings.
    pub fn read_from_file(started_at: Option<String>, system: S) -> Self {
        Envelope {
            id: None,
            command_line: Vec::new(),
            started_at,
            ..Envelope::at(Vec::new(), 0.0, system)
        }
    }

    /// The same envelope with these warnings.
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    enum Probe {}
    impl Kind for Probe {
        const SCHEMA: &'static str = "latlab.probe";
        const VERSION: u32 = 2;
    }

    #[test]
    fn every_key_is_written_even_when_it_has_nothing_to_say() {
        let old: Envelope<Probe, Option<u32>> = serde_json::from_str("{}").unwrap();
        let json = serde_json::to_value(&old).unwrap();
        let map = json.as_object().unwrap();
        assert_eq!(map.keys().count(), KEYS.len(), "{json}");
        for key in KEYS {
            assert!(map.contains_key(key), "{key} missing from {json}");
        }
        assert_eq!(json["schema_version"], 2);
        assert!(json["id"].is_null() && json["latlab_version"].is_null());
    }

    #[test]
    fn a_new_envelope_fills_every_field_and_reads_back() {
        let envelope: Envelope<Probe, Option<u32>> =
            Envelope::at(vec!["latlab".into(), "probe".into()], 86_400.0, Some(7))
                .with_warnings(vec!["careful".into()]);
        assert_eq!(envelope.started_at.as_deref(), Some("1970-01-02T00:00:00Z"));
        assert_eq!(envelope.id.as_ref().map(String::len), Some(36));
        assert_eq!(
            envelope.latlab_version.as_deref(),
            Some(env!("CARGO_PKG_VERSION"))
        );
        let text = serde_json::to_string(&envelope).unwrap();
        let back: Envelope<Probe, Option<u32>> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, envelope);
        let read = Envelope::<Probe, Option<u32>>::read_from_file(None, Some(3));
        assert_eq!(read.latlab_version, envelope.latlab_version, "the reader's");
        assert!(read.id.is_none() && read.command_line.is_empty() && read.started_at.is_none());
    }
}
