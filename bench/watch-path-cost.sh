#!/usr/bin/env bash
# The time `latlab watch`'s BPF programs take on each watched wake-up's own
# path, by how late the wake-up is (issue 16: why watch costs cyclictest's
# p99 more than its median). An experiment, not a feature: builds latlab in
# a temporary worktree of HEAD with bench/watch-path-cost.patch applied to
# the BPF source (each program adds its own run time, from its first clock
# read to its end, to a per-CPU sum that the interrupt's first callback
# resets; the switch to a watched task adds the sum to a map by 5 µs
# latency band), watches cyclictest -m -p95 -i1000 with it for SECONDS and
# prints, per band: the share of wake-ups, their mean latency (watch's
# thread latency) and the programs' mean time on their path. A lower bound:
# the time from the tracepoint to each program's first clock read is not in
# it. The patch is against the BPF source of the commit that added it; git
# apply says so when the source has moved on.
#
# Usage (as root): bench/watch-path-cost.sh [SECONDS]
#   WATCH_ARGS="..." (default --threshold 100us): watch's options
set -euo pipefail
SECS=${1:-30}
# shellcheck source=bench/patched-tree.sh
source "$(dirname "$0")/patched-tree.sh" path-cost
(cd "$tree" && git apply "$here/bench/watch-path-cost.patch" && scripts/bpf.sh >/dev/null &&
    CARGO_TARGET_DIR="$here/target/path-cost" cargo build --release -q -p latlab)
latlab=$here/target/path-cost/release/latlab
machine_line
echo "latlab watch (HEAD $(git -C "$here" rev-parse --short HEAD) + bench/watch-path-cost.patch) ${WATCH_ARGS:---threshold 100us} on cyclictest -m -p95 -i1000, $SECS s"
cyclictest -m -p95 -i1000 -q -D$((SECS + 10)) >/dev/null &
ct=$!
sleep 0.5
# shellcheck disable=SC2086
"$latlab" watch --pid "$ct" ${WATCH_ARGS:---threshold 100us} --interval 1m --no-history --quiet >/dev/null 2>"$tree/watch.err" &
w=$!
sleep $((SECS + 2))
kill -0 "$w" 2>/dev/null || { cat "$tree/watch.err" >&2; exit 1; }
id=$(bpftool map show -j | jq '[.[] | select(.name == "path_cost")][0].id')
bpftool map dump id "$id" -j >"$tree/path_cost.json"
python3 - "$tree/path_cost.json" <<'PY'
import json, sys
rows = [r["formatted"] for r in json.load(open(sys.argv[1]))]
total = sum(r["value"]["n"] for r in rows)
print(f"{total} wake-ups")
print(f"{'latency':>11} {'share':>8} {'mean':>8} {'programs on the path':>21}")
for r in rows:
    v, band = r["value"], r["key"]
    if v["n"] and 100 * v["n"] / total >= 0.05:
        label = f"{band * 5}-{band * 5 + 5} us" if band < 63 else ">= 315 us"
        print(f"{label:>11} {100 * v['n'] / total:7.3f}% {v['lat_ns'] / v['n'] / 1000:6.1f}us"
              f" {v['prog_ns'] / v['n']:17.0f} ns")
PY
