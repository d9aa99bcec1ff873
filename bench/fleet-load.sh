#!/usr/bin/env bash
# Boards pushing results to `latlab serve` at once, over real HTTP into a
# private PostgreSQL server (crates/latlab/tests/fleet.rs,
# boards_pushing_at_once_store_every_result_exactly_once, release build).
#
#   bench/fleet-load.sh [BOARDS] [RESULTS]      (default 50 boards x 100 results)
#
# Every board is a thread posting its results one after the other (every
# tenth twice, as a resend after a lost answer); the test checks that each
# result is stored exactly once and prints the time, the results per second,
# the server's peak memory (VmHWM), and the peer: the same results written
# straight into PostgreSQL by as many clients, with the time ratio.
set -euo pipefail
BOARDS=${1:-50}
RESULTS=${2:-100}
cd "$(dirname "$0")/.."
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "machine: $(nproc) CPUs, $(uname -m), kernel $(uname -r); commit $(git rev-parse --short HEAD)"
LATLAB_FLEET_BOARDS=$BOARDS LATLAB_FLEET_RESULTS=$RESULTS \
  cargo test --release --locked -q -p latlab --test fleet \
  boards_pushing_at_once_store_every_result_exactly_once -- --nocapture 2>&1 |
  grep -E '^(fleet load|peer)|panicked|FAILED|test result'
