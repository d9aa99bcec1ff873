#!/usr/bin/env bash
# The end of make test: what scripts/test-deps.sh installed or could not,
# every test that skipped (or is #[ignore]d) with its reason, each step's
# figures, and one last line of counts:
#   tests: N passed, N failed, N skipped
# (the plain closing line CI readers know: one word and a colon before it).
# A test that skipped returned early, so cargo counts it as passed: here it
# is counted as skipped, not passed. A step that failed without a failing
# test (fmt, clippy, a build) counts as one failure.
#
#   scripts/test-summary.sh LOGS   (the directory scripts/test.sh fills)
# Exits 1 when a step failed.
set -uo pipefail
logs=${1:?usage: scripts/test-summary.sh LOGS}

# cargo's output: the "test result:" lines summed, and the #[ignore]d tests
# named by their test binary ("Running ... (target/debug/deps/NAME-HASH)").
cargo_counts() { # log -> "passed failed ignored"
  awk '/^test result:/ {
         for (i = 1; i <= NF; i++) {
           n = $(i - 1) + 0; w = $i; sub(/[;,.]$/, "", w)
           if (w == "passed") p += n; else if (w == "failed") f += n; else if (w == "ignored") g += n
         }
       }
       END { print p + 0, f + 0, g + 0 }' "$1" 2>/dev/null || echo "0 0 0"
}
cargo_ignored() { # log -> "binary test: ignored[, reason]" lines
  awk '/^ *Running / { bin = $NF; sub(/\)$/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin) }
       /^test .* \.\.\. ignored/ {
         line = $0; sub(/^test /, "", line); name = line; sub(/ \.\.\. .*/, "", name)
         reason = line; sub(/.* \.\.\. ignored,? ?/, "", reason)
         print bin " " name ": ignored" (reason == "" ? "" : " (" reason ")")
       }' "$1" 2>/dev/null
}
# Distinct tests in a skip log (one test may skip several parts).
skipped_tests() { cut -f1 "$1" 2>/dev/null | sort -u | grep -c . ; }
status_of() { awk -F'\t' -v s="$1" '$1 == s {print $2}' "$logs/steps" 2>/dev/null; }

echo
echo "== make test: summary (each step's whole output: $logs/)"

# What test-deps installed, and what it could not.
if [ -s "$logs/deps" ]; then
  installed=$(awk -F'\t' '$1 == "installed" {printf "%s%s", sep, $2; sep = ", "}' "$logs/deps")
  if [ -z "$installed" ] && ! grep -q '^missing' "$logs/deps"; then
    installed="nothing (everything the tests use was here)"
  fi
  echo "installed for the tests: ${installed:-nothing}"
  awk -F'\t' '$1 == "missing" {print "not installed: " $2 ": " $3}' "$logs/deps"
fi

failed_steps=() figures=()
passed=0 failed=0 skipped=0

# fmt, clippy: no tests of their own.
for s in fmt clippy; do
  st=$(status_of $s)
  [ -z "$st" ] && continue
  if [ "$st" = 0 ]; then
    figures+=("$s ok")
  else
    figures+=("$s FAILED") failed_steps+=("$s") failed=$((failed + 1))
  fi
done

# unit: cargo test --workspace.
st=$(status_of unit)
if [ -n "$st" ]; then
  read -r p f g < <(cargo_counts "$logs/unit.log")
  k=$(skipped_tests "$logs/skips-unit")
  p=$(( p > k ? p - k : 0 ))
  figures+=("cargo test $p passed, $f failed, $k skipped, $g ignored")
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k + g))
  if [ "$st" != 0 ]; then
    failed_steps+=("unit")
    [ "$f" -eq 0 ] && failed=$((failed + 1))
  fi
fi

# board: the board build's lint and test (make board).
st=$(status_of board)
if [ -n "$st" ]; then
  read -r p f g < <(cargo_counts "$logs/board.log")
  figures+=("board build $p passed, $f failed")
  passed=$((passed + p)) failed=$((failed + f))
  if [ "$st" != 0 ]; then
    failed_steps+=("board")
    [ "$f" -eq 0 ] && failed=$((failed + 1))
  fi
