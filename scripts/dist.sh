#!/usr/bin/env bash
# make dist: latlab binaries a board can run as they are: static (musl), one
# file each, dist/latlab-<version>-<target>, with dist/SHA256SUMS.
#
#   scripts/dist.sh          install the build tools if missing, build, list sizes
#   scripts/dist.sh tools    only install the build tools
#   scripts/dist.sh check    run each binary (qemu-user for foreign ones): --version and a 1 s run
#
# The route: cargo-zigbuild with zig as C compiler and linker (both from
# PyPI). zig ships musl 1.2 for every target, so SQLite (rusqlite's bundled
# copy) and the Rust code link into one static file, with no cross gcc.
#   - x86_64 and aarch64: rustup's prebuilt musl standard library (stable).
#   - armv7 (hard float) and riscv64: rustup has no prebuilt musl standard
#     library for them, and armv7's would have a 32-bit time_t anyway, so the
#     standard library is built from source (-Zbuild-std, on a pinned
#     nightly, a few minutes). armv7 gets 64-bit time_t everywhere, std
#     included: the libc crate's musl 1.2 mode (RUST_LIBC_UNSTABLE_MUSL_V1_2_3
#     for the std's libc, --cfg libc_unstable_musl_v1_2 for ours), so no
#     time_t overflows in 2038 and no nanoseconds are truncated.
#
# The board binaries are built without latlab's `serve` feature: every board
# command (run, push, ...) is there, `latlab serve` and `--db postgres://`
# say the build has no server or PostgreSQL (docs/building.md).
#
# Environment: DIST_TARGETS (default: all four below), DIST_NIGHTLY (the
# nightly for -Zbuild-std), CARGO_TARGET_DIR (default target/), DIST_BIN
# (the workspace binary to build, default latlab; lab/run builds its
# lab-wire this way), DIST_FEATURES (features added to the board build:
# serve for a full one, postgres for a board that writes to PostgreSQL)
# and DIST_DIR (where it lands, default dist/).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${DIST_TARGETS:-x86_64-unknown-linux-musl aarch64-unknown-linux-musl armv7-unknown-linux-musleabihf riscv64gc-unknown-linux-musl}
NIGHTLY=${DIST_NIGHTLY:-nightly-2026-05-19}
ZIGLANG=ziglang==0.17.1
ZIGBUILD=cargo-zigbuild==0.24.0
TARGET_DIR=${CARGO_TARGET_DIR:-target}
BIN=${DIST_BIN:-latlab}
OUT=${DIST_DIR:-dist}
VENV=${XDG_CACHE_HOME:-$HOME/.cache}/latlab-dist/venv
VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)

say() { printf 'dist: %s\n' "$*" >&2; }
run() {
    say "+$(printf ' %q' "$@")"
    "$@"
}
die() {
    say "error: $*"
    exit 1
}

# Targets whose standard library rustup does not ship (or ships with 32-bit time).
builds_std() {
    case $1 in
    armv7-unknown-linux-musleabihf | riscv64gc-unknown-linux-musl) return 0 ;;
    *) return 1 ;;
    esac
}

have_zig() { zig version >/dev/null 2>&1 || python3 -m ziglang version >/dev/null 2>&1; }
have_zigbuild() { cargo zigbuild --help >/dev/null 2>&1; }

