#!/usr/bin/env bash
# What each of `latlab watch`'s BPF programs costs per run (issue 16), from
# the kernel's own BPF run-time statistics: cyclictest -m -p95 -i1000 runs,
# watch watches it (--pid), the statistics are switched on for SECONDS and
# `bpftool prog show` is read before and after. Prints runs and mean ns per
# program, and the programs' total time. The statistics add two clock reads
# to every run while on, and a shared VM moves these figures by about 20 %
# between runs: compare builds by alternating runs of each.
#
# Usage (as root): bench/watch-program-cost.sh [SECONDS]
#   LATLAB=path/to/latlab (default target/release/latlab, built if missing)
set -euo pipefail
SECS=${1:-10}
# shellcheck source=bench/watch-common.sh
source "$(dirname "$0")/watch-common.sh"
command -v bpftool >/dev/null || { echo "needs bpftool (apt-get install bpftool)" >&2; exit 1; }
was=$(sysctl -n kernel.bpf_stats_enabled)
restore() { sysctl -qw kernel.bpf_stats_enabled="$was"; [[ -n ${ct:-} ]] && kill "$ct" 2>/dev/null; cleanup; }
trap restore EXIT
cyclictest -m -p95 -i1000 -D$((SECS + 10)) -q >/dev/null &
ct=$!
sleep 0.5
"$LATLAB" watch --pid "$ct" --threshold 100us --interval 1m --no-history --quiet >/dev/null 2>"$work/watch.err" &
watch_pid=$!
sleep 2 # loaded and attached
sysctl -qw kernel.bpf_stats_enabled=1
bpftool prog show --json >"$work/before.json"
sleep "$SECS"
bpftool prog show --json >"$work/after.json"
sysctl -qw kernel.bpf_stats_enabled="$was"
kill -INT "$watch_pid"; wait "$watch_pid" || { cat "$work/watch.err" >&2; exit 1; }
watch_pid=
echo "$(date -u +%FT%TZ) $(uname -r); $SECS s of latlab watch on cyclictest -m -p95 -i1000, BPF statistics on"
python3 - "$work/before.json" "$work/after.json" <<'PY'
import json, sys
before = {p["id"]: p for p in json.load(open(sys.argv[1]))}
total = 0
for p in json.load(open(sys.argv[2])):
    if p.get("type") not in ("tracing", "raw_tracepoint") or p["id"] not in before:
        continue
    b = before[p["id"]]
    runs = p.get("run_cnt", 0) - b.get("run_cnt", 0)
    ns = p.get("run_time_ns", 0) - b.get("run_time_ns", 0)
    if runs:
        print(f"{p.get('name', '?'):24} {runs:9} runs {ns / runs:8.0f} ns")
        total += ns
print(f"all programs: {total / 1e6:.1f} ms")
PY
