"""Clients that never read (issue 22 hole 5): every answer is written in pieces of at most ``send_chunk_bytes``,
and each piece waits at most ``send_timeout_s`` for the client to take it.

The server's write of a piece returns once the connection's buffer is below its high-water mark, so at most
about one piece (plus that mark) waits per connection, not a whole 7.5 MB answer copied into the transport.
A client that takes nothing for ``send_timeout_s`` is treated as gone: the app is told it disconnected (a
stream stops, its run is cancelled) and whatever it still sends is dropped, so its answer is freed.
Pure ASGI (not BaseHTTPMiddleware, which hides client disconnects from the routes).
"""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger("flowgrad")
DISCONNECT = {"type": "http.disconnect"}


class SendGuard:
    def __init__(self, app, *, timeout_s: float, chunk_bytes: int):
        self.app = app
        self.timeout_s = timeout_s
        self.chunk_bytes = chunk_bytes
        self.dropped = 0  # connections given up on (a count for operators and tests)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        gone = asyncio.Event()

        async def send_one(message) -> None:
            if gone.is_set():
                await asyncio.sleep(0)  # dropped; and the app's disconnect listener gets its turn to stop it
                return
            try:
                await asyncio.wait_for(send(message), self.timeout_s)
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
