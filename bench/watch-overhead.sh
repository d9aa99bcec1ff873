#!/usr/bin/env bash
# Overhead of `latlab watch` on the latency it watches (issue 16).
#
# Runs cyclictest (-m -p95 -i1000, SECONDS long) ROUNDS times alone and
# ROUNDS times watched by `latlab watch --comm cyclictest`, alternating, and
# prints each round's p50 and p99 (from cyclictest's own histogram) side by
# side, the ratios of the medians watched/alone (goal for p99: <= 1.05), and
# watch's own CPU time (its process and its BPF programs) per hour of
# watching. The p50 moves with watch's fixed cost per wake-up; the p99 on a
# shared VM mostly with the neighbours, so read it with the load average.
# Also the pooled p50 and p99 (every round's histogram added) and a 95 %
# bootstrap interval of their ratio over the round pairs
# (bench/pooled-ratio.py): whether the goal holds beyond the host's noise.
#
# Usage (as root): bench/watch-overhead.sh [ROUNDS] [SECONDS]
#   LATLAB=path/to/latlab (default target/release/latlab, built if missing)
#   WATCH_ARGS="--threshold 10ms --baseline-every 0" (default: --threshold
#   100us): watch's options, e.g. to see what the windows cost
# Run it on a quiet machine: the script prints the load average first.
set -euo pipefail
ROUNDS=${1:-5}
SECS=${2:-20}
# shellcheck source=bench/watch-common.sh
source "$(dirname "$0")/watch-common.sh"

echo "$(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cyclictest -m -p95 -i1000 -D${SECS}, $ROUNDS rounds alone and watched (${WATCH_ARGS:---threshold 100us}), alternating"
printf '%-6s %10s %12s %10s %12s %10s %12s\n' round "alone p50" "watched p50" "alone p99" "watched p99" "alone max" "watched max"
alone=() watched=() alone50=() watched50=() cpu=()
# Another process's BPF tracing programs cost every event too, in both kinds
# of round: they make the comparison meaningless, so say so.
foreign_bpf() {
    command -v bpftool >/dev/null || { echo "?"; return; }
    bpftool prog show --json 2>/dev/null | jq '[.[] | select(.type == "tracing" or .type == "raw_tracepoint")] | length'
}
for r in $(seq 1 "$ROUNDS"); do
    n=$(foreign_bpf)
    [[ $n == 0 ]] || echo "warning: $n BPF tracing programs of other processes are attached in round $r" >&2
    cyclictest -m -p95 -i1000 -D"$SECS" -q -h 20000 >"$work/alone-$r.txt"
    read -r a50 a amax < <(pct_of "$work/alone-$r.txt")
    # shellcheck disable=SC2086 # WATCH_ARGS are words
    "$LATLAB" watch --comm cyclictest ${WATCH_ARGS:---threshold 100us} --interval 1m --no-history --quiet \
        --json "$work/watch-$r.json" >/dev/null 2>"$work/watch.err" &
    watch_pid=$!
    sleep 2 # the BPF side loaded; the rescan picks cyclictest up within 1 s
    cyclictest -m -p95 -i1000 -D"$SECS" -q -h 20000 >"$work/watched-$r.txt"
    kill -INT "$watch_pid"; wait "$watch_pid" || { cat "$work/watch.err" >&2; exit 1; }
    watch_pid=
    read -r w50 w wmax < <(pct_of "$work/watched-$r.txt")
    alone+=("$a") watched+=("$w") alone50+=("$a50") watched50+=("$w50")
    cpu+=("$(jq '.overhead.cpu_ns_per_hour / 1e9' "$work/watch-$r.json")")
    printf '%-6s %7s us %9s us %7s us %9s us %7s us %9s us\n' "$r" "$a50" "$w50" "$a" "$w" "$amax" "$wmax"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ma=$(median "${alone[@]}") mw=$(median "${watched[@]}") mc=$(median "${cpu[@]}")
ma50=$(median "${alone50[@]}") mw50=$(median "${watched50[@]}")
echo "median p50: alone $ma50 us, watched $mw50 us, ratio watched/alone $(awk -v a="$ma50" -v w="$mw50" 'BEGIN { printf "%.3f", w / a }')"
echo "median p99: alone $ma us, watched $mw us, ratio watched/alone $(awk -v a="$ma" -v w="$mw" 'BEGIN { printf "%.3f", w / a }') (goal <= 1.05)"
alone_files=() watched_files=()
for r in $(seq 1 "$ROUNDS"); do alone_files+=("$work/alone-$r.txt") watched_files+=("$work/watched-$r.txt"); done
for p in 50 99; do
    python3 "$here/bench/pooled-ratio.py" "$p" "${alone_files[@]}" -- "${watched_files[@]}"
done
echo "watch's own CPU time: median $(awk -v c="$mc" 'BEGIN { printf "%.2f", c }') s per hour of watching ($(awk -v c="$mc" 'BEGIN { printf "%.3f", c / 36 }') % of one CPU)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
