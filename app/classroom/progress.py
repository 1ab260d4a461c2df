"""A class run's progress while it streams (issue 24): what followers see of the teacher's long training loop
before its answer exists, i.e. "running…", the passes so far and the loss curve.

The server runs the class's program streamed (``POST …/run``); ``RunProgress`` reads its events as they come and
``payload`` is the small JSON every follower gets in its frames (``"progress"``): the loss curve thinned to at
most ``max_points`` points (the newest always kept), so a 20,000-pass loop costs a few kilobytes per frame.
"""

from __future__ import annotations

import math
import time

import orjson

MAX_POINTS = 240  # the loss chart's points at most: a phone's chart is narrower than this in pixels


class RunProgress:
    def __init__(self, every_s: float, max_points: int = MAX_POINTS):
        self.max_points = max(2, max_points)
        self.every_s = every_s  # settings.class_progress_every_s: each time is one frame to every follower
        self.started = time.monotonic()
        self.last_sent = self.started
        self.passes: set[int] = set()
        self.steps = 0
        self.losses: list[tuple[int, float]] = []  # (pass or step index, loss), in order
        self.stride = 1  # one loss kept in every ``stride`` (doubled whenever the list fills)
        self.seen = 0  # losses seen, kept or not
        self.newest: tuple[int, float] | None = None  # the newest loss when the thinning skipped it (shown anyway)
        self.sent_any = False

    def take(self, event: bytes) -> None:
        """One streamed event (JSON); what is not a pass, a step or progress changes nothing."""
        try:
            ev = orjson.loads(event)
        except orjson.JSONDecodeError:
            return
        if not isinstance(ev, dict):
            return
        kind = ev.get("type")
        if kind == "pass" and isinstance(ev.get("pass"), dict):
            index = ev["pass"].get("index")
            if isinstance(index, int) and not isinstance(index, bool):
                self.passes.add(index)
        elif kind == "step":
            self.steps += 1
            step, loss = ev.get("step"), ev.get("loss")
            if isinstance(step, int) and isinstance(loss, (int, float)) and not isinstance(loss, bool) \
                    and math.isfinite(loss):
                self._keep(step, float(loss))

    def _keep(self, step: int, loss: float) -> None:
        self.seen += 1
        if (self.seen - 1) % self.stride:
            self.newest = (step, loss)
            return
        self.newest = None
        self.losses.append((step, loss))
        if len(self.losses) >= self.max_points:
            self.losses = self.losses[::2]
            self.stride *= 2

    def due(self) -> bool:
        """Time to tell the class (at most every ``every_s``; never for a run that ends sooner)."""
        now = time.monotonic()
        if now - self.last_sent < self.every_s:
            return False
        self.last_sent = now
        self.sent_any = True
        return True

    def payload(self) -> bytes:
        points = self.losses + ([self.newest] if self.newest is not None else [])
        return orjson.dumps({"running": True, "passes": len(self.passes), "steps": self.steps,
                             "seconds": round(time.monotonic() - self.started, 1),
                             "losses": [[s, v] for s, v in points]})
