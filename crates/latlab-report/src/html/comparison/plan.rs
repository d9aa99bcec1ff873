//! What a report of several results compares: per quantity, the results
//! that hold it (the first the baseline), and the results left out.

use latlab_document::comparable::{Distribution, Quantity};

use super::super::entry::Entry;

/// One distribution in a comparison, with the name it has there.
#[derive(Debug, Clone)]
pub struct Member<'a> {
    /// Which entry of the report holds it (0-based).
    pub entry: usize,
    /// Its name: the entry's label, and the part (`watch comm x: thread
    /// cyclictest 4242`).
    pub label: String,
    /// The distribution.
    pub distribution: Distribution<'a>,
}

/// What a report of several results compares.
#[derive(Debug, Clone, Default)]
pub struct Plan<'a> {
    /// Per quantity that two results or more hold, its members (the
    /// baseline first), in the order the quantities first appear.
    pub compared: Vec<(Quantity, Vec<Member<'a>>)>,
    /// The entries compared in none of them (0-based), with why.
    pub left_out: Vec<(usize, String)>,
}

/// The comparison of `entries`: every quantity that two or more of them
/// hold, and the entries left out with what they hold.
pub fn plan(entries: &[Entry]) -> Plan<'_> {
    let mut all: Vec<(Quantity, Vec<Member<'_>>)> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        for distribution in entry.document.distributions() {
            let label = match (distribution.part, distribution.tid) {
                (Some(_), Some(0)) => format!("{}: ended threads", entry.label),
                (Some(part), Some(tid)) => format!("{}: thread {part} {tid}", entry.label),
                (Some(part), None) => format!("{}: {part}", entry.label),
                (None, _) => entry.label.clone(),
            };
            let quantity = distribution.quantity;
            let member = Member {
                entry: i,
                label,
                distribution,
            };
            match all.iter_mut().find(|(q, _)| *q == quantity) {
                Some((_, members)) => members.push(member),
                None => all.push((quantity, vec![member])),
            }
        }
    }
    // A quantity is compared when two entries hold it (the threads of one
    // watch alone are its own section's business).
    all.retain(|(_, members)| members.iter().any(|m| m.entry != members[0].entry));
    let left_out = (0..entries.len())
        .filter(|&i| !all.iter().any(|(_, m)| m.iter().any(|m| m.entry == i)))
        .map(|i| {
            let document = &entries[i].document;
            let why = if document.distributions().is_empty() {
                format!("it holds {}", document.holds())
            } else {
                format!("no other result holds its {}", document.holds())
            };
            (i, why)
        })
        .collect();
    Plan {
        compared: all,
        left_out,
    }
}

impl Plan<'_> {
    /// The plan in sentences, one per line, for a terminal: what is
    /// compared with what, and what is not and why.
    pub fn describe(&self, entries: &[Entry]) -> Vec<String> {
        let mut lines: Vec<String> = self
            .compared
            .iter()
            .map(|(quantity, members)| {
                format!(
                    "compared, {} (the first is the baseline): {}",
                    quantity.name(),
                    members
                        .iter()
                        .map(|m| m.label.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            })
            .collect();
        lines.extend(
            self.left_out
                .iter()
                .map(|(i, why)| format!("not compared: {}: {why}", entries[*i].label)),
        );
        lines
    }
}
