//! The records the BPF side writes, as bytes, and their parsing. The layouts
//! mirror `crates/latlab-watch/bpf/watch.bpf.c` (`struct ev`, `struct ring`, `struct
//! window_head`, `struct window_record`); a test checks the sizes against
//! the object's BTF-independent constants below.

/// Events in each CPU's ring (`RING` in the BPF C).
pub const RING: usize = 512;
/// Size of one `struct ev`.
pub const EV_SIZE: usize = 56;
/// Offset of the first event in `struct ring`: after the head counter and
/// the running thread (`cur`, `cur_known`), which user space does not read.
const EVENTS_AT: usize = 16;
/// Size of one `struct ring`: the head counter, the running thread and the
/// events.
pub const RING_SIZE: usize = EVENTS_AT + RING * EV_SIZE;
/// Size of `struct window_head`.
pub const HEAD_SIZE: usize = 72;
/// Offset of the first ring in `struct window_record`.
const RINGS_AT: usize = HEAD_SIZE + 16;
/// Size of one `struct window_record`.
pub const WINDOW_RECORD_SIZE: usize = RINGS_AT + 2 * RING_SIZE;

/// The x86 vectors the BPF side logs (`enum vector`), by their tracepoint
/// names, which are also the names `latlab explain` gives them.
pub const VECTOR_NAMES: [&str; 5] = [
    "local_timer",
    "reschedule",
    "call_function",
    "call_function_single",
    "irq_work",
];

/// What a ring event is (`enum ev_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvType {
    /// `sched_switch`: a prev pid, b next pid, c next prio, d prev runnable; comm: next's.
    Switch,
    /// `sched_waking`: a pid, b target CPU, c prio, d a watched task woken
    /// by the hrtimer callback running (1 hard, 2 soft; else 0); comm: the
    /// woken task's.
    Waking,
    /// `irq_handler_entry`: a irq.
    IrqEntry,
    /// `irq_handler_exit`: a irq.
    IrqExit,
    /// `softirq_entry`: a vector.
    SoftirqEntry,
    /// `softirq_exit`: a vector.
    SoftirqExit,
    /// `hrtimer_expire_entry`: x timer, a soft timer (callback in softirq), c ns since
    /// the interrupt read the clock for its expired timers (its `now`), b
    /// and d the callback function's address ([`Ev::function`]).
    HrtimerEntry,
    /// `hrtimer_expire_exit`: x timer. Only the tracefs side logs it.
    HrtimerExit,
    /// An x86 vector's entry (`irq_vectors:*_entry`): a vector number,
    /// b which ([`VECTOR_NAMES`]).
    VectorEntry,
    /// An x86 vector's exit.
    VectorExit,
}

impl EvType {
    fn of(code: u32) -> Option<EvType> {
        Some(match code {
            1 => EvType::Switch,
            2 => EvType::Waking,
            3 => EvType::IrqEntry,
            4 => EvType::IrqExit,
            5 => EvType::SoftirqEntry,
            6 => EvType::SoftirqExit,
            7 => EvType::HrtimerEntry,
            8 => EvType::HrtimerExit,
            9 => EvType::VectorEntry,
            10 => EvType::VectorExit,
            _ => return None,
        })
    }
}

/// One event of a CPU's ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ev {
    /// `bpf_ktime_get_ns()`: CLOCK_MONOTONIC ns.
    pub ts: u64,
    /// The CPU whose ring held it.
    pub cpu: u32,
    /// What it is.
    pub ty: EvType,
    /// Address (hrtimer events).
    pub x: u64,
    /// The task running when it was logged.
    pub pid: i32,
    /// Fields by type (see [`EvType`]).
    pub a: i32,
    /// Fields by type.
    pub b: i32,
    /// Fields by type.
    pub c: i32,
    /// Fields by type.
    pub d: i32,
    /// A task name by type (NUL-padded).
    pub comm: [u8; 16],
}

impl Ev {
    /// The callback function's address of a timer callback's entry (`b`
    /// its low, `d` its high 32 bits); 0 for other events and where the
    /// kernel side did not log it.
    pub fn function(&self) -> u64 {
        match self.ty {
            EvType::HrtimerEntry => (self.d as u32 as u64) << 32 | self.b as u32 as u64,
            _ => 0,
        }
    }

    /// `b` and `d` of a callback's entry for the function at `addr` (see
    /// [`Ev::function`]).
    pub fn function_fields(addr: u64) -> (i32, i32) {
        (addr as u32 as i32, (addr >> 32) as u32 as i32)
    }
}

/// The wake-up a window belongs to (`struct window_head`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The woken task (thread id).
    pub pid: i32,
    /// The CPU it ran on.
    pub cpu: u32,
    /// The CPU that woke it (the timer's, for a timer wake-up).
    pub timer_cpu: u32,
    /// Its kernel priority.
    pub prio: i32,
    /// The timer's soft expiry (CLOCK_MONOTONIC ns); 0: not timer-driven.
    pub expires: u64,
    /// The timer interrupt read the clock for the callback (its `now`).
    pub irq_at: u64,
    /// `sched_waking`.
    pub woken_at: u64,
    /// The task ran (`sched_switch`).
    pub switch_at: u64,
    /// Over the threshold (else a baseline window).
    pub late: bool,
    /// The callback ran in the HRTIMER softirq (a soft hrtimer).
    pub soft: bool,
    /// The task's name.
    pub comm: [u8; 16],
}

