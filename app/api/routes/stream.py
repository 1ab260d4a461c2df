"""Streaming runs over Server-Sent Events: ``POST /api/stream`` (JSON body) or
``GET /api/stream?source=…`` (for ``EventSource``).

Why SSE and not a WebSocket: a run is one request with one-way output, which is exactly SSE;
it is plain HTTP, so the same limits, cookies, proxies and rate limiting apply as for
``/api/run`` (WebSockets skip most of them, and uvicorn accepts 16 MiB WebSocket messages by
default); the browser reconnects by itself; and cancelling is closing the response (or starting
the client's next run, or ``POST /api/cancel``) — the server notices the disconnect and kills the
run's process.

Events (``event:`` name = ``type`` of the JSON in ``data:``), in order of production:
``stdout`` {text} as the program prints, ``figure`` {svg, at} as each figure is shown (after the
``stdout`` of the text printed before it; ``done`` repeats every figure), ``step`` {step, loss, param_norm, grad_norm} as each
pass closes, ``pass`` {pass: Pass} as each pass closes (summary-only passes have ``graph: null``;
the last passes' full graphs arrive at the end with the same ``index`` and replace the summary),
``progress`` {events, ops, passes} every ~2,000 recorder events (a sign of life during a long
forward pass), and last ``done`` {error, variables, stdout, ops, steps, modules, truncated,
truncated_reason}. A run the queue cannot take (everyone's queue, or this client's share of it, is full) is
answered 429 ``Busy`` with ``Retry-After`` before any event; failures after that end the stream with
``done`` carrying the error (``Busy`` after waiting past queue_timeout_s, ``Cancelled``, ``WorkerError``).
All the events of one stream together stay within
``max_answer_bytes`` (the worker counts them: docs/trace.md §4).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.sse import EventSourceResponse, format_sse_event

from app.api.deps import IdentityDep, RunsDep, SettingsDep
from app.api.schemas import Problem, RunRequest
from app.core.answer import EVENT_SEPARATOR
from app.core.errors import busy_response
from app.core.identity import Identity
from app.runner.service import RunService

router = APIRouter(prefix="/api", tags=["stream"])


def _event(payload: bytes) -> bytes:
    """One event's SSE frame. The worker always puts "type" first: read it without parsing the (possibly large)
    rest. Its JSON has no raw line break: the frame is built as bytes (format_sse_event's for anything else)."""
    if payload.startswith(b'{"type":"') and b"\r" not in payload and b"\n" not in payload:
        kind = payload[9 : payload.index(b'"', 9)]
        if kind.isascii() and kind.replace(b"_", b"").isalnum():
            return b"event: " + kind + b"\ndata: " + payload + b"\n\n"
    text = payload.decode()
    kind = text[9 : text.index('"', 9)] if text.startswith('{"type":"') else "message"
    return format_sse_event(data_str=text, event=kind)


def frames(chunk: bytes) -> bytes:
    """A chunk of events (``EVENT_SEPARATOR`` between them) as SSE frames: one write, one gzip flush."""
    if EVENT_SEPARATOR not in chunk:
        return _event(chunk)
    return b"".join(_event(part) for part in chunk.split(EVENT_SEPARATOR))


def query_source(settings: SettingsDep, source: Annotated[str, Query(description="the program")]) -> str:
    """``?source=``, at most ``max_request_bytes`` characters (the POST body's limit): 422 beyond."""
    limit = settings.max_request_bytes
    if len(source) > limit:
        raise RequestValidationError([{"type": "string_too_long", "loc": ("query", "source"),
                                       "msg": f"String should have at most {limit} characters",
                                       "input": None, "ctx": {"max_length": limit}}])
    return source


QuerySource = Annotated[str, Depends(query_source)]


BUSY = {200: {"content": {"text/event-stream": {}}, "description": "the run's events"},
        429: {"model": Problem, "description": "busy: the run queue (or this client's share) is full; "
                                            "Retry-After says when to try again"}}


async def _encoded(events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    try:
        async for chunk in events:
            yield frames(chunk)
    finally:
        await events.aclose()  # the client went away (or we finished): the run does not go on


async def _stream(runs: RunService, source: str, client: Identity, values: str) -> Response:
    """Admit the run first (429 when it cannot be), then answer its events as they come."""
    opened = await runs.open_stream(source, client=client, values=values)
    if opened.events is None:
        return busy_response(opened.busy or "", opened.retry_after)
    return EventSourceResponse(_encoded(opened.events), headers={"Cache-Control": "no-cache",
                                                                  "X-Accel-Buffering": "no"})


@router.post("/stream", response_class=Response, responses=BUSY,
             summary="Run a program, streaming its trace (SSE)")
async def stream_post(body: RunRequest, runs: RunsDep, client: IdentityDep) -> Response:
    return await _stream(runs, body.source, client.refined(body.client_id), body.values)


@router.get("/stream", response_class=Response, responses=BUSY, summary="Same as POST, for EventSource")
async def stream_get(runs: RunsDep, client: IdentityDep, source: QuerySource,
                     client_id: str | None = Query(None, max_length=128),
                     values: Literal["full", "summary"] = Query("full")) -> Response:
    return await _stream(runs, source, client.refined(client_id), values)
