//! The comparable group of a result: which stored results are one series,
//! so that a baseline, a trend, a regression or "the latest" is taken over
//! results that measured the same thing the same way.
//!
//! A group is the result's origin (the board that pushed it, else the host
//! that measured it), its kind (the schema without `latlab.`: `run`,
//! `respond`, `watch`, `lockbench`, `peer`, or another tool's own schema),
//! its kernel release, preemption model and load, and its variant: the
//! setting that makes two results of one kind measure different things (a
//! run's timer, period and policy; a response's channel and policy; a
//! watch's selection; a peer file's tool, period and policy, so that
//! cyclictest and oslat files are never one series). A kind this crate does
//! not know groups by everything but the variant, with no code to add.

use latlab_measure::units::format_ns;
use serde_json::Value;

use crate::Entry;

/// The results that may be set against each other as one series.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Group {
    /// The board that pushed the results, else the host that measured them
    /// (`?` when neither is known).
    pub origin: String,
    /// The kind: the schema without its `latlab.` prefix (`run`, `respond`,
    /// `watch`, `watch-snapshot`, `lockbench`, or another tool's schema).
    pub kind: String,
    /// What the kind measured, where it measures different things
    /// ([`variant_of`]); `None`: one variant only.
    pub variant: Option<String>,
    /// Kernel release.
    pub kernel: Option<String>,
    /// Preemption model.
    pub preemption: Option<String>,
    /// Background load (`None`: no load).
    pub load: Option<String>,
}

/// The kind of a schema: `latlab.run` is `run`; another tool's schema is
/// its own kind, as it is.
pub fn kind_of(schema: &str) -> &str {
    schema.strip_prefix("latlab.").unwrap_or(schema)
}

/// The setting that makes two results of one kind measure different
/// things, in words: a run's timer, period and scheduling policy
/// (`clock-nanosleep every 1.00 ms, fifo 95`), a response's channel and
/// policy (`pty, fifo 95`), a watch's or a watch snapshot's selection
/// (`comm cyclictest`), a peer file's tool and the period and policy it
/// states (`cyclictest every 1.00 ms, fifo 95`; `oslat`). `None` for the
/// kinds measured one way only.
pub fn variant_of(doc: &Value) -> Option<String> {
    let settings = &doc["settings"];
    let text = |v: &Value| v.as_str().map(str::to_string);
    let policy = || match (settings["policy"].as_str(), settings["priority"].as_i64()) {
        (Some(policy), Some(priority)) if policy != "other" => Some(format!("{policy} {priority}")),
        (Some(policy), _) => Some(policy.to_string()),
        (None, Some(priority)) => Some(format!("priority {priority}")),
        (None, None) => None,
    };
    // What measured, and how often: `clock-nanosleep every 1.00 ms`.
    let every = |what: Option<String>| match (what, settings["interval_ns"].as_u64()) {
        (Some(what), Some(ns)) => Some(format!("{what} every {}", format_ns(ns))),
        (what, ns) => what.or(ns.map(|ns| format!("every {}", format_ns(ns)))),
    };
    let parts: Vec<String> = match kind_of(doc["schema"].as_str().unwrap_or("")) {
        "run" => [every(text(&settings["timer"])), policy()]
            .into_iter()
            .flatten()
            .collect(),
        "peer" => [every(text(&doc["source"]["tool"])), policy()]
            .into_iter()
            .flatten()
            .collect(),
        "respond" => [text(&settings["channel"]), policy()]
            .into_iter()
            .flatten()
            .collect(),
        "watch" => text(&settings["selection"]).into_iter().collect(),
        "watch-snapshot" => text(&doc["selection"]).into_iter().collect(),
        _ => Vec::new(),
    };
    (!parts.is_empty()).then(|| parts.join(", "))
}

impl Entry {
    /// The result's kind ([`kind_of`] its schema).
    pub fn kind(&self) -> &str {
        kind_of(&self.schema)
    }

