#!/usr/bin/env bash
# Cost of `latlab run --split` (issue 16) to the latency it splits.
#
# Runs `latlab run` (SCHED_FIFO 95, 1 ms, CPU 0, SECONDS long) ROUNDS times
# with --split off and ROUNDS times with --split on, alternating, and prints
# each round's p50 and p99 (latlab's own latency, from its result) side by
# side, and the ratios of the medians split/plain (goal: p99 ratio <= 1.05).
# With the split on, the kernel runs latlab watch's programs on every
# hrtimer callback, wake-up, context switch and softirq of both CPUs (only
# those: no interrupt or vector programs, no windows, no BPF statistics).
#
# Usage (as root): bench/run-split.sh [ROUNDS] [SECONDS]   (default 5, 10)
#   LATLAB=path/to/latlab (default target/release/latlab, built if missing)
# Run it on a quiet machine: the script prints the load average first.
set -euo pipefail
ROUNDS=${1:-5}
SECS=${2:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
LATLAB=${LATLAB:-$here/target/release/latlab}
if [[ ! -x $LATLAB ]]; then
    (cd "$here" && cargo build --release -p latlab >&2)
fi
[[ $(id -u) -eq 0 ]] || { echo "run as root: BPF and SCHED_FIFO need it" >&2; exit 1; }
command -v jq >/dev/null || { echo "needs jq (apt-get install jq)" >&2; exit 1; }
work=$(mktemp -d /tmp/latlab-run-split.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "$(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "latlab run --cpus 0 --interval 1ms --duration ${SECS}s, $ROUNDS rounds with --split off and on, alternating"
printf '%-6s %11s %11s %11s %11s %14s\n' round "plain p50" "split p50" "plain p99" "split p99" "split samples"
p50s_plain=() p50s_split=() p99s_plain=() p99s_split=()
for r in $(seq 1 "$ROUNDS"); do
    for mode in off on; do
        "$LATLAB" run --cpus 0 --interval 1ms --duration "${SECS}s" --split "$mode" -q --no-save \
            --json "$work/$mode-$r.json" >/dev/null
    done
    read -r a50 a99 < <(jq -r '"\(.overall.latency.p50 / 1000) \(.overall.latency.p99 / 1000)"' "$work/off-$r.json")
    read -r s50 s99 n < <(jq -r '"\(.overall.latency.p50 / 1000) \(.overall.latency.p99 / 1000) \(.overall.split.timer_wakeups)"' "$work/on-$r.json")
    p50s_plain+=("$a50") p50s_split+=("$s50") p99s_plain+=("$a99") p99s_split+=("$s99")
    printf '%-6s %8.1f us %8.1f us %8.1f us %8.1f us %14s\n' "$r" "$a50" "$s50" "$a99" "$s99" "$n"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m50a=$(median "${p50s_plain[@]}") m50s=$(median "${p50s_split[@]}")
m99a=$(median "${p99s_plain[@]}") m99s=$(median "${p99s_split[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b / a }'; }
echo "median p50: plain $m50a us, split $m50s us, ratio split/plain $(ratio "$m50a" "$m50s")"
echo "median p99: plain $m99a us, split $m99s us, ratio split/plain $(ratio "$m99a" "$m99s") (goal <= 1.05)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
