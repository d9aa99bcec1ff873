//! Event sets and `--events` specifications.

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::{Result, TracefsError};

/// A kernel trace event, `system:name`.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct EventId {
    /// The subsystem (directory under `events/`).
    pub system: String,
    /// The event name.
    pub name: String,
}

impl std::fmt::Display for EventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.system, self.name)
    }
}

impl EventId {
    /// Builds an event id.
    pub fn new(system: &str, name: &str) -> Self {
        EventId {
            system: system.to_string(),
            name: name.to_string(),
        }
    }
}

/// A named set of events.
#[derive(Debug, Clone, Copy)]
pub struct EventSet {
    /// The set name used in `--events`.
    pub name: &'static str,
    /// Whether the set is part of the defaults.
    pub default: bool,
    /// What the set is for.
    pub about: &'static str,
    /// The events, `system:event`.
    pub events: &'static [&'static str],
}

/// The event sets latlab knows, defaults first.
pub const EVENT_SETS: &[EventSet] = &[
    EventSet {
        name: "sched",
        default: true,
        about: "context switches, wake-ups, migrations",
        events: &[
            "sched:sched_switch",
            "sched:sched_waking",
            "sched:sched_wakeup",
            "sched:sched_wakeup_new",
            "sched:sched_migrate_task",
        ],
    },
    EventSet {
        name: "irq",
        default: true,
        about: "hard and soft interrupts",
        events: &[
            "irq:irq_handler_entry",
            "irq:irq_handler_exit",
            "irq:softirq_raise",
            "irq:softirq_entry",
            "irq:softirq_exit",
        ],
    },
    EventSet {
        name: "timer",
        default: true,
        about: "hrtimers and timer-wheel timers",
        events: &[
            "timer:hrtimer_start",
            "timer:hrtimer_expire_entry",
            "timer:hrtimer_expire_exit",
            "timer:hrtimer_cancel",
            "timer:timer_expire_entry",
            "timer:timer_expire_exit",
        ],
    },
    EventSet {
        name: "irq_vectors",
        default: true,
        about: "the local timer interrupt (x86 only)",
        events: &[
            "irq_vectors:local_timer_entry",
            "irq_vectors:local_timer_exit",
        ],
    },
    EventSet {
        name: "nmi",
        default: true,
        about: "non-maskable interrupts",
        events: &["nmi:nmi_handler"],
    },
    EventSet {
        name: "workqueue",
        default: true,
        about: "kernel work items",
        events: &[
            "workqueue:workqueue_queue_work",
            "workqueue:workqueue_activate_work",
            "workqueue:workqueue_execute_start",
            "workqueue:workqueue_execute_end",
        ],
    },
    EventSet {
        name: "kmem",
        default: true,
        about:
            "page allocation, on the measured CPUs only when known (run --cpus, record --rt-cpus)",
        events: &["kmem:mm_page_alloc"],
    },
    EventSet {
        name: "syscalls",
        default: false,
        about: "every system call entry and exit (raw_syscalls)",
        events: &["raw_syscalls:sys_enter", "raw_syscalls:sys_exit"],
    },
    EventSet {
        name: "block",
        default: false,
        about: "block I/O requests",
        events: &[
            "block:block_bio_queue",
            "block:block_rq_insert",
            "block:block_rq_issue",
            "block:block_rq_complete",
        ],
    },
    EventSet {
        name: "net",
        default: false,
        about: "network transmit and receive",
        events: &[
            "net:net_dev_queue",
            "net:net_dev_xmit",
            "net:netif_rx",
            "net:netif_receive_skb",
            "napi:napi_poll",
        ],
    },
    EventSet {
        name: "lock",
        default: false,
        about: "lock contention",
        events: &["lock:contention_begin", "lock:contention_end"],
    },
];

/// The subsystem whose events are recorded only on the measured CPUs when a
/// capture knows them (`CaptureOptions::measured_cpus`): the page allocator's
/// events are the busiest on a loaded machine (most of a trace under a
/// network load), and `latlab explain` reads them only on a late task's own
/// CPU, as what that task waited for there.
pub const MEASURED_CPUS_ONLY_SYSTEM: &str = "kmem";

impl EventId {
    /// True for an event recorded only on the measured CPUs
    /// ([`MEASURED_CPUS_ONLY_SYSTEM`]).
    pub fn measured_cpus_only(&self) -> bool {
        self.system == MEASURED_CPUS_ONLY_SYSTEM
    }
}

/// The tracefs event filter that keeps only events on `cpus` (sorted or
/// not), ranges folded: `CPU == 0`, `(CPU >= 2 && CPU <= 5) || CPU == 7`.
/// `None` for no CPU.
pub fn cpu_filter(cpus: &[usize]) -> Option<String> {
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => format!("CPU == {}", cpus[i]),
            1 => format!("CPU == {} || CPU == {}", cpus[i], cpus[j]),
            _ => format!("(CPU >= {} && CPU <= {})", cpus[i], cpus[j]),
        });
        i = j + 1;
    }
    (!parts.is_empty()).then(|| parts.join(" || "))
}

