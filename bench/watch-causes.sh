#!/usr/bin/env bash
# Cause injection for `latlab watch` (issue 16): next to a SCHED_FIFO 80
# periodic thread (`latlab run`, 1 ms, CPU 0) runs one background load at a
# time (`latlab load net:2`, `io:2`, `mem:2`: loopback network, disk, memory;
# SCHED_OTHER, temp dirs only), and `latlab watch` started with the run prints
# its progress lines (the top cause so far, every INTERVAL) and the ranked
# causes at the end — live, without a trace file.
#
# Usage (as root): bench/watch-causes.sh [SECONDS] [KINDS...]   (default 30, net io mem)
set -euo pipefail
SECS=${1:-30}
shift || true
KINDS=("$@")
[[ ${#KINDS[@]} -gt 0 ]] || KINDS=(net io mem)
here=$(cd "$(dirname "$0")/.." && pwd)
LATLAB=${LATLAB:-$here/target/release/latlab}
[[ -x $LATLAB ]] || (cd "$here" && cargo build --release -p latlab >&2)
[[ $(id -u) -eq 0 ]] || { echo "run as root" >&2; exit 1; }
work=$(mktemp -d /tmp/latlab-watch-causes.XXXXXX)
load_pid=
cleanup() { [[ -n $load_pid ]] && kill -INT "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
echo "$(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in "${KINDS[@]}"; do
    echo "== $kind:2 next to latlab run (SCHED_FIFO 80, 1 ms, CPU 0), watched with threshold 100 us"
    "$LATLAB" load "$kind:2" --duration "$((SECS + 10))s" >/dev/null 2>&1 &
    load_pid=$!
    sleep 2
    "$LATLAB" watch --threshold 100us --interval 10s --no-history --json "$work/$kind.json" \
        -- "$LATLAB" run --duration "${SECS}s" --interval 1ms --cpus 0 --priority 80 -q --no-save --split off \
        2>&1 >/dev/null | grep -E '^\[' || true
    kill -INT "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null || true
    load_pid=
    jq -r '"late windows \(.windows_seen.late) of \([.tasks[] | select(.comm == "latlab-cpu0") | .thread.summary.count] | add) wake-ups; worst \(.spikes.worst_ns / 1000) us", (.causes[:3][] | "  \(.share * 100 | floor) %  \(.description)  [\(.cause.category)]")' "$work/$kind.json"
done
