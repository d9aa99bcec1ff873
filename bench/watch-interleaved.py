#!/usr/bin/env python3
"""Overhead of `latlab watch` on one cyclictest run, watch switched on and off
every few seconds (issue 16: "cyclictest's p99 with and without watch running,
side by side in one run").

    bench/watch-interleaved.py [--phases N] [--seconds S] [--watch-args "..."] [--save FILE]
    bench/watch-interleaved.py --toggle [--phases N] [--seconds S] [--save FILE]
    bench/watch-interleaved.py --pool FILE... [--block K]

One `cyclictest -m -p95 -i1000 -v` runs for the whole bench and prints every
sample with its cycle number. Meanwhile this script alternates an "alone"
phase (no watch) and a "watched" phase (`latlab watch --pid <cyclictest>`), S
seconds each, N times. A sample belongs to a phase by its cycle number (cycle
k is the k-th period of the 1 ms timer), with margins around every switch:
watch's start (BPF loading, verifying) and exit are never counted.

Why not separate runs (bench/watch-overhead.sh): on a shared VM the host
moves cyclictest's p99 by a factor of 2-6 from one 15 s run to the next, so
run-to-run ratios need hundreds of pairs to resolve 5 %. Short alternating
phases of the same run see the same host drift on both sides.

Prints the pooled p50-p99.9 of each side, their ratio watched/alone with a
95 % bootstrap interval over phase pairs, how many samples of each side are
over 30, 40, 50, 80 and 100 us (where watch shifts the distribution and
where the host's noise takes over), the p95-p99 again read within their
1 us bucket ("in bucket": cyclictest prints whole microseconds, so a 35 us
p99 moves in 3 % steps), the shift of the mean of the samples under 100 us
(a screen that resolves a fraction of a microsecond in a few minutes, not
the goal's figure), and the same ratios for an A/A split
(alone phases 1, 3, 5, ... against 2, 4, 6, ...): the resolution the method
had on this run. A ratio whose interval is above 1.05 fails the goal;
one whose interval is below it meets it; the A/A line says how far to trust
either. --save keeps the phase pairs' histograms, and --pool reports several
saved runs together (more pairs, a narrower interval).

--toggle: one watch for the whole bench (crates/latlab-watch/examples/
watch_toggle.rs: `latlab watch --pid`'s session, threshold 100 us), whose
BPF programs are detached for the "alone" phases and attached again for the
"watched" ones (under a millisecond each way), so that phases can be a
second long and many: the host's slower drifts fall on both sides alike.
What it compares is the programs (watch's process runs in both phases, and
its start is in neither); the order within each pair is random. With
--only, only the programs named are detached: "alone" is then watch
without them, and the ratio what they add. The
bootstrap resamples blocks of K consecutive pairs (--block; by default as
many as make 10 s), since neighbouring phases share the host's noise.
Needs root, cyclictest (rt-tests) and stdbuf (coreutils)."""
import argparse
import json
import os
import random
import shlex
import signal
import subprocess
import tempfile
import sys
import threading
import time

from pooled import interpolated, mean_shift, percentile, pooled_ratio

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Samples within these many cycles (1 ms each) after a switch are not
# counted: watch loading and attaching, or exiting and detaching.
MARGIN_AFTER_START = 1500
MARGIN_AFTER_STOP = 500
# With --toggle: cycles left out after the programs were detached or
# attached (the switch itself takes under a millisecond).
MARGIN_AFTER_TOGGLE = 50


class Samples:
    """cyclictest's verbose lines (`thread: cycle: latency`), read as they
    come; `latest` is the highest cycle seen so far."""

    def __init__(self, stream):
        self.values = {}  # cycle -> latency (us), thread 0
        self.latest = -1
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for line in stream:
            parts = line.split(":")
            if len(parts) != 3:
                continue
            try:
                thread, cycle, value = (int(p) for p in parts)
            except ValueError:
                continue
            if thread != 0:
                continue
            with self.lock:
                self.values[cycle] = value
                self.latest = max(self.latest, cycle)

    def now(self):
        with self.lock:
            return self.latest

    def wait_for(self, cycle, timeout):
        end = time.monotonic() + timeout
        while self.now() < cycle:
            if time.monotonic() > end:
                sys.exit(f"cyclictest stopped printing samples (at cycle {self.now()})")
            time.sleep(0.05)


def histogram(samples, first, last):
    """Latency (us) -> count over cycles [first, last]."""
    h = {}
    for c in range(first, last + 1):
        v = samples.values.get(c)
        if v is not None:
            h[v] = h.get(v, 0) + 1
    return h


