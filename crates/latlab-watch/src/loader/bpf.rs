//! The BPF side on 64-bit targets: the object loaded with aya, its programs
//! attached, typed handles on its maps, and the sampled run-time statistics.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use aya::maps::{Array, HashMap, MapData, PerCpuArray, RingBuf};
use aya::programs::tp_btf::BtfTracePointLinkId;
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf, EbpfLoader};
use aya_obj::btf::BtfKind;

use super::{
    bit_of, kfunc, Counters, Programs, Settings, OBJECT, PENDING_SLOTS, PROBE_TWINS, PROGRAMS,
    STATS_EVERY, STATS_SAMPLE,
};
use crate::error::{chain, Result, WatchError};
use crate::records::{parse_window, RawWindow};

/// The object's bytes at 8-byte alignment: the ELF parser reads its
/// headers in place, and `include_bytes!` promises no alignment.
pub(super) fn aligned(bytes: &[u8]) -> AlignedBytes {
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    // SAFETY: the u64 buffer holds at least bytes.len() bytes.
    let view =
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), bytes.len()) };
    view.copy_from_slice(bytes);
    AlignedBytes {
        words,
        len: bytes.len(),
    }
}

/// Bytes in a buffer of u64 words ([`aligned`]).
pub(super) struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBytes {
    /// The bytes.
    pub(super) fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` bytes of the u64 buffer were written.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }
}

/// The u32 of a `pending` slot naming the thread whose wake-up it holds.
const PENDING_PID: usize = 0;
/// The u32 of a `pending` slot naming the thread marked preempted.
const PENDING_PREEMPTED: usize = 9;

/// The loaded and attached BPF side.
pub struct BpfSide {
    ebpf: Ebpf,
    watched: HashMap<MapData, u32, u8>,
    /// The same set, a bit per thread id: what the programs test.
    watched_bits: Array<MapData, u64>,
    /// The wake-ups on their way, a slot per thread id modulo
    /// [`PENDING_SLOTS`] (`struct pending`, as ten u32; see
    /// [`PENDING_PID`], [`PENDING_PREEMPTED`]).
    pending: Array<MapData, [u32; 10]>,
    hist: HashMap<MapData, [u32; 2], u64>,
    counters: PerCpuArray<MapData, u64>,
    windows: RingBuf<MapData>,
    /// The kernel's run-time statistics of the programs, sampled: watch's
    /// own kernel-side cost.
    stats: StatsSampler,
    /// Optional programs this kernel has no tracepoint for.
    pub skipped: Vec<String>,
    /// Why kernel memory on the wake-up's path is read with
    /// `bpf_probe_read_kernel()` (the [`PROBE_TWINS`] are attached); `None`
    /// when it is read with plain loads.
    pub probe_reads: Option<String>,
    /// The programs attached: the name they go by ([`PROGRAMS`]), the
    /// program loaded for it (itself or its probe twin), and the link
    /// while attached.
    links: Vec<(&'static str, &'static str, Option<BtfTracePointLinkId>)>,
}

/// Program `name` of the loaded object, as a `tp_btf` program.
fn tp_btf<'a>(ebpf: &'a mut Ebpf, name: &str) -> Result<&'a mut BtfTracePoint> {
    ebpf.program_mut(name)
        .ok_or_else(|| WatchError::Load {
            what: format!("program {name}"),
            reason: "not in the object (rebuild it: make bpf)".into(),
        })?
        .try_into()
        .map_err(|e| load_error(&format!("program {name}"), &e))
}

/// The verifier's reason in a refused load's message: the line before its
/// statistics ("verification time ..."), else the message's last line.
fn verifier_reason(message: &str) -> &str {
    let mut last = "";
    for line in message.lines().map(str::trim) {
        if line.starts_with("verification time") {
            break;
        }
        last = line;
    }
    last
}

fn load_error(what: &str, e: &dyn std::error::Error) -> WatchError {
    let reason = chain(e);
    if reason.contains("Operation not permitted") || reason.contains("EPERM") {
        return WatchError::NoPrivilege {
            detail: format!("the kernel refused the {what}: {reason}"),
        };
    }
    WatchError::Load {
        what: what.to_string(),
        reason,
    }
}

impl BpfSide {
    /// Checks what the kernel offers ([`crate::probe::check`]), loads the
    /// object and attaches every program.
    pub fn load(settings: &Settings) -> Result<BpfSide> {
        BpfSide::load_programs(settings, Programs::All)
    }

    /// [`BpfSide::load`], attaching only `programs`.
    pub fn load_programs(settings: &Settings, programs: Programs) -> Result<BpfSide> {
        crate::probe::check()?;
        let btf = Btf::from_sys_fs().map_err(|_| WatchError::NoBtf)?;
        let follow = u8::from(settings.follow_forks);
        // The kfunc the plain loads need, by its id in this kernel's BTF.
        let kfunc_id = match settings.probe_reads {
            true => None,
            false => btf.id_by_type_name_kind(kfunc::KFUNC, BtfKind::Func).ok(),
        };
        let object = match kfunc_id {
            Some(id) => {
                kfunc::patch_rdonly_cast(OBJECT, id)
                    .map_err(|reason| WatchError::Load {
                        what: "object".into(),
                        reason,
                    })?
                    .0
            }
            None => OBJECT.to_vec(),
        };
        let mut probe_reads = match (settings.probe_reads, kfunc_id) {
            (true, _) => Some("asked for".to_string()),
            (false, None) => Some(format!(
                "this kernel has no {}() (before 6.2): about 0.1-0.2 us more on each timer wake-up's path",
                kfunc::KFUNC
            )),
            (false, Some(_)) => None,
        };
        let mut ebpf = EbpfLoader::new()
            .btf(Some(&btf))
            .set_global("threshold_ns", &settings.threshold_ns, true)
            .set_global("follow_forks", &follow, true)
            .set_global("max_windows_per_sec", &settings.max_windows_per_sec, true)
            .set_global("baseline_every", &settings.baseline_every, true)
            .set_global("rt_only", &u8::from(settings.rt_only), true)
            .load(aligned(&object).as_slice())
            .map_err(|e| load_error("object", &e))?;
        let mut skipped = Vec::new();
        let mut links = Vec::new();
        for (name, tracepoint, required) in PROGRAMS {
            if !programs.attaches(tracepoint) {
                continue;
            }
            let twin = PROBE_TWINS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| *t);
            let mut program_name = match (twin, kfunc_id) {
                (Some(twin), None) => twin,
                _ => name,
            };
            let mut loaded = tp_btf(&mut ebpf, program_name)?.load(tracepoint, &btf);
            if let (Err(e), Some(twin)) = (&loaded, twin) {
                if program_name != twin {
                    // The verifier refused the plain loads: read as a
                    // kernel without the kfunc does.
                    probe_reads = Some(format!(
                        "the kernel refused {name}'s plain loads ({})",
                        verifier_reason(&chain(e))
                    ));
                    program_name = twin;
                    loaded = tp_btf(&mut ebpf, program_name)?.load(tracepoint, &btf);
                }
            }
            match loaded {
                Ok(()) => {}
                Err(e) if !required => {
                    skipped.push(format!("{tracepoint} ({})", chain(&e)));
                    continue;
                }
                Err(e) => {
                    let reason = chain(&e);
                    if reason.contains("not found") || reason.contains("No such") {
                        return Err(WatchError::NoTracepoint {
                            tracepoint: tracepoint.to_string(),
                            reason,
                        });
                    }
                    return Err(load_error(&format!("program {program_name}"), &e));
                }
            }
            let link = tp_btf(&mut ebpf, program_name)?
                .attach()
                .map_err(|e| load_error(&format!("program {program_name} on {tracepoint}"), &e))?;
            links.push((name, program_name, Some(link)));
        }
        let mut take = |name: &str| {
            ebpf.take_map(name).ok_or_else(|| WatchError::Load {
                what: format!("map {name}"),
                reason: "not in the object".into(),
            })
        };
        let watched = take("watched")?;
        let watched_bits = take("watched_bits")?;
        let pending = take("pending")?;
        let hist = take("hist")?;
        let counters = take("counters")?;
        let windows = take("windows")?;
        let map_err = |name: &str| {
            let name = name.to_string();
            move |e: aya::maps::MapError| load_error(&format!("map {name}"), &e)
        };
        Ok(BpfSide {
            watched: HashMap::try_from(watched).map_err(map_err("watched"))?,
            watched_bits: Array::try_from(watched_bits).map_err(map_err("watched_bits"))?,
            pending: Array::try_from(pending).map_err(map_err("pending"))?,
            hist: HashMap::try_from(hist).map_err(map_err("hist"))?,
            counters: PerCpuArray::try_from(counters).map_err(map_err("counters"))?,
            windows: RingBuf::try_from(windows).map_err(map_err("windows"))?,
            stats: match programs {
                Programs::All => StatsSampler::start(),
                Programs::TimerWakeups => StatsSampler::off(),
            },
            ebpf,
            skipped,
            probe_reads,
            links,
        })
    }

    /// Detaches every program from its tracepoint (`false`: the kernel runs
    /// none of them; maps, histograms and the watched set stay) or attaches
    /// them again (`true`); only the programs named in `only` (see
    /// [`super::PROGRAMS`]) when it is not empty. For measuring what the
    /// programs cost (bench/watch-interleaved.py --toggle): wake-ups while
    /// detached are not measured.
    pub fn set_attached(&mut self, on: bool, only: &[String]) -> Result<()> {
        if let Some(unknown) = only
            .iter()
            .find(|o| !self.links.iter().any(|(n, _, _)| n == o))
        {
            return Err(WatchError::Load {
                what: format!("program {unknown}"),
                reason: "not one of the programs attached".into(),
            });
        }
        for (name, loaded, link) in &mut self.links {
            if !only.is_empty() && !only.iter().any(|o| o == name) {
                continue;
            }
            let program = tp_btf(&mut self.ebpf, loaded)?;
            match (on, link.take()) {
                (true, None) => {
                    *link = Some(
                        program
                            .attach()
                            .map_err(|e| load_error(&format!("program {loaded}"), &e))?,
                    )
                }
                (false, Some(id)) => program
                    .detach(id)
                    .map_err(|e| load_error(&format!("program {loaded}"), &e))?,
                (_, kept) => *link = kept,
            }
        }
        Ok(())
    }

    /// Starts watching thread `tid`.
    pub fn watch(&mut self, tid: u32) -> Result<()> {
        self.watched.insert(tid, 1, 0).map_err(|e| {
            load_error(
                &format!(
                    "map watched (too many tasks? at most {})",
                    crate::bpf_emulator::MAX_WATCHED
                ),
                &e,
            )
        })?;
        self.set_bit(tid, true)
    }

    /// Stops watching thread `tid` (nothing when it was not watched).
    pub fn unwatch(&mut self, tid: u32) {
        let _ = self.watched.remove(&tid);
        let _ = self.set_bit(tid, false);
        // Its slot forgets it: a thread watched later with the same slot
        // would count a wake-up left there as one lost to sharing, or find
        // itself marked preempted until it first runs.
        let slot = tid % PENDING_SLOTS;
        let Ok(mut p) = self.pending.get(&slot, 0) else {
            return;
        };
        if p[PENDING_PID] == tid {
            p = [0; 10];
        } else if p[PENDING_PREEMPTED] == tid {
            p[PENDING_PREEMPTED] = 0;
        } else {
            return;
        }
        let _ = self.pending.set(slot, p, 0);
    }

    /// Sets the bit of every thread of `watched` (the `watched` map's
    /// threads, as [`BpfSide::watched`] lists them) that lacks it: the
    /// repair for the race `set_bit` describes.
    pub fn resync_bits(&mut self, watched: &[u32]) {
        let mut words: std::collections::BTreeMap<u32, u64> = Default::default();
        for &tid in watched {
            let (word, bit) = bit_of(tid);
            *words.entry(word).or_default() |= bit;
        }
        for (word, bits) in words {
            let old = self.watched_bits.get(&word, 0).unwrap_or(0);
            if old & bits != bits {
                let _ = self.watched_bits.set(word, old | bits, 0);
            }
        }
    }

    /// Sets or clears `tid`'s bit in `watched_bits`. A read, change and
    /// write of one word: a child the kernel adds (on fork) to the same 64
    /// thread ids at that instant can lose its bit; it stays in `watched`,
    /// and the next rescan ([`crate::session::RESCAN`]) sets it again
    /// ([`BpfSide::resync_bits`]).
    fn set_bit(&mut self, tid: u32, on: bool) -> Result<()> {
        let (word, bit) = bit_of(tid);
        let old = self.watched_bits.get(&word, 0).unwrap_or(0);
        let new = if on { old | bit } else { old & !bit };
        if new == old {
            return Ok(());
        }
        self.watched_bits
            .set(word, new, 0)
            .map_err(|e| load_error("map watched_bits", &e))
    }

    /// The threads watched now (those the kernel added on fork included).
    pub fn watched(&self) -> Vec<u32> {
        self.watched.keys().filter_map(|k| k.ok()).collect()
    }

    /// Every histogram bucket counted so far: `(pid, kind, bucket index, count)`.
    pub fn histogram_counts(&self) -> Vec<(u32, u32, u32, u64)> {
        self.hist
            .iter()
            .filter_map(|r| r.ok())
            .map(|([pid, kb], n)| (pid, kb >> 24, kb & 0xff_ffff, n))
            .collect()
    }

    /// Takes the histogram buckets of threads `tids` out of the kernel's
    /// map and returns them: the room of threads that ended, for others.
    /// A sample counted into one of them meanwhile makes its bucket anew
    /// (counted, not lost); one counted between its read and its removal
    /// is lost, which for a thread that ended cannot happen.
    pub fn take_histograms(&mut self, tids: &[u32]) -> Vec<(u32, u32, u32, u64)> {
        if tids.is_empty() {
            return Vec::new();
        }
        let tids: std::collections::HashSet<u32> = tids.iter().copied().collect();
        let keys: Vec<[u32; 2]> = self
            .hist
            .keys()
            .filter_map(|k| k.ok())
            .filter(|[pid, _]| tids.contains(pid))
            .collect();
        self.take_keys(keys)
    }

    /// Takes the buckets `rows` (as [`BpfSide::histogram_counts`] read them)
    /// out of the kernel's map, with their counts now: what
    /// [`BpfSide::take_histograms`] does, without a pass over the whole map.
    pub fn take_rows(&mut self, rows: &[(u32, u32, u32, u64)]) -> Vec<(u32, u32, u32, u64)> {
        self.take_keys(
            rows.iter()
                .map(|&(pid, kind, bucket, _)| [pid, kind << 24 | bucket])
                .collect(),
        )
    }

    fn take_keys(&mut self, keys: Vec<[u32; 2]>) -> Vec<(u32, u32, u32, u64)> {
        let mut taken = Vec::with_capacity(keys.len());
        for key in keys {
            if let Ok(n) = self.hist.get(&key, 0) {
                let [pid, kb] = key;
                taken.push((pid, kb >> 24, kb & 0xff_ffff, n));
            }
            let _ = self.hist.remove(&key);
        }
        taken
    }

    /// The kernel side's counters, summed over CPUs.
    pub fn counters(&self) -> Counters {
        let get = |i: u32| -> u64 {
            self.counters
                .get(&i, 0)
                .map(|v| v.iter().sum())
                .unwrap_or(0)
        };
        Counters {
            lost: get(0),
            throttled: get(1),
            hist_full: get(2),
            late: get(3),
            shared: get(4),
            watch_full: get(5),
            events_lost: 0,
        }
    }

    /// Waits up to `timeout` for a window (poll on the ring buffer), and
    /// switches the sampled run-time statistics on or off when due.
    pub fn wait(&mut self, timeout: Duration) {
        self.stats.tick();
        let mut fd = libc::pollfd {
            fd: self.windows.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // A stop (Ctrl-C, SIGTERM) interrupts the poll at once.
        let _interruptible = latlab_rt::stop::interruptible();
        if latlab_rt::stop::requested() {
            return;
        }
        // SAFETY: one valid pollfd; EINTR (a stop) just returns early.
        unsafe { libc::poll(&mut fd, 1, timeout.as_millis().min(i32::MAX as u128) as i32) };
    }

    /// The next window the kernel sent, if any.
    pub fn next_window(&mut self) -> Option<Result<RawWindow>> {
        let item = self.windows.next()?;
        Some(parse_window(&item).map_err(WatchError::from))
    }

    /// How often the program attached as `name` (one of [`PROGRAMS`]) ran
    /// while the kernel's statistics were on; `None` when it is not
    /// attached or the kernel keeps no statistics.
    fn runs_of(&self, name: &str) -> Option<u64> {
        if self.stats.refused {
            return None;
        }
        let (_, loaded, _) = self.links.iter().find(|(n, _, _)| *n == name)?;
        let info = self.ebpf.program(loaded)?.info().ok()?;
        Some(info.run_count())
    }

    /// A note when the program on `hrtimer_expire_entry` never ran while
    /// the one on `sched_switch` did (the statistics were on): no wake-up
    /// could then be measured from its timer's expiry (see
    /// [`silent_timer_program`]).
    pub fn timer_program_note(&self) -> Option<String> {
        silent_timer_program(
            self.runs_of("on_hrtimer_entry")?,
            self.runs_of("on_switch")?,
        )
    }

    /// Time the kernel spent in the BPF programs and how often they ran,
    /// since the load: estimated from the sampled statistics (see
    /// [`STATS_EVERY`]); zero when the kernel keeps no statistics.
    pub fn kernel_time(&self) -> (Duration, u64) {
        let mut time = Duration::ZERO;
        let mut runs = 0;
        for (_, program) in self.ebpf.programs() {
            if let Ok(info) = program.info() {
                time += info.run_time();
                runs += info.run_count();
            }
        }
        let scale = self.stats.scale();
        let estimate = (time.mul_f64(scale), (runs as f64 * scale).round() as u64);
        // A counter for --metrics: never less than what was said before.
        let (last_time, last_runs) = self.stats.said.get();
        let said = (estimate.0.max(last_time), estimate.1.max(last_runs));
        self.stats.said.set(said);
        said
    }
}

/// What to say when the program on `hrtimer_expire_entry` ran `timer_runs`
/// times while the one on `sched_switch` ran `switch_runs` (the kernel's
/// statistics, the same sampled seconds): a CPU that switches tasks also
/// takes timer interrupts, so a silent timer program means every wake-up
/// was measured from the wake-up, not from its timer's expiry (the lab saw
/// that once on arm64: all of a 1 ms run's wake-ups plain, its late ones
/// unseen).
pub fn silent_timer_program(timer_runs: u64, switch_runs: u64) -> Option<String> {
    (timer_runs == 0 && switch_runs >= 100).then(|| {
        format!(
            "the program on hrtimer_expire_entry never ran while the statistics were on \
             (sched_switch's ran {switch_runs} times): no wake-up was measured from its \
             timer's expiry, so timer-driven latencies here are understated (a kernel \
             defect or a refused attach; run with --tracefs to compare)"
        )
    })
}

/// Switches the run-time statistics on and off (BPF_ENABLE_STATS: on while
/// the descriptor is held) and keeps the time they were on.
struct StatsSampler {
    /// Held while a sample runs.
    fd: Option<OwnedFd>,
    /// When the programs were loaded.
    loaded: Instant,
    /// When the running sample began, or when the next one begins.
    at: Instant,
    /// The finished samples' time.
    sampled: Duration,
    /// The statistics are on for good (`kernel.bpf_stats_enabled=1`): the
    /// counts cover the whole watch.
    always: bool,
    /// The kernel refused to keep statistics.
    refused: bool,
    /// The largest estimate given so far (estimates only grow).
    said: std::cell::Cell<(Duration, u64)>,
}

impl StatsSampler {
    /// No statistics at all (`latlab run --split`: nothing reads them).
    fn off() -> Self {
        let now = Instant::now();
        StatsSampler {
            fd: None,
            loaded: now,
            at: now,
            sampled: Duration::ZERO,
            always: false,
            refused: true,
            said: Default::default(),
        }
    }

    fn start() -> Self {
        let always = std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled")
            .is_ok_and(|v| v.trim() == "1");
        let now = Instant::now();
        let fd = aya::sys::enable_stats(aya::sys::Stats::RunTime).ok();
        StatsSampler {
            refused: fd.is_none(),
            fd,
            loaded: now,
            at: now,
            sampled: Duration::ZERO,
            always,
            said: Default::default(),
        }
    }

    /// Ends a sample that has lasted [`STATS_SAMPLE`], begins one when due.
    fn tick(&mut self) {
        if self.refused || self.always {
            return;
        }
        let now = Instant::now();
        if self.fd.is_some() && now >= self.at + STATS_SAMPLE {
            self.fd = None;
            self.sampled += now - self.at;
            self.at += STATS_EVERY;
        } else if self.fd.is_none() && now >= self.at {
            self.fd = aya::sys::enable_stats(aya::sys::Stats::RunTime).ok();
            self.at = now;
        }
    }

    /// What the counted run time is multiplied by to cover the whole watch.
    fn scale(&self) -> f64 {
        if self.always {
            return 1.0;
        }
        let mut sampled = self.sampled;
        if self.fd.is_some() {
            sampled += self.at.elapsed();
        }
        if sampled.is_zero() {
            return 0.0;
        }
        (self.loaded.elapsed().as_secs_f64() / sampled.as_secs_f64()).max(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_program_that_never_ran_is_said() {
        assert!(silent_timer_program(0, 2_000)
            .unwrap()
            .contains("sched_switch's ran 2000 times"));
        assert_eq!(silent_timer_program(1, 2_000), None);
        // Too few switches to say a timer should have fired.
        assert_eq!(silent_timer_program(0, 10), None);
    }

    fn sampler(ago: Duration, sampled: Duration) -> StatsSampler {
        let now = Instant::now();
        StatsSampler {
            fd: None,
            loaded: now - ago,
            at: now + STATS_EVERY,
            sampled,
            always: false,
            refused: false,
            said: Default::default(),
        }
    }

    #[test]
    fn a_refused_load_is_told_by_the_verifiers_reason() {
        // The shape of the message a refused load gives (abridged from a
        // real one: a kfunc call the kernel does not know).
        let refused = "the BPF_PROG_LOAD syscall failed. Verifier output: 0: R1=ctx() R10=fp0
36: (85) call unknown#2091220133
invalid func unknown#2091220133
verification time 2087 usec
stack depth 64
processed 35 insns (limit 1000000) max_states_per_insn 0 total_states 1
: Invalid argument (os error 22)";
        assert_eq!(verifier_reason(refused), "invalid func unknown#2091220133");
        assert_eq!(verifier_reason("no log\n: EPERM"), ": EPERM");
        assert_eq!(verifier_reason(""), "");
    }

    #[test]
    fn sampled_statistics_are_scaled_to_the_whole_watch() {
        let s = sampler(Duration::from_secs(60), Duration::from_secs(2));
        assert!((s.scale() - 30.0).abs() < 0.1, "{}", s.scale());
        // Nothing sampled yet: no estimate rather than an infinite one.
        assert_eq!(sampler(Duration::from_secs(5), Duration::ZERO).scale(), 0.0);
        // Statistics on for good: the counts are the whole watch's.
        let always = StatsSampler {
            always: true,
            ..sampler(Duration::from_secs(60), Duration::ZERO)
        };
        assert_eq!(always.scale(), 1.0);
    }

    #[test]
    fn a_sample_ends_after_its_second_and_the_next_is_due_later() {
        let mut s = sampler(Duration::from_secs(3), Duration::ZERO);
        // A sample running for 2 s (as if its descriptor were held).
        s.at = Instant::now() - Duration::from_secs(2);
        s.fd = Some(std::fs::File::open("/dev/null").unwrap().into());
        s.tick();
        assert!(s.fd.is_none(), "the sample ended");
        assert!(s.sampled >= Duration::from_secs(2));
        assert!(s.at > Instant::now(), "the next sample is in the future");
        let before = s.sampled;
        s.tick();
        assert!(
            s.fd.is_none() && s.sampled == before,
            "nothing before it is due"
        );
    }
}
