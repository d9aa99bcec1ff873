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
# Then one more run with the kernel's BPF statistics on gives the programs'
# own time per run and in all (needs bpftool).
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
stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled)
# The kernel's BPF statistics as they were, and no temporary files, however it ends.
trap 'echo "$stats_before" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$work"' EXIT

echo "$(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "latlab run --cpus 0 --interval 1ms --duration ${SECS}s, $ROUNDS rounds with --split off and on, alternating"
printf '%-6s %11s %11s %11s %11s %14s\n' round "plain p50" "split p50" "plain p99" "split p99" "split samples"
p50s_plain=() p50s_split=() p99s_plain=() p99s_split=()
for r in $(seq 1 "$ROUNDS"); do
    for mode in off on; do
        "$LATLAB" run --cpus 0 --interval 1ms --duration "${SECS}s" --split "$mode" -q --no-save \
            --json "$work/$mode-$r.json" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
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

# The kernel side's own time, independent of the neighbours: one more run
# with the split and the kernel's BPF statistics on (kernel.bpf_stats_enabled,
# restored after), the programs' run time and count read just before it ends.
if command -v bpftool >/dev/null; then
    # Programs loaded from here on (bpftool may not know which process
    # holds a program, and another latlab watch may load the same names).
    first_id=$(bpftool prog show --json 2>/dev/null | jq '[.[].id] | max // 0' || echo 0)
    echo 1 >/proc/sys/kernel/bpf_stats_enabled
    "$LATLAB" run --cpus 0 --interval 1ms --duration "${SECS}s" --split on -q --no-save \
        --json "$work/stats.json" >/dev/null 2>&1 &
    run_pid=$!
    # Its six programs: the first loaded after it started (read at once,
    # before another process can load programs of the same names).
    ids='[]'
    for _ in $(seq 1 50); do
        ids=$(bpftool prog show --json 2>/dev/null | jq -c --argjson first "$first_id" \
            '[.[] | select(.id > $first and (.name | test("^on_(hrtimer|waking|switch|softirq)"))) | .id] | sort | .[:6]')
        [[ $(jq length <<<"$ids") -ge 6 ]] && break
        sleep 0.1
    done
    # At most SECONDS + 30 s (a run that does not end is an error below).
    for _ in $(seq 1 $(((SECS + 30) * 2))); do
        [[ $(ps -o stat= -p "$run_pid" 2>/dev/null) == [!Z]* ]] || break
        bpftool prog show --json 2>/dev/null >"$work/progs.tmp" && mv "$work/progs.tmp" "$work/progs.json"
        sleep 0.5
    done
    echo "$stats_before" >/proc/sys/kernel/bpf_stats_enabled
    kill "$run_pid" 2>/dev/null && echo "the run with statistics did not end in time" >&2
    wait "$run_pid" || true
    jq -r --argjson secs "$SECS" --argjson ids "$ids" '[.[] | select(.id as $id | $ids | index($id))] | map({name, ns: (.run_time_ns // 0), n: (.run_cnt // 0)})
        | (.[] | "  \(.name): \(.n) runs, \(if .n > 0 then (.ns / .n | floor) else 0 end) ns each"),
          "BPF programs of the split: \(map(.ns) | add / 1e6 | floor) ms in \(map(.n) | add) runs over about \($secs) s: \(map(.ns) | add / ($secs * 1e9) * 100 * 1000 | floor / 1000) % of one CPU"' \
        "$work/progs.json" 2>/dev/null || echo "(no BPF statistics read)"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
