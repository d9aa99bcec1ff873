//! What a measuring command (`run`, `respond`, `lockbench`) says about the
//! machine and its own set-up before it measures, the one way all of them
//! say it: once, when every argument was accepted and everything is set up
//! (never before an error about the arguments), one short line per pitfall
//! of the machine with where to read more; the whole text with `--verbose`;
//! with `--quiet` only what makes the result itself questionable (a refused
//! privilege). The whole text is in the result's `warnings` either way.

use latlab_rt::sysinfo::Pitfall;

/// How much a command was asked to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// `--quiet`: the verdict, where the result went, errors.
    Quiet,
    /// The default: a short summary.
    Normal,
    /// `--verbose`: every table and the whole text of every note.
    Verbose,
}

impl Verbosity {
    /// From a command's `--quiet` and `--verbose` flags (clap keeps them
    /// apart; quiet wins should both be set).
    pub fn from_flags(quiet: bool, verbose: bool) -> Verbosity {
        match (quiet, verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        }
    }
}

/// The lines to print on stderr before measuring: the machine's pitfalls
/// (short, each pointing at `more`, e.g. "--verbose says why and the fix";
/// whole with [`Verbosity::Verbose`]; none with [`Verbosity::Quiet`]), then
/// what the real-time session could not set up (always: it changes what the
/// result means).
pub fn before_measuring(
    pitfalls: &[Pitfall],
    session: &[String],
    verbosity: Verbosity,
    more: &str,
) -> Vec<String> {
    let mut lines: Vec<String> = match verbosity {
        Verbosity::Quiet => Vec::new(),
        Verbosity::Normal => pitfalls
            .iter()
            .map(|p| format!("latlab: note: {} ({more})", p.summary))
            .collect(),
        Verbosity::Verbose => pitfalls
            .iter()
            .map(|p| format!("latlab: note: {}", p.text()))
            .collect(),
    };
    lines.extend(session.iter().map(|w| format!("latlab: warning: {w}")));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pitfalls() -> Vec<Pitfall> {
        vec![
            Pitfall {
                summary: "RT throttling is on (sched_rt_runtime_us=950000 of 1000000 us)".into(),
                detail: "a runaway RT task is stopped, but so is a legitimate one; disable it"
                    .into(),
            },
            Pitfall {
                summary: "running in a virtual machine (KVM)".into(),
                detail: "the host can stop a vCPU at any time".into(),
            },
        ]
    }

    #[test]
    fn pitfalls_are_one_short_line_each_the_session_always() {
        let session = vec!["no real-time priority (refused)".to_string()];
        let normal = before_measuring(&pitfalls(), &session, Verbosity::Normal, "--verbose: why");
        assert_eq!(normal.len(), 3, "{normal:?}");
        assert!(normal.iter().all(|l| l.len() <= 100), "{normal:?}");
        assert_eq!(
            normal[1],
            "latlab: note: running in a virtual machine (KVM) (--verbose: why)"
        );
        let verbose = before_measuring(&pitfalls(), &session, Verbosity::Verbose, "x");
        assert!(verbose[0].ends_with("disable it"), "{verbose:?}");
        let quiet = before_measuring(&pitfalls(), &session, Verbosity::Quiet, "x");
        assert_eq!(
            quiet,
            vec!["latlab: warning: no real-time priority (refused)".to_string()]
        );
    }
}
