//! The results of a report, each with the name it has there.

use std::fmt::Write;

use latlab_document::{Document, RunDocument};

/// One result with the name it has in the report.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Short name (legend, table rows): `no load`, `6.18.0-rt`, ...
    pub label: String,
    /// The result.
    pub document: Document,
}

/// Names for documents that tell them apart: the facts that differ between
/// the runs (host, kernel, preemption model, load), else their start times.
pub fn auto_labels(documents: &[Document]) -> Vec<String> {
    let facts = |run: &RunDocument| -> [String; 4] {
        [
            run.system.hostname.clone(),
            run.system.kernel_release.clone(),
            format!(
                "preempt {}",
                run.system.preemption_model.as_deref().unwrap_or("?")
            ),
            run.load_name(),
        ]
    };
    let runs: Vec<Option<[String; 4]>> = documents.iter().map(|d| d.as_run().map(facts)).collect();
    let with_peers = documents.iter().any(|d| matches!(d, Document::Peer(_)));
    let known: Vec<&[String; 4]> = runs.iter().flatten().collect();
    let differing: Vec<usize> = (0..4)
        .filter(|&i| known.iter().any(|f| f[i] != known[0][i]))
        .collect();
    let mut labels: Vec<String> = documents
        .iter()
        .zip(&runs)
        .map(|(d, facts)| match (d, facts) {
            (Document::Run(run), Some(facts)) => {
                let differs = differing
                    .iter()
                    .map(|&i| facts[i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                // Next to another tool's results a run is named by its tool.
                match (with_peers, differing.is_empty()) {
                    (true, true) => "latlab run".into(),
                    (true, false) => format!("latlab run, {differs}"),
                    (false, true) => run.started_at.clone().unwrap_or_default(),
                    (false, false) => differs,
                }
            }
            (Document::Peer(peer), _) => peer.tool_name(),
            (Document::Lockbench(_), _) => "lockbench".into(),
            (Document::Simulation(_), _) => "simulation".into(),
            (Document::Respond(respond), _) => format!("respond {}", respond.settings.channel),
            (Document::Explain(_), _) => "explain".into(),
            (Document::Load(load), _) => format!("load {}", load.report.name()),
            (Document::Watch(w), _) => format!("watch {}", w.settings.selection),
            (Document::Tune(t), _) => {
                format!("tune CPUs {}", latlab_fix::cpu_list(&t.settings.cpus))
            }
            (Document::Other { schema, .. }, _) => schema.clone(),
            _ => String::new(),
        })
        .collect();
    // Still equal: number them.
    let copy = labels.clone();
    for (i, label) in labels.iter_mut().enumerate() {
        if copy.iter().filter(|l| *l == label).count() > 1 {
            let _ = write!(label, " #{}", i + 1);
        }
    }
    labels
}

/// `no load`, the load spec (`full`, `io:2`), or the load command.
pub fn load_name(run: &RunDocument) -> String {
    run.load_name()
}
