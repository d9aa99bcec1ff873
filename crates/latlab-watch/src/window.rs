//! A window from the kernel turned into latlab-explain's model: its events
//! become [`Rec`]s, its wake-up a [`Period`], the rings' events before the
//! due time the CPU states at that time ([`CpuState`]), so that explain's
//! own analysis ([`latlab_explain::analyze_windows`]) ranks the causes.

use std::collections::HashMap;

use latlab_explain::model::{Kind, Names, Rec};
use latlab_explain::separate::{CpuState, Window};
use latlab_explain::{Period, PeriodSource};

use crate::functions::FunctionNames;
use crate::irqnames::IrqNames;
use crate::records::{comm_str, Ev, EvType, RawWindow};

/// Names of tasks that appear in a ring only as the running task (no
/// switch to them in the ring), from `/proc/<tid>/comm`, remembered for a
/// while (bounded: forgotten all at once past [`COMM_CACHE`] entries).
#[derive(Debug, Default)]
pub struct CommCache {
    known: HashMap<i32, String>,
}

/// Task names the cache keeps at most.
pub const COMM_CACHE: usize = 4096;

impl CommCache {
    /// The name of `pid` (`None` for a task that is gone).
    pub fn get(&mut self, pid: i32) -> Option<String> {
        if pid <= 0 {
            return None;
        }
        if let Some(c) = self.known.get(&pid) {
            return Some(c.clone());
        }
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        let comm = comm.trim_end().to_string();
        if self.known.len() >= COMM_CACHE {
            self.known.clear();
        }
        self.known.insert(pid, comm.clone());
        Some(comm)
    }

    /// Learns a name seen in a ring.
    pub fn learn(&mut self, pid: i32, comm: &str) {
        if pid > 0 && !comm.is_empty() {
            if self.known.len() >= COMM_CACHE {
                self.known.clear();
            }
            self.known.insert(pid, comm.to_string());
        }
    }
}

/// The explain window of `raw`, its events' names interned into `names`,
/// its timer callbacks named there ([`Names::set_callback`]) from
/// `functions`. `truncated` in the result: a ring did not reach back to the
/// due time (its CPU logged more than a ring holds in the window).
pub fn to_window(
    raw: &RawWindow,
    names: &mut Names,
    irqs: &IrqNames,
    comms: &mut CommCache,
    functions: &mut FunctionNames,
) -> (Window, bool) {
    let h = &raw.head;
    let start = h.start();
    let period = Period {
        pid: h.pid,
        intended: start,
        expiry: h.timer_driven().then_some(h.expires),
        // A wake-up that no timer made has no interrupt part: the window
        // starts at the wake-up.
        expire: Some(if h.timer_driven() {
            own_callback(raw).unwrap_or(h.irq_at)
        } else {
            h.woken_at
        }),
        wake: Some(h.woken_at),
        run: h.switch_at,
        timer_cpu: h.timer_cpu,
        cpu: h.cpu,
        position: 0,
        source: PeriodSource::Hrtimer,
        soft: h.soft,
    };
    names.set_comm_bytes(h.pid, &h.comm);
    // Names first: every switch and wake-up names its task.
    for e in &raw.events {
        match e.ty {
            EvType::Switch => {
                names.set_comm_bytes(e.b, &e.comm);
                comms.learn(e.b, &comm_str(&e.comm));
            }
            EvType::Waking => {
                names.set_comm_bytes(e.a, &e.comm);
            }
            _ => {}
        }
    }
    // The timer callbacks, as explain names them from a trace's `function`
    // fields: the new ones looked up together.
    functions.resolve(raw.events.iter().map(Ev::function));
    for e in &raw.events {
        let f = e.function();
        if f != 0 {
            let function = names.intern(functions.name(f));
            names.set_callback(e.x, e.ts, function);
        }
    }
    let mut unnamed: Vec<i32> = Vec::new();
    for e in &raw.events {
        for pid in [e.pid, if e.ty == EvType::Switch { e.a } else { 0 }] {
            if pid > 0 && names.comm(pid) == "<...>" && !unnamed.contains(&pid) {
                unnamed.push(pid);
            }
        }
    }
    for pid in unnamed {
        if let Some(c) = comms.get(pid) {
            let s = names.intern(&c);
            names.set_comm(pid, s);
        }
    }
    let mut timer_st = CpuState::default();
    let mut task_st = CpuState::default();
    let mut events = Vec::new();
    for e in &with_timer_interrupts(&raw.events) {
        if e.ts > h.switch_at {
            continue;
        }
        let rec = to_rec(e, names, irqs);
        if e.ts < start {
            if e.cpu == h.timer_cpu {
                timer_st.apply(&rec);
            }
            if e.cpu == h.cpu {
                task_st.apply(&rec);
            }
        } else {
            events.push(rec);
        }
    }
    let truncated = raw
        .horizon
        .iter()
        .any(|&(_, oldest, wrapped)| wrapped && oldest > start);
    let window = Window {
        period: 0,
        late: h.late,
        p: period,
        timer_cpu_state: timer_st,
        task_cpu_state: task_st,
        events,
        dropped: 0,
        text: Vec::new(),
    };
    (window, truncated)
}

