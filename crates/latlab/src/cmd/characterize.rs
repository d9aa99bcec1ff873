//! The answer of `latlab scenario characterize` (what `make run` runs):
//! from an idle run and a loaded, explained run, which requirement classes
//! of the papers this machine meets, and what stands in the way.
//!
//! Built from the two steps' result documents only, so the same summary
//! comes out of the files a run left behind.

use std::fmt::Write as _;

use anyhow::bail;
use latlab_document::RunDocument;
use latlab_measure::requirements::{self, PROFILES};
use latlab_measure::result::RunResult;
use latlab_measure::units::format_ns;
use latlab_report::explain::{top_causes, CauseSummary};
use latlab_report::html::{Cell, Opening};
use latlab_rt::sysinfo::Pitfall;

/// Causes of the loaded run's late wake-ups the summary lists.
const CAUSES_LISTED: usize = 3;

/// Late means at or over this in the loaded run's explanation: the
/// strictest class checked (Moblin's 40 µs), so every wake-up that stands in
/// the way of any class is explained.
pub const EXPLAIN_THRESHOLD: &str = "40us";

/// The load of the loaded step: every kind latlab has (all run at
/// SCHED_OTHER, write only under temporary directories, talk only over
/// loopback): cpu per CPU, io, net, mem (`full`), and udp, syscall, ipc.
pub const FULL_LOAD: &str = "full,udp,syscall,ipc";

/// MontaVista's preemption-latency figures ("Embedded Linux is Ready for
/// Real-Time", 2002; 300 MHz Celeron, RTC at 2 kHz, 730 M samples, Lmbench
/// and Netperf as the load): (share of samples under 10 µs, worst case ns),
/// unloaded and loaded.
pub const MONTAVISTA: [(f64, u64); 2] = [(0.9947, 84_000), (0.9084, 14_600_000)];

/// One requirement class, idle and loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassRow {
    /// The profile name (`emblix-class2`), usable as `--profile`.
    pub profile: &'static str,
    /// What it asks for, in words (from [`PROFILES`]).
    pub description: &'static str,
    /// Met in the idle run, and the verdict line.
    pub idle: (bool, String),
    /// Met in the loaded run, and the verdict line.
    pub loaded: (bool, String),
}

impl ClassRow {
    /// `Emblix class 2 (< 1 ms)`: the class and its limit.
    pub fn title(&self) -> &'static str {
        match self.profile {
            "emblix-class1" => "Emblix class 1 (< 100 ms)",
            "emblix-class2" => "Emblix class 2 (< 1 ms)",
            "emblix-class3" => "Emblix class 3 (< 100 us)",
            "moblin-ivi" => "Moblin IVI (40 us, periods +-5 %)",
            _ => self
                .description
                .split_once(':')
                .map_or(self.description, |(t, _)| t),
        }
    }
}

/// The figures of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigures {
    /// `idle`, `loaded`.
    pub label: &'static str,
    /// Samples over every CPU.
    pub samples: u64,
    /// Median, ns.
    pub p50: u64,
    /// 99th percentile, ns.
    pub p99: u64,
    /// 99.99th percentile, ns.
    pub p99_99: u64,
    /// Worst case, ns.
    pub max: u64,
    /// The CPU that saw it.
    pub max_cpu: usize,
    /// Share of samples at or below 10 µs (MontaVista's figure).
    pub share_10us: f64,
}

/// One cause of the loaded run's late wake-ups, as explained.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// What happened.
    pub description: String,
    /// Late windows it took part in.
    pub late_windows: u64,
    /// Its share of all late-window latency (0-1).
    pub share: f64,
    /// What to do about it.
    pub recommendation: String,
    /// The task it names, which its fix names too.
    pub task: Option<String>,
}

impl Cause {
    fn summary(&self) -> CauseSummary<'_> {
        CauseSummary {
            description: &self.description,
            share: self.share,
            late_windows: self.late_windows,
            recommendation: &self.recommendation,
            task: self.task.as_deref(),
        }
    }
}

