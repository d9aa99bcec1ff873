#!/usr/bin/env bash
# latlab run vs cyclictest, one timer source at a time, same CPU and settings.
#
#   bench/timers-vs-cyclictest.sh                 (as root; needs rt-tests)
#   INTERVAL=1ms LOOPS=5000 CPU=1 PRIO=95 bench/timers-vs-cyclictest.sh
#
# For every wake-up source both tools have, latlab and cyclictest run one after
# the other: one SCHED_FIFO thread pinned on CPU, mlockall, /dev/cpu_dma_latency
# held at 0 (both tools' default), the same interval and number of loops.
#
#   clock_nanosleep   latlab --timer clock-nanosleep   cyclictest (its default; -n where it exists)
#   POSIX timer       latlab --timer posix-timer       cyclictest -x (--posix_timers)
#   nanosleep         latlab --timer nanosleep         cyclictest -s (--system: sys_nanosleep)
#   setitimer         latlab --timer itimer            cyclictest -s -x if it still means sys_setitimer
#   timerfd           latlab --timer timerfd           (cyclictest has none; latlab only)
#
# p50/p99 of both tools come from their cyclictest-format histogram text (1 us
# rows, nearest rank), derived by one routine; min/avg/max are each tool's own
# figures (latlab --json, cyclictest --json). With TRACE=1 (default) each run is
# recorded with the kernel trace (latlab: --trace --explain; cyclictest: under
# `latlab record`), and `latlab explain` gives the kernel's view of the same
# thread (armed hrtimer expiry to the switch to the task): the script says
# which tool's figures agree with it. The flags column marks figures that
# cannot be right (negative latencies, min 0, an overflowed average, a min
# below the machine's floor, disagreement with the trace) and runs that shared
# the machine with another program's real-time threads (sampled with ps). For
# the timers the kernel re-arms in the task's own context (posix timer and
# SIGALRM when the signal is dequeued, timerfd at the read) it counts, from the
# trace, how often the next expiry fired before the task blocked again: the
# window in which a tool that places the next expiry by a clock read (as
# cyclictest -x does) loses step with the kernel. Last: latlab/cyclictest
# ratios of p50, p99 and max per source.
#
# Environment: INTERVAL (100us; us, ms or s, whole microseconds), LOOPS (20000),
# CPU (0), PRIO (95), TRACE (1), HIST_US (20000, histogram range of both tools),
# LATLAB (target/release/latlab), BUILD (1: cargo build --release first),
# KEEP (0; 1 keeps the raw files and prints where).
set -euo pipefail
cd "$(dirname "$0")/.."

INTERVAL=${INTERVAL:-100us}
LOOPS=${LOOPS:-20000}
CPU=${CPU:-0}
PRIO=${PRIO:-95}
TRACE=${TRACE:-1}
HIST_US=${HIST_US:-20000}
LATLAB=${LATLAB:-target/release/latlab}
BUILD=${BUILD:-1}
KEEP=${KEEP:-0}

die() { echo "timers-vs-cyclictest: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root: both tools need SCHED_FIFO, mlockall and /dev/cpu_dma_latency (and tracefs with TRACE=1)"
command -v cyclictest >/dev/null || die "cyclictest missing: apt-get install -y rt-tests"
command -v python3 >/dev/null || die "python3 missing"
command -v timeout >/dev/null || die "timeout (coreutils) missing"

case "$INTERVAL" in
  *us) IUS=${INTERVAL%us} ;;
  *ms) IUS=${INTERVAL%ms}; [[ "$IUS" =~ ^[0-9]+$ ]] && IUS=$((IUS * 1000)) ;;
  *s)  IUS=${INTERVAL%s};  [[ "$IUS" =~ ^[0-9]+$ ]] && IUS=$((IUS * 1000000)) ;;
  *)   IUS=$INTERVAL ;;
