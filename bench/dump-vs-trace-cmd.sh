#!/usr/bin/env bash
# Benchmark: `latlab dump` vs `trace-cmd report` on a freshly recorded trace of
# a few million events, side by side in one run, one core each (taskset).
#
#   sudo bench/dump-vs-trace-cmd.sh [LOOPS]
#
# Records sched_switch/sched_waking/sched_wakeup while `perf bench sched pipe`
# ping-pongs LOOPS times (default 1000000, about 6 M events) in a private
# tracefs instance (removed on exit), extracts it with trace-cmd to a v6 file
# under a temp dir (deleted on exit), then prints events/s for
#   latlab dump > /dev/null, trace-cmd report > /dev/null, latlab dump --stats
# and the ratios. Goals (issue 4): dump >= 5x trace-cmd report; decode-only
# (--stats) >= 10 M events/s on one core.
set -euo pipefail
LOOPS=${1:-1000000}
cd "$(dirname "$0")/.."
for t in trace-cmd perf taskset; do
  command -v $t >/dev/null || { echo "needs $t (apt-get install trace-cmd linux-perf util-linux)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "needs root (tracefs instance)" >&2; exit 1; }
cargo build --release -q -p latlab
LATLAB=${CARGO_TARGET_DIR:-target}/release/latlab
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
inst=latlab-bench-$$
I=$T/instances/$inst
work=$(mktemp -d)
cleanup() {
  if [ -d "$I" ]; then
    echo 0 > "$I/tracing_on" || true
    echo 0 > "$I/events/enable" || true
    rmdir "$I" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$I"
echo 262144 > "$I/buffer_size_kb"
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup; do echo 1 > "$I/events/$e/enable"; done
echo 1 > "$I/tracing_on"
perf bench sched pipe -l "$LOOPS" > /dev/null
echo 0 > "$I/tracing_on"
echo 0 > "$I/events/enable"
(cd "$work" && trace-cmd extract -B "$inst" -o raw.dat > /dev/null 2>&1)
trace-cmd convert -i "$work/raw.dat" -o "$work/bench.dat" --file-version 6 --compression none > /dev/null 2>&1
rmdir "$I"
f=$work/bench.dat
events=$("$LATLAB" dump --stats "$f" | awk '/^events:/ {print $2}')
lost=$("$LATLAB" dump --stats "$f" | awk '/^lost events:/ {print $3}')
size=$(stat -c %s "$f")
echo "trace: $events events, $lost lost, $((size / 1048576)) MiB, $(uname -r), $(nproc) CPUs"

now() { date +%s.%N; }
run() { # name, command...
  local name=$1; shift
  local t0 t1
  t0=$(now); taskset -c 0 "$@" > /dev/null; t1=$(now)
  echo "$name $(echo "$t1 - $t0" | bc -l)"
}
# warm the page cache, then alternate the runs 3 times and keep the best
cat "$f" > /dev/null
best_dump=999999; best_tc=999999; best_stats=999999
for i in 1 2 3; do
  read -r _ t < <(run dump "$LATLAB" dump "$f");            best_dump=$(echo "if ($t < $best_dump) $t else $best_dump" | bc -l)
  read -r _ t < <(run tc trace-cmd report "$f");            best_tc=$(echo "if ($t < $best_tc) $t else $best_tc" | bc -l)
  read -r _ t < <(run stats "$LATLAB" dump --stats "$f");   best_stats=$(echo "if ($t < $best_stats) $t else $best_stats" | bc -l)
done
rate() { printf "%.2f" "$(echo "$events / $1 / 1000000" | bc -l)"; }
printf "%-28s %8s s %10s M events/s\n" "latlab dump > /dev/null" "$(printf %.3f $best_dump)" "$(rate $best_dump)"
printf "%-28s %8s s %10s M events/s\n" "trace-cmd report > /dev/null" "$(printf %.3f $best_tc)" "$(rate $best_tc)"
printf "%-28s %8s s %10s M events/s\n" "latlab dump --stats" "$(printf %.3f $best_stats)" "$(rate $best_stats)"
printf "ratio dump / trace-cmd report: %.1fx (goal >= 5x)\n" "$(echo "$best_tc / $best_dump" | bc -l)"
printf "decode-only: %s M events/s (goal >= 10)\n" "$(rate $best_stats)"
