#!/usr/bin/env bash
# What a background load does to wake-up latency, and what latency costs the load.
#
# Runs `latlab run` twice, side by side in time: once on the idle machine, once
# while `latlab load SPEC` runs in a separate process, and prints the tail
# latencies and their ratios (loaded / idle) plus the load's throughput. It
# asserts nothing: the numbers are the result.
#
#   bench/load-effect.sh                 # full load, 10 s per run
#   SPEC=cpu:2,io:1 DURATION=30s bench/load-effect.sh
#
# Needs root (SCHED_FIFO, mlockall) and jq.
set -euo pipefail
LATLAB=${LATLAB:-target/release/latlab}
DURATION=${DURATION:-10s}
SPEC=${SPEC:-full}
command -v jq >/dev/null || { echo "load-effect: needs jq (apt-get install jq)" >&2; exit 1; }
[ -x "$LATLAB" ] || { echo "load-effect: $LATLAB missing; run: cargo build --release" >&2; exit 1; }

tmp=$(mktemp -d)
load_pid=
cleanup() {
  [ -n "$load_pid" ] && kill -INT "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

"$LATLAB" run --duration "$DURATION" --quiet --no-save --json "$tmp/idle.json" >/dev/null 2>&1

# The load runs until the loaded measurement is done, then gets Ctrl-C.
"$LATLAB" load "$SPEC" --duration 1h --json "$tmp/load.json" >"$tmp/load.txt" 2>"$tmp/load.err" &
load_pid=$!
sleep 1
"$LATLAB" run --duration "$DURATION" --quiet --no-save --json "$tmp/loaded.json" >/dev/null 2>&1
kill -INT "$load_pid"
wait "$load_pid" || { cat "$tmp/load.err" >&2; exit 1; }
load_pid=

us() { jq -r ".overall.latency.$2 / 1000 | . * 10 | round / 10" "$1"; }
printf '%-8s %10s %10s %10s\n' "latency" "idle us" "$SPEC us" "ratio"
for p in p50 p99 p99_9 max; do
  a=$(us "$tmp/idle.json" $p)
  b=$(us "$tmp/loaded.json" $p)
  printf '%-8s %10s %10s %10s\n' "$p" "$a" "$b" "$(jq -n "$b / $a | . * 10 | round / 10")"
done
echo
cat "$tmp/load.txt"
