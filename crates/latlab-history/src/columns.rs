//! The columns a listing reads from a stored document, kept beside its
//! JSON so that listing and filtering need not parse every document.

use serde_json::Value;

use crate::variant_of;

/// The columns the listing reads from a document.
pub(crate) struct Columns {
    pub uid: String,
    pub schema: String,
    pub started_at: String,
    pub host: Option<String>,
    pub arch: Option<String>,
    pub kernel: Option<String>,
    pub preemption: Option<String>,
    pub load: Option<String>,
    pub variant: Option<String>,
    pub max_ns: Option<i64>,
    pub p999_ns: Option<i64>,
    pub verdict: Option<String>,
}

impl Columns {
    pub(crate) fn of(doc: &Value) -> Columns {
        let text = |v: &Value| v.as_str().map(str::to_string);
        let latency = |field: &str| {
            [&doc["overall"]["latency"], &doc["one_way"]["latency"]]
                .into_iter()
                .find_map(|l| l[field].as_u64())
                .map(|v| v.min(i64::MAX as u64) as i64)
        };
        Columns {
            uid: latlab_document::document_id(doc),
            schema: text(&doc["schema"]).unwrap_or_else(|| "unknown".into()),
            started_at: text(&doc["started_at"]).unwrap_or_default(),
            host: text(&doc["system"]["hostname"]),
            arch: text(&doc["system"]["machine"]),
            kernel: text(&doc["system"]["kernel_release"]),
            preemption: text(&doc["system"]["preemption_model"]),
            load: load_name(&doc["load"]),
            variant: variant_of(doc),
            max_ns: latency("max"),
            p999_ns: latency("p99_9"),
            verdict: text(&doc["verdict"]),
        }
    }
}

/// The load of a run as listed: its spec, the command, or `None`.
fn load_name(load: &Value) -> Option<String> {
    if load.is_null() {
        return None;
    }
    let spec = load["spec"].as_str().unwrap_or("?");
    Some(match load["command"].as_str() {
        Some(cmd) if spec == "none" => format!("`{cmd}`"),
        Some(cmd) => format!("{spec} + `{cmd}`"),
        None => spec.to_string(),
    })
}
