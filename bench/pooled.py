"""Pooled percentiles of latency histograms and a bootstrap interval of
their ratio, shared by bench/pooled-ratio.py and bench/watch-interleaved.py.

A histogram is a dict: latency (us) -> count. A pair is (a, b): two
histograms measured side by side (a round pair, or a phase pair)."""


def percentile(hists, p):
    """The p-th percentile (us) of the histograms added together; 0 if empty."""
    total = {}
    for h in hists:
        for k, n in h.items():
            total[k] = total.get(k, 0) + n
    want = sum(total.values()) * p / 100.0
    seen = 0
    for k in sorted(total):
        seen += total[k]
        if seen >= want:
            return k
    return 0


def pooled_ratio(pairs, p, rng, resamples=2000):
    """(pooled a, pooled b, low, high): the p-th percentiles of each side
    over all pairs, and the 95 % interval of b/a from resampling the pairs
    (the host's noise comes and goes between them, so pairs, not samples,
    are the unit resampled)."""
    a = percentile([x for x, _ in pairs], p)
    b = percentile([y for _, y in pairs], p)
    ratios = []
    for _ in range(resamples):
        sample = [rng.choice(pairs) for _ in pairs]
        sa = percentile([x for x, _ in sample], p)
        sb = percentile([y for _, y in sample], p)
        ratios.append(sb / sa if sa else float("inf"))
    ratios.sort()
    return a, b, ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]
