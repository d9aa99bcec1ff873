//! Which events a reader keeps: by event name, by CPU, by time (what
//! `latlab dump --events/--cpu/--from/--to` asks for).
//!
//! ```
//! use latlab_ftrace::filter::EventFilter;
//! let filter = EventFilter {
//!     events: EventFilter::parse_events(&["sched:sched_switch".into(), "irq/*".into()]),
//!     ..EventFilter::default()
//! };
//! assert!(filter.event_ok("sched", "sched_switch"));
//! assert!(filter.event_ok("irq", "irq_handler_entry"));
//! assert!(!filter.event_ok("sched", "sched_waking"));
//! assert!(filter.cpu_ok(3) && filter.time_ok(0));
//! ```

use crate::Meta;

/// Which events to keep; the default keeps every one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFilter {
    /// Events by (system, name): no system is any system, name `*` every
    /// event of the system. Empty: every event.
    pub events: Vec<(Option<String>, String)>,
    /// The CPUs kept, indexed by CPU number (a CPU beyond the table is not
    /// kept); `None`: every CPU.
    pub cpus: Option<Vec<bool>>,
    /// Events before this time are dropped, ns.
    pub from: u64,
    /// Events after this time are dropped, ns.
    pub to: u64,
}

impl Default for EventFilter {
    fn default() -> Self {
        EventFilter {
            events: Vec::new(),
            cpus: None,
            from: 0,
            to: u64::MAX,
        }
    }
}

impl EventFilter {
    /// Event names as given (`name`, `system:name`, `system/name`,
    /// `system:*`), empty ones skipped.
    pub fn parse_events(specs: &[String]) -> Vec<(Option<String>, String)> {
        specs
            .iter()
            .filter(|e| !e.is_empty())
            .map(|e| match e.split_once([':', '/']) {
                Some((s, n)) => (Some(s.to_string()), n.to_string()),
                None => (None, e.to_string()),
            })
            .collect()
    }

    /// Whether events of `cpu` are kept.
    pub fn cpu_ok(&self, cpu: u32) -> bool {
        match &self.cpus {
            None => true,
            Some(v) => v.get(cpu as usize).copied().unwrap_or(false),
        }
    }

    /// Whether events named `system:name` are kept.
    pub fn event_ok(&self, system: &str, name: &str) -> bool {
        self.events.is_empty()
            || self
                .events
                .iter()
                .any(|(s, n)| (n == name || n == "*") && s.as_deref().is_none_or(|s| s == system))
    }

    /// Whether an event at `ts` (ns) is in the time range.
    pub fn time_ok(&self, ts: u64) -> bool {
        (self.from..=self.to).contains(&ts)
    }

    /// The first event asked for that `meta` has no format for, as given
    /// (`system:name` or `name`): asking for it is a typo.
    pub fn unknown_event(&self, meta: &Meta) -> Option<String> {
        self.events.iter().find_map(|(sys, name)| {
            let known = meta.events.iter().any(|e| {
                (name == "*" || &e.name == name) && sys.as_deref().is_none_or(|s| s == e.system)
            });
            (!known).then(|| match sys {
                Some(s) => format!("{s}:{name}"),
                None => name.clone(),
            })
        })
    }
}
