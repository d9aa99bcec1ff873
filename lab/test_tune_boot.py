"""Tests of lab/tune-boot's parts that need no QEMU: the command line taken
from a tune plan, the fallback line, the took-effect judge and the
before/after table.

python3 -m unittest discover -s lab -p 'test_*.py'   (make lab-unit runs it)
"""

import importlib.machinery
import importlib.util
import json
import tempfile
import unittest
from pathlib import Path

_path = str(Path(__file__).with_name("tune-boot"))
_loader = importlib.machinery.SourceFileLoader("tune_boot", _path)
_spec = importlib.util.spec_from_loader("tune_boot", _loader)
tb = importlib.util.module_from_spec(_spec)
_loader.exec_module(tb)


def plan(*params, schema="latlab.tune"):
    """A latlab.tune document whose boot line has `params` ((text, already))."""
    return {
        "schema": schema,
        "boot": {
            "parameters": [{"text": t, "why": "isolation", "already": a} for t, a in params],
            "grub": "",
            "uboot": "",
        },
    }


# What the amd64 guest said on the first and second boot (2026-11-27).
FACTS_OWN = """cmdline=console=ttyS0 rdinit=/init panic=-1 loglevel=4 8250.nr_uarts=8
uname=#1 SMP PREEMPT_DYNAMIC Debian 6.12.107-1 (2026-08-29)
nproc=2
nohz_full=(null)
isolated=
irq_default=3
preempt=none (voluntary) full
rcu_offload=
rcuo=
"""
LINE = [
    "isolcpus=managed_irq,domain,1",
    "nohz_full=1",
    "rcu_nocbs=1",
    "irqaffinity=0",
    "skew_tick=1",
    "preempt=full",
]
FACTS_TUNED = f"""cmdline=console=ttyS0 rdinit=/init panic=-1 8250.nr_uarts=8 {" ".join(LINE)}
uname=#1 SMP PREEMPT_DYNAMIC Debian 6.12.107-1 (2026-08-29)
nproc=1
nohz_full=1
isolated=1
irq_default=1
preempt=none voluntary (full)
rcu_offload=Offload RCU callbacks from CPUs: 1
rcuo=rcuog/0 rcuop/0 rcuop/1
"""


class CommandLine(unittest.TestCase):
    def test_the_plan_gives_the_parameters_the_kernel_lacks_in_order(self):
        doc = plan(("nohz_full=1", False), ("skew_tick=1", True), ("isolcpus=domain,1", False))
        self.assertEqual(tb.plan_parameters(doc), ["nohz_full=1", "isolcpus=domain,1"])

    def test_a_plan_the_kernel_already_boots_with_gives_nothing(self):
        self.assertEqual(tb.plan_parameters(plan(("nohz_full=1", True))), [])

    def test_another_document_or_no_boot_line_is_refused(self):
        with self.assertRaises(ValueError):
            tb.plan_parameters(plan(("nohz_full=1", False), schema="latlab.run"))
        with self.assertRaises(ValueError):
            tb.plan_parameters({"schema": "latlab.tune", "fixes": []})

    def test_the_guests_plan_is_used_when_tune_exited_0_and_wrote_it(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d)
            (out / "tune-plan.json").write_text(json.dumps(plan(("rcu_nocbs=1", False))))
            params, how = tb.guest_plan(out, 0)
            self.assertEqual(params, ["rcu_nocbs=1"])
            self.assertIn("tune-plan.json", how)
            # A failed tune: its plan file is not trusted, the reason is given.
            (out / "tune-plan.txt").write_text("error: unrecognized subcommand 'tune'\n")
            params, how = tb.guest_plan(out, 1)
            self.assertIsNone(params)
            self.assertIn("has no `tune`", how)
            params, how = tb.guest_plan(out, None)
            self.assertIsNone(params)
            (out / "tune-plan.json").write_text("{not json")
            self.assertIsNone(tb.guest_plan(out, 0)[0])
            (out / "tune-plan.json").unlink()
            self.assertIn("no tune-plan.json", tb.guest_plan(out, 0)[1])

    def test_the_fallback_adds_preempt_full_only_on_a_dynamic_generic_kernel(self):
        own = tb.parse_facts(FACTS_OWN)
        self.assertEqual(tb.fallback_parameters({1}, 2, own), LINE)
        rt = dict(own, uname="#1 SMP PREEMPT_RT Debian 6.12.107-1")
        self.assertNotIn("preempt=full", tb.fallback_parameters({1}, 2, rt))
        fixed = dict(own, preempt="")  # arm64: no PREEMPT_DYNAMIC, no debugfs file
        self.assertNotIn("preempt=full", tb.fallback_parameters({1}, 2, fixed))

    def test_the_fallback_keeps_the_other_cpus_for_housekeeping(self):
        line = tb.fallback_parameters({2, 3}, 4, {})
        self.assertIn("nohz_full=2-3", line)
        self.assertIn("irqaffinity=0-1", line)
        self.assertIn("isolcpus=managed_irq,domain,2-3", line)


