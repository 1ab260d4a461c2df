"""Issue 22 hole 5, across connections: one identity's connections that never read share one allowance of bytes
waiting to be written (SendGuard's ``identity_bytes``); another identity's answer goes out whole meanwhile."""

from __future__ import annotations

import asyncio

from starlette.responses import Response

from app.api.send_guard import IDENTITY_PIECES, SendGuard
from app.core.identity import Identity

BIG = bytes(range(256)) * 30_000  # 7.5 MB, like `a = torch.rand(390000)`'s answer
CHUNK = 65_536


class Connection:
    """The server's side of one connection: takes ``reads`` body pieces, then never again."""

    def __init__(self, reads: int):
        self.reads = reads
        self.pieces: list[bytes] = []
        self.stuck = 0  # bytes handed to a write that never completes

    async def receive(self):
        await asyncio.Event().wait()

    async def send(self, message):
        if message["type"] != "http.response.body":
            return
        body = message.get("body", b"")
        if len(self.pieces) >= self.reads:
            self.stuck = len(body)
            try:
                await asyncio.Event().wait()
            finally:  # the server gave up on this write: the connection is closed, its bytes freed
                self.stuck = 0
        self.pieces.append(body)


def scope(who: str) -> dict:
    return {"type": "http", "method": "GET", "path": "/", "headers": [], "client": ("10.0.0.1", 1),
            "state": {"identity": Identity(who)}}


async def serve_all(guard: SendGuard, connections: list[tuple[str, Connection]], watch: list[int]) -> None:
    async def sample():
        while True:
            watch.append(sum(c.stuck for who, c in connections if who == "c:hog"))
            await asyncio.sleep(0.005)

    sampler = asyncio.ensure_future(sample())
    try:
        await asyncio.gather(*(guard(scope(who), c.receive, c.send) for who, c in connections))
    finally:
        sampler.cancel()


def test_many_slow_connections_of_one_identity_pin_one_share():
    guard = SendGuard(Response(BIG), timeout_s=0.3, chunk_bytes=CHUNK)
    hogs = [("c:hog", Connection(reads=0)) for _ in range(3 * IDENTITY_PIECES)]
    reader = ("c:student", Connection(reads=10**9))
    watch: list[int] = []
    asyncio.run(serve_all(guard, [*hogs, reader], watch))
    # never more than the identity's share handed to the hog's stuck writes, whatever its number of connections
    assert max(watch) <= guard.identity_bytes == IDENTITY_PIECES * CHUNK
    assert guard.dropped == len(hogs)  # each let go after send_timeout_s (the ones that never got room too)
    assert b"".join(reader[1].pieces) == BIG  # the other identity got every byte
    assert guard.shares == {}  # nothing kept once the connections are over


def test_one_identity_reading_on_several_connections_gets_everything():
    guard = SendGuard(Response(BIG), timeout_s=5.0, chunk_bytes=CHUNK, identity_bytes=2 * CHUNK)
    readers = [("c:tabs", Connection(reads=10**9)) for _ in range(6)]
    asyncio.run(serve_all(guard, readers, []))
    assert guard.dropped == 0 and all(b"".join(c.pieces) == BIG for _, c in readers)


def test_without_an_identity_the_address_is_the_share():
    guard = SendGuard(Response(BIG), timeout_s=0.2, chunk_bytes=CHUNK, identity_bytes=CHUNK)
    conns = [Connection(reads=1) for _ in range(5)]
    stuck: list[int] = []

    async def main():
        async def sample():
            while True:
                stuck.append(sum(c.stuck for c in conns))
                await asyncio.sleep(0.005)

        sampler = asyncio.ensure_future(sample())
        bare = {"type": "http", "method": "GET", "path": "/", "headers": [], "client": ("10.0.0.2", 1)}
        await asyncio.gather(*(guard(dict(bare), c.receive, c.send) for c in conns))
        sampler.cancel()

    asyncio.run(main())
    assert max(stuck) <= CHUNK and guard.dropped == 5
