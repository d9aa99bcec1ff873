#!/usr/bin/env bash
# Benchmark (issue 15): `latlab dump` against `trace-cmd report`, and
# `latlab dump --stats` (decoding only) against the decode limit, side by
# side on each event mix and file format, CPU time (user+sys), median of
# ROUNDS alternating runs.
#
#   sudo bench/dump-speed.sh [ROUNDS]            record the mixes here, then compare
#   TRACES="a.dat b.dat" bench/dump-speed.sh     compare on given .dat files
#   KEEP=/some/dir sudo bench/dump-speed.sh      keep the recorded traces there
#   OLD=/path/to/older/latlab ...                also time an older build (same rows)
#
# Recorded mixes (temp dir, deleted on exit unless KEEP is set):
#   sched    sched events of `perf bench sched pipe` (latlab record)
#   kmem     latlab's default events of `latlab run --load net:1,mem:1`, 10 s
#   irq      irq, irq_vectors, timer, net, sched of `latlab load net:2,udp:1`
#   syscalls raw_syscalls + sched of `latlab load syscall:2`
#   tc-zstd  trace-cmd's own v7 zstd file: latlab's default events under
#            `stress-ng --cpu 2 --sock 1`, 10 s, via `trace-cmd extract`
#   tc-zlib  the same file zlib-compressed (bench/dat-recompress.py; Debian's
#            trace-cmd has no zlib: its report column is left empty)
#   tc-v6    the same file converted to v6, uncompressed
#   every    every event this kernel has, 2 s of a mixed stress-ng (hundreds
#            of event kinds: the print-fmt evaluator's coverage)
#   lisa     ../shared/traces/lisa-rtapp-juno/trace.dat (arm64, 6 CPUs), if present
#
# Columns: events; CPU seconds of trace-cmd report, latlab dump, and their
# ratio (goal >= 10x); latlab dump --stats in M events/s against the decode
# limit: `decode_limit` (crates/latlab-ftrace/examples) reading every byte of
# the file and decompressing every chunk with nothing else done, and the
# share of that speed --stats reaches.
# Everything runs SCHED_OTHER; tracing instances are removed on exit.
set -euo pipefail
ROUNDS=${1:-3}
cd "$(dirname "$0")/.."
here=$(pwd)
for t in trace-cmd perf python3; do
    command -v $t >/dev/null || { echo "needs $t (apt-get install trace-cmd linux-perf python3)" >&2; exit 1; }
