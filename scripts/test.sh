#!/usr/bin/env bash
# make test: install what the tests use when it can (scripts/test-deps.sh),
# then the format check, clippy, every cargo test, the lab's judges and the
# tracefs tests again with tracefs only under debugfs; every step runs, also
# after a failure, and the run ends with what it installed, every test that
# skipped with its reason, and one line of counts (scripts/test-summary.sh).
#
# A test that lacks root, a kernel feature or a tool skips with the reason
# (latlab-testkit appends it to $LATLAB_SKIP_LOG); under
# LATLAB_REQUIRE_PRIVILEGE=1 (CI) it fails instead. LATLAB_TEST_INSTALL=0
# installs nothing. The whole output of each step stays in
# target/make-test/ (or $CARGO_TARGET_DIR/make-test/).
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
logs=${LATLAB_TEST_LOGS:-${CARGO_TARGET_DIR:-target}/make-test}
rm -rf "$logs"
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
export LATLAB_SKIP_LOG=$logs/skips-unit
: >"$LATLAB_SKIP_LOG"

steps=()
# step NAME COMMAND...: runs it, its output to the terminal and NAME.log.
step() {
  local name=$1 status
  shift
  echo "== make test: $name"
  "$@" 2>&1 | tee "$logs/$name.log"
  status=${PIPESTATUS[0]}
  printf '%s\t%s\n' "$name" "$status" >>"$logs/steps"
  return 0
}

scripts/test-deps.sh --report "$logs/deps" | tee "$logs/deps.log"
step fmt "$MAKE" --no-print-directory fmt
step clippy "$MAKE" --no-print-directory clippy
step unit "$MAKE" --no-print-directory unit CARGO_TEST_FLAGS=--no-fail-fast
step board "$MAKE" --no-print-directory board
if command -v python3 >/dev/null; then
  step lab-unit "$MAKE" --no-print-directory lab-unit LAB_UNIT_FLAGS=-v
elif [ "${LATLAB_REQUIRE_PRIVILEGE:-}" = 1 ]; then
  echo "lab-unit: python3 is required (LATLAB_REQUIRE_PRIVILEGE=1): apt-get install python3" >"$logs/lab-unit.log"
  printf 'lab-unit\t1\n' >>"$logs/steps"
else
  printf 'lab-unit (the lab judges)\tpython3 missing: apt-get install python3\n' >>"$LATLAB_SKIP_LOG"
fi
: >"$logs/skips-debugfs"
step debugfs-tracing env LATLAB_SKIP_LOG="$logs/skips-debugfs" "$MAKE" --no-print-directory debugfs-tracing

scripts/test-summary.sh "$logs"
