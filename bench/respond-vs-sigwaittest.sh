#!/usr/bin/env bash
# latlab respond --channel signal vs rt-tests' sigwaittest, alternating rounds.
#
#   bench/respond-vs-sigwaittest.sh [ROUNDS] [EVENTS]     (as root; needs rt-tests)
#
# Both: two processes (sigwaittest -f), a signal sent to a process blocked in
# sigwait, SCHED_FIFO 95 receiver, both pinned to CPU 0, one event per 1 ms,
# memory locked. sigwaittest reports the sender-to-receiver latency; latlab's
# counterpart is the one-way latency. Prints each round, the medians and the
# latlab/sigwaittest ratio (goal: the emulated channel costs what the peer's
# does, ratio of medians near 1; the stimulus side is SCHED_FIFO 94 in latlab
# so the responder preempts it at once, where sigwaittest's two are equal).
set -euo pipefail
ROUNDS=${1:-3}
EVENTS=${2:-10000}
cd "$(dirname "$0")/.."
command -v sigwaittest >/dev/null || { echo "sigwaittest missing: apt-get install rt-tests" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "run as root (SCHED_FIFO)" >&2; exit 1; }
cargo build --release --locked -q
LATLAB=target/release/latlab
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

for round in $(seq 1 "$ROUNDS"); do
  sigwaittest -f -p 95 -a 0 -i 1000 -l "$EVENTS" -q --json "$OUT/sigwaittest-$round.json" > /dev/null
  "$LATLAB" respond --quiet --no-save --channel signal --responder-cpu 0 --stimulus-cpu 0 \
    --gap 1ms --count "$EVENTS" --json "$OUT/latlab-$round.json" > /dev/null 2>&1 || [ $? -eq 2 ]
done

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = {"sigwaittest": [], "latlab": []}
print(f"{'round':>5} {'tool':>12} {'samples':>8} {'min us':>7} {'avg us':>7} {'max us':>7}")
for r in range(1, rounds + 1):
    s = json.load(open(f"{out}/sigwaittest-{r}.json"))["thread"]["0"]
    rec = s["receiver"]
    rows["sigwaittest"].append((s["sender"]["samples"], rec["min"], rec["avg"], rec["max"]))
    l = json.load(open(f"{out}/latlab-{r}.json"))["one_way"]["latency"]
    rows["latlab"].append((l["count"], l["min"] / 1e3, l["mean"] / 1e3, l["max"] / 1e3))
    for tool in rows:
        n, lo, avg, hi = rows[tool][-1]
        print(f"{r:>5} {tool:>12} {n:>8} {lo:>7.1f} {avg:>7.1f} {hi:>7.1f}")
med = {t: [statistics.median(v[i] for v in rows[t]) for i in (1, 2, 3)] for t in rows}
print()
print(f"{'median':>18} {'min us':>7} {'avg us':>7} {'max us':>7}")
for tool in rows:
    print(f"{tool:>18} " + " ".join(f"{x:>7.1f}" for x in med[tool]))
ratio = [l / s if s else float("nan") for l, s in zip(med["latlab"], med["sigwaittest"])]
print(f"{'latlab/sigwaittest':>18} " + " ".join(f"{x:>7.2f}" for x in ratio))
PY