/// When the callback that woke the task of a timer-driven window began:
/// the last `hrtimer_expire_entry` of its kind (hard or soft) on the timer
/// CPU between the interrupt's clock read and the wake-up (`None` when the
/// ring no longer holds it).
///
/// That is the period's `expire`, as explain's own trace reading sets it:
/// explain takes the callback beginning there for the woken task's own
/// (the task's wake-up, [`latlab_explain::Cause::HrtimerInterrupt`]), and
/// names the other callbacks of the interrupt, before it, by their
/// functions. The interrupt's clock read, where the drawn interrupt
/// begins and the `irq` latency ends, is earlier by the callbacks that ran
/// before it and the interrupt's own entry.
pub fn own_callback(raw: &RawWindow) -> Option<u64> {
    let h = &raw.head;
    raw.events
        .iter()
        .filter(|e| {
            e.ty == EvType::HrtimerEntry
                && e.cpu == h.timer_cpu
                && (e.a != 0) == h.soft
                && e.ts >= h.irq_at
                && e.ts <= h.woken_at
        })
        .map(|e| e.ts)
        .next_back()
}

/// x86's LAPIC timer vector (`LOCAL_TIMER_VECTOR`), index 0 of
/// [`crate::records::VECTOR_NAMES`].
pub const LOCAL_TIMER_VECTOR: i32 = 0xec;

