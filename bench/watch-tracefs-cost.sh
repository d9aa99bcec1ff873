#!/usr/bin/env bash
# What `latlab watch --tracefs` costs next to the BPF side (issue 16), on
# the same workload, side by side.
#
# Each round runs cyclictest (-m -p95 -i1000, SECONDS long) three times:
# alone, watched by `latlab watch --comm cyclictest` (BPF), and watched by
# `latlab watch --tracefs --comm cyclictest`. For each it prints
# cyclictest's p99 (its own histogram), watch's CPU time per hour as watch
# reports it (its process, plus its BPF programs' run time for BPF), and the
# whole machine's busy CPU time per hour above the alone run (from
# /proc/stat: it includes what the kernel spends recording trace events,
# which no per-process figure shows), and, with the watch still running, the
# CPU time (user + system) of a fixed scheduler-heavy job (hackbench -p -g 1
# -l LOOPS: every message a wake-up and a switch, each traced): what the
# kernel side adds to the traced tasks' own time, recording events for
# tracefs, running programs for BPF. Then the medians and the ratios
# tracefs/BPF. On a shared VM the machine-wide figure is noisy (useless when
# other work keeps both CPUs busy): read the ratios, and the spread of the
# rounds.
#
# Usage (as root): bench/watch-tracefs-cost.sh [ROUNDS] [SECONDS] [LOOPS]
#   LATLAB=path/to/latlab (default target/release/latlab, built if missing)
set -euo pipefail
ROUNDS=${1:-3}
SECS=${2:-20}
LOOPS=${3:-3000}
# shellcheck source=bench/watch-common.sh
source "$(dirname "$0")/watch-common.sh"
command -v hackbench >/dev/null || { echo "needs hackbench (apt-get install rt-tests)" >&2; exit 1; }

# Busy CPU time of the whole machine so far (USER_HZ ticks): user, nice,
# system, irq, softirq (not idle, iowait, steal).
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
hz=$(getconf CLK_TCK)

# CPU time (ticks) of process $1 so far: utime + stime.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# CPU time (s) the waited-for children of shell $1 used so far.
children_cpu() { awk -v hz="$hz" '{ printf "%.3f", ($16 + $17) / hz }' "/proc/$1/stat"; }

# One cyclictest run and one hackbench; MODE: alone, bpf or tracefs. Prints
# "p99 watch_cpu_s_per_h machine_busy_s_per_h hackbench_cpu_s". Watch's CPU is taken over the
# cyclictest run only (its start-up, BTF parsing for BPF, is left out): its
# process's time from /proc, plus for BPF its programs' run time (the
# result's bpf_ns, prorated to the run).
one() {
    local mode=$1 r=$2 flags=()
    [[ $mode == tracefs ]] && flags=(--tracefs)
    if [[ $mode != alone ]]; then
        "$LATLAB" watch "${flags[@]}" --comm cyclictest --threshold 100us --interval 1m --no-history \
            --quiet --json "$work/$mode-$r.json" >/dev/null 2>"$work/watch.err" &
        watch_pid=$!
        sleep 2 # loaded; the rescan picks cyclictest up within 1 s
    fi
    local b0 t0 b1 t1 w0=0 w1=0
    [[ -n $watch_pid ]] && w0=$(ticks "$watch_pid")
    b0=$(busy) t0=$(date +%s.%N)
    cyclictest -m -p95 -i1000 -D"$SECS" -q -h 20000 >"$work/$mode-$r.txt"
    b1=$(busy) t1=$(date +%s.%N)
    [[ -n $watch_pid ]] && w1=$(ticks "$watch_pid")
    local h0 h1 me=$BASHPID
    h0=$(children_cpu "$me")
    hackbench -p -g 1 -l "$LOOPS" >/dev/null
    h1=$(children_cpu "$me")
    local cpu=0
    if [[ -n $watch_pid ]]; then
        kill -INT "$watch_pid"; wait "$watch_pid" || { cat "$work/watch.err" >&2; exit 1; }
        watch_pid=
        local bpf_ns dur_ns lost
        bpf_ns=$(jq '.overhead.bpf_ns' "$work/$mode-$r.json")
        dur_ns=$(jq '.duration_ns' "$work/$mode-$r.json")
        cpu=$(awk -v w="$((w1 - w0))" -v hz="$hz" -v b="$bpf_ns" -v d="$dur_ns" -v s="$t0" -v e="$t1" \
            'BEGIN { run = e - s; printf "%.2f", (w / hz + b / 1e9 * (run * 1e9 / d)) / run * 3600 }')
        lost=$(jq '.windows_seen.events_lost' "$work/$mode-$r.json")
        [[ $lost == 0 ]] || echo "  ($mode round $r: $lost trace events lost)" >&2
    fi
    local _p50 p _max
    read -r _p50 p _max < <(pct_of "$work/$mode-$r.txt")
    echo "$p $cpu $(awk -v b="$((b1 - b0))" -v hz="$hz" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.1f", b / hz / (e - s) * 3600 }') $(awk -v a="$h0" -v b="$h1" 'BEGIN { printf "%.2f", b - a }')"
}

