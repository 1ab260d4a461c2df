"""Which passes of a run are kept in full (graph, frames, values): one decision for the run process's recorder
(``app.runner.capture``: what it ships with values) and the trace builder (``app.trace.build``: what it draws).

A run's passes (docs/trace.md §2) all get a summary; the first ``head`` passes, the passes asked for (a
middle pass the page opens is recorded on demand, by running the program again), and the last ``tail``
passes keep everything. Past ``max_passes`` passes the rest are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_ASKED_PASSES = 4  # middle passes one run may record in full besides the first and last ones


@dataclass(frozen=True)
class RunPolicy:
    head: int
    tail: int
    max_passes: int
    asked: frozenset[int] = frozenset()

    @classmethod
    def from_settings(cls, settings, asked: Iterable[int] = ()) -> RunPolicy:
        """Settings ``full_passes_head``, ``full_passes_tail``, ``max_passes``; ``asked``: the request's ``passes``
        (the first MAX_ASKED_PASSES of them)."""
        return cls(settings.full_passes_head, settings.full_passes_tail, settings.max_passes,
                   frozenset(tuple(int(i) for i in asked)[:MAX_ASKED_PASSES]))

    def kept_from_start(self, index: int) -> bool:
        """Pass ``index`` is kept in full whatever comes after it (a head pass, or one asked for)."""
        return index < self.head or index in self.asked

    def in_tail(self, index: int, closed: int) -> bool:
        """Pass ``index`` is among the last ``tail`` of the ``closed`` passes of a finished run."""
        return index >= closed - self.tail

    def tail_from(self, opened: int) -> int:
        """While ``opened`` passes have begun, the first pass that may still end among the last ``tail``. One pass
        early: the tensors made in a pass's update phase go with the next pass (the builder holds them until it
        opens), so the pass before the tail ships them in full too. Past ``max_passes`` the builder keeps no pass:
        the last ones it keeps are the tail drawn."""
        return min(opened, self.max_passes) - self.tail - 1

    def left_to_draw(self, index: int) -> int:
        """Full passes still to be sent once pass ``index`` (kept from the start) is: it, the head and asked-for
        passes after it, and the tail (for sharing the answer's bytes)."""
        return max(1, self.head - index) + sum(i > index for i in self.asked) + self.tail
