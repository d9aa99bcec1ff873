//! The exported profile loaded by tuned's own profile loader (Debian's
//! `tuned` package: tuned.profiles.loader.Loader with its locator, factory,
//! merger and variables, as the daemon loads a profile; no daemon, nothing
//! applied), each option checked against the options its plugin declares.

use std::process::Command;

use latlab_fix::Knob;
use latlab_tune::export::{write_exports, Kept};
use latlab_tune::result::BootParameter;

/// Loads the profile in `argv[1]` and prints what tuned parsed, as JSON.
const LOAD: &str = r#"
import importlib, inspect, json, re, sys
from tuned.profiles.loader import Loader
from tuned.profiles.locator import Locator
from tuned.profiles.factory import Factory
from tuned.profiles.merger import Merger
from tuned.profiles.variables import Variables
from tuned.utils.commands import commands
import tuned.plugins.base as base

profile = Loader(Locator([sys.argv[1]]), Factory(), Merger(), None, Variables()).load(["latlab-rt"])
names = ["[ktimers/1]", "[ktimers/11]", "/usr/bin/ktimers/1 -x", "[irq/24-virtio0]"]
units = {}
for name, unit in profile.units.items():
    module = importlib.import_module("tuned.plugins.plugin_" + unit.type)
    plugin = [c for _, c in inspect.getmembers(module, inspect.isclass)
              if issubclass(c, base.Plugin) and c.__module__ == module.__name__][0]
    try:
        declared = plugin._get_config_options()
    except TypeError:
        declared = plugin._get_config_options(None)
    dynamic = unit.type in ("sysctl", "sysfs")
    units[name] = {
        "type": unit.type, "devices": unit.devices, "options": dict(unit.options),
        "unknown": [o for o in unit.options if not dynamic and o not in declared
                    and not (unit.type == "scheduler" and o.startswith("group."))
                    and not (unit.type == "bootloader" and o.startswith("cmdline"))],
        "cpus": {o: commands().hex2cpulist(v) for o, v in unit.options.items() if o.endswith("cpumask")},
        "groups": {o: {"fields": v.split(":", 4), "matches": [n for n in names if re.search(v.split(":", 4)[4], n)]}
                   for o, v in unit.options.items() if o.startswith("group.")},
    }
print(json.dumps({"name": profile.name, "main": profile.options, "units": units}))
"#;

/// Debian's python3 with tuned's modules, or why not.
fn tuned_python() -> Result<&'static str, String> {
    for python in ["/usr/bin/python3", "python3"] {
        let ok = Command::new(python)
            .args(["-c", "import tuned.profiles.loader"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Ok(python);
        }
    }
    Err("tuned's Python modules are not installed (apt-get install tuned; scripts/test-deps.sh does)".into())
}

