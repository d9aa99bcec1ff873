#!/usr/bin/env bash
# Regression check: `latlab dump` of a new build prints the same bytes as an
# older build on real traces, with and without filters.
#
#   bench/dump-regress.sh OLD_LATLAB NEW_LATLAB TRACE...
#
# OLD_LATLAB is e.g. a copy of target/release/latlab built before a change.
# For every TRACE (a .dat, ftrace text or CTF folder) it runs, with both
# binaries: `dump`, `dump --stats`, `dump --events sched:sched_switch,kmem:*`,
# `dump --cpu 1`, and `dump --from A --to B` over the middle of the trace,
# and compares the outputs byte for byte (by SHA-256, so traces of several GB
# of text need no disk space). Prints one line per check and exits 1 if any
# output differs. Long: a few times the dump time of each trace.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
fail=0
sum() { "$@" 2>&1 | sha256sum | cut -c1-16; }
check() { # label, args...
    local label=$1
    shift
    local a b
    a=$(sum "$OLD" dump "$@")
    b=$(sum "$NEW" dump "$@")
    if [ "$a" = "$b" ]; then
        printf 'same    %-28s %s\n' "$label" "$a"
    else
        printf 'DIFFER  %-28s old %s new %s\n' "$label" "$a" "$b"
        fail=1
    fi
}
for t in "$@"; do
    echo "== $t"
    check "dump" "$t"
    check "--stats" --stats "$t"
    span=$("$OLD" dump --stats "$t" | awk '/^time span:/ {print $3, $5}')
    if [ -n "$span" ]; then
        read -r first last <<<"$span"
        from=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.6f", a + (b - a) / 3 }')
        to=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.6f", a + 2 * (b - a) / 3 }')
        check "--from/--to middle third" --from "$from" --to "$to" "$t"
    fi
    if "$OLD" dump --stats "$t" | grep -q 'sched:sched_switch'; then
        if "$OLD" dump --stats "$t" | grep -q 'kmem:'; then
            check "--events switch,kmem:*" --events sched:sched_switch,kmem:* "$t"
        else
            check "--events sched_switch" --events sched_switch "$t"
        fi
    fi
    check "--cpu 1" --cpu 1 "$t"
done
if [ $fail = 0 ]; then echo "all outputs identical"; else echo "OUTPUTS DIFFER"; fi
exit $fail
