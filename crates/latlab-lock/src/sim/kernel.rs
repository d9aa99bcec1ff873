//! The simulated uniprocessor kernel: its events, threads and scheduler.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use latlab_measure::stats::Stats;

use super::{SimComparison, SimConfig, SimRun};
use crate::predict::Predictor;
use crate::shape::Rng;
use crate::LockError;

/// Runs the simulation without and with delayed locking.
pub fn compare(config: &SimConfig) -> Result<SimComparison, LockError> {
    config.validate()?;
    Ok(SimComparison {
        config: config.clone(),
        without: Kernel::new(config, false).run(),
        with: Kernel::new(config, true).run(),
    })
}

/// Runs one simulation.
pub fn simulate(config: &SimConfig, delayed: bool) -> Result<SimRun, LockError> {
    config.validate()?;
    Ok(Kernel::new(config, delayed).run())
}

// ---------------------------------------------------------------------------------------
// The kernel model.

const RT: usize = 0;
const SOFTIRQ: usize = 1;
const SENDER: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Urgent timer expiry k (release of period k).
    Release(u64),
    Tick,
    /// The NIC finished putting one kilobyte on the wire.
    TxDone,
    /// An acknowledgment arrives (network interrupt).
    AckArrives,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isr {
    Urgent,
    Tick,
    Nic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Runnable,
    /// Waiting for its next release (real-time task), for work (softirq thread) or for
    /// window space (sender).
    Blocked,
    /// Refused by delayed locking; woken when the real-time task has run.
    Refused,
}

#[derive(Debug, Clone, Copy)]
struct Section {
    lock: usize,
    start: u64,
    /// The release the entry was admitted against.
    deadline: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Step {
    remaining: u64,
    section: Option<Section>,
}

#[derive(Debug, Clone, Copy)]
struct Thread {
    state: State,
    /// Program counter of the thread's loop.
    pc: u8,
    step: Option<Step>,
    /// Refusals of the current acquisition.
    refusals: u32,
}

enum Next {
    Run(u64),
    Lock(usize),
    Block,
}

struct Kernel<'a> {
    cfg: &'a SimConfig,
    delayed: bool,
    rng: Rng,
    now: u64,
    events: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    threads: [Thread; 3],
    /// The thread that owns the CPU (possibly interrupted).
    current: Option<usize>,
    /// The thread that last ran (a switch to another one costs a context switch).
    last_ran: Option<usize>,
    /// A context switch in progress: (to, remaining).
    switching: Option<(usize, u64)>,
    /// The interrupt in service: (kind, remaining).
    isr: Option<(Isr, u64)>,
    isr_queue: Vec<Isr>,
    predictors: [Predictor; 3],
    /// Release of the real-time task that is pending or running.
    release: u64,
    /// Next release as published by the real-time task (the paper's t_ut_int target).
    published: u64,
    /// The real-time task was released and has not been scheduled yet.
    rt_waiting_since: Option<u64>,
    // The network.
    in_flight: u32,
    nic_queue: u32,
    nic_busy: bool,
    acks_pending: u32,
    // Measurement.
    measure_from: u64,
    end: u64,
    latency: Stats,
    sent_kb: u64,
    admissions: u64,
    refusals: u64,
    forced: u64,
    mispredictions: u64,
    idle_ns: u64,
    holds: [Stats; 3],
}

