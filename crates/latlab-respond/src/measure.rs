//! The measurement: the responder process and the stimulus loop.
//!
//! - [`gap`](self::Gap): the time between two stimuli;
//! - `responder`: the forked responder and the page it shares with the stimulus;
//! - `stimulus`: the stimulus loop and the latencies it records;
//! - `output`: what a measurement gives back;
//! - `thread_state`: what the stimulus changes in the calling thread, restored.
//!
//! The responder is forked from the calling thread. Before the fork every
//! channel is set up; after it the child only makes system calls (no
//! allocation: the parent may have other threads holding allocator locks),
//! pins itself, takes its real-time policy, locks its memory, tells the
//! stimulus it is ready through a shared page and then blocks on the event.
//! On each wake-up it stores its CLOCK_MONOTONIC time in the shared page and
//! answers on the reverse channel.
//!
//! The stimulus (the calling thread, pinned to another CPU when there is
//! one, one priority below the responder) timestamps right before sending
//! and right after the answer arrives (or takes the GPIO edge's kernel
//! timestamp). One-way latency is the responder's wake time minus the send
//! time; round trip is the answer time minus the send time.
//!
//! The stimulus keeps its own clock, as an external event does: the
//! responder sleeps the whole gap, and whatever the CPU ran meanwhile has
//! evicted its data, so each wake-up pays its cache and TLB misses. A
//! ping-pong such as rt-tests' sigwaittest, where the receiver paces the
//! sender and ran a few microseconds before each measured wake-up, measures
//! the warm path instead (README, `latlab respond`, has the figures).

mod gap;
mod output;
mod responder;
mod stimulus;
mod thread_state;

use latlab_rt::clock::monotonic_ns;
use latlab_rt::sched::Policy;

pub use gap::Gap;
pub use output::{GpioEdges, LatencyOutput, Placement, Progress, RespondOutput};

use crate::channel::{self, Channel};
use crate::gpio::GpioWiring;
use crate::RespondError;
use responder::SharedPage;
use stimulus::StimulusRun;
use thread_state::ThreadState;

/// How many worst samples each latency keeps.
pub const WORST_KEPT: usize = 20;

/// A measurement, fully resolved.
#[derive(Debug, Clone)]
pub struct RespondConfig {
    /// Stimulus channel (and answer channel unless `gpio` is given).
    pub channel: Channel,
    /// GPIO wiring for the answer (the paper's toggle), if any.
    pub gpio: Option<GpioWiring>,
    /// Stop after this many events.
    pub count: Option<u64>,
    /// Stop after this long, ns.
    pub duration_ns: Option<u64>,
    /// Gap between stimuli.
    pub gap: Gap,
    /// Responder policy (the stimulus runs one priority below it).
    pub policy: Policy,
    /// Responder priority.
    pub priority: i32,
    /// CPU of the responder.
    pub responder_cpu: usize,
    /// CPU of the stimulus.
    pub stimulus_cpu: usize,
    /// Lock the responder's memory (mlockall).
    pub lock_memory: bool,
    /// An event not answered within this long is counted lost, ns.
    pub timeout_ns: u64,
}

impl RespondConfig {
    /// Fails when the run would end before its second event: a `duration_ns`
    /// shorter than the shortest gap ([`RespondError::GapOverDuration`]).
    pub fn validate(&self) -> Result<(), RespondError> {
        match self.duration_ns {
            Some(duration_ns) if self.gap.min_ns() > duration_ns => {
                Err(RespondError::GapOverDuration {
                    gap: self.gap,
                    duration_ns,
                })
            }
            _ => Ok(()),
        }
    }

    /// What the set-up does less well than an external board would, in
    /// words: a stimulus on the responder's CPU.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.responder_cpu == self.stimulus_cpu {
            warnings.push(format!(
                "stimulus and responder share CPU {}: the responder preempts the \
                 stimulus at each event (a separate CPU is closer to an external board)",
                self.responder_cpu
            ));
        }
        warnings
    }
}

/// Hooks into a measurement (see [`latlab_rt::monitor::Monitor`]): start a
/// load when the responder is ready, show progress about four times a
/// second, stop early with an error. [`Quiet`] does nothing.
pub use latlab_rt::monitor::{Monitor, Silent as Quiet};

