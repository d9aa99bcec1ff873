#!/usr/bin/env python3
"""lab/matrix.py: the check matrix of issue 13, kernel x check -> pass/fail.

    lab/matrix.py [--kernels K1,K2,...] [--smoke] [--checks C1,C2,...] [-o DIR]

Boots each kernel once with `lab/run` (QEMU TCG), runs every check's
commands inside it, then judges the files the commands left in the guest's
/out (JSON results, logs, traces) on the host and prints a table: one row
per check, one column per kernel, each cell `pass` or `FAIL` with the figure
behind it. The table also lands in DIR/matrix.md and DIR/matrix.json; the
guests' files stay in DIR/<kernel>/.

--smoke is the subset CI runs: arm64 and rt-amd64 with a few checks each,
and armmp (the one 32-bit kernel) with every timer source's run. Without
--kernels: every pinned kernel (see lab/run -h).

Every figure comes from an emulated machine (TCG): latencies of hundreds of
µs to milliseconds describe the emulator, not a board. The checks judge
function and agreement, never absolute latency.

Exit status: 0 every cell passed, 1 a cell failed, 2 a kernel did not run.
Needs on the host: python3, lab/run's tools (qemu-system-*), and trace-cmd
for the dump check (apt-get install trace-cmd).
"""

import argparse
import dataclasses
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

LAB = Path(__file__).resolve().parent
ROOT = LAB.parent

ALL_KERNELS = ["amd64", "rt-amd64", "arm64", "rt-arm64", "armmp"]
SMOKE_KERNELS = ["arm64", "rt-amd64", "armmp"]
# Smoke kernels that run the timer sources (and the system check) instead
# of the smoke checks: the 32-bit guest, whose emulated system calls are
# the lab's slowest. Only there did itimer's first expiry, armed by the
# kernel long after latlab's clock read, put every sample early; the 64-bit
# guests passed.
SMOKE_TIMER_KERNELS = {"armmp"}

# What `uname -m` says on each kernel's guest.
MACHINE = {"amd64": "x86_64", "arm64": "aarch64", "armmp": "armv7l"}

# Run checks: a short run per timer source. `--duration` rather than
# `--loops`, so that cycles + missed can be checked against duration /
# interval. The rtc runs at 1024 Hz (its interval is 1/1024 s).
RUN_SECONDS = 2
TIMERS = {
    "clock-nanosleep": "1ms",
    "nanosleep": "1ms",
    "posix-timer": "1ms",
    "timerfd": "1ms",
    "itimer": "1ms",
    "rtc": "976562ns",
}
# Events per respond check. The GPIO pair's driver polls its pins every
# 40 ms (lab/README.md), so each of its events takes that long.
RESPOND_EVENTS = {"serial": 200, "gpio": 50}


def interval_ns(text: str) -> int:
    """`1ms` / `976562ns` -> ns."""
    m = re.fullmatch(r"(\d+)(ns|us|ms)", text)
    assert m, text
    return int(m.group(1)) * {"ns": 1, "us": 1_000, "ms": 1_000_000}[m.group(2)]


def us(ns) -> str:
    """A latency in ns as a short µs/ms figure."""
    if ns is None:
        return "-"
    if ns >= 1_000_000:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.0f} us"


class Verdict(Exception):
    """A failed check, with the figure or the reason."""


@dataclasses.dataclass
class Check:
    """One row of the matrix: guest commands and the judge of what they left."""

    name: str
    what: str
    # Guest shell commands (one lab/run command each), run in /out.
    commands: Callable[[str], list]
    # (kernel, the guest's /out on the host, exit codes of the commands) ->
    # the figure; raises Verdict on failure.
    judge: Callable[[str, Path, list], str]
    smoke: bool = False
    # Needs the GPIO pair (lab/run's lab-wire, built for the guest).
    wire: bool = False


def load_json(out: Path, name: str) -> dict:
    path = out / name
    if not path.exists():
        raise Verdict(f"no {name}")
    try:
        return json.loads(path.read_text())
    except ValueError as e:
        raise Verdict(f"{name}: not JSON ({e})")


