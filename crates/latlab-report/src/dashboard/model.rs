//! What the dashboard's pages show, computed by the fleet (`latlab-fleet`
//! builds it from the store): the renderer only lays it out.

pub use latlab_history::{Entry, Group, Series};

/// A result flagged as a regression.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// The result's row id.
    pub id: i64,
    /// The baseline's worst latency, ns.
    pub baseline_ns: u64,
    /// The result's worst latency, ns.
    pub max_ns: u64,
}

/// The latest worst latency against the ones before it in its series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trend {
    /// The series' first result with a latency: nothing to set it against.
    First,
    /// The latest worst latency's change against the median of the (up to
    /// ten) before it, percent.
    Change(f64),
}

/// The fleet page: every board, one row per series.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetView {
    /// The boards, in the store's order.
    pub boards: Vec<BoardSummary>,
    /// How many results all boards have.
    pub results: usize,
    /// How many of them are regressions.
    pub regressions: usize,
    /// The regression threshold (0.5: 50 % above the baseline).
    pub threshold: f64,
}

/// One board on the fleet page.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardSummary {
    /// The board's name.
    pub name: String,
    /// The host name of its first result.
    pub host: Option<String>,
    /// The architecture of its first result.
    pub arch: Option<String>,
    /// Its series (none: no results yet).
    pub series: Vec<SeriesSummary>,
}

/// One series of a board on the fleet page.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesSummary {
    /// What its results share.
    pub group: Group,
    /// How many results it has.
    pub results: usize,
    /// Its latest result.
    pub latest: Entry,
    /// The worst latencies of its last results (up to 30), oldest first, ns.
    pub worst: Vec<u64>,
    /// The latest worst latency against those before (`None`: no latency).
    pub trend: Option<Trend>,
    /// How many of its results are regressions.
    pub regressions: usize,
}

/// The choices of a board page's filters: every kind, kernel and load the
/// board has (`none`: no load), and the ones chosen (`None`: any).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoardFilters {
    /// Every kind the board has, sorted.
    pub kinds: Vec<String>,
    /// Every kernel release, sorted.
    pub kernels: Vec<String>,
    /// Every load, sorted (`none`: the results without load).
    pub loads: Vec<String>,
    /// The kind chosen.
    pub kind: Option<String>,
    /// The kernel chosen.
    pub kernel: Option<String>,
    /// The load chosen (`none`: without load).
    pub load: Option<String>,
}

/// A board's page.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardView {
    /// The board's name.
    pub name: String,
    /// The filters offered and chosen.
    pub filters: BoardFilters,
    /// The series of the results the filters keep (for the long-term plot).
    pub series: Vec<Series>,
    /// The results the filters keep, newest first.
    pub results: Vec<ResultRow>,
    /// How many of them are regressions.
    pub regressions: usize,
    /// The regression threshold (0.5: 50 %).
    pub threshold: f64,
}

/// One result on a board's page.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    /// The result.
    pub entry: Entry,
    /// Its regression, when it is one.
    pub regression: Option<Regression>,
    /// The id of the result before it in its series, to compare with.
    pub previous: Option<i64>,
}