def ratio_line(label, a_name, b_name, pairs, p, rng, at=percentile):
    a, b, low, high = pooled_ratio(pairs, p, rng, at=at)
    a, b = (f"{a:>5}", f"{b:>5}") if at is percentile else (f"{a:5.1f}", f"{b:5.1f}")
    return (f"{label} p{p:<5g} {a_name} {a} us  {b_name} {b} us  ratio {float(b) / float(a):.3f}"
            f"  (95 % interval {low:.3f}..{high:.3f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phases", type=int, default=30, help="alone/watched phase pairs (default 30)")
    ap.add_argument("--seconds", type=float, default=10, help="length of each phase (default 10)")
    ap.add_argument("--watch-args", default="--threshold 100us",
                    help="watch's options (default: --threshold 100us)")
    ap.add_argument("--latlab", default=os.environ.get("LATLAB", os.path.join(ROOT, "target/release/latlab")))
    ap.add_argument("--save", metavar="FILE",
                    help="also write every phase pair's two histograms (JSON) to FILE, for --pool")
    ap.add_argument("--pool", nargs="+", metavar="FILE",
                    help="run nothing: report the phase pairs of these --save files together")
    ap.add_argument("--toggle", action="store_true",
                    help="one watch whose programs are detached and attached (see above)")
    ap.add_argument("--only", default="",
                    help="with --toggle: detach and attach only these programs (comma-separated "
                         "names, crates/latlab-watch/src/loader/mod.rs): what they add to the others")
    ap.add_argument("--block", type=int, default=0,
                    help="pairs per bootstrap block (default: 10 s worth with --toggle, else 1)")
    args = ap.parse_args()
    if args.pool:
        pairs = []
        for path in args.pool:
            with open(path) as f:
                pairs += [tuple({int(k): n for k, n in h.items()} for h in pair) for pair in json.load(f)]
        print(f"pooled from {len(args.pool)} saved runs: {', '.join(args.pool)}")
        report(pairs, max(args.block, 1))
        return
    block = args.block or (max(1, round(10 / args.seconds)) if args.toggle else 1)
    if os.geteuid() != 0:
        sys.exit("run as root: BPF and SCHED_FIFO need it")
    if not os.access(args.latlab, os.X_OK):
        subprocess.run(["cargo", "build", "--release", "-p", "latlab"], cwd=ROOT, check=True)

    phase_cycles = int(args.seconds * 1000)
    # Every phase plus its margin, the watch start-ups, and slack.
    total_s = int(args.phases * 2 * (args.seconds + (0.5 if args.toggle else 4)) + 30)
    load = open("/proc/loadavg").read().split()[:3]
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.uname().release}, "
          f"{os.cpu_count()} CPUs; load average: {' '.join(load)}")
    which = f"its programs {args.only}" if args.only else "its programs"
    how = (f"one watch_toggle --pid (threshold 100 us), {which} detached and attached"
           if args.toggle else f"watch started and stopped ({args.watch_args})")
    print(f"one cyclictest -m -p95 -i1000 run; {args.phases} phase pairs of {args.seconds:g} s "
          f"alone and {args.seconds:g} s watched, {how}")
    ct = subprocess.Popen(["stdbuf", "-oL", "cyclictest", "-m", "-p95", "-i1000", "-v", "-q",
                           f"-D{total_s}"], stdout=subprocess.PIPE, text=True, bufsize=1)
    samples = Samples(ct.stdout)
    if args.toggle:
        try:
            pairs = toggled(args, ct, samples, phase_cycles)
        finally:
            ct.send_signal(signal.SIGINT)
            ct.wait(timeout=30)
        finish(args, pairs, block)
        return
    watch = None
    pairs = []
    work = tempfile.TemporaryDirectory(prefix="latlab-interleaved.")
    result = os.path.join(work.name, "watch.json")
    try:
        samples.wait_for(1000, 30)
        for i in range(args.phases):
            # Alone: from now (watch, if any, has exited) for S seconds.
            first = samples.now() + MARGIN_AFTER_STOP
            samples.wait_for(first + phase_cycles, 4 * args.seconds + 30)
            alone = (first, first + phase_cycles - 1)
            # Watched: start watch, let it load and attach, then S seconds.
            start_seen = samples.now()
            watch = subprocess.Popen(
                [args.latlab, "watch", "--pid", str(ct.pid), *shlex.split(args.watch_args),
                 "--interval", "1m", "--no-history", "--quiet", "--json", result],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            first = start_seen + MARGIN_AFTER_START
            samples.wait_for(first + phase_cycles, 4 * args.seconds + 30)
            if watch.poll() is not None:
                sys.exit(f"watch exited early: {watch.stderr.read()}")
            watched = (first, first + phase_cycles - 1)
            watch.send_signal(signal.SIGINT)
            _, err = watch.communicate(timeout=60)
            if watch.returncode != 0:
                sys.exit(f"watch failed ({watch.returncode}): {err}")
            watch = None
            # Watch saw cyclictest's wake-ups (about one per cycle it ran).
            with open(result) as f:
                measured = json.load(f)["overall"]["latency"]["count"]
            pairs.append((histogram(samples, *alone), histogram(samples, *watched)))
            a, w = pairs[-1]
            print(f"pair {i + 1:>3}: alone p99 {percentile([a], 99):>5} us, "
                  f"watched p99 {percentile([w], 99):>5} us "
                  f"(watch measured {measured} wake-ups)", flush=True)
    finally:
        if watch is not None and watch.poll() is None:
            watch.send_signal(signal.SIGINT)
            watch.wait(timeout=60)
        ct.send_signal(signal.SIGINT)
        ct.wait(timeout=30)

    finish(args, pairs, block)


def toggled(args, ct, samples, phase_cycles):
    """The phase pairs of --toggle: one watch_toggle, told `off` and `on`."""
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "latlab-watch",
                    "--example", "watch_toggle"], cwd=ROOT, check=True)
    tool = os.path.join(ROOT, "target/release/examples/watch_toggle")
    samples.wait_for(1000, 30)
    watch = subprocess.Popen([tool, str(ct.pid), "100us", *([args.only] if args.only else [])], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, bufsize=1)
    order = random.Random(9)
    switch_us = []

    def phase(word):
        watch.stdin.write(word + "\n")
        answer = watch.stdout.readline().split()
        if not answer or answer[0] != word:
            sys.exit(f"watch_toggle answered {answer!r} to {word!r}")
        switch_us.append(int(answer[1]))
        first = samples.now() + MARGIN_AFTER_TOGGLE
        samples.wait_for(first + phase_cycles, 4 * args.seconds + 30)
        return (first, first + phase_cycles - 1)

    pairs = []
    try:
        if watch.stdout.readline().strip() != "ready":
            sys.exit("watch_toggle did not start")
        for i in range(args.phases):
            if order.random() < 0.5:
                alone = phase("off")
                watched = phase("on")
            else:
                watched = phase("on")
                alone = phase("off")
            pairs.append((histogram(samples, *alone), histogram(samples, *watched)))
            if (i + 1) % 100 == 0:
                print(f"{i + 1} pairs", flush=True)
    finally:
        watch.stdin.close()
        tail = watch.stdout.read().split()
        watch.wait(timeout=60)
    switch_us.sort()
    print(f"watch_toggle measured {tail[-1] if tail else '?'} wake-ups; detaching or attaching "
          f"took {switch_us[len(switch_us) // 2]} us (median), {switch_us[-1]} us at most")
    return pairs


