#!/usr/bin/env bash
# Benchmark: `latlab explain` on a freshly recorded trace of about 10 million
# events, printed alongside the decode rate of `latlab dump --stats` on the
# same file (the floor: explain decodes the file once, detection and
# separation together).
#
#   sudo bench/explain-10m.sh [SECONDS]
#   sudo OLD=/path/to/older/latlab bench/explain-10m.sh [SECONDS]
#   sudo TRACE=big.dat OLD=... bench/explain-10m.sh   # reuse a recording
#
# With OLD, that binary's explain runs side by side on the same trace (e.g.
# a build of the previous commit) and the new/old CPU-time ratio is printed;
# the two JSON reports are compared too.
#
# Records latlab's default events (sched, irq, timer, irq_vectors, kmem, ...)
# for SECONDS (default 30) while `latlab run` measures CPU 0 every 500 us and
# `perf bench sched pipe` ping-pongs as a load (millions of context switches),
# into a temp dir (deleted on exit). Then prints for both commands: wall time,
# CPU time (user+sys; the stable figure on a shared machine), events per CPU
# second, peak RSS (GNU time), and the ratio explain/decode.
# Goal (issue 5): explain of 10 M events within a few seconds, memory bounded
# (peak RSS ~ the file mapping plus the windows, not per event).
set -euo pipefail
SECS=${1:-30}
cd "$(dirname "$0")/.."
for t in perf /usr/bin/time; do
  command -v $t >/dev/null || { echo "needs $t (apt-get install linux-perf time)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "needs root (tracefs)" >&2; exit 1; }
cargo build --release -q -p latlab
LATLAB=$(realpath "${CARGO_TARGET_DIR:-target}/release/latlab")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trace=${TRACE:-$work/big.dat}

[ -n "${TRACE:-}" ] || "$LATLAB" record -o "$trace" --buffer-size 131072 -- \
  "$LATLAB" run --cpus 0 --interval 500us --duration "${SECS}s" --no-save -q \
  --load none --load-cmd "perf bench sched pipe -l 1000000000 >/dev/null 2>&1" >/dev/null

events=$("$LATLAB" dump --stats "$trace" | awk '/^events:/ {print $2}')
size=$(stat -c %s "$trace")
echo "trace: $events events, $((size / 1048576)) MiB"

measure() { # cmd... -> "wall_s cpu_s rss_kib"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$work/time"
}
read -r dwall dcpu drss < <(measure "$LATLAB" dump --stats "$trace")
read -r ewall ecpu erss < <(measure "$LATLAB" explain "$trace" --threshold p99 --json "$work/r.json")
rate() { awk -v n="$events" -v s="$1" 'BEGIN { if (s > 0) printf "%.1f", n / s / 1e6; else print "inf" }'; }
printf "%-30s %7s %7s %14s %12s\n" "" "wall s" "CPU s" "M events/CPU s" "peak RSS MiB"
printf "%-30s %7s %7s %14s %12s\n" \
  "latlab dump --stats (decode)" "$dwall" "$dcpu" "$(rate "$dcpu")" "$((drss / 1024))" \
  "latlab explain" "$ewall" "$ecpu" "$(rate "$ecpu")" "$((erss / 1024))"
if [ -n "${OLD:-}" ]; then
  read -r owall ocpu orss < <(measure "$OLD" explain "$trace" --threshold p99 --json "$work/old.json")
  printf "%-30s %7s %7s %14s %12s\n" "explain, OLD binary" "$owall" "$ocpu" "$(rate "$ocpu")" "$((orss / 1024))"
fi
awk -v a="$ecpu" -v b="$dcpu" 'BEGIN { printf "explain / decode CPU time: %.2fx (explain decodes once)\n", a / b }'
if [ -n "${OLD:-}" ]; then
  awk -v a="$ecpu" -v b="$ocpu" 'BEGIN { printf "explain new / OLD CPU time: %.2fx\n", a / b }'
  if cmp -s "$work/r.json" "$work/old.json"; then echo "reports: identical"; else echo "reports: differ"; fi
fi
python3 - "$work/r.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
print(f"explain found {r['periods']} periods of {', '.join(t['comm'] for t in r['selected'])}, "
      f"{r['late']} late; top cause: {r['causes'][0]['description'] if r['causes'] else '-'}")
PY
