#!/usr/bin/env bash
# `make test` on a fresh Debian machine: a clean bookworm chroot (debootstrap)
# with a fresh clone of this repository, the host's Rust toolchain mounted
# read-only, /proc, /sys (with tracefs, debugfs and BTF) and /dev mounted,
# and nothing else: no trace-cmd, chromium, PostgreSQL or babeltrace2. What
# `make test` installs, skips and counts is what a newcomer sees.
#
# Usage (as root):
#   scripts/fresh-machine-test.sh [MAKE-ARGUMENTS...]
#   FRESH_ROOT=DIR: the chroot, made with debootstrap when absent (default
#     ../fresh-chroot beside the clone: it is big, keep it off the work tree).
#   FRESH_RUNS="install=0 install=1" (default): the runs, in order, each a
#     `make test` in the same clone: install=0 with LATLAB_TEST_INSTALL=0
#     (a machine where nothing can be installed: the tests skip with
#     reasons), install=1 as a user's plain `make test` (installs what it can).
#   FRESH_KEEP=1 keeps ROOT afterwards (default: removed).
#   CARGO_REGISTRY=/root/.cargo/registry: a crates cache mounted into the
#     chroot, so that crates.io is not asked again for what it holds.
# Each run's whole output goes to ROOT.log-<run>, beside ROOT; the last lines
# are printed. Every mount is made in a private mount namespace, so none
# outlives the script, and ROOT is removed only when nothing is mounted in it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=${FRESH_ROOT:-$(dirname "$here")/fresh-chroot}
make_args=("$@")
runs=${FRESH_RUNS:-install=0 install=1}
registry=${CARGO_REGISTRY:-$HOME/.cargo/registry}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-machine-test: run it as root (debootstrap, chroot, mounts)" >&2
  exit 1
fi
for tool in debootstrap unshare chroot git; do
  command -v "$tool" >/dev/null || {
    echo "fresh-machine-test: needs $tool: apt-get install debootstrap util-linux coreutils git" >&2
    exit 1
  }
done
[ -x "$cargo_bin/cargo" ] || {
  echo "fresh-machine-test: no Rust toolchain at $cargo_bin (set CARGO_HOME and RUSTUP_HOME)" >&2
  exit 1
}

# What is mounted at or under ROOT, as this mount namespace sees it.
mounted_under() {
  awk -v r="$root" '$5 == r || index($5, r "/") == 1 {print $5}' /proc/self/mountinfo
}

# The base system: what a fresh Debian install has, plus what building latlab
# needs (the README's requirements: a C compiler, make, git; Rust is mounted).
if [ ! -x "$root/usr/bin/make" ]; then
  echo "== debootstrap bookworm into $root"
  mkdir -p "$root"
  debootstrap --include=ca-certificates,gcc,libc6-dev,make,git bookworm "$root" \
    http://deb.debian.org/debian >"$root.debootstrap.log" 2>&1 || {
    tail -20 "$root.debootstrap.log" >&2
    exit 1
  }
fi
cat >"$root/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf"
# No service starts in the chroot when its package is installed (a chroot has
# no init; PostgreSQL's would keep running after the script): Debian's rule.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
echo "== the chroot has: $(chroot "$root" sh -c 'for t in trace-cmd chromium babeltrace2 initdb pg_config cyclictest python3 clang; do command -v $t >/dev/null && printf "%s " $t; done; ls /usr/lib/postgresql 2>/dev/null')(of trace-cmd chromium babeltrace2 initdb pg_config cyclictest python3 clang)"

# A fresh clone, as a user makes it.
rm -rf "$root/root/latlab"
git clone -q "$here" "$root/root/latlab"
echo "== clone: $(git -C "$root/root/latlab" log --oneline -1)"
mkdir -p "$root/root/.rustup" "$root/root/.cargo/bin" "$root/root/.cargo/registry"

inner=$(mktemp)
trap 'rm -f "$inner"' EXIT
cat >"$inner" <<'INNER'
set -euo pipefail
root=$1 rustup_home=$2 cargo_bin=$3 registry=$4 runs=$5; shift 5
# The chroot's / a mount point, as a machine's or a container's is (unshare
# --propagation, which the debugfs-only tests use, needs one).
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount --bind -o ro "$rustup_home" "$root/root/.rustup"
mount -o remount,bind,ro "$root/root/.rustup"
mount --bind -o ro "$cargo_bin" "$root/root/.cargo/bin"
mount -o remount,bind,ro "$root/root/.cargo/bin"
[ -d "$registry" ] && mount --bind "$registry" "$root/root/.cargo/registry"
mountpoint -q "$root/sys/kernel/tracing" || mount -t tracefs nodev "$root/sys/kernel/tracing"
status=0
for run in $runs; do
  install=${run#install=}
  echo "== run $run: make test $* (LATLAB_TEST_INSTALL=$install), $(date -u +%FT%TZ)"
  start=$(date +%s)
  set +e
  env -i HOME=/root PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    RUSTUP_HOME=/root/.rustup CARGO_HOME=/root/.cargo TERM=dumb LANG=C.UTF-8 \
    LATLAB_TEST_INSTALL="$install" \
    chroot "$root" sh -c 'cd /root/latlab && make test "$@"' make-test "$@" >"$root.log-$run" 2>&1 </dev/null
  rc=$?
  set -e
  echo "== run $run: exit $rc after $(( $(date +%s) - start )) s; the last lines:"
  tail -n 40 "$root.log-$run"
  [ "$rc" -eq 0 ] || status=1
done
exit $status
INNER

status=0
unshare --mount --propagation private bash "$inner" "$root" "$rustup_home" "$cargo_bin" \
  "$registry" "$runs" "${make_args[@]}" || status=$?

# Nothing may be left running in the chroot or mounted in it before it goes.
for proc in /proc/[0-9]*; do
  if [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ]; then
    echo "fresh-machine-test: process ${proc#/proc/} ($(cat "$proc/comm")) left in the chroot; ending it" >&2
    kill "${proc#/proc/}" 2>/dev/null || true
  fi
done
if [ "${FRESH_KEEP:-0}" != 1 ]; then
  left=$(mounted_under)
  if [ -n "$left" ]; then
    echo "fresh-machine-test: still mounted, $root kept: $left" >&2
    exit 1
  fi
  rm -rf --one-file-system "$root"
  echo "== removed $root (the logs stay: $root.log-*)"
fi
exit $status