/// `events` with the timer interrupts drawn in where no event marks them.
///
/// The BPF side has no program on x86's LAPIC timer vector (two fewer on
/// every timer wake-up's path); explain still needs the interrupt, the
/// part of a late wake-up after the expiry. Its hrtimer callbacks give it:
/// each `hrtimer_expire_entry` run in hard interrupt context carries the
/// interrupt's clock read (the `now` of its expired timers), where the
/// interrupt begins. Where it ends: at the callbacks' last
/// `hrtimer_expire_exit` when the ring has them (the tracefs side), else
/// (the BPF side, no program there either) at the interrupt's last event:
/// its last callback's entry or the last wake-up a callback made (`d` of
/// the waking, set for watched tasks). That end is early by the rest of
/// the last callback and the interrupt's exit, which then count as the
/// interrupted context's: a long tick is not seen as the interrupt's.
/// A CPU whose ring holds local-timer vector events (the tracefs side logs
/// them), and callbacks inside an `irq_handler` (the timer as a named
/// interrupt, as on ARM), are left as they are.
pub fn with_timer_interrupts(events: &[Ev]) -> Vec<Ev> {
    #[derive(Default)]
    struct Cpu {
        /// A real local-timer vector event is in the ring.
        has_vector: bool,
        /// Callback exits are in the ring.
        has_exits: bool,
        /// An irq_handler runs.
        in_handler: bool,
        /// An interrupt drawn in is open: the event it ends after, when
        /// known yet (with exits: the last exit seen).
        open: Option<Option<usize>>,
        /// The last event's time on this CPU.
        last_ts: u64,
    }
    let mut cpus: HashMap<u32, Cpu> = HashMap::new();
    for e in events {
        if e.ty == EvType::VectorEntry && e.b == 0 {
            cpus.entry(e.cpu).or_default().has_vector = true;
        }
        if e.ty == EvType::HrtimerExit {
            cpus.entry(e.cpu).or_default().has_exits = true;
        }
    }
    let marker = |e: &Ev, ts: u64, ty: EvType| Ev {
        ts,
        ty,
        x: 0,
        a: LOCAL_TIMER_VECTOR,
        b: 0,
        c: 0,
        d: 0,
        comm: [0; 16],
        ..*e
    };
    // (index, after it?, event)
    let mut drawn: Vec<(usize, bool, Ev)> = Vec::new();
    let close = |drawn: &mut Vec<(usize, bool, Ev)>, last_exit: Option<usize>| {
        if let Some(x) = last_exit {
            drawn.push((
                x,
                true,
                marker(&events[x], events[x].ts, EvType::VectorExit),
            ));
        }
    };
    for (i, e) in events.iter().enumerate() {
        let c = cpus.entry(e.cpu).or_default();
        let last_ts = std::mem::replace(&mut c.last_ts, e.ts);
        if c.has_vector {
            continue;
        }
        match e.ty {
            EvType::IrqEntry => c.in_handler = true,
            EvType::IrqExit => c.in_handler = false,
            _ => {}
        }
        let hard_callback = e.ty == EvType::HrtimerEntry && e.a == 0 && !c.in_handler;
        // A callback's interrupt read the clock `c` ns before it.
        let read = e.ts.saturating_sub(e.c.max(0) as u64);
        if let Some(last_exit) = c.open {
            let same_interrupt = match e.ty {
                // A callback of the same interrupt shares its clock read;
                // one read after the last callback ended is a new interrupt.
                EvType::HrtimerEntry if hard_callback => {
                    last_exit.is_none_or(|x| read <= events[x].ts)
                }
                EvType::HrtimerExit => true,
                // Without exits, only a wake-up a hard callback made.
                EvType::Waking => c.has_exits || e.d == 1,
                _ => false,
            };
            if same_interrupt {
                if e.ty == EvType::HrtimerExit || !c.has_exits {
                    c.open = Some(Some(i));
                }
                continue;
            }
            close(&mut drawn, last_exit);
            c.open = None;
        }
        if hard_callback {
            // Not before this CPU's previous event, whose order it keeps.
            let at = read.max(last_ts).min(e.ts);
            drawn.push((i, false, marker(e, at, EvType::VectorEntry)));
            c.open = Some(if c.has_exits { None } else { Some(i) });
        }
    }
    for c in cpus.values() {
        if let Some(last_exit) = c.open {
            close(&mut drawn, last_exit);
        }
    }
    if drawn.is_empty() {
        return events.to_vec();
    }
    drawn.sort_by_key(|&(i, after, _)| (i, after));
    let mut out = Vec::with_capacity(events.len() + drawn.len());
    let mut d = drawn.into_iter().peekable();
    for (i, e) in events.iter().enumerate() {
        while let Some((_, _, m)) = d.next_if(|&(at, after, _)| at == i && !after) {
            out.push(m);
        }
        out.push(*e);
        while let Some((_, _, m)) = d.next_if(|&(at, after, _)| at == i && after) {
            out.push(m);
        }
    }
    // The entries drawn in sit at their interrupt's clock read, which may
    // come before another CPU's events listed ahead of them.
    out.sort_by_key(|e| e.ts);
    out
}