    /// The result's comparable group.
    pub fn group(&self) -> Group {
        Group {
            origin: self
                .board
                .clone()
                .or_else(|| self.host.clone())
                .unwrap_or_else(|| "?".into()),
            kind: self.kind().to_string(),
            variant: self.variant.clone(),
            kernel: self.kernel.clone(),
            preemption: self.preemption.clone(),
            load: self.load.clone(),
        }
    }
}

/// The facts of a group, named, in the order they are shown.
fn facts(group: &Group) -> [(&'static str, String); 6] {
    let or = |v: &Option<String>, none: &str| v.clone().unwrap_or_else(|| none.into());
    [
        ("origin", group.origin.clone()),
        ("kind", group.kind.clone()),
        ("variant", or(&group.variant, "-")),
        ("kernel", or(&group.kernel, "?")),
        ("preemption", or(&group.preemption, "?")),
        ("load", or(&group.load, "no load")),
    ]
}

impl Group {
    /// The names of the facts in which two groups differ (`kernel`,
    /// `load`, ...), in the order they are shown; empty: the same group.
    pub fn differences(&self, other: &Group) -> Vec<&'static str> {
        facts(self)
            .into_iter()
            .zip(facts(other))
            .filter(|(a, b)| a.1 != b.1)
            .map(|(a, _)| a.0)
            .collect()
    }

    /// The group in words, without its origin: `run (clock-nanosleep every
    /// 1.00 ms, fifo 95), 6.6.58-rt45 rt, no load`.
    pub fn describe(&self) -> String {
        let mut text = self.kind.clone();
        if let Some(variant) = &self.variant {
            text.push_str(&format!(" ({variant})"));
        }
        text.push_str(&format!(
            ", {} {}, {}",
            self.kernel.as_deref().unwrap_or("?"),
            self.preemption.as_deref().unwrap_or("?"),
            self.load.as_deref().unwrap_or("no load")
        ));
        text
    }
}

/// One group's results, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// What the results have in common.
    pub group: Group,
    /// The results, by start time (then by id), oldest first.
    pub entries: Vec<Entry>,
}

impl Series {
    /// `entries` split into their groups, each oldest first; the groups
    /// sorted by their facts (origin, kind, variant, kernel, ...).
    pub fn split(entries: &[Entry]) -> Vec<Series> {
        let mut groups: std::collections::BTreeMap<Group, Vec<Entry>> = Default::default();
        for entry in entries {
            groups.entry(entry.group()).or_default().push(entry.clone());
        }
        groups
            .into_iter()
            .map(|(group, mut entries)| {
                entries.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
                Series { group, entries }
            })
            .collect()
    }

