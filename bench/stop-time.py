#!/usr/bin/env python3
"""How long Ctrl-C (SIGINT) and SIGTERM take to stop each long-waiting latlab
command: the time from the signal to the process's exit, its result written.

Each case is started in a temporary directory, given SETTLE seconds after it
installs its handler for the signal (/proc/PID/status SigCgt), sent the
signal, and timed to its exit (a case not ended within 60 s counts as hung
and is killed). Prints per case the median and the maximum over TRIALS, the
exit codes seen, and whether the result file was there.

Usage (as root): bench/stop-time.py [TRIALS] [CASE...]   (default 20, all)
  LATLAB=path/to/latlab (default target/release/latlab)
Run it on a quiet machine: it prints the load average before and after.
"""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# name, signal, settle (s), arguments ({DIR}: the case's directory), result file
CASES = [
    ("run-interval-30s", "SIGINT", 2,
     "run --no-save -q --split off --cpus 0 --interval 30s --duration 10m --json {DIR}/r.json",
     "r.json"),
    ("run-posix-timer-30s", "SIGTERM", 2,
     "run --no-save -q --split off --cpus 0 --timer posix-timer --interval 30s --duration 10m "
     "--json {DIR}/r.json", "r.json"),
    ("run-1ms", "SIGINT", 2, "run --no-save -q --duration 10m --json {DIR}/r.json", "r.json"),
    ("run-1ms-sigterm", "SIGTERM", 2, "run --no-save -q --duration 10m --json {DIR}/r.json",
     "r.json"),
    ("run-1ms-load", "SIGINT", 3,
     "run --no-save -q --duration 10m --load cpu:1,net:1 --json {DIR}/r.json", "r.json"),
    ("load", "SIGINT", 2,
     "load cpu:1,net:1,io:1 --duration 10m --temp-dir {DIR} --json {DIR}/l.json", "l.json"),
    ("lockbench-period-2s", "SIGINT", 3,
     "lockbench --duration 10m --rounds 1 --warmup 0 --period 2s --variants plain "
     "--no-history --json {DIR}/lb.json", "lb.json"),
    ("respond-gap-20s", "SIGINT", 2,
     "respond --no-save -q --duration 10m --gap 20s --json {DIR}/rs.json", "rs.json"),
    ("respond", "SIGTERM", 2, "respond --no-save -q --duration 10m --json {DIR}/rs.json",
     "rs.json"),
    ("record", "SIGINT", 2, "record --duration 10m -o {DIR}/t.dat", "t.dat"),
    ("watch", "SIGTERM", 2,
     "watch --comm nosuchtask --duration 10m --no-history -q --json {DIR}/w.json", "w.json"),
    ("scenario", "SIGTERM", 3,
     "scenario emblix --cpus 0 --duration 10m --out {DIR}/sc", "sc/report.html"),
    ("serve", "SIGINT", 1, "serve --db {DIR}/h.sqlite --listen 127.0.0.1:0", None),
]


def catches(pid, sig):
    """True once `pid` has a handler for `sig`."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return (int(line.split()[1], 16) >> (sig - 1)) & 1 == 1
    except FileNotFoundError:
        pass
    return False


def trial(latlab, sig, settle, args, result):
    """One start-signal-exit: (seconds or None if hung, exit code, result there)."""
    with tempfile.TemporaryDirectory(prefix="latlab-stop-") as d:
        argv = [latlab] + args.replace("{DIR}", d).split()
        p = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not catches(p.pid, sig):
            if p.poll() is not None:
                sys.exit(f"{' '.join(argv)}: exited with {p.returncode} before the signal")
            time.sleep(0.005)
        time.sleep(settle)
        sent = time.monotonic()
        os.kill(p.pid, sig)
        try:
            p.wait(timeout=60)
            took = time.monotonic() - sent
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            took = None
        there = result is None or os.path.exists(os.path.join(d, result))
        return took, p.returncode, there


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    wanted = sys.argv[2:]
    latlab = os.environ.get("LATLAB", "target/release/latlab")
    with open("/proc/loadavg") as f:
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.uname().release}, "
              f"{os.cpu_count()} CPUs; load average {' '.join(f.read().split()[:3])}")
    print(f"{'case':22} {'signal':8} {'median':>10} {'max':>10}  exit codes, result")
    for name, signame, settle, args, result in CASES:
        if wanted and name not in wanted:
            continue
        sig = getattr(signal, signame)
        runs = [trial(latlab, sig, settle, args, result) for _ in range(trials)]
        times = [t for t, _, _ in runs if t is not None]
        hung = len(runs) - len(times)
        codes = sorted({c for _, c, _ in runs})
        written = sum(1 for _, _, w in runs if w)
        median = f"{statistics.median(times) * 1000:.1f} ms" if times else "-"
        worst = f"{max(times) * 1000:.1f} ms" if times else "-"
        print(f"{name:22} {signame:8} {median:>10} {worst:>10}  {codes}, "
              f"{written}/{len(runs)} written" + (f", {hung} hung (> 60 s)" if hung else ""),
              flush=True)
    with open("/proc/loadavg") as f:
        print(f"load average after: {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()
