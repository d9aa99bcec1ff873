//! Statistics for long runs: the rate of spikes with its confidence
//! interval, and whether a sample count supports a percentile.

/// ln(k!) (Stirling's series past 20).
fn ln_factorial(k: u64) -> f64 {
    if k < 21 {
        return (1..=k).map(|i| (i as f64).ln()).sum();
    }
    let n = k as f64;
    n * n.ln() - n + 0.5 * (2.0 * std::f64::consts::PI * n).ln() + 1.0 / (12.0 * n)
        - 1.0 / (360.0 * n * n * n)
}

/// P(X <= k) for X ~ Poisson(lambda).
pub fn poisson_cdf(k: u64, lambda: f64) -> f64 {
    if lambda <= 0.0 {
        return 1.0;
    }
    // Sum the terms around the mode in log space (stable for large k).
    let mut total = 0.0;
    let ln_l = lambda.ln();
    for i in 0..=k {
        let t = (i as f64 * ln_l - lambda - ln_factorial(i)).exp();
        total += t;
    }
    total.min(1.0)
}

/// The exact (Garwood) two-sided confidence interval of a Poisson mean for
/// `k` events, at level `1 - alpha` (0.05: 95 %).
pub fn poisson_interval(k: u64, alpha: f64) -> (f64, f64) {
    if k > 100_000 {
        // Normal approximation; the exact sum would be slow and agrees.
        let z = 1.959_963_984_540_054;
        let kf = k as f64;
        return ((kf - z * kf.sqrt()).max(0.0), kf + z * kf.sqrt());
    }
    let solve = |f: &dyn Fn(f64) -> f64, target: f64| {
        // f decreasing in lambda: bisection on [0, hi].
        let (mut lo, mut hi) = (0.0f64, (k as f64 + 10.0) * 3.0 + 10.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) > target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let lower = if k == 0 {
        0.0
    } else {
        // P(X >= k | lambda) = alpha/2; 1 - cdf(k-1) increases with lambda.
        solve(&|l| poisson_cdf(k - 1, l), 1.0 - alpha / 2.0)
    };
    let upper = solve(&|l| poisson_cdf(k, l), alpha / 2.0);
    (lower, upper)
}

/// Spikes per hour and its 95 % interval for `count` spikes in `elapsed_ns`.
pub fn rate_per_hour(count: u64, elapsed_ns: u64) -> (f64, f64, f64) {
    let hours = elapsed_ns as f64 / 3.6e12;
    if hours <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let (lo, hi) = poisson_interval(count, 0.05);
    (count as f64 / hours, lo / hours, hi / hours)
}

/// Samples beyond a percentile needed before latlab states it: with fewer
/// than this many above it, the percentile is a guess.
pub const TAIL_SAMPLES: f64 = 10.0;

/// Samples a percentile `p` (e.g. 99.9999) needs: `TAIL_SAMPLES / (1 - p/100)`.
pub fn samples_needed(p: f64) -> u64 {
    let tail = 1.0 - p / 100.0;
    if tail <= 0.0 {
        return u64::MAX;
    }
    (TAIL_SAMPLES / tail).ceil() as u64
}

/// The usual percentiles a summary states that `n` samples do not support,
/// as notes (`p99.99 needs 100000 samples, has 60000`).
pub fn unsupported(n: u64) -> Vec<String> {
    [99.0, 99.9, 99.99, 99.999, 99.9999]
        .iter()
        .filter(|&&p| n < samples_needed(p))
        .map(|&p| format!("p{p} needs {} samples, has {n}", samples_needed(p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_intervals_match_published_tables() {
        // Garwood 95 % limits: k=0 -> (0, 3.689), k=1 -> (0.0253, 5.572),
        // k=10 -> (4.795, 18.39).
        let close = |a: f64, b: f64| (a - b).abs() < 0.005 * b.max(0.01);
        let (l, u) = poisson_interval(0, 0.05);
        assert!(l == 0.0 && close(u, 3.689), "{u}");
        let (l, u) = poisson_interval(1, 0.05);
        assert!(close(l, 0.0253) && close(u, 5.572), "{l} {u}");
        let (l, u) = poisson_interval(10, 0.05);
        assert!(close(l, 4.795) && close(u, 18.39), "{l} {u}");
    }

    #[test]
    fn a_short_run_cannot_claim_six_nines() {
        // 10 minutes at 1 kHz: 600 000 samples.
        let notes = unsupported(600_000);
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("p99.9999 needs 10000000")),
            "{notes:?}"
        );
        assert!(!notes.iter().any(|n| n.starts_with("p99.99 ")), "{notes:?}");
        assert_eq!(samples_needed(99.0), 1000);
        let (r, lo, hi) = rate_per_hour(10, 3_600_000_000_000);
        assert!(r == 10.0 && lo < 10.0 && hi > 10.0);
    }
}
