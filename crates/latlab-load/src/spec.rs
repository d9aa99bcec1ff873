//! What load to run: kinds, worker counts, profiles, an external command.

use std::fmt;
use std::str::FromStr;

use crate::LoadError;

/// Most workers one kind may ask for; more is almost surely a typo.
const MAX_WORKERS: usize = 1024;

/// One kind of built-in load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LoadKind {
    /// Tight counter increment; counts increments (ops).
    Cpu,
    /// IOzone-like write / fsync / read of a file whose size doubles each round; counts bytes.
    Io,
    /// TCP bulk transfer over 127.0.0.1 with a fixed message size; counts bytes received.
    Net,
    /// UDP datagram stream over 127.0.0.1; counts bytes received.
    Udp,
    /// mmap, touch every page, munmap; counts pages.
    Mem,
    /// Cheap system calls (`getppid`); counts calls.
    Syscall,
    /// hackbench-like message passing in groups of senders and receivers; counts messages.
    Ipc,
}

impl LoadKind {
    /// Every kind, in report order.
    pub const ALL: [LoadKind; 7] = [
        LoadKind::Cpu,
        LoadKind::Io,
        LoadKind::Net,
        LoadKind::Udp,
        LoadKind::Mem,
        LoadKind::Syscall,
        LoadKind::Ipc,
    ];

    /// The name used in specs and reports (`"cpu"`, `"io"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            LoadKind::Cpu => "cpu",
            LoadKind::Io => "io",
            LoadKind::Net => "net",
            LoadKind::Udp => "udp",
            LoadKind::Mem => "mem",
            LoadKind::Syscall => "syscall",
            LoadKind::Ipc => "ipc",
        }
    }

    /// The unit of work this kind counts (`"ops"`, `"bytes"`, `"pages"`, `"calls"`, `"msgs"`).
    pub fn unit(self) -> &'static str {
        match self {
            LoadKind::Cpu => "ops",
            LoadKind::Io | LoadKind::Net | LoadKind::Udp => "bytes",
            LoadKind::Mem => "pages",
            LoadKind::Syscall => "calls",
            LoadKind::Ipc => "msgs",
        }
    }

    /// Looks a kind up by its name.
    pub fn from_name(name: &str) -> Option<LoadKind> {
        LoadKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for LoadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many workers a kind gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workers {
    /// Exactly this many.
    Count(usize),
    /// One per CPU the load may use (the `full` profile's cpu hogs).
    PerCpu,
}

/// A parsed load specification: what `--load` says.
///
/// Grammar (comma-separated items, each given at most once):
/// - `none` or `light`: no built-in load (as in the Moblin paper, "light" means
///   only the measurement and the idle system);
/// - `full`: `cpu` with one worker per CPU plus `io:1`, `net:1`, `mem:1`, so
///   every CPU is kept busy while disk, network stack and page allocator are
///   exercised;
/// - `KIND` or `KIND:N`: N workers (default 1) of a [`LoadKind`].
///
/// Profiles and kinds may be mixed (`full,ipc:1`); a kind named twice is an
/// error. An external command is added with [`LoadSpec::with_command`].
///
/// ```
/// use latlab_load::{LoadKind, LoadSpec};
/// let spec: LoadSpec = "cpu:2,io".parse()?;
/// assert_eq!(spec.to_string(), "cpu:2,io:1");
/// assert!("light".parse::<LoadSpec>()?.is_empty());
/// assert!("cpu:x".parse::<LoadSpec>().is_err());
/// # Ok::<(), latlab_load::LoadError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadSpec {
    items: Vec<(LoadKind, Workers)>,
    command: Option<String>,
}

impl LoadSpec {
    /// No load at all.
    pub fn none() -> LoadSpec {
        LoadSpec::default()
    }

    /// Adds an external command, run as `sh -c COMMAND` in its own process group.
    pub fn with_command(mut self, command: impl Into<String>) -> LoadSpec {
        self.command = Some(command.into());
        self
    }

    /// The external command, if any.
    pub fn command(&self) -> Option<&str> {
        self.command.as_deref()
    }

    /// True when nothing at all would run (no built-in kind, no command).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.command.is_none()
    }

    /// The kinds and worker counts to run when `cpus` CPUs are available to the load.
    pub fn resolve(&self, cpus: usize) -> Vec<(LoadKind, usize)> {
        let mut out: Vec<(LoadKind, usize)> = self
            .items
            .iter()
            .map(|&(kind, workers)| match workers {
                Workers::Count(n) => (kind, n),
                Workers::PerCpu => (kind, cpus.max(1)),
            })
            .collect();
        out.sort_by_key(|&(kind, _)| kind);
        out
    }

    fn add(&mut self, text: &str, kind: LoadKind, workers: Workers) -> Result<(), LoadError> {
        if self.items.iter().any(|&(k, _)| k == kind) {
            return Err(LoadError::BadSpec {
                spec: text.to_owned(),
                reason: format!("{kind} is given more than once (a profile such as full already includes cpu, io, net and mem)"),
            });
        }
        self.items.push((kind, workers));
        Ok(())
    }
}

