#!/usr/bin/env bash
# The built-in load in its own process (the default) against the same load
# as threads of latlab (the hidden --load-in-process, how loads ran before),
# with an unloaded run as reference; alternating rounds, side by side.
#
#   bench/load-process-vs-threads.sh [ROUNDS] [SECONDS] [LOAD] [CPUS]  (as root)
#
# Runs `latlab run` (SCHED_FIFO 95, 1 ms; on CPUS, e.g. 0 or 0,1, or on
# every CPU when not given) with --load none, LOAD in a process, and LOAD in
# threads, and prints for each run p50/p99/p99.9/max, the TLB shootdown
# IPIs the measured CPUs (all CPUs by default) took during it
# (/proc/interrupts "TLB")
# and the load's throughput (units/s summed over kinds, and TLB IPIs per
# million units: meaningful for a single kind); then the medians and the
# ratios process/threads (latency and TLB IPIs: below 1 means the process
# disturbs less; throughput: how much of the work the load still gets done). LOAD defaults to mem:2,
# the load whose munmaps shoot down TLB entries.
set -euo pipefail
ROUNDS=${1:-3}
SECS=${2:-10}
LOAD=${3:-mem:2}
CPUS=${4:-}
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root (SCHED_FIFO)" >&2; exit 1; }
cargo build --release --locked -q -p latlab
BIN=${CARGO_TARGET_DIR:-target}/release/latlab
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# TLB shootdowns received by the CPUs in $CPUS (every CPU when empty).
tlb() {
  awk -v want=",$CPUS," 'NR == 1 { for (i = 1; i <= NF; i++) cpu[i + 1] = substr($i, 4) }
    $1 == "TLB:" { s = 0
      for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) if (want == ",," || index(want, "," cpu[i] ",")) s += $i
      print s }' /proc/interrupts
}
CPU_ARGS=()
[ -n "$CPUS" ] && CPU_ARGS=(--cpus "$CPUS")
for round in $(seq 1 "$ROUNDS"); do
  for mode in none process threads; do
    case $mode in
      none) args=(--load none) ;;
      process) args=(--load "$LOAD") ;;
      threads) args=(--load "$LOAD" --load-in-process) ;;
    esac
    before=$(tlb)
    "$BIN" run --quiet --no-save --duration "${SECS}s" "${CPU_ARGS[@]}" "${args[@]}" \
      --json "$OUT/$mode-$round.json" > "$OUT/$mode-$round.txt"
    echo $(( $(tlb) - before )) > "$OUT/$mode-$round.tlb"
  done
done
python3 - "$OUT" "$ROUNDS" "$LOAD" "$CPUS" <<'PY'
import json, statistics, sys
out, rounds, load = sys.argv[1], int(sys.argv[2]), sys.argv[3]
keys = ("p50", "p99", "p99_9", "max")
modes = ("none", "process", "threads")
cols = [k.replace("_", ".") + " us" for k in keys] + ["TLB IPIs", "load/s", "IPIs/Munit"]
rows = {m: [] for m in modes}
print(f"load {load}, {rounds} rounds, measured CPUs: {sys.argv[4] or 'all'}")
print(f"{'round':>5} {'mode':>8} " + " ".join(f"{c:>10}" for c in cols))
for r in range(1, rounds + 1):
    for m in modes:
        res = json.load(open(f"{out}/{m}-{r}.json"))
        lat = res["overall"]["latency"]
        tlb = int(open(f"{out}/{m}-{r}.tlb").read())
        work = sum(k["per_second"] for k in (res.get("load") or {}).get("kinds", []))
        secs = res["load"]["duration_s"] if res.get("load") else 0
        per_unit = tlb / (work * secs / 1e6) if work * secs > 0 else 0.0
        rows[m].append([lat[k] / 1000 for k in keys] + [tlb, work, per_unit])
        print(f"{r:>5} {m:>8} " + " ".join(f"{v:>10.1f}" if i < len(keys) else f"{v:>10.3g}"
                                         for i, v in enumerate(rows[m][-1])))
med = {m: [statistics.median(x[i] for x in rows[m]) for i in range(len(cols))] for m in modes}
print()
print(f"{'median':>14} " + " ".join(f"{c:>10}" for c in cols))
for m in modes:
    print(f"{m:>14} " + " ".join(f"{v:>10.4g}" for v in med[m]))
def ratio(a, b):
    return " ".join(f"{(x / y if y else float('nan')):>10.2f}" for x, y in zip(med[a], med[b]))
print(f"{'process/threads':>14} " + ratio("process", "threads"))
print(f"{'process/none':>14} " + ratio("process", "none"))
print(f"{'threads/none':>14} " + ratio("threads", "none"))
PY