echo "$(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "latlab $(cd "$here" && git rev-parse --short HEAD 2>/dev/null || echo '?'); cyclictest -m -p95 -i1000 -D${SECS}, $ROUNDS rounds of alone / bpf / tracefs"
printf '%-6s %-8s %10s %16s %18s %15s\n' round mode "p99" "watch CPU s/h" "machine busy s/h" "hackbench CPU"
declare -A p99 cpu busy_h hb
for r in $(seq 1 "$ROUNDS"); do
    for mode in alone bpf tracefs; do
        read -r p c b h < <(one "$mode" "$r")
        p99[$mode]+="$p " cpu[$mode]+="$c " busy_h[$mode]+="$b " hb[$mode]+="$h "
        printf '%-6s %-8s %7s us %16.2f %18s %13s s\n' "$r" "$mode" "$p" "$c" "$b" "$h"
    done
done
# shellcheck disable=SC2086 # $1 is the list, split on purpose
median() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for mode in alone bpf tracefs; do
    printf 'median %-8s p99 %s us, watch CPU %.2f s/h, machine busy %s s/h, hackbench %s s\n' "$mode" \
        "$(median "${p99[$mode]}")" "$(median "${cpu[$mode]}")" "$(median "${busy_h[$mode]}")" "$(median "${hb[$mode]}")"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
cb=$(median "${cpu[bpf]}") ct=$(median "${cpu[tracefs]}")
ba=$(median "${busy_h[alone]}") bb=$(median "${busy_h[bpf]}") bt=$(median "${busy_h[tracefs]}")
eb=$(awk -v x="$bb" -v a="$ba" 'BEGIN { d = x - a; printf "%.1f", (d > 0 ? d : 0) }')
et=$(awk -v x="$bt" -v a="$ba" 'BEGIN { d = x - a; printf "%.1f", (d > 0 ? d : 0) }')
echo "watch's own CPU time per hour: tracefs/bpf = $(ratio "$ct" "$cb") ($ct s vs $cb s; $(awk -v c="$ct" 'BEGIN { printf "%.2f", c / 36 }') % vs $(awk -v c="$cb" 'BEGIN { printf "%.2f", c / 36 }') % of one CPU)"
echo "machine busy time above alone per hour: tracefs $et s, bpf $eb s, tracefs/bpf = $(ratio "$et" "$eb")"
ha=$(median "${hb[alone]}") hbb=$(median "${hb[bpf]}") hbt=$(median "${hb[tracefs]}")
echo "hackbench CPU watched/alone: bpf $(ratio "$hbb" "$ha"), tracefs $(ratio "$hbt" "$ha"); added: bpf $(awk -v x="$hbb" -v a="$ha" 'BEGIN { printf "%.2f", x - a }') s, tracefs $(awk -v x="$hbt" -v a="$ha" 'BEGIN { printf "%.2f", x - a }') s, tracefs/bpf = $(ratio "$(awk -v x="$hbt" -v a="$ha" 'BEGIN { print x - a }')" "$(awk -v x="$hbb" -v a="$ha" 'BEGIN { print x - a }')")"
echo "p99 watched/alone: bpf $(ratio "$(median "${p99[bpf]}")" "$(median "${p99[alone]}")"), tracefs $(ratio "$(median "${p99[tracefs]}")" "$(median "${p99[alone]}")")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
