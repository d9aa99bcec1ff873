//! The POSIX shell script of the kept fixes, for a system without tuned
//! (and for the tuned profile's `[script]`, which runs it with start/stop).
//! `start` saves each old value before it writes the new one; `stop` puts
//! them back, last first. Threads are matched by name: a pid does not
//! outlive a boot.

use latlab_fix::Knob;

use super::{cpu_mask, Kept};
use crate::result::BootParameter;

/// The shell functions every script has: save-then-write, and the restore.
const PRELUDE: &str = r#"# shellcheck disable=SC2317,SC2015 # not every function is used; A && B || warn
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
"#;

/// `'text'` for the shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// chrt's flag for a policy value (`fifo:50` -> `-f`, `50`).
fn chrt_flag(value: &str) -> Option<(&'static str, &str)> {
    let (name, prio) = value.split_once(':')?;
    let flag = match name {
        "fifo" => "-f",
        "rr" => "-r",
        "other" => "-o",
        "batch" => "-b",
        "idle" => "-i",
        _ => return None,
    };
    prio.parse::<u32>().ok().map(|_| (flag, prio))
}

/// The shell command that applies one kept fix, or why none does.
fn command(k: &Kept) -> Result<String, String> {
    match &k.knob {
        Knob::TaskAffinity { comm, .. } => {
            Ok(format!("affinity {} {}", quote(comm), quote(&k.value)))
        }
        Knob::TaskPriority { comm, .. } => match chrt_flag(&k.value) {
            Some((flag, prio)) => Ok(format!("policy {} {flag} {prio}", quote(comm))),
            None => Err(format!("{}: policy {} not known", k.knob, k.value)),
        },
        Knob::CpusetPartition => Ok(format!("partition {}", quote(&k.value))),
        Knob::BootParameter { name } => Err(format!("boot parameter {name}: at boot only")),
        Knob::WorkqueueCpumask => match cpu_mask(&k.value) {
            Some(mask) => Ok(format!("put {} {mask}", quote(&k.knob.to_string()))),
            None => Err(format!("{}: {} is not a CPU list", k.knob, k.value)),
        },
        knob => match knob.path() {
            Some(path) => Ok(format!("put {} {}", quote(&path), quote(&k.value))),
            None => Err(format!("{knob}: no file to write")),
        },
    }
}

/// A POSIX sh script that applies each kept runtime fix (`start`, the
/// default) and restores the old values (`stop`); it refuses to run as
/// anyone but root. The boot parameters are listed in a comment: a script
/// cannot apply them.
pub fn shell_script(kept: &[Kept], boot: &[BootParameter]) -> String {
    let mut out = String::from(
        "#!/bin/sh\n\
         # latlab-rt.sh, written by latlab tune: the fixes it measured and kept.\n\
         #   sh latlab-rt.sh start   apply them, each old value saved first to\n\
         #                           /run/latlab-rt.saved (or $LATLAB_RT_SAVED); a second\n\
         #                           start is refused until stop (so is tuned's [script]\n\
         #                           while this one is started: they share the file)\n\
         #   sh latlab-rt.sh stop    put the old values back, last first\n\
         # Threads are matched by name (their pids do not outlive a boot); IRQs\n\
         # by number, as the boot that measured them numbered them.\n",
    );
    if !boot.is_empty() {
        out.push_str(
            "# At boot only (put these on the kernel command line; this script cannot):\n",
        );
        for p in boot {
            out.push_str(&format!("#   {}: {}\n", p.text, super::one_line(&p.why)));
        }
    }
    out.push_str(PRELUDE);
    out.push_str("start() {\n");
    out.push_str("  [ ! -e \"$saved\" ] || { echo \"$me: already started: $saved holds the old values (stop first)\" >&2; exit 1; }\n");
    out.push_str("  : >\"$saved\" || exit 1\n");
    let mut any = false;
    for k in kept {
        match command(k) {
            Ok(line) => {
                any = true;
                out.push_str(&format!("  # {}\n  {line}\n", super::one_line(&k.why)));
            }
            Err(why) => out.push_str(&format!("  # not applied: {why}\n")),
        }
    }
    if !any {
        out.push_str("  : # no runtime fix was kept\n");
    }
    out.push_str("}\n");
    out.push_str(
        "if [ \"$(id -u)\" != 0 ]; then\n  echo \"$me: run as root (sudo sh $0 ${1:-start})\" >&2\n  exit 1\nfi\n\
         case ${1:-start} in\nstart) start ;;\nstop) stop ;;\n*) echo \"usage: $0 [start|stop]\" >&2; exit 2 ;;\nesac\n\
         exit $failed\n",
    );
    out
}
