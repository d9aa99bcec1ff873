//! latlab-peers: the result files of latlab's peer tools, read into one
//! typed document ([`PeerDocument`], schema `latlab.peer`) that latlab's
//! reports, comparisons, history and fleet understand.
//!
//! One decoder per format, each free of I/O (bytes in, document out):
//!
//! - [`cyclictest`]: cyclictest's `-h`/`-H` histogram text;
//! - [`rt_tests`]: rt-tests' `--json` files (cyclictest, oslat,
//!   cyclicdeadline, signaltest, pmqtest, ptsematest, sigwaittest,
//!   svsematest; others keep their fields as they are);
//! - [`rtla`]: `rtla timerlat hist` and `rtla osnoise hist` output.
//!
//! [`decode`] finds the format from the content; a malformed or truncated
//! file is an error that says where (line and byte) and what to do.
//!
//! ```
//! let text = [
//!     "# Histogram", "000000 000000", "000001 000003", "000002 000001",
//!     "# Total: 000000004", "# Min Latencies: 00001", "# Avg Latencies: 00001",
//!     "# Max Latencies: 00002", "# Histogram Overflows: 00000",
//!     "# Histogram Overflow at cycle number:", "# Thread 0:",
//! ]
//! .join("\n");
//! let document = latlab_peers::decode(text.as_bytes()).unwrap();
//! assert_eq!(document.source.tool, "cyclictest");
//! let column = &document.measurements[0].columns[0];
//! assert_eq!(column.latency.count, Some(4));
//! assert_eq!(column.latency.p50, Some(1000), "ns: the 1 us row");
//! assert_eq!(column.cpu, None, "the text does not say");
//! ```

#![warn(missing_docs)]

pub mod cmdline;
pub mod cyclictest;
pub mod document;
pub mod error;
pub mod rt_tests;
pub mod rtla;
pub mod stats;

use latlab_envelope::Envelope;
use sha2::{Digest, Sha256};

pub use document::{
    Column, Measurement, Overall, PeerDocument, PeerFormat, PeerSchema, PeerSettings, PeerSummary,
    PeerSystem, Quantity, Rounding, Source, SCHEMA, SCHEMA_VERSION,
};
pub use error::{DecodeError, Position};

/// The format of a peer file, from its content; `None` when it is none
/// of them (or not text).
pub fn detect(bytes: &[u8]) -> Option<PeerFormat> {
    let text = std::str::from_utf8(bytes).ok()?;
    let start = text.trim_start();
    if start.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        return rt_tests::detect(&value).then_some(PeerFormat::RtTestsJson);
    }
    if rtla::detect(text).is_some() {
        Some(PeerFormat::RtlaHist)
    } else if cyclictest::detect(text) {
        Some(PeerFormat::CyclictestHistogram)
    } else {
        None
    }
}

/// Reads a peer file: rt-tests JSON (an object with rt-tests' header),
/// rtla hist text (its `# RTLA ... histogram` first line) or cyclictest's
/// histogram text (its `# Histogram` line).
pub fn decode(bytes: &[u8]) -> Result<PeerDocument, DecodeError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let byte = e.valid_up_to();
        DecodeError::Malformed {
            format: "text",
            at: Position {
                line: bytes[..byte].iter().filter(|&&b| b == b'\n').count() + 1,
                byte,
            },
            message: "a byte that is not UTF-8: not a text or JSON result (is it compressed, or another file?)"
                .into(),
        }
    })?;
    let mut document = if text.trim_start().starts_with('{') {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| json_error(bytes, &e))?;
        if !rt_tests::detect(&value) {
            return Err(DecodeError::Unknown {
                seen: "a JSON object without a latlab `schema` or rt-tests' `rt_test_version:` and `cmdline:` keys"
                    .into(),
            });
        }
        rt_tests::decode(bytes, &value)?
    } else if rtla::detect(text).is_some() {
        rtla::decode(text)?
    } else if cyclictest::detect(text) {
        cyclictest::decode(text)?
    } else {
        return Err(DecodeError::Unknown {
            seen: error::glimpse(bytes),
        });
    };
    document.envelope.id = Some(file_id(bytes));
    plausible(&document)?;
    Ok(document)
}

/// More samples than this in a file cannot be (2^53: 285,000 years at
/// 1 kHz); below it, sums of several files' counts cannot overflow.
pub const MAX_SAMPLES: u64 = 1 << 53;

/// An error when a column's counts add up past [`MAX_SAMPLES`].
fn plausible(document: &PeerDocument) -> Result<(), DecodeError> {
    for m in &document.measurements {
        for c in &m.columns {
            let in_histogram = stats::total(c.histogram.iter().flatten().map(|b| b.count));
            let samples = [
                in_histogram.saturating_add(c.overflows.unwrap_or(0)),
                c.latency.count.unwrap_or(0),
            ];
            if samples.iter().any(|&n| n > MAX_SAMPLES) {
                return Err(DecodeError::Implausible {
                    format: document.source.format.name(),
                    message: format!("{} counts more than 2^53 samples", c.name),
                });
            }
        }
    }
    Ok(())
}

/// A JSON syntax error (a malformed or cut file) with its position.
pub fn json_error(bytes: &[u8], e: &serde_json::Error) -> DecodeError {
    // serde_json's column is that of the offending byte, or at the end of
    // the input the last byte read: the end is one further.
    let column = e.column() + usize::from(e.is_eof());
    let at = Position::of_line_column(bytes, e.line(), column);
    if e.is_eof() {
        DecodeError::Truncated {
            format: "JSON",
            at,
            missing: "the end of its JSON document".into(),
        }
    } else {
        DecodeError::Malformed {
            format: "JSON",
            at,
            message: format!("{e}: the file is damaged; use the file as the tool wrote it"),
        }
    }
}

/// The id of a file: `sha256-` and the first 32 hex digits of the SHA-256
/// of its bytes.
pub fn file_id(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256-{hex}")
}

/// An empty document, for the decoders to fill.
pub(crate) fn empty() -> PeerDocument {
    PeerDocument {
        envelope: Envelope::read_from_file(None, None),
        source: Source {
            tool: String::new(),
            version: None,
            format: PeerFormat::CyclictestHistogram,
            command_line: None,
            return_code: None,
        },
        ended_at: None,
        duration_s: None,
        settings: PeerSettings::default(),
        measurements: Vec::new(),
        overall: None,
        unknown: Vec::new(),
        notes: Vec::new(),
        extra: Default::default(),
    }
}

/// Fills the document's `overall` from its first measurement.
pub(crate) fn finish(mut document: PeerDocument) -> PeerDocument {
    document.overall = document.measurements.first().map(|m| Overall {
        quantity: m.quantity,
        latency: m.pooled().latency,
    });
    document
}
