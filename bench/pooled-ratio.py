#!/usr/bin/env python3
"""Pooled percentiles of cyclictest histograms (-h) and their ratio with a
bootstrap interval: the evidence for a small overhead on a noisy machine.

    bench/pooled-ratio.py PERCENTILE ALONE_FILES... -- WATCHED_FILES...

Each file is one round's `cyclictest -q -h N` output; rounds are paired by
position (alone round i ran just before watched round i). Prints the pooled
percentile of each side (all rounds' counts added), their ratio, and a 95 %
interval of that ratio from 2,000 bootstrap resamplings of the round pairs
(the host's noise comes and goes between rounds, so rounds, not samples,
are the unit resampled)."""
import random
import sys

from pooled import pooled_ratio


def histogram(path):
    """Bucket (us) -> count, the thread columns added."""
    counts = {}
    with open(path) as f:
        for line in f:
            if not line[:1].isdigit():
                continue
            fields = line.split()
            n = sum(int(x) for x in fields[1:])
            if n:
                counts[int(fields[0])] = counts.get(int(fields[0]), 0) + n
    return counts


def main():
    p = float(sys.argv[1])
    args = sys.argv[2:]
    cut = args.index("--")
    alone = [histogram(a) for a in args[:cut]]
    watched = [histogram(w) for w in args[cut + 1:]]
    pairs = list(zip(alone, watched))
    a, w, low, high = pooled_ratio(pairs, p, random.Random(16))
    print(f"pooled p{p:g}: alone {a} us, watched {w} us, ratio {w / a:.3f} "
          f"(95 % bootstrap interval over {len(pairs)} round pairs: {low:.3f}..{high:.3f})")


if __name__ == "__main__":
    main()
