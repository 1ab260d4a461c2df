"""Folded passes in the offline file (``POST /api/export/html``): each one carries its groups' payloads
inline as ``graph.payloads = {gid: payload}`` (the group endpoint's format; every group's own frames, so
together they hold every frame) when they fit the file's budget, so the file expands groups with no
server. A pass whose payloads do not fit keeps its folded view: its groups stay collapsed offline.

The size is checked from the stored sizes before anything is unpacked or parsed (a folded run whose payloads
cannot fit costs no parse of its answer), and the work (sizing, parsing the answer, unpacking, encoding) runs in
the thread pool, a few exports at a time: never on the event loop.
"""

from __future__ import annotations

import asyncio
import re

import orjson
from starlette.concurrency import run_in_threadpool

from app.runs.store import PENDING_FORGET_S, RunStore

PENDING_WAIT_S = PENDING_FORGET_S  # payloads still being built are waited for (bounded by their CPU time)
EXPORTS_AT_ONCE = 2  # exports assembling payloads at the same time (each takes a thread and up to a file's bytes)
_RUN = re.compile(rb'"run":"([0-9a-f]{32})"')  # a folded graph's run id, as the worker's orjson writes it
_building: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}  # one per event loop (tests start several)


def _slots() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    got = _building.get(loop)
    if got is None:
        for old in [k for k in _building if k.is_closed()]:
            del _building[old]
        got = _building[loop] = asyncio.Semaphore(EXPORTS_AT_ONCE)
    return got


async def inline_payloads(trace_json: bytes, store: RunStore, room: int) -> bytes:
    """``trace_json`` with ``graph.payloads`` added to its folded passes, within ``room`` more bytes."""
    if b'"folded":true' not in trace_json:
        return trace_json
    async with _slots():
        if not await _any_fits(trace_json, store, room):
            return trace_json
        trace = await run_in_threadpool(orjson.loads, trace_json)
        changed = False
        for p in trace.get("passes") or []:
            g = p.get("graph") or {}
            if not g.get("folded"):
                continue
            payloads = await store.wait(str(g.get("run")), int(g.get("pass_index", p.get("index", 0))),
                                        PENDING_WAIT_S)
            if payloads is None or await run_in_threadpool(payloads.offline_bytes) > room:  # known without unpacking
                continue
            blob = await run_in_threadpool(payloads.offline_all, room)
            if blob is None:
                continue
            room -= len(blob)
            g["payloads"] = orjson.Fragment(blob)
            changed = True
        return await run_in_threadpool(orjson.dumps, trace) if changed else trace_json


async def _any_fits(trace_json: bytes, store: RunStore, room: int) -> bool:
    """Whether a pass of a run the answer names has payloads that fit ``room`` (their stored sizes only)."""
    for run in dict.fromkeys(_RUN.findall(trace_json)):
        passes = await store.wait_run(run.decode(), PENDING_WAIT_S)
        for payloads in passes.values():
            if await run_in_threadpool(payloads.offline_bytes) <= room:
                return True
    return False
