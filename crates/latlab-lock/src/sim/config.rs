//! The simulation's parameters, and the paper's figures it is compared with.

use serde::Serialize;

use crate::predict::PredictorKind;
use crate::shape::HoldShape;
use crate::LockError;

pub(crate) const US: u64 = 1_000;

/// The parameters of one simulation. [`Default`] is the paper's setup.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SimConfig {
    /// Seed of the random generator: same seed, same results.
    pub seed: u64,
    /// Measured periods of the real-time task (the paper: 10,000).
    pub periods: u64,
    /// Periods run first and not measured (the predictors learn the hold times).
    pub warmup_periods: u64,
    /// Period of the real-time task, ns (the paper: 4000 µs).
    pub rt_period_ns: u64,
    /// Work of the real-time task per period, ns.
    pub rt_work_ns: u64,
    /// Urgent timer interrupt handler (wakes the real-time task), ns.
    pub urgent_isr_ns: u64,
    /// Context switch, ns.
    pub context_switch_ns: u64,
    /// Extra cost of a switch into the real-time task: the ARM920T's virtually indexed
    /// caches and its TLB are cleaned and flushed on every switch between address spaces
    /// and refilled afterwards, so the cost grows with the dirty lines the sender left.
    pub rt_switch_extra: HoldShape,
    /// Period of the normal timer tick, ns (HZ=100 on the paper's kernel).
    pub tick_period_ns: u64,
    /// Normal tick handler, ns.
    pub tick_isr_ns: u64,
    /// Network receive interrupt handler, ns.
    pub nic_isr_ns: u64,
    /// Hold-time shapes of lock 0 (`do_softirq`), 1 (`tcp_sendmsg`), 2 (`net_rx`).
    pub locks: [HoldShape; 3],
    /// The sender's user-space work per kilobyte (preemptible), range in ns.
    pub user_work_ns: (u64, u64),
    /// The sender's preemptible system-call path per kilobyte, ns.
    pub syscall_ns: u64,
    /// Wire time of one kilobyte, ns (10 Mbit/s: 819 µs).
    pub link_ns_per_kb: u64,
    /// Time from the end of a transmission to its acknowledgment's interrupt, ns.
    pub round_trip_ns: u64,
    /// Kilobytes the sender may have unacknowledged (socket send window).
    pub window_kb: u32,
    /// Kilobytes one `tcp_sendmsg` call (one lock-1 section) hands to the socket.
    pub kb_per_send: u32,
    /// Fixed hold-time predictions t_lock,i of the three locks, ns: the paper's choice
    /// (Table 3: the maxima of a separate 10,000-sample measurement, 800, 2192 and
    /// 128 µs). `None` learns them online with `predictor`.
    pub t_lock_ns: Option<[u64; 3]>,
    /// Hold-time predictor of delayed locking when `t_lock_ns` is `None`.
    pub predictor: PredictorKind,
    /// Margin added to the predicted hold, ns (the paper: none).
    pub margin_ns: u64,
    /// Refusals before a forced entry (the paper: 100).
    pub max_refusals: u32,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            periods: 10_000,
            warmup_periods: 250,
            rt_period_ns: 4_000 * US,
            rt_work_ns: 30 * US,
            urgent_isr_ns: 10 * US,
            context_switch_ns: 12 * US,
            rt_switch_extra: "cache=70*0-40us,25*40-120us,5*120-150us"
                .parse()
                .expect("a valid shape"),
            tick_period_ns: 10_000 * US,
            tick_isr_ns: 15 * US,
            nic_isr_ns: 40 * US,
            locks: latency_run_shapes(),
            user_work_ns: (10 * US, 30 * US),
            syscall_ns: 10 * US,
            link_ns_per_kb: 819 * US,
            round_trip_ns: 300 * US,
            window_kb: 8,
            kb_per_send: 1,
            t_lock_ns: Some([800 * US, 2192 * US, 128 * US]),
            predictor: PredictorKind::Max,
            margin_ns: 0,
            max_refusals: 100,
        }
    }
}

/// The work of the three sections in the paper's latency run, the default of
/// [`SimConfig::locks`]. Table 3 measured wall-clock holds, interrupts included; these
/// are the sections' own work, chosen so that the holds the simulation measures
/// ([`SimRun::holds`]) land near Table 3's averages (121, 352, 56 µs) and maxima
/// (800, 2192, 128 µs). One exception: `tcp_sendmsg`'s long paths (Figure 9's clusters
/// near 1300 and 1900 µs) are folded into one 600-760 µs path with the same average,
/// because Table 4's worst case without delayed locking, 847 µs in 10,000 periods,
/// rules them out in the latency run: a path that long, taken a few times a second,
/// would have met a release within seconds. [`HoldShape::table3`] keeps them (give it
/// to `locks` to see their effect).
pub fn latency_run_shapes() -> [HoldShape; 3] {
    [
        "do_softirq=90*50-130us,8*200-400us,2*600-760us",
        "tcp_sendmsg=80*180-340us,20*600-760us",
        "net_rx=80*30-60us,20*80-100us",
    ]
    .map(|text| text.parse().expect("a valid shape"))
}

