//! A scenario's table entry made runnable: its steps' command lines with
//! the placeholders filled in from the options.

use crate::table::{Scenario, Word, SCENARIOS};

/// The options that fill in a table's placeholders.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// `--quick`.
    pub quick: bool,
    /// `--cpus`.
    pub cpus: Option<&'a str>,
    /// `--duration`, ns.
    pub duration: Option<u64>,
    /// `--verbose`.
    pub verbose: bool,
}

/// One step to run: a label, its result file and the latlab arguments
/// (without `--json`).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// How the report and the progress lines name it.
    pub label: &'static str,
    /// Its result file: `DIR/<file>.json`.
    pub file: &'static str,
    /// The latlab arguments.
    pub args: Vec<String>,
}

/// A scenario to run: its table entry and its steps' command lines.
#[derive(Debug)]
pub struct Plan {
    /// The table entry.
    pub scenario: &'static Scenario,
    /// The steps with every placeholder filled in.
    pub steps: Vec<Step>,
}

impl Plan {
    /// The plan of the scenario `name` (one of [`SCENARIOS`]) with `options`.
    pub fn of(name: &str, options: Options<'_>) -> Plan {
        let scenario = SCENARIOS
            .iter()
            .find(|s| s.name == name)
            .expect("every scenario is in the table");
        let length = scenario
            .length
            .map(|full| match (options.quick, options.duration) {
                (true, _) => "3s".to_string(),
                (false, Some(ns)) if ns % 1_000_000_000 == 0 => format!("{}s", ns / 1_000_000_000),
                (false, Some(ns)) => format!("{}ms", ns.div_ceil(1_000_000)),
                (false, None) => full.to_string(),
            });
        let autogroup = || latlab_rt::autogroup::enabled();
        let steps = scenario
            .steps
            .iter()
            .map(|spec| {
                let mut args: Vec<String> = Vec::new();
                for word in spec.words.iter().flat_map(|part| part.iter()) {
                    match *word {
                        Word::Lit(w) => args.push(w.into()),
                        Word::Length => args.extend(length.clone()),
                        Word::Cpus => {
                            if let Some(cpus) = options.cpus {
                                args.extend(["--cpus".into(), cpus.into()]);
                            }
                        }
                        Word::CpusOr(list) => {
                            args.extend(["--cpus".into(), options.cpus.unwrap_or(list).into()])
                        }
                        Word::Verbosity => args.push(
                            if options.verbose {
                                "--verbose"
                            } else {
                                "--quiet"
                            }
                            .into(),
                        ),
                        Word::Quick(quick, full) => {
                            args.push(if options.quick { quick } else { full }.into())
                        }
                        Word::IfQuick(words) if options.quick => {
                            args.extend(words.iter().map(|w| w.to_string()))
                        }
                        Word::IfAutogroup(words) if autogroup() => {
                            args.extend(words.iter().map(|w| w.to_string()))
                        }
                        Word::IfQuick(_) | Word::IfAutogroup(_) => {}
                    }
                }
                Step {
                    label: spec.label,
                    file: spec.file,
                    args,
                }
            })
            .collect();
        Plan { scenario, steps }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(name: &str, options: Options<'_>) -> Vec<Vec<String>> {
        Plan::of(name, options)
            .steps
            .into_iter()
            .map(|s| s.args)
            .collect()
    }

    #[test]
    fn every_scenario_has_one_table_entry() {
        for scenario in SCENARIOS {
            let entries = SCENARIOS.iter().filter(|s| s.name == scenario.name);
            assert_eq!(entries.count(), 1, "{}", scenario.name);
        }
    }

    #[test]
    fn placeholders_fill_in_as_the_options_say() {
        let quick = Options {
            quick: true,
            cpus: Some("1,2"),
            duration: None,
            verbose: false,
        };
        assert_eq!(
            args("characterize", quick)[1].join(" "),
            "run --no-save --cpus 1,2 --duration 3s --load full,udp,syscall,ipc --explain \
             --trace-threshold 40us --quiet"
        );
        let long = Options {
            quick: false,
            cpus: None,
            duration: Some(1_500_000),
            verbose: true,
        };
        assert_eq!(
            args("characterize", long)[0].join(" "),
            "run --no-save --duration 2ms --verbose"
        );
        assert_eq!(
            args("ktas", long)[1].join(" "),
            "run --no-save --timer itimer --interval 100us --loops 10000 --cpus 0 --explain \
             --trace-threshold 100us --load net:2,io:2"
        );
        assert_eq!(
            args("moblin", quick)[3].join(" "),
            "respond --no-save --profile moblin-ivi --count 2000 --load full"
        );
        let simulator = &args("delayed-locking", quick)[1];
        assert_eq!(simulator.join(" "), "lockbench --simulate --periods 2000");
    }
}