impl<'a> Kernel<'a> {
    fn new(cfg: &'a SimConfig, delayed: bool) -> Self {
        let idle = Thread {
            state: State::Runnable,
            pc: 0,
            step: None,
            refusals: 0,
        };
        let mut kernel = Self {
            cfg,
            delayed,
            rng: Rng::new(cfg.seed),
            now: 0,
            events: BinaryHeap::new(),
            seq: 0,
            threads: [
                Thread {
                    state: State::Blocked,
                    ..idle
                },
                Thread {
                    state: State::Blocked,
                    ..idle
                },
                idle,
            ],
            current: None,
            last_ran: None,
            switching: None,
            isr: None,
            isr_queue: Vec::new(),
            predictors: [
                Predictor::new(cfg.predictor),
                Predictor::new(cfg.predictor),
                Predictor::new(cfg.predictor),
            ],
            release: 0,
            published: cfg.rt_period_ns,
            rt_waiting_since: None,
            in_flight: 0,
            nic_queue: 0,
            nic_busy: false,
            acks_pending: 0,
            measure_from: cfg.warmup_periods * cfg.rt_period_ns,
            end: (cfg.warmup_periods + cfg.periods) * cfg.rt_period_ns + cfg.rt_period_ns / 2,
            latency: Stats::new(),
            sent_kb: 0,
            admissions: 0,
            refusals: 0,
            forced: 0,
            mispredictions: 0,
            idle_ns: 0,
            holds: Default::default(),
        };
        kernel.schedule(cfg.rt_period_ns, Event::Release(1));
        // The tick is not aligned with the real-time period.
        kernel.schedule(cfg.tick_period_ns / 3 + 1_234, Event::Tick);
        kernel
    }

    fn measuring(&self) -> bool {
        self.now >= self.measure_from
    }