esac
[[ "$IUS" =~ ^[0-9]+$ ]] && [ "$IUS" -gt 0 ] || die "INTERVAL=$INTERVAL: give whole microseconds, e.g. 100us or 1ms (cyclictest -i takes us)"
[[ "$LOOPS" =~ ^[0-9]+$ ]] && [ "$LOOPS" -gt 0 ] || die "LOOPS=$LOOPS: a positive number"
[[ "$CPU" =~ ^[0-9]+$ ]] && [ "$CPU" -lt "$(nproc)" ] || die "CPU=$CPU: one CPU number below $(nproc)"
[[ "$PRIO" =~ ^[0-9]+$ ]] && [ "$PRIO" -ge 1 ] && [ "$PRIO" -le 99 ] || die "PRIO=$PRIO: 1..99"
[[ "$HIST_US" =~ ^[0-9]+$ ]] && [ "$HIST_US" -gt 0 ] || die "HIST_US=$HIST_US: a positive number of us"

if [ "$BUILD" = 1 ]; then
  cargo build --release --locked -q
fi
[ -x "$LATLAB" ] || die "$LATLAB missing: cargo build --release (or set LATLAB=...)"

OUT=$(mktemp -d /tmp/timers-vs-cyclictest.XXXXXX)
MONITOR=
cleanup() { if [ "$KEEP" = 1 ]; then echo "raw files kept in $OUT"; else rm -rf "$OUT"; fi; }
trap 'cleanup' EXIT
trap 'exit 130' INT TERM

# Every RT process is bounded: LOOPS periods at INTERVAL, three times over,
# plus a minute; then SIGINT (both tools stop cleanly and report), and 15 s
# later SIGKILL.
BOUND=$(( LOOPS * IUS * 3 / 1000000 + 60 ))
bounded() { timeout --signal=INT --kill-after=15 "$BOUND" "$@"; }

HELP=$(cyclictest --help 2>&1 || true)
CT_VERSION=$(printf '%s\n' "$HELP" | sed -n 's/^cyclictest V *\([0-9.]*\).*/\1/p' | head -1)
has_opt() { printf '%s\n' "$HELP" | grep -Eq -- "$1"; }

# cyclictest's flags for each source, found in its --help, or why there is none.
CT_CN=""; CT_CN_NOTE="clock_nanosleep is cyclictest's default; V$CT_VERSION has no -n/--nanosleep (dropped when clock_nanosleep became the default)"
if has_opt '(^|[[:space:]])-n[[:space:]]|--nanosleep'; then CT_CN="-n"; CT_CN_NOTE="-n (--nanosleep)"; fi
CT_X=""; CT_X_NOTE="no POSIX timer option in cyclictest V$CT_VERSION"
if has_opt -- '--posix_timers'; then CT_X="-x"; CT_X_NOTE="-x (--posix_timers)"; fi
CT_S=""; CT_S_NOTE="no -s/--system in cyclictest V$CT_VERSION: no sys_nanosleep mode"
if has_opt -- '--system'; then CT_S="-s"; CT_S_NOTE="-s (--system: sys_nanosleep)"; fi
CT_IT=""; CT_IT_NOTE="cyclictest V$CT_VERSION has no setitimer mode"
if [ -n "$CT_S" ] && [ -n "$CT_X" ]; then
  # rt-tests 1.2..1.5: -s -x = sys_setitimer. Since 1.6 cyclictest refuses the
  # pair ("The system option requires clock_nanosleep and is not compatible
  # with posix_timers") and falls back to sys_nanosleep; ask the installed one.
  probe=$(bounded cyclictest -m -p "$PRIO" -i 1000 -l 2 -a "$CPU" -t 1 -q -s -x 2>&1 || true)
  if printf '%s\n' "$probe" | grep -q 'not compatible with posix_timers'; then
    CT_IT_NOTE="cyclictest V$CT_VERSION has no setitimer mode any more: its help still says '-s use sys_nanosleep and sys_setitimer', but -s alone is sys_nanosleep and -s -x is refused ('$(printf '%s\n' "$probe" | grep '^WARN' | sed 's/^WARN: *//' | paste -sd' ')') and runs sys_nanosleep"
  else
    CT_IT="-s -x"; CT_IT_NOTE="-s -x (sys_setitimer)"
  fi
fi

git_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git_dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo "uncommitted changes in tracked files" || echo "clean tree")
preempt=$(cat /sys/kernel/debug/sched/preempt 2>/dev/null || true)

