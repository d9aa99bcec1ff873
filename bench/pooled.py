"""Pooled percentiles of latency histograms and a bootstrap interval of
their ratio, shared by bench/pooled-ratio.py and bench/watch-interleaved.py.

A histogram is a dict: latency (us) -> count. A pair is (a, b): two
histograms measured side by side (a round pair, or a phase pair)."""


def added(hists):
    """The histograms added together into one."""
    total = {}
    for h in hists:
        for k, n in h.items():
            total[k] = total.get(k, 0) + n
    return total


def percentile(hists, p):
    """The p-th percentile (us) of the histograms added together; 0 if empty."""
    total = added(hists)
    want = sum(total.values()) * p / 100.0
    seen = 0
    for k in sorted(total):
        seen += total[k]
        if seen >= want:
            return k
    return 0


def interpolated(hists, p):
    """The p-th percentile (us) of the histograms added together, read
    within its 1 us bucket: cyclictest truncates to whole microseconds, so
    a sample printed as k lies in [k, k + 1), and the percentile is placed
    in its bucket by the share of the bucket's samples below it. Less
    rounding than `percentile`, whose 1 us steps are 3 % of a 35 us p99;
    0 if empty."""
    total = added(hists)
    want = sum(total.values()) * p / 100.0
    seen = 0
    for k in sorted(total):
        if seen + total[k] >= want:
            return k + (want - seen) / total[k]
        seen += total[k]
    return 0.0


def pooled_ratio(pairs, p, rng, resamples=2000, at=percentile):
    """(pooled a, pooled b, low, high): the p-th percentiles of each side
    over all pairs, and the 95 % interval of b/a from resampling the pairs
    (the host's noise comes and goes between them, so pairs, not samples,
    are the unit resampled). `at` reads the percentile: `percentile` (whole
    microseconds) or `interpolated`."""
    a = at([x for x, _ in pairs], p)
    b = at([y for _, y in pairs], p)
    ratios = []
    for _ in range(resamples):
        sample = [rng.choice(pairs) for _ in pairs]
        sa = at([x for x, _ in sample], p)
        sb = at([y for _, y in sample], p)
        ratios.append(sb / sa if sa else float("inf"))
    ratios.sort()
    return a, b, ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]


def capped_mean(hists, cap):
    """Mean (us) of the samples under `cap` us of the histograms added
    together; 0 if none."""
    n = total = 0
    for h in hists:
        for k, c in h.items():
            if k < cap:
                n += c
                total += k * c
    return total / n if n else 0.0


def mean_shift(pairs, cap, rng, resamples=2000):
    """(mean a, mean b, low, high): each side's mean of the samples under
    `cap` us and the 95 % interval of b - a from resampling the pairs. The
    mean resolves a shift of the whole wake-up path (a fraction of a
    microsecond) in a few minutes, where a percentile of 1 us buckets needs
    far more samples: a screen for changes, not the goal's figure."""
    a = capped_mean([x for x, _ in pairs], cap)
    b = capped_mean([y for _, y in pairs], cap)
    shifts = []
    for _ in range(resamples):
        sample = [rng.choice(pairs) for _ in pairs]
        shifts.append(capped_mean([y for _, y in sample], cap)
                      - capped_mean([x for x, _ in sample], cap))
    shifts.sort()
    return a, b, shifts[int(0.025 * len(shifts))], shifts[int(0.975 * len(shifts)) - 1]
