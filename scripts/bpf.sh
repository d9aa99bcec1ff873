#!/usr/bin/env bash
# The BPF object of `latlab watch` (crates/latlab-watch/bpf/watch.bpf.c ->
# watch.bpf.o beside it; inside the crate, so that it packs).
#   scripts/bpf.sh        rebuild the object (make bpf)
#   scripts/bpf.sh check  rebuild into a temporary file and compare it with the
#                         committed object (make bpf-check); exit 0 with a note
#                         when this clang is not the one that made it.
# The object is committed (the crate embeds it), so building latlab needs no
# clang. clang's output is deterministic for one version and one source: the
# object is compiled with the directory mapped to . and DWARF stripped (llvm-strip -g
# keeps the .BTF sections CO-RE needs), so no path of this machine is in it.
# CLANG_VERSION beside it names the clang that made the committed object.
set -euo pipefail
cd "$(dirname "$0")/../crates/latlab-watch"
mode=${1:-build}
clang=${BPF_CLANG:-clang}
strip=${BPF_STRIP:-llvm-strip}
if ! command -v "$clang" >/dev/null || ! command -v "$strip" >/dev/null; then
  echo "scripts/bpf.sh: needs clang and llvm-strip: apt-get install clang llvm libbpf-dev" >&2
  [ "$mode" = check ] && { echo "bpf check skipped: no clang"; exit 0; }
  exit 1
fi
multiarch=$(${CC:-cc} -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu")
if [ ! -e /usr/include/bpf/bpf_helpers.h ]; then
  echo "scripts/bpf.sh: needs libbpf's headers: apt-get install libbpf-dev" >&2
  [ "$mode" = check ] && { echo "bpf check skipped: no libbpf-dev"; exit 0; }
  exit 1
fi
version=$("$clang" --version | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$clang" -O2 -g -target bpf -I"/usr/include/$multiarch" -Wall -Werror -fdebug-prefix-map="$PWD"=. \
  -c bpf/watch.bpf.c -o "$tmp/full.o"
"$strip" -g "$tmp/full.o" -o "$tmp/watch.bpf.o"
case $mode in
  build)
    cp "$tmp/watch.bpf.o" bpf/watch.bpf.o
    echo "$version" > bpf/CLANG_VERSION
    echo "bpf/watch.bpf.o rebuilt with $version"
    ;;
  check)
    if [ "$version" != "$(cat bpf/CLANG_VERSION)" ]; then
      echo "bpf check skipped: $version is not the clang that made the committed object ($(cat bpf/CLANG_VERSION)); it compiled the source without errors"
      exit 0
    fi
    if ! cmp -s "$tmp/watch.bpf.o" bpf/watch.bpf.o; then
      echo "bpf/watch.bpf.o is not what bpf/watch.bpf.c compiles to: run make bpf and commit it" >&2
      exit 1
    fi
    echo "bpf/watch.bpf.o is current ($version)"
    ;;
  *) echo "usage: scripts/bpf.sh [check]" >&2; exit 2 ;;
esac