/// The part of the loaded run's explanation the answer uses (the run
/// document holds `latlab explain --json`'s report).
#[derive(Debug, Clone, PartialEq)]
pub struct Explained {
    /// Periods of the measurement threads in the trace.
    pub periods: u64,
    /// Those at or over the threshold.
    pub late: u64,
    /// The threshold, ns.
    pub threshold_ns: u64,
    /// Causes, ranked.
    pub causes: Vec<Cause>,
    /// Warnings about the trace (lost events, ...).
    pub notes: Vec<String>,
}

/// The whole answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Characterization {
    /// Host, machine, CPU, kernel, preemption model.
    pub machine: String,
    /// What was measured, in words.
    pub setup: String,
    /// Idle, then loaded.
    pub runs: [RunFigures; 2],
    /// The classes, loosest first.
    pub classes: Vec<ClassRow>,
    /// The loaded run's explanation (`None` when the trace could not be
    /// explained: the run's warnings say why).
    pub explained: Option<Explained>,
    /// What else stands in the way: the machine's pitfalls and the runs'
    /// other warnings, the preemption model, steal time, the trace's notes.
    pub pitfalls: Vec<Pitfall>,
}

impl Characterization {
    /// The answer from the idle and the loaded run.
    pub fn of(idle: &RunDocument, loaded: &RunDocument) -> anyhow::Result<Characterization> {
        if idle.threads.is_empty() || loaded.threads.is_empty() {
            bail!("a characterization step measured no thread (see its output above)");
        }
        let classes = PROFILES
            .iter()
            .map(|&(profile, description)| {
                let requirements = requirements::profile(profile).map_err(anyhow::Error::msg)?;
                let outcome = |run: &RunResult| {
                    let outcomes = requirements::evaluate(&requirements, &run.threads);
                    let met = outcomes.iter().all(|o| o.passed);
                    // Met: the first PASS line; missed: every FAIL line (one per thread).
                    let lines: Vec<&str> = outcomes
                        .iter()
                        .filter(|o| o.passed == met)
                        .flat_map(|o| o.details.iter().map(String::as_str))
                        .collect();
                    let line = if met {
                        lines.first().copied().unwrap_or_default().to_string()
                    } else {
                        lines.join("; ")
                    };
                    (met, line)
                };
                Ok(ClassRow {
                    profile,
                    description,
                    idle: outcome(idle),
                    loaded: outcome(loaded),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let explained = loaded.explain.as_ref().map(|report| Explained {
            periods: report.periods,
            late: report.late,
            threshold_ns: report.threshold_ns,
            causes: report
                .causes
                .iter()
                .map(|c| Cause {
                    description: c.description.clone(),
                    late_windows: c.late_windows,
                    share: c.share,
                    recommendation: c.recommendation.clone(),
                    task: CauseSummary::of(c).task.map(str::to_string),
                })
                .collect(),
            notes: report.notes.clone(),
        });
        let system = &loaded.system;
        let preemption = system.preemption_model.as_deref().unwrap_or("unknown");
        let machine = format!(
            "{} ({}, {}{} CPUs{}), kernel {} (preemption: {preemption})",
            system.hostname,
            system.machine,
            system
                .cpu_model
                .as_deref()
                .map(|m| format!("{m}, "))
                .unwrap_or_default(),
            system.online_cpus,
            system
                .virtualization
                .as_deref()
                .map(|v| format!(", virtual machine: {v}"))
                .unwrap_or_default(),
            system.kernel_release,
        );
        let s = &loaded.settings;
        let setup = format!(
            "one {} thread per CPU ({}), woken by {} every {}; {:.0} s idle, then {:.0} s \
             under load {}, kernel-traced, the wake-ups of {} or more explained",
            latlab_report::table::scheduling(s),
            s.cpus
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(","),
            s.timer,
            format_ns(s.interval_ns),
            idle.elapsed_s,
            loaded.elapsed_s,
            loaded
                .load
                .as_ref()
                .map_or_else(|| "none".to_string(), |l| l.name()),
            explained
                .as_ref()
                .map_or_else(|| EXPLAIN_THRESHOLD.into(), |e| format_ns(e.threshold_ns)),
        );
        // The machine's pitfalls from the results' own system records, then
        // the runs' other warnings (what their sessions could not set up).
        let mut pitfalls: Vec<Pitfall> = Vec::new();
        let known: Vec<Pitfall> = idle
            .system
            .pitfall_list()
            .into_iter()
            .chain(loaded.system.pitfall_list())
            .collect();
        let others = idle
            .warnings
            .iter()
            .chain(&loaded.warnings)
            .filter(|w| !known.iter().any(|p| p.text() == **w))
            .map(|w| Pitfall {
                summary: w.clone(),
                detail: String::new(),
            })
            .collect::<Vec<_>>();
        for pitfall in known.into_iter().chain(others) {
            if !pitfalls.contains(&pitfall) {
                pitfalls.push(pitfall);
            }
        }
        if matches!(preemption, "none" | "voluntary") {
            pitfalls.insert(
                0,
                Pitfall {
                    summary: format!("the kernel runs preemption model {preemption:?}"),
                    detail: "kernel code runs to its next preemption point while a real-time \
                             task waits; boot with preempt=full (PREEMPT_DYNAMIC kernels) or use \
                             a PREEMPT_RT kernel"
                        .into(),
                },
            );
        }
        let steal: Vec<String> = loaded
            .settings
            .steal_ns
            .iter()
            .filter(|(_, ns)| *ns > 0)
            .map(|(cpu, ns)| format!("cpu{cpu} {}", format_ns(*ns)))
            .collect();
        if !steal.is_empty() {
            pitfalls.push(Pitfall {
                summary: format!(
                    "the hypervisor stole time from the vCPUs during the loaded run ({})",
                    steal.join(", ")
                ),
                detail: "no kernel setting can remove that".into(),
            });
        }
        if let Some(e) = &explained {
            pitfalls.extend(e.notes.iter().map(|n| Pitfall {
                summary: format!("trace: {n}"),
                detail: String::new(),
            }));
        }
        Ok(Characterization {
            machine,
            setup,
            runs: [figures("idle", idle), figures("loaded", loaded)],
            classes,
            explained,
            pitfalls,
        })
    }

    /// The answer in one or two sentences.
    pub fn answer(&self) -> String {
        let best = |loaded: bool| {
            self.classes
                .iter()
                .rev()
                .find(|c| if loaded { c.loaded.0 } else { c.idle.0 })
        };
        let first_missed = self.classes.iter().find(|c| !c.loaded.0);
        let [idle, loaded] = &self.runs;
        let mut text = match (best(true), first_missed) {
            (_, None) => format!(
                "This machine met every class checked, idle and under load, down to {} \
                 (worst case {} idle, {} loaded).",
                self.classes.last().map_or("", |c| c.title()),
                format_ns(idle.max),
                format_ns(loaded.max)
            ),
            (Some(met), Some(missed)) => format!(
                "Under load this machine met {} at best; it missed {} (worst case {} on CPU{}).",
                met.title(),
                missed.title(),
                format_ns(loaded.max),
                loaded.max_cpu
            ),
            (None, Some(missed)) => format!(
                "Under load this machine met no class checked; it missed {} (worst case {} on \
                 CPU{}).",
                missed.title(),
                format_ns(loaded.max),
                loaded.max_cpu
            ),
        };
        if first_missed.is_some() {
            match best(false) {
                Some(c) => {
                    let _ = write!(
                        text,
                        " Idle it met {} (worst case {}).",
                        c.title(),
                        format_ns(idle.max)
                    );
                }
                None => {
                    let _ = write!(
                        text,
                        " Idle it met no class either (worst case {}).",
                        format_ns(idle.max)
                    );
                }
            }
        }
        text
    }

    /// The terminal summary (also `summary.txt`): the answer first, the
    /// pitfalls one short line each, the classes and figures, then the top
    /// causes with each fix once. The report has the whole text of each.
    pub fn render_text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "\n== latlab characterization: {}", self.machine);
        let _ = writeln!(t, "{}", self.answer());
        if !self.pitfalls.is_empty() {
            let _ = writeln!(t, "pitfalls (the report says why, and the fix):");
            for p in &self.pitfalls {
                let _ = writeln!(t, "  - {}", p.summary);
            }
        }
        let _ = writeln!(t, "measured: {}", self.setup);
        let _ = writeln!(
            t,
            "\nrequirement classes (these runs show the worst case seen, not the worst possible):"
        );
        for class in &self.classes {
            let _ = writeln!(
                t,
                "  {:<36} idle {:<7} loaded {}",
                class.title(),
                met(class.idle.0),
                met(class.loaded.0)
            );
        }
        let [idle, loaded] = &self.runs;
        let share_line = |t: &mut String, name: &str, shares: [(f64, u64); 2]| {
            let _ = writeln!(
                t,
                "  {name:<36} idle {} at or below 10 us, worst {}; loaded {}, worst {}",
                percent(shares[0].0),
                format_ns(shares[0].1),
                percent(shares[1].0),
                format_ns(shares[1].1)
            );
        };
        share_line(&mut t, "MontaVista 2002 (300 MHz Celeron)", MONTAVISTA);
        share_line(
            &mut t,
            "  this machine",
            [(idle.share_10us, idle.max), (loaded.share_10us, loaded.max)],
        );
        let _ = writeln!(t, "\n{:<24} {:>12} {:>12}", "", idle.label, loaded.label);
        let row = |t: &mut String, name: &str, a: String, b: String| {
            let _ = writeln!(t, "{name:<24} {a:>12} {b:>12}");
        };
        row(
            &mut t,
            "samples",
            idle.samples.to_string(),
            loaded.samples.to_string(),
        );
        for (name, get) in [
            ("p50", (|r: &RunFigures| r.p50) as fn(&RunFigures) -> u64),
            ("p99", |r| r.p99),
            ("p99.99", |r| r.p99_99),
            ("max", |r| r.max),
        ] {
            row(&mut t, name, format_ns(get(idle)), format_ns(get(loaded)));
        }
        match &self.explained {
            Some(e) if e.late == 0 => {
                let _ = writeln!(
                    t,
                    "\nnothing stands in the way: no wake-up of the loaded run reached {}",
                    format_ns(e.threshold_ns)
                );
            }
            Some(e) => {
                let _ = writeln!(
                    t,
                    "\nwhat stands in the way: {} of {} loaded periods woke {} or more late; \
                     from the kernel trace, the top causes:",
                    e.late,
                    e.periods,
                    format_ns(e.threshold_ns)
                );
                let causes: Vec<CauseSummary<'_>> = e
                    .causes
                    .iter()
                    .take(CAUSES_LISTED)
                    .map(Cause::summary)
                    .collect();
                t.push_str(&top_causes(&causes));
            }
            None => {
                let _ = writeln!(
                    t,
                    "\nthe loaded run's trace could not be explained (its warning is above)"
                );
            }
        }
        t
    }

    /// What the report opens with: the requirement classes met or missed
    /// (the table the terminal shows), then the answer, the causes and the
    /// pitfalls in words.
    pub fn opening(&self) -> Opening {
        let [idle, loaded] = &self.runs;
        let mut rows: Vec<Vec<Cell>> = self
            .classes
            .iter()
            .map(|class| {
                vec![
                    Cell::Text(class.title().to_string()),
                    Cell::Met(class.idle.0),
                    Cell::Met(class.loaded.0),
                    Cell::Text(class.loaded.1.clone()),
                ]
            })
            .collect();
        rows.push(vec![
            Cell::Text(format!(
                "at or below 10 us (MontaVista 2002: {} idle, {} loaded)",
                percent(MONTAVISTA[0].0),
                percent(MONTAVISTA[1].0)
            )),
            Cell::Text(percent(idle.share_10us)),
            Cell::Text(percent(loaded.share_10us)),
            Cell::Text(String::new()),
        ]);
        rows.push(vec![
            Cell::Text(format!(
                "worst case (MontaVista 2002: {} idle, {} loaded)",
                format_ns(MONTAVISTA[0].1),
                format_ns(MONTAVISTA[1].1)
            )),
            Cell::Text(format_ns(idle.max)),
            Cell::Text(format_ns(loaded.max)),
            Cell::Text(format!("on CPU{}", loaded.max_cpu)),
        ]);
        Opening {
            heading: Some("Does this machine meet a deadline?".into()),
            columns: vec![
                "requirement class".into(),
                "idle".into(),
                "loaded".into(),
                "the loaded run".into(),
            ],
            rows,
            paragraphs: self.paragraphs(),
        }
    }

    /// The report's paragraphs under the table: the answer, what was
    /// measured, how to check a class for longer, the causes and the
    /// pitfalls, each in full.
    pub fn paragraphs(&self) -> Vec<String> {
        let mut p = vec![
            self.answer(),
            format!("Machine: {}. Measured: {}.", self.machine, self.setup),
            format!(
                "These runs show the worst case seen, not the worst possible: check a class over \
                 a longer run with `latlab run --load {FULL_LOAD} --duration 1h --profile \
                 <class>` ({}).",
                self.classes
                    .iter()
                    .map(|c| c.profile)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ];
        if let Some(e) = &self.explained {
            if e.late == 0 {
                p.push(format!(
                    "Nothing stands in the way: no wake-up of the loaded run reached {}.",
                    format_ns(e.threshold_ns)
                ));
            } else {
                p.push(format!(
                    "What stands in the way: {} of {} periods of the loaded run woke {} or more \
                     late. The kernel trace names these causes first (the loaded run's \
                     explanation below has them all):",
                    e.late,
                    e.periods,
                    format_ns(e.threshold_ns)
                ));
                for (i, cause) in e.causes.iter().take(CAUSES_LISTED).enumerate() {
                    p.push(format!(
                        "{}. {}: {:.0} % of the late latency, in {} late windows. Fix: {}",
                        i + 1,
                        cause.description,
                        cause.share * 100.0,
                        cause.late_windows,
                        cause.recommendation
                    ));
                }
            }
        }
        for pitfall in &self.pitfalls {
            p.push(format!("Pitfall: {}.", pitfall.text()));
        }
        p
    }
}

fn figures(label: &'static str, run: &RunResult) -> RunFigures {
    let latency = &run.overall.latency;
    let histogram = &run.overall.histogram;
    RunFigures {
        label,
        samples: latency.count,
        p50: latency.p50,
        p99: latency.p99,
        p99_99: latency.p99_99,
        max: latency.max,
        max_cpu: run
            .threads
            .iter()
            .max_by_key(|t| t.latency.max)
            .map_or(0, |t| t.cpu),
        share_10us: histogram.count_at_or_below(10_000) as f64 / histogram.count().max(1) as f64,
    }
}

fn met(yes: bool) -> &'static str {
    if yes {
        "met"
    } else {
        "MISSED"
    }
}

fn percent(share: f64) -> String {
    format!("{:.2} %", share * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_figures(label: &'static str, max: u64) -> RunFigures {
        RunFigures {
            label,
            samples: 1000,
            p50: 10_000,
            p99: 20_000,
            p99_99: max,
            max,
            max_cpu: 1,
            share_10us: 0.5,
        }
    }

    /// Classes met idle / loaded, loosest first, as `Characterization::of` builds them.
    fn characterization(met: [(bool, bool); 4], explained: Option<Explained>) -> Characterization {
        Characterization {
            machine: "m".into(),
            setup: "s".into(),
            runs: [
                run_figures("idle", 30_000),
                run_figures("loaded", 2_500_000),
            ],
            classes: PROFILES
                .iter()
                .zip(met)
                .map(|(&(profile, description), (idle, loaded))| ClassRow {
                    profile,
                    description,
                    idle: (idle, format!("idle {profile}")),
                    loaded: (loaded, format!("loaded {profile}")),
                })
                .collect(),
            explained,
            pitfalls: vec![Pitfall {
                summary: "running in a virtual machine".into(),
                detail: "the host can stop a vCPU".into(),
            }],
        }
    }

    #[test]
    fn answer_names_the_strictest_class_met_and_the_first_missed() {
        let c = characterization(
            [(true, true), (true, true), (true, false), (true, false)],
            None,
        );
        assert_eq!(
            c.answer(),
            "Under load this machine met Emblix class 2 (< 1 ms) at best; it missed Emblix \
             class 3 (< 100 us) (worst case 2.50 ms on CPU1). Idle it met Moblin IVI (40 us, \
             periods +-5 %) (worst case 30.0 us)."
        );
        let all = characterization([(true, true); 4], None);
        assert!(
            all.answer()
                .starts_with("This machine met every class checked"),
            "{}",
            all.answer()
        );
        let none = characterization([(false, false); 4], None);
        assert!(
            none.answer().contains("met no class checked")
                && none.answer().contains("Idle it met no class either"),
            "{}",
            none.answer()
        );
    }

    #[test]
    fn summary_lists_every_class_the_causes_each_fix_once_and_the_pitfalls() {
        // Causes 2 and 3 name other tasks with the same fix as cause 1.
        let cause = |i: u64, task: &str, fix: &str| Cause {
            description: format!("cause {i}: {task} held the CPU"),
            late_windows: 10,
            share: 0.25,
            recommendation: format!("{task} ran long: {fix}; pre-fault and mlock memory"),
            task: Some(task.to_string()),
        };
        let explained = Explained {
            periods: 6000,
            late: 42,
            threshold_ns: 40_000,
            causes: vec![
                cause(1, "ld-io0:7", "use PREEMPT_RT"),
                cause(2, "dd:9", "use PREEMPT_RT"),
                cause(3, "rustc (5 pids)", "boot with preempt=full"),
                cause(4, "x:1", "never shown"),
            ],
            notes: vec!["3 events lost".into()],
        };
        let c = characterization(
            [(true, true), (true, true), (false, false), (false, false)],
            Some(explained),
        );
        let text = c.render_text();
        for class in &c.classes {
            assert!(text.contains(class.title()), "{text}");
        }
        assert!(
            text.contains("42 of 6000 loaded periods woke 40.0 us or more late"),
            "{text}"
        );
        assert!(
            text.contains("3. cause 3") && !text.contains("cause 4"),
            "top three: {text}"
        );
        assert!(
            text.contains("-> ld-io0:7 ran long: use PREEMPT_RT; pre-fault and mlock memory\n"),
            "{text}"
        );
        assert!(text.contains("-> as for #1\n"), "{text}");
        assert!(
            text.contains("-> rustc (5 pids) ran long: boot with preempt=full; and as for #1\n"),
            "{text}"
        );
        assert_eq!(
            text.matches("pre-fault and mlock memory").count(),
            1,
            "{text}"
        );
        // The answer first, then the pitfalls, one short line each.
        let answer = text.find("Under load this machine").unwrap();
        let pitfall = text.find("  - running in a virtual machine\n").unwrap();
        assert!(answer < pitfall && pitfall < text.find("requirement classes").unwrap());
        assert!(!text.contains("the host can stop a vCPU"), "{text}");

        let opening = c.opening();
        assert_eq!(
            opening.columns[..3],
            ["requirement class", "idle", "loaded"]
        );
        assert_eq!(
            opening.rows[1][0],
            Cell::Text("Emblix class 2 (< 1 ms)".into())
        );
        assert_eq!(opening.rows[2][1..3], [Cell::Met(false), Cell::Met(false)]);
        let paragraphs = &opening.paragraphs;
        assert!(paragraphs[0].starts_with("Under load"), "{paragraphs:?}");
        assert!(paragraphs.iter().any(|p| p.contains("--profile <class>")));
        assert!(paragraphs.iter().any(|p| p.contains("Fix: dd:9 ran long")));
        assert!(paragraphs
            .iter()
            .any(|p| p == "Pitfall: running in a virtual machine: the host can stop a vCPU."));
    }
}
