#!/usr/bin/env bash
# The one-hour watch (issue 16): a periodic cyclictest (-m -p95 -i1000) runs
# for DURATION while `latlab watch --comm cyclictest --duration DURATION`
# watches it with snapshots every minute into the history DB; prints the
# watch's memory (VmRSS) a minute after the start and at the end, the
# snapshots stored, and writes the report (with the long-term plot as PNG).
#
# Usage (as root): bench/watch-hour.sh [DURATION] [OUTDIR]
#   DURATION default 1h; OUTDIR default ./watch-hour-<date> (result JSON,
#   history DB, report.html, plots/*.png)
set -euo pipefail
DURATION=${1:-1h}
OUT=${2:-watch-hour-$(date -u +%Y%m%dT%H%M%SZ)}
here=$(cd "$(dirname "$0")/.." && pwd)
LATLAB=${LATLAB:-$here/target/release/latlab}
[[ -x $LATLAB ]] || (cd "$here" && cargo build --release -p latlab >&2)
[[ $(id -u) -eq 0 ]] || { echo "run as root" >&2; exit 1; }
command -v cyclictest >/dev/null || { echo "needs cyclictest (apt-get install rt-tests)" >&2; exit 1; }
mkdir -p "$OUT"
ct_pid=
cleanup() { [[ -n $ct_pid ]] && kill -INT "$ct_pid" 2>/dev/null && wait "$ct_pid" 2>/dev/null || true; }
trap cleanup EXIT
echo "$(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# Runs until the watch is over (the trap ends it).
cyclictest -m -p95 -i1000 -q -h 20000 >"$OUT/cyclictest.txt" &
ct_pid=$!
sleep 1
"$LATLAB" watch --comm cyclictest --duration "$DURATION" --interval 1m --threshold 100us \
    --db "$OUT/history.sqlite" --json "$OUT/watch.json" >"$OUT/watch.out" 2>"$OUT/watch.err" &
wpid=$!
sleep 60
rss_start=$(awk '/^VmRSS:/ { print $2 }' "/proc/$wpid/status")
echo "VmRSS one minute in: $rss_start KiB"
rss_end=$rss_start
while kill -0 "$wpid" 2>/dev/null; do
    r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$wpid/status" 2>/dev/null || true)
    [[ -n $r ]] && rss_end=$r
    sleep 10
done
wait "$wpid" || { cat "$OUT/watch.err" >&2; exit 1; }
echo "VmRSS at the end: $rss_end KiB (peak $(jq .overhead.max_rss_kib "$OUT/watch.json") KiB)"
echo "snapshots in the history: $("$LATLAB" history --db "$OUT/history.sqlite" | grep -c watch-snapshot)"
echo "snapshots in the result: $(jq '.snapshots | length' "$OUT/watch.json")"
jq -r '"watch CPU per hour: \(.overhead.cpu_ns_per_hour / 1e9) s; spikes \(.spikes.count) (\(.spikes.per_hour)/h); worst \(.spikes.worst_ns / 1000) us"' "$OUT/watch.json"
"$LATLAB" report "$OUT/watch.json" -o "$OUT/report.html" --png "$OUT/plots" >/dev/null
echo "report: $OUT/report.html, plots in $OUT/plots (the long-term plot: *-longterm.png)"
cat "$OUT/watch.out"