def exited(rcs: list, ok=(0,)) -> None:
    for rc in rcs:
        if rc is None:
            raise Verdict("did not finish")
        if rc not in ok:
            raise Verdict(f"exit {rc}")


# --- run ------------------------------------------------------------------


def run_commands(timer: str) -> Callable[[str], list]:
    def commands(_kernel: str) -> list:
        return [
            f"latlab run --timer {timer} --interval {TIMERS[timer]} "
            f"--duration {RUN_SECONDS}s --cpus 0 --json run-{timer}.json --no-save -q"
        ]

    return commands


def run_judge(timer: str) -> Callable[[str, Path, list], str]:
    def judge(_kernel: str, out: Path, rcs: list) -> str:
        # Exit 3 is SUSPECT (early wake-ups): a failure here.
        exited(rcs)
        r = load_json(out, f"run-{timer}.json")
        o = r["overall"]
        interval = interval_ns(TIMERS[timer])
        lat = o["latency"]
        tolerance = 0.02
        if timer == "nanosleep":
            # Relative sleeps have no grid: each period is the interval
            # plus that wake-up's latency plus the loop's own work, which
            # an emulated ARM CPU makes 50-80 µs long, and none is missed.
            expected = round(RUN_SECONDS * 1e9 / (interval + lat["mean"]))
            tolerance = 0.1
        else:
            expected = RUN_SECONDS * 1_000_000_000 // interval
        seen = o["cycles"] + o["missed_periods"]
        figure = f"{o['cycles']}+{o['missed_periods']} missed of {expected}, p50 {us(lat['p50'])}"
        if o.get("early_wakeups", 0):
            raise Verdict(f"{o['early_wakeups']} early wake-ups; {figure}")
        if abs(seen - expected) > expected * tolerance + 2:
            raise Verdict(f"cycles+missed {seen} vs {expected}; {figure}")
        return figure

    return judge


def system_judge(kernel: str, out: Path, rcs: list) -> str:
    r = load_json(out, "run-clock-nanosleep.json")
    s = r["system"]
    arch = MACHINE[kernel.removeprefix("rt-")]
    model = s.get("preemption_model")
    version = (out / "version.txt").read_text().strip() if (out / "version.txt").exists() else ""
    commit = re.search(r"commit (\w+)", version)
    figure = f"{s.get('machine')}, preempt {model}, {s.get('kernel_release')}"
    if commit:
        figure += f", latlab {commit.group(1)}"
    if s.get("machine") != arch:
        raise Verdict(f"machine {s.get('machine')}, expected {arch}")
    if kernel.startswith("rt-") != (model == "rt"):
        raise Verdict(f"preemption model {model} on {kernel}")
    return figure


# --- respond --------------------------------------------------------------


def respond_commands(how: str) -> Callable[[str], list]:
    def commands(_kernel: str) -> list:
        if how == "serial":
            wiring, need = "--serial $LAB_SERIAL_TX,$LAB_SERIAL_RX", "$LAB_SERIAL_RX"
        else:
            wiring, need = "--gpio $LAB_GPIO_OUT,$LAB_GPIO_IN", "$LAB_GPIO_IN"
        # Without the device the command says so (lab/run leaves the
        # variable unset and prints why).
        return [
            f'[ -n "{need}" ] || {{ echo "no {how} pair in this guest"; exit 97; }}; '
            f"latlab respond {wiring} --count {RESPOND_EVENTS[how]} --gap 5ms --timeout 1s "
            f"--json respond-{how}.json --no-save -q"
        ]

    return commands


