#!/usr/bin/env bash
# latlab run vs cyclictest, same settings, alternating rounds.
#
#   bench/vs-cyclictest.sh [ROUNDS] [SECONDS]     (as root; needs rt-tests)
#   LATLAB=/path/to/latlab bench/vs-cyclictest.sh ...           that binary (no build)
#   LATLAB_BEFORE=/path/to/old/latlab bench/vs-cyclictest.sh ...
#       a third column: the old binary runs in the same rounds, so an old and a
#       new latlab are compared side by side with cyclictest (before/after a change)
#
# Both tools: SCHED_FIFO 95, 1 ms clock_nanosleep interval, one thread per CPU
# pinned, mlockall, /dev/cpu_dma_latency held at 0. Both write a cyclictest
# -h histogram; one script computes p50/p99/max from both, so the figures are
# derived identically. Prints each round and the medians with the
# latlab/cyclictest ratio (and latlab/before with LATLAB_BEFORE). Goal: median
# latency within 10 % of cyclictest's. In each round the tools run one after
# the other, in an order that rotates from round to round, so a drift of the
# machine (other work starting or ending) does not always favour one of them.
set -euo pipefail
ROUNDS=${1:-3}
SECONDS_PER_RUN=${2:-10}
cd "$(dirname "$0")/.."
command -v cyclictest >/dev/null || { echo "cyclictest missing: apt-get install rt-tests" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "run as root (SCHED_FIFO)" >&2; exit 1; }
if [ -n "${LATLAB:-}" ]; then
  [ -x "$LATLAB" ] || { echo "LATLAB=$LATLAB is not an executable latlab" >&2; exit 1; }
else
  cargo build --release --locked -q
  LATLAB=target/release/latlab
fi
TOOLS="cyclictest latlab"
if [ -n "${LATLAB_BEFORE:-}" ]; then
  [ -x "$LATLAB_BEFORE" ] || { echo "LATLAB_BEFORE=$LATLAB_BEFORE is not an executable latlab" >&2; exit 1; }
  TOOLS="cyclictest latlab before"
fi
echo "latlab: $LATLAB ($("$LATLAB" --version))"
[ -z "${LATLAB_BEFORE:-}" ] || echo "before: $LATLAB_BEFORE ($("$LATLAB_BEFORE" --version))"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CPUS=$(nproc)

run_tool() { # TOOL ROUND
  case $1 in
    cyclictest)
      cyclictest -m -p95 -i1000 -h 20000 -q -a -t "$CPUS" -D "$SECONDS_PER_RUN" > "$OUT/cyclictest-$2.txt" ;;
    latlab|before)
      local bin=$LATLAB
      [ "$1" = latlab ] || bin=$LATLAB_BEFORE
      "$bin" run --quiet --no-save --priority 95 --interval 1ms --duration "${SECONDS_PER_RUN}s" \
        --histogram-text "$OUT/$1-$2.txt" > /dev/null ;;
  esac
}

read -r -a tools <<< "$TOOLS"
for round in $(seq 1 "$ROUNDS"); do
  n=${#tools[@]}
  for i in $(seq 0 $((n - 1))); do
    run_tool "${tools[$(( (i + round - 1) % n ))]}" "$round"
  done
done

python3 - "$OUT" "$ROUNDS" $TOOLS <<'PY'
import statistics, sys
out, rounds, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def figures(path):
    counts = {}
    overflow = 0
    maxima = []
    for line in open(path):
        if line.startswith("# Max Latencies:"):
            maxima = [int(v) for v in line.split(":")[1].split()]
        if line.startswith("# Histogram Overflows:"):
            overflow = sum(int(v) for v in line.split(":")[1].split())
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split()
        us = int(fields[0])
        counts[us] = counts.get(us, 0) + sum(int(v) for v in fields[1:])
    total = sum(counts.values()) + overflow
    def pct(p):
        rank = max(1, -(-p * total // 100))
        seen = 0
        for us in sorted(counts):
            seen += counts[us]
            if seen >= rank:
                return us
        return max(maxima)
    return pct(50), pct(99), max(maxima), total

rows = {tool: [] for tool in tools}
print(f"{'round':>5} {'tool':>10} {'samples':>8} {'p50 us':>7} {'p99 us':>7} {'max us':>7}")
for r in range(1, rounds + 1):
    for tool in tools:
        p50, p99, mx, n = figures(f"{out}/{tool}-{r}.txt")
        rows[tool].append((p50, p99, mx))
        print(f"{r:>5} {tool:>10} {n:>8} {p50:>7} {p99:>7} {mx:>7}")
print()

def ratio(a, b):
    return f"{a / b:.2f}" if b else "nan"

header = f"{'median of rounds':>17} {'cyclictest':>10} {'latlab':>8} {'latlab/cyc':>10}"
if "before" in tools:
    header += f" {'before':>8} {'before/cyc':>10} {'latlab/before':>13}"
print(header)
for i, name in enumerate(("p50", "p99", "max")):
    med = {tool: statistics.median(x[i] for x in rows[tool]) for tool in tools}
    line = f"{name:>17} {med['cyclictest']:>10} {med['latlab']:>8} {ratio(med['latlab'], med['cyclictest']):>10}"
    if "before" in tools:
        line += f" {med['before']:>8} {ratio(med['before'], med['cyclictest']):>10} {ratio(med['latlab'], med['before']):>13}"
    print(line)
PY
