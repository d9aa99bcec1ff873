//! The kernel command line for the real-time CPUs: what each cause asks
//! for, preempt=full only where it works, `already`, the merge with the
//! running line, and the CPU sets refused.

use latlab_tune::bootline::{
    boot_line, merge, parameters, words, BootError, BootFacts, Need, PreemptModel,
};
use latlab_tune::result::BootParameter;

fn facts(needs: &[Need]) -> BootFacts {
    BootFacts {
        rt: vec![1],
        housekeeping: vec![0],
        online: vec![0, 1],
        cmdline: "BOOT_IMAGE=/vmlinuz root=UUID=abc ro quiet".into(),
        preemption: PreemptModel::Voluntary,
        dynamic: true,
        arch: "x86_64".into(),
        task_priority: 80,
        needs: needs
            .iter()
            .map(|n| (*n, format!("{n:?} measured")))
            .collect(),
    }
}

fn texts(params: &[BootParameter]) -> Vec<&str> {
    params.iter().map(|p| p.text.as_str()).collect()
}

#[test]
fn each_cause_asks_for_its_own_parameters_and_no_others() {
    let tick = parameters(&facts(&[Need::Tick]), false).unwrap();
    assert_eq!(texts(&tick), ["nohz_full=1", "skew_tick=1"]);
    assert_eq!(tick[0].why, "Tick measured");
    let rcu = parameters(&facts(&[Need::Rcu]), false).unwrap();
    assert_eq!(texts(&rcu), ["rcu_nocbs=1", "rcutree.kthread_prio=79"]);
    let irq = parameters(&facts(&[Need::IrqAffinity]), false).unwrap();
    assert_eq!(texts(&irq), ["irqaffinity=0"]);
    let wq = parameters(&facts(&[Need::Workqueue, Need::Isolation]), false).unwrap();
    assert_eq!(texts(&wq), ["isolcpus=managed_irq,domain,1"]);
    assert_eq!(
        wq[0].why, "Workqueue measured; Isolation measured",
        "in the causes' order"
    );
    assert!(parameters(&facts(&[]), false).unwrap().is_empty());
}

#[test]
fn isolate_adds_the_standard_set_and_never_tsc_reliable() {
    let all = parameters(&facts(&[]), true).unwrap();
    assert_eq!(
        texts(&all),
        [
            "isolcpus=managed_irq,domain,1",
            "nohz_full=1",
            "rcu_nocbs=1",
            "irqaffinity=0",
            "rcutree.kthread_prio=79",
            "preempt=full",
            "skew_tick=1",
            "nosoftlockup",
            "nowatchdog",
        ]
    );
    assert!(all.iter().all(|p| p.why.contains("--isolate")));
    let without = parameters(&facts(&[Need::Tick]), false).unwrap();
    assert!(!texts(&without).contains(&"nowatchdog"));
}

#[test]
fn preempt_full_only_on_a_dynamic_kernel_not_already_full_and_never_on_rt() {
    let with = |model, dynamic| {
        let mut f = facts(&[Need::Preemption]);
        f.preemption = model;
        f.dynamic = dynamic;
        texts(&parameters(&f, false).unwrap()).contains(&"preempt=full")
    };
    assert!(with(PreemptModel::Voluntary, true));
    assert!(with(PreemptModel::NoForced, true));
    assert!(with(PreemptModel::Unknown, true));
    assert!(!with(PreemptModel::Full, true));
    assert!(
        !with(PreemptModel::Voluntary, false),
        "a static kernel ignores preempt="
    );
    // A PREEMPT_RT kernel is PREEMPT_DYNAMIC too since 6.12: still nothing.
    assert!(!with(PreemptModel::Rt, true));
    let mut rt = facts(&[Need::Preemption]);
    rt.preemption = PreemptModel::Rt;
    assert!(parameters(&rt, false).unwrap().is_empty());
}

#[test]
fn idle_limits_on_x86_only() {
    let x86 = parameters(&facts(&[Need::Idle]), false).unwrap();
    assert_eq!(
        texts(&x86),
        ["intel_idle.max_cstate=1", "processor.max_cstate=1"]
    );
    assert!(x86[0].why.contains("every CPU"));
    let mut arm = facts(&[Need::Idle]);
    arm.arch = "aarch64".into();
    assert!(parameters(&arm, false).unwrap().is_empty());
}

#[test]
fn kthread_prio_is_below_the_task_and_absent_when_nothing_is_below() {
    let mut f = facts(&[Need::Rcu]);
    f.task_priority = 99;
    assert!(texts(&parameters(&f, false).unwrap()).contains(&"rcutree.kthread_prio=98"));
    f.task_priority = 1;
    assert_eq!(texts(&parameters(&f, false).unwrap()), ["rcu_nocbs=1"]);
}

#[test]
fn already_compares_values_as_the_kernel_reads_them() {
    let mut f = facts(&[Need::Tick, Need::Rcu, Need::Isolation, Need::IrqAffinity]);
    f.cmdline = "quiet isolcpus=domain,managed_irq,1 nohz_full=2 nohz_full=1-1 \
                 rcu_nocbs=1,2 irqaffinity=0 -- skew_tick=1"
        .into();
    let params = parameters(&f, false).unwrap();
    let already: Vec<(&str, bool)> = params
        .iter()
        .map(|p| (p.text.as_str(), p.already))
        .collect();
    assert_eq!(
        already,
        [
            ("isolcpus=managed_irq,domain,1", true), // flags in another order
            ("nohz_full=1", true),                   // the last one counts; 1-1 is 1
            ("rcu_nocbs=1", false),                  // 1,2 is not 1
            ("irqaffinity=0", true),
            ("rcutree.kthread_prio=79", false),
            ("skew_tick=1", false), // after --, init's, not the kernel's
        ]
    );
    f.cmdline = "isolcpus=1".into();
    assert!(!parameters(&f, false).unwrap()[0].already, "no managed_irq");
}

