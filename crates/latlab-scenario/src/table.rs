//! The scenarios as data: per experiment its title, what the report says it
//! reproduces, and its steps, each a latlab command line written as words
//! and the few placeholders [`crate::Plan::of`] fills in from the options.

use latlab_report::characterize::{EXPLAIN_THRESHOLD, FULL_LOAD};

/// One word of a step's command line.
#[derive(Debug, Clone, Copy)]
pub enum Word {
    /// Itself.
    Lit(&'static str),
    /// The step's length: `--duration`, else `3s` with `--quick`, else the
    /// scenario's own length.
    Length,
    /// `--cpus LIST` when `--cpus` was given; nothing otherwise.
    Cpus,
    /// `--cpus LIST`, this list when `--cpus` was not given.
    CpusOr(&'static str),
    /// `--verbose` with `--verbose`, else `--quiet`.
    Verbosity,
    /// The first with `--quick`, the second without.
    Quick(&'static str, &'static str),
    /// These words only with `--quick`.
    IfQuick(&'static [&'static str]),
    /// These words only when the kernel groups tasks by session
    /// (autogroup).
    IfAutogroup(&'static [&'static str]),
}

use Word::{Cpus, CpusOr, IfAutogroup, IfQuick, Length, Lit, Quick, Verbosity};

/// A step of the table (a `const fn`, so each fits on one line).
const fn step(
    label: &'static str,
    file: &'static str,
    words: &'static [&'static [Word]],
) -> StepSpec {
    StepSpec { label, file, words }
}

/// One step as written in the table.
#[derive(Debug)]
pub struct StepSpec {
    /// How the report and the progress lines name it.
    pub label: &'static str,
    /// Its result file: `DIR/<file>.json`.
    pub file: &'static str,
    /// Its command line, in parts (without `--json`).
    pub words: &'static [&'static [Word]],
}

/// One experiment as written in the table.
#[derive(Debug)]
pub struct Scenario {
    /// Which: its name on the command line (`latlab scenario NAME`).
    pub name: &'static str,
    /// The report's title after `latlab scenario NAME: `.
    pub title: &'static str,
    /// What the report says the experiment reproduces.
    pub intro: &'static [&'static str],
    /// The length of each measurement step; `None`: the scenario counts
    /// periods or has its own lengths, and takes no `--duration`.
    pub length: Option<&'static str>,
    /// Print the share of samples at or below 10 µs per run at the end.
    pub share_under_10us: bool,
    /// The steps, in order.
    pub steps: &'static [StepSpec],
}

const RUN: &[Word] = &[Lit("run"), Lit("--no-save"), Cpus];
const DURATION: &[Word] = &[Lit("--duration"), Length];
/// The Moblin event-response test: 10^6 events as in the paper (2000 with --quick).
const RESPOND: &[Word] = &[
    Lit("respond"),
    Lit("--no-save"),
    Lit("--profile"),
    Lit("moblin-ivi"),
    Lit("--count"),
    Quick("2000", "1000000"),
];
/// KTAS: an itimer task recorded while measuring, its late periods
/// explained (Tables 1 and 2).
const KTAS: &[Word] = &[
    Lit("run"),
    Lit("--no-save"),
    Lit("--timer"),
    Lit("itimer"),
    Lit("--interval"),
    Lit("100us"),
    Lit("--loops"),
    Quick("2000", "10000"),
    CpusOr("0"),
    Lit("--explain"),
    Lit("--trace-threshold"),
    Lit("100us"),
];

const EMBLIX: &[Word] = &[
    Lit("--interval"),
    Lit("1ms"),
    Lit("--profile"),
    Lit("emblix-class2"),
];
const MOBLIN: &[Word] = &[
    Lit("--interval"),
    Lit("2ms"),
    Lit("--profile"),
    Lit("moblin-ivi"),
];
const MS1: &[Word] = &[Lit("--interval"), Lit("1ms")];
const FULL: &[Word] = &[Lit("--load"), Lit("full")];