tools() {
    [ -d "$VENV/bin" ] && export PATH="$VENV/bin:$PATH"
    if ! have_zig || ! have_zigbuild; then
        # The system Python may refuse packages (PEP 668): then a private venv.
        if ! run python3 -m pip install --quiet "$ZIGLANG" "$ZIGBUILD"; then
            run python3 -m venv "$VENV" ||
                die "no pip and no venv: install python3-venv (apt-get install python3-venv) or pip install $ZIGLANG $ZIGBUILD"
            run "$VENV/bin/pip" install --quiet "$ZIGLANG" "$ZIGBUILD"
            export PATH="$VENV/bin:$PATH"
        fi
        if ! have_zig || ! have_zigbuild; then
            die "zig or cargo-zigbuild still missing after pip install $ZIGLANG $ZIGBUILD"
        fi
    fi
    local installed prebuilt=() need_nightly=
    installed=$(rustup target list --installed)
    for t in $TARGETS; do
        if builds_std "$t"; then
            need_nightly=1
        elif ! grep -qx "$t" <<<"$installed"; then
            prebuilt+=("$t")
        fi
    done
    if [ ${#prebuilt[@]} -gt 0 ]; then
        run rustup target add "${prebuilt[@]}"
    fi
    if [ -n "$need_nightly" ] &&
        ! rustup component list --toolchain "$NIGHTLY" --installed 2>/dev/null | grep -q '^rust-src'; then
        run rustup toolchain install "$NIGHTLY" --profile minimal --component rust-src
    fi
}

build() {
    local t=$1 features=()
    # A board binary: latlab without its `serve` feature (the server, axum,
    # tokio, the PostgreSQL client): a board pushes, it never serves.
    # DIST_FEATURES adds features back (DIST_FEATURES=serve: a full build).
    if [ "$BIN" = latlab ]; then
        features=(--no-default-features)
    fi
    if [ -n "${DIST_FEATURES:-}" ]; then
        features+=(--features "$DIST_FEATURES")
    fi
    if builds_std "$t"; then
        # zig brings crt1.o and libc.a: rustc's self-contained copies do not
        # exist for a standard library built from source.
        local flags="${RUSTFLAGS:-} -C link-self-contained=no"
        local time64=()
        if [ "$t" = armv7-unknown-linux-musleabihf ]; then
            flags="$flags --cfg libc_unstable_musl_v1_2"
            time64=(RUST_LIBC_UNSTABLE_MUSL_V1_2_3=1)
        fi
        # The standard library is built here with the profile's opt-level,
        # and the measuring loop runs through it (clocks, sleeps): "s" as
        # before, not the profile's "z" (in two A/B boots of the lab's armv7
        # guest the run's p50 read 221 us both times with "z", 179 and 197
        # us with "s": not proven, not worth the risk; 6.0 MiB either way).
        run env "${time64[@]}" RUSTFLAGS="$flags" CARGO_PROFILE_DIST_OPT_LEVEL=s \
            cargo "+$NIGHTLY" zigbuild --locked --profile dist \
            --bin "$BIN" --target "$t" "${features[@]}" -Zbuild-std=std,panic_abort
    else
        run cargo zigbuild --locked --profile dist --bin "$BIN" --target "$t" "${features[@]}"
    fi
}

is_static() {
    command -v file >/dev/null || return 0
    file -b "$1" | grep -Eq 'statically linked|static-pie linked'
}

dist() {
    tools
    rm -rf "$OUT"
    mkdir -p "$OUT"
    for t in $TARGETS; do
        build "$t"
        cp "$TARGET_DIR/$t/dist/$BIN" "$OUT/$BIN-$VERSION-$t"
        is_static "$OUT/$BIN-$VERSION-$t" || die "$OUT/$BIN-$VERSION-$t is not statically linked"
    done
    (cd "$OUT" && sha256sum "$BIN"-* >SHA256SUMS)
    echo
    echo "$OUT/ (static, stripped; copy one file to the board):"
    for f in "$OUT/$BIN"-*; do
        stat -c '%s %n' "$f" | awk '{ printf "  %-52s %9d bytes  %4.1f MiB\n", $2, $1, $1 / 1048576 }'
    done
    echo "  $OUT/SHA256SUMS"
}

# The qemu-user binary that runs a target's code on this machine ("" = natively).
runner() {
    local arch=${1%%-*}
    case $arch in
    "$(uname -m)") echo "" ;;
    armv7) echo qemu-arm ;;
    riscv64gc) echo qemu-riscv64 ;;
    *) echo "qemu-$arch" ;;
    esac
}

check() {
    local failed=0
    # latlab-rt's timed-wait tests on 32-bit ARM with 64-bit time, built as the
    # armv7 binary is: std's own timed waits end early there (they pass a
    # 64-bit-time timespec to the old futex call; see latlab_rt::wait), so
    # the tests that ours do not run where the defect is. Also says whether
    # std's park_timeout still has it.
    time64_waits() {
        local t=armv7-unknown-linux-musleabihf exe
        [ -d "$VENV/bin" ] && export PATH="$VENV/bin:$PATH"
        if ! have_zigbuild; then
            echo "  timed waits: skipped, cargo-zigbuild not found (scripts/dist.sh tools)"
            return 0
        fi
        exe=$(RUST_LIBC_UNSTABLE_MUSL_V1_2_3=1 \
            RUSTFLAGS="${RUSTFLAGS:-} -C link-self-contained=no --cfg libc_unstable_musl_v1_2" \
            cargo "+$NIGHTLY" zigbuild --locked --tests -p latlab-rt --target "$t" \
            -Zbuild-std=std,panic_abort --message-format=json 2>/dev/null |
            sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
        if [ -z "$exe" ]; then
            echo "  timed waits: FAILED to build latlab-rt's tests for $t"
            return 1
        fi
        if ! qemu-arm "$exe" --quiet wait:: >/dev/null 2>&1; then
            qemu-arm "$exe" wait:: 2>&1 | sed 's/^/    /'
            echo "  timed waits: FAILED (latlab_rt::wait tests under qemu-arm)"
            return 1
        fi
        echo "  ok: latlab_rt::wait tests (deadlines between whole seconds kept) under qemu-arm"
        if qemu-arm "$exe" --quiet --ignored std_park_timeout >/dev/null 2>&1; then
            echo "  note: std's park_timeout kept its deadline: std may be fixed, latlab_rt::wait could go"
        else
            echo "  note: std's park_timeout still returns before its deadline here (latlab_rt::wait works around it)"
        fi
    }
    for f in "$OUT"/latlab-"$VERSION"-*; do
        [ -e "$f" ] || die "no binaries in $OUT/: run make dist first"
        local t=${f#"$OUT"/latlab-"$VERSION"-} q
        q=$(runner "$t")
        command -v file >/dev/null && echo "$(basename "$f"): $(file -b "$f")"
        if [ -n "$q" ] && ! command -v "$q" >/dev/null; then
            echo "  skipped: $q not found (apt-get install qemu-user)"
            continue
        fi
        if $q "$f" --version && $q "$f" run --duration 1s --cpus 0 --no-save --quiet --allow-unprivileged >/dev/null; then
            echo "  ok: --version and a 1 s run${q:+ under $q}"
        else
            echo "  FAILED${q:+ under $q}"
            failed=1
        fi
        if [ "$t" = armv7-unknown-linux-musleabihf ]; then
            time64_waits || failed=1
        fi
    done
    return $failed
}

case ${1:-dist} in
dist) dist ;;
tools) tools ;;
check) check ;;
*) die "usage: $0 [dist|tools|check]" ;;
esac
