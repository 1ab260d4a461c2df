"""Issue 22 hole 5: a client that never reads pins no more than a piece of its answer, and is let go after
send_timeout_s; a client that reads gets every byte."""

from __future__ import annotations

import asyncio

from starlette.responses import Response, StreamingResponse

from app.api.send_guard import SendGuard
from app.core.config import Settings

BIG = bytes(range(256)) * 30_000  # 7.5 MB, like `a = torch.rand(390000)`'s answer


class Client:
    """The server's side of one connection: takes ``reads`` body pieces, then never again (a client that stopped
    reading: the write waits forever)."""

    def __init__(self, reads: int):
        self.reads = reads
        self.pieces: list[bytes] = []
        self.started = False
        self.waiting = 0  # bytes handed to a write that never completes

    async def receive(self):
        await asyncio.Event().wait()  # the client says nothing (never a disconnect of its own)

    async def send(self, message):
        if message["type"] == "http.response.start":
            self.started = True
            return
        body = message.get("body", b"")
        if len(self.pieces) >= self.reads:
            self.waiting = len(body)
            await asyncio.Event().wait()
        self.pieces.append(body)


def serve(app, client: Client, *, timeout_s: float = 0.05, chunk: int = 65_536) -> SendGuard:
    guard = SendGuard(app, timeout_s=timeout_s, chunk_bytes=chunk)
    asyncio.run(guard({"type": "http", "method": "GET", "path": "/", "headers": []}, client.receive, client.send))
    return guard


def test_a_big_answer_goes_in_pieces_and_a_reader_gets_it_all():
    client = Client(reads=10**9)
    serve(Response(BIG), client)
    assert max(len(p) for p in client.pieces) <= 65_536 and b"".join(client.pieces) == BIG


def test_a_client_that_stops_reading_is_let_go_with_at_most_a_piece_waiting():
    client = Client(reads=3)
    guard = serve(Response(BIG), client)  # returns: the answer is not held until the client reads
    assert guard.dropped == 1 and len(client.pieces) == 3
    assert client.waiting <= 65_536  # never the whole 7.5 MB handed to the connection at once


def test_a_stream_nobody_reads_is_stopped():
    produced = []

    async def events():
        for i in range(10**6):  # an endless run stream
            produced.append(i)
            yield b"data: " + b"x" * 10_000 + b"\n\n"

    client = Client(reads=5)
    guard = serve(StreamingResponse(events(), media_type="text/event-stream"), client)
    assert guard.dropped == 1 and len(produced) < 100  # told the client left: the stream stopped


def test_the_limits_are_settings():
    s = Settings()
    assert s.send_timeout_s > 0 and s.send_chunk_bytes >= 1024