echo "timers-vs-cyclictest: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $(nproc) CPUs, kernel $(uname -r), $(uname -v)${preempt:+, /sys/kernel/debug/sched/preempt: $preempt}"
echo "latlab: $LATLAB ($("$LATLAB" --version 2>/dev/null | head -1), built $(date -u -r "$LATLAB" '+%Y-%m-%d %H:%M UTC')); this repo at $git_rev, $git_dirty"
echo "cyclictest: V$CT_VERSION ($(command -v cyclictest))"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "settings: interval ${IUS} us, $LOOPS loops, CPU $CPU, SCHED_FIFO $PRIO, mlock, cpu_dma_latency 0, histograms to $HIST_US us, trace $([ "$TRACE" = 1 ] && echo on || echo off); every run bounded to ${BOUND} s"
echo

MANIFEST=$OUT/manifest.tsv
: > "$MANIFEST"
note() { printf '%s\tnote\t%s\n' "$1" "$2" >> "$MANIFEST"; }

# The events that show where a timer the kernel re-arms in the task's own
# context (posix timer and SIGALRM at the signal's dequeue, timerfd at the
# read) raced with the task's clock read.
dump_rearms() { # base
  "$LATLAB" dump --events hrtimer_start,hrtimer_expire_entry,sched_switch "$1.dat" > "$1.dump.txt" 2>/dev/null || true
}

# Real-time threads, sampled every 0.2 s while the script runs: which thread
# of ours measured (its tid picks it out in the trace) and which real-time
# threads of other programs shared the machine (they skew both tools).
# Lines: run-label mine(1/0) pid tid class prio cpu comm.
monitor_rt() {
  local self=$1 cur pid ppid tid cls prio psr comm p mine
  while :; do
    cur=$(cat "$OUT/current" 2>/dev/null || echo idle)
    while read -r pid ppid tid cls prio psr comm; do
      [ "$ppid" = 2 ] && continue   # kernel threads
      p=$pid mine=0
      for _ in 1 2 3 4 5 6; do
        if [ "$p" = "$self" ]; then mine=1; break; fi
        p=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2) || break
        { [ -z "$p" ] || [ "$p" -le 1 ]; } && break
      done
      echo "$cur $mine $pid $tid $cls $prio $psr $comm"
    done < <(ps -eLo pid=,ppid=,tid=,cls=,rtprio=,psr=,comm= 2>/dev/null | awk '$4 == "FF" || $4 == "RR"')
    sleep 0.2
  done >> "$OUT/rt-threads.log"
}
echo idle > "$OUT/current"
monitor_rt $$ &
MONITOR=$!
cleanup() {
  kill "$MONITOR" 2>/dev/null || true
  wait "$MONITOR" 2>/dev/null || true
  if [ "$KEEP" = 1 ]; then echo "raw files kept in $OUT"; else rm -rf "$OUT"; fi
}

# The tid of our measuring thread in run LABEL whose name starts with PREFIX.
our_tid() { # label prefix
  awk -v l="$1" -v p="$2" '$1 == l && $2 == 1 && index($8, p) == 1 { print $4; exit }' "$OUT/rt-threads.log"
}

run_latlab() { # source timer
  local src=$1 timer=$2 base=$OUT/latlab-$2 trace_args=() rc=0 tid
  [ "$TRACE" = 1 ] && trace_args=(--trace "$base.dat" --explain)
  echo "  latlab run --timer $timer ..." >&2
  echo "latlab-$src" > "$OUT/current"
  bounded "$LATLAB" run -q --no-save --cpus "$CPU" --policy fifo --priority "$PRIO" \
      --interval "${IUS}us" --loops "$LOOPS" --timer "$timer" \
      --json "$base.json" --histogram-text "$base.hist" "${trace_args[@]}" \
      > "$base.txt" 2> "$base.err" || rc=$?
  echo idle > "$OUT/current"
  # 0 done, 2 a requirement failed (none given here), 3 SUSPECT (wake-ups
  # before the intended time): all three wrote a result.
  if { [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ]; } && [ -s "$base.json" ]; then
    if [ "$TRACE" = 1 ] && [ -s "$base.dat" ]; then
      # --explain analysed every latlab-cpu* thread in the trace, another
      # program's too; the table takes exactly ours.
      tid=$(our_tid "latlab-$src" "latlab-cpu$CPU")
      if [ -n "$tid" ]; then
        "$LATLAB" explain "$base.dat" --pid "$tid" --json "$base.explain.json" > "$base.explain.txt" 2>&1 || true
      fi
      dump_rearms "$base"
    fi
    printf '%s\tlatlab\tlatlab --timer %s\t%s\n' "$src" "$timer" "$base" >> "$MANIFEST"
  else
    note "$src" "latlab --timer $timer failed (exit $rc): $(tail -1 "$base.err")"
  fi
}

