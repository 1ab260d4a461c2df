"""This process's fan-out: each session's recent events, shared by every follower stream connected here.

One encoded frame per event, written once and handed to every follower (200 followers cost one
``json`` encoding, not 200). A follower keeps a cursor (the last ``seq`` it sent); a follower that falls
more than ``keep`` events behind is sent the session's latest state instead of the events it missed,
so memory stays flat whatever the slowest laptop does.
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
    log: deque = field(init=False)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    listeners: int = 0

    def __post_init__(self):
        self.log = deque(maxlen=self.keep)

    @property
    def last_seq(self) -> int:
        return self.log[-1][0] if self.log else 0

    def put(self, seq: int, frame: bytes) -> None:
        if seq <= self.last_seq:  # the same event twice (a late joiner's fetch racing the broker's echo)
            return
        self.log.append((seq, frame))
        woken, self.changed = self.changed, asyncio.Event()
        woken.set()

    def after(self, seq: int) -> tuple[list[bytes], int, bool]:
        """Frames newer than ``seq``, the newest seq, and whether some were already dropped (a gap)."""
        if not self.log or self.last_seq <= seq:
            return [], seq, False
        gap = self.log[0][0] > seq + 1
        frames = [f for s, f in self.log if s > seq]
        return frames, self.last_seq, gap


class Hub:
    """Channels by name (``state:CODE``, ``tally:CODE``), alive while someone listens here."""

    def __init__(self, keep: int = 64):
        self.keep = keep
        self.channels: dict[str, Channel] = {}

    def listen(self, name: str) -> Channel:
        channel = self.channels.get(name)
        if channel is None:
            channel = self.channels[name] = Channel(self.keep)
        channel.listeners += 1
        return channel

    def leave(self, name: str) -> None:
        channel = self.channels.get(name)
        if channel is not None:
            channel.listeners -= 1
            if channel.listeners <= 0:
                del self.channels[name]

    def put(self, name: str, seq: int, frame: bytes) -> None:
        channel = self.channels.get(name)
        if channel is not None:  # nobody here listens: nothing to keep
            channel.put(seq, frame)