def respond_judge(how: str) -> Callable[[str, Path, list], str]:
    def judge(_kernel: str, out: Path, rcs: list) -> str:
        if rcs and rcs[0] == 97:
            raise Verdict(f"no {how} pair in the guest")
        exited(rcs)
        r = load_json(out, f"respond-{how}.json")
        rt, ow = r["round_trip"]["latency"], r["one_way"]["latency"]
        figure = (
            f"{r['events_answered']}/{r['events_sent']} answered, round trip p50 {us(rt['p50'])}"
        )
        if (
            r["events_sent"] != RESPOND_EVENTS[how]
            or r["events_lost"]
            or (r["events_answered"] != r["events_sent"])
        ):
            raise Verdict(figure)
        # Plausible: a round trip is positive and longer than the one-way
        # part, and well under the 1 s timeout.
        if not (0 < ow["min"] <= rt["min"] and rt["max"] < 1_000_000_000):
            raise Verdict(f"implausible: one-way min {ow['min']} ns; {figure}")
        if how == "gpio":
            # Every round trip must end at the kernel's edge timestamp (it
            # lies between the send and the stimulus's read).
            edges = r.get("gpio_edges")
            if not edges:
                raise Verdict(f"no gpio_edges in the result; {figure}")
            if edges["within"] != r["events_answered"] or edges["outside"]:
                raise Verdict(
                    f"{edges['within']} round trips end at the kernel's edge timestamp, "
                    f"{edges['outside']} at the read; {figure}"
                )
            figure += ", all at the edge timestamp"
        return figure

    return judge


# --- record + dump --------------------------------------------------------


def record_commands(_kernel: str) -> list:
    return [
        "latlab record -o record.dat -e sched,irq,timer -- "
        "latlab run --loops 300 --cpus 0 --no-save -q",
        "latlab dump record.dat > record.txt",
    ]


# libtraceevent prints timer_start's flags wrong (see crates/latlab/tests/dump.rs).
KNOWN_MISPRINTS = ("timer_start:",)


def event_lines(text: str) -> list:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("cpus="):
            return lines[i + 1 :]
    return lines


def line_head(line: str) -> str:
    m = re.match(r"(.*?\]\s+[\d.]+:\s+[^:]+:)", line)
    return m.group(1) if m else line


HEADER = re.compile(r"^\s*(.*)-(\d+)\s+(\[\d+\].*)$")


def earlier_name(theirs: str, ours: str, names: set) -> bool:
    """Whether two event lines differ only in the task name of their header,
    trace-cmd's being a name the same pid carried earlier in the trace.

    libtraceevent keeps a pid twice when sched events register its name before
    the first lookup (the saved cmdlines' name and the event's), and its binary
    search then returns either: trace-cmd report can print a thread's name from
    before a rename (seen: `latlab` for the reader thread `latlab-rd0`)."""
    a, b = HEADER.match(theirs), HEADER.match(ours)
    if not a or not b or a.group(2) != b.group(2) or a.group(3) != b.group(3):
        return False
    return a.group(1) != b.group(1) and (a.group(1), a.group(2)) in names


def names_in(lines: list) -> set:
    """Every (name, pid) the trace's lines show: headers and `name:pid` fields."""
    names = set()
    for line in lines:
        m = HEADER.match(line)
        if m:
            names.add((m.group(1).strip(), m.group(2)))
        for comm, pid in re.findall(r"(\S+):(\d+)", line):
            names.add((comm, pid))
    return names


def record_judge(_kernel: str, out: Path, rcs: list) -> str:
    exited(rcs)
    dat = out / "record.dat"
    if not dat.exists():
        raise Verdict("no record.dat")
    if not shutil.which("trace-cmd"):
        raise Verdict("trace-cmd missing on the host (apt-get install trace-cmd)")
    ref = subprocess.run(
        ["trace-cmd", "report", str(dat)], capture_output=True, text=True, errors="replace"
    )
    if ref.returncode != 0:
        raise Verdict(f"trace-cmd report failed: {ref.stderr.strip()[:200]}")
    theirs = event_lines(ref.stdout)
    ours = event_lines((out / "record.txt").read_text(errors="replace"))
    if len(theirs) != len(ours):
        raise Verdict(f"{len(ours)} lines, trace-cmd {len(theirs)}")
    names = None
    renamed = 0
    for i, (a, b) in enumerate(zip(theirs, ours)):
        if a == b or (line_head(a) == line_head(b) and line_head(a).endswith(KNOWN_MISPRINTS)):
            continue
        names = names if names is not None else names_in(ours)
        if earlier_name(a, b, names):
            renamed += 1
            continue
        raise Verdict(f"line {i + 1} differs: trace-cmd {a!r}, latlab {b!r}")
    note = f" ({renamed} lines with trace-cmd's stale task name)" if renamed else ""
    return f"{len(ours)} events = trace-cmd report{note}"


