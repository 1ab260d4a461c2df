"""How long a new run would wait for a worker, from how long recent runs took: a run that would wait past
``queue_timeout_s`` is answered 429 at once (with a ``Retry-After`` of about the excess), not after waiting it out."""

from __future__ import annotations

import math

SMOOTHING = 0.2  # weight of the newest run in the mean (about the last 10 runs count)


class WaitEstimate:
    def __init__(self):
        self.mean_run_s: float | None = None  # None until a run finished: nothing is refused on a guess

    def finished(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.mean_run_s = seconds if self.mean_run_s is None else self.mean_run_s + SMOOTHING * (seconds - self.mean_run_s)

    def expected_wait(self, ahead: int, workers: int) -> float:
        """Seconds until a run behind ``ahead`` waiting runs starts on one of ``workers`` workers."""
        if self.mean_run_s is None or workers <= 0:
            return 0.0
        return ahead * self.mean_run_s / workers

    def retry_after(self, ahead: int, workers: int, budget_s: float, floor_s: int) -> int:
        """Seconds until the expected wait is back within ``budget_s`` (at least ``floor_s``)."""
        return max(floor_s, math.ceil(self.expected_wait(ahead, workers) - budget_s))