#[test]
fn the_merge_replaces_ours_keeps_the_rest_and_leaves_init_its_words() {
    let mut f = facts(&[Need::Tick]);
    f.cmdline = r#"BOOT_IMAGE=/vmlinuz-6.1 root=UUID=abc ro nohz_full=3 dyndbg="file a.c +p" quiet -- single nohz_full=7"#.into();
    let line = boot_line(&f, false).unwrap();
    assert_eq!(
        line.uboot,
        r#"root=UUID=abc ro dyndbg="file a.c +p" quiet nohz_full=1 skew_tick=1 -- single nohz_full=7"#
    );
    assert_eq!(
        line.grub,
        r#"dyndbg="file a.c +p" quiet nohz_full=1 skew_tick=1"#
    );
    assert_eq!(words(r#"a="b c"  d"#), [r#"a="b c""#, "d"]);
}

#[test]
fn the_merge_keeps_this_machines_own_command_line() {
    let running = std::fs::read_to_string("/proc/cmdline").unwrap();
    let ours = vec![BootParameter {
        text: "nohz_full=1".into(),
        why: "test".into(),
        already: false,
    }];
    let merged = merge(running.trim(), &ours);
    let before = words(running.trim());
    let after = words(&merged);
    let kept: Vec<&&str> = before
        .iter()
        .filter(|w| !w.starts_with("nohz_full="))
        .collect();
    assert_eq!(after.len(), kept.len() + 1, "{merged}");
    // Init's words (after --) come back unchanged, at the end.
    if let Some(split) = before.iter().position(|w| *w == "--") {
        assert!(merged.ends_with(&before[split..].join(" ")), "{merged}");
        let at = after.iter().position(|w| *w == "--").unwrap();
        assert_eq!(after[at - 1], "nohz_full=1");
    }
}

#[test]
fn cpu_sets_that_cannot_be_isolated_are_refused_with_the_way_out() {
    let with = |rt: Vec<usize>, hk: Vec<usize>, online: Vec<usize>| {
        let mut f = facts(&[Need::Tick]);
        (f.rt, f.housekeeping, f.online) = (rt, hk, online);
        parameters(&f, true).unwrap_err()
    };
    let every = with(vec![0, 1], vec![], vec![0, 1]);
    assert_eq!(every, BootError::EveryCpu { rt: "0-1".into() });
    assert!(every
        .to_string()
        .contains("keep at least one for housekeeping"));
    let every_but_not_zero = with(vec![1, 2, 3], vec![], vec![1, 2, 3]);
    assert!(matches!(every_but_not_zero, BootError::EveryCpu { .. }));
    let offline = with(vec![5], vec![0], vec![0, 1]);
    assert!(offline
        .to_string()
        .contains("CPU 5 is not online (online: 0-1)"));
    let boot_cpu = with(vec![0], vec![1], vec![0, 1, 2]);
    assert!(boot_cpu.to_string().contains("among 1-2"), "{boot_cpu}");
    assert!(matches!(
        with(vec![1], vec![], vec![0, 1, 2]),
        BootError::Housekeeping { .. }
    ));
    assert!(matches!(
        with(vec![1], vec![1, 0], vec![0, 1]),
        BootError::Housekeeping { .. }
    ));
    assert!(matches!(
        with(vec![], vec![0], vec![0, 1]),
        BootError::NoRealTime
    ));
}

#[test]
fn facts_of_this_machine() {
    let info = latlab_rt::sysinfo::SystemInfo::gather();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let online = latlab_rt::sched::parse_cpu_list(online.trim()).unwrap();
    if online.len() < 2 {
        latlab_testkit::skip::skip("one online CPU: no real-time CPU can be set apart");
        return;
    }
    let rt = [online[1]];
    let hk: Vec<usize> = online.iter().copied().filter(|c| *c != rt[0]).collect();
    let f = BootFacts::from_system(
        &info,
        &rt,
        &hk,
        &online,
        80,
        vec![(Need::Preemption, "p".into())],
    );
    assert_eq!(f.cmdline, info.cmdline);
    assert_eq!(f.dynamic, info.kernel_version.contains("PREEMPT_DYNAMIC"));
    let line = boot_line(&f, true).unwrap();
    eprintln!(
        "this machine: {} ({:?}, dynamic {}): {:?}",
        info.kernel_version, f.preemption, f.dynamic, line.parameters
    );
    let has_full = texts(&line.parameters).contains(&"preempt=full");
    let want_full = f.dynamic && !matches!(f.preemption, PreemptModel::Full | PreemptModel::Rt);
    assert_eq!(has_full, want_full);
}

#[test]
fn a_fixs_knob_names_what_it_asks_of_the_command_line() {
    use latlab_fix::Knob;
    let boot = |name: &str| Need::of_knob(&Knob::BootParameter { name: name.into() });
    assert_eq!(boot("nohz_full"), Some(Need::Tick));
    assert_eq!(boot("rcu_nocbs"), Some(Need::Rcu));
    assert_eq!(boot("preempt"), Some(Need::Preemption));
    assert_eq!(boot("intel_idle.max_cstate"), Some(Need::Idle));
    assert_eq!(boot("tsc"), None);
    assert_eq!(
        Need::of_knob(&Knob::IrqAffinity { irq: 3 }),
        Some(Need::IrqAffinity)
    );
    assert_eq!(Need::of_knob(&Knob::CpusetPartition), Some(Need::Isolation));
    assert_eq!(Need::of_knob(&Knob::Ksm), None);
}
