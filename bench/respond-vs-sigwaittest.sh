#!/usr/bin/env bash
# latlab respond --channel signal vs rt-tests' sigwaittest, alternating rounds.
#
#   bench/respond-vs-sigwaittest.sh [ROUNDS] [EVENTS]     (as root; needs rt-tests)
#
# Both: two processes (sigwaittest -f), a signal sent to a process blocked in
# sigwait, SCHED_FIFO 95 receiver, both pinned to CPU 0, memory locked.
# sigwaittest reports the sender-to-receiver latency; latlab's counterpart is
# the one-way latency. Prints each round, the medians and the ratios.
#
# The two pace their events differently, and that alone moves the mean:
# sigwaittest's receiver sleeps the interval and then signals the sender,
# which sends the measured signal at once, so the receiver ran a few µs
# before each measured wake-up and its caches and TLB are warm. latlab's
# stimulus is paced by its own timer, like an external event, so the
# responder has slept the whole gap (and whatever else the CPU ran meanwhile
# evicted its data). Two latlab rows therefore:
#   latlab       --gap 1ms:  the external-event figure (a cold responder);
#                            expected a few µs above sigwaittest (see docs/respond.md and docs/results/2026-11-22-respond-vs-sigwaittest.md)
#   latlab-warm  --gap 20us: the responder ran within ~20 µs of each send, as
#                            in sigwaittest's ping-pong; the method check:
#                            its mean ratio should be near 1 (or below: latlab
#                            sends while the responder may preempt at once,
#                            sigwaittest's sender still enters sigwait first).
set -euo pipefail
ROUNDS=${1:-5}
EVENTS=${2:-10000}
cd "$(dirname "$0")/.."
command -v sigwaittest >/dev/null || { echo "sigwaittest missing: apt-get install rt-tests" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "run as root (SCHED_FIFO)" >&2; exit 1; }
cargo build --release --locked -q -p latlab
LATLAB=${CARGO_TARGET_DIR:-target}/release/latlab
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

latlab() {
  "$LATLAB" respond --quiet --no-save --channel signal --responder-cpu 0 --stimulus-cpu 0 \
    --count "$EVENTS" "$@" > /dev/null 2>&1 || [ $? -eq 2 ]
}
for round in $(seq 1 "$ROUNDS"); do
  sigwaittest -f -p 95 -a 0 -i 1000 -l "$EVENTS" -q --json "$OUT/sigwaittest-$round.json" > /dev/null
  latlab --gap 1ms --json "$OUT/latlab-$round.json"
  latlab --gap 20us --json "$OUT/latlab-warm-$round.json"
done

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
tools = ["sigwaittest", "latlab", "latlab-warm"]
rows = {t: [] for t in tools}
print(f"{'round':>5} {'tool':>12} {'samples':>8} {'min us':>7} {'avg us':>7} {'max us':>7}")
for r in range(1, rounds + 1):
    s = json.load(open(f"{out}/sigwaittest-{r}.json"))["thread"]["0"]
    rec = s["receiver"]
    rows["sigwaittest"].append((s["sender"]["samples"], rec["min"], rec["avg"], rec["max"]))
    for tool in tools[1:]:
        l = json.load(open(f"{out}/{tool}-{r}.json"))["one_way"]["latency"]
        rows[tool].append((l["count"], l["min"] / 1e3, l["mean"] / 1e3, l["max"] / 1e3))
    for tool in tools:
        n, lo, avg, hi = rows[tool][-1]
        print(f"{r:>5} {tool:>12} {n:>8} {lo:>7.1f} {avg:>7.1f} {hi:>7.1f}")
med = {t: [statistics.median(v[i] for v in rows[t]) for i in (1, 2, 3)] for t in tools}
print()
print(f"{'median':>23} {'min us':>7} {'avg us':>7} {'max us':>7}")
for tool in tools:
    print(f"{tool:>23} " + " ".join(f"{x:>7.1f}" for x in med[tool]))
for tool in tools[1:]:
    ratio = [l / s if s else float("nan") for l, s in zip(med[tool], med["sigwaittest"])]
    print(f"{tool + '/sigwaittest':>23} " + " ".join(f"{x:>7.2f}" for x in ratio))
PY
