#!/usr/bin/env python3
"""How many of the kernel events `latlab watch` runs a BPF program for fall
inside each cyclictest wake-up, by how late the wake-up is (issue 16: why
watch costs the p99 more than the median).

Records `cyclictest -m -p95 -i1000` for S seconds with `latlab record`
(tracefs: the very tracepoints watch attaches to, plus hrtimer_start for the
intended expiry), prints the trace with `latlab dump`, and for every wake-up
of cyclictest's measuring thread counts the events on its CPU from the
timer's expiry to the switch to the thread: the hrtimer callbacks of the
interrupt (all callbacks of one interrupt share its clock read, `now`), the
wake-up, the softirqs, other tasks' switches and wake-ups, interrupts. Under
watch each of them runs a program first. Prints, per latency band, the
wake-ups in it, the mean time from the expiry to the timer interrupt (its
clock read), and the mean events per wake-up by kind: as many programs
run on that wake-up's path under watch (what each costs there:
bench/watch-path-cost.sh).

    bench/watch-window-events.py [--seconds S]

The latency here is the trace's: expiry to the switch (tracefs costs the
traced run too, so the bands are a little later than cyclictest's own).
Root; needs cyclictest (rt-tests)."""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The tracepoints watch attaches a program to (crates/latlab-watch/src/loader/mod.rs),
# and hrtimer_start, which gives the intended expiry.
EVENTS = ",".join([
    "timer:hrtimer_start", "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit",
    "sched:sched_waking", "sched:sched_switch",
    "irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry", "irq:softirq_exit",
    "irq_vectors:reschedule_entry", "irq_vectors:reschedule_exit",
    "irq_vectors:call_function_entry", "irq_vectors:call_function_exit",
    "irq_vectors:call_function_single_entry", "irq_vectors:call_function_single_exit",
    "irq_vectors:irq_work_entry", "irq_vectors:irq_work_exit",
])
WATCHED = {e.split(":")[1] for e in EVENTS.split(",")} - {"hrtimer_start"}

LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\w+):\s+(.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")
# trace-cmd's form of sched_switch: "prev:pid [prio] S ==> next:pid [prio]".
SWITCH_NEXT = re.compile(r"==> .*:(\d+) \[-?\d+\]")
BANDS = [(0, 20), (20, 30), (30, 40), (40, 50), (50, 80), (80, 10**9)]


def kind(name):
    """A short family name for an event."""
    if name.startswith("hrtimer"):
        return "hrtimer"
    if name.startswith("softirq"):
        return "softirq"
    if name.startswith("irq_handler"):
        return "irq"
    if name in ("sched_switch", "sched_waking"):
        return name[6:]
    return "vector"


def wakeups(lines):
    """Yields (latency us, expiry to the interrupt us, {kind: events}) for
    every wake-up of the measuring thread (the hrtimer_wakeup timer that
    cyclictest's SCHED_FIFO thread arms)."""
    expires = {}          # timer address -> soft expiry (ns), armed by cyclictest
    first_now = {}        # cpu -> (now of the interrupt, ts of its first callback)
    pending = {}          # cpu -> (expiry to irq ns, latency so far ns, ts of the callback, events, target pid)
    recent = {}           # cpu -> the last events (ts, kind), for the ones before the interrupt
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, cpu, ts, name, rest = m.groups()
        cpu, ts = int(cpu), float(ts)
        f = dict(FIELD.findall(rest))
        if name == "hrtimer_start":
            if comm.startswith("cyclictest") and f.get("function", "").startswith("hrtimer_wakeup"):
                soft = f.get("softexpires") or f.get("expires")
                if soft:
                    expires[f["hrtimer"]] = (int(soft), int(pid))
            continue
        if name not in WATCHED:
            continue
        k = kind(name)
        recent.setdefault(cpu, []).append((ts, k))
        if len(recent[cpu]) > 64:
            del recent[cpu][:32]
        if name == "hrtimer_expire_entry":
            now = int(f.get("now", "0"))
            if first_now.get(cpu, (None,))[0] != now:
                first_now[cpu] = (now, ts)
            timer = f.get("hrtimer")
            if timer in expires:
                soft, target = expires.pop(timer)
                _, first_ts = first_now[cpu]
                irq_ns = max(now - soft, 0)
                # Events from the expiry on: the interrupt's callbacks and
                # whatever ran on the CPU between the expiry and the interrupt.
                before = [kk for t, kk in recent[cpu] if first_ts - irq_ns / 1e9 <= t <= ts]
                counts = {}
                for kk in before:
                    counts[kk] = counts.get(kk, 0) + 1
                pending[cpu] = (irq_ns, irq_ns + (ts - first_ts) * 1e9, ts, counts, target)
            continue
        if cpu in pending:
            irq_ns, lat_ns, at, counts, target = pending[cpu]
            counts[k] = counts.get(k, 0) + 1
            nxt = SWITCH_NEXT.search(rest) if name == "sched_switch" else None
            if nxt and int(nxt.group(1)) == target:
                del pending[cpu]
                yield (lat_ns + (ts - at) * 1e9) / 1000.0, irq_ns / 1000.0, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--latlab", default=os.environ.get("LATLAB", os.path.join(ROOT, "target/release/latlab")))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: tracefs and SCHED_FIFO need it")
    with tempfile.TemporaryDirectory(prefix="latlab-window-events.") as work:
        dat = os.path.join(work, "ct.dat")
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.uname().release}, "
              f"{os.cpu_count()} CPUs; load average: {' '.join(open('/proc/loadavg').read().split()[:3])}")
        print(f"latlab record of cyclictest -m -p95 -i1000 for {args.seconds:g} s")
        subprocess.run([args.latlab, "record", "-o", dat, "-e", EVENTS, "--",
                        "cyclictest", "-m", "-p95", "-i1000", "-q", f"-D{int(args.seconds)}"],
                       check=True, stdout=subprocess.DEVNULL)
        dump = subprocess.Popen([args.latlab, "dump", dat], stdout=subprocess.PIPE, text=True)
        rows = list(wakeups(dump.stdout))
        dump.wait()
    if not rows:
        sys.exit("no cyclictest wake-ups found in the trace")
    kinds = ["hrtimer", "waking", "switch", "softirq", "irq", "vector"]
    print(f"{len(rows)} wake-ups; events on the thread's CPU from the timer's expiry to the switch to it")
    print(f"{'latency':>10} {'share':>7} {'to irq':>7} {'events':>7} " + " ".join(f"{k:>8}" for k in kinds))
    for lo, hi in BANDS:
        band = [c for lat, _, c in rows if lo <= lat < hi]
        irq = [i for lat, i, _ in rows if lo <= lat < hi]
        if not band:
            continue
        mean = {k: sum(c.get(k, 0) for c in band) / len(band) for k in kinds}
        total = sum(mean.values())
        label = f"{lo}-{hi} us" if hi < 10**9 else f">= {lo} us"
        print(f"{label:>10} {100 * len(band) / len(rows):6.2f}% {sum(irq) / len(irq):5.1f}us {total:7.1f} "
              + " ".join(f"{mean[k]:8.1f}" for k in kinds))


if __name__ == "__main__":
    main()