# --- explain under load ---------------------------------------------------

EXPLAIN_LOAD = "net:1,mem:1"
# The disk part: direct reads of the guest's results disk (its only block
# device; /tmp is tmpfs, so the io load would exercise memory), by busybox dd.
DISK_LOAD = (
    "while :; do dd if=/dev/vda of=/dev/null bs=64k count=256 iflag=direct 2>/dev/null; done"
)


def explain_commands(_kernel: str) -> list:
    # --explain also matches every sample with the trace (trace_agreement);
    # a 2 ms period leaves the emulated CPU room to keep up under the load.
    return [
        "ip link set lo up; latlab run --load "
        + EXPLAIN_LOAD
        + f" --load-cmd '{DISK_LOAD}'"
        + " --interval 2ms --duration 4s --cpus 0 --trace explain.dat --explain "
        "--trace-threshold 10ms --json explain-run.json --no-save -q > explain-run.txt",
        "latlab explain explain.dat --threshold p99 --json explain.json > explain.txt",
    ]


# What names the injected load: its threads (ld-*, latlab-load, dd) or the
# interrupts, softirqs and kernel threads its traffic, allocations and disk
# reads set off.
LOAD_CAUSE = re.compile(
    r"ld-|latlab-load|\bdd\b|virtio|BLOCK|net_rx|net_tx|NET_|softirq|ksoftirqd|kswapd|page|irq/"
)


def explain_judge(_kernel: str, out: Path, rcs: list) -> str:
    exited(rcs)
    run = load_json(out, "explain-run.json")
    e = load_json(out, "explain.json")
    agreement = run.get("trace_agreement") or {}
    samples, matched = agreement.get("samples", 0), agreement.get("matched", 0)
    causes = sorted(e.get("causes", []), key=lambda c: -c.get("excess_ns", 0))[:3]
    load = next(
        ((i, c["cause"]) for i, c in enumerate(causes, 1) if LOAD_CAUSE.search(json.dumps(c))),
        None,
    )
    figure = f"{matched}/{samples} samples = trace, {e['late']} late"
    if load:
        what = " ".join(str(v) for v in load[1].values())
        figure += f"; cause #{load[0]}: {what}"
    if e.get("lost_events"):
        figure += f" ({e['lost_events']} events lost)"
    if not samples or matched < samples * 0.9:
        raise Verdict(f"the trace's periods match too few samples; {figure}")
    if agreement.get("below_trace"):
        raise Verdict(f"{agreement['below_trace']} samples below the trace; {figure}")
    if not load:
        raise Verdict(f"the load is not among the top causes; {figure}")
    return figure


# --- watch ------------------------------------------------------------------

# latlab watch over a 1 ms run it starts: BPF where the kernel allows it
# (BTF, bpf() as root), else the tracefs side; the cell says which.
WATCH_RUN = (
    "-- latlab run --duration 2s --interval 1ms --cpus 0 --priority 80 --no-save -q"
    " --split off --json watch-run.json"
)


def watch_commands(_kernel: str) -> list:
    opts = "--threshold 1ms --interval 1s --no-history --quiet"
    return [
        f"latlab watch {opts} --json watch.json {WATCH_RUN} > watch.txt 2> watch.err"
        f" || latlab watch --tracefs {opts} --json watch.json {WATCH_RUN}"
        " > watch.txt 2>> watch.err"
    ]