fi

# lab-unit: python3 -m unittest -v ("Ran N tests", "OK (skipped=K)" or
# "FAILED (failures=A, errors=B, skipped=C)").
st=$(status_of lab-unit)
if [ -n "$st" ]; then
  read -r ran f k < <(awk '/^Ran [0-9]+ tests?/ {ran += $2}
      /^(OK|FAILED)/ {
        line = $0
        while (match(line, /(failures|errors|skipped)=[0-9]+/)) {
          kv = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
          n = substr(kv, index(kv, "=") + 1) + 0
          if (kv ~ /^skipped/) k += n; else f += n
        }
      }
      END {print ran + 0, f + 0, k + 0}' "$logs/lab-unit.log" 2>/dev/null)
  p=$(( ran - f - k ))
  figures+=("lab judges $p passed, $f failed, $k skipped")
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
  if [ "$st" != 0 ]; then
    failed_steps+=("lab-unit")
    [ "$f" -eq 0 ] && failed=$((failed + 1))
  fi
fi

# debugfs-tracing: the script's own line ("debugfs-only tracing: passed P,
# failed F, ignored I, skipped S, in T s"; passed without the skipped).
st=$(status_of debugfs-tracing)
if [ -n "$st" ]; then
  line=$(grep -E '^debugfs-only tracing: passed' "$logs/debugfs-tracing.log" | tail -1)
  if [ -n "$line" ]; then
    read -r p f g k < <(sed -E 's/.*passed ([0-9]+), failed ([0-9]+), ignored ([0-9]+), skipped ([0-9]+).*/\1 \2 \3 \4/' <<<"$line")
    figures+=("debugfs-only tracing $p passed, $f failed, $k skipped")
  else
    # Skipped as a whole (not root, no unshare), or stopped before counting.
    p=0 f=0 g=0 k=$(skipped_tests "$logs/skips-debugfs")
    figures+=("debugfs-only tracing $k skipped")
  fi
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
  if [ "$st" != 0 ]; then
    failed_steps+=("debugfs-tracing")
    [ "${f:-0}" -eq 0 ] && failed=$((failed + 1))
  fi
fi

# Every skip with its reason: the cargo tests', the #[ignore]d ones, the lab
# judges', then those of the debugfs-only run that the first run did not have.
list=$(
  {
    sort -u "$logs/skips-unit" 2>/dev/null | awk -F'\t' '{print "  " $1 ": " $2}'
    cargo_ignored "$logs/unit.log" | sed 's/^/  /'
    grep -E " \.\.\. skipped" "$logs/lab-unit.log" 2>/dev/null |
      sed -E "s/^([^ ]+) \(([^)]+)\) \.\.\. skipped '?([^']*)'?/  lab \2: \3/"
    if [ -s "$logs/skips-debugfs" ]; then
      sort -u "$logs/skips-debugfs" | { grep -vxF -f <(sort -u "$logs/skips-unit" 2>/dev/null) || true; } |
        awk -F'\t' '{print "  debugfs-only: " $1 ": " $2}'
      again=$(sort -u "$logs/skips-debugfs" | grep -cxF -f <(sort -u "$logs/skips-unit" 2>/dev/null))
      [ "${again:-0}" -gt 0 ] && echo "  debugfs-only: $again of the above again (the same tests, the same reasons)"
    fi
  }
)
if [ -n "$list" ]; then
  echo "skipped, with the reason:"
  echo "$list"
else
  echo "skipped: none"
fi
echo "$(printf '%s; ' "${figures[@]}" | sed 's/; $//')"
if [ ${#failed_steps[@]} -gt 0 ]; then
  echo "FAILED: ${failed_steps[*]} (see $logs/<step>.log)"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ ${#failed_steps[@]} -eq 0 ]
