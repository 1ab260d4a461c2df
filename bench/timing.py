"""The one timer the benchmarks share: the median of `repeat` runs of `number` calls, after one warm-up."""
from __future__ import annotations

import statistics
import time


def median_time(fn, repeat=7, number=20):
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)
