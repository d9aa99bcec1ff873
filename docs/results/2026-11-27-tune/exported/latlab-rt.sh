#!/bin/sh
# latlab-rt.sh, written by latlab tune: the fixes it measured and kept.
#   sh latlab-rt.sh start   apply them, each old value saved first to
#                           /run/latlab-rt.saved (or $LATLAB_RT_SAVED); a second
#                           start is refused until stop (so is tuned's [script]
#                           while this one is started: they share the file)
#   sh latlab-rt.sh stop    put the old values back, last first
# Threads are matched by name (their pids do not outlive a boot); IRQs
# by number, as the boot that measured them numbered them.
# At boot only (put these on the kernel command line; this script cannot):
#   nohz_full=1: timer callback tcp_pace_kick (soft hrtimer, in the HRTIMER softirq): TCP pacing of a socket whose sends run on this CPU (a congestion control that paces, such as bbr, without the fq qdisc): each expiry sends the flow's next packets
#   rcu_nocbs=1: softirq RCU
#   irqaffinity=0: interrupt handler virtio1-req.0
#   rcutree.kthread_prio=94: softirq RCU
#   preempt=full: ld-io0:31577 held the CPU in non-preemptible kernel code
#   skew_tick=1: timer callback tcp_pace_kick (soft hrtimer, in the HRTIMER softirq): TCP pacing of a socket whose sends run on this CPU (a congestion control that paces, such as bbr, without the fq qdisc): each expiry sends the flow's next packets
# shellcheck disable=SC2317,SC2015 # not every function is used; A && B || warn
set -u
me=latlab-rt.sh
saved=${LATLAB_RT_SAVED:-/run/latlab-rt.saved}
tab=$(printf '\t')
failed=0
warn() { echo "$me: $*" >&2; failed=1; }
# put FILE VALUE: save FILE's value, then write VALUE (a [selected] word is the value).
put() {
  [ -w "$1" ] || { warn "$1: not here or not writable; skipped"; return; }
  old=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$1")
  [ -n "$old" ] || old=$(cat "$1")
  printf 'file\t%s\t%s\n' "$1" "$old" >>"$saved"
  echo "$2" >"$1" 2>/dev/null || warn "$1 refused $2"
}
# tids NAME: the threads of that name.
tids() {
  for f in /proc/[0-9]*/task/[0-9]*/comm; do
    [ "$(cat "$f" 2>/dev/null)" = "$1" ] || continue
    t=${f%/comm}
    echo "${t##*/}"
  done
}
# affinity NAME CPUS: every thread of that name onto CPUS.
affinity() {
  for t in $(tids "$1"); do
    old=$(taskset -pc "$t" 2>/dev/null | sed 's/.*: //') || continue
    printf 'affinity\t%s\t%s\n' "$t" "$old" >>"$saved"
    taskset -pc "$2" "$t" >/dev/null 2>&1 || warn "thread $t ($1) refused affinity $2"
  done
}
# policy NAME FLAG PRIO: every thread of that name to chrt FLAG PRIO.
policy() {
  for t in $(tids "$1"); do
    old=$(chrt -p "$t" 2>/dev/null | sed -n \
      -e 's/.*policy: SCHED_FIFO.*/-f/p' -e 's/.*policy: SCHED_RR.*/-r/p' \
      -e 's/.*policy: SCHED_OTHER.*/-o/p' -e 's/.*policy: SCHED_BATCH.*/-b/p' \
      -e 's/.*policy: SCHED_IDLE.*/-i/p' -e 's/.*priority: \([0-9]*\).*/\1/p' | tr '\n' ' ')
    case $old in -*) ;; *) continue ;; esac
    printf 'policy\t%s\t%s\n' "$t" "$old" >>"$saved"
    chrt "$2" -p "$3" "$t" 2>/dev/null || warn "thread $t ($1) refused chrt $2 $3"
  done
}
# partition CPUS: a cgroup v2 isolated cpuset partition of CPUS.
partition() {
  root=/sys/fs/cgroup cg=/sys/fs/cgroup/latlab-rt
  grep -qw cpuset "$root/cgroup.controllers" 2>/dev/null ||
    { warn "no cgroup v2 cpuset controller: partition of $1 not made"; return; }
  grep -qw cpuset "$root/cgroup.subtree_control" && had=1 || had=0
  echo +cpuset >"$root/cgroup.subtree_control" && mkdir "$cg" &&
    printf 'cpuset\t%s\t%s\n' "$cg" "$had" >>"$saved" &&
    echo "$1" >"$cg/cpuset.cpus" && echo isolated >"$cg/cpuset.cpus.partition" ||
    { warn "partition of $1 refused"; return; }
  echo "$me: CPUs $1 are an isolated partition: start the real-time task in it (echo PID >$cg/cgroup.procs)"
}
stop() {
  [ -f "$saved" ] || { echo "$me: nothing to restore ($saved is not there)"; return; }
  sed -n '1!G;h;$p' "$saved" >"$saved.last-first" || exit 1
  while IFS=$tab read -r kind what old; do
    case $kind in
    file) echo "$old" >"$what" 2>/dev/null || warn "$what refused $old" ;;
    affinity) taskset -pc "$old" "$what" >/dev/null 2>&1 || warn "thread $what: affinity $old refused" ;;
    policy)
      # shellcheck disable=SC2086 # the flag and the priority, two words
      set -- $old
      chrt "$1" -p "$2" "$what" 2>/dev/null || warn "thread $what: chrt $old refused" ;;
    cpuset)
      while read -r p <"$what/cgroup.procs" && [ -n "$p" ]; do echo "$p" >/sys/fs/cgroup/cgroup.procs || break; done
      rmdir "$what" || warn "$what not removed"
      [ "$old" = 1 ] || echo -cpuset >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ;;
    esac
  done <"$saved.last-first"
  rm -f "$saved" "$saved.last-first"
}
start() {
  [ ! -e "$saved" ] || { echo "$me: already started: $saved holds the old values (stop first)" >&2; exit 1; }
  : >"$saved" || exit 1
  # ld-io0:31577 held the CPU in non-preemptible kernel code (measured: helped by more than the noise)
  partition '1'
}
if [ "$(id -u)" != 0 ]; then
  echo "$me: run as root (sudo sh $0 ${1:-start})" >&2
  exit 1
fi
case ${1:-start} in
start) start ;;
stop) stop ;;
*) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac
exit $failed
