#!/usr/bin/env python3
"""Checks a latlab run's intended wake-up times against the expiries the
kernel armed for its timer, in the kernel trace of the same run.

    lab/compare.py [--latlab BIN] [--function NAME] TRACE.dat SAMPLES.bin

TRACE.dat is the run's --trace (trace_clock=mono, so trace expiries are
CLOCK_MONOTONIC ns like latlab's), SAMPLES.bin its --samples. The armed
expiries are the `expires=` of every hrtimer_start of the timer's callback
(default by the trace: rtc_pie_update_irq, it_real_fn or posix_timer_fn).
For every sample: the armed expiry at or just after its intended time
(latlab's intended time may be a little early, never late). Printed: the
arming (the hrtimer_start/hrtimer_cancel before the first expiry), how far
each intended time lies before its armed expiry, and the samples with no
armed expiry within one µs-scale window (MATCH_NS) after their intended time.

Exit status 0 when every sample has an armed expiry 0..MATCH_NS after its
intended time, 1 otherwise.
"""
import argparse
import bisect
import collections
import re
import struct
import subprocess
import sys

MATCH_NS = 10_000  # latlab-explain's MATCH_WINDOW_NS
FUNCTIONS = ("rtc_pie_update_irq", "it_real_fn", "posix_timer_fn")
EARLY, MISSED = 4, 2


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
    armed, arming, expired = [], [], False
    for line in dump:
        if f"function={func}" in line and "hrtimer_start" in line:
            timer = re.search(r"hrtimer=(\S+)", line).group(1)
            armed.append(int(re.search(r" expires=(\d+)", line).group(1)))
        elif "hrtimer_expire_entry" in line and f"function={func}" in line:
            expired = True
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

    offsets, bad = [], []
    early = sum(1 for s in samples if s[3] & EARLY)
    for n, (intended, latency, cpu, flags) in enumerate(samples):
        i = bisect.bisect_left(armed, intended)
        if i < len(armed) and armed[i] - intended <= MATCH_NS:
            offsets.append(armed[i] - intended)
        else:
            before = intended - armed[i - 1] if i > 0 else None
            bad.append((n, intended, latency, flags, before))
    if offsets:
        offsets.sort()
        common = collections.Counter(offsets).most_common(3)
        print(
            f"armed expiry minus intended time (ns), {len(offsets)} samples: min {offsets[0]} "
            f"p50 {offsets[len(offsets) // 2]} max {offsets[-1]}; most common {common}"
        )
    print(f"early wake-ups flagged by latlab: {early}")
    print(f"samples without an armed expiry 0..{MATCH_NS} ns after their intended time: {len(bad)}")
    for n, intended, latency, flags, before in bad[:10]:
        where = f"the last armed expiry lies {before} ns before it" if before is not None else "no armed expiry before it"
        print(f"  sample {n}: intended {intended}, latency {latency} ns, flags {flags}: {where}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
