//! The terminal text of every document kind ([`TerminalText`]): what a
//! command prints at its end and `latlab report` shows on a terminal.
//!
//! One module per kind: [`run`] (the run's tables; [`blocks`] holds those
//! respond shares), [`run_summary`] (what `latlab run` prints at each
//! verbosity), [`respond`], [`lockbench`], [`simulation`], [`explain`] (with
//! [`causes`] and [`agreement`]),
//! [`load`], [`watch`], [`tune`] and [`peer`] (a peer tool's result read by
//! latlab).
//! The commands' live lines and summaries: [`live`] (run, respond, load),
//! [`record`] (record's summary).

pub mod agreement;
pub mod blocks;
pub mod causes;
pub mod explain;
pub mod live;
pub mod load;
pub mod lockbench;
pub mod peer;
pub mod record;
pub mod respond;
pub mod run;
pub mod run_summary;
pub mod simulation;
pub mod tune;
pub mod watch;

use latlab_document::{
    BenchReport, Document, ExplainDocument, LoadDocument, RespondResult, RunDocument, SimReport,
};

use crate::formats::TerminalText;

/// The background load section under a summary table (empty without a load).
fn background_load(load: Option<&latlab_load::LoadReport>) -> String {
    load.map(|load| format!("\nBackground load ({})\n{}", load.name(), load::table(load)))
        .unwrap_or_default()
}

impl TerminalText for RunDocument {
    fn terminal_text(&self) -> String {
        let mut out = run::summary_table(&self.result);
        out.push_str(&background_load(self.load.as_ref()));
        if let Some(explain) = &self.explain {
            out.push('\n');
            out.push_str(&explain::text(explain));
        }
        if let Some(agreement) = &self.trace_agreement {
            out.push('\n');
            out.push_str(&agreement::agreement_text(agreement));
        }
        out
    }
}

impl TerminalText for RespondResult {
    fn terminal_text(&self) -> String {
        let mut out = respond::summary_table(self);
        out.push_str(&background_load(self.load.as_ref()));
        out
    }
}

impl TerminalText for BenchReport {
    fn terminal_text(&self) -> String {
        let mut out = lockbench::table(&self.config, &self.results);
        out.push_str(&background_load(self.load.as_ref()));
        out
    }
}

impl TerminalText for SimReport {
    fn terminal_text(&self) -> String {
        simulation::table(&self.comparison)
    }
}

impl TerminalText for ExplainDocument {
    fn terminal_text(&self) -> String {
        explain::text(&self.report)
    }
}

impl TerminalText for LoadDocument {
    fn terminal_text(&self) -> String {
        load::table(&self.report)
    }
}

impl TerminalText for latlab_document::WatchDocument {
    fn terminal_text(&self) -> String {
        watch::text(self)
    }
}

impl TerminalText for latlab_document::PeerDocument {
    fn terminal_text(&self) -> String {
        peer::text(self)
    }
}

impl TerminalText for Document {
    /// The kind's text; a kind latlab does not know, as pretty JSON.
    fn terminal_text(&self) -> String {
        match self {
            Document::Run(d) => d.terminal_text(),
            Document::Respond(d) => d.terminal_text(),
            Document::Lockbench(d) => d.terminal_text(),
            Document::Simulation(d) => d.terminal_text(),
            Document::Explain(d) => d.terminal_text(),
            Document::Load(d) => d.terminal_text(),
            Document::Watch(d) => d.terminal_text(),
            Document::Tune(d) => d.terminal_text(),
            Document::Peer(d) => d.terminal_text(),
            Document::Other { value, .. } => {
                serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
            }
        }
    }
}
