#!/usr/bin/env python3
"""Where the signal channel's cold wake-up spends its extra time.

    bench/respond-pacing-trace.py [EVENTS]      (as root; needs cargo and tracefs)

Runs the pacing_probe example of latlab-respond twice, with latlab's pacing (the stimulus
keeps its own clock, 1 ms gaps) and with sigwaittest's (-P, ping-pong), each
under a private tracefs instance (instances/latlab-respond-pacing, removed
afterwards) with sched_waking, sched_wakeup, sched_switch and the tgkill /
rt_sigtimedwait entries and exits, clocked by the TSC. For every event it
splits the stimulus's send into phases:

    tgkill entry -> sched_waking     finding the responder, queueing the signal
    sched_waking -> sched_wakeup     the wake-up proper
    sched_wakeup -> tgkill exit      the rest of the send
    tgkill exit  -> sched_switch     the stimulus leaves the CPU
    sched_switch -> sigwaitinfo exit the responder's return from its wait

and prints the medians side by side. Tracing adds its own cost to both.
"""
import os
import re
import statistics
import subprocess
import sys

TRACEFS = "/sys/kernel/tracing"
INSTANCE = os.path.join(TRACEFS, "instances", "latlab-respond-pacing")
EVENTS = ["raw_syscalls/sys_enter", "raw_syscalls/sys_exit", "sched/sched_waking",
          "sched/sched_wakeup", "sched/sched_switch"]
# x86-64 system call numbers: rt_sigtimedwait, tgkill.
SIGTIMEDWAIT, TGKILL = 128, 234
PHASES = ["enter", "waking", "wakeup", "exit", "switch", "woke"]
LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[\d+\]\s+\S+\s+(\d+): (\w+): (.*)$")


def write(name, value):
    with open(os.path.join(INSTANCE, name), "w") as f:
        f.write(value)


def tsc_hz():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and "GHz" in line:
                return float(line.split("@")[-1].strip().rstrip("GHz")) * 1e9
    sys.exit("cannot tell the TSC frequency from /proc/cpuinfo")


def traced(probe, args):
    """Runs the probe under the instance; returns its output and the trace text."""
    if os.path.isdir(INSTANCE):
        os.rmdir(INSTANCE)
    os.mkdir(INSTANCE)
    try:
        write("trace_clock", "x86-tsc")
        write("buffer_size_kb", "16384")
        ids = f"id == {SIGTIMEDWAIT} || id == {TGKILL}"
        write("events/raw_syscalls/sys_enter/filter", ids)
        write("events/raw_syscalls/sys_exit/filter", ids)
        for event in EVENTS:
            write(f"events/{event}/enable", "1")
        write("tracing_on", "1")
        out = subprocess.run([probe] + args, capture_output=True, text=True, check=True).stdout
        write("tracing_on", "0")
        with open(os.path.join(INSTANCE, "trace")) as f:
            return out.strip(), f.read()
    finally:
        for event in EVENTS:
            write(f"events/{event}/enable", "0")
        os.rmdir(INSTANCE)


def phases(trace, hz, probe_comm):
    """Per-phase durations (us) of every send found in the trace."""
    events = []
    for line in trace.splitlines():
        m = LINE.match(line)
        if m:
            events.append((m.group(1), int(m.group(2)), int(m.group(3)) / hz * 1e6,
                           m.group(4), m.group(5)))
    found = {f"{a} -> {b}": [] for a, b in zip(PHASES, PHASES[1:])}
    found["total"] = []
    i = 0
    while i < len(events):
        comm, pid, t, name, rest = events[i]
        # The stimulus's tgkill of SIGUSR1 (10 = 0xa): the measured send.
        if not (comm == probe_comm and name == "sys_enter"
                and rest.startswith(f"NR {TGKILL} ") and ", a, " in rest):
            i += 1
            continue
        seen = {"enter": t}
        j = i + 1
        while j < min(len(events), i + 40):
            _, pid2, t2, name2, rest2 = events[j]
            if name2 in ("sched_waking", "sched_wakeup") and f"comm={probe_comm} " in rest2:
                seen.setdefault(name2[len("sched_"):], t2)
            elif name2 == "sys_exit" and pid2 == pid and rest2.startswith(f"NR {TGKILL} "):
                seen.setdefault("exit", t2)
            elif name2 == "sched_switch" and f"prev_pid={pid} " in rest2:
                seen.setdefault("switch", t2)
            elif name2 == "sys_exit" and pid2 != pid and rest2.startswith(f"NR {SIGTIMEDWAIT} "):
                seen["woke"] = t2
                break
            j += 1
        if len(seen) == len(PHASES):
            for a, b in zip(PHASES, PHASES[1:]):
                found[f"{a} -> {b}"].append(seen[b] - seen[a])
            found["total"].append(seen["woke"] - seen["enter"])
        i = j + 1
    return found


def main():
    events = sys.argv[1] if len(sys.argv) > 1 else "3000"
    if os.geteuid() != 0:
        sys.exit("run as root (SCHED_FIFO, tracefs)")
    if not os.path.isdir(os.path.join(TRACEFS, "instances")):
        sys.exit(f"tracefs is not mounted: mount -t tracefs nodev {TRACEFS}")
    here = os.path.dirname(os.path.abspath(__file__))
    hz = tsc_hz()
    root = os.path.dirname(here)
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "latlab-respond",
                    "--example", "pacing_probe"], check=True, cwd=root)
    probe = os.path.join(root, os.environ.get("CARGO_TARGET_DIR", "target"), "release",
                         "examples", "pacing_probe")
    runs = {}
    for label, args in [("latlab pacing", []), ("ping-pong (-P)", ["-P"])]:
        out, trace = traced(probe, ["-n", events] + args)
        print(f"{label}: {out}")
        runs[label] = phases(trace, hz, "pacing_probe")
    labels = list(runs)
    print()
    print(f"{'median us':<26}" + "".join(f"{label:>16}" for label in labels) + f"{'difference':>12}")
    for phase in runs[labels[0]]:
        medians = [statistics.median(runs[label][phase]) if runs[label][phase] else float("nan")
                   for label in labels]
        print(f"{phase:<26}" + "".join(f"{m:>16.2f}" for m in medians) + f"{medians[0] - medians[1]:>+12.2f}")
    print("sends found: " + ", ".join(f"{label} {len(runs[label]['total'])}" for label in labels))


if __name__ == "__main__":
    main()