run_cyclictest() { # source flags label
  local src=$1 flags=$2 label=$3 base=$OUT/cyclictest-$1 rec=() rc=0 tid
  [ "$TRACE" = 1 ] && rec=("$LATLAB" record -o "$base.dat" --)
  echo "  cyclictest $flags ..." >&2
  echo "cyclictest-$src" > "$OUT/current"
  # shellcheck disable=SC2086 # flags are words
  bounded "${rec[@]}" cyclictest -m -p "$PRIO" -i "$IUS" -l "$LOOPS" -a "$CPU" -t 1 -q \
      -h "$HIST_US" --histfile "$base.hist" --json "$base.json" $flags \
      > "$base.txt" 2> "$base.err" || rc=$?
  echo idle > "$OUT/current"
  if [ "$rc" -eq 0 ] && [ -s "$base.json" ]; then
    if [ "$TRACE" = 1 ] && [ -s "$base.dat" ]; then
      # The measuring thread is cyclictest's only SCHED_FIFO one.
      tid=$(our_tid "cyclictest-$src" cyclictest)
      if [ -z "$tid" ]; then
        # Not sampled (a very short run): the cyclictest task of the trace
        # that woke every interval.
        "$LATLAB" explain "$base.dat" --json "$base.tasks.json" > /dev/null 2>&1 || true
        tid=$(python3 - "$base.tasks.json" "$IUS" <<'PY' || true
import json, sys
try:
    tasks = json.load(open(sys.argv[1]))["tasks_found"]
except Exception:
    sys.exit(1)
iv = int(sys.argv[2]) * 1000
cands = [t for t in tasks if t["comm"].startswith("cyclictest")]
cands.sort(key=lambda t: (abs(t["median_interval_ns"] - iv) > iv // 10, -t["periods"]))
if cands:
    print(cands[0]["pid"])
PY
)
      fi
      if [ -n "$tid" ]; then
        "$LATLAB" explain "$base.dat" --pid "$tid" --json "$base.explain.json" > "$base.explain.txt" 2>&1 || true
      fi
      dump_rearms "$base"
    fi
    printf '%s\tcyclictest\tcyclictest %s\t%s\n' "$src" "$label" "$base" >> "$MANIFEST"
  else
    note "$src" "cyclictest $flags failed (exit $rc): $(tail -1 "$base.err")"
  fi
}

echo "running (one after the other):" >&2
run_latlab clock_nanosleep clock-nanosleep
run_cyclictest clock_nanosleep "$CT_CN" "${CT_CN:-(default)}"
note clock_nanosleep "cyclictest: $CT_CN_NOTE"

run_latlab posix_timer posix-timer
if [ -n "$CT_X" ]; then run_cyclictest posix_timer "$CT_X" "$CT_X"; fi
note posix_timer "cyclictest: $CT_X_NOTE"

run_latlab nanosleep nanosleep
if [ -n "$CT_S" ]; then run_cyclictest nanosleep "$CT_S" "$CT_S"; fi
note nanosleep "cyclictest: $CT_S_NOTE"

run_latlab setitimer itimer
if [ -n "$CT_IT" ]; then run_cyclictest setitimer "$CT_IT" "$CT_IT"; fi
note setitimer "cyclictest: $CT_IT_NOTE"

run_latlab timerfd timerfd
note timerfd "cyclictest has no timerfd mode: latlab only"
echo >&2

python3 - "$MANIFEST" "$IUS" "$LOOPS" "$HIST_US" "$TRACE" "$CPU" <<'PY'
import json, math, sys

manifest, ius, loops, hist_us, trace, cpu = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
                                             sys.argv[5] == "1", sys.argv[6])
SOURCES = ["clock_nanosleep", "posix_timer", "nanosleep", "setitimer", "timerfd"]


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def hist_figures(path):
    """cyclictest -h text (both tools write it): 1 us rows, nearest rank."""
    counts, overflow = {}, 0
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("# Histogram Overflows:"):
            overflow = sum(int(v) for v in line.split(":", 1)[1].split())
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split()
        try:
            us = int(fields[0])
            n = sum(int(v) for v in fields[1:])
        except ValueError:
            continue
        if n:
            counts[us] = counts.get(us, 0) + n
    total = sum(counts.values()) + overflow

    def pct(p):
        if total == 0:
            return None
        rank = max(1, math.ceil(p * total / 100))
        seen = 0
        for us in sorted(counts):
            seen += counts[us]
            if seen >= rank:
                return float(us)
        return "ovf"  # the rank lies in the overflow bucket: value unknown

    return {"p50": pct(50), "p99": pct(99), "overflow": overflow, "total": total}


REARMED = ("posix_timer_fn", "it_real_fn", "timerfd_tmrproc")


def rearm_races(dump_path, tid):
    """Re-arms done by the task itself (at the signal's dequeue or the timerfd
    read) after which the timer's next expiry fired before the task blocked
    again: the window in which a tool that reads the clock after the wake-up
    sees that expiry already past although the kernel did not skip it."""
    import re
    try:
        lines = open(dump_path)
    except OSError:
        return None
    head = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\w+):\s*(.*)$")
    timers, pending, rearms, races, first = set(), None, 0, 0, None
    for line in lines:
        m = head.match(line)
        if not m:
            continue
        pid, ts, name, args = int(m.group(2)), m.group(4), m.group(5), m.group(6)
        if name == "hrtimer_start" and pid == tid and any(f"function={f}" in args for f in REARMED):
            h = re.search(r"hrtimer=(\S+)", args).group(1)
            x = int(re.search(r" expires=(\d+)", args).group(1))
            if h in timers:  # the first start is the arming, later ones re-arms
                rearms += 1
                pending = (h, ts, x)
            timers.add(h)
        elif name == "hrtimer_expire_entry" and pending and f"hrtimer={pending[0]}" in args:
            races += 1
            if first is None:
                now = int(re.search(r"now=(\d+)", args).group(1))
                first = (pending[1], pending[2], now)
            pending = None
        elif name == "sched_switch" and pending:
            prev = args.split("==>")[0]
            pm = re.search(r":(\d+) \[\d+\] (\S+)", prev)
            if pm and int(pm.group(1)) == tid and pm.group(2) != "R" and not pm.group(2).startswith("R"):
                pending = None
    return {"rearms": rearms, "races": races, "first": first}


