#!/usr/bin/env bash
# What latlab's tests need beyond Rust, installed when it can be: the peer
# tools the tests compare latlab with (trace-cmd, babeltrace2, cyclictest),
# the browser that opens the HTML reports, a PostgreSQL server for the store
# tests, clang for the BPF object check, man/zsh/fish for the man pages and
# completions, and the Python modules used as real validators and parsers.
# `make test` runs it first and `.ci/run` runs it (with --lab for the QEMU lab
# smoke); one list, here.
#
# tuned is installed for its profile parser only: on a host where systemd
# runs, its daemon is kept from starting (it would apply a profile) and left
# disabled.
#
# It installs only as root, with apt-get (Debian's packages; for a Python
# module, Debian's python3-* package, else pip) and rustup (rustfmt, clippy).
# It never fails the run for a tool it could not install: it says which and
# why, and the tests that need that tool skip with the reason (under
# LATLAB_REQUIRE_PRIVILEGE=1, CI's setting, they fail instead).
#
#   scripts/test-deps.sh [--lab] [--report FILE]
#     --lab          also QEMU and file(1), for make lab-smoke
#     --report FILE  append one line per tool: "installed|present|missing
#                    <TAB> tool (package) <TAB> reason" (make test's summary)
#   LATLAB_TEST_INSTALL=0  install nothing, only say what is missing
set -uo pipefail
cd "$(dirname "$0")/.."

lab=0 report=/dev/null
while [ $# -gt 0 ]; do
  case $1 in
    --lab) lab=1 ;;
    --report) report=$2; shift ;;
    *) echo "usage: scripts/test-deps.sh [--lab] [--report FILE]" >&2; exit 2 ;;
  esac
  shift
done

# Each need: "kind name debian-package pip-package". kind: cmd (a program on
# the PATH), file (name:path, a path that exists; a glob), py (a Python
# module).
needs=(
  "cmd python3 python3 -"                        # the lab's judges (lab-unit), the Python validators
  "cmd trace-cmd trace-cmd -"                    # .dat files compared with trace-cmd report
  "cmd babeltrace2 babeltrace2 -"                # LTTng CTF traces (dump, explain)
  "cmd cyclictest rt-tests -"                    # cyclictest and sigwaittest side by side
  "cmd chromium chromium -"                      # the HTML reports and the dashboard, headless
  "file postgresql:/usr/lib/postgresql/*/bin/initdb postgresql -" # a private server (latlab-testkit)
  "cmd clang clang -"                            # make bpf-check (latlab-watch's object)
  "cmd llvm-strip llvm -"
  "file libbpf-headers:/usr/include/bpf/bpf_helpers.h libbpf-dev -"
  "cmd man man-db -"                             # the man pages render
  "cmd groff groff-base -"
  "cmd zsh zsh -"                                # the completions load
  "cmd fish fish -"
  "cmd setpriv util-linux -"                     # tests that drop root
  "cmd unshare util-linux -"                     # scripts/test-debugfs-tracing.sh
  "py jsonschema python3-jsonschema jsonschema"  # result documents against docs/schema
  "py junitparser python3-junitparser junitparser" # the JUnit file
  "py prometheus_client python3-prometheus-client prometheus_client" # watch --metrics
  # tune's exported profile loaded by tuned's own parser (its modules are
  # Debian python3's, not a pip package: PyPI's "tuned" is another project)
  "file tuned:/usr/lib/python3/dist-packages/tuned/profiles/loader.py tuned -"
)
if [ "$lab" = 1 ]; then
  needs+=(
    "cmd qemu-system-x86_64 qemu-system-x86 -"
    "cmd qemu-system-aarch64 qemu-system-arm -"
    "cmd file file -"
  )
fi

have() { # kind name
  case $1 in
    cmd) command -v "$2" >/dev/null ;;
    file) compgen -G "${2#*:}" >/dev/null ;;
    py) command -v python3 >/dev/null && python3 -c "import $2" 2>/dev/null ;;
  esac
}

# Why nothing can be installed here, or nothing when it can.
why_not=""
if [ "${LATLAB_TEST_INSTALL:-1}" = 0 ]; then
  why_not="LATLAB_TEST_INSTALL=0"
elif [ "$(id -u)" -ne 0 ]; then
  why_not="not root"
elif ! command -v apt-get >/dev/null; then
  why_not="no apt-get"
fi

declare -A was_missing=()
missing=()
for need in "${needs[@]}"; do
  read -r kind name _ <<<"$need"
  have "$kind" "$name" || { missing+=("$need"); was_missing[$name]=1; }
done

