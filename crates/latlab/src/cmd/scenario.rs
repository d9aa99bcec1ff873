//! `latlab scenario NAME`: the papers' experiments as one command each,
//! ending in a comparison report. Each step is this same binary run with the
//! step's arguments, so a scenario is exactly the commands it prints.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context};
use latlab_report::html::{Document, Opening};

use crate::cmd::characterize;
use crate::cmd::report::{read_document, write_report_opening, OutputArgs};

/// The experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Name {
    /// Start here: does this machine meet a deadline, and if not why? Idle and under every
    /// load, the loaded wake-ups explained, the papers' requirement classes met or missed.
    Characterize,
    /// Emblix: 1 ms periodic SCHED_FIFO task, disk load vs none.
    Emblix,
    /// Moblin: 2 ms periodic-task accuracy, light vs full load.
    Moblin,
    /// MontaVista: a long run, share of samples under 10 µs and the worst case, idle vs loaded.
    Montavista,
    /// KTAS: 100 µs itimer task, 10,000 periods, heavy network and I/O load vs none.
    Ktas,
    /// Delayed locking: lockbench on this machine plus the simulator.
    DelayedLocking,
}

/// Arguments of `latlab scenario`.
#[derive(Debug, clap::Args)]
pub struct ScenarioArgs {
    /// Which experiment.
    #[arg(value_enum)]
    pub name: Name,
    /// A smoke run: a few seconds per step instead of the paper's lengths.
    #[arg(long)]
    pub quick: bool,
    /// Directory for the steps' JSON results and the report
    /// [default: latlab-scenarios/<name>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// CPUs to measure on (passed to `latlab run --cpus`).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Length of each measurement step (e.g. `30s`, `10m`) [default: characterize 30s,
    /// emblix and moblin 60s, montavista 10m; ktas counts periods and delayed-locking
    /// has its own lengths, so neither takes it].
    #[arg(long, value_name = "DURATION", conflicts_with = "quick",
          value_parser = latlab_rt::duration::length_ns)]
    pub duration: Option<u64>,
    /// characterize: print each step's whole output (every table, the trace analysis) instead
    /// of its verdict line.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Waits for a step to end. On Ctrl-C or SIGTERM it is sent SIGTERM, once:
/// a terminal's Ctrl-C reached it too, and a second SIGINT would kill it
/// before it wrote what it measured; SIGTERM only asks it to stop.
fn wait_step(child: &mut std::process::Child) -> anyhow::Result<std::process::ExitStatus> {
    let mut passed_on = false;
    loop {
        if let Some(status) = child.try_wait().context("waiting for the step")? {
            return Ok(status);
        }
        if latlab_rt::stop::requested() && !passed_on {
            // SAFETY: kill(2) on our own child, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            passed_on = true;
        }
        if passed_on {
            std::thread::sleep(std::time::Duration::from_millis(5));
        } else {
            // Ends at once on Ctrl-C or SIGTERM.
            latlab_rt::stop::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// One step: a label and the latlab arguments (without `--json`).
struct Step {
    label: &'static str,
    file: &'static str,
    args: Vec<String>,
}

/// A scenario: its steps and what the report says it reproduces.
struct Plan {
    title: String,
    intro: Vec<String>,
    steps: Vec<Step>,
    /// Print the share of samples at or below 10 µs per run.
    share_under_10us: bool,
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn plan(name: Name, quick: bool, cpus: Option<&str>, duration: Option<u64>, verbose: bool) -> Plan {
    let secs = |full: &str| match (quick, duration) {
        (true, _) => "3s".to_string(),
        (false, Some(ns)) if ns % 1_000_000_000 == 0 => format!("{}s", ns / 1_000_000_000),
        (false, Some(ns)) => format!("{}ms", ns.div_ceil(1_000_000)),
        (false, None) => full.to_string(),
    };
    let run = |extra: &[&str]| {
        let mut a = args(&["run", "--no-save"]);
        if let Some(cpus) = cpus {
            a.extend(args(&["--cpus", cpus]));
        }
        a.extend(args(extra));
        a
    };
    // The Moblin event-response test: 10^6 events as in the paper (2000 with --quick).
    let respond = |extra: &[&str]| {
        let count = if quick { "2000" } else { "1000000" };
        let mut a = args(&[
            "respond",
            "--no-save",
            "--profile",
            "moblin-ivi",
            "--count",
            count,
        ]);
        a.extend(args(extra));
        a
    };
    match name {
        Name::Characterize => {
            let d = secs("30s");
            // The summary at the end is the answer: the steps say only their
            // verdict (the files have everything), unless asked for all.
            let run = |extra: &[&str]| {
                let mut a = run(extra);
                a.push(if verbose { "--verbose" } else { "--quiet" }.into());
                a
            };
            Plan {
                title: "does this machine meet a deadline, and if not, why?".into(),
                intro: Vec::new(),
                steps: vec![
                    Step {
                        label: "idle",
                        file: "idle",
                        args: run(&["--duration", &d]),
                    },
                    Step {
                        label: "loaded",
                        file: "loaded",
                        args: run(&[
                            "--duration",
                            &d,
                            "--load",
                            characterize::FULL_LOAD,
                            "--explain",
                            "--trace-threshold",
                            characterize::EXPLAIN_THRESHOLD,
                        ]),
                    },
                ],
                share_under_10us: false,
            }
        }
        Name::Emblix => {
            let d = secs("60s");
            Plan {
                title: "Emblix: 1 ms periodic task, disk load vs none".into(),
                intro: vec![
                    "Iwasaki and Nakajima, \"Predictability in Embedded Linux and Commercial \
                     Requirements\", section 7, Figures 1 to 4: a 1 ms periodic real-time \
                     process (woken by the RTC there, by clock_nanosleep here) while IOzone \
                     loads the disk. The paper saw a worst case of about 180 ms on vanilla \
                     2.4.18 and a few ms with the preemption and lock-breaking patches; \
                     Emblix class 2 asks for below 1 ms."
                        .into(),
                ],
                steps: vec![
                    Step {
                        label: "no load",
                        file: "no-load",
                        args: run(&[
                            "--interval",
                            "1ms",
                            "--profile",
                            "emblix-class2",
                            "--duration",
                            &d,
                        ]),
                    },
                    Step {
                        label: "disk load",
                        file: "disk-load",
                        args: run(&[
                            "--interval",
                            "1ms",
                            "--profile",
                            "emblix-class2",
                            "--duration",
                            &d,
                            "--load",
                            "io:2",
                        ]),
                    },
                ],
                share_under_10us: false,
            }
        }
        Name::Moblin => {
            let d = secs("60s");
            Plan {
                title: "Moblin: periodic task accuracy, light vs full load".into(),
                intro: vec![
                    "Meyer and Ymlahi Ouazzani, \"Real Time on Moblin/Linux\", Figure 6: a \
                     periodic task with a 2 ms reference period, in the \"light\" (the test \
                     alone) and \"full\" configurations (a counter-increment hog and a USB \
                     reader there; latlab's full load here: a cpu hog per CPU plus disk, \
                     network and memory work). The in-vehicle requirement: 40 µs worst case \
                     and every period within ±5 %. Then Figure 5's test: response latency to \
                     an external event (a character on a serial line there; a raw \
                     pseudo-terminal here, `latlab respond`), light and full, against the \
                     40 µs reference."
                        .into(),
                ],
                steps: vec![
                    Step {
                        label: "light",
                        file: "light",
                        args: run(&[
                            "--interval",
                            "2ms",
                            "--profile",
                            "moblin-ivi",
                            "--duration",
                            &d,
                        ]),
                    },
                    Step {
                        label: "full",
                        file: "full",
                        args: run(&[
                            "--interval",
                            "2ms",
                            "--profile",
                            "moblin-ivi",
                            "--duration",
                            &d,
                            "--load",
                            "full",
                        ]),
                    },
                    Step {
                        label: "event response, light",
                        file: "respond-light",
                        args: respond(&[]),
                    },
                    Step {
                        label: "event response, full",
                        file: "respond-full",
                        args: respond(&["--load", "full"]),
                    },
                ],
                share_under_10us: false,
            }
        }
        Name::Montavista => {
            let d = secs("10m");
            Plan {
                title:
                    "MontaVista: share of samples under 10 µs and the worst case, idle vs loaded"
                        .into(),
                intro: vec![
                    "MontaVista, \"Embedded Linux is Ready for Real-Time\": long runs of a \
                     periodic task reporting the share of samples under 10 µs and the worst \
                     case, idle and under load (LMBench and Netperf there; latlab's full load \
                     here). The share under 10 µs of each run is printed at the end of \
                     `latlab scenario montavista`; the tail plot reads it at 10 µs."
                        .into(),
                    "The paper splits the latency into interrupt latency (the timer's expiry \
                     to its interrupt) and preemption latency (the interrupt to the task \
                     running). Where BPF is available (as root, a kernel with BTF) each run \
                     measures both in the kernel for its own wake-ups (`latlab run --split`): \
                     the split table of each run below, and the two printed at the end, idle \
                     vs loaded."
                        .into(),
                ],
                steps: vec![
                    Step {
                        label: "idle",
                        file: "idle",
                        args: run(&["--interval", "1ms", "--duration", &d]),
                    },
                    Step {
                        label: "loaded",
                        file: "loaded",
                        args: run(&["--interval", "1ms", "--duration", &d, "--load", "full"]),
                    },
                ],
                share_under_10us: true,
            }
        }
        Name::Ktas => {
            let loops = if quick { "2000" } else { "10000" };
            let base = |extra: &[&str]| {
                let mut a = args(&[
                    "run",
                    "--no-save",
                    "--timer",
                    "itimer",
                    "--interval",
                    "100us",
                ]);
                a.extend(args(&["--loops", loops, "--cpus", cpus.unwrap_or("0")]));
                // Record while measuring and explain the late periods (Tables 1 and 2).
                a.extend(args(&["--explain", "--trace-threshold", "100us"]));
                a.extend(args(extra));
                a
            };
            Plan {
                title: "KTAS: 100 µs itimer task under heavy network and I/O load".into(),
                intro: vec![
                    "Kwon et al., \"KTAS: Analysis of Timer Latency for Embedded Linux \
                     Kernel\", Tables 1 and 2: a task woken by a 100 µs interval timer \
                     (setitimer), 10,000 periods, without and with heavy network and I/O \
                     load. Each run records kernel events and explains its late periods \
                     (over 100 µs) the way the paper does: the late windows compared with \
                     normal ones and the causes ranked (`latlab run --explain`)."
                        .into(),
                ],
                steps: vec![
                    Step {
                        label: "no load",
                        file: "no-load",
                        args: base(&[]),
                    },
                    Step {
                        label: "network and I/O load",
                        file: "net-io-load",
                        args: base(&["--load", "net:2,io:2"]),
                    },
                ],
                share_under_10us: false,
            }
        }
        Name::DelayedLocking => {
            let mut bench = args(&["lockbench"]);
            if latlab_rt::autogroup::enabled() {
                // As bench/lockbench.sh: other sessions' work must not preempt the
                // background lock holders for milliseconds (seen: 151 ms).
                bench.extend(args(&["--autogroup-nice", "-15"]));
            }
            let mut sim = args(&["lockbench", "--simulate"]);
            if quick {
                bench.extend(args(&["--duration", "1s", "--rounds", "1"]));
                sim.extend(args(&["--periods", "2000"]));
            }
            Plan {
                title: "Delayed locking: lock benchmark on this machine and the simulator".into(),
                intro: vec![
                    "Lee and Park, \"Delayed Locking Technique for Improving Real-Time \
                     Performance of Embedded Linux by Prediction of Timer Interrupt\": the \
                     real-thread lock benchmark (plain, priority inheritance, ceiling and \
                     delayed locks) on this machine, and the simulator of the paper's setting \
                     (Figure 13's sender slowdown). Their tables are printed while the \
                     scenario runs; the report holds their JSON."
                        .into(),
                ],
                steps: vec![
                    Step {
                        label: "lockbench",
                        file: "lockbench",
                        args: bench,
                    },
                    Step {
                        label: "simulator",
                        file: "simulator",
                        args: sim,
                    },
                ],
                share_under_10us: false,
            }
        }
    }
}

/// A run's interrupt and preemption latency in one line (p50, p99, max),
/// or why it has none.
fn split_line(split: Option<&latlab_measure::result::LatencySplit>) -> String {
    use latlab_measure::units::format_ns;
    let Some(split) = split else {
        return "no interrupt/preemption split (the run had no BPF; its note says why)".into();
    };
    let part = |name: &str, p: &latlab_measure::result::LatencyPart| {
        format!(
            "{name} p50 {}, p99 {}, max {}",
            format_ns(p.summary.p50),
            format_ns(p.summary.p99),
            format_ns(p.summary.max)
        )
    };
    format!(
        "{}; {} ({} timer wake-ups)",
        part("interrupt latency", &split.interrupt_latency),
        part("preemption latency", &split.preemption_latency),
        split.timer_wakeups
    )
}

/// Runs the steps, then writes the comparison report.
pub fn execute(args: ScenarioArgs) -> anyhow::Result<ExitCode> {
    let name = clap::ValueEnum::to_possible_value(&args.name)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    if args.duration.is_some() && matches!(args.name, Name::Ktas | Name::DelayedLocking) {
        bail!(
            "--duration does not apply to scenario {name}: ktas runs a count of periods \
             (10,000) and delayed-locking its own benchmark lengths; use --quick for a short run"
        );
    }
    let plan = plan(
        args.name,
        args.quick,
        args.cpus.as_deref(),
        args.duration,
        args.verbose,
    );
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("latlab-scenarios").join(&name));
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("creating the scenario directory {}", dir.display()))?;
    let exe = std::env::current_exe().context("finding the latlab binary to run the steps")?;
    // Ctrl-C or SIGTERM stops the step running (it writes what it measured)
    // and the scenario after it, with the report of the steps so far.
    latlab_rt::stop::install_with(latlab_rt::stop::Signals::AlwaysCleanUp)?;
    let mut exceeded = false;
    let mut suspect = false;
    let mut documents = Vec::new();
    for (i, step) in plan.steps.iter().enumerate() {
        let json = dir.join(format!("{}.json", step.file));
        let _ = std::fs::remove_file(&json);
        eprintln!(
            "\n== scenario {name}, step {}/{}: {}\n== latlab {} --json {}",
            i + 1,
            plan.steps.len(),
            step.label,
            step.args.join(" "),
            json.display()
        );
        let mut child = Command::new(&exe)
            .args(&step.args)
            .arg("--json")
            .arg(&json)
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        let status = wait_step(&mut child)?;
        match status.code() {
            Some(0) => {}
            Some(code) if code == i32::from(crate::cmd::EXIT_REQUIREMENT_FAILED) => exceeded = true,
            Some(code) if code == i32::from(crate::cmd::EXIT_SUSPECT) => suspect = true,
            _ => bail!(
                "scenario {name}: step {} ({}) failed ({status}); its message is above. \
                 Results so far are in {}",
                i + 1,
                step.label,
                dir.display()
            ),
        }
        documents.push(read_document(&json)?);
        if latlab_rt::stop::requested() {
            eprintln!(
                "\n== scenario {name} stopped ({}) in step {}/{}: the report has the steps so far",
                match latlab_rt::stop::signal() {
                    Some(libc::SIGTERM) => "SIGTERM",
                    _ => "Ctrl-C",
                },
                i + 1,
                plan.steps.len()
            );
            break;
        }
    }
    if plan.share_under_10us {
        for (step, doc) in plan.steps.iter().zip(&documents) {
            if let Document::Run(run) = doc {
                let h = &run.overall.histogram;
                let share = h.count_at_or_below(10_000) as f64 / h.count().max(1) as f64;
                eprintln!(
                    "{}: {:.3} % of {} samples at or below 10 µs, worst {}",
                    step.label,
                    share * 100.0,
                    h.count(),
                    latlab_measure::units::format_ns(run.overall.latency.max)
                );
                eprintln!("  {}", split_line(run.overall.split.as_ref()));
            }
        }
    }
    let out = OutputArgs {
        output: dir.join("report.html"),
        labels: plan
            .steps
            .iter()
            .take(documents.len())
            .map(|s| s.label.to_string())
            .collect(),
        title: format!("latlab scenario {name}: {}", plan.title),
        png: None,
    };
    let characterization = match (args.name, documents.as_slice()) {
        (Name::Characterize, [Document::Run(idle), Document::Run(loaded)]) => {
            Some(characterize::Characterization::of(idle, loaded)?)
        }
        _ => None,
    };
    let mut opening = match &characterization {
        Some(c) => c.opening(),
        None => Opening::paragraphs(&plan.intro),
    };
    if args.quick {
        opening.paragraphs.push(
            "Quick smoke run (--quick): a few seconds per step, not the paper's lengths.".into(),
        );
    }
    write_report_opening(documents, &out, &opening)?;
    if let Some(c) = &characterization {
        let text = c.render_text();
        print!("{text}");
        let summary = dir.join("summary.txt");
        std::fs::write(&summary, &text)
            .with_context(|| format!("writing the summary to {}", summary.display()))?;
        println!(
            "\nreport: {} (opens offline in any browser); this summary: {}",
            out.output.display(),
            summary.display()
        );
    }
    if suspect {
        eprintln!(
            "a step's measurement is suspect: wake-ups came before their intended time (exit code 3)"
        );
        return Ok(ExitCode::from(crate::cmd::EXIT_SUSPECT));
    }
    if exceeded {
        eprintln!("a requirement of the scenario was not met (exit code 2)");
        return Ok(ExitCode::from(crate::cmd::EXIT_REQUIREMENT_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}