#[test]
fn tuneds_own_loader_reads_every_section_and_option() {
    let python = match tuned_python() {
        Ok(python) => python,
        Err(why) if std::env::var("LATLAB_REQUIRE_PRIVILEGE").as_deref() == Ok("1") => {
            panic!("{why} (LATLAB_REQUIRE_PRIVILEGE=1 makes this a failure)")
        }
        Err(why) => return latlab_testkit::skip::skip(&why),
    };
    let kept = vec![
        Kept::new(
            Knob::Sysctl {
                name: "kernel.sched_rt_runtime_us".into(),
            },
            "-1",
            "RT throttling",
        ),
        Kept::new(
            Knob::Sysctl {
                name: "vm.stat_interval".into(),
            },
            "10",
            "vmstat",
        ),
        Kept::new(Knob::TransparentHugepages, "never", "khugepaged"),
        Kept::new(Knob::CpufreqGovernor { cpu: 1 }, "performance", "frequency"),
        Kept::new(Knob::WorkqueueCpumask, "0", "kworker ran on CPU 1"),
        Kept::new(Knob::IdleState { cpu: 1, state: 2 }, "1", "C6 exit 133 us"),
        Kept::new(
            Knob::TaskPriority {
                pid: 17,
                comm: "ktimers/1".into(),
            },
            "fifo:81",
            "timers",
        ),
        Kept::new(
            Knob::TaskAffinity {
                pid: 17,
                comm: "ktimers/1".into(),
            },
            "0",
            "ran on CPU 1",
        ),
        Kept::new(Knob::IrqAffinity { irq: 24 }, "0", "IRQ 24 # ran on CPU 1"),
        Kept::new(Knob::CpusetPartition, "1", "user tasks ran on CPU 1"),
    ];
    let boot = [
        "isolcpus=managed_irq,domain,1",
        "nohz_full=1",
        "preempt=full",
    ]
    .map(|text| BootParameter {
        text: text.into(),
        why: "measured".into(),
        already: false,
    });
    let dir = tempfile::tempdir().unwrap();
    let written = write_exports(dir.path(), &kept, &boot, &[1]).unwrap();
    let profile_dir = dir.path().join("tuned");
    let out = Command::new(python)
        .args(["-c", LOAD])
        .arg(&profile_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tuned's loader failed: {stderr}");
    let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    eprintln!("tuned parsed: {parsed:#}");
    let units = &parsed["units"];
    let option = |unit: &str, name: &str| units[unit]["options"][name].as_str().map(str::to_string);

    assert_eq!(parsed["name"], "latlab-rt");
    assert!(parsed["main"]["summary"]
        .as_str()
        .unwrap()
        .contains("real-time CPUs 1"));
    assert!(parsed["main"].get("include").is_none());
    let mut sections: Vec<&str> = units
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    sections.sort_unstable();
    assert_eq!(
        sections,
        [
            "bootloader",
            "cpu",
            "irqbalance",
            "scheduler",
            "script",
            "sysctl",
            "sysfs",
            "vm"
        ]
    );
    for (name, unit) in units.as_object().unwrap() {
        assert_eq!(
            unit["unknown"],
            serde_json::json!([]),
            "[{name}]: options its plugin lacks"
        );
    }
    assert_eq!(
        option("sysctl", "kernel.sched_rt_runtime_us").as_deref(),
        Some("-1")
    );
    assert_eq!(option("sysctl", "vm.stat_interval").as_deref(), Some("10"));
    assert_eq!(
        option("vm", "transparent_hugepages").as_deref(),
        Some("never")
    );
    assert_eq!(units["cpu"]["devices"], "cpu1");
    assert_eq!(option("cpu", "governor").as_deref(), Some("performance"));
    let wq = "/sys/devices/virtual/workqueue/cpumask";
    assert_eq!(
        units["sysfs"]["cpus"][wq],
        serde_json::json!([0]),
        "tuned reads the mask as CPU 0"
    );
    assert_eq!(
        option(
            "sysfs",
            "/sys/devices/system/cpu/cpu1/cpuidle/state2/disable"
        )
        .as_deref(),
        Some("1")
    );
    assert_eq!(option("scheduler", "isolated_cores").as_deref(), Some("1"));
    let group = &units["scheduler"]["groups"]["group.latlab6"];
    let fields: Vec<&str> = group["fields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert_eq!(
        fields[..4],
        ["0", "f", "81", "1"],
        "rule, FIFO 81, affinity CPU 0 as hex: {group}"
    );
    assert_eq!(
        group["matches"],
        serde_json::json!(["[ktimers/1]", "/usr/bin/ktimers/1 -x"])
    );
    assert_eq!(option("irqbalance", "banned_cpus").as_deref(), Some("1"));
    assert_eq!(
        option("bootloader", "cmdline").as_deref(),
        Some("isolcpus=managed_irq,domain,1 nohz_full=1 preempt=full")
    );
    let script = written
        .tuned_script
        .expect("IRQ affinity needs the [script]");
    assert_eq!(
        units["script"]["options"]["script"],
        serde_json::json!([script.to_str().unwrap()]),
        "tuned resolves ${{i:PROFILE_DIR}} to the profile's directory"
    );
    let script_text = std::fs::read_to_string(&script).unwrap();
    assert!(script_text.contains("put '/proc/irq/24/smp_affinity_list' '0'"));
    assert!(
        !script_text.contains("ktimers"),
        "tuned's [scheduler] sets that thread"
    );

    // The check of option names can fail: a misspelt option is caught.
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(bad.join("latlab-rt")).unwrap();
    std::fs::write(
        bad.join("latlab-rt/tuned.conf"),
        "[main]\nsummary=x\n[vm]\ntransparent_hugepage_bogus=never\n[scheduler]\nisolated_core=1\n",
    )
    .unwrap();
    let out = Command::new(python)
        .args(["-c", LOAD])
        .arg(&bad)
        .output()
        .unwrap();
    let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        parsed["units"]["vm"]["unknown"],
        serde_json::json!(["transparent_hugepage_bogus"])
    );
    assert_eq!(
        parsed["units"]["scheduler"]["unknown"],
        serde_json::json!(["isolated_core"])
    );
}