fn to_rec(e: &crate::records::Ev, names: &mut Names, irqs: &IrqNames) -> Rec {
    let (event, kind) = match e.ty {
        EvType::Switch => {
            let prev_name = String::from(names.comm(e.a));
            let prev_comm = names.intern(&prev_name);
            let next_comm = names.intern(&comm_str(&e.comm));
            (
                "sched_switch",
                Kind::Switch {
                    prev_pid: e.a,
                    prev_runnable: e.d != 0,
                    next_pid: e.b,
                    next_prio: e.c,
                    next_comm,
                    prev_comm,
                },
            )
        }
        EvType::Waking => (
            "sched_waking",
            Kind::Wake {
                pid: e.a,
                target_cpu: e.b,
                waking: true,
            },
        ),
        EvType::IrqEntry => (
            "irq_handler_entry",
            Kind::IrqEntry {
                irq: e.a,
                name: names.intern(&irqs.name(e.a)),
            },
        ),
        EvType::IrqExit => ("irq_handler_exit", Kind::IrqExit { irq: e.a }),
        EvType::SoftirqEntry => ("softirq_entry", Kind::SoftirqEntry { vec: e.a as u8 }),
        EvType::SoftirqExit => ("softirq_exit", Kind::SoftirqExit { vec: e.a as u8 }),
        EvType::HrtimerEntry => (
            "hrtimer_expire_entry",
            Kind::HrtimerExpireEntry {
                timer: e.x,
                now: None,
            },
        ),
        EvType::HrtimerExit => (
            "hrtimer_expire_exit",
            Kind::HrtimerExpireExit { timer: e.x },
        ),
        EvType::VectorEntry => {
            let vector = crate::records::VECTOR_NAMES
                .get(e.b as usize)
                .copied()
                .unwrap_or("vector");
            (
                "irq_vectors_entry",
                Kind::IrqEntry {
                    irq: -1,
                    name: names.intern(vector),
                },
            )
        }
        EvType::VectorExit => ("irq_vectors_exit", Kind::IrqExit { irq: -1 }),
    };
    Rec {
        ts: e.ts,
        cpu: e.cpu,
        pid: e.pid,
        name: names.intern(event),
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::tests::{comm, ev};
    use crate::records::Head;

    /// What [`to_window`] names things with: fresh tables and `fns`.
    struct Naming {
        names: Names,
        irqs: IrqNames,
        comms: CommCache,
        fns: FunctionNames,
    }

    impl Naming {
        fn new(fns: FunctionNames) -> Self {
            Naming {
                names: Names::new(),
                irqs: IrqNames::default(),
                comms: CommCache::default(),
                fns,
            }
        }

        /// [`to_window`] of `raw` with these names.
        fn window(&mut self, raw: &RawWindow) -> (Window, bool) {
            to_window(
                raw,
                &mut self.names,
                &self.irqs,
                &mut self.comms,
                &mut self.fns,
            )
        }

        /// explain's analysis of `windows` with these names.
        fn analyze(&self, windows: &[Window]) -> latlab_explain::WindowsAnalysis {
            latlab_explain::analyze_windows(windows, &self.names, false)
        }
    }

    /// A 1 ms timer task (pid 42, rt priority 95) on CPU 1, woken by its
    /// timer on CPU 1; a `dd` (pid 900, nice 0) keeps a NET_RX softirq
    /// running on CPU 1 from before the expiry until 60 µs after it.
    fn softirq_window(late: bool, extra: u64) -> RawWindow {
        let t = 10_000_000u64;
        let head = Head {
            pid: 42,
            cpu: 1,
            timer_cpu: 1,
            prio: 4,
            expires: t,
            irq_at: t + 2_000 + extra,
            woken_at: t + 3_000 + extra,
            switch_at: t + 5_000 + extra,
            late,
            soft: false,
            comm: comm("cyclictest"),
        };
        // What dd (pid 900) does on CPU 1, `at` ns after the due time and
        // the softirq's overrun.
        let dd = |at: u64, ty: EvType, args: [i32; 4], comm: &str| {
            ev(t + at + extra, 1, ty, 900, args, comm)
        };
        let mut events = vec![ev(
            t - 500_000,
            1,
            EvType::Switch,
            42,
            [42, 900, 120, 0],
            "dd",
        )];
        if extra > 0 {
            events.push(ev(
                t - 1_000,
                1,
                EvType::SoftirqEntry,
                900,
                [3, 0, 0, 0],
                "",
            ));
            events.push(dd(0, EvType::SoftirqExit, [3, 0, 0, 0], ""));
        }
        events.extend([
            dd(1_000, EvType::VectorEntry, [236, 0, 0, 0], ""),
            dd(2_000, EvType::HrtimerEntry, [0; 4], ""),
            dd(3_000, EvType::Waking, [42, 1, 4, 0], "cyclictest"),
            dd(3_500, EvType::HrtimerExit, [0; 4], ""),
            dd(4_000, EvType::VectorExit, [236, 0, 0, 0], ""),
            dd(5_000, EvType::Switch, [900, 42, 4, 1], "cyclictest"),
        ]);
        RawWindow {
            head,
            events,
            horizon: vec![(1, t - 500_000, false)],
        }
    }

    #[test]
    fn a_late_window_is_explained_by_explains_own_analysis() {
        let mut naming = Naming::new(FunctionNames::new());
        let (late, cut) = naming.window(&softirq_window(true, 60_000));
        assert!(!cut);
        assert_eq!(late.p.latency(), 65_000);
        // The softirq was running at the due time: the state says so.
        assert_eq!(late.timer_cpu_state.softirq, Some(3));
        assert_eq!(late.timer_cpu_state.current, 900);
        let (normal, _) = naming.window(&softirq_window(false, 0));
        let a = naming.analyze(&[late, normal]);
        let sum: u64 = a.parts[0].iter().map(|p| p.ns).sum();
        assert_eq!(sum, 65_000, "the parts add up to the latency");
        assert_eq!(a.causes[0].cause.category(), "softirq");
        assert!(
            a.causes[0].description.contains("NET_RX"),
            "{:?}",
            a.causes[0]
        );
        assert_eq!(a.windows.len(), 1);
        assert_eq!(a.windows[0].task, "cyclictest:42");
    }

    /// [`softirq_window`] as the BPF side sends it: no LAPIC timer vector
    /// events, the callback's entry carrying the interrupt's clock read.
    fn without_vector(mut raw: RawWindow) -> RawWindow {
        let irq_at = raw.head.irq_at;
        raw.events
            .retain(|e| !matches!(e.ty, EvType::VectorEntry | EvType::VectorExit));
        for e in &mut raw.events {
            if e.ty == EvType::HrtimerEntry {
                e.c = (e.ts - irq_at + 1_000) as i32;
            }
        }
        raw
    }

    /// An hrtimer callback's entry in hard interrupt context on CPU 0, its
    /// interrupt's clock read `since_read` ns before.
    fn hard_callback(ts: u64, since_read: i32) -> Ev {
        ev(ts, 0, EvType::HrtimerEntry, 0, [0, 0, since_read, 0], "")
    }

    /// The timer interrupts drawn into `events`: their entries and exits.
    fn vector_marks(events: &[Ev]) -> Vec<(u64, EvType)> {
        with_timer_interrupts(events)
            .iter()
            .filter(|e| matches!(e.ty, EvType::VectorEntry | EvType::VectorExit))
            .map(|e| (e.ts, e.ty))
            .collect()
    }

    /// The drawn events of the late [`softirq_window`] from the timer
    /// interrupt on (after its 3 earlier events): ns after the due time, type.
    fn from_the_interrupt(raw: &RawWindow, drawn: &[Ev]) -> Vec<(u64, EvType)> {
        let t = raw.head.expires + 60_000;
        drawn[3..].iter().map(|e| (e.ts - t, e.ty)).collect()
    }

    /// Explains `raw` (the late [`softirq_window`] without the vector) and
    /// the window with it, each against the same baseline: the same top
    /// cause, and the late window's parts as with the vector but for
    /// `moved` (cause name prefix, ns more without the vector).
    fn explained_as_with_the_vector(
        raw: &RawWindow,
        moved: &[(&str, i64)],
    ) -> (
        latlab_explain::WindowsAnalysis,
        latlab_explain::WindowsAnalysis,
    ) {
        let mut naming = Naming::new(FunctionNames::new());
        let mut analyse = |raw: &RawWindow| {
            let (late, _) = naming.window(raw);
            let (normal, _) = naming.window(&softirq_window(false, 0));
            naming.analyze(&[late, normal])
        };
        let with = analyse(&softirq_window(true, 60_000));
        let without = analyse(raw);
        assert_eq!(with.causes[0].description, without.causes[0].description);
        let part = |a: &latlab_explain::WindowsAnalysis, c: &str| -> i64 {
            a.parts[0]
                .iter()
                .filter(|p| format!("{:?}", p.cause).starts_with(c))
                .map(|p| p.ns as i64)
                .sum()
        };
        for &(cause, more) in moved {
            assert_eq!(
                part(&without, cause),
                part(&with, cause) + more,
                "{cause}: {:?} against {:?}",
                without.parts[0],
                with.parts[0]
            );
        }
        (with, without)
    }

    #[test]
    fn the_timer_interrupt_is_drawn_from_its_callbacks() {
        let raw = without_vector(softirq_window(true, 60_000));
        let drawn = with_timer_interrupts(&raw.events);
        // Entry at the clock read (1 µs before the callback), exit at the
        // callback's end; the wake-up inside, the switch after.
        assert_eq!(
            from_the_interrupt(&raw, &drawn),
            [
                (1_000, EvType::VectorEntry),
                (2_000, EvType::HrtimerEntry),
                (3_000, EvType::Waking),
                (3_500, EvType::HrtimerExit),
                (3_500, EvType::VectorExit),
                (5_000, EvType::Switch),
            ]
        );
        assert_eq!(drawn[3].a, LOCAL_TIMER_VECTOR);
        // Explain reads the window as it read the one with the vector: the
        // same parts, but for the interrupt's last 0.5 µs after its
        // callback (in a real kernel: reprogramming the timer), which the
        // drawn interrupt leaves to the interrupted task.
        let (with, without) = explained_as_with_the_vector(
            &raw,
            &[
                ("Softirq", 0),
                ("TimerIrqDelay", 0),
                ("HrtimerInterrupt", -500),
                ("NonPreemptibleKernel", 500),
            ],
        );
        assert_eq!(with.parts[1], without.parts[1], "the baseline window");
    }

    #[test]
    fn without_exits_the_interrupt_ends_at_its_last_event() {
        // As the BPF side sends it: no vector, no callback exit; the
        // watched task's wake-up marked as made by a hard callback.
        let mut raw = without_vector(softirq_window(true, 60_000));
        raw.events.retain(|e| e.ty != EvType::HrtimerExit);
        for e in &mut raw.events {
            if e.ty == EvType::Waking {
                e.d = 1;
            }
        }
        assert_eq!(
            from_the_interrupt(&raw, &with_timer_interrupts(&raw.events)),
            [
                (1_000, EvType::VectorEntry),
                (2_000, EvType::HrtimerEntry),
                (3_000, EvType::Waking),
                (3_000, EvType::VectorExit),
                (5_000, EvType::Switch),
            ]
        );
        // Explain names the same cause; the interrupt's last µs (after the
        // wake-up: the callback's return, the interrupt's exit) goes to the
        // interrupted context.
        explained_as_with_the_vector(
            &raw,
            &[
                ("Softirq", 0),
                ("TimerIrqDelay", 0),
                ("HrtimerInterrupt", -1_000),
                ("NonPreemptibleKernel", 1_000),
            ],
        );

        // Two callbacks of one interrupt, then a wake-up no callback made
        // (task context after the interrupt): the interrupt ends at its
        // second callback. A later interrupt ends at the wake-up it made.
        let waking = |ts: u64, d: i32| ev(ts, 0, EvType::Waking, 7, [42, -1, 4, d], "");
        let events = vec![
            hard_callback(1_500, 500),
            hard_callback(2_100, 1_100),
            waking(2_500, 0),
            hard_callback(9_500, 500),
            waking(9_700, 1),
            ev(9_900, 0, EvType::Switch, 0, [0, 42, 4, 1], "cyclictest"),
        ];
        assert_eq!(
            vector_marks(&events),
            [
                (1_000, EvType::VectorEntry),
                (2_100, EvType::VectorExit),
                (9_000, EvType::VectorEntry),
                (9_700, EvType::VectorExit),
            ]
        );
    }

    #[test]
    fn two_interrupts_are_two_and_real_ones_stay_as_they_are() {
        let exit = |ts: u64| ev(ts, 0, EvType::HrtimerExit, 0, [0; 4], "");
        // Two callbacks of one interrupt (one clock read), then a later
        // interrupt: two entries, two exits.
        let events = vec![
            hard_callback(1_500, 500),
            exit(2_000),
            hard_callback(2_100, 1_100),
            exit(2_200),
            hard_callback(9_500, 500),
            exit(9_800),
        ];
        assert_eq!(
            vector_marks(&events),
            [
                (1_000, EvType::VectorEntry),
                (2_200, EvType::VectorExit),
                (9_000, EvType::VectorEntry),
                (9_800, EvType::VectorExit),
            ]
        );
        // A CPU whose ring logs the vector (the tracefs side) is left alone.
        let mut logged = events.clone();
        logged.insert(
            0,
            ev(
                900,
                0,
                EvType::VectorEntry,
                0,
                [LOCAL_TIMER_VECTOR, 0, 0, 0],
                "",
            ),
        );
        assert_eq!(with_timer_interrupts(&logged), logged);
        // Callbacks inside a named interrupt (ARM's arch_timer), and those
        // of the HRTIMER softirq, are no LAPIC interrupt.
        let named = vec![
            ev(900, 0, EvType::IrqEntry, 0, [11, 0, 0, 0], ""),
            hard_callback(1_500, 500),
            exit(2_000),
            ev(2_100, 0, EvType::IrqExit, 0, [11, 0, 0, 0], ""),
            ev(3_000, 0, EvType::HrtimerEntry, 0, [1, 0, 10, 0], ""),
            exit(3_100),
        ];
        assert_eq!(with_timer_interrupts(&named), named);
    }

    /// Kernel functions at made-up addresses, as `/proc/kallsyms` lists them.
    const TICK: u64 = 0xffff_ffff_8112_4a10;
    const PACE: u64 = 0xffff_ffff_81a0_b2c0;
    const WAKEUP: u64 = 0xffff_ffff_8112_0000;
    const KALLSYMS: &str = "ffffffff81000000 T _stext\n\
        ffffffff81120000 T hrtimer_wakeup\n\
        ffffffff81124a10 t tick_nohz_handler\n\
        ffffffff81a0b2c0 t tcp_pace_kick\n\
        ffffffff81a0b400 T tcp_release_cb\n";

    /// A callback's entry on CPU 0 for `function` of the timer at `timer`,
    /// `soft` (in the HRTIMER softirq) or in the interrupt whose clock read
    /// was `since_read` ns before, as the BPF side logs it.
    fn callback(ts: u64, timer: u64, function: u64, soft: bool, since_read: i32) -> Ev {
        let (low, high) = Ev::function_fields(function);
        Ev {
            x: timer,
            ..ev(
                ts,
                0,
                EvType::HrtimerEntry,
                900,
                [soft as i32, low, since_read, high],
                "",
            )
        }
    }

    /// The BPF side's window of a late wake-up of a 1 ms timer task (pid
    /// 42) on CPU 0 beside a TCP sender (pid 900): its interrupt ran the
    /// tick for 20 µs before the task's own timer, then the HRTIMER softirq
    /// ran TCP pacing for 40 µs before the switch. `late: false`: the same
    /// without the tick and the softirq.
    fn paced_window(late: bool) -> RawWindow {
        let t = 50_000_000u64;
        let (tick, pace) = if late { (20_000, 40_000) } else { (0, 0) };
        let read = t + 2_000;
        let own = read + 1_000 + tick;
        let switch_at = own + 3_000 + pace;
        let mut events = vec![ev(
            t - 400_000,
            0,
            EvType::Switch,
            42,
            [42, 900, 120, 0],
            "ld-net0s",
        )];
        if late {
            events.push(callback(read + 1_000, 0xa1, TICK, false, 1_000));
        }
        events.push(callback(own, 0xa2, WAKEUP, false, (own - read) as i32));
        events.push(ev(
            own + 500,
            0,
            EvType::Waking,
            900,
            [42, 0, 4, 1],
            "rt-loop",
        ));
        if late {
            events.extend([
                ev(own + 1_000, 0, EvType::SoftirqEntry, 900, [8, 0, 0, 0], ""),
                callback(own + 1_500, 0xa3, PACE, true, 0),
                ev(
                    own + 1_000 + pace,
                    0,
                    EvType::SoftirqExit,
                    900,
                    [8, 0, 0, 0],
                    "",
                ),
            ]);
        }
        events.push(ev(
            switch_at,
            0,
            EvType::Switch,
            900,
            [900, 42, 4, 1],
            "rt-loop",
        ));
        RawWindow {
            head: Head {
                pid: 42,
                cpu: 0,
                timer_cpu: 0,
                prio: 4,
                expires: t,
                irq_at: read,
                woken_at: own + 500,
                switch_at,
                late,
                soft: false,
                comm: comm("rt-loop"),
            },
            events,
            horizon: vec![(0, t - 400_000, false)],
        }
    }

    #[test]
    fn timer_callbacks_are_named_with_their_fix_and_the_tasks_own_is_not_another() {
        let dir = tempfile::tempdir().unwrap();
        let kallsyms = dir.path().join("kallsyms");
        std::fs::write(&kallsyms, KALLSYMS).unwrap();
        let mut naming = Naming::new(FunctionNames::from_file(&kallsyms));
        let late = paced_window(true);
        assert_eq!(late.events[1].function(), TICK);
        let (w, _) = naming.window(&late);
        // The task's own callback began where explain's trace reading puts
        // the expire entry.
        assert_eq!(w.p.expire, Some(late.head.woken_at - 500));
        let (normal, _) = naming.window(&paced_window(false));
        assert_eq!(
            naming.fns.reads(),
            1,
            "one pass over kallsyms for the three"
        );
        let a = naming.analyze(&[w, normal]);
        let named: Vec<(String, u64)> = a.parts[0]
            .iter()
            .filter_map(|p| match &p.cause {
                latlab_explain::Cause::TimerCallback { function, .. } => {
                    Some((function.clone(), p.ns))
                }
                _ => None,
            })
            .collect();
        // TCP pacing: its softirq; the tick: its callback and the
        // interrupt's entry before it (the interrupt's time between
        // callbacks is the one it ran longest's). The task's own callback
        // (hrtimer_wakeup) is the wake-up itself, not "another task's
        // sleep".
        assert_eq!(
            named,
            [
                ("tcp_pace_kick".to_string(), 40_000),
                ("tick_nohz_handler".to_string(), 21_000)
            ],
            "{:#?}",
            a.parts[0]
        );
        // After the softirq, to the switch: the sender's kernel code, not
        // the timer interrupt (the soft callback ended with its softirq).
        let after: Vec<(String, u64)> = a.parts[0]
            .iter()
            .filter(|p| !matches!(p.cause, latlab_explain::Cause::TimerCallback { .. }))
            .map(|p| (format!("{:?}", p.cause), p.ns))
            .collect();
        assert_eq!(
            after,
            [
                (
                    r#"NonPreemptibleKernel { task: "ld-net0s:900" }"#.to_string(),
                    2_500
                ),
                (
                    r#"TimerIrqDelay { task: "ld-net0s:900" }"#.to_string(),
                    2_000
                ),
                ("HrtimerInterrupt".to_string(), 500),
            ],
        );
        let top = &a.causes[0];
        assert_eq!(
            top.cause,
            latlab_explain::Cause::TimerCallback {
                function: "tcp_pace_kick".into(),
                timer: latlab_explain::TimerKind::SoftHrtimer,
            }
        );
        assert!(top.recommendation.contains("TCP pacing"), "{top:?}");
        let sum: u64 = a.parts[0].iter().map(|p| p.ns).sum();
        assert_eq!(sum, late.head.latency(), "the parts add up to the latency");
    }

    #[test]
    fn a_wake_up_without_timer_starts_at_the_wake_up() {
        let mut raw = softirq_window(true, 0);
        raw.head.expires = 0;
        let (w, _) = Naming::new(FunctionNames::new()).window(&raw);
        assert_eq!(w.p.intended, raw.head.woken_at);
        assert_eq!(w.p.latency(), 2_000);
        assert_eq!(w.p.expiry, None);
    }

    #[test]
    fn a_ring_that_does_not_reach_the_due_time_is_marked() {
        let mut raw = softirq_window(true, 0);
        raw.horizon = vec![(1, raw.head.expires + 10, true)];
        let (_, cut) = Naming::new(FunctionNames::new()).window(&raw);
        assert!(cut);
    }
}
