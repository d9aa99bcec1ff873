#!/usr/bin/env bash
# What each of the two reads of kernel memory on a timer wake-up's path
# costs in place, read with plain loads (bpf_rdonly_cast(), what watch
# attaches on kernels 6.2+) and with bpf_probe_read_kernel() (the _probe
# twins, kernels before 6.2). An experiment, not a feature: builds latlab
# twice in a temporary worktree of HEAD with bench/watch-read-cost.patch
# applied to the BPF source (each read timed by clock reads around it, into
# a per-CPU map), the second time with the programs' reads switched to the
# probe twins' way, then watches cyclictest -m -p95 -i1000 with each build
# for SECONDS, ROUNDS times alternately, and prints the mean time of each
# read. Each figure includes one clock read (bpf_ktime_get_ns()); the
# script prints a clock read's own time beside them. The patch is against
# the BPF source of the commit that added it; git apply says so when the
# source has moved on.
#
# Usage (as root): bench/watch-read-cost.sh [SECONDS] [ROUNDS]
set -euo pipefail
SECS=${1:-15}
ROUNDS=${2:-2}
# shellcheck source=bench/patched-tree.sh
source "$(dirname "$0")/patched-tree.sh" read-cost
target=$here/target/read-cost
build() { # $1: name of the binary kept
    (cd "$tree" && scripts/bpf.sh >/dev/null && CARGO_TARGET_DIR=$target cargo build --release -q -p latlab)
    cp "$target/release/latlab" "$tree/latlab-$1"
}
(cd "$tree" && git apply "$here/bench/watch-read-cost.patch")
build loads
# The probe twins' reads in the programs watch attaches.
sed -i 's/return hrtimer_entry(timer, now, 1);/return hrtimer_entry(timer, now, 0);/; s/return waking(p, 1);/return waking(p, 0);/' \
    "$tree/crates/latlab-watch/bpf/watch.bpf.c"
grep -q 'return waking(p, 0);' "$tree/crates/latlab-watch/bpf/watch.bpf.c" || { echo "the source has moved on: no waking(p, 1) to switch" >&2; exit 1; }
build probes

one() { # $1: loads or probes
    cyclictest -m -p95 -i1000 -q -D$((SECS + 10)) >/dev/null &
    ct=$!
    sleep 0.5
    "$tree/latlab-$1" watch --pid "$ct" --threshold 100us --interval 1m --no-history --quiet >/dev/null 2>"$tree/watch.err" &
    w=$!
    sleep $((SECS + 2))
    kill -0 "$w" 2>/dev/null || { cat "$tree/watch.err" >&2; exit 1; }
    id=$(bpftool map show -j | jq '[.[] | select(.name == "read_cost")][0].id')
    bpftool map dump id "$id" -j >"$tree/read_cost.json"
    kill -INT "$w"; wait "$w" || true; w=''
    kill "$ct" 2>/dev/null; wait "$ct" 2>/dev/null || true; ct=''
    python3 - "$tree/read_cost.json" "$1" <<'PY'
import json, sys
total = {}
for r in json.load(open(sys.argv[1])):
    f = r["formatted"]
    total[f["key"]] = sum(v["value"] for v in f["values"])
n_clock, n_base = max(total.get(1, 0), 1), max(total.get(3, 0), 1)
print(f"{sys.argv[2]:>7}: interrupt's clock read {total.get(0, 0) / n_clock:5.0f} ns ({total.get(1, 0)} reads),"
      f" clock base's callback {total.get(2, 0) / n_base:5.0f} ns ({total.get(3, 0)} reads);"
      f" a clock read alone {total.get(4, 0) / n_clock:4.0f} ns")
PY
}
machine_line
echo "latlab watch (HEAD $(git -C "$here" rev-parse --short HEAD) + bench/watch-read-cost.patch) on cyclictest -m -p95 -i1000, $SECS s a run"
for _ in $(seq "$ROUNDS"); do
    one loads
    one probes
done
