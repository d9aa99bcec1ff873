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
[ -d "$I" ] && rmdir "$I" || true  # trace-cmd extract -B removes the instance itself
f=$work/bench.dat
events=$("$LATLAB" dump --stats "$f" | awk '/^events:/ {print $2}')
lost=$("$LATLAB" dump --stats "$f" | awk '/^lost events:/ {print $3}')
size=$(stat -c %s "$f")
echo "trace: $events events, $lost lost, $((size / 1048576)) MiB, $(uname -r), $(nproc) CPUs"

# CPU time (user+sys) is the figure: the development VMs are shared, so wall
# time mostly measures the neighbours; both are printed.
measure() { # prints "wall cpu" for the command
  local out
  out=$( { /usr/bin/time -f "%e %U %S" taskset -c 0 "$@" > /dev/null; } 2>&1 | tail -1)
  echo "$out" | awk '{printf "%s %.3f\n", $1, $2 + $3}'
}
# warm the page cache, then alternate the runs 3 times and keep the best CPU time
cat "$f" > /dev/null
declare -A cpu wall
for k in dump tc stats; do cpu[$k]=999999; wall[$k]=0; done
for i in 1 2 3; do
  for k in dump tc stats; do
    case $k in
      dump) set -- "$LATLAB" dump "$f" ;;
      tc) set -- trace-cmd report "$f" ;;
      stats) set -- "$LATLAB" dump --stats "$f" ;;
    esac
    read -r w c < <(measure "$@")
    if [ "$(echo "$c < ${cpu[$k]}" | bc -l)" = 1 ]; then cpu[$k]=$c; wall[$k]=$w; fi
  done
done
rate() { printf "%.2f" "$(echo "$events / $1 / 1000000" | bc -l)"; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-30s %9s %9s %12s\n" "command (one core)" "cpu s" "wall s" "M events/s"
printf "%-30s %9s %9s %12s\n" "latlab dump > /dev/null" "${cpu[dump]}" "${wall[dump]}" "$(rate ${cpu[dump]})"
printf "%-30s %9s %9s %12s\n" "trace-cmd report > /dev/null" "${cpu[tc]}" "${wall[tc]}" "$(rate ${cpu[tc]})"
printf "%-30s %9s %9s %12s\n" "latlab dump --stats" "${cpu[stats]}" "${wall[stats]}" "$(rate ${cpu[stats]})"
printf "ratio trace-cmd report / latlab dump (cpu): %.1fx (goal >= 5x)\n" "$(echo "${cpu[tc]} / ${cpu[dump]}" | bc -l)"
printf "decode-only (latlab dump --stats): %s M events/s (goal >= 10)\n" "$(rate ${cpu[stats]})"