failed_output=""
apt_install() { # packages...: true when apt-get installed them all
  local out
  [ -n "$why_not" ] && return 1
  # The lab's QEMU without its recommends (GUI, firmware).
  local flags=()
  [[ " $* " == *" qemu-system-"* ]] && flags=(--no-install-recommends)
  # tuned's daemon must not start and tune this machine: masked for this
  # boot while it installs, then disabled.
  local tuned_daemon=0
  if [[ " $* " == *" tuned "* ]] && [ -d /run/systemd/system ]; then
    tuned_daemon=1
    systemctl mask --runtime tuned.service >/dev/null 2>&1
  fi
  out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${flags[@]}" "$@" 2>&1)
  local rc=$?
  if [ "$tuned_daemon" = 1 ]; then
    systemctl disable tuned.service >/dev/null 2>&1
    systemctl unmask --runtime tuned.service >/dev/null 2>&1
  fi
  [ "$rc" = 0 ] && return 0
  failed_output=$(grep -E '^(E|W):' <<<"$out" | tail -1)
  [ -n "$failed_output" ] || failed_output=$(tail -1 <<<"$out")
  return 1
}

# All Debian packages at once (those the archive has: a Python module it
# lacks goes to pip); if that fails, one at a time, so that one package that
# does not install keeps no other out.
if [ ${#missing[@]} -gt 0 ] && [ -z "$why_not" ]; then
  declare -A seen=()
  packages=()
  for need in "${missing[@]}"; do
    read -r _ _ package _ <<<"$need"
    [ -n "${seen[$package]:-}" ] && continue
    seen[$package]=1
    packages+=("$package")
  done
  apt_updated=1
  apt-get update -qq >/dev/null 2>&1 || echo "test-deps: apt-get update failed; trying the package lists there are"
  available=()
  for package in "${packages[@]}"; do
    apt-cache show --no-all-versions "$package" >/dev/null 2>&1 && available+=("$package")
  done
  if [ ${#available[@]} -gt 0 ]; then
    echo "test-deps: apt-get install ${available[*]}"
    if ! apt_install "${available[@]}"; then
      for package in "${available[@]}"; do apt_install "$package"; done
    fi
  fi
fi

installed=() not_installed=()
for need in "${needs[@]}"; do
  read -r kind name package pip <<<"$need"
  label=${name%%:*}
  if [ -z "${was_missing[$name]:-}" ]; then
    printf 'present\t%s\t\n' "$label" >>"$report"
    continue
  fi
  # A Python module Debian does not package (or not for this python3): pip.
  if [ "$kind" = py ] && ! have py "$name" && [ -z "$why_not" ] && [ "$pip" != - ]; then
    python3 -m pip install -q --break-system-packages "$pip" >/dev/null 2>&1 ||
      python3 -m pip install -q "$pip" >/dev/null 2>&1 ||
      failed_output="pip install $pip failed (is pip installed? apt-get install python3-pip)"
  fi
  if have "$kind" "$name"; then
    installed+=("$label ($package)")
    printf 'installed\t%s (%s)\t\n' "$label" "$package" >>"$report"
  else
    how="apt-get install $package"
    [ "$kind" = py ] && how="apt-get install $package, or pip install $pip"
    [ "$why_not" = "not root" ] && how="sudo $how"
    reason=${why_not:-${failed_output:-not installed}}
    not_installed+=("$label: $reason ($how)")
    printf 'missing\t%s (%s)\t%s: %s\n' "$label" "$package" "$reason" "$how" >>"$report"
  fi
done

# rustfmt and clippy for make fmt and make clippy, from the toolchain's rustup.
for component in rustfmt clippy; do
  probe=fmt
  [ "$component" = clippy ] && probe=clippy
  cargo "$probe" --version >/dev/null 2>&1 && continue
  if [ "${LATLAB_TEST_INSTALL:-1}" != 0 ] && command -v rustup >/dev/null &&
    rustup component add "$component" >/dev/null 2>&1; then
    installed+=("$component (rustup)")
    printf 'installed\t%s (rustup)\t\n' "$component" >>"$report"
  else
    not_installed+=("$component: rustup component add $component")
    printf 'missing\t%s (rustup)\t%s\n' "$component" "rustup component add $component" >>"$report"
  fi
done

if [ ${#installed[@]} -gt 0 ]; then
  echo "test-deps: installed $(printf '%s, ' "${installed[@]}" | sed 's/, $//')"
fi
for line in "${not_installed[@]}"; do
  echo "test-deps: not installed: $line; the tests that need it skip"
done
[ ${#installed[@]} -eq 0 ] && [ ${#not_installed[@]} -eq 0 ] &&
  echo "test-deps: everything the tests use is here"
exit 0