impl Head {
    /// Whether a timer woke the task.
    pub fn timer_driven(&self) -> bool {
        self.expires != 0
    }

    /// When the wake-up was due: the expiry, else the `sched_waking`.
    pub fn start(&self) -> u64 {
        if self.timer_driven() {
            self.expires
        } else {
            self.woken_at
        }
    }

    /// The latency the window is about: start to running.
    pub fn latency(&self) -> u64 {
        self.switch_at.saturating_sub(self.start())
    }
}

/// One window as it came from the kernel: the head and the events of the
/// rings (oldest first, both CPUs merged in time order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawWindow {
    /// The wake-up.
    pub head: Head,
    /// The ring events, in time order.
    pub events: Vec<Ev>,
    /// Per ring CPU: the oldest event it still held, and whether it had
    /// wrapped (older events were overwritten).
    pub horizon: Vec<(u32, u64, bool)>,
}

/// A record that is not a window record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a ring buffer record of {0} bytes is not a window record ({WINDOW_RECORD_SIZE} bytes): the BPF object and latlab disagree")]
pub struct BadRecord(pub usize);

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn comm_at(b: &[u8], at: usize) -> [u8; 16] {
    b[at..at + 16].try_into().expect("16 bytes")
}

fn parse_head(b: &[u8]) -> Head {
    Head {
        pid: i32_at(b, 0),
        cpu: u32_at(b, 4),
        timer_cpu: u32_at(b, 8),
        prio: i32_at(b, 12),
        expires: u64_at(b, 16),
        irq_at: u64_at(b, 24),
        woken_at: u64_at(b, 32),
        switch_at: u64_at(b, 40),
        late: u32_at(b, 48) != 0,
        soft: u32_at(b, 52) != 0,
        comm: comm_at(b, 56),
    }
}

/// The events of one ring, oldest first; and the oldest timestamp and
/// whether it wrapped.
fn parse_ring(b: &[u8], cpu: u32, out: &mut Vec<Ev>) -> (u64, bool) {
    let head = u64_at(b, 0) as usize;
    let n = head.min(RING);
    let mut oldest = u64::MAX;
    for k in head - n..head {
        let at = EVENTS_AT + (k % RING) * EV_SIZE;
        let e = &b[at..at + EV_SIZE];
        let Some(ty) = EvType::of(u32_at(e, 16)) else {
            continue;
        };
        let ev = Ev {
            ts: u64_at(e, 0),
            cpu,
            ty,
            x: u64_at(e, 8),
            pid: i32_at(e, 20),
            a: i32_at(e, 24),
            b: i32_at(e, 28),
            c: i32_at(e, 32),
            d: i32_at(e, 36),
            comm: comm_at(e, 40),
        };
        oldest = oldest.min(ev.ts);
        out.push(ev);
    }
    (oldest, head > RING)
}

/// Parses one `struct window_record`.
pub fn parse_window(b: &[u8]) -> Result<RawWindow, BadRecord> {
    if b.len() < WINDOW_RECORD_SIZE {
        return Err(BadRecord(b.len()));
    }
    let head = parse_head(b);
    let rings = (u32_at(b, HEAD_SIZE) as usize).clamp(1, 2);
    let mut events = Vec::with_capacity(rings * RING);
    let mut horizon = Vec::with_capacity(rings);
    for r in 0..rings {
        let cpu = u32_at(b, HEAD_SIZE + 4 + 4 * r);
        let at = RINGS_AT + r * RING_SIZE;
        let (oldest, wrapped) = parse_ring(&b[at..at + RING_SIZE], cpu, &mut events);
        horizon.push((cpu, oldest, wrapped));
    }
    // The rings are each in order; merged by time (stable: one CPU's order
    // is kept for equal stamps).
    events.sort_by_key(|e| e.ts);
    Ok(RawWindow {
        head,
        events,
        horizon,
    })
}

