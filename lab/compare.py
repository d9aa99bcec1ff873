#!/usr/bin/env python3
"""Checks a latlab run's intended wake-up times against the expiries the
kernel armed for its timer, in the kernel trace of the same run.

    lab/compare.py [--latlab BIN] [--function NAME] TRACE.dat SAMPLES.bin

TRACE.dat is the run's --trace (trace_clock=mono, so trace expiries are
CLOCK_MONOTONIC ns like latlab's), SAMPLES.bin its --samples. The armed
expiries are the `expires=` of every hrtimer_start of the timer's callback
(default, by the trace: rtc_pie_update_irq, it_real_fn or posix_timer_fn).
For every sample: how far the next armed expiry lies after its intended
time. latlab's intended times may be early by the arming call's duration
(a timer armed relative to the kernel's own clock read: rtc, itimer), never
late, so every sample should show the same offset, and the first sample
should answer the first expiry of the arming in effect (the last
hrtimer_start before the first expiry not cancelled before the first
wake-up): together, each intended time is its own armed expiry minus that
offset, not another one's.

Exit status 0 when so (samples latlab flagged uncertain, an itimer
allowance, are counted apart), 1 otherwise.
"""
import argparse
import bisect
import collections
import re
import struct
import subprocess
import sys

SAME_NS = 1_000
FUNCTIONS = ("rtc_pie_update_irq", "it_real_fn", "posix_timer_fn")
EARLY, UNCERTAIN = 4, 8


def stamp(line):
    """A dump line's timestamp, ns."""
    return round(float(re.search(r"\]\s+(\d+\.\d+):", line).group(1)) * 1e9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latlab", default="latlab", help="latlab binary for `latlab dump`")
    ap.add_argument("--function", help="the timer's callback (default: guessed)")
    ap.add_argument("trace")
    ap.add_argument("samples")
    a = ap.parse_args()

    dump = subprocess.run(
        [a.latlab, "dump", "--events", "hrtimer_start,hrtimer_cancel,hrtimer_expire_entry", a.trace],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    func = a.function
    if not func:
        counts = collections.Counter(f for line in dump for f in FUNCTIONS if f"function={f}" in line)
        if not counts:
            sys.exit(f"no hrtimer of {', '.join(FUNCTIONS)} in {a.trace}: give --function")
        func = counts.most_common(1)[0][0]
    timer = None
    armed, arming, expired, events = [], [], False, []
    for line in dump:
        if f"function={func}" in line and "hrtimer_start" in line:
            timer = re.search(r"hrtimer=(\S+)", line).group(1)
            armed.append(int(re.search(r" expires=(\d+)", line).group(1)))
            events.append(("start", stamp(line), armed[-1]))
        elif "hrtimer_expire_entry" in line and f"function={func}" in line:
            expired = True
            events.append(("expire", stamp(line), None))
        elif timer and "hrtimer_cancel" in line and f"hrtimer={timer}" in line:
            events.append(("cancel", stamp(line), None))
        if not expired and timer and f"hrtimer={timer}" in line:
            arming.append(line.strip())
    armed.sort()
    data = open(a.samples, "rb").read()
    samples = list(struct.iter_unpack("<QIHH", data[16:]))
    print(f"{a.samples}: {len(samples)} samples; {a.trace}: {len(armed)} armed expiries of {func}")
    print("arming, up to the first expiry:")
    for line in arming[:12]:
        print("   ", re.sub(r"\s+", " ", line))
    if len(arming) > 12:
        print(f"    ... {len(arming) - 12} more")

    early = sum(1 for smp in samples if smp[3] & EARLY)
    offsets = []
    for intended, *_ in samples:
        i = bisect.bisect_left(armed, intended)
        offsets.append(armed[i] - intended if i < len(armed) else None)
    known = sorted(o for o in offsets if o is not None)
    if not known:
        print("no armed expiry at or after any intended time")
        return 1
    median = known[len(known) // 2]
    uncertain = sum(1 for smp in samples if smp[3] & UNCERTAIN)
    odd = [
        (n, o)
        for n, o in enumerate(offsets)
        if not samples[n][3] & UNCERTAIN and (o is None or abs(o - median) > SAME_NS)
    ]
    intended0, latency0, _, flags0 = samples[0]
    woke0 = intended0 - latency0 if flags0 & EARLY else intended0 + latency0
    first = None
    for n, (kind, t, _) in enumerate(events):
        if kind != "expire":
            continue
        if any(k == "cancel" and t < u < woke0 for k, u, _ in events[n:]):
            continue  # that arming was switched off again
        starts = [e for k, u, e in events[:n] if k == "start"]
        first = starts[-1] if starts else None
        break
    first_ok = first is not None and intended0 + (offsets[0] or 0) == first
    print(
        f"next armed expiry minus intended time (ns): median {median}, min {known[0]}, max {known[-1]}; "
        f"most common {collections.Counter(known).most_common(3)}"
    )
    print(f"early wake-ups flagged by latlab: {early}")
    print(f"samples whose offset differs from the median by over {SAME_NS} ns: {len(odd)}")
    for n, o in odd[:10]:
        intended, latency, _, flags = samples[n]
        print(f"  sample {n}: intended {intended}, latency {latency} ns, flags {flags}, offset {o}")
    print(f"samples latlab flagged uncertain (not judged): {uncertain}")
    print(
        f"the first sample answers the first expiry of the arming in effect ({first}): "
        + ("yes" if first_ok else "NO (its intended time lies past it: late, or on another expiry)")
    )
    ok = not odd and first_ok
    print("OK: every intended time is its armed expiry minus the same offset" if ok else "NOT OK")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