rows = {s: [] for s in SOURCES}
notes = {s: [] for s in SOURCES}
for line in open(manifest):
    src, kind, *rest = line.rstrip("\n").split("\t")
    if kind == "note":
        notes[src].append(rest[0])
        continue
    label, base = rest
    h = hist_figures(base + ".hist") or {}
    bases = base
    row = {"tool": kind, "label": label, "flags": [], "p50": h.get("p50"), "p99": h.get("p99"),
           "overflow": h.get("overflow", 0)}
    if kind == "latlab":
        d = load_json(base + ".json") or {}
        lat = d.get("overall", {}).get("latency", {})
        th = (d.get("threads") or [{}])[0]
        row.update(samples=lat.get("count"), min=lat.get("min", 0) / 1e3, avg=lat.get("mean", 0) / 1e3,
                   max=lat.get("max", 0) / 1e3, missed=d.get("overall", {}).get("missed_periods"),
                   early=th.get("early_wakeups", 0), max_early=th.get("max_early_ns", 0) / 1e3,
                   verdict=d.get("verdict"), system=d.get("system", {}))
        # explain on exactly our thread; else the run's own --explain report
        ex = (load_json(base + ".explain.json") if trace else None) or d.get("explain")
    else:
        d = load_json(base + ".json")
        t = (d or {}).get("thread", {}).get("0", {})
        row.update(samples=t.get("cycles"), min=t.get("min"), avg=t.get("avg"), max=t.get("max"),
                   missed=None, early=0)
        ex = load_json(base + ".explain.json") if trace else None
    rows[src].append(row)
    if trace:
        tr = {"tool": "trace", "label": f"  kernel trace, {kind} thread", "flags": []}
        if ex and ex.get("latency", {}).get("count"):
            lat = ex["latency"]
            sel = (ex.get("selected") or [{}])[0]
            tr.update(samples=ex.get("periods"), min=lat["min"] / 1e3, avg=lat["mean"] / 1e3,
                      p50=lat["p50"] / 1e3, p99=lat["p99"] / 1e3, max=lat["max"] / 1e3,
                      missed=None, task=f'{sel.get("comm")}:{sel.get("pid")}')
        else:
            tr.update(samples=None, min=None, avg=None, p50=None, p99=None, max=None, missed=None,
                      task=None)
            tr["flags"].append("no trace analysis")
        row["trace"] = tr
        rows[src].append(tr)
        if ex and ex.get("selected"):
            row["race"] = rearm_races(bases + ".dump.txt", int(ex["selected"][0]["pid"]))

