//! `latlab respond`'s document, assembled from the measurement and the
//! lifecycle.

use latlab_measure::requirements::Requirement;
use latlab_respond::measure::{RespondConfig, RespondOutput};
use latlab_respond::result::{CheckOn, RespondContext, RespondResult, RespondSettings};
use latlab_rt::sched::Policy;

use crate::Lifecycle;

/// The measurement's document: its settings (what the responder obtained),
/// context and the verdict on the requirements.
pub fn assemble_document(
    life: &Lifecycle,
    config: &RespondConfig,
    requirements: &[Requirement],
    check_on: CheckOn,
    output: &RespondOutput,
    steal_ns: Vec<(usize, u64)>,
) -> RespondResult {
    let settings = RespondSettings {
        channel: config.channel.name().into(),
        channel_description: config.channel.describe(),
        gpio: config
            .gpio
            .as_ref()
            .map(|g| format!("{},{}", g.output, g.input)),
        count: config.count,
        duration_s: config.duration_ns.map(|d| d as f64 / 1e9),
        gap: config.gap,
        // What the responder obtained, as it read it back (the request
        // unless refused under --allow-unprivileged).
        policy: output.responder.policy.unwrap_or(Policy::Other),
        priority: output.responder.priority,
        timeout_ns: config.timeout_ns,
        cpu_dma_latency_us: life.session.dma_latency_us(),
        unprivileged: life.session.unprivileged(),
        steal_ns,
    };
    let context = RespondContext {
        envelope: latlab_document::Envelope::at(
            std::env::args().collect(),
            life.started(),
            life.system.clone(),
        )
        .with_warnings(life.warnings()),
        settings,
    };
    RespondResult::assemble(output, context, requirements, check_on)
}