    /// The newest result.
    pub fn latest(&self) -> Option<&Entry> {
        self.entries.last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(
        id: i64,
        schema: &str,
        variant: Option<&str>,
        kernel: &str,
        load: Option<&str>,
    ) -> Entry {
        Entry {
            id,
            uid: format!("u{id}"),
            board: Some("rpi4".into()),
            schema: schema.into(),
            started_at: format!("2026-11-27T10:{id:02}:00Z"),
            host: Some("h".into()),
            arch: None,
            kernel: Some(kernel.into()),
            preemption: Some("rt".into()),
            load: load.map(Into::into),
            variant: variant.map(Into::into),
            max_ns: Some(1000),
            p999_ns: None,
            verdict: None,
        }
    }

    #[test]
    fn variants_name_what_each_kind_measured() {
        let run = json!({"schema": "latlab.run", "settings": {"timer": "clock-nanosleep",
            "interval_ns": 1_000_000u64, "policy": "fifo", "priority": 95}});
        assert_eq!(
            variant_of(&run).as_deref(),
            Some("clock-nanosleep every 1.00 ms, fifo 95")
        );
        let unprivileged = json!({"schema": "latlab.run", "settings": {"timer": "clock-nanosleep",
            "interval_ns": 1_000_000u64, "policy": "other", "priority": 0}});
        assert_eq!(
            variant_of(&unprivileged).as_deref(),
            Some("clock-nanosleep every 1.00 ms, other")
        );
        let respond = json!({"schema": "latlab.respond", "settings": {"channel": "udp", "policy": "fifo", "priority": 90}});
        assert_eq!(variant_of(&respond).as_deref(), Some("udp, fifo 90"));
        let watch = json!({"schema": "latlab.watch", "settings": {"selection": "comm cyclictest", "interval_ns": 10}});
        assert_eq!(variant_of(&watch).as_deref(), Some("comm cyclictest"));
        let snapshot = json!({"schema": "latlab.watch-snapshot", "selection": "pid 4"});
        assert_eq!(variant_of(&snapshot).as_deref(), Some("pid 4"));
        let cyclictest = json!({"schema": "latlab.peer", "source": {"tool": "cyclictest"},
            "settings": {"interval_ns": 1_000_000u64, "policy": "fifo", "priority": 95}});
        assert_eq!(
            variant_of(&cyclictest).as_deref(),
            Some("cyclictest every 1.00 ms, fifo 95")
        );
        let status_lines = json!({"schema": "latlab.peer", "source": {"tool": "cyclictest"},
            "settings": {"interval_ns": 200_000u64, "priority": 80}});
        assert_eq!(
            variant_of(&status_lines).as_deref(),
            Some("cyclictest every 200 us, priority 80")
        );
        let oslat = json!({"schema": "latlab.peer", "source": {"tool": "oslat"}, "settings": {}});
        assert_eq!(variant_of(&oslat).as_deref(), Some("oslat"));
        assert_eq!(variant_of(&json!({"schema": "latlab.lockbench"})), None);
        assert_eq!(
            variant_of(&json!({"schema": "acme.hist", "settings": {"timer": "x"}})),
            None
        );
    }

    #[test]
    fn series_split_by_kind_variant_kernel_and_load() {
        let entries = [
            entry(1, "latlab.run", Some("a"), "6.6", None),
            entry(2, "latlab.respond", Some("pty"), "6.6", Some("full")),
            entry(3, "latlab.run", Some("a"), "6.6", None),
            entry(4, "latlab.watch", Some("comm x"), "6.6", None),
            entry(5, "latlab.run", Some("a"), "6.12", None),
            entry(6, "latlab.run", Some("a"), "6.6", Some("full")),
            entry(7, "acme.hist", None, "6.6", None),
            entry(8, "latlab.run", Some("b"), "6.6", None),
        ];
        let series = Series::split(&entries);
        let ids: Vec<Vec<i64>> = series
            .iter()
            .map(|s| s.entries.iter().map(|e| e.id).collect())
            .collect();
        assert_eq!(
            ids,
            [
                vec![7],
                vec![2],
                vec![5],
                vec![1, 3],
                vec![6],
                vec![8],
                vec![4]
            ]
        );
        assert_eq!(series[3].latest().unwrap().id, 3);
        assert_eq!(
            series[0].group.kind, "acme.hist",
            "another tool's kind as it is"
        );
        assert_eq!(
            entries[0].group().differences(&entries[5].group()),
            ["load"]
        );
        assert_eq!(
            entries[0].group().differences(&entries[3].group()),
            ["kind", "variant"]
        );
        assert_eq!(entries[1].group().describe(), "respond (pty), 6.6 rt, full");
    }

    #[test]
    fn the_latest_is_the_newest_start_not_the_last_stored() {
        let mut old = entry(9, "latlab.run", None, "6.6", None);
        old.started_at = "2026-01-01T00:00:00Z".into();
        let series = Series::split(&[entry(1, "latlab.run", None, "6.6", None), old]);
        assert_eq!(series[0].latest().unwrap().id, 1);
    }
}
