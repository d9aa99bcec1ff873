#!/usr/bin/env bash
# Overhead of kernel-event capture on wake-up latency.
#
# Runs a periodic wake-up measurement (`latlab run`, SCHED_FIFO 95, 1 ms) with
# and without capture, alternating ROUNDS times, and prints the p99 of each
# run side by side with the ratio traced/untraced. Goal: capture adds under
# 10 % to p99 (ratio of medians < 1.10).
#
# Capture is `latlab run --trace FILE` when `latlab run` has --trace, else a
# `latlab record --duration` running alongside. Without `latlab run` at all,
# cyclictest (-m -p95 -i1000) is the measurement.
#
# Usage (as root): bench/record-overhead.sh [ROUNDS] [SECONDS] [-- extra `latlab record` args]
#   LATLAB=path/to/latlab (default target/release/latlab, built if missing)
set -euo pipefail

ROUNDS=${1:-3}
SECS=${2:-10}
shift $(( $# >= 2 ? 2 : $# )) || true
[[ ${1:-} == -- ]] && shift
EXTRA=("$@")

here=$(cd "$(dirname "$0")/.." && pwd)
LATLAB=${LATLAB:-$here/target/release/latlab}
if [[ ! -x $LATLAB ]]; then
    (cd "$here" && cargo build --release -p latlab >&2)
    LATLAB=${CARGO_TARGET_DIR:-$here/target}/release/latlab
fi
[[ $(id -u) -eq 0 ]] || { echo "run as root: tracefs and SCHED_FIFO need it" >&2; exit 1; }
for t in jq bc; do command -v $t >/dev/null || { echo "needs $t (apt-get install $t)" >&2; exit 1; }; done

work=$(mktemp -d /tmp/latlab-bench.XXXXXX)
rec_pid=
cleanup() {
    [[ -n $rec_pid ]] && kill -INT "$rec_pid" 2>/dev/null && wait "$rec_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

if "$LATLAB" run --help >/dev/null 2>&1; then
    if "$LATLAB" run --help | grep -q -- '--trace'; then mode=run-trace; else mode=run+record; fi
else
    command -v cyclictest >/dev/null || { echo "needs latlab run or cyclictest (apt-get install rt-tests)" >&2; exit 1; }
    mode=cyclictest+record
fi

# One measurement; prints p99 in microseconds.
measure() { # $1 = plain|traced, $2 = round
    local json=$work/run-$1-$2.json dat=$work/trace-$1-$2.dat
    case $mode in
    run-trace)
        if [[ $1 == traced ]]; then
            "$LATLAB" run --duration "${SECS}s" -q --no-save --json "$json" --trace "$dat" >/dev/null 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; }
        else
            "$LATLAB" run --duration "${SECS}s" -q --no-save --json "$json" >/dev/null 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; }
        fi
        jq '.overall.latency.p99 / 1000' "$json"
        ;;
    run+record)
        start_record "$1" "$dat"
        "$LATLAB" run --duration "${SECS}s" -q --no-save --json "$json" >/dev/null 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; }
        stop_record
        jq '.overall.latency.p99 / 1000' "$json"
        ;;
    cyclictest+record)
        start_record "$1" "$dat"
        cyclictest -m -p95 -i1000 -D"$SECS" -q -h 100000 >"$work/ct-$1-$2.txt"
        stop_record
        # p99 from the histogram: first bucket where the cumulative count reaches 99 %.
        awk '/^[0-9]/ { n[$1] = 0; for (i = 2; i <= NF; i++) n[$1] += $i; total += n[$1]; keys[++k] = $1 }
             END { c = 0; for (j = 1; j <= k; j++) { c += n[keys[j]]; if (c >= 0.99 * total) { print keys[j] + 0; exit } } }' \
            "$work/ct-$1-$2.txt"
        ;;
    esac
}

start_record() { # $1 = plain|traced, $2 = output
    rec_pid=
    [[ $1 == traced ]] || return 0
    "$LATLAB" record --no-kallsyms --duration "$((SECS + 30))s" -o "$2" "${EXTRA[@]}" >"$work/record.out" 2>&1 &
    rec_pid=$!
    for _ in $(seq 200); do  # wait until tracing runs
        [[ -e /sys/kernel/tracing/instances/latlab-$rec_pid/tracing_on ]] &&
            [[ $(cat /sys/kernel/tracing/instances/latlab-$rec_pid/tracing_on) == 1 ]] && return 0
        sleep 0.05
    done
    echo "latlab record did not start:" >&2; cat "$work/record.out" >&2; exit 1
}

stop_record() {
    [[ -n $rec_pid ]] || return 0
    kill -INT "$rec_pid"; wait "$rec_pid"; rec_pid=
    grep -E '^ +all|lost' "$work/record.out" | sed 's/^/    record: /' >&2 || true
}

echo "record overhead: $mode, $ROUNDS rounds x 2 x ${SECS}s, $(nproc) CPUs, $(uname -r)"
printf '%6s %14s %14s %8s\n' round "p99 plain us" "p99 traced us" ratio
plain=(); traced=()
for r in $(seq "$ROUNDS"); do
    p=$(measure plain "$r"); t=$(measure traced "$r")
    plain+=("$p"); traced+=("$t")
    printf '%6s %14.1f %14.1f %8.3f\n' "$r" "$p" "$t" "$(echo "$t / $p" | bc -l)"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mp=$(median "${plain[@]}"); mt=$(median "${traced[@]}")
ratio=$(echo "$mt / $mp" | bc -l)
printf '%6s %14.1f %14.1f %8.3f\n' median "$mp" "$mt" "$ratio"
if (( $(echo "$ratio < 1.10" | bc -l) )); then
    echo "goal met: capture adds $(printf '%.1f' "$(echo "($ratio - 1) * 100" | bc -l)") % to p99 (goal < 10 %)"
else
    echo "goal NOT met: capture adds $(printf '%.1f' "$(echo "($ratio - 1) * 100" | bc -l)") % to p99 (goal < 10 %)"
fi