fn parse_event(s: &str) -> Option<EventId> {
    let (sys, name) = s.split_once(':')?;
    Some(EventId::new(sys, name))
}

/// The events requested by a specification, before checking the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventRequest {
    /// Exact events.
    pub events: BTreeSet<EventId>,
    /// Whole subsystems (`system:*`).
    pub systems: BTreeSet<String>,
    /// Events removed with `-`.
    pub removed: BTreeSet<EventId>,
    /// Subsystems removed with `-system:*`.
    pub removed_systems: BTreeSet<String>,
}

/// Parses `--events` items. Each item may hold several comma-separated
/// parts. A part is a set name (`sched`, `syscalls`, `default`, ...),
/// `system:event` or `system:*`; prefix `+` adds to the defaults and `-`
/// removes. With only `+`/`-` parts (or none at all) the defaults are the
/// base; any plain part replaces them.
pub fn parse_event_spec<S: AsRef<str>>(items: &[S]) -> Result<EventRequest> {
    let parts: Vec<&str> = items
        .iter()
        .flat_map(|s| s.as_ref().split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let mut req = EventRequest::default();
    let replaces = parts
        .iter()
        .any(|p| !p.starts_with('+') && !p.starts_with('-'));
    if !replaces {
        add_part(&mut req, "default", false)?;
    }
    for part in parts {
        let (remove, body) = match part.as_bytes()[0] {
            b'+' => (false, &part[1..]),
            b'-' => (true, &part[1..]),
            _ => (false, part),
        };
        if body.is_empty() {
            return Err(TracefsError::BadEventSpec {
                spec: part.to_string(),
                reason: "nothing after the sign".into(),
            });
        }
        add_part(&mut req, body, remove)?;
    }
    Ok(req)
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn add_part(req: &mut EventRequest, body: &str, remove: bool) -> Result<()> {
    let add_event = |req: &mut EventRequest, ev: EventId| {
        if remove {
            req.events.remove(&ev);
            req.removed.insert(ev);
        } else {
            req.removed.remove(&ev);
            req.events.insert(ev);
        }
    };
    if body == "default" || body == "defaults" {
        for set in EVENT_SETS.iter().filter(|s| s.default) {
            for e in set.events {
                add_event(req, parse_event(e).expect("static sets are system:event"));
            }
        }
        return Ok(());
    }
    if let Some((sys, name)) = body.split_once(':') {
        if !valid_name(sys) || !(name == "*" || valid_name(name)) {
            return Err(TracefsError::BadEventSpec {
                spec: body.to_string(),
                reason: "system and event names are letters, digits, `_` and `-`".into(),
            });
        }
        if name == "*" {
            if remove {
                req.systems.remove(sys);
                req.events.retain(|e| e.system != sys);
                req.removed_systems.insert(sys.to_string());
            } else {
                req.removed_systems.remove(sys);
                req.systems.insert(sys.to_string());
            }
        } else {
            add_event(req, EventId::new(sys, name));
        }
        return Ok(());
    }
    match EVENT_SETS.iter().find(|s| s.name == body) {
        Some(set) => {
            for e in set.events {
                add_event(req, parse_event(e).expect("static sets are system:event"));
            }
            Ok(())
        }
        None => Err(TracefsError::BadEventSpec {
            spec: body.to_string(),
            reason: "unknown set name (for a whole subsystem write `system:*`)".into(),
        }),
    }
}

/// The events to enable, checked against the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedEvents {
    /// Events present on this kernel, sorted.
    pub enabled: Vec<EventId>,
    /// Requested events this kernel does not have.
    pub missing: Vec<EventId>,
    /// Requested subsystems this kernel does not have.
    pub missing_systems: Vec<String>,
}

/// Checks a request against the `events/` directory of a tracefs instance.
pub fn resolve_events(req: &EventRequest, events_dir: &Path) -> Result<ResolvedEvents> {
    let mut out = ResolvedEvents::default();
    let mut enabled = BTreeSet::new();
    for ev in &req.events {
        if req.removed_systems.contains(&ev.system) {
            continue;
        }
        if events_dir
            .join(&ev.system)
            .join(&ev.name)
            .join("enable")
            .exists()
        {
            enabled.insert(ev.clone());
        } else {
            out.missing.push(ev.clone());
        }
    }
    for sys in &req.systems {
        let dir = events_dir.join(sys);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            out.missing_systems.push(sys.clone());
            continue;
        };
        for entry in entries.flatten() {
            if entry.path().join("enable").exists() && entry.path().join("format").exists() {
                let ev = EventId::new(sys, &entry.file_name().to_string_lossy());
                if !req.removed.contains(&ev) {
                    enabled.insert(ev);
                }
            }
        }
    }
    out.enabled = enabled.into_iter().collect();
    if out.enabled.is_empty() {
        let mut missing: Vec<String> = out.missing.iter().map(|e| e.to_string()).collect();
        missing.extend(out.missing_systems.iter().map(|s| format!("{s}:*")));
        let available = events_dir
            .parent()
            .map(|p| p.join("available_events"))
            .unwrap_or_else(|| events_dir.join("../available_events"));
        return Err(TracefsError::NoEvents {
            missing: if missing.is_empty() {
                "(nothing requested)".into()
            } else {
                missing.join(",")
            },
            available,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(req: &EventRequest) -> Vec<String> {
        req.events.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn no_spec_means_defaults() {
        let req = parse_event_spec::<&str>(&[]).unwrap();
        let n = names(&req);
        assert!(n.contains(&"sched:sched_switch".to_string()));
        assert!(n.contains(&"kmem:mm_page_alloc".to_string()));
        assert!(!n.iter().any(|e| e.starts_with("raw_syscalls")));
    }

    #[test]
    fn plus_adds_to_defaults_and_minus_removes() {
        let req = parse_event_spec(&["+syscalls,-kmem"]).unwrap();
        let n = names(&req);
        assert!(n.contains(&"raw_syscalls:sys_enter".to_string()));
        assert!(n.contains(&"sched:sched_switch".to_string()));
        assert!(!n.contains(&"kmem:mm_page_alloc".to_string()));
    }

    #[test]
    fn plain_items_replace_defaults() {
        let req = parse_event_spec(&["sched", "timer:hrtimer_start"]).unwrap();
        let n = names(&req);
        assert!(n.contains(&"sched:sched_switch".to_string()));
        assert!(n.contains(&"timer:hrtimer_start".to_string()));
        assert!(!n.contains(&"irq:softirq_entry".to_string()));
        let req = parse_event_spec(&["power:*"]).unwrap();
        assert!(req.events.is_empty());
        assert!(req.systems.contains("power"));
    }

    #[test]
    fn the_defaults_keep_page_allocation_and_nothing_else_of_kmem() {
        // explain reads mm_page_alloc; mm_page_free was recorded as often
        // and read by nothing.
        let req = parse_event_spec::<&str>(&[]).unwrap();
        let kmem: Vec<String> = names(&req)
            .into_iter()
            .filter(|e| e.starts_with("kmem:"))
            .collect();
        assert_eq!(kmem, ["kmem:mm_page_alloc"]);
        assert!(EventId::new("kmem", "mm_page_free").measured_cpus_only());
        assert!(!EventId::new("sched", "sched_switch").measured_cpus_only());
        // It can still be asked for.
        let req = parse_event_spec(&["+kmem:mm_page_free"]).unwrap();
        assert!(names(&req).contains(&"kmem:mm_page_free".to_string()));
    }

    #[test]
    fn cpu_filters_fold_ranges() {
        assert_eq!(cpu_filter(&[0]).unwrap(), "CPU == 0");
        assert_eq!(cpu_filter(&[3, 1, 1]).unwrap(), "CPU == 1 || CPU == 3");
        assert_eq!(cpu_filter(&[2, 3]).unwrap(), "CPU == 2 || CPU == 3");
        assert_eq!(
            cpu_filter(&[7, 2, 3, 4, 5]).unwrap(),
            "(CPU >= 2 && CPU <= 5) || CPU == 7"
        );
        assert_eq!(cpu_filter(&[]), None);
    }

    #[test]
    fn bad_specs_are_rejected() {
        assert!(parse_event_spec(&["nosuchset"]).is_err());
        assert!(parse_event_spec(&["+"]).is_err());
        assert!(parse_event_spec(&["a b:c"]).is_err());
    }

    #[test]
    fn resolve_against_a_fake_events_dir() {
        let dir = tempfile::tempdir().unwrap();
        let ev = dir.path().join("events");
        for e in [
            "sched/sched_switch",
            "power/cpu_idle",
            "power/cpu_frequency",
        ] {
            std::fs::create_dir_all(ev.join(e)).unwrap();
            std::fs::write(ev.join(e).join("enable"), "0").unwrap();
            std::fs::write(ev.join(e).join("format"), "name: x").unwrap();
        }
        let req = parse_event_spec(&["sched", "power:*", "-power:cpu_idle"]).unwrap();
        let r = resolve_events(&req, &ev).unwrap();
        let got: Vec<String> = r.enabled.iter().map(|e| e.to_string()).collect();
        assert_eq!(got, vec!["power:cpu_frequency", "sched:sched_switch"]);
        assert!(r.missing.iter().any(|e| e.name == "sched_waking"));
        let req = parse_event_spec(&["nmi"]).unwrap();
        match resolve_events(&req, &ev) {
            Err(TracefsError::NoEvents { missing, .. }) => assert!(missing.contains("nmi_handler")),
            other => panic!("expected NoEvents, got {other:?}"),
        }
    }
}