# Real-time threads of other programs seen while a run measured.
import os
neighbours = {}
try:
    for line in open(os.path.join(os.path.dirname(manifest), "rt-threads.log")):
        f = line.split(None, 7)
        if len(f) == 8 and f[1] == "0" and f[0] != "idle":
            cls = {"FF": "FIFO", "RR": "RR"}.get(f[4], f[4])
            neighbours.setdefault(f[0], {})[f[3]] = (f[6] == cpu, f"{f[7].strip()}:{f[3]} {cls} {f[5]} on CPU {f[6]}")
except OSError:
    pass
for src in SOURCES:
    for r in rows[src]:
        if r["tool"] == "trace":
            continue
        seen = neighbours.get(f"{r['tool']}-{src}")
        if seen:
            here = any(same for same, _ in seen.values())
            names = sorted(text for _, text in seen.values())
            r["flags"].append(("RT-NEIGHBOUR: " if here else "rt-elsewhere: ")
                              + "other programs' real-time threads ran meanwhile: "
                              + ", ".join(names[:6]) + (" ..." if len(names) > 6 else ""))

# The machine's floor: the smallest clock_nanosleep wake-up either tool saw
# (the shortest path from timer interrupt to user space on this machine).
cn = [r["min"] for r in rows["clock_nanosleep"] if r["tool"] != "trace" and isinstance(r.get("min"), (int, float))
      and 0 < r["min"] < 1e6]
floor = min(cn) if cn else None

