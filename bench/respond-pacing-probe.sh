#!/usr/bin/env bash
# Why latlab respond's signal channel reads a few µs above rt-tests'
# sigwaittest: one difference at a time, interleaved rounds, medians.
#
#   bench/respond-pacing-probe.sh [ROUNDS] [EVENTS]     (as root; needs rt-tests)
#
# Rows: sigwaittest -f (the peer), latlab respond --gap 1ms, and the example
# pacing_probe (crates/latlab-respond/examples/pacing_probe.rs), a small copy
# of latlab's method with one switch per difference from sigwaittest (see the
# comment at its top). All on CPU 0, one event per 1 ms unless the row says
# otherwise. Prints, per row,
# the median over the rounds of the minimum and of the mean one-way latency,
# and the ratio of the mean to sigwaittest's.
set -euo pipefail
ROUNDS=${1:-5}
EVENTS=${2:-5000}
cd "$(dirname "$0")/.."
command -v sigwaittest >/dev/null || { echo "sigwaittest missing: apt-get install rt-tests" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "run as root (SCHED_FIFO)" >&2; exit 1; }
cargo build --release --locked -q -p latlab
cargo build --release --locked -q -p latlab-respond --example pacing_probe
LATLAB=${CARGO_TARGET_DIR:-target}/release/latlab
PROBE=${CARGO_TARGET_DIR:-target}/release/examples/pacing_probe
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

sigwaittest_row() {
  sigwaittest -f -p 95 -a 0 -i 1000 -l "$EVENTS" -q --json "$OUT/sw.json" > /dev/null
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["thread"]["0"]["receiver"]; print(r["min"], r["avg"])' "$OUT/sw.json"
}
latlab_row() {
  "$LATLAB" respond --quiet --no-save --channel signal --responder-cpu 0 --stimulus-cpu 0 \
    --gap 1ms --count "$EVENTS" --json "$OUT/ll.json" > /dev/null 2>&1 || [ $? -eq 2 ]
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["one_way"]["latency"]; print(r["min"]/1e3, r["mean"]/1e3)' "$OUT/ll.json"
}
probe_row() {
  "$PROBE" -n "$EVENTS" "$@" | awk '{print $6, $8}'
}

ROWS=(
  "sigwaittest -f (peer)|sigwaittest_row"
  "latlab respond --gap 1ms|latlab_row"
  "probe: latlab's method|probe_row"
  "probe -s 95: equal priorities|probe_row -s 95"
  "probe -s 0: stimulus SCHED_OTHER|probe_row -s 0"
  "probe -k: kill() not tgkill()|probe_row -k"
  "probe -t: gettimeofday()|probe_row -t"
  "probe -L: no mlockall|probe_row -L"
  "probe -w: sigwaitinfo answer wait|probe_row -w"
  "probe -b: busy-wait the gap|probe_row -b"
  "probe -g 20: 20 us gap|probe_row -g 20"
  "probe -P: ping-pong pacing|probe_row -P"
  "probe -P -s 95 -t -k -w: all of sigwaittest's|probe_row -P -s 95 -t -k -w"
  "probe -P -T 8192: ping-pong, 8 MB evicted|probe_row -P -T 8192"
)
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!ROWS[@]}"; do
    echo "${ROWS[$i]%%|*}|$(eval "${ROWS[$i]#*|}")" >> "$OUT/rows"
  done
  echo "round $round of $ROUNDS done" >&2
done

python3 - "$OUT/rows" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, figures = line.rstrip("\n").split("|")
    rows.setdefault(name, []).append(tuple(map(float, figures.split())))
peer = statistics.median(m for _, m in rows["sigwaittest -f (peer)"])
print(f"{'median over rounds':<44} {'min us':>7} {'mean us':>8} {'mean/peer':>9}")
for name, v in rows.items():
    mean = statistics.median(m for _, m in v)
    print(f"{name:<44} {statistics.median(lo for lo, _ in v):>7.2f} {mean:>8.2f} {mean / peer:>9.2f}")
PY
