#!/bin/sh
# Sends output/result.txt's `lava-test-case` lines to LAVA when Linaro's
# utils/send-to-lava.sh is not at hand: inside a LAVA test shell each line
# is the command itself; elsewhere they are printed.
#
#   send-results.sh output/result.txt
set -u
while read -r line; do
  case "$line" in
    "lava-test-case "*) ;;
    *) continue ;;
  esac
  # The names latlab prints hold only letters, digits, '.', '_' and '-',
  # and the other words are fixed or numbers: safe to split.
  # shellcheck disable=SC2086
  set -- $line
  shift
  if command -v lava-test-case >/dev/null 2>&1; then
    lava-test-case "$@"
  else
    echo "lava-test-case $*"
  fi
done < "$1"
