# shellcheck shell=bash
# Shared by the bench scripts that time watch's BPF programs in place with a
# patch to the BPF source (bench/watch-path-cost.sh, bench/watch-read-cost.sh),
# sourced with the scripts' short name as its argument: the checks for root
# and the tools, a temporary worktree of HEAD in $tree (removed on exit, with
# the watch whose pid is in $w and the cyclictest in $ct stopped), $here (the
# checkout) and machine_line, the first line of the scripts' output.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $(id -u) -eq 0 ]] || { echo "run as root: BPF and SCHED_FIFO need it" >&2; exit 1; }
for t in cyclictest bpftool jq clang; do command -v $t >/dev/null || { echo "needs $t (apt-get install rt-tests bpftool jq clang llvm libbpf-dev)" >&2; exit 1; }; done
tree=$(mktemp -d "/tmp/latlab-$1.XXXXXX")
ct='' w=''
cleanup() {
    [[ -n $w ]] && kill -INT "$w" 2>/dev/null && wait "$w" 2>/dev/null
    [[ -n $ct ]] && kill "$ct" 2>/dev/null
    git -C "$here" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
}
trap cleanup EXIT
git -C "$here" worktree add --detach "$tree" HEAD >/dev/null 2>&1

# When, where and how busy: the first line of a bench's output.
machine_line() {
    echo "$(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}
