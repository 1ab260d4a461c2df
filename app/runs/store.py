"""The run store (docs/trace.md §5): the group payloads of folded passes, in the server's memory.

One per server process (the pool fills it from its workers' ``store`` messages). Bounded three ways,
each a setting: total bytes (``run_store_max_bytes``), runs (``run_store_max_runs``), and age since last
use (``run_store_ttl_s``). Shared fairly (issue 22): each run belongs to the identity whose program made it,
and room is made before a run goes in, by dropping the least recently used run of whoever holds the most
(bytes when bytes are short, runs when runs are) — one client's 66 tiny runs push out its own, not the
class's. A run counts what the server holds for it: its pieces as measured (``PassPayloads.measure``: ~1.05x
the resident growth measured with RSS), PIECE_BYTES per piece and ``run_store_entry_bytes`` per run and pass.
A run id is 16 random bytes (hex) made
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
PIECE_BYTES = 32  # the allocator's share per stored piece, beyond what measure() sees (RSS: ~31 bytes)
PENDING_FORGET_S = 60.0  # an announced run whose payloads never came (its worker died) is forgotten
REMEMBERED = 4096  # ids of runs this store let go, to tell "expired" from "never here" (``missing``)
EXPIRED, ELSEWHERE = "expired", "elsewhere"


@dataclass
class StoredRun:
    passes: dict[int, PassPayloads] = field(default_factory=dict)
    nbytes: int = 0
    used: float = field(default_factory=time.monotonic)
    owner: str = ""  # the identity whose run it is (app/core/identity.py); "" unknown


def _pieces(p: PassPayloads) -> int:
    return len(p.cores) + len(p.entries) + len(p.frames) + len(p.sizes) + len(p.children) + len(p.search)


class RunStore:
    def __init__(self, *, max_bytes: int, max_runs: int, ttl_s: float, entry_bytes: int = 0, clock=time.monotonic):
        self.max_bytes = max_bytes
        self.max_runs = max_runs
        self.ttl_s = ttl_s
        self.entry_bytes = entry_bytes
        self.clock = clock
        self.runs: OrderedDict[str, StoredRun] = OrderedDict()  # least recently used first
        self.nbytes = 0
        self.held: dict[str, list[int]] = {}  # owner → [bytes, runs] it holds
        self.pending: dict[str, tuple[asyncio.Event, float, str]] = {}  # run → (set when stored, announced at, owner)
        self.evicted = 0
        self.forgotten: OrderedDict[str, None] = OrderedDict()  # runs it held or expected, gone now

    @classmethod
    def from_settings(cls, settings) -> RunStore:
        return cls(max_bytes=settings.run_store_max_bytes, max_runs=settings.run_store_max_runs,
                   ttl_s=settings.run_store_ttl_s, entry_bytes=settings.run_store_entry_bytes)

    def counted(self, passes: dict[int, PassPayloads]) -> int:
        """The bytes a run's payloads are counted for (see the module's docstring)."""
        return self.entry_bytes + sum(p.nbytes() + self.entry_bytes + PIECE_BYTES * _pieces(p) for p in passes.values())

    # ---------------------------------------------------------------- filling
    def expect(self, run: str, owner: str | None = None) -> None:
        """The run's answer is out; its payloads follow (requests for it wait)."""
        if not RUN_ID.fullmatch(run) or run in self.runs:
            return
        now = self.clock()
        for old in [r for r, (_, t, _) in self.pending.items() if now - t > PENDING_FORGET_S]:
            self.abandon(old)  # its worker died before sending the payloads
        if len(self.pending) < 4 * self.max_runs:
            self.pending[run] = (asyncio.Event(), now, owner or "")

    def put(self, run: str, passes: dict[int, PassPayloads], owner: str | None = None) -> None:
        ev, _, announced_by = self.pending.pop(run, (None, 0.0, ""))
        owner = owner or announced_by
        size = self.counted(passes)
        if RUN_ID.fullmatch(run) and size > self.max_bytes:
            self._remember(run)
        if RUN_ID.fullmatch(run) and size <= self.max_bytes:
            if run in self.runs:
                self._drop(run, evicted=False)
            self._expire()
            self._make_room(owner, size)  # before it goes in: the store never holds more than max_bytes
            self.runs[run] = StoredRun(dict(passes), size, self.clock(), owner)
            self._hold(owner, size, 1)
        if ev is not None:
            ev.set()

    def abandon(self, run: str) -> None:
        ev = self.pending.pop(run, (None, 0.0, ""))[0]
        if ev is not None:
            self._remember(run)
            ev.set()

    def _remember(self, run: str) -> None:
        self.forgotten[run] = None
        while len(self.forgotten) > REMEMBERED:
            self.forgotten.popitem(last=False)

    def missing(self, run: str) -> str:
        """Why ``run`` is not here: EXPIRED (this process held or expected it, and let it go; or forgot that
        long ago) or ELSEWHERE (this process never had it: without a broker, another process ran it)."""
        return EXPIRED if run in self.forgotten or len(self.forgotten) >= REMEMBERED else ELSEWHERE

    def _hold(self, owner: str, nbytes: int, runs: int) -> None:
        held = self.held.setdefault(owner, [0, 0])
        held[0] += nbytes
        held[1] += runs
        self.nbytes += nbytes
        if held[1] <= 0:
            del self.held[owner]

    def _make_room(self, owner: str, size: int) -> None:
        """Drop runs until ``size`` more bytes and one more run fit: each time the least recently used run of the
        owner holding the most (the incoming run counted as its owner's)."""
        while self.runs and (self.nbytes + size > self.max_bytes or len(self.runs) + 1 > self.max_runs):
            by_bytes = self.nbytes + size > self.max_bytes
            heaviest = max(self.held, key=lambda o: self.held[o][0 if by_bytes else 1]
                           + ((size if by_bytes else 1) if o == owner else 0))
            self._drop(next(r for r, stored in self.runs.items() if stored.owner == heaviest))

    def _expire(self) -> None:
        now = self.clock()
        for run in [r for r, stored in self.runs.items() if now - stored.used > self.ttl_s]:
            self._drop(run)

    def _drop(self, run: str, *, evicted: bool = True) -> None:
        stored = self.runs.pop(run)
        self._hold(stored.owner, -stored.nbytes, -1)
        self.evicted += evicted
        self._remember(run)

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
        return stored.passes.get(k)

    async def wait(self, run: str, k: int, timeout: float) -> PassPayloads | None:
        """``get``, waiting up to ``timeout`` seconds when the run's payloads are still on their way."""
        ev = self.pending.get(run, (None, 0.0, ""))[0]
        if ev is not None:
            try:
                await asyncio.wait_for(ev.wait(), timeout)
            except TimeoutError:
                return None
        return self.get(run, k)

    async def wait_run(self, run: str, timeout: float) -> dict[int, PassPayloads]:
        """Every stored pass of ``run`` (none when it is not stored), waiting up to ``timeout`` seconds when its
        payloads are still on their way."""
        ev = self.pending.get(run, (None, 0.0, ""))[0]
        if ev is not None:
            try:
                await asyncio.wait_for(ev.wait(), timeout)
            except TimeoutError:
                return {}
        stored = self.runs.get(run)
        if stored is None or self.clock() - stored.used > self.ttl_s:
            return {}
        return dict(stored.passes)

    def state(self) -> dict:
        return {"runs": len(self.runs), "bytes": self.nbytes, "owners": len(self.held), "pending": len(self.pending),
                "evicted": self.evicted}
