#!/usr/bin/env bash
# The tracefs-using tests on a machine where tracefs is mounted only under
# /sys/kernel/debug/tracing (issue 14): in a private mount namespace
# /sys/kernel/tracing is unmounted and debugfs mounted, then the tests run
# with LATLAB_REQUIRE_TRACEFS=1: a test that does not find tracefs there
# fails (latlab's discovery missed debugfs's), whatever else may skip. A test
# that lacks a tool (trace-cmd, babeltrace2) skips with the reason as
# anywhere, or fails under the caller's LATLAB_REQUIRE_PRIVILEGE=1 (CI's).
# The script counts passed, failed and skipped tests (a skip is a line in
# $LATLAB_SKIP_LOG, see latlab-testkit; a passed test did not skip). Nothing
# it or the tests enable in tracefs stays enabled, also on failure:
# instances that appeared during the run are switched off and removed on
# exit. Needs root, unshare (util-linux), and a kernel with debugfs.
#
#   scripts/test-debugfs-tracing.sh            # build, run, print the figures
#   CARGO=cargo scripts/test-debugfs-tracing.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}

# Without root or unshare: skip with the fix (a line in $LATLAB_SKIP_LOG, as
# the tests' skips), or fail under LATLAB_REQUIRE_PRIVILEGE=1 (their rule).
skip() {
  if [ "${LATLAB_REQUIRE_PRIVILEGE:-}" = 1 ]; then
    echo "test-debugfs-tracing: $1 is required (LATLAB_REQUIRE_PRIVILEGE=1): $2" >&2
    exit 1
  fi
  echo "SKIP: test-debugfs-tracing: $1 missing: $2" >&2
  if [ -n "${LATLAB_SKIP_LOG:-}" ]; then
    printf 'scripts/test-debugfs-tracing.sh (all its tests)\t%s missing: %s\n' "$1" "$2" >>"$LATLAB_SKIP_LOG"
  fi
  exit 0
}
[ "$(id -u)" -eq 0 ] || skip "root (mount namespaces, tracefs)" "run it as root (sudo)"
command -v unshare >/dev/null || skip "unshare" "apt-get install util-linux"

# The test binaries and what they are run with: every test binary that
# touches tracefs.
tests=(
  "-p latlab-tracefs --test capture"
  "-p latlab --test record"
  "-p latlab --test dump"
  "-p latlab --test run"
  "-p latlab --test explain"
  "-p latlab --test timer_truth"
  "-p latlab --test watch_tracefs"
  "-p latlab --test run_split"
)
for t in "${tests[@]}"; do
  # shellcheck disable=SC2086 # $t is the cargo arguments
  if ! built=$($CARGO test --locked $t --no-run -q 2>&1); then
    echo "$built" >&2
    echo "test-debugfs-tracing: building the tests failed: cargo test --locked $t --no-run" >&2
    exit 1
  fi
done

log=$(mktemp)
inner=$(mktemp)
# The skips of this run: the caller's skip log (make test's) from its
# current end, else a file of our own.
own_skips=$(mktemp)
skips=${LATLAB_SKIP_LOG:-$own_skips}
touch "$skips"
skips_before=$(wc -l <"$skips")
trap 'rm -f "$log" "$inner" "$own_skips"' EXIT
cat >"$inner" <<'INNER'
set -uo pipefail
CARGO=$1 SKIPS=$2; shift 2
# Only debugfs's tracing/ from here on (the namespace's own mounts).
while mountpoint -q /sys/kernel/tracing; do umount /sys/kernel/tracing || exit 1; done
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug || exit 1
debug=/sys/kernel/debug/tracing
if [ ! -d "$debug/instances" ]; then
  echo "no $debug/instances: the kernel does not automount tracefs under debugfs" >&2
  exit 1
fi
if [ -e /sys/kernel/tracing/instances ]; then
  echo "/sys/kernel/tracing is still populated" >&2
  exit 1
fi
echo "tracefs: $(grep -E ' (tracefs|debugfs) ' /proc/mounts | awk '{print $2" ("$3")"}' | paste -sd' ' -)"
before_instances=$(ls "$debug/instances" | sort)
before_set_event=$(cat "$debug/set_event")
# Whatever happens, nothing the tests started stays enabled.
cleanup() {
  for dir in "$debug"/instances/*; do
    [ -d "$dir" ] || continue
    name=${dir##*/}
    grep -qx "$name" <<<"$before_instances" && continue
    echo 0 >"$dir/tracing_on" 2>/dev/null
    echo 0 >"$dir/events/enable" 2>/dev/null
    rmdir "$dir" 2>/dev/null && echo "cleanup: removed instance $name left behind"
  done
}
trap cleanup EXIT
status=0
for t in "$@"; do
  echo "== cargo test $t"
  # shellcheck disable=SC2086
  LATLAB_REQUIRE_TRACEFS=1 LATLAB_SKIP_LOG=$SKIPS $CARGO test --locked -q $t -- --nocapture 2>&1 || status=1
done
left=$(comm -13 <(echo "$before_instances") <(ls "$debug/instances" | sort) | grep . || true)
if [ -n "$left" ]; then echo "LEFT BEHIND: instances $left"; status=1; fi
if [ "$(cat "$debug/set_event")" != "$before_set_event" ]; then
  echo "LEFT BEHIND: top-level events changed: $(cat "$debug/set_event")"; status=1
fi
if mountpoint -q /sys/kernel/tracing; then
  echo "a test mounted tracefs at /sys/kernel/tracing: discovery did not use debugfs's"; status=1
fi
exit $status
INNER

start=$(date +%s)
set +e
unshare --mount --propagation private bash "$inner" "$CARGO" "$skips" "${tests[@]}" >"$log" 2>&1
status=$?
# The whole output is long (--nocapture, to see every SKIP line): show the
# mounts, the results and anything that went wrong (a panic with its
# message, up to the blank line or the backtrace note that ends it).
awk '/panicked at/ { inpanic = 1 }
     inpanic { print; if (/^$/ || /^note: /) inpanic = 0; next }
     /^(tracefs:|== |test result|SKIP:|cleanup:|LEFT BEHIND|a test mounted|no \/sys|\/sys\/kernel\/tracing is)|FAILED|^error/' "$log"
# Stopped before the first test (the namespace, a mount): all it said.
if [ "$status" -ne 0 ] && ! grep -q '^== cargo test' "$log"; then
  echo "test-debugfs-tracing: the private mount namespace could not be set up:" >&2
  cat "$log" >&2
fi
set -e
seconds=$(( $(date +%s) - start ))

# Figures: per test binary passed/failed/ignored (cargo's "test result"
# lines); skipped: the tests that wrote to the skip log in this run (cargo
# counts them as passed: here they are not).
sum() { grep -E '^test result:' "$log" | grep -Eo "[0-9]+ $1" | awk '{s+=$1} END {print s+0}' || true; }
passed=$(sum passed) failed=$(sum failed) ignored=$(sum ignored)
skipped=$(tail -n +"$((skips_before + 1))" "$skips" | cut -f1 | sort -u | grep -c . || true)
passed=$(( passed > skipped ? passed - skipped : 0 ))
echo "debugfs-only tracing: passed $passed, failed $failed, ignored $ignored, skipped $skipped, in ${seconds} s"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
  echo "test-debugfs-tracing: FAILED" >&2
  exit 1
fi
