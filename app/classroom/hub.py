"""This process's fan-out: each session's recent events, shared by every follower stream connected here.

One encoded frame per event, written once and handed to every follower (200 followers cost one
``json`` encoding, not 200). A follower keeps a cursor (the last ``seq`` it sent); a follower that falls
more than ``keep`` events behind is sent the session's latest state instead of the events it missed,
so memory stays flat whatever the slowest laptop does.

Memory is bounded across the process too (issue 22): every channel's frames count against ``max_bytes``
(``hub_max_bytes``); past it the channel holding the most drops its oldest frames (a follower behind then
gets the latest state, as above), down to its newest frame, and a channel goes, frames and all, when its
last stream closes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field


def sse_frame(seq: int, payload: bytes, event: str | None = None) -> bytes:
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"id: " + str(seq).encode() + b"\ndata: " + payload + b"\n\n"


@dataclass
class Channel:
    keep: int
    hub: Hub | None = None  # whose byte budget the frames count against
    log: deque = field(default_factory=deque)
    waiters: dict = field(default_factory=dict)  # futures of the streams waiting for the next frame (as a set)
    listeners: int = 0
    nbytes: int = 0

    @property
    def last_seq(self) -> int:
        return self.log[-1][0] if self.log else 0

    def put(self, seq: int, frame: bytes) -> None:
        if seq <= self.last_seq:  # the same event twice (a late joiner's fetch racing the broker's echo)
            return
        self.log.append((seq, frame))
        self._count(len(frame))
        while len(self.log) > self.keep:
            self.drop_oldest()
        if self.hub is not None:
            self.hub.fit()
        woken, self.waiters = self.waiters, {}
        for waiter in woken:
            if not waiter.done():  # (a stream cancelled while waiting)
                waiter.set_result(None)

    def wait(self) -> asyncio.Future:
        """A future done at the next frame (or sooner, by whoever else holds it: a stream's own heartbeat timer).
        A plain future, not an Event's wait(): no task, no timer and no deque search per frame and stream."""
        waiter = asyncio.get_running_loop().create_future()
        self.waiters[waiter] = None
        return waiter

    def forget(self, waiter: asyncio.Future) -> None:
        """A wait ended by something else than a frame (a heartbeat): its future goes, or an idle class would pile
        one up per stream and heartbeat until the next frame."""
        self.waiters.pop(waiter, None)

    def drop_oldest(self) -> None:
        _, frame = self.log.popleft()
        self._count(-len(frame))

    def _count(self, n: int) -> None:
        self.nbytes += n
        if self.hub is not None:
            self.hub.nbytes += n

    def after(self, seq: int) -> tuple[list[bytes], int, bool]:
        """Frames newer than ``seq``, the newest seq, and whether some were already dropped (a gap)."""
        if not self.log or self.last_seq <= seq:
            return [], seq, False
        gap = self.log[0][0] > seq + 1
        frames = []
        for s, f in reversed(self.log):  # from the newest back: a follower keeping up costs one frame, not the log
            if s <= seq:
                break
            frames.append(f)
        frames.reverse()
        return frames, self.last_seq, gap


class Hub:
    """Channels by name (``state:CODE``, ``tally:CODE``), alive while someone listens here."""

    def __init__(self, keep: int = 64, max_bytes: int = 32_000_000):
        self.keep = keep
        self.max_bytes = max_bytes
        self.nbytes = 0
        self.channels: dict[str, Channel] = {}

    def listen(self, name: str) -> Channel:
        channel = self.channels.get(name)
        if channel is None:
            channel = self.channels[name] = Channel(self.keep, self)
        channel.listeners += 1
        return channel

    def leave(self, name: str) -> None:
        channel = self.channels.get(name)
        if channel is not None:
            channel.listeners -= 1
            if channel.listeners <= 0:
                del self.channels[name]
                self.nbytes -= channel.nbytes  # its frames go with it

    def put(self, name: str, seq: int, frame: bytes) -> None:
        channel = self.channels.get(name)
        if channel is not None:  # nobody here listens: nothing to keep
            channel.put(seq, frame)

    def fit(self) -> None:
        """Within ``max_bytes``: the channel holding the most drops its oldest frames, each keeping its newest
        while others have more to give."""
        while self.nbytes > self.max_bytes:
            spare = [c for c in self.channels.values() if len(c.log) > 1]
            givers = spare or [c for c in self.channels.values() if c.log]  # all down to one: the newest go too
            if not givers:
                return
            max(givers, key=lambda c: c.nbytes).drop_oldest()