    fn schedule(&mut self, at: u64, event: Event) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, event)));
    }

    fn run(mut self) -> SimRun {
        self.dispatch();
        loop {
            let next_event = self
                .events
                .peek()
                .map(|Reverse((t, _, _))| *t)
                .unwrap_or(u64::MAX);
            let activity_end = if let Some((_, remaining)) = self.isr {
                Some(self.now + remaining)
            } else if let Some((_, remaining)) = self.switching {
                Some(self.now + remaining)
            } else {
                self.current
                    .and_then(|t| self.threads[t].step)
                    .map(|s| self.now + s.remaining)
            };
            let until = activity_end.map_or(next_event, |end| end.min(next_event));
            if until >= self.end {
                self.advance(self.end);
                break;
            }
            self.advance(until);
            if activity_end == Some(until) {
                self.finish_activity();
            } else {
                let Reverse((_, _, event)) = self.events.pop().expect("peeked");
                self.on_event(event);
            }
        }
        self.result()
    }

    /// Moves time forward, charging it to whatever runs.
    fn advance(&mut self, to: u64) {
        let dt = to - self.now;
        if let Some((_, remaining)) = &mut self.isr {
            *remaining -= dt;
        } else if let Some((_, remaining)) = &mut self.switching {
            *remaining -= dt;
        } else if let Some(step) = self.current.and_then(|t| self.threads[t].step.as_mut()) {
            step.remaining -= dt;
        } else if self.now >= self.measure_from {
            self.idle_ns += dt;
        } else if to > self.measure_from {
            self.idle_ns += to - self.measure_from;
        }
        self.now = to;
    }

    fn on_event(&mut self, event: Event) {
        match event {
            Event::Release(k) => {
                self.release = self.now;
                self.schedule(self.now + self.cfg.rt_period_ns, Event::Release(k + 1));
                self.raise(Isr::Urgent);
            }
            Event::Tick => {
                self.schedule(self.now + self.cfg.tick_period_ns, Event::Tick);
                self.raise(Isr::Tick);
            }
            Event::TxDone => {
                self.schedule(self.now + self.cfg.round_trip_ns, Event::AckArrives);
                self.nic_busy = false;
                self.start_tx();
            }
            Event::AckArrives => self.raise(Isr::Nic),
        }
    }

    fn raise(&mut self, isr: Isr) {
        if self.isr.is_some() {
            // The interrupt controller gives the urgent timer the highest priority.
            if isr == Isr::Urgent {
                self.isr_queue.insert(0, isr);
            } else {
                self.isr_queue.push(isr);
            }
        } else {
            let cost = self.isr_cost(isr);
            self.isr = Some((isr, cost));
        }
    }

    fn isr_cost(&self, isr: Isr) -> u64 {
        match isr {
            Isr::Urgent => self.cfg.urgent_isr_ns,
            Isr::Tick => self.cfg.tick_isr_ns,
            Isr::Nic => self.cfg.nic_isr_ns,
        }
    }

    fn start_tx(&mut self) {
        if !self.nic_busy && self.nic_queue > 0 {
            self.nic_queue -= 1;
            self.nic_busy = true;
            self.schedule(self.now + self.cfg.link_ns_per_kb, Event::TxDone);
        }
    }

    fn finish_activity(&mut self) {
        if let Some((isr, _)) = self.isr.take() {
            match isr {
                Isr::Urgent => {
                    self.threads[RT].state = State::Runnable;
                    // Still waiting for an earlier release (an overloaded period): its
                    // latency keeps counting from that release.
                    self.rt_waiting_since.get_or_insert(self.release);
                }
                Isr::Tick => {}
                Isr::Nic => {
                    self.acks_pending += 1;
                    if self.threads[SOFTIRQ].state == State::Blocked {
                        self.threads[SOFTIRQ].state = State::Runnable;
                    }
                }
            }
            if !self.isr_queue.is_empty() {
                let next = self.isr_queue.remove(0);
                let cost = self.isr_cost(next);
                self.isr = Some((next, cost));
                return;
            }
        } else if let Some((to, _)) = self.switching.take() {
            self.current = Some(to);
            self.last_ran = Some(to);
            if to == RT {
                if let Some(release) = self.rt_waiting_since.take() {
                    if release > self.measure_from {
                        self.latency.record(self.now - release);
                    }
                }
            }
        } else if let Some(t) = self.current {
            let step = self.threads[t].step.take().expect("a running step");
            if let Some(section) = step.section {
                self.end_section(section);
            }
            self.complete_step(t);
        }
        self.dispatch();
    }

    fn end_section(&mut self, section: Section) {
        let hold = self.now - section.start;
        self.predictors[section.lock].record(hold);
        if self.measuring() {
            self.holds[section.lock].record(hold);
        }
        if let Some(deadline) = section.deadline {
            if self.now > deadline && self.measuring() {
                self.mispredictions += 1;
            }
        }
    }

    /// Side effects of a thread finishing its current step; moves its program counter.
    fn complete_step(&mut self, t: usize) {
        let pc = self.threads[t].pc;
        match (t, pc) {
            (RT, _) => {
                // Work done: publish the next release, sleep, wake the refused threads.
                self.published = self.release + self.cfg.rt_period_ns;
                self.threads[RT].state = State::Blocked;
                for other in [SOFTIRQ, SENDER] {
                    if self.threads[other].state == State::Refused {
                        self.threads[other].state = State::Runnable;
                    }
                }
            }
            (SENDER, 3) => {
                // tcp_sendmsg copied one kilobyte into the socket.
                self.in_flight += self.cfg.kb_per_send;
                self.nic_queue += self.cfg.kb_per_send;
                self.start_tx();
                self.threads[t].pc = 4;
            }
            (SENDER, 4) => self.threads[t].pc = 0,
            (SENDER, pc) => self.threads[t].pc = pc + 1,
            (SOFTIRQ, 1) => self.threads[t].pc = 2,
            (SOFTIRQ, _) => {
                // net_rx processed one acknowledgment: window space is free again.
                self.acks_pending -= 1;
                self.in_flight -= 1;
                if self.measuring() {
                    self.sent_kb += 1;
                }
                if self.threads[SENDER].state == State::Blocked {
                    self.threads[SENDER].state = State::Runnable;
                }
                self.threads[t].pc = 0;
            }
            _ => unreachable!("three threads"),
        }
    }

    /// What thread `t` does next, from its program counter.
    fn next(&mut self, t: usize) -> Next {
        let pc = self.threads[t].pc;
        match (t, pc) {
            (RT, _) => Next::Run(self.cfg.rt_work_ns),
            (SENDER, 0) => Next::Run(
                self.rng
                    .range(self.cfg.user_work_ns.0, self.cfg.user_work_ns.1),
            ),
            (SENDER, 1) => Next::Run(self.cfg.syscall_ns),
            (SENDER, 2) => {
                if self.in_flight + self.cfg.kb_per_send
                    > self.cfg.window_kb.max(self.cfg.kb_per_send)
                {
                    Next::Block
                } else {
                    self.threads[t].pc = 3;
                    Next::Lock(1)
                }
            }
            (SENDER, 3) => Next::Lock(1),
            (SENDER, _) => Next::Run(self.cfg.syscall_ns / 3),
            (SOFTIRQ, 0) => {
                if self.acks_pending == 0 {
                    Next::Block
                } else {
                    self.threads[t].pc = 1;
                    Next::Lock(0)
                }
            }
            (SOFTIRQ, 1) => Next::Lock(0),
            (SOFTIRQ, _) => Next::Lock(2),
            _ => unreachable!("three threads"),
        }
    }

    /// Gives thread `t` (running, without a step) its next step, applying the admission
    /// rule to critical sections.
    fn start_next_step(&mut self, t: usize) {
        match self.next(t) {
            Next::Run(ns) => {
                self.threads[t].step = Some(Step {
                    remaining: ns,
                    section: None,
                });
            }
            Next::Block => self.threads[t].state = State::Blocked,
            Next::Lock(lock) => {
                let mut deadline = None;
                if self.delayed {
                    let predicted = match self.cfg.t_lock_ns {
                        Some(t_lock) => t_lock[lock],
                        None => self.predictors[lock].predict(),
                    };
                    let fits = self.published > self.now
                        && predicted + self.cfg.margin_ns <= self.published - self.now;
                    let measuring = self.measuring();
                    if fits {
                        deadline = Some(self.published);
                        if measuring {
                            self.admissions += 1;
                        }
                    } else if self.threads[t].refusals < self.cfg.max_refusals {
                        self.threads[t].refusals += 1;
                        self.threads[t].state = State::Refused;
                        if measuring {
                            self.refusals += 1;
                        }
                        return;
                    } else if measuring {
                        self.forced += 1;
                    }
                }
                self.threads[t].refusals = 0;
                let hold = self.cfg.locks[lock].sample(&mut self.rng);
                self.threads[t].step = Some(Step {
                    remaining: hold,
                    section: Some(Section {
                        lock,
                        start: self.now,
                        deadline,
                    }),
                });
            }
        }
    }

    /// The scheduler: runs at every point where the CPU may change hands.
    fn dispatch(&mut self) {
        loop {
            if self.isr.is_some() || self.switching.is_some() {
                return;
            }
            if let Some(t) = self.current {
                let in_section = self.threads[t].step.is_some_and(|s| s.section.is_some());
                if in_section {
                    return; // not preemptible
                }
            }
            // Highest priority runnable thread (RT > softirq > sender).
            let best = [RT, SOFTIRQ, SENDER]
                .into_iter()
                .find(|&t| self.threads[t].state == State::Runnable);
            let Some(best) = best else {
                // Idle: whatever runs next pays a context switch.
                self.current = None;
                self.last_ran = None;
                return;
            };
            if self.current != Some(best) {
                self.current = None;
                if self.last_ran == Some(best) {
                    self.current = Some(best);
                } else {
                    let mut cost = self.cfg.context_switch_ns;
                    if best == RT {
                        cost += self.cfg.rt_switch_extra.sample(&mut self.rng);
                    }
                    self.switching = Some((best, cost));
                    return;
                }
            }
            if self.threads[best].step.is_some() {
                return;
            }
            self.start_next_step(best);
            if self.threads[best].step.is_some() {
                return;
            }
            // The thread blocked or was refused: pick again.
        }
    }

    fn result(&self) -> SimRun {
        let measured_ns = self.end - self.measure_from;
        let measured_s = measured_ns as f64 / 1e9;
        SimRun {
            delayed: self.delayed,
            latency: self.latency.summary(),
            measured_s,
            sent_kb: self.sent_kb,
            kb_per_s: self.sent_kb as f64 / measured_s,
            us_per_kb: if self.sent_kb == 0 {
                0.0
            } else {
                measured_ns as f64 / 1e3 / self.sent_kb as f64
            },
            admissions: self.admissions,
            refusals: self.refusals,
            forced_entries: self.forced,
            mispredictions: self.mispredictions,
            idle_fraction: self.idle_ns as f64 / measured_ns as f64,
            holds: self.holds.each_ref().map(Stats::summary),
        }
    }
}
