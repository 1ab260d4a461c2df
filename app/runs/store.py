"""The run store (docs/trace.md §5): the group payloads of folded passes, in the server's memory.

One per server process (the pool fills it from its workers' ``store`` messages). Bounded three ways,
each a setting: total bytes (``run_store_max_bytes``), runs (``run_store_max_runs``), and age since last
use (``run_store_ttl_s``); least recently used runs go first. A run id is 16 random bytes (hex) made
by the worker: knowing one is the only way to a run, so no client can list or guess another's.
A run whose answer is out but whose payloads are still being built is *pending*: a request for it
waits (``wait``) instead of being told the run expired.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from app.trace.payloads import PassPayloads

RUN_ID = re.compile(r"[0-9a-f]{32}")
PENDING_FORGET_S = 60.0  # an announced run whose payloads never came (its worker died) is forgotten


@dataclass
class StoredRun:
    passes: dict[int, PassPayloads] = field(default_factory=dict)
    nbytes: int = 0
    used: float = field(default_factory=time.monotonic)


class RunStore:
    def __init__(self, *, max_bytes: int, max_runs: int, ttl_s: float, clock=time.monotonic):
        self.max_bytes = max_bytes
        self.max_runs = max_runs
        self.ttl_s = ttl_s
        self.clock = clock
        self.runs: OrderedDict[str, StoredRun] = OrderedDict()
        self.nbytes = 0
        self.pending: dict[str, tuple[asyncio.Event, float]] = {}  # run → (set when stored, announced at)
        self.evicted = 0

    @classmethod
    def from_settings(cls, settings) -> RunStore:
        return cls(max_bytes=settings.run_store_max_bytes, max_runs=settings.run_store_max_runs,
                   ttl_s=settings.run_store_ttl_s)

    # ---------------------------------------------------------------- filling
    def expect(self, run: str) -> None:
        """The run's answer is out; its payloads follow (requests for it wait)."""
        if not RUN_ID.fullmatch(run) or run in self.runs:
            return
        now = self.clock()
        for old in [r for r, (_, t) in self.pending.items() if now - t > PENDING_FORGET_S]:
            self.abandon(old)  # its worker died before sending the payloads
        if len(self.pending) < 4 * self.max_runs:
            self.pending[run] = (asyncio.Event(), now)

    def put(self, run: str, passes: dict[int, PassPayloads]) -> None:
        ev = self.pending.pop(run, (None, 0.0))[0]
        size = sum(p.nbytes() for p in passes.values())
        if RUN_ID.fullmatch(run) and size <= self.max_bytes:
            old = self.runs.pop(run, None)
            if old is not None:
                self.nbytes -= old.nbytes
            self.runs[run] = StoredRun(dict(passes), size, self.clock())
            self.nbytes += size
            self._trim()
        if ev is not None:
            ev.set()

    def abandon(self, run: str) -> None:
        ev = self.pending.pop(run, (None, 0.0))[0]
        if ev is not None:
            ev.set()

    def _trim(self) -> None:
        now = self.clock()
        while self.runs:
            run, stored = next(iter(self.runs.items()))
            if self.nbytes > self.max_bytes or len(self.runs) > self.max_runs or now - stored.used > self.ttl_s:
                self._drop(run)
            else:
                break

    def _drop(self, run: str) -> None:
        stored = self.runs.pop(run)
        self.nbytes -= stored.nbytes
        self.evicted += 1

    # ---------------------------------------------------------------- reading
    def get(self, run: str, k: int) -> PassPayloads | None:
        stored = self.runs.get(run)
        if stored is None:
            return None
        now = self.clock()
        if now - stored.used > self.ttl_s:
            self._drop(run)
            return None
        stored.used = now
        self.runs.move_to_end(run)
        self._trim()
        return stored.passes.get(k)

    async def wait(self, run: str, k: int, timeout: float) -> PassPayloads | None:
        """``get``, waiting up to ``timeout`` seconds when the run's payloads are still on their way."""
        ev = self.pending.get(run, (None, 0.0))[0]
        if ev is not None:
            try:
                await asyncio.wait_for(ev.wait(), timeout)
            except TimeoutError:
                return None
        return self.get(run, k)

    def state(self) -> dict:
        return {"runs": len(self.runs), "bytes": self.nbytes, "pending": len(self.pending), "evicted": self.evicted}
