"""Folded passes in the offline file (``POST /api/export/html``): each one carries its groups' payloads
inline as ``graph.payloads = {gid: payload}`` (the group endpoint's format; every group's own frames, so
together they hold every frame) when they fit the file's budget, so the file expands groups with no
server. A pass whose payloads do not fit keeps its folded view: its groups stay collapsed offline."""

from __future__ import annotations

import orjson

from app.runs.store import RunStore

PENDING_WAIT_S = 15.0  # the payloads are built right after the answer: wait for them this long


async def inline_payloads(trace_json: bytes, store: RunStore, room: int) -> bytes:
    """``trace_json`` with ``graph.payloads`` added to its folded passes, within ``room`` more bytes."""
    if b'"folded":true' not in trace_json:
        return trace_json
    trace = orjson.loads(trace_json)
    changed = False
    for p in trace.get("passes") or []:
        g = p.get("graph") or {}
        if not g.get("folded"):
            continue
        payloads = await store.wait(str(g.get("run")), int(g.get("pass_index", p.get("index", 0))), PENDING_WAIT_S)
        if payloads is None:
            continue
        parts = [b'"' + gid.encode() + b'":' + payloads.offline(gid) for gid in payloads.cores]
        blob = b"{" + b",".join(parts) + b"}"
        if len(blob) > room:
            continue
        room -= len(blob)
        g["payloads"] = orjson.Fragment(blob)
        changed = True
    return orjson.dumps(trace) if changed else trace_json