/// Every experiment of `latlab scenario`.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "characterize",
        title: "does this machine meet a deadline, and if not, why?",
        intro: &[],
        length: Some("30s"),
        share_under_10us: false,
        // The summary at the end is the answer: the steps say only their
        // verdict (the files have everything), unless asked for all.
        steps: &[
            step("idle", "idle", &[RUN, DURATION, &[Verbosity]]),
            StepSpec {
                label: "loaded",
                file: "loaded",
                words: &[
                    RUN,
                    DURATION,
                    &[Lit("--load"), Lit(FULL_LOAD), Lit("--explain")],
                    &[Lit("--trace-threshold"), Lit(EXPLAIN_THRESHOLD), Verbosity],
                ],
            },
        ],
    },
    Scenario {
        name: "emblix",
        title: "Emblix: 1 ms periodic task, disk load vs none",
        intro: &[
            "Iwasaki and Nakajima, \"Predictability in Embedded Linux and Commercial \
             Requirements\", section 7, Figures 1 to 4: a 1 ms periodic real-time \
             process (woken by the RTC there, by clock_nanosleep here) while IOzone \
             loads the disk. The paper saw a worst case of about 180 ms on vanilla \
             2.4.18 and a few ms with the preemption and lock-breaking patches; \
             Emblix class 2 asks for below 1 ms.",
        ],
        length: Some("60s"),
        share_under_10us: false,
        steps: &[
            step("no load", "no-load", &[RUN, EMBLIX, DURATION]),
            step(
                "disk load",
                "disk-load",
                &[RUN, EMBLIX, DURATION, &[Lit("--load"), Lit("io:2")]],
            ),
        ],
    },
    Scenario {
        name: "moblin",
        title: "Moblin: periodic task accuracy, light vs full load",
        intro: &[
            "Meyer and Ymlahi Ouazzani, \"Real Time on Moblin/Linux\", Figure 6: a \
             periodic task with a 2 ms reference period, in the \"light\" (the test \
             alone) and \"full\" configurations (a counter-increment hog and a USB \
             reader there; latlab's full load here: a cpu hog per CPU plus disk, \
             network and memory work). The in-vehicle requirement: 40 µs worst case \
             and every period within ±5 %. Then Figure 5's test: response latency to \
             an external event (a character on a serial line there; a raw \
             pseudo-terminal here, `latlab respond`), light and full, against the \
             40 µs reference.",
        ],
        length: Some("60s"),
        share_under_10us: false,
        steps: &[
            step("light", "light", &[RUN, MOBLIN, DURATION]),
            step("full", "full", &[RUN, MOBLIN, DURATION, FULL]),
            step("event response, light", "respond-light", &[RESPOND]),
            step("event response, full", "respond-full", &[RESPOND, FULL]),
        ],
    },
    Scenario {
        name: "montavista",
        title: "MontaVista: share of samples under 10 µs and the worst case, idle vs loaded",
        intro: &[
            "MontaVista, \"Embedded Linux is Ready for Real-Time\": long runs of a \
             periodic task reporting the share of samples under 10 µs and the worst \
             case, idle and under load (LMBench and Netperf there; latlab's full load \
             here). The share under 10 µs of each run is printed at the end of \
             `latlab scenario montavista`; the tail plot reads it at 10 µs.",
            "The paper splits the latency into interrupt latency (the timer's expiry \
             to its interrupt) and preemption latency (the interrupt to the task \
             running). Where BPF is available (as root, a kernel with BTF) each run \
             measures both in the kernel for its own wake-ups (`latlab run --split`): \
             the split table of each run below, and the two printed at the end, idle \
             vs loaded.",
        ],
        length: Some("10m"),
        share_under_10us: true,
        steps: &[
            step("idle", "idle", &[RUN, MS1, DURATION]),
            step("loaded", "loaded", &[RUN, MS1, DURATION, FULL]),
        ],
    },
    Scenario {
        name: "ktas",
        title: "KTAS: 100 µs itimer task under heavy network and I/O load",
        intro: &[
            "Kwon et al., \"KTAS: Analysis of Timer Latency for Embedded Linux \
             Kernel\", Tables 1 and 2: a task woken by a 100 µs interval timer \
             (setitimer), 10,000 periods, without and with heavy network and I/O \
             load. Each run records kernel events and explains its late periods \
             (over 100 µs) the way the paper does: the late windows compared with \
             normal ones and the causes ranked (`latlab run --explain`).",
        ],
        length: None,
        share_under_10us: false,
        steps: &[
            step("no load", "no-load", &[KTAS]),
            step(
                "network and I/O load",
                "net-io-load",
                &[KTAS, &[Lit("--load"), Lit("net:2,io:2")]],
            ),
        ],
    },
    Scenario {
        name: "delayed-locking",
        title: "Delayed locking: lock benchmark on this machine and the simulator",
        intro: &[
            "Lee and Park, \"Delayed Locking Technique for Improving Real-Time \
             Performance of Embedded Linux by Prediction of Timer Interrupt\": the \
             real-thread lock benchmark (plain, priority inheritance, ceiling and \
             delayed locks) on this machine, and the simulator of the paper's setting \
             (Figure 13's sender slowdown). Their tables are printed while the \
             scenario runs; the report holds their JSON.",
        ],
        length: None,
        share_under_10us: false,
        steps: &[
            StepSpec {
                label: "lockbench",
                file: "lockbench",
                // As bench/lockbench.sh: other sessions' work must not preempt the
                // background lock holders for milliseconds (seen: 151 ms).
                words: &[&[
                    Lit("lockbench"),
                    IfAutogroup(&["--autogroup-nice", "-15"]),
                    IfQuick(&["--duration", "1s", "--rounds", "1"]),
                ]],
            },
            StepSpec {
                label: "simulator",
                file: "simulator",
                words: &[&[
                    Lit("lockbench"),
                    Lit("--simulate"),
                    IfQuick(&["--periods", "2000"]),
                ]],
            },
        ],
    },
];
