#!/usr/bin/env python3
"""Checks `latlab explain`'s timer callbacks against an independent view.

Usage: explain-callback-windows.py REPORT.json TRACE.txt [FUNCTION]

REPORT.json is `latlab explain TRACE --json REPORT.json --max-windows N`
(N at least the late count, so every late window is in it); TRACE.txt is
`trace-cmd report -t TRACE` (or `latlab dump TRACE`) of the same trace.
Prints, per callback function, how many late windows show one of its
`hrtimer_expire_entry` events on the window's CPU or timer CPU between the
intended time and the switch-in, and, for FUNCTION, the late windows
explain gave a `timer_callback` cause of it.
"""
import collections
import json
import re
import sys

report, text = sys.argv[1], sys.argv[2]
function = sys.argv[3] if len(sys.argv) > 3 else None
r = json.load(open(report))
windows = r["windows"]
if len(windows) < r["late"]:
    sys.exit(f"{report} has {len(windows)} of {r['late']} late windows: use --max-windows")
line = re.compile(r"\[(\d+)\]\s+(\d+)\.(\d+):\s+hrtimer_expire_entry:\s+(.*)")
expiries = collections.defaultdict(list)  # cpu -> [(ns, function)]
for l in open(text, errors="replace"):
    m = line.search(l)
    if not m:
        continue
    ns = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")[:9])
    f = re.search(r"function=([^ /]+)", m.group(4))
    expiries[int(m.group(1))].append((ns, f.group(1) if f else "?"))
counts = collections.Counter()
for w in windows:
    seen = set()
    for cpu in {w["cpu"], w["timer_cpu"]}:
        seen |= {f for ns, f in expiries[cpu] if w["start_ns"] <= ns <= w["end_ns"]}
    counts.update(seen)
print(f"{len(windows)} late windows; those showing an expiry of each callback:")
for f, n in counts.most_common():
    print(f"  {n:6d}  {f}")
if function:
    rows = [c for c in r["causes"] if c["cause"].get("function") == function]
    for c in rows:
        print(f"explain: {c['description'][:60]}... in {c['late_windows']} late windows")
    if not rows:
        print(f"explain: no timer_callback cause for {function}")
