#!/usr/bin/env bash
# Tail latency with and without a background load, alternating rounds.
#
#   bench/load-vs-none.sh [ROUNDS] [SECONDS] [LOAD]     (as root)
#
# Runs `latlab run` (all CPUs, SCHED_FIFO 95, 1 ms) with --load none and
# --load LOAD (default full), alternately, and prints p50/p99/p99.9/max of
# each run and the median ratio loaded/unloaded.
set -euo pipefail
ROUNDS=${1:-2}
SECS=${2:-10}
LOAD=${3:-full}
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root (SCHED_FIFO)" >&2; exit 1; }
cargo build --release --locked -q -p latlab
BIN=${CARGO_TARGET_DIR:-target}/release/latlab
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for load in none "$LOAD"; do
    "$BIN" run --quiet --no-save --duration "${SECS}s" --load "$load" \
      --json "$OUT/$load-$round.json" > "$OUT/$load-$round.txt"
  done
done
python3 - "$OUT" "$ROUNDS" "$LOAD" <<'PY'
import json, statistics, sys
out, rounds, load = sys.argv[1], int(sys.argv[2]), sys.argv[3]
keys = ("p50", "p99", "p99_9", "max")
rows = {"none": [], load: []}
print(f"{'round':>5} {'load':>6} " + " ".join(f"{k.replace('_', '.') + ' us':>10}" for k in keys))
for r in range(1, rounds + 1):
    for name in ("none", load):
        lat = json.load(open(f"{out}/{name}-{r}.json"))["overall"]["latency"]
        rows[name].append([lat[k] / 1000 for k in keys])
        print(f"{r:>5} {name:>6} " + " ".join(f"{v:>10.1f}" for v in rows[name][-1]))
print()
print(f"{'median':>12} " + " ".join(f"{k.replace('_', '.'):>10}" for k in keys))
for name in ("none", load):
    print(f"{name:>12} " + " ".join(f"{statistics.median(x[i] for x in rows[name]):>10.1f}" for i in range(len(keys))))
print(f"{'ratio':>12} " + " ".join(
    f"{statistics.median(x[i] for x in rows[load]) / max(statistics.median(x[i] for x in rows['none']), 1e-9):>10.2f}"
    for i in range(len(keys))))
PY