/// Runs the measurement until `count` events, `duration_ns`, or Ctrl-C
/// (see [`latlab_rt::stop`]); the figures cover what ran.
pub fn measure(
    config: &RespondConfig,
    monitor: &mut dyn Monitor<Progress>,
) -> Result<RespondOutput, RespondError> {
    let mut wires = channel::build(&config.channel, config.gpio.as_ref())?;
    let shared_page = SharedPage::new(config.responder_cpu)?;
    let shared = shared_page.get();
    let saved = ThreadState::save();
    let (mut child, responder) = responder::start(config, &mut wires, shared)?;

    let settle = monitor.ready().map_err(RespondError::Observer)?;
    latlab_rt::stop::sleep(settle);
    let stimulus = stimulus::take_place(config)?;

    let mut run = StimulusRun::new(config);
    let result = run.run(&mut wires, shared, &mut child, monitor);
    let end_ns = monotonic_ns();
    drop(saved);
    drop(child);
    result?;
    let (sent, answered, lost) = (run.sent, run.answered, run.lost);
    let (start_ns, interrupted, gpio_edges) = (run.start_ns, run.interrupted, run.gpio_edges);
    let (one_way, round_trip) = run.finish();
    Ok(RespondOutput {
        sent,
        answered,
        lost,
        one_way,
        round_trip,
        kernel_timestamps: config.gpio.is_some(),
        gpio_edges: config.gpio.is_some().then_some(gpio_edges),
        start_ns,
        end_ns,
        interrupted,
        responder,
        stimulus,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use latlab_rt::sched;

    use super::*;

    /// `count` events `gap_ns` apart over `channel` at SCHED_OTHER, without
    /// locked memory: what needs no privilege. The responder runs on the
    /// last usable CPU, the stimulus on the first.
    fn unprivileged(channel: Channel, count: u64, gap_ns: u64) -> RespondConfig {
        let cpus = sched::usable_cpus();
        RespondConfig {
            channel,
            gpio: None,
            count: Some(count),
            duration_ns: None,
            gap: Gap::Fixed { ns: gap_ns },
            policy: Policy::Other,
            priority: 0,
            responder_cpu: *cpus.last().unwrap(),
            stimulus_cpu: cpus[0],
            lock_memory: false,
            timeout_ns: 2_000_000_000,
        }
    }

    #[test]
    fn a_gap_over_the_duration_is_refused_and_a_shared_cpu_warned_about() {
        let mut config = unprivileged(Channel::Pty, 10, 2_000_000);
        config.duration_ns = Some(1_000_000);
        let err = config.validate().unwrap_err().to_string();
        assert!(
            err.starts_with("--gap 2.00 ms is longer than --duration 1.00 ms"),
            "{err}"
        );
        config.duration_ns = Some(2_000_000);
        config.validate().unwrap();
        config.stimulus_cpu = config.responder_cpu + 1;
        assert!(config.warnings().is_empty());
        config.stimulus_cpu = config.responder_cpu;
        assert!(config.warnings()[0].starts_with("stimulus and responder share CPU"));
    }

    #[test]
    fn every_emulated_channel_answers_at_sched_other() {
        // SCHED_OTHER needs no privilege: this exercises fork, the shared page
        // and both directions of every channel for real.
        for name in Channel::EMULATED {
            let config = unprivileged(name.parse().unwrap(), 50, 200_000);
            let out = measure(&config, &mut Quiet).unwrap();
            assert_eq!((out.sent, out.answered, out.lost), (50, 50, 0), "{name}");
            let ow = out.one_way.stats.summary();
            let rt = out.round_trip.stats.summary();
            assert_eq!(ow.count, 50, "{name}");
            assert!(ow.min > 0 && rt.min > 0, "{name}: {ow:?} {rt:?}");
            assert!(
                rt.min >= ow.min,
                "{name}: the answer comes after the wake-up"
            );
            assert!(rt.max < 1_000_000_000, "{name}: {rt:?}");
        }
    }

    /// Two pty pairs joined by a thread that copies bytes between their
    /// masters: a null-modem cable between two "serial ports" (the slaves),
    /// so the `--serial TX,RX` path (open, raw mode, baud) runs for real.
    #[test]
    fn serial_ports_joined_by_an_emulated_null_modem_cable() {
        use std::os::fd::AsRawFd;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;

        let (master_a, slave_a) = channel::pty().unwrap();
        let (master_b, slave_b) = channel::pty().unwrap();
        let path = |fd: &std::os::fd::OwnedFd| {
            std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap()
        };
        let (tx, rx) = (path(&slave_a), path(&slave_b));
        let stop = Arc::new(AtomicBool::new(false));
        let cable = {
            let stop = stop.clone();
            let (a, b) = (master_a.as_raw_fd(), master_b.as_raw_fd());
            std::thread::spawn(move || {
                let mut buf = [0u8; 64];
                while !stop.load(Ordering::Relaxed) {
                    let mut fds = [
                        libc::pollfd {
                            fd: a,
                            events: libc::POLLIN,
                            revents: 0,
                        },
                        libc::pollfd {
                            fd: b,
                            events: libc::POLLIN,
                            revents: 0,
                        },
                    ];
                    // SAFETY: two valid pollfds; reads and writes on open masters.
                    unsafe {
                        if libc::poll(fds.as_mut_ptr(), 2, 20) <= 0 {
                            continue;
                        }
                        for (from, to) in [(0, b), (1, a)] {
                            if fds[from].revents & libc::POLLIN != 0 {
                                let n =
                                    libc::read(fds[from].fd, buf.as_mut_ptr().cast(), buf.len());
                                if n > 0 {
                                    libc::write(to, buf.as_ptr().cast(), n as usize);
                                }
                            }
                        }
                    }
                }
            })
        };
        let serial = Channel::Serial {
            tx: tx.clone(),
            rx,
            baud: 115_200,
        };
        let config = unprivileged(serial, 100, 300_000);
        let out = measure(&config, &mut Quiet);
        stop.store(true, Ordering::Relaxed);
        cable.join().unwrap();
        let out = out.unwrap();
        assert_eq!((out.sent, out.answered, out.lost), (100, 100, 0));
        assert!(out.round_trip.stats.summary().min >= out.one_way.stats.summary().min);
        assert!(config
            .channel
            .describe()
            .contains(&tx.display().to_string()));
        drop((master_a, master_b, slave_a, slave_b));
    }
}