def finish(args, pairs, block):
    """Saves the pairs (--save) and reports them in bootstrap blocks."""
    if args.save:
        with open(args.save, "w") as f:
            json.dump(pairs, f)
    report(pairs, block)
    print(f"load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")


def blocks(pairs, k):
    """Consecutive pairs merged k at a time: the unit the bootstrap resamples
    (at least two blocks)."""
    k = min(k, len(pairs) // 2)
    if k <= 1:
        return pairs
    merged = []
    for i in range(0, len(pairs) - k + 1, k):
        a, b = {}, {}
        for x, y in pairs[i:i + k]:
            for h, into in ((x, a), (y, b)):
                for v, n in h.items():
                    into[v] = into.get(v, 0) + n
        merged.append((a, b))
    print(f"bootstrap blocks: {len(merged)} of {k} phase pairs each")
    return merged


def report(pairs, block):
    """The pooled percentiles of both sides, their ratios, the share of
    samples over a few latencies, and the A/A lines (adjacent alone phases,
    alone phases 1, 3, 5, ... against 2, 4, 6, ...): all bootstrapped in
    blocks of `block` pairs."""
    rng = random.Random(16)
    merged = blocks(pairs, block)
    print(f"pooled over {len(pairs)} phase pairs, {sum(sum(a.values()) for a, _ in pairs)} "
          f"samples alone and {sum(sum(w.values()) for _, w in pairs)} watched:")
    for p in (50, 75, 90, 95, 97, 98, 99, 99.5, 99.9):
        print(ratio_line("watched/alone", "alone", "watched", merged, p, rng))
    print("samples at or over:", "; ".join(
        f"{t} us {over(merged, 0, t)} alone, {over(merged, 1, t)} watched"
        f" ({over(merged, 1, t) / max(over(merged, 0, t), 1):.2f}x)" for t in (30, 40, 50, 80, 100)))
    for p in (95, 98, 99):
        print(ratio_line("in bucket    ", "alone", "watched", merged, p, rng, interpolated))
    a, w, low, high = mean_shift(merged, 100, rng)
    print(f"mean under 100 us: alone {a:.3f} us, watched {w:.3f} us, shift {w - a:+.3f} us"
          f"  (95 % interval {low:+.3f}..{high:+.3f})")
    aa = blocks([(pairs[i][0], pairs[i + 1][0]) for i in range(0, len(pairs) - 1, 2)],
                max(block // 2, 1))
    for p in (50, 90, 99, 99.9):
        print(ratio_line("A/A (alone)  ", "odd  ", "even   ", aa, p, rng))


def over(pairs, side, threshold):
    """Samples of one side (0 alone, 1 watched) at or over `threshold` us."""
    return sum(n for pair in pairs for v, n in pair[side].items() if v >= threshold)


if __name__ == "__main__":
    main()