/// A NUL-padded name as text.
pub fn comm_str(comm: &[u8; 16]) -> String {
    let end = comm.iter().position(|&c| c == 0).unwrap_or(16);
    String::from_utf8_lossy(&comm[..end]).into_owned()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes a window record the way the BPF side lays it out (tests).
    pub(crate) fn record(head: &Head, rings: &[(u32, Vec<Ev>)]) -> Vec<u8> {
        let mut b = vec![0u8; WINDOW_RECORD_SIZE];
        let put32 =
            |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        let put64 =
            |b: &mut Vec<u8>, at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        put32(&mut b, 0, head.pid as u32);
        put32(&mut b, 4, head.cpu);
        put32(&mut b, 8, head.timer_cpu);
        put32(&mut b, 12, head.prio as u32);
        put64(&mut b, 16, head.expires);
        put64(&mut b, 24, head.irq_at);
        put64(&mut b, 32, head.woken_at);
        put64(&mut b, 40, head.switch_at);
        put32(&mut b, 48, head.late as u32);
        put32(&mut b, 52, head.soft as u32);
        b[56..72].copy_from_slice(&head.comm);
        put32(&mut b, HEAD_SIZE, rings.len() as u32);
        for (r, (cpu, evs)) in rings.iter().enumerate() {
            put32(&mut b, HEAD_SIZE + 4 + 4 * r, *cpu);
            let base = RINGS_AT + r * RING_SIZE;
            put64(&mut b, base, evs.len() as u64);
            for (k, e) in evs.iter().enumerate() {
                let at = base + EVENTS_AT + (k % RING) * EV_SIZE;
                put64(&mut b, at, e.ts);
                put64(&mut b, at + 8, e.x);
                let code = match e.ty {
                    EvType::Switch => 1,
                    EvType::Waking => 2,
                    EvType::IrqEntry => 3,
                    EvType::IrqExit => 4,
                    EvType::SoftirqEntry => 5,
                    EvType::SoftirqExit => 6,
                    EvType::HrtimerEntry => 7,
                    EvType::HrtimerExit => 8,
                    EvType::VectorEntry => 9,
                    EvType::VectorExit => 10,
                };
                put32(&mut b, at + 16, code);
                for (i, v) in [e.pid, e.a, e.b, e.c, e.d].into_iter().enumerate() {
                    put32(&mut b, at + 20 + 4 * i, v as u32);
                }
                b[at + 40..at + 56].copy_from_slice(&e.comm);
            }
        }
        b
    }

    /// A name as the kernel stores it.
    pub(crate) fn comm(s: &str) -> [u8; 16] {
        let mut c = [0u8; 16];
        c[..s.len()].copy_from_slice(s.as_bytes());
        c
    }

    /// An event (tests).
    pub(crate) fn ev(ts: u64, cpu: u32, ty: EvType, pid: i32, abcd: [i32; 4], name: &str) -> Ev {
        Ev {
            ts,
            cpu,
            ty,
            x: 0,
            pid,
            a: abcd[0],
            b: abcd[1],
            c: abcd[2],
            d: abcd[3],
            comm: comm(name),
        }
    }

    #[test]
    fn sizes_match_the_bpf_layout() {
        // struct window_record in bpf/watch.bpf.c: 72 + 16 + 2 x (16 + 512 x 56).
        assert_eq!(WINDOW_RECORD_SIZE, 57464);
    }

    #[test]
    fn a_window_record_reads_back_merged_in_time_order() {
        let head = Head {
            pid: 42,
            cpu: 1,
            timer_cpu: 0,
            prio: 4,
            expires: 1000,
            irq_at: 1100,
            woken_at: 1200,
            switch_at: 9000,
            late: true,
            soft: false,
            comm: comm("cyclictest"),
        };
        let r0 = vec![
            ev(500, 1, EvType::Switch, 7, [7, 0, 120, 0], "swapper"),
            ev(8000, 1, EvType::IrqEntry, 0, [11, 0, 0, 0], ""),
        ];
        let (low, high) = Ev::function_fields(0xffff_ffff_81a0_b2c0);
        let r1 = vec![
            ev(1100, 0, EvType::HrtimerEntry, 0, [0, low, 0, high], ""),
            ev(1200, 0, EvType::Waking, 0, [42, 1, 4, 0], "cyclictest"),
        ];
        let w = parse_window(&record(&head, &[(1, r0), (0, r1)])).unwrap();
        assert_eq!(w.head, head);
        assert_eq!(w.head.latency(), 8000);
        let ts: Vec<u64> = w.events.iter().map(|e| e.ts).collect();
        assert_eq!(ts, [500, 1100, 1200, 8000]);
        assert_eq!(w.events[2].cpu, 0);
        assert_eq!(w.events[1].function(), 0xffff_ffff_81a0_b2c0);
        assert_eq!(w.events[2].function(), 0, "only a callback's entry has one");
        assert_eq!(comm_str(&w.events[2].comm), "cyclictest");
        assert_eq!(w.horizon, vec![(1, 500, false), (0, 1100, false)]);
        assert_eq!(parse_window(&[0u8; 10]), Err(BadRecord(10)));
    }

    #[test]
    fn a_wrapped_ring_keeps_its_newest_events() {
        let head = Head {
            pid: 1,
            cpu: 0,
            timer_cpu: 0,
            prio: 0,
            expires: 0,
            irq_at: 0,
            woken_at: 0,
            switch_at: 0,
            late: true,
            soft: false,
            comm: comm("x"),
        };
        let evs: Vec<Ev> = (0..RING as u64 + 10)
            .map(|t| ev(t, 0, EvType::IrqEntry, 0, [1, 0, 0, 0], ""))
            .collect();
        let w = parse_window(&record(&head, &[(0, evs)])).unwrap();
        assert_eq!(w.events.len(), RING);
        assert_eq!(w.events[0].ts, 10);
        assert_eq!(w.horizon, vec![(0, 10, true)]);
    }
}
