#!/bin/sh
# Runs latlab on a board for the LAVA test definition latlab.yaml and
# writes output/result.txt: one `lava-test-case ...` line per requirement
# (latlab run --lava), plus the JUnit file and the result JSON.
#
#   run-latlab.sh -b LATLAB [-u URL] [-d DURATION] [-l LOAD] [-r "REQUIREMENTS"]
#                 [-e "EXTRA ARGS"] [-p PUSH_URL -t TOKEN]
#
# POSIX sh only: boards run busybox.
set -u
LATLAB=/usr/local/bin/latlab URL="" DURATION=60s LOAD=none REQS="" EXTRA="" PUSH="" TOKEN=""
while getopts "b:u:d:l:r:e:p:t:" opt; do
  case "$opt" in
    b) LATLAB=$OPTARG ;; u) URL=$OPTARG ;; d) DURATION=$OPTARG ;; l) LOAD=$OPTARG ;;
    r) REQS=$OPTARG ;; e) EXTRA=$OPTARG ;; p) PUSH=$OPTARG ;; t) TOKEN=$OPTARG ;;
    *) echo "usage: $0 -b LATLAB [-u URL] [-d DURATION] [-l LOAD] [-r REQS] [-e EXTRA] [-p URL -t TOKEN]" >&2; exit 1 ;;
  esac
done
OUT=./output
mkdir -p "$OUT"
if [ -n "$URL" ]; then
  LATLAB=$OUT/latlab
  if ! { wget -q -O "$LATLAB" "$URL" || curl -sfL -o "$LATLAB" "$URL"; }; then
    echo "lava-test-case latlab-fetch --result fail" > "$OUT/result.txt"
    exit 0
  fi
  chmod +x "$LATLAB"
fi
if ! "$LATLAB" --version; then
  echo "lava-test-case latlab-installed --result fail" > "$OUT/result.txt"
  exit 0
fi
set --
if [ -n "$PUSH" ]; then
  printf '%s\n' "$TOKEN" > "$OUT/token"
  set -- --push "$PUSH" --token-file "$OUT/token" --spool /var/lib/latlab/spool
fi
# shellcheck disable=SC2086 # REQS and EXTRA are lists of options
"$LATLAB" run --quiet --duration "$DURATION" --load "$LOAD" $REQS $EXTRA \
  --output-dir "$OUT/results" --no-history --junit "$OUT/latlab-junit.xml" \
  --json "$OUT/result.json" --lava "$@" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
status=$?
grep '^lava-test-case ' "$OUT/stdout.txt" > "$OUT/result.txt"
# Exit 2 (a requirement missed) is a result, not an error of the test;
# anything else without test cases means latlab could not measure.
if [ ! -s "$OUT/result.txt" ]; then
  echo "lava-test-case latlab-run --result fail" > "$OUT/result.txt"
  cat "$OUT/stderr.txt" >&2
fi
echo "latlab exit status $status"
cat "$OUT/result.txt"
exit 0
