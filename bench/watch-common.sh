# shellcheck shell=bash
# Shared by bench/watch-overhead.sh and bench/watch-tracefs-cost.sh (sourced):
# the latlab binary (LATLAB, default target/release/latlab, built if
# missing), the checks for root and the tools, a work directory removed on
# exit (and the watch in $watch_pid stopped), and pct_of.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LATLAB=${LATLAB:-$here/target/release/latlab}
if [[ ! -x $LATLAB ]]; then
    (cd "$here" && cargo build --release -p latlab >&2)
fi
[[ $(id -u) -eq 0 ]] || { echo "run as root: BPF, tracefs and SCHED_FIFO need it" >&2; exit 1; }
for t in cyclictest jq; do command -v $t >/dev/null || { echo "needs $t (apt-get install rt-tests jq)" >&2; exit 1; }; done
work=$(mktemp -d /tmp/latlab-watch-bench.XXXXXX)
watch_pid=
cleanup() {
    [[ -n $watch_pid ]] && kill -INT "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# p50, p99 and max (us) from cyclictest's histogram (-h): the first
# buckets where the cumulative count reaches 50 % and 99 %.
pct_of() {
    awk '/^[0-9]/ { n = 0; for (i = 2; i <= NF; i++) n += $i; c[++k] = n; v[k] = $1 + 0; total += n }
         /^# Max Latencies:/ { max = $4 + 0 }
         END { s = 0; p50 = -1; for (j = 1; j <= k; j++) { s += c[j]; if (p50 < 0 && s >= 0.5 * total) p50 = v[j]; if (s >= 0.99 * total) { print p50, v[j], max; exit } } }' "$1"
}
