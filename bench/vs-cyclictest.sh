#!/usr/bin/env bash
# latlab run vs cyclictest, same settings, alternating rounds.
#
#   bench/vs-cyclictest.sh [ROUNDS] [SECONDS]     (as root; needs rt-tests)
#
# Both tools: SCHED_FIFO 95, 1 ms clock_nanosleep interval, one thread per CPU
# pinned, mlockall, /dev/cpu_dma_latency held at 0. Both write a cyclictest
# -h histogram; one script computes p50/p99/max from both, so the figures are
# derived identically. Prints each round and the medians with the
# latlab/cyclictest ratio. Goal: median latency within 10 % of cyclictest's.
set -euo pipefail
ROUNDS=${1:-3}
SECONDS_PER_RUN=${2:-10}
cd "$(dirname "$0")/.."
command -v cyclictest >/dev/null || { echo "cyclictest missing: apt-get install rt-tests" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "run as root (SCHED_FIFO)" >&2; exit 1; }
cargo build --release --locked -q
LATLAB=target/release/latlab
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CPUS=$(nproc)

for round in $(seq 1 "$ROUNDS"); do
  cyclictest -m -p95 -i1000 -h 20000 -q -a -t "$CPUS" -D "$SECONDS_PER_RUN" > "$OUT/cyclictest-$round.txt"
  "$LATLAB" run --quiet --no-save --priority 95 --interval 1ms --duration "${SECONDS_PER_RUN}s" \
    --histogram-text "$OUT/latlab-$round.txt" > /dev/null
done

python3 - "$OUT" "$ROUNDS" <<'PY'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

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

rows = {"cyclictest": [], "latlab": []}
print(f"{'round':>5} {'tool':>10} {'samples':>8} {'p50 us':>7} {'p99 us':>7} {'max us':>7}")
for r in range(1, rounds + 1):
    for tool in ("cyclictest", "latlab"):
        p50, p99, mx, n = figures(f"{out}/{tool}-{r}.txt")
        rows[tool].append((p50, p99, mx))
        print(f"{r:>5} {tool:>10} {n:>8} {p50:>7} {p99:>7} {mx:>7}")
print()
print(f"{'median of rounds':>17} {'cyclictest':>10} {'latlab':>8} {'ratio':>6}")
for i, name in enumerate(("p50", "p99", "max")):
    c = statistics.median(x[i] for x in rows["cyclictest"])
    l = statistics.median(x[i] for x in rows["latlab"])
    ratio = l / c if c else float("nan")
    print(f"{name:>17} {c:>10} {l:>8} {ratio:>6.2f}")
PY