for src in SOURCES:
    for r in rows[src]:
        f = r["flags"]
        if r["tool"] == "cyclictest":
            mx, mn, avg = r.get("max"), r.get("min"), r.get("avg")
            if isinstance(mx, (int, float)) and mx < 0:
                f.append(f"NEG: max {mx} us < 0; {r['overflow']} of {r.get('samples')} samples were negative "
                         "(wrapped to 2^64, counted as histogram overflow)")
            elif r["overflow"] and isinstance(mx, (int, float)) and mx < hist_us:
                f.append(f"NEG: {r['overflow']} histogram overflows though max {mx} us < {hist_us} us")
            if isinstance(avg, (int, float)) and (avg > 1e12 or avg < 0):
                f.append(f"AVG-OVF: avg {avg:.3g} us (cyclictest prints it as (long) of that: garbage)")
            elif isinstance(avg, (int, float)) and isinstance(mx, (int, float)) and mx >= 0 and avg > mx:
                f.append(f"AVG>MAX: avg {avg} > max {mx}")
            if isinstance(mn, (int, float)) and mn >= 1000000:
                f.append("MIN: never set (no non-negative sample)")
            if r.get("p50") == "ovf" or r.get("p99") == "ovf":
                f.append("p50/p99 fall in the overflow bucket")
        if r["tool"] == "latlab":
            if r.get("min") == 0:
                f.append(f"MIN0: min 0 us ({r.get('early')} wake-ups before the intended time, clamped to 0)")
            elif r.get("early"):
                f.append(f"EARLY: {r['early']} wake-ups before the intended time (up to {r.get('max_early', 0):.1f} us),"
                         f" left out of the figures; verdict {r.get('verdict')}")
        if r["tool"] != "trace" and floor is not None and isinstance(r.get("min"), (int, float)) \
                and src != "clock_nanosleep" and r["min"] < floor - 1.0:
            f.append(f"<FLOOR: min {r['min']:.1f} us below the machine's floor {floor:.1f} us")
        # Agreement with the kernel trace of the same run: user space sees the
        # wake-up a little after the switch to the task, never before.
        tr = r.get("trace")
        if r["tool"] != "trace" and tr and tr.get("p50") is not None:
            bad = []
            p50, tp50 = r.get("p50"), tr["p50"]
            if not isinstance(p50, float):
                bad.append(f"p50 {p50} vs trace {tp50:.1f}")
            elif not (tp50 - 1.0 <= p50 <= tp50 + max(15.0, 0.5 * tp50)):
                bad.append(f"p50 {p50:.0f} vs trace {tp50:.1f}")
            mn = r.get("min")
            if isinstance(mn, (int, float)) and mn < tr["min"] - 1.0:
                bad.append(f"min {mn:.1f} < trace min {tr['min']:.1f}")
            # max is not compared: the trace drops a period whose switch-in it
            # did not record, and a tool can be held between the switch-in and
            # its clock read; but a max below the trace's min is impossible.
            mx = r.get("max")
            if isinstance(mx, (int, float)) and mx < tr["min"] - 1.0:
                bad.append(f"max {mx:.1f} < trace min {tr['min']:.1f}")
            if bad:
                f.append("OFF-TRACE: " + ", ".join(bad))
            r["agrees"] = not bad


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if abs(v) >= 1e7:
        return f"{v:.2g}"
    if float(v).is_integer() and nd == 0:
        return f"{int(v)}"
    return f"{v:.{nd}f}"


sysinfo = next((r["system"] for s in SOURCES for r in rows[s] if r.get("system")), None)
if sysinfo:
    print(f"kernel (latlab's view): preemption {sysinfo.get('preemption_model')} "
          f"({sysinfo.get('preemption_source')}), HZ {sysinfo.get('hz')}, high-res timers "
          f"{sysinfo.get('high_res_timers')}, clocksource {sysinfo.get('clocksource')}, "
          f"virtualization {sysinfo.get('virtualization')}, CPU {sysinfo.get('cpu_model')}")
    print()
print(f"Wake-up latency in us ({ius} us interval, {loops} loops); p50/p99 from each tool's histogram text "
      "(trace rows: latlab explain)")
print(f"{'source':<16} {'tool':<34} {'samples':>8} {'min':>7} {'p50':>7} {'avg':>8} {'p99':>7} {'max':>8} "
      f"{'missed':>7}  flags")
legend = {}
for src in SOURCES:
    first = True
    for r in rows[src]:
        nd = 0 if r["tool"] == "cyclictest" else 1
        missed = "n/r" if r["tool"] == "cyclictest" else fmt(r.get("missed"), 0)
        if r["tool"] == "trace":
            missed = ""
        short = ",".join(x.split(":")[0] for x in r["flags"]) or ("ok" if r["tool"] != "trace" else "")
        if r["tool"] != "trace" and r.get("trace") and r.get("agrees"):
            short = (short + ",=trace") if short != "ok" else "ok,=trace"
        print(f"{src if first else '':<16} {r['label']:<34} {fmt(r.get('samples'), 0):>8} {fmt(r.get('min'), nd):>7} "
              f"{fmt(r.get('p50'), nd):>7} {fmt(r.get('avg'), 1):>8} {fmt(r.get('p99'), nd):>7} "
              f"{fmt(r.get('max'), nd):>8} {missed:>7}  {short}")
        first = False
        for x in r["flags"]:
            legend.setdefault(src, []).append(f"{r['label'].strip()}: {x}")
    for n in notes[src]:
        print(f"{'':<16} ({n})")