class TookEffect(unittest.TestCase):
    def test_cpu_lists_and_masks(self):
        self.assertEqual(tb.cpu_set("1-3,5"), {1, 2, 3, 5})
        self.assertEqual(tb.cpu_set("(null)"), set())
        self.assertIsNone(tb.cpu_set("all"))
        self.assertEqual(tb.mask_cpus("00000000,00000005"), {0, 2})
        self.assertEqual(tb.cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8")
        self.assertEqual(tb.isolcpus_domain("managed_irq,domain,1-2"), {1, 2})
        self.assertEqual(tb.isolcpus_domain("3"), {3})
        self.assertIsNone(tb.isolcpus_domain("nohz,managed_irq,1"))

    def test_the_line_the_kernel_took(self):
        ok, figure = tb.judge_effect(LINE, tb.parse_facts(FACTS_TUNED))
        self.assertTrue(ok, figure)
        self.assertIn("6/6 in /proc/cmdline", figure)

    def test_the_kernels_own_line_fails_every_check(self):
        checks = tb.took_effect(LINE, tb.parse_facts(FACTS_OWN))
        # 6 in /proc/cmdline, and what 5 of them show in /sys, /proc and the kernel log
        self.assertEqual(len(checks), 11)
        self.assertFalse(any(ok for ok, _ in checks), checks)

    def test_each_sign_of_the_kernel_ignoring_a_parameter_fails_the_row(self):
        tuned = tb.parse_facts(FACTS_TUNED)
        for key, value, says in [
            ("nohz_full", "(null)", "nohz_full"),
            ("isolated", "", "isolated"),
            ("irq_default", "3", "IRQ default affinity"),
            ("rcu_offload", "", "RCU offload"),
            ("preempt", "none (voluntary) full", "preempt"),
            ("cmdline", tuned["cmdline"].replace(" skew_tick=1", ""), "skew_tick=1"),
        ]:
            ok, figure = tb.judge_effect(LINE, dict(tuned, **{key: value}))
            self.assertFalse(ok, key)
            self.assertIn(says, figure)

    def test_the_guests_plan_line_rcu_priority_and_watchdogs(self):
        # What amd64's own `latlab tune --isolate --plan` asked for (2026-11-28).
        plan_line = LINE[:4] + ["rcutree.kthread_prio=94", "preempt=full", "skew_tick=1",
                                "nosoftlockup", "nowatchdog"]
        tuned = tb.parse_facts(FACTS_TUNED)
        more = " rcutree.kthread_prio=94 nosoftlockup nowatchdog"
        tuned.update(cmdline=tuned["cmdline"] + more, kthread_prio="94", watchdog="0",
                     soft_watchdog="0")
        ok, figure = tb.judge_effect(plan_line, tuned)
        self.assertTrue(ok, figure)
        self.assertIn("9/9 in /proc/cmdline", figure)
        for key, says in [
            ("kthread_prio", "RCU kthread priority"),
            ("watchdog", "kernel.watchdog"),
            ("soft_watchdog", "kernel.soft_watchdog"),
        ]:
            ok, figure = tb.judge_effect(plan_line, dict(tuned, **{key: "1"}))
            self.assertFalse(ok, key)
            self.assertIn(says, figure)

    def test_no_parameters_is_no_proof(self):
        self.assertFalse(tb.judge_effect([], tb.parse_facts(FACTS_TUNED))[0])


def run(p50, p99, p999, mx, missed, user=None, kernel=None, others=None):
    f = {"p50": p50, "p99": p99, "p99.9": p999, "max": mx, "missed": missed, "cycles": 9000}
    if user is not None:
        f.update(user=user, kernel=kernel, others=len(others), other_names=others)
    return f


def stat_line(pid, comm, ppid, cpu):
    """A /proc/PID/task/TID/stat line (52 fields) whose last CPU is `cpu`."""
    fields = ["S", str(ppid)] + ["0"] * 33 + ["17", str(cpu)] + ["0"] * 13
    return f"{pid} ({comm}) " + " ".join(fields)


class Comparison(unittest.TestCase):
    def test_figures_come_from_the_run_json(self):
        doc = {
            "overall": {
                "cycles": 7377,
                "missed_periods": 2623,
                "latency": {
                    "p50": 201_000,
                    "p99": 7_440_000,
                    "p99_9": 11_420_000,
                    "max": 17_400_000,
                },
            }
        }
        self.assertEqual(
            tb.figures(doc),
            {"p50": 201_000, "p99": 7_440_000, "p99.9": 11_420_000, "max": 17_400_000,
             "missed": 2623, "cycles": 7377},
        )

    def test_how_the_real_time_cpu_spent_its_time(self):
        # amd64, own line (2026-11-27): user + nice, system + irq + softirq, all.
        a = "cpu0 14 0 430 117 0 0 42 0 0 0\ncpu1 15 0 398 152 0 0 30 0 0 0\n"
        b = "cpu0 908 0 2197 363 0 0 444 0 0 0\ncpu1 766 1 2792 172 3 4 322 0 0 0\n"
        user, kernel = tb.time_shares(a, b, {1})
        total = 752 + 2394 + 20 + 3 + 4 + 292  # user+nice, system, idle, iowait, irq, softirq
        self.assertAlmostEqual(user, 752 / total)
        self.assertAlmostEqual(kernel, (2394 + 4 + 292) / total)
        self.assertIsNone(tb.time_shares(a, b, {2}))
        self.assertIsNone(tb.time_shares(a, a, {1}))

    def test_the_other_threads_on_the_real_time_cpu(self):
        dump = "\n".join([
            stat_line(2, "kthreadd", 0, 1),
            stat_line(25, "ksoftirqd/1", 2, 1),  # a kernel thread: not counted
            stat_line(301, "latlab-cpu1", 1, 1),  # the measurement
            stat_line(302, "ld-cpu0", 1, 1),
            stat_line(303, "ld-mem0", 1, 0),
            stat_line(304, "(sd-pam) x", 1, 1),  # a name with a space and parentheses
            stat_line(305, "cat", 299, 1),  # the dump itself
            "",
        ])
        self.assertEqual(tb.threads_on(dump, {1}), ["(sd-pam) x", "ld-cpu0"])
        self.assertEqual(tb.threads_on(dump, {0}), ["ld-mem0"])
        self.assertEqual(tb.threads_on("garbage\n", {1}), [])

    def test_one_run_each_a_row_per_figure_with_the_ratio(self):
        before, after = run(200_000, 8e6, 12e6, 20e6, 100), run(100_000, 4e6, 12e6, 30e6, 0)
        md = tb.compare_table([before], [after])
        lines = md.splitlines()
        self.assertEqual(lines[0], "| figure | before | after | after ÷ before |")
        self.assertIn("| p50 | 200 us | 100 us | 0.50 |", lines)
        self.assertIn("| p99 | 8.00 ms | 4.00 ms | 0.50 |", lines)
        self.assertIn("| p99.9 | 12.00 ms | 12.00 ms | 1.00 |", lines)
        self.assertIn("| max | 20.00 ms | 30.00 ms | 1.50 |", lines)
        self.assertIn("| missed periods | 100 | 0 | 0.00 |", lines)
        self.assertFalse(any("CPU 1" in l for l in lines))

    def test_several_runs_the_median_and_each_run(self):
        before = [run(3e5, 8e6, 9e6, 2e7, 10, 0.2, 0.7, ["ld-cpu0"]),
                  run(1e5, 6e6, 9e6, 1e7, 30, 0.3, 0.6, ["ld-cpu0", "ld-mem0"]),
                  run(2e5, 7e6, 9e6, 3e7, 20, 0.1, 0.8, ["ld-io0"])]
        after = [run(1e5, 7e6, 9e6, 1e7, 0, 0.01, 0.1, [])] * 3
        lines = tb.compare_table(before, after, "1").splitlines()
        self.assertIn("before, each run | after, each run | beyond the spread |", lines[0])
        # The median halved, but one run before was as low as every run after.
        self.assertIn("| p50 | 200 us | 100 us | 0.50 | 300 us / 100 us / 200 us | "
                      "100 us / 100 us / 100 us | no |", lines)
        self.assertIn("| missed periods | 20 | 0 | 0.00 | 10 / 30 / 20 | 0 / 0 / 0 | lower |",
                      lines)
        self.assertIn("| CPU 1 in user space | 20% | 1% | 0.05 | 20% / 30% / 10% | 1% / 1% / 1% "
                      "| lower |", lines)
        self.assertIn("| CPU 1 in the kernel | 70% | 10% | 0.14 | 70% / 60% / 80% | "
                      "10% / 10% / 10% | lower |", lines)
        self.assertIn("| other threads seen on CPU 1 | 1 | 0 | 0.00 | 1 / 2 / 1 | 0 / 0 / 0 "
                      "| lower |", lines)

    def test_a_difference_counts_only_beyond_the_spread_of_identical_runs(self):
        self.assertEqual(tb.separation([3, 4, 5], [1, 2, 2.9]), "lower")
        self.assertEqual(tb.separation([3, 4, 5], [5.1, 9, 6]), "higher")
        self.assertEqual(tb.separation([3, 4, 5], [1, 2, 3]), "no")
        self.assertEqual(tb.separation([3, 4, 5], [4, 4, 4]), "no")

    def test_a_zero_before_has_no_ratio(self):
        self.assertEqual(tb.ratio(0, 0), "1.00")
        self.assertEqual(tb.ratio(0, 5), "-")


if __name__ == "__main__":
    unittest.main()
