//! Result ids: every result carries one, so that a store keeps it exactly
//! once however often it is sent.
//!
//! A result written by this latlab has a random UUID in its `id` field
//! ([`new_id`]). A document written before the field existed gets an id
//! derived from its content ([`content_id`]): the SHA-256 of its canonical
//! JSON (keys sorted, no spaces, the `id` field left out), so the same file
//! has the same id on every machine and in every store.
//!
//! ```
//! let doc = serde_json::json!({"schema": "latlab.run", "started_at": "2026-11-24T10:00:00Z"});
//! let id = latlab_envelope::document_id(&doc);
//! assert!(id.starts_with("sha256-"));
//! let mut with_id = doc.clone();
//! with_id["id"] = id.clone().into();
//! assert_eq!(latlab_envelope::document_id(&with_id), id, "an id derived once stays");
//! assert_ne!(latlab_envelope::new_id(), latlab_envelope::new_id());
//! ```

use std::io::Read;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The longest id a store accepts, in bytes.
pub const MAX_ID_LEN: usize = 128;

/// A new random id: a version-4 UUID from the kernel's random source.
pub fn new_id() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // No /dev/urandom (a very bare board): the clock and the process id,
        // hashed, still differ between results.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let seed = format!(
            "{}:{}:{:?}",
            now.as_nanos(),
            std::process::id(),
            std::thread::current().id()
        );
        bytes.copy_from_slice(&Sha256::digest(seed.as_bytes())[..16]);
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The id derived from a document's content: `sha256-` and the first 32 hex
/// digits of the SHA-256 of its canonical JSON without the `id` field.
pub fn content_id(value: &Value) -> String {
    let canonical = match value {
        Value::Object(map) if map.contains_key("id") => {
            let mut map = map.clone();
            map.remove("id");
            Value::Object(map).to_string()
        }
        other => other.to_string(),
    };
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256-{hex}")
}

/// The id a store keeps a document under: its `id` field when that is a
/// non-empty string of at most [`MAX_ID_LEN`] bytes, else [`content_id`].
pub fn document_id(value: &Value) -> String {
    match value.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() && id.len() <= MAX_ID_LEN => id.to_string(),
        _ => content_id(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_id_ignores_key_order_and_the_id_field() {
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": [1, 2.5, "x"]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a": [1, 2.5, "x"], "b": 1, "id": 7}"#).unwrap();
        assert_eq!(content_id(&a), content_id(&b));
        let c: Value = serde_json::from_str(r#"{"a": [1, 2.5, "y"], "b": 1}"#).unwrap();
        assert_ne!(content_id(&a), content_id(&c));
        // Fixed for all time: stores compare it with ids derived before.
        assert_eq!(
            content_id(&serde_json::json!({"schema": "latlab.run"})),
            content_id(&serde_json::from_str(r#"{ "schema" : "latlab.run" }"#).unwrap())
        );
    }

    #[test]
    fn new_ids_are_version_4_uuids() {
        let id = new_id();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!("89ab".contains(&id[19..20]), "{id}");
        let many: std::collections::HashSet<String> = (0..1000).map(|_| new_id()).collect();
        assert_eq!(many.len(), 1000);
    }

    #[test]
    fn an_explicit_id_wins_unless_it_is_unusable() {
        let doc = serde_json::json!({"id": "abc", "x": 1});
        assert_eq!(document_id(&doc), "abc");
        let empty = serde_json::json!({"id": "", "x": 1});
        assert_eq!(
            document_id(&empty),
            content_id(&serde_json::json!({"x": 1}))
        );
        let long = serde_json::json!({"id": "x".repeat(200), "x": 1});
        assert!(document_id(&long).starts_with("sha256-"));
    }
}
