#!/usr/bin/env bash
# Lost events of recordings with the default ring buffer under load (issue 15):
#
#   A. `latlab record -- cyclictest` while `stress-ng --sock 1 --vm 1` runs,
#   B. `latlab run --explain` while `stress-ng --vm 2` runs,
#   C. `latlab run --trace` with latlab's own `--load net:1,mem:1`.
#
#   sudo bench/record-lost.sh [SECONDS] [ROUNDS]
#   sudo LATLAB=/path/to/older/latlab bench/record-lost.sh   # e.g. a build before a change
#
# Each case runs ROUNDS times (default 3) for SECONDS (default 10); prints the
# events recorded, the events lost (the kernel's per-CPU overrun counts, as
# the summary gives them), the loss in percent and the ring-buffer memory the
# recording took (per CPU x CPUs, as the summary states it). The loads run
# SCHED_OTHER, bounded in time (stress-ng -t), writing only under a temp dir
# that is removed on exit; every tracing instance latlab creates is removed
# by latlab itself (checked at the end).
set -euo pipefail
SECS=${1:-10}
ROUNDS=${2:-3}
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "needs root (tracefs)" >&2; exit 1; }
for t in stress-ng cyclictest jq; do
    command -v $t >/dev/null || { echo "needs $t (apt-get install stress-ng rt-tests jq)" >&2; exit 1; }
done
if [ -z "${LATLAB:-}" ]; then
    cargo build --release -q -p latlab
    LATLAB=$(realpath "${CARGO_TARGET_DIR:-target}/release/latlab")
fi
work=$(mktemp -d)
load_pid=
cleanup() {
    [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

start_load() { # stress-ng args...
    (cd "$work" && exec stress-ng "$@" -t $((SECS + 15)) --temp-path "$work" >/dev/null 2>&1) &
    load_pid=$!
    sleep 2 # let the load ramp up
}
stop_load() {
    kill "$load_pid" 2>/dev/null || true
    wait "$load_pid" 2>/dev/null || true
    load_pid=
}

# "Trace: N events (M lost) written to ..." -> "N M"
trace_line() { sed -n 's/^Trace: \([0-9]*\) events (\([0-9]*\) lost).*/\1 \2/p' "$1" | head -1; }

row() { # case events lost buffer
    local pct
    pct=$(awk -v l="$3" -v e="$2" 'BEGIN { t = l + e; printf "%.2f", (t > 0 ? 100 * l / t : 0) }')
    printf '%-44s %12s %10s %7s%% %s\n' "$1" "$2" "$3" "$pct" "$4"
}

echo "latlab: $LATLAB ($("$LATLAB" --version)), $(nproc) CPUs, $(uname -r), MemAvailable $(awk '/MemAvailable/ {printf "%d MiB", $2/1024}' /proc/meminfo)"
printf '%-44s %12s %10s %8s %s\n' case events lost loss "ring buffer"
for r in $(seq "$ROUNDS"); do
    # A: record + cyclictest under --sock 1 --vm 1
    start_load --sock 1 --vm 1
    "$LATLAB" record --json -o "$work/a.dat" -- \
        sh -c "exec cyclictest -m -p 95 -i 1000 -D ${SECS}s -q >/dev/null" >"$work/a.json" 2>"$work/a.err" ||
        { cat "$work/a.err" >&2; exit 1; }
    stop_load
    row "A record -- cyclictest | sock 1, vm 1 #$r" \
        "$(jq .total_events "$work/a.json")" "$(jq .lost_events "$work/a.json")" \
        "$(jq -r '.ring_buffer.summary // "kernel default"' "$work/a.json" | sed 's/ (.*//')"

    # B: run --explain under --vm 2
    start_load --vm 2
    "$LATLAB" run --duration "${SECS}s" --no-save -q --explain --trace "$work/b.dat" \
        --json "$work/b.json" >"$work/b.out" 2>"$work/b.err" || true
    stop_load
    read -r ev lost < <(trace_line "$work/b.out")
    buf=$(grep -ho 'ring buffer: [^(]*' "$work/b.out" "$work/b.err" | head -1 | sed 's/^ring buffer: //; s/ *$//' || true)
    row "B run --explain | vm 2 #$r" "$ev" "$lost" "${buf:-kernel default}"

    # C: run --trace with latlab's own net + mem load
    "$LATLAB" run --duration "${SECS}s" --no-save -q --load net:1,mem:1 --trace "$work/c.dat" \
        >"$work/c.out" 2>"$work/c.err" || true
    read -r ev lost < <(trace_line "$work/c.out")
    buf=$(grep -ho 'ring buffer: [^(]*' "$work/c.out" "$work/c.err" | head -1 | sed 's/^ring buffer: //; s/ *$//' || true)
    row "C run --trace --load net:1,mem:1 #$r" "$ev" "$lost" "${buf:-kernel default}"
done
left=$(ls /sys/kernel/tracing/instances/ | grep -c '^latlab-' || true)
echo "tracing instances named latlab-* left: $left"