done
cargo build --release -q -p latlab
cargo build --release -q -p latlab-ftrace --example decode_limit
TD=${CARGO_TARGET_DIR:-target}
work=$(mktemp -d)
# Copies: a rebuild during the run must not change what is measured.
cp "$TD/release/latlab" "$work/latlab"
cp "$TD/release/examples/decode_limit" "$work/decode_limit"
LATLAB=$work/latlab
LIMIT=$work/decode_limit
inst=
cleanup() {
    if [ -n "$inst" ] && [ -d "/sys/kernel/tracing/instances/$inst" ]; then
        local I=/sys/kernel/tracing/instances/$inst
        echo 0 >"$I/tracing_on" || true
        echo 0 >"$I/events/enable" || true
        rmdir "$I" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
dir=${KEEP:-$work}
mkdir -p "$dir"

# Records with trace-cmd extract from a private instance (trace-cmd record
# cannot run where the function tracer is locked). $1 = output, $2 = events
# ("all" or a list of system/event), rest = the load command.
tc_extract() {
    local out=$1 events=$2
    shift 2
    [ "$(id -u)" -eq 0 ] || { echo "needs root to record" >&2; exit 1; }
    inst=latlab-bench-$$
    local I=/sys/kernel/tracing/instances/$inst
    mkdir "$I"
    echo 131072 >"$I/buffer_size_kb"
    echo mono >"$I/trace_clock" 2>/dev/null || true
    if [ "$events" = all ]; then
        echo 1 >"$I/events/enable" 2>/dev/null || true
    else
        for e in $events; do echo 1 >"$I/events/$e/enable"; done
    fi
    echo 1 >"$I/tracing_on"
    "$@" >/dev/null 2>&1 || true
    echo 0 >"$I/tracing_on"
    echo 0 >"$I/events/enable"
    (cd "$work" && trace-cmd extract -B "$inst" -o "$out" >/dev/null 2>&1)
    [ -d "$I" ] && rmdir "$I"
    inst=
}

record_mixes() {
    [ "$(id -u)" -eq 0 ] || { echo "needs root to record (or give TRACES=...)" >&2; exit 1; }
    command -v stress-ng >/dev/null || { echo "needs stress-ng (apt-get install stress-ng)" >&2; exit 1; }
    local q="--buffer-size 65536 --no-kallsyms"
    echo "recording the mixes into $dir ..." >&2
    "$LATLAB" record -o "$dir/sched.dat" $q -e sched -- perf bench sched pipe -l 400000 >/dev/null 2>&1
    "$LATLAB" record -o "$dir/kmem.dat" --buffer-size 65536 -- \
        "$LATLAB" run --duration 10s --load net:1,mem:1 --no-save -q >/dev/null 2>&1
    "$LATLAB" record -o "$dir/irq.dat" --buffer-size 65536 -e irq,irq_vectors,timer,net,sched -- \
        "$LATLAB" load net:2,udp:1 --duration 8s >/dev/null 2>&1
    "$LATLAB" record -o "$dir/syscalls.dat" --buffer-size 65536 -e syscalls,sched -- \
        "$LATLAB" load syscall:2 --duration 6s >/dev/null 2>&1
    tc_extract "$dir/tc-zstd.dat" "sched/sched_switch sched/sched_waking sched/sched_wakeup irq timer irq_vectors/local_timer_entry irq_vectors/local_timer_exit workqueue kmem/mm_page_alloc kmem/mm_page_free" \
        timeout 15 stress-ng --cpu 2 --sock 1 -t 10 --temp-path "$work"
    trace-cmd convert -i "$dir/tc-zstd.dat" -o "$dir/tc-v6.dat" --file-version 6 --compression none >/dev/null 2>&1
    trace-cmd convert -i "$dir/tc-zstd.dat" -o "$work/tc-v7none.dat" --file-version 7 --compression none >/dev/null 2>&1
    python3 bench/dat-recompress.py "$work/tc-v7none.dat" "$dir/tc-zlib.dat"
    tc_extract "$dir/every.dat" all \
        timeout 10 stress-ng --cpu 1 --sock 1 --vm 1 --hdd 1 --timer 1 --fork 1 -t 2 --temp-path "$work"
    local shared=$here/../shared/traces/lisa-rtapp-juno/trace.dat
    [ -f "$shared" ] && cp "$shared" "$dir/lisa.dat"
    TRACES=
    for m in sched kmem irq syscalls every tc-zstd tc-zlib tc-v6 lisa; do
        [ -f "$dir/$m.dat" ] && TRACES="$TRACES $dir/$m.dat"
    done
}

[ -n "${TRACES:-}" ] || record_mixes

cpu_ms() { # command... -> CPU milliseconds (user+sys, children included)
    perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {printf "%.2f", $1}'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "$(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds, median CPU time"
echo "latlab $("$LATLAB" --version)${OLD:+; OLD = $("$OLD" --version)}"
printf '\n| trace | format | events | MiB | trace-cmd report s | latlab dump s | ratio |%s dump --stats M ev/s | decode limit M ev/s | stats %% of limit |\n' "${OLD:+ OLD dump s | OLD stats M ev/s |}"
printf '|---|---|---:|---:|---:|---:|---:|%s---:|---:|---:|\n' "${OLD:+---:|---:|}"
for f in $TRACES; do
    name=$(basename "$f" .dat)
    stats=$("$LATLAB" dump --stats "$f")
    events=$(awk '/^events:/ {print $2}' <<<"$stats")
    format=$(sed -n 's/^format: trace-cmd .dat \(v[67]\).*/\1/p' <<<"$stats")
    comp=$(python3 -c "import sys; d=open(sys.argv[1],'rb').read(64); print(d[18:d.index(b'\0',18)].decode() if d[10:11]==b'7' else 'none')" "$f")
    mib=$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.0f", b / 1048576 }')
    tc_ok=1
    # Debian's trace-cmd reads no zlib files.
    [ "$comp" = zlib ] && tc_ok=0
    cat "$f" >/dev/null # page cache
    tc=() dump=() st=() lim=() od=() os=()
    for _ in $(seq "$ROUNDS"); do
        [ $tc_ok = 1 ] && tc+=("$(cpu_ms trace-cmd report "$f")")
        dump+=("$(cpu_ms "$LATLAB" dump "$f")")
        st+=("$(cpu_ms "$LATLAB" dump --stats "$f")")
        lim+=("$(cpu_ms "$LIMIT" decompress "$f")")
        if [ -n "${OLD:-}" ]; then
            od+=("$(cpu_ms "$OLD" dump "$f")")
            os+=("$(cpu_ms "$OLD" dump --stats "$f")")
        fi
    done
    d=$(median "${dump[@]}")
    s=$(median "${st[@]}")
    l=$(median "${lim[@]}")
    rate() { awk -v n="$events" -v ms="$1" 'BEGIN { printf "%.1f", n / ms / 1000 }'; }
    if [ $tc_ok = 1 ]; then
        t=$(median "${tc[@]}")
        tcs=$(awk -v x="$t" 'BEGIN { printf "%.3f", x / 1000 }')
        ratio=$(awk -v a="$t" -v b="$d" 'BEGIN { printf "%.1fx", a / b }')
    else
        tcs="-" ratio="-"
    fi
    oldcols=
    if [ -n "${OLD:-}" ]; then
        oldcols=" $(awk -v x="$(median "${od[@]}")" 'BEGIN { printf "%.3f", x / 1000 }') | $(rate "$(median "${os[@]}")") |"
    fi
    printf '| %s | %s %s | %s | %s | %s | %s | %s |%s %s | %s | %s |\n' \
        "$name" "$format" "$comp" "$events" "$mib" "$tcs" \
        "$(awk -v x="$d" 'BEGIN { printf "%.3f", x / 1000 }')" "$ratio" "$oldcols" \
        "$(rate "$s")" "$(rate "$l")" "$(awk -v a="$s" -v b="$l" 'BEGIN { printf "%.0f%%", 100 * b / a }')"
done