def watch_judge(_kernel: str, out: Path, rcs: list) -> str:
    exited(rcs)
    w = load_json(out, "watch.json")
    run = load_json(out, "watch-run.json")
    o = run["overall"]
    cycles, missed = o["cycles"], o["missed_periods"]
    backend = w["settings"]["backend"]
    reads = w["settings"].get("path_reads")
    if reads:
        # How the BPF programs read kernel memory on the path: plain loads
        # (kernels with bpf_rdonly_cast()) or the probe twins.
        backend += " (" + reads.replace("_", " ") + ")"
    task = next((t for t in w["tasks"] if t["comm"] == "latlab-cpu0"), None)
    if task is None:
        raise Verdict(f"{backend}: the run's thread latlab-cpu0 was not watched")
    count = lambda kind: (task.get(kind) or {}).get("summary", {}).get("count", 0)
    woken = count("thread") + count("wakeup")
    if not task.get("thread") or not task.get("irq"):
        # The run's wake-ups are timer-driven: each must be measured from
        # its timer's expiry (thread) and interrupt (irq).
        raise Verdict(
            f"{backend}: none of latlab-cpu0's {woken} wake-ups was measured as"
            f" timer-driven (thread {count('thread')}, irq {count('irq')},"
            f" wakeup {count('wakeup')})"
        )
    figure = (
        f"{backend}: {woken} wake-ups of {cycles}+{missed} missed,"
        f" thread p50 {us(task['thread']['summary']['p50'])}"
        f" (run {us(o['latency']['p50'])}), irq p50 {us(task['irq']['summary']['p50'])}"
    )
    # As tests/watch.rs: every activation that slept is one wake-up; one
    # whose expiry passed before it slept (a missed period) is none.
    if not (woken + missed + cycles // 100 + 3 >= cycles and woken <= cycles + 5):
        raise Verdict(f"wake-ups do not match the run's cycles; {figure}")
    return figure


# --- rtc killed -------------------------------------------------------------


def rtc_killed_commands(_kernel: str) -> list:
    # SIGKILL 3 s into an rtc run at FIFO 95: the kernel closes /dev/rtc0
    # from the dying thread. On PREEMPT_RT a close from a real-time thread
    # that preempted the RTC core's callback would spin (lab/README.md); the
    # guest must live on and the RTC keep working.
    return [
        "for hz in 976562ns 122070ns; do latlab run --timer rtc --interval $hz --duration 20s "
        "--cpus 0 --no-save -q >/dev/null 2>&1 & p=$!; sleep 3; kill -9 $p; wait $p; done; "
        "latlab run --timer rtc --interval 976562ns --duration 1s --cpus 0 --json rtc-after-kill.json "
        "--no-save -q >/dev/null"
    ]


def rtc_killed_judge(_kernel: str, out: Path, rcs: list) -> str:
    exited(rcs)
    o = load_json(out, "rtc-after-kill.json")["overall"]
    seen = o["cycles"] + o["missed_periods"]
    figure = f"killed at 1024 and 8192 Hz; then {o['cycles']}+{o['missed_periods']} missed of 1024"
    if abs(seen - 1024) > 1024 * 0.02 + 2:
        raise Verdict(f"the RTC after the kills: {figure}")
    return figure


# --- lockbench and loads --------------------------------------------------

LOCK_VARIANTS = "plain,pi,delayed-pi"


def lockbench_commands(_kernel: str) -> list:
    return [
        f"latlab lockbench --duration 2s --rounds 2 --warmup 300ms --variants {LOCK_VARIANTS} "
        "--json lockbench.json --no-history"
    ]


def lockbench_judge(_kernel: str, out: Path, rcs: list) -> str:
    exited(rcs)
    r = load_json(out, "lockbench.json")
    results = {v["variant"]: v for v in r["results"]}
    missing = set(LOCK_VARIANTS.split(",")) - set(results)
    if missing:
        raise Verdict(f"variants not measured: {sorted(missing)}")
    for name, v in results.items():
        if v["periods"] < 10 or v["bg_sections"] == 0:
            raise Verdict(f"{name}: {v['periods']} periods, {v['bg_sections']} sections")
    return "worst lock " + ", ".join(f"{n} {us(v['lock']['max'])}" for n, v in results.items())


LOAD_KINDS = "cpu:1,io:1,net:1,mem:1,syscall:1,ipc:1"


def load_commands(_kernel: str) -> list:
    return [
        f"ip link set lo up; latlab load {LOAD_KINDS} --duration 3s --temp-dir /tmp "
        "--json load.json"
    ]


def load_judge(_kernel: str, out: Path, rcs: list) -> str:
    exited(rcs)
    r = load_json(out, "load.json")
    done = {k["kind"]: k for k in r["kinds"]}
    wanted = [k.split(":")[0] for k in LOAD_KINDS.split(",")]
    idle = [k for k in wanted if not done.get(k, {}).get("total")]
    if idle:
        raise Verdict(f"no throughput from {idle}")
    return f"{', '.join(wanted)}: all ran; mem {done['mem']['per_second']:.3g} pages/s"


CHECKS = (
    [
        Check(
            "system",
            "run names the architecture and preemption model",
            lambda k: ["latlab --version > version.txt"],
            system_judge,
            True,
        )
    ]
    + [
        Check(
            f"run {t}",
            f"latlab run --timer {t}: cycles + missed = duration / interval",
            run_commands(t),
            run_judge(t),
            t in ("clock-nanosleep", "rtc"),
        )
        for t in TIMERS
    ]
    + [
        Check(
            "respond serial",
            "two UARTs joined as by a null-modem cable",
            respond_commands("serial"),
            respond_judge("serial"),
            True,
        ),
        Check(
            "record + dump",
            "latlab dump of a guest recording = trace-cmd report",
            record_commands,
            record_judge,
            True,
        ),
        Check(
            "explain under load",
            f"explain names the injected load ({EXPLAIN_LOAD} and disk reads)",
            explain_commands,
            explain_judge,
        ),
        Check(
            "watch",
            "latlab watch counts the wake-ups of a run it starts (BPF, else tracefs)",
            watch_commands,
            watch_judge,
            True,
        ),
        Check("lockbench", f"lockbench {LOCK_VARIANTS}", lockbench_commands, lockbench_judge),
        Check("loads", f"latlab load {LOAD_KINDS}", load_commands, load_judge),
        Check(
            "rtc killed",
            "SIGKILL of an rtc run at FIFO 95; the kernel and the RTC live on",
            rtc_killed_commands,
            rtc_killed_judge,
        ),
        Check(
            "respond gpio",
            "the emulated CP2112 pair with the lab's wire",
            respond_commands("gpio"),
            respond_judge("gpio"),
            True,
            wire=True,
        ),
    ]
)

TIMER_CHECKS = ["system"] + [f"run {t}" for t in TIMERS]


def plan(kernels: list, smoke: bool, wanted: list = None) -> dict:
    """The checks each kernel runs, {kernel: [Check]} in CHECKS order:
    `wanted` (check names) on every kernel; else, with `smoke`, the smoke
    checks (the timer checks on SMOKE_TIMER_KERNELS); else every check. The
    system check reads the clock-nanosleep run's result: that run comes
    with it."""
    chosen = {}
    for k in kernels:
        if wanted:
            names = set(wanted)
        elif smoke and k in SMOKE_TIMER_KERNELS:
            names = set(TIMER_CHECKS)
        elif smoke:
            names = {c.name for c in CHECKS if c.smoke}
        else:
            names = {c.name for c in CHECKS}
        if "system" in names:
            names.add("run clock-nanosleep")
        chosen[k] = [c for c in CHECKS if c.name in names]
    return chosen


# The retry after a splat: every vCPU on one host thread. The splat seen
# under TCG, 'Oops: int3' on rt-amd64 (in CI's smoke on 2026-11-27 and
# 2026-11-28, once on both boots), is a vCPU running code another vCPU
# had just patched (x86 patches static keys, as tracepoints and BPF
# enable, through int3); single-threaded TCG cannot interleave the two.
RETRY_ACCEL = "tcg,thread=single"


def lab_env(checks: list, environ: dict, boot: int = 1) -> dict:
    """lab/run's environment for a boot running `checks`: without the GPIO
    pair (LAB_WIRE=none: no lab-wire to build for the guest) when none of
    them needs it, unless LAB_WIRE was given; a retry (boot 2) with
    single-threaded TCG unless LAB_ACCEL was given."""
    env = dict(environ)
    if "LAB_WIRE" not in env and not any(c.wire for c in checks):
        env["LAB_WIRE"] = "none"
    if boot > 1 and "LAB_ACCEL" not in env:
        env["LAB_ACCEL"] = RETRY_ACCEL
    return env


def run_kernel(kernel: str, checks: list, out: Path, limit: int, boot: int = 1) -> dict:
    """Boots `kernel` once with every check's commands; returns {check:
    (ok, figure)}. Its files go to out/KERNEL (out/KERNEL-boot2 for a
    second boot)."""
    commands, owner = [], []
    for c in checks:
        for cmd in c.commands(kernel):
            commands.append(cmd)
            owner.append(c.name)
    kout = out / (kernel if boot == 1 else f"{kernel}-boot{boot}")
    if kout.exists():
        shutil.rmtree(kout)
    print(f"matrix: {kernel}: {len(commands)} commands", file=sys.stderr, flush=True)
    proc = subprocess.run(
        [str(LAB / "run"), "-o", str(kout), "-t", str(limit), kernel, "--", *commands],
        env=lab_env(checks, os.environ, boot),
    )
    results = {}
    if not (kout / "01.rc").exists() and commands:
        reason = (
            f"lab/run exited {proc.returncode} before the first command (see {kout}/console.log)"
        )
        return {c.name: (False, reason) for c in checks}
    splats = kernel_splats(kout / "console.log")
    for c in checks:
        rcs = []
        for i, o in enumerate(owner, start=1):
            if o == c.name:
                rc_file = kout / f"{i:02d}.rc"
                rcs.append(int(rc_file.read_text().strip()) if rc_file.exists() else None)
        mine = [i for i, o in enumerate(owner, start=1) if o == c.name]
        splat = next((text for n, text in splats if n in mine), None)
        try:
            results[c.name] = (True, c.judge(kernel, kout, rcs))
        except Verdict as v:
            results[c.name] = (False, str(v))
        except (KeyError, TypeError, ValueError) as e:
            results[c.name] = (False, f"unexpected result ({type(e).__name__}: {e})")
        if splat:
            results[c.name] = (False, f"the kernel said {splat!r}; " + results[c.name][1])
    return results


def run_kernel_again_after_a_crash(kernel: str, checks: list, out: Path, limit: int) -> dict:
    """run_kernel; when the guest's kernel splatted (a BUG, Oops, panic or
    lockup on its console) and checks failed, boots it once more with only
    those checks and keeps the second boot's verdicts, each naming the first
    boot's splat. A splat on the second boot fails its check as before.

    Under TCG the emulator can crash a guest kernel mid-check: on 2026-11-27
    CI's smoke saw 'Oops: int3' on rt-amd64 while `record` enabled
    tracepoints (x86 patches their static keys through int3), a check that
    had passed in every earlier lab run. The second boot runs every vCPU on
    one host thread (RETRY_ACCEL), where that race cannot happen. The table
    shows every retry."""
    results = run_kernel(kernel, checks, out, limit)
    splats = kernel_splats(out / kernel / "console.log")
    failed = {c.name for c in checks if not results[c.name][0]}
    if not splats or not failed:
        return results
    first = splats[0][1]
    names = failed | ({"run clock-nanosleep"} if "system" in failed else set())
    again = [c for c in checks if c.name in names]
    print(
        f"matrix: {kernel}: the kernel said {first!r}; booting once more "
        f"(-accel {RETRY_ACCEL}) for " + ", ".join(sorted(failed)),
        file=sys.stderr,
        flush=True,
    )
    second = run_kernel(kernel, again, out, limit, boot=2)
    for name in failed:
        ok, figure = second[name]
        results[name] = (
            ok,
            f"{figure} (second boot, single-threaded TCG: the first boot's kernel said {first!r})",
        )
    return results


# Kernel messages that make a check fail whatever its result.
SPLAT = re.compile(r"\] ((?:BUG|WARNING|Oops|Kernel panic|watchdog: .*LOCKUP)[^\r\n]*)")


def kernel_splats(console: Path) -> list:
    """(command number, message) of every kernel BUG, WARNING, Oops, panic
    or lockup on the guest's console, by the command running at the time."""
    if not console.exists():
        return []
    found, command = [], 0
    for line in console.read_text(errors="replace").splitlines():
        m = re.match(r"@@lab: \[(\d+)\] \$", line)
        if m:
            command = int(m.group(1))
            continue
        m = SPLAT.search(line)
        if m and command:
            found.append((command, m.group(1).strip()))
    return found


def table(kernels: list, checks: list, results: dict) -> str:
    """One row per check that some kernel ran, one column per kernel; `-`
    where that kernel did not run the check."""
    head = "| check | " + " | ".join(kernels) + " |"
    rule = "|---|" + "---|" * len(kernels)
    rows = [head, rule]
    for c in checks:
        cells = []
        for k in kernels:
            if c.name not in results[k]:
                cells.append("-")
                continue
            ok, figure = results[k][c.name]
            cells.append(("pass: " if ok else "**FAIL**: ") + figure.replace("|", "/"))
        rows.append(f"| {c.name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--kernels", help="comma-separated (default: all; --smoke: " + ",".join(SMOKE_KERNELS) + ")"
    )
    p.add_argument("--smoke", action="store_true", help="the CI subset of checks and kernels")
    p.add_argument("--checks", help="comma-separated check names (default: all, or the smoke set)")
    p.add_argument("-o", "--out", type=Path, help="default lab/out/matrix-TIMESTAMP")
    p.add_argument(
        "-t", "--limit", type=int, default=900, help="seconds per kernel boot (default 900)"
    )
    a = p.parse_args()

    kernels = a.kernels.split(",") if a.kernels else SMOKE_KERNELS if a.smoke else ALL_KERNELS
    wanted = a.checks.split(",") if a.checks else None
    if wanted:
        unknown = set(wanted) - {c.name for c in CHECKS}
        if unknown:
            p.error(f"unknown checks {sorted(unknown)}; known: {[c.name for c in CHECKS]}")
    chosen = plan(kernels, a.smoke, wanted)
    checks = [c for c in CHECKS if any(c in chosen[k] for k in kernels)]
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = a.out or LAB / "out" / f"matrix-{stamp}"
    out.mkdir(parents=True, exist_ok=True)

    results = {}
    for k in kernels:
        results[k] = run_kernel_again_after_a_crash(k, chosen[k], out, a.limit)
    not_run = [k for k in kernels if not (out / k / "01.rc").exists()]
    md = table(kernels, checks, results)
    version = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    header = (
        f"latlab lab matrix, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"commit {version}, QEMU TCG (emulated machines: latencies describe the emulator)"
    )
    (out / "matrix.md").write_text(header + "\n\n" + md + "\n")
    (out / "matrix.json").write_text(
        json.dumps(
            {
                k: {c: {"pass": ok, "figure": f} for c, (ok, f) in v.items()}
                for k, v in results.items()
            },
            indent=1,
        )
    )
    print(header)
    print()
    print(md)
    failed = sum(not ok for v in results.values() for ok, _ in v.values())
    total = sum(len(v) for v in results.values())
    print(f"\n{total - failed} of {total} passed; details in {out}", file=sys.stderr)
    if not_run:
        print(f"did not run: {', '.join(not_run)}", file=sys.stderr)
        return 2
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