impl FromStr for LoadSpec {
    type Err = LoadError;

    fn from_str(text: &str) -> Result<LoadSpec, LoadError> {
        let bad = |reason: String| LoadError::BadSpec {
            spec: text.to_owned(),
            reason,
        };
        let mut spec = LoadSpec::default();
        if text.trim().is_empty() {
            return Err(bad("it is empty".into()));
        }
        for item in text.split(',').map(str::trim) {
            match item {
                "none" | "light" => {}
                "full" => {
                    spec.add(text, LoadKind::Cpu, Workers::PerCpu)?;
                    for kind in [LoadKind::Io, LoadKind::Net, LoadKind::Mem] {
                        spec.add(text, kind, Workers::Count(1))?;
                    }
                }
                _ => {
                    let (name, count) = match item.split_once(':') {
                        Some((name, count)) => (name.trim(), Some(count.trim())),
                        None => (item, None),
                    };
                    let kind = LoadKind::from_name(name)
                        .ok_or_else(|| bad(format!("unknown load kind {name:?}")))?;
                    let workers = match count {
                        None => 1,
                        Some(count) => count.parse::<usize>().map_err(|_| {
                            bad(format!(
                                "worker count {count:?} of {name} is not a whole number"
                            ))
                        })?,
                    };
                    if workers == 0 || workers > MAX_WORKERS {
                        return Err(bad(format!(
                            "{name} wants {workers} workers; give 1 to {MAX_WORKERS} (leave a kind out to run none)"
                        )));
                    }
                    spec.add(text, kind, Workers::Count(workers))?;
                }
            }
        }
        Ok(spec)
    }
}

impl fmt::Display for LoadSpec {
    /// Writes the spec in the form [`FromStr`] reads (`none` when there are no built-in kinds).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items = self.items.clone();
        items.sort_by_key(|&(kind, _)| kind);
        let full = [LoadKind::Cpu, LoadKind::Io, LoadKind::Net, LoadKind::Mem]
            .iter()
            .all(|k| items.iter().any(|(kind, _)| kind == k))
            && items.contains(&(LoadKind::Cpu, Workers::PerCpu));
        let mut parts = Vec::new();
        if full {
            parts.push("full".to_owned());
        }
        for (kind, workers) in items {
            if full
                && matches!(
                    kind,
                    LoadKind::Cpu | LoadKind::Io | LoadKind::Net | LoadKind::Mem
                )
            {
                continue;
            }
            match workers {
                Workers::Count(n) => parts.push(format!("{kind}:{n}")),
                Workers::PerCpu => parts.push(format!("{kind}:per-cpu")),
            }
        }
        if parts.is_empty() {
            parts.push("none".to_owned());
        }
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_is_one_cpu_hog_per_cpu_plus_io_net_mem() {
        let spec: LoadSpec = "full".parse().unwrap();
        assert_eq!(
            spec.resolve(3),
            vec![
                (LoadKind::Cpu, 3),
                (LoadKind::Io, 1),
                (LoadKind::Net, 1),
                (LoadKind::Mem, 1)
            ]
        );
        assert_eq!(spec.to_string(), "full");
    }

    #[test]
    fn none_and_light_are_empty() {
        for text in ["none", "light", " light "] {
            let spec: LoadSpec = text.parse().unwrap();
            assert!(spec.is_empty(), "{text}");
            assert_eq!(spec.to_string(), "none");
            assert!(!spec.clone().with_command("true").is_empty());
        }
    }

    #[test]
    fn custom_lists_round_trip() {
        let spec: LoadSpec = "net:1, cpu:2,io,udp:3,ipc:1,syscall,mem:4".parse().unwrap();
        assert_eq!(
            spec.to_string(),
            "cpu:2,io:1,net:1,udp:3,mem:4,syscall:1,ipc:1"
        );
        assert_eq!(spec.to_string().parse::<LoadSpec>().unwrap(), {
            let mut s = spec.clone();
            s.items.sort_by_key(|&(k, _)| k);
            s
        });
        let mixed: LoadSpec = "full,ipc:2".parse().unwrap();
        assert_eq!(mixed.to_string(), "full,ipc:2");
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (text, needle) in [
            ("", "empty"),
            ("gpu:1", "unknown load kind \"gpu\""),
            ("cpu:two", "not a whole number"),
            ("cpu:0", "give 1 to"),
            ("cpu:99999", "give 1 to"),
            ("cpu:1,cpu:2", "more than once"),
            ("full,cpu:1", "more than once"),
        ] {
            let err = text.parse::<LoadSpec>().unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
