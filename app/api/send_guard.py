"""Clients that never read (issue 22 hole 5): every answer is written in pieces of at most ``send_chunk_bytes``,
and each piece waits at most ``send_timeout_s`` for the client to take it.

The server's write of a piece returns once the connection's buffer is below its high-water mark, so at most
about one piece (plus that mark) waits per connection, not a whole 7.5 MB answer copied into the transport.
A client that takes nothing for ``send_timeout_s`` is treated as gone: the app is told it disconnected (a
stream stops, its run is cancelled) and whatever it still sends is dropped, so its answer is freed.
A client with many connections shares one allowance: the pieces handed to the connections of one identity
(app/core/identity.py; its address when the request has none) and not yet taken add up to at most
``identity_bytes``; a further piece waits for room within the same ``send_timeout_s``, so a client opening a hundred
slow-reading connections pins what one share allows, and its connections past that are let go.
Pure ASGI (not BaseHTTPMiddleware, which hides client disconnects from the routes).
"""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger("flowgrad")
DISCONNECT = {"type": "http.disconnect"}
IDENTITY_PIECES = 16  # one identity's share of bytes waiting to be written: this many pieces (1 MiB by default)


class Share:
    """What one identity's connections have handed to writes not yet taken, and a wake-up when that shrinks."""

    def __init__(self):
        self.waiting = 0
        self.users = 0  # connections of this identity under way (the share is forgotten at 0)
        self.waiters = 0  # writes waiting for room (none: a finished write has nobody to wake)
        self.room = asyncio.Condition()


def _who(scope) -> str:
    identity = (scope.get("state") or {}).get("identity")
    key = getattr(identity, "key", None)
    return key if isinstance(key, str) else "a:" + str((scope.get("client") or ("unknown",))[0])


class SendGuard:
    def __init__(self, app, *, timeout_s: float, chunk_bytes: int, identity_bytes: int | None = None):
        self.app = app
        self.timeout_s = timeout_s
        self.chunk_bytes = chunk_bytes
        self.identity_bytes = max(chunk_bytes, identity_bytes or IDENTITY_PIECES * chunk_bytes)
        self.shares: dict[str, Share] = {}
        self.dropped = 0  # connections given up on (a count for operators and tests)

    def waiting(self, who: str) -> int:
        """Bytes ``who``'s connections have handed to writes not yet taken (for operators and tests)."""
        share = self.shares.get(who)
        return share.waiting if share is not None else 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        gone = asyncio.Event()
        shares = self.shares
        share_of: list[Share] = []  # the identity is known once the app has run (IdentityCookie sets it)

        def share() -> Share:
            if not share_of:
                who = _who(scope)
                got = shares.get(who)
                if got is None:
                    got = shares[who] = Share()
                got.users += 1
                share_of.append(got)
            return share_of[0]

        async def write(message, n: int) -> None:
            """``send`` once the identity's share has room for ``n`` more bytes (always for its first piece)."""
            mine = share()
            if n and mine.waiting and mine.waiting + n > self.identity_bytes:
                mine.waiters += 1
                try:
                    async with mine.room:
                        await mine.room.wait_for(lambda: not mine.waiting or mine.waiting + n <= self.identity_bytes)
                finally:
                    mine.waiters -= 1
            mine.waiting += n
            try:
                await send(message)
            finally:
                mine.waiting -= n
                if mine.waiters:  # a class's 300 streams share one Condition: taken only when someone waits
                    async with mine.room:
                        mine.room.notify_all()

        async def send_one(message) -> None:
            if gone.is_set():
                await asyncio.sleep(0)  # dropped; and the app's disconnect listener gets its turn to stop it
                return
            n = len(message.get("body", b"")) if message["type"] == "http.response.body" else 0
            try:
                async with asyncio.timeout(self.timeout_s):  # not wait_for: on 3.11 a task per message written
                    await write(message, n)
            except TimeoutError:
                gone.set()
                self.dropped += 1
                log.info("dropped a client that read nothing for %g s (send_timeout_s)", self.timeout_s)

        async def guarded_send(message) -> None:
            body = message.get("body", b"") if message["type"] == "http.response.body" else b""
            if len(body) <= self.chunk_bytes:
                await send_one(message)
                return
            more = message.get("more_body", False)
            view = memoryview(body)
            for start in range(0, len(body), self.chunk_bytes):
                last = start + self.chunk_bytes >= len(body)
                await send_one({"type": "http.response.body", "body": bytes(view[start:start + self.chunk_bytes]),
                                "more_body": more or not last})
                if gone.is_set():
                    return

        reading: list[asyncio.Future] = []  # the one receive() under way: kept across calls, never lost

        async def guarded_receive():
            # NOTE: Request.is_disconnected() calls this in an already-cancelled scope: a message that has
            # arrived must be returned without waiting, so the receive under way is kept, not abandoned
            if gone.is_set():
                return DISCONNECT
            if not reading:
                reading.append(asyncio.ensure_future(receive()))
            message = reading[0]
            if not message.done():
                given_up = asyncio.ensure_future(gone.wait())
                try:
                    await asyncio.wait({message, given_up}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    given_up.cancel()
                if not message.done():
                    return DISCONNECT
            reading.clear()
            return message.result()

        try:
            await self.app(scope, guarded_receive, guarded_send)
        finally:
            for message in reading:  # the request is over: nobody will read what it was waiting for
                message.cancel()
            for mine in share_of:
                mine.users -= 1
                if mine.users <= 0 and shares.get(_who(scope)) is mine:
                    del shares[_who(scope)]