print()
print("missed: periods the tool counted as missed (latlab); n/r: cyclictest does not report them.")
print("flags: NEG negative latencies, MIN0 min 0 us, AVG-OVF overflowed average, <FLOOR min below the "
      "machine's floor,\nOFF-TRACE disagrees with the kernel trace, =trace agrees with it, RT-NEIGHBOUR another "
      "program's real-time threads ran on\nthe measured CPU during the run (rt-elsewhere: on another CPU).")
if floor is not None:
    print(f"machine floor: {floor:.1f} us (smallest clock_nanosleep wake-up of either tool in this run)")
for src in SOURCES:
    for x in legend.get(src, []):
        print(f"  {src}: {x}")
print()

if trace:
    print("agreement with the kernel trace (same run; latlab explain on the measuring thread: armed hrtimer\n"
          "expiry to the switch to the task). A tool reads the clock after that switch, and for signal and\n"
          "timerfd sources after the kernel re-armed the timer in the task's context, so it should read a few\n"
          "us more than the trace, never less: agrees = min and max >= trace min - 1 us, p50 within -1..+15 us (or +50 %)\n"
          "of it. max is not compared: periods whose switch-in the trace lacks are left out of its view, and a\n"
          "tool can be held after the switch-in, before it reads the clock.")
    for src in SOURCES:
        for r in rows[src]:
            tr = r.get("trace")
            if r["tool"] == "trace" or not tr or tr.get("p50") is None:
                continue
            def d(a, b):
                return f"{a - b:+.1f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) else "n/a"
            verdict = "agrees" if r.get("agrees") else "DISAGREES"
            print(f"  {src:<16} {r['label']:<26} task {tr['task']:<20} tool-trace: min {d(r.get('min'), tr['min'])}"
                  f"  p50 {d(r.get('p50'), tr['p50'])}  max {d(r.get('max'), tr['max'])} us;"
                  f" samples {fmt(r.get('samples'), 0)} vs periods {fmt(tr.get('samples'), 0)}: {verdict}")
    print()

if trace and any(r.get("race") for s_ in SOURCES for r in rows[s_]):
    print("timers the kernel re-arms in the task's own context (posix timer and SIGALRM when the signal is\n"
          "dequeued, timerfd at the read): how often the next expiry fired after that re-arm but before the\n"
          "task blocked again. A tool that decides the next expiry from a clock read after the wake-up (as\n"
          "cyclictest -x does with `while (now > next) next += interval`) can then skip a period the kernel did\n"
          "not skip and compares every later wake-up with an expiry one interval too late: latency - interval.")
    for src in SOURCES:
        for r in rows[src]:
            rc = r.get("race")
            if not rc or not (rc["rearms"] or src in ("posix_timer", "setitimer", "timerfd")):
                continue
            extra = ""
            if rc["first"]:
                d, x, now = rc["first"]
                extra = (f"; first: re-armed at {d} s for {x / 1e9:.6f} s ({(x - float(d) * 1e9) / 1e3:.1f} us ahead), "
                         f"fired at {now / 1e9:.6f} s before the task blocked")
            print(f"  {src:<16} {r['label']:<30} {rc['races']} of {rc['rearms']} re-arms{extra}")
    print()

print("ratios latlab/cyclictest (own figures; n/a where a figure is missing, '!' where one is flagged):")
print(f"  {'source':<16} {'p50':>8} {'p99':>8} {'max':>8}")
for src in SOURCES:
    lat = next((r for r in rows[src] if r["tool"] == "latlab"), None)
    cyc = next((r for r in rows[src] if r["tool"] == "cyclictest"), None)
    if not lat or not cyc:
        why = "no cyclictest mode" if lat else "no latlab run"
        print(f"  {src:<16} {'n/a':>8} {'n/a':>8} {'n/a':>8}   ({why})")
        continue
    cells = []
    for k in ("p50", "p99", "max"):
        a, b = lat.get(k), cyc.get(k)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0 and a >= 0:
            mark = "!" if (lat["flags"] or cyc["flags"]) else ""
            cells.append(f"{a / b:.2f}{mark}")
        else:
            cells.append("n/a")
    print(f"  {src:<16} {cells[0]:>8} {cells[1]:>8} {cells[2]:>8}")
PY