impl SimConfig {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), LockError> {
        self.predictor.validate()?;
        for shape in self.locks.iter().chain([&self.rt_switch_extra]) {
            shape.validate()?;
        }
        let positive = [
            ("periods", self.periods),
            ("RT period", self.rt_period_ns),
            ("tick period", self.tick_period_ns),
            ("link time per KB", self.link_ns_per_kb),
            ("send window", u64::from(self.window_kb)),
            ("KB per send", u64::from(self.kb_per_send)),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(LockError::InvalidConfig(format!(
                "simulation {name} must be above 0"
            )));
        }
        if self.rt_work_ns + self.urgent_isr_ns + self.context_switch_ns >= self.rt_period_ns {
            return Err(LockError::InvalidConfig(
                "the real-time task's work does not fit in its period; lengthen --period".into(),
            ));
        }
        Ok(())
    }

    /// What will make the results surprising, in words: a lock whose t_lock (plus the
    /// margin) does not fit in the period can only be entered by force, after
    /// `max_refusals` refusals (the paper's starvation condition, equation 1).
    pub fn warnings(&self) -> Vec<String> {
        let Some(t_lock) = self.t_lock_ns else {
            return Vec::new();
        };
        let room = self
            .rt_period_ns
            .saturating_sub(self.rt_work_ns + self.urgent_isr_ns + self.context_switch_ns);
        t_lock
            .iter()
            .zip(&self.locks)
            .filter(|(t, _)| **t + self.margin_ns > room)
            .map(|(t, shape)| {
                format!(
                    "{}'s t_lock ({} µs) does not fit in the {} µs period: with delayed locking it enters only by force, after {} refusals (the paper's starvation condition); lengthen the period or use a learned predictor",
                    shape.name,
                    t / US,
                    self.rt_period_ns / US,
                    self.max_refusals
                )
            })
            .collect()
    }
}

/// How the simulated delayed locking predicts hold times
/// ([`SimConfig::with_prediction`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimPrediction {
    /// The paper's fixed t_lock: Table 3's maxima (`table`).
    Table,
    /// Learned online: the maximum so far (`max`).
    Max,
    /// Learned online: the exponential average (`ewma`).
    Ewma,
    /// Learned online: the windowed quantile (`quantile`).
    Quantile,
}

impl std::str::FromStr for SimPrediction {
    type Err = LockError;
    fn from_str(text: &str) -> Result<Self, LockError> {
        match text.trim() {
            "table" => Ok(Self::Table),
            "max" => Ok(Self::Max),
            "ewma" => Ok(Self::Ewma),
            "quantile" => Ok(Self::Quantile),
            other => Err(LockError::InvalidConfig(format!(
                "unknown prediction {other:?}; use table, max, ewma or quantile"
            ))),
        }
    }
}

impl SimConfig {
    /// The three kernel sections' shapes replaced by `sites` in order
    /// (none: the defaults kept); any other count than three is
    /// [`LockError::SimSites`].
    pub fn with_sites(mut self, sites: &[HoldShape]) -> Result<Self, LockError> {
        if sites.is_empty() {
            return Ok(self);
        }
        if sites.len() != self.locks.len() {
            return Err(LockError::SimSites { given: sites.len() });
        }
        self.locks.clone_from_slice(sites);
        Ok(self)
    }

    /// Hold times predicted as `prediction` says: the paper's fixed t_lock
    /// (Table 3's maxima), or learned online with the predictor it names.
    pub fn with_prediction(mut self, prediction: SimPrediction) -> Self {
        self.t_lock_ns = match prediction {
            SimPrediction::Table => SimConfig::default().t_lock_ns,
            _ => None,
        };
        self.predictor = match prediction {
            SimPrediction::Ewma => PredictorKind::EWMA,
            SimPrediction::Quantile => PredictorKind::default(),
            SimPrediction::Table | SimPrediction::Max => PredictorKind::Max,
        };
        self
    }
}

/// The paper's Table 4 and Section 6.4, for printing next to the simulation.
pub mod paper {
    /// Minimum OS latency without / with delayed locking, µs.
    pub const MIN_US: (f64, f64) = (24.0, 22.0);
    /// Maximum OS latency without / with delayed locking, µs.
    pub const MAX_US: (f64, f64) = (847.0, 192.0);
    /// Average OS latency without / with delayed locking, µs.
    pub const AVG_US: (f64, f64) = (197.14, 63.0);
    /// Slowdown of the TCP sender with delayed locking.
    pub const SENDER_COST: f64 = 0.20;
    /// Table 3: average hold time of `do_softirq`, `tcp_sendmsg` and `net_rx`, µs.
    pub const HOLD_AVG_US: [f64; 3] = [121.0, 352.0, 56.0];
    /// Table 3: maximum hold time (the fixed predictions t_lock,i), µs.
    pub const HOLD_MAX_US: [f64; 3] = [800.0, 2192.0, 128.0];
}
