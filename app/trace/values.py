"""JSON-safety and encoded-value helpers: non-finite floats become the strings "nan", "inf", "-inf" (strict JSON always).

``num`` and ``clean`` live in ``app.core.jsonsafe`` (the server's responses use them too; core
imports no feature package) and are re-exported here for the trace code.
"""

from __future__ import annotations

import math

from app.core.jsonsafe import clean, num

__all__ = ["clean", "flat_floats", "num", "outputs_of", "to_float", "zeros_like"]


def to_float(v) -> float | None:
    """A scalar value V as a float (None for lists, summaries, None)."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(v)
    if isinstance(v, list) and len(v) == 1:
        return to_float(v[0])
    return None


def flat_floats(v) -> list[float] | None:
    """Every number of a nested-list value V as floats (order not kept); None when one is not a number."""
    out: list[float] = []
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(x)
        else:
            f = to_float(x)
            if f is None:
                return None
            out.append(f)
    return out


def zeros_like(v):
    """An encoded value (number, nested list or summary) with every number zero: a gradient zeroed in place."""
    if isinstance(v, list):
        return [zeros_like(x) for x in v]
    if isinstance(v, dict):
        return {**v, "min": 0.0, "max": 0.0, "mean": 0.0, "sample": [0.0] * len(v.get("sample") or [])}
    return 0.0


def outputs_of(op: dict) -> list[str]:
    """The tensor ids an op event wrote (one output, or several)."""
    return [x for x in (op.get("output"), *(op.get("outputs") or ())) if x]


def compact_history(hist: list[tuple[int, object]], keep_from: int, head_times: list[int]) -> list[tuple[int, object]]:
    """The entries of a value or gradient history (``(clock, value)``) a pass that may still be drawn can show: the
    last one at or before each head pass's moments (``head_times``), the last one before ``keep_from``, and all after
    it."""
    times = sorted(head_times)
    out = []
    n, j, nt = len(hist), 0, len(times)
    for i, entry in enumerate(hist):
        c = entry[0]
        if c >= keep_from or i + 1 == n:
            out.append(entry)
            continue
        nxt = hist[i + 1][0]
        while j < nt and times[j] < c:
            j += 1
        if nxt >= keep_from or j < nt and times[j] < nxt:  # the last before keep_from, or before a head moment
            out.append(entry)
    return out
